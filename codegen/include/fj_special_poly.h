/*
 * fj_special_poly.h -- scipy.special's orthogonal polynomials of integer degree n, for
 * fusejit's generated C (and CUDA: codegen/cuda.py makes them device functions): eval_legendre,
 * eval_sh_legendre, eval_chebyt, eval_chebyu, eval_chebyc, eval_chebys, eval_sh_chebyt,
 * eval_sh_chebyu, eval_hermite, eval_hermitenorm, eval_laguerre, eval_genlaguerre and
 * eval_gegenbauer. Only SciPy's integer-degree loops ('l' first operand): with a float degree
 * SciPy goes through the hypergeometric functions, which fusejit refuses at trace time
 * (frontend/ufuncs.py). x is a double (SciPy's 'ld->d' loop takes float32 x to float64).
 *
 * Each is evaluated as SciPy 1.17 evaluates it, so that the special values agree too (the
 * infinities, where a recurrence meets inf - inf, give NaN in the same places):
 *   Legendre P_n (and P_{-n-1} = P_n): the recurrence written in the differences
 *       d_k = P_{k+1} - P_k (Levrie & Piessens), which keeps it accurate near x = 1; for
 *       |x| < 1e-5, where the recurrence loses the small odd values, the power series from its
 *       lowest term up. ~n ulp.
 *   Chebyshev T_n, U_n (T_{-n} = T_n, U_{-1} = 0, U_{-n-2} = -U_n): the three-term recurrence
 *       b_{k+1} = 2x b_k - b_{k-1}; C_n(x) = 2 T_n(x/2), S_n(x) = U_n(x/2), the shifted ones
 *       at 2x - 1.
 *   Hermite He_n (NaN for n < 0): Clenshaw's sum from the top degree down; H_n(x) =
 *       2^(n/2) He_n(sqrt(2) x).
 *   Laguerre L_n^(a) (0 for n < 0; NaN for a <= -1): the differences' recurrence scaled by
 *       binom(n + a, n) (fj_special_beta.h); L_n = L_n^(0).
 *   Gegenbauer C_n^(a) (0 for n < 0): the differences' recurrence times binom(n + 2a - 1, n)
 *       (2a/n for |a/n| < 1e-8), the power series for |x| < 1e-5; a = 0 is SciPy's
 *       hypergeometric form, Gamma(n)/Gamma(n+1)/Gamma(0) T_n(x): +-0 (the sign of T_n by
 *       its recurrence, which can differ from SciPy's hyp2f1 where T_n(x) is within rounding
 *       of 0), or NaN where T_n is not finite or, beyond n = 171, Gamma overflows.
 * The work is a loop of n steps (as SciPy's): a degree of 10^9 takes seconds.
 */

/* (-1)^a Gamma(a + 1/2) / (sqrt(pi) Gamma(a + 1)) = (-1)^a binom(2a, a) / 4^a: the product
 * of (2j - 1) / (2j) up to a = 1000, the ratio's asymptotic series beyond (error < 1e-17) */
static inline double fj_sp__central(long long a) {
    double c = 1.0;
    if (a <= 1000) {
        for (long long j = 1; j <= a; j++) c *= (2.0 * (double)j - 1.0) / (2.0 * (double)j);
    } else {
        const double t = 1.0 / (double)a;
        c = (1.0 + t * (-0.125 + t * (0.0078125 + t * (0.0048828125 - t * 0.000640869140625))))
            / sqrt(3.14159265358979323846 * (double)a);
    }
    return a % 2 == 0 ? c : -c;
}

/* P_n(x) for |x| < 1e-5: sum over k of (-1)^k (2n - 2k)! / (2^n k! (n - k)! (n - 2k)!)
 * x^(n - 2k), from the lowest power (k = n/2) up */
static inline double fj_sp__legendre_small(long long n, double x) {
    const long long a = n / 2;
    double c = fj_sp__central(a);
    if (n % 2 != 0) c *= (2.0 * (double)a + 1.0) * x;
    double p = 0.0;
    for (long long k = a; k >= 0; k--) {
        p += c;
        const double kk = (double)k, nn = (double)n;
        c *= -2.0 * x * x * kk * (2.0 * nn - 2.0 * kk + 1.0)
             / ((nn - 2.0 * kk + 2.0) * (nn - 2.0 * kk + 1.0));
    }
    return p;
}

static inline double fj_sp_eval_legendre(long long n, double x) {
    if (n < 0) n = -n - 1;
    if (n == 0) return 1.0;
    if (n == 1) return x;
    if (fabs(x) < 1e-5) return fj_sp__legendre_small(n, x);
    double d = x - 1.0, p = x;  /* d = P_1 - P_0, p = P_1 */
    for (long long k = 1; k < n; k++) {
        const double kk = (double)k;
        d = ((2.0 * kk + 1.0) / (kk + 1.0)) * (x - 1.0) * p + (kk / (kk + 1.0)) * d;
        p += d;
    }
    return p;
}

static inline double fj_sp_eval_sh_legendre(long long n, double x) {
    return fj_sp_eval_legendre(n, 2.0 * x - 1.0);
}

/* b_n of b_{k+1} = 2x b_k - b_{k-1} run k + 1 times from b = (0, -1, 0); T: (b_n - b_{n-2})/2 */
static inline double fj_sp__cheby(long long k, double x, int first_kind) {
    double b2 = 0.0, b1 = -1.0, b0 = 0.0;
    const double x2 = 2.0 * x;
    for (long long m = 0; m <= k; m++) {
        b2 = b1;
        b1 = b0;
        b0 = x2 * b1 - b2;
    }
    return first_kind ? (b0 - b2) / 2.0 : b0;
}

static inline double fj_sp_eval_chebyt(long long n, double x) {
    return fj_sp__cheby(n < 0 ? -n : n, x, 1);
}

static inline double fj_sp_eval_chebyu(long long n, double x) {
    if (n == -1) return 0.0;
    if (n < -1) return -fj_sp__cheby(-n - 2, x, 0);
    return fj_sp__cheby(n, x, 0);
}

static inline double fj_sp_eval_chebyc(long long n, double x) {
    return 2.0 * fj_sp_eval_chebyt(n, 0.5 * x);
}

static inline double fj_sp_eval_chebys(long long n, double x) {
    return fj_sp_eval_chebyu(n, 0.5 * x);
}

static inline double fj_sp_eval_sh_chebyt(long long n, double x) {
    return fj_sp_eval_chebyt(n, 2.0 * x - 1.0);
}

static inline double fj_sp_eval_sh_chebyu(long long n, double x) {
    return fj_sp_eval_chebyu(n, 2.0 * x - 1.0);
}

static inline double fj_sp_eval_hermitenorm(long long n, double x) {
    if (isnan(x)) return x;
    if (n < 0) return NAN;
    if (n == 0) return 1.0;
    if (n == 1) return x;
    double lo = 0.0, hi = 1.0;  /* Clenshaw: He_{k+1} = x He_k - k He_{k-1}, from the top */
    for (long long k = n; k > 1; k--) {
        const double next = x * hi - (double)k * lo;
        lo = hi;
        hi = next;
    }
    return x * hi - lo;
}

static inline double fj_sp_eval_hermite(long long n, double x) {
    if (n < 0) return NAN;
    return fj_sp_eval_hermitenorm(n, 1.4142135623730951 * x) * pow(2.0, (double)n / 2.0);
}

static inline double fj_sp_eval_genlaguerre(long long n, double a, double x) {
    if (a <= -1.0) return NAN;
    if (isnan(a) || isnan(x)) return NAN;
    if (n < 0) return 0.0;
    if (n == 0) return 1.0;
    if (n == 1) return -x + a + 1.0;
    double d = -x / (a + 1.0), p = d + 1.0;  /* of L_k / binom(k + a, k) */
    for (long long k = 1; k < n; k++) {
        const double kk = (double)k;
        d = -x / (kk + a + 1.0) * p + (kk / (kk + a + 1.0)) * d;
        p += d;
    }
    return fj_sp_binom((double)n + a, (double)n) * p;
}

static inline double fj_sp_eval_laguerre(long long n, double x) {
    return fj_sp_eval_genlaguerre(n, 0.0, x);
}

/* C_n^(a)(x) for |x| < 1e-5: sum over k of (-1)^k Gamma(n - k + a) / (Gamma(a) k! (n - 2k)!)
 * (2x)^(n - 2k), from the lowest power (k = n/2) up */
static inline double fj_sp__gegenbauer_small(long long n, double a, double x) {
    const long long h = n / 2;
    double c = (h % 2 == 0 ? 1.0 : -1.0) / fj_sp_beta(a, 1.0 + (double)h);
    if (n == 2 * h) c /= (double)h + a;
    else c *= 2.0 * x;
    double p = 0.0;
    for (long long k = h; k >= 0; k--) {
        p += c;
        const double kk = (double)k, nn = (double)n;
        c *= -4.0 * x * x * kk * (nn - kk + a) / ((nn - 2.0 * kk + 2.0) * (nn - 2.0 * kk + 1.0));
    }
    return p;
}

static inline double fj_sp_eval_gegenbauer(long long n, double a, double x) {
    if (isnan(a) || isnan(x)) return NAN;
    if (n < 0) return 0.0;
    if (n == 0) return 1.0;
    if (n == 1) return 2.0 * a * x;
    if (a == 0.0) {  /* SciPy's hypergeometric form: Gamma(n)/Gamma(n+1)/Gamma(0) T_n(x) */
        const double nn = (double)n;
        return fj_sp_gamma(nn) / fj_sp_gamma(nn + 1.0) / fj_sp_gamma(0.0) * fj_sp_eval_chebyt(n, x);
    }
    if (fabs(x) < 1e-5) return fj_sp__gegenbauer_small(n, a, x);
    double d = x - 1.0, p = x;
    for (long long k = 1; k < n; k++) {
        const double kk = (double)k;
        d = (2.0 * (kk + a) / (kk + 2.0 * a)) * (x - 1.0) * p + (kk / (kk + 2.0 * a)) * d;
        p += d;
    }
    if (fabs(a / (double)n) < 1e-8) return 2.0 * a / (double)n * p;
    return fj_sp_binom((double)n + 2.0 * a - 1.0, (double)n) * p;
}
