/*
 * fj_special_ibeta.h -- scipy.special.betainc and betaincc (the regularized incomplete beta
 * function I_x(a, b) and 1 - I_x(a, b)) and stdtr (Student's t distribution function) for
 * fusejit's generated C (and CUDA: the renderer makes these device functions). Doubles;
 * float32 operands are computed in double and the result rounded, as SciPy's float loops.
 *
 * Special values are SciPy 1.17's: NaN for a NaN, a < 0, b < 0, x outside [0, 1], a = b = 0
 * and a = b = inf; I = 0 at x = 0 and 1 at x = 1; a = 0 (b > 0) or b = inf (a finite): 1 for
 * x > 0; b = 0 (a > 0) or a = inf (b finite): 0 for x < 1.
 *
 * I_x(a, b) = x^a (1 - x)^b / (a B(a, b)) times the continued fraction 1 / (1 + d1 / (1 + d2 /
 * (1 + ...))), d_2m+1 = -(a + m)(a + b + m) x / ((a + 2m)(a + 2m + 1)), d_2m = m (b - m) x /
 * ((a + 2m - 1)(a + 2m)), evaluated forwards (modified Lentz) where x < (a + 1) / (a + b + 2);
 * beyond, 1 - I_{1-x}(b, a) through -expm1 of its logarithm; for a small b there a power
 * series whose logarithm is O(b) term by term; for a >= 15, b <= a/8, b^3 <= a^2 and x > 1/2
 * (where the fraction cancels) an expansion in 1/a (fj_sp_ibeta_asym). Both x and 1 - x are passed in
 * (stdtr forms 1 - x = t^2 / (df + t^2) without rounding x first). The factor x^a (1 - x)^b /
 * (a B(a, b)) is formed with Stirling's series for large a or b, the cancelling terms joined,
 * so its error is ~eps times the size of its own exponent (fj_sp_ibeta_lfac). Measured against
 * 120-digit values and SciPy by tests/test_special_ibeta.py.
 */
#ifndef FJ_SPECIAL_IBETA_H
#define FJ_SPECIAL_IBETA_H

#define FJ_IBETA_EPS 1.1102230246251565e-16
#define FJ_IBETA_ASYM_A 15.0  /* the expansion in 1/a: a >= 15, b <= a / 8, b^3 <= a^2 */
#define FJ_IBETA_ASYM_B 0.125
#define FJ_IBETA_ASYM_TERMS 24
#define FJ_LGAMMA_HALF 0.57236494292470008707  /* ln Gamma(1/2) = ln sqrt(pi) */

/* The continued fraction of I_x(a, b), for x < (a + 1) / (a + b + 2); y = 1 - x. Its first
 * denominator 1 - (a + b) x / (a + 1) is formed from y, ((1 - b) + (a + b) y) / (a + 1), when
 * x > 1/2 (x near 1 and a large: it would cancel). */
static inline double fj_sp_ibeta_cf(double a, double b, double x, double y) {
    double c = 1.0, d = x > 0.5 ? ((1.0 - b) + (a + b) * y) / (a + 1.0)
                                : 1.0 - (a + b) * x / (a + 1.0);
    if (fabs(d) < FJ_LENTZ_TINY) d = FJ_LENTZ_TINY;
    d = 1.0 / d;
    double h = d, step;
    for (int m = 1; m < 100000; m++) {
        double m2 = 2.0 * m;
        /* (as products of ratios: the products of the terms overflow for a beyond 1e154) */
        FJ_LENTZ_STEP((m / (a + m2 - 1.0)) * ((b - m) / (a + m2)) * x, 1.0, c, d, h, step);
        FJ_LENTZ_STEP(-((a + m) / (a + m2)) * ((a + b + m) / (a + m2 + 1.0)) * x, 1.0, c, d, h,
                      step);
        if (fabs(step - 1.0) <= FJ_IBETA_EPS) break;
    }
    return h;
}

/* ln(Gamma(A + B) / (Gamma(A) A^B)) for A >= 10: Stirling's series for both gammas, the terms
 * that cancel joined: A lm(B/A) + (B - 1/2) ln(1 + B/A) + the corrections, where
 * lm(m) = ln(1 + m) - m. */
static inline double fj_sp_lgamma_ratio_scaled(double A, double B) {
    double r = B / A, lr = log1p(r);
    /* ln Gamma*(A) - ln Gamma*(A + B), term by term of Stirling's series (fj_sp_lgstar):
     * c_k (A^-n - (A + B)^-n) = c_k A^-n (-expm1(-n ln(1 + r))), n = 2k - 1, so it keeps
     * its digits when B is small (A + B rounds to A) */
    double z = 1.0 / (A * A), p = 1.0 / A, d = 0.0;
#define FJ_LGSTAR_TERM(c, n) d += (c) * p * -expm1(-(n) * lr); p *= z;
    FJ_LGSTAR_TERM(FJ_STIRLING_1, 1)
    FJ_LGSTAR_TERM(FJ_STIRLING_2, 3)
    FJ_LGSTAR_TERM(FJ_STIRLING_3, 5)
    FJ_LGSTAR_TERM(FJ_STIRLING_4, 7)
    FJ_LGSTAR_TERM(FJ_STIRLING_5, 9)
    FJ_LGSTAR_TERM(FJ_STIRLING_6, 11)
    FJ_LGSTAR_TERM(FJ_STIRLING_7, 13)
#undef FJ_LGSTAR_TERM
    return A * fj_sp_log1pmx(r) + (B - 0.5) * lr - d;
}

/* ln(Gamma(A + B) / Gamma(A)) for A >= 10. */
static inline double fj_sp_lgamma_ratio(double A, double B) {
    return B * log(A) + fj_sp_lgamma_ratio_scaled(A, B);
}

/* ln(x^a y^b / (a B(a, b))), y = 1 - x, with an error of the size of the result's own
 * exponent, not of the gammas' logarithms (which cancel when a or b is large): for a, b >= 10,
 * a lm(u/a) + b lm(-u/b) + ln sqrt(ab / (2 pi (a + b))) - ln a - the Stirling corrections,
 * where u = xb - ya; one of them >= 10: fj_sp_lgamma_ratio of it and the small one's gamma
 * (Gamma(a + 1) for a small a: no ln a to cancel against ln Gamma(a)). */
static inline double fj_sp_ibeta_lfac(double a, double b, double x, double y) {
    double lx = x < 0.5 ? log(x) : log1p(-y), ly = y < 0.5 ? log(y) : log1p(-x);
    if (a >= 10.0 && b >= 10.0) {
        /* a lm(u/a) = a ln(x (a + b) / a) - u and b lm(-u/b) = b ln(y (a + b) / b) + u, each
         * formed from ln x and ln y away from the mean (where 1 + u/a would round) */
        double u = x * b - y * a, ra = u / a, rb = -u / b;
        double ta = fabs(ra) < 0.5 ? a * fj_sp_log1pmx(ra) : a * (lx + log1p(b / a)) - u;
        double tb = fabs(rb) < 0.5 ? b * fj_sp_log1pmx(rb) : b * (ly + log1p(a / b)) + u;
        return ta + tb + 0.5 * log(a * (b / (6.283185307179586477 * (a + b)))) - log(a)
               - (fj_sp_lgstar(a) + fj_sp_lgstar(b) - fj_sp_lgstar(a + b));
    }
    double l = a * lx + b * ly;
    if (a >= 10.0) return l + fj_sp_lgamma_ratio(a, b) - fj_sp_gammaln(b) - log(a);
    if (b >= 10.0) return l + fj_sp_lgamma_ratio(b, a) - fj_sp_lgam1p(a);
    return l - fj_sp_betaln(a, b) - log(a);
}

/* lgamma(a + b) - lgamma(a), a > 0, b >= 0, accurate relative to itself for a small b: a
 * shifted up to 10 (ln(Gamma(a + b) / Gamma(a)) = that of a + 1 minus ln(1 + b/a)), then
 * fj_sp_lgamma_ratio. */
static inline double fj_sp_lgamma_diff(double a, double b) {
    double s = 0.0;
    while (a < 10.0) {
        s -= log1p(b / a);
        a += 1.0;
    }
    return s + fj_sp_lgamma_ratio(a, b);
}

/* ln I_z(p, q) for a small p (< 1), q < 15 and z < 1/2 (w = 1 - z): the power series
 * I_z(p, q) = z^p / (p B(p, q)) (1 + p sum_{n>=1} (1 - q)_n z^n / (n! (p + n))), whose
 * logarithm's terms are each O(p): p ln z + lgamma(p + q) - lgamma(q) - lgamma(1 + p) +
 * ln(1 + p T). So I is accurate relative to itself when it is tiny, and 1 - I (through
 * -expm1) when I is close to 1, for p down to the smallest doubles. */
static inline double fj_sp_ibeta_lsmall(double p, double q, double z, double w) {
    double term = 1.0, t = 0.0;
    for (int n = 1; n < 2000; n++) {
        term *= (n - q) * z / n;
        double add = term / (p + n);
        t += add;
        if (fabs(add) <= FJ_IBETA_EPS * fabs(t)) break;
    }
    double lz = z < 0.5 ? log(z) : log1p(-w);
    return p * lz + fj_sp_lgamma_diff(q, p) - fj_sp_lgam1p(p) + log1p(p * t);
}

/* I_x(a, b) (upper = 0) or 1 - I_x(a, b) (upper = 1) for a large and b small, x > 1/2 (where
 * the fraction cancels): with x = e^-s0, I_x(a, b) = (1 / B(a, b)) int_s0^inf e^-as (1 - e^-s)^(b-1)
 * ds, and (1 - e^-s)^(b-1) = s^(b-1) e^-(b-1)s/2 phi(s), phi(s) = (sinh(s/2) / (s/2))^(b-1) =
 * sum_k c_k s^2k, so with T = a + (b - 1)/2 and u = T s0
 *     I_x(a, b) = Gamma(a + b) / (Gamma(a) T^b) sum_k c_k T^-2k Gamma(b + 2k, u) / Gamma(b),
 * and the complement the same with the lower incomplete gammas. c_k: the exponential of
 * (b - 1) sum_n e_n s^2n (fj_sp_lsinhc); the gammas' ratios J_k by their recurrence
 * J_k+1 = (b + 2k)(b + 2k + 1) J_k + (b + 2k + 1 + u) u^(b+2k) e^-u / Gamma(b) (upper: P and
 * a Pochhammer product, the recurrence would cancel). The series is asymptotic in 1/T^2
 * (terms ~ ((b + 2k) / (2 pi T))^2k) and converges in s0 < 2 pi. */
static inline double fj_sp_ibeta_asym(double a, double b, double x, double y, int upper) {
    double T = a + 0.5 * (b - 1.0);
    double s0 = y < 0.5 ? -log1p(-y) : -log(x);
    double u = T * s0, it2 = 1.0 / (T * T);
    double c[FJ_IBETA_ASYM_TERMS + 1];
    c[0] = 1.0;
    double h = fj_sp_igam_fac(b, u, 1);  /* u^b e^-u / Gamma(b) */
    double J = upper ? fj_sp_gammainc(b, u) : fj_sp_gammaincc(b, u);
    double sum = J, tp = 1.0, poch = 1.0;
    for (int k = 1; k <= FJ_IBETA_ASYM_TERMS; k++) {
        double acc = 0.0;
        for (int n = 1; n <= k; n++) acc += n * fj_sp_lsinhc(n) * c[k - n];
        c[k] = (b - 1.0) * acc / k;
        double m = b + 2.0 * k - 2.0;
        poch *= m * (m + 1.0);
        if (upper) {
            J = fj_sp_gammainc(m + 2.0, u) * poch;
        } else {
            J = m * (m + 1.0) * J + (m + 1.0 + u) * h;
            h *= u * u;
        }
        tp *= it2;
        double term = c[k] * J * tp;
        sum += term;
        if (fabs(term) <= FJ_IBETA_EPS * fabs(sum)) break;
    }
    /* Gamma(a + b) / (Gamma(a) T^b), T^b = a^b (1 + (b - 1) / 2a)^b: no b ln a to cancel */
    return exp(fj_sp_lgamma_ratio_scaled(a, b) - b * log1p(0.5 * (b - 1.0) / a)) * sum;
}

/* I_x(a, b) for a, b > 0 finite and 0 < x < 1, with y = 1 - x given: the fraction where it
 * converges fast, x < (a + 1) / (a + b + 2); beyond, I_y(b, a) there and 1 minus it as
 * -expm1 of its logarithm, which keeps the digits when I_y(b, a) is close to 1 (a small b,
 * whose mean is far from that point). */
static inline int fj_sp_ibeta_asym_ok(double big, double small) {
    /* its terms shrink like (small^3 / (24 big^2))^k / k! near the mean */
    return big >= FJ_IBETA_ASYM_A && small <= FJ_IBETA_ASYM_B * big &&
           small * small * small <= big * big;
}

static inline double fj_sp_ibeta_core(double a, double b, double x, double y) {
    if (x > 0.5 && fj_sp_ibeta_asym_ok(a, b)) return fj_sp_ibeta_asym(a, b, x, y, 0);
    if (y > 0.5 && fj_sp_ibeta_asym_ok(b, a)) return fj_sp_ibeta_asym(b, a, y, x, 1);
    if (x * (a + b + 2.0) <= a + 1.0)
        return exp(fj_sp_ibeta_lfac(a, b, x, y)) * fj_sp_ibeta_cf(a, b, x, y);
    if (b < 1.0 && a < FJ_IBETA_ASYM_A)  /* 1 - I_y(b, a), its logarithm O(b) term by term */
        return -expm1(fj_sp_ibeta_lsmall(b, a, y, x));
    return -expm1(fj_sp_ibeta_lfac(b, a, y, x) + log(fj_sp_ibeta_cf(b, a, y, x)));
}

/* The special values of I (1 - them for betaincc): 1 when they decide the value (*v set),
 * else 0. */
static inline int fj_sp_ibeta_edge(double a, double b, double x, double *v) {
    if (isnan(a) || isnan(b) || isnan(x) || a < 0.0 || b < 0.0 || x < 0.0 || x > 1.0 ||
        (a == 0.0 && b == 0.0) || (isinf(a) && isinf(b))) {
        *v = NAN;
        return 1;
    }
    if (x == 0.0) { *v = 0.0; return 1; }
    if (x == 1.0) { *v = 1.0; return 1; }
    if (a == 0.0 || isinf(b)) { *v = 1.0; return 1; }
    if (b == 0.0 || isinf(a)) { *v = 0.0; return 1; }
    return 0;
}

/* (a value a rounding put just outside [0, 1] back on its end) */
static inline double fj_sp_unit(double v) { return v < 0.0 ? 0.0 : v > 1.0 ? 1.0 : v; }

static inline double fj_sp_betainc(double a, double b, double x) {
    double v;
    if (fj_sp_ibeta_edge(a, b, x, &v)) return v;
    return fj_sp_unit(fj_sp_ibeta_core(a, b, x, 1.0 - x));
}

/* betaincc: I_{1-x}(b, a), its own value where it is the small side (not 1 - a rounded I). */
static inline double fj_sp_betaincc(double a, double b, double x) {
    double v;
    if (fj_sp_ibeta_edge(a, b, x, &v)) return 1.0 - v;
    return fj_sp_unit(fj_sp_ibeta_core(b, a, 1.0 - x, x));
}

/* x^(a-1) (1-x)^(b-1) / B(a, b) for 0 < x < 1 (y = 1 - x): the derivative of I_x(a, b). */
static inline double fj_sp_ibeta_derivative(double a, double b, double x, double y) {
    double lx = x < 0.5 ? log(x) : log1p(-y), ly = y < 0.5 ? log(y) : log1p(-x);
    return exp(fj_sp_ibeta_lfac(a, b, x, y) + log(a) - lx - ly);  /* (x^a underflows first) */
}

/* scipy.stats.beta's pdf (SciPy's private _beta_pdf over Boost's beta distribution): inf
 * where x <= 0 and a < 1, or x >= 1 and b < 1, whatever else is given (SciPy checks these
 * first); NaN for a NaN, a or b not positive and finite, x outside [0, 1]; at x = 0, b for
 * a = 1 and 0 for a > 1; at x = 1, a for b = 1 and 0 for b > 1; else x^(a-1) (1-x)^(b-1) /
 * B(a, b). (Boost's underflows to 0 where a and b are both below ~1e-290; this does not.) */
static inline double fj_sp_beta_pdf(double x, double a, double b) {
    if ((x <= 0.0 && a < 1.0) || (x >= 1.0 && b < 1.0)) return INFINITY;
    if (isnan(x) || !(a > 0.0) || !(b > 0.0) || isinf(a) || isinf(b) || x < 0.0 || x > 1.0)
        return NAN;
    if (x == 0.0) return a == 1.0 ? b : 0.0;
    if (x == 1.0) return b == 1.0 ? a : 0.0;
    return fj_sp_ibeta_derivative(a, b, x, 1.0 - x);
}

/* scipy.stats.binom's private ufuncs (Boost's binomial distribution as SciPy 1.17 calls it):
 * pmf C(n, k) p^k (1 - p)^(n - k) (continuous in k: the derivative of I_p(k + 1, n - k + 1)
 * over n + 1), cdf I_{1-p}(n - k, k + 1), sf I_p(k + 1, n - k); NaN for a NaN, n < 0, n = inf,
 * p outside [0, 1], k < 0 or k > n, except that, whatever n and p, the cdf of k = inf is 1 and
 * of k = -inf 0, as SciPy's (whose sf of +-inf is NaN). */
static inline int fj_sp_binom_bad(double k, double n, double p) {
    return isnan(k) || isnan(n) || isnan(p) || n < 0.0 || isinf(n) || p < 0.0 || p > 1.0 ||
           k < 0.0 || k > n;
}

static inline double fj_sp_binom_pmf(double k, double n, double p) {
    if (fj_sp_binom_bad(k, n, p)) return NAN;
    if (p == 0.0) return k == 0.0 ? 1.0 : 0.0;
    if (p == 1.0) return k == n ? 1.0 : 0.0;
    if (n == 0.0) return 1.0;
    if (k == 0.0) return exp(n * log1p(-p));
    if (k == n) return exp(n * log(p));
    return fj_sp_ibeta_derivative(k + 1.0, n - k + 1.0, p, 1.0 - p) / (n + 1.0);
}

static inline double fj_sp_binom_cdf(double k, double n, double p) {
    if (isinf(k)) return k > 0.0 ? 1.0 : 0.0;
    if (fj_sp_binom_bad(k, n, p)) return NAN;
    if (k == n || p == 0.0) return 1.0;
    if (p == 1.0) return 0.0;
    return fj_sp_betaincc(k + 1.0, n - k, p);
}

static inline double fj_sp_binom_sf(double k, double n, double p) {
    if (fj_sp_binom_bad(k, n, p)) return NAN;
    if (k == n || p == 0.0) return 0.0;
    if (p == 1.0) return 1.0;
    return fj_sp_betainc(k + 1.0, n - k, p);
}

/* Student's t distribution function: I_{df/(df+t^2)}(df/2, 1/2) / 2 below 0 (the normal
 * distribution's for df = inf), 1 minus that above; 1/2 at t = +-0, 0 and 1 at -inf and inf,
 * NaN for df <= 0 or a NaN, as SciPy. Beyond |t| = 1e150 SciPy's t^2 overflows, giving 0 (1)
 * where a small df's heavy tail is still far from it (stdtr(0.01, -1e159) = 0.024); this
 * gives the tail's value. */
static inline double fj_sp_stdtr(double df, double t) {
    if (isnan(df) || isnan(t) || df <= 0.0) return NAN;
    if (t == 0.0) return 0.5;
    if (isinf(t)) return t > 0.0 ? 1.0 : 0.0;
    if (isinf(df)) return fj_sp_ndtr(t);
    double x, y;
    if (fabs(t) > 1e150) {  /* (t^2 would overflow) */
        const double lx = log(df) - 2.0 * log(fabs(t)), a = 0.5 * df;
        if (lx < -80.0) {  /* I_x(a, 1/2) = x^a / (a B(a, 1/2)) (1 + O(x)), from log x: x itself
                            * may be subnormal, its digits lost (SciPy's t^2 overflows: 0) */
            const double e = a * lx;  /* (below -800 the value underflows: a huge df's lgamma
                                       * terms would be inf - inf) */
            const double p = e < -800.0 ? 0.0
                : 0.5 * exp(e - (lgamma(a + 1.0) + FJ_LGAMMA_HALF - lgamma(a + 0.5)));
            return t < 0.0 ? p : 1.0 - p;
        }
        x = df / t / t;
        y = 1.0;
    } else {
        double t2 = t * t, s = df + t2;
        x = df / s;
        y = t2 / s;
    }
    double p = 0.5 * fj_sp_ibeta_core(0.5 * df, 0.5, x, y);
    return t < 0.0 ? p : 1.0 - p;
}

#endif
