/*
 * fj_special_trigint.h -- scipy.special's sici, shichi and fresnel, one function per result
 * (and expn, the exponential integral of integer order, at the end)
 * (fj_sp_sici_si, fj_sp_sici_ci, ...; frontend/special_composite.py makes the ufuncs' pairs)
 * for fusejit's generated C (and CUDA: codegen/cuda.py makes them device functions). Doubles;
 * float32 operands are computed in double and rounded.
 *
 *   Si, Ci: the power series for x <= 2.5; beyond, E1(ix) = -Ci(x) + i (Si(x) - pi/2) from
 *     its continued fraction e^-z / (z + 1 - 1/(z + 3 - 4/(z + 5 - ...))), by Lentz in complex
 *     arithmetic (~80 terms at 2.5, a few at 1e3). Si odd, Ci even (Ci(0) = -inf; SciPy's
 *     NaN at -inf, pi/2 and 0 at +inf).
 *   Shi, Chi: the power series (positive terms) for x <= 8, beyond (Ei(x) +- E1(x))/2
 *     (fj_special_igam.h); Shi odd, Chi even (inf at +-inf, -inf at 0).
 *   Fresnel S, C (of pi t^2 / 2): the power series for |x| < 1.6, beyond C + iS =
 *     (1+i)/2 erf(z), z = (1-i) sqrt(pi) x / 2, erfc from its continued fraction, the phase
 *     pi x^2 / 2 from x^2 split exactly (fma) and reduced modulo 2 pi without rounding; 1/2
 *     beyond x = 1e16, where the remainder is below half an ulp; both odd.
 * Accuracy ~1e-15 relative, absolute next to the zeros of Ci and Chi.
 */

#define FJ_SP_EULER 0.57721566490153286061

/* E1(i x) for x > 2.5 by Lentz: its real (re) and imaginary (im) parts */
static inline void fj_sp__e1_imag(double x, double *re, double *im) {
    /* f = b0 + a1/(b1 + ...), b_k = i x + 2k + 1, a_k = -k^2 (fj_special_jy.h's Lentz) */
    double st[6] = {1.0, x, 1.0, x, 0.0, 0.0};
    for (int k = 1; k < 100000; k++) {
        if (fj_sp__lentz_c(-(double)k * (double)k, 2.0 * k + 1.0, x, st) < 1e-16) break;
    }
    const double fr = st[0], fi = st[1];
    /* e^-ix / f */
    const double c = cos(x), s = -sin(x), den = fr * fr + fi * fi;
    *re = (c * fr + s * fi) / den;
    *im = (s * fr - c * fi) / den;
}

/* the power series of Si (want_ci = 0) or Ci - gamma - ln x (x >= 0 small) */
static inline double fj_sp__sici_series(double x, int want_ci) {
    const double x2 = x * x;
    double sum = 0.0, term = want_ci ? -0.5 * x2 : x;  /* x^n / n!, signed */
    for (int n = want_ci ? 2 : 1; n < 200; n += 2) {
        const double t = term / n;
        sum += t;
        if (fabs(t) < 1e-18 * fabs(sum)) break;
        term *= -x2 / ((n + 1.0) * (n + 2.0));
    }
    return sum;
}

static inline double fj_sp_sici_si(double x) {
    if (isnan(x)) return x;
    const double a = fabs(x), sign = x < 0.0 ? -1.0 : 1.0;
    if (isinf(x)) return sign * 1.5707963267948966;
    if (a <= 2.5) return sign * fj_sp__sici_series(a, 0);
    double re, im;
    fj_sp__e1_imag(a, &re, &im);
    return sign * (1.5707963267948966 + im);
}

static inline double fj_sp_sici_ci(double x) {
    if (isnan(x) || x == -INFINITY) return NAN;
    const double a = fabs(x);
    if (a == 0.0) return -INFINITY;
    if (isinf(a)) return 0.0;
    if (a <= 2.5) return FJ_SP_EULER + log(a) + fj_sp__sici_series(a, 1);
    double re, im;
    fj_sp__e1_imag(a, &re, &im);
    return -re;
}

/* the power series of Shi (want_chi = 0) or Chi - gamma - ln x: positive terms */
static inline double fj_sp__shichi_series(double x, int want_chi) {
    const double x2 = x * x;
    double sum = 0.0, term = want_chi ? 0.5 * x2 : x;
    for (int n = want_chi ? 2 : 1; n < 400; n += 2) {
        const double t = term / n;
        sum += t;
        if (t < 1e-18 * sum) break;
        term *= x2 / ((n + 1.0) * (n + 2.0));
    }
    return sum;
}

static inline double fj_sp_shichi_shi(double x) {
    if (isnan(x)) return x;
    const double a = fabs(x), sign = x < 0.0 ? -1.0 : 1.0;
    if (a <= 8.0) return sign * fj_sp__shichi_series(a, 0);
    return sign * 0.5 * (fj_sp_expi(a) + fj_sp_exp1(a));
}

static inline double fj_sp_shichi_chi(double x) {
    if (isnan(x)) return x;
    const double a = fabs(x);
    if (a == 0.0) return -INFINITY;
    if (a <= 8.0) return FJ_SP_EULER + log(a) + fj_sp__shichi_series(a, 1);
    return 0.5 * (fj_sp_expi(a) - fj_sp_exp1(a));
}

/* Fresnel S (want_c = 0) or C of x >= 0 finite */
static inline double fj_sp__fresnel(double x, int want_c) {
    if (x < 1.6) {  /* sum over n of (-1)^(n/2) t^n x / (n! (2n + 1)), t = pi x^2 / 2 */
        const double t = 1.5707963267948966 * x * x;
        double sum = 0.0, term = x;  /* t^n x / n! */
        for (int n = 0; n < 200; n++) {
            if (n % 2 == !want_c) {  /* C: the even n, S: the odd */
                const double v = term / (2.0 * n + 1.0);
                sum += (n / 2) % 2 == 0 ? v : -v;
                if (n > 2 && fabs(v) < 1e-18 * fabs(sum)) break;
            }
            term *= t / (n + 1.0);
        }
        return sum;
    }
    if (x > 1e16) return 0.5;
    /* erfc(z) = z e^-z^2 / sqrt(pi) / (z^2 + 1/2 - (1 2/4)/(z^2 + 5/2 - (3 4/4)/(...))),
     * z^2 = -i pi x^2 / 2: Lentz in complex pairs */
    const double w = -1.5707963267948966 * x * x;  /* Im z^2 */
    double st[6] = {0.5, w, 0.5, w, 0.0, 0.0};
    for (int k = 1; k < 100000; k++) {
        if (fj_sp__lentz_c(-(2.0 * k - 1.0) * (2.0 * k) / 4.0, 0.5 + 2.0 * k, w, st) < 1e-16) {
            break;
        }
    }
    const double fr = st[0], fi = st[1];
    /* e^-z^2 = e^(i pi x^2 / 2): x^2 = t + e exactly, its half reduced modulo 2 */
    const double t = x * x, e = fma(x, x, -t);
    const double u = 0.5 * (fmod(t, 4.0) + e);
    const double pc = fj_sp__cos_pi(u), ps = fj_sp__sin_pi(u);
    /* z = s (1 - i), s = sqrt(pi) x / 2; g = z e^-z^2 / sqrt(pi) = (x/2)(1 - i)(pc + i ps) */
    const double gr = 0.5 * x * (pc + ps), gi = 0.5 * x * (ps - pc);
    const double den = fr * fr + fi * fi;
    const double er = (gr * fr + gi * fi) / den, ei = (gi * fr - gr * fi) / den;  /* erfc */
    /* C + iS = (1 + i)/2 (1 - erfc) */
    const double mr = 1.0 - er, mi = -ei;
    return want_c ? 0.5 * (mr - mi) : 0.5 * (mr + mi);
}

static inline double fj_sp_fresnel_s(double x) {
    if (isnan(x)) return x;
    if (isinf(x)) return x > 0.0 ? 0.5 : -0.5;
    return x < 0.0 ? -fj_sp__fresnel(-x, 0) : fj_sp__fresnel(x, 0);
}

static inline double fj_sp_fresnel_c(double x) {
    if (isnan(x)) return x;
    if (isinf(x)) return x > 0.0 ? 0.5 : -0.5;
    return x < 0.0 ? -fj_sp__fresnel(-x, 1) : fj_sp__fresnel(x, 1);
}

/* expn(n, x) = E_n(x) = int_1^inf e^-xt / t^n dt (SciPy's integer loop): NaN for n < 0 or
 * x < 0, 0 beyond x = log(DBL_MAX) (as Cephes), inf at x = 0 for n < 2 (else 1/(n - 1)),
 * e^-x / x for n = 0; else the power series for x <= 1 (with psi(n) at the term of x^(n-1))
 * and the continued fraction 1/(x + n - 1 n/(x + n + 2 - 2 (n + 1)/(x + n + 4 - ...))) e^-x
 * beyond, by Lentz: ~1e-15 relative. */
static inline double fj_sp_expn(long long n, double x) {
    if (isnan(x)) return x;
    if (n < 0 || x < 0.0) return NAN;
    if (x > 709.782712893384) return 0.0;
    if (x == 0.0) return n < 2 ? INFINITY : 1.0 / (double)(n - 1);
    if (n == 0) return exp(-x) / x;
    const long long m = n - 1;
    if (x <= 1.0) {
        double sum = m != 0 ? 1.0 / (double)m : -log(x) - FJ_SP_EULER, fact = 1.0;
        for (long long i = 1; i < 100000; i++) {
            fact *= -x / (double)i;
            double term;
            if (i != m) {
                term = -fact / (double)(i - m);
            } else {
                double psi = -FJ_SP_EULER;
                for (long long k = 1; k <= m; k++) psi += 1.0 / (double)k;
                term = fact * (-log(x) + psi);
            }
            sum += term;
            if (fabs(term) < 1e-17 * fabs(sum)) break;
        }
        return sum;
    }
    double b = x + (double)n, c = 1e300, d = 1.0 / b, h = d;
    for (long long i = 1; i < 100000; i++) {
        const double a = -(double)i * (double)(m + i);
        b += 2.0;
        d = 1.0 / (a * d + b);
        c = b + a / c;
        const double delta = c * d;
        h *= delta;
        if (fabs(delta - 1.0) < 1e-16) break;
    }
    return h * exp(-x);
}
