/*
 * fj_special_beta.h -- scipy.special.beta, betaln, binom, poch and gammasgn for fusejit's
 * generated C (and
 * CUDA: the renderer makes these device functions). Doubles; float32 operands are computed
 * in double and the result rounded, as SciPy's float loops.
 *
 * The branches are SciPy 1.17's (its cephes-derived beta, lbeta and binom), so the special
 * values agree: NaN, +-inf, zero and negative-integer arguments (a nonpositive integer a
 * gives a finite value only when b is an integer with 1 - a - b > 0), poles of the gammas,
 * and the signs of zero results. Every helper is written here over libm:
 *   - |a| > 1e6 |b| and a > 1e6: ln|B| = ln|Gamma(b)| - b ln a + the first three terms of
 *     the expansion of ln Gamma(a) - ln Gamma(a + b) in 1/a;
 *   - an argument or a + b beyond 171.62 (where Gamma overflows): lgamma(a) + lgamma(b) -
 *     lgamma(a + b), the signs from floor(x)'s parity. It cancels: the error is absolute,
 *     ~eps (|lgamma a| + |lgamma b| + |lgamma(a + b)|), in SciPy's value as in this one;
 *   - else Gamma(a) Gamma(b) / Gamma(a + b) with libm's tgamma (a few ulp), the division
 *     taken first against the gamma nearer Gamma(a + b) in size.
 * binom(n, k): the product formula for integer k below 20 (after k -> n - k for integer n),
 * exp(-ln B(1 + n - k, 1 + k) - ln(n + 1)) for n >= 1e10 k, a two-term expansion for k >
 * 1e8 |n|, else 1 / (n + 1) / B(1 + n - k, 1 + k). NaN for negative integer n, as SciPy.
 * Measured against SciPy by tests/test_special.py (tolerances there: relative 1e-12 where the
 * gammas do not cancel, else the absolute error above). One difference: the sign of Gamma(x)
 * for a non-integer x below -2^31 is (-1)^floor(x) here; SciPy's parity test converts
 * floor(-x) to int, which overflows there, and always gives -1.
 */
#ifndef FJ_SPECIAL_BETA_H
#define FJ_SPECIAL_BETA_H

#define FJ_SP_MAXGAM 171.624376956302725
#define FJ_SP_MAXLOG 709.782712893383996843
#define FJ_SP_ASYMP 1e6

/* Whether x (an integer value) is within C int's range (SciPy's `x == (int)x`). */
static inline int fj_sp_int_range(double x) {
    return x >= -2147483648.0 && x <= 2147483647.0;
}

/* Gamma(x) with +inf at the poles 0, -1, -2, ... (libm's tgamma gives +-inf or NaN there). */
static inline double fj_sp_gamma_p(double x) {
    return (x <= 0.0 && x == floor(x)) ? INFINITY : tgamma(x);
}

/* ln|Gamma(x)|, and its sign (+1 at the poles and for x > 0, (-1)^floor(x) below 0). */
static inline double fj_sp_lgamma_s(double x, int *sign) {
    double f = floor(x);
    *sign = (x < 0.0 && x != f && fmod(f, 2.0) != 0.0) ? -1 : 1;
    return fj_sp_gammaln(x);
}

/* ln|B(a, b)| for a > 1e6 |b|, a > 1e6, and the sign of B. */
static inline double fj_sp_lbeta_asym(double a, double b, int *sign) {
    double r = fj_sp_lgamma_s(b, sign) - b * log(a);
    double c = b * (1.0 - b);
    r += c / (2.0 * a);
    r += c * (1.0 - 2.0 * b) / (12.0 * a * a);
    r -= c * c / (12.0 * a * a * a);
    return r;
}

/* B(a, b) or ln|B(a, b)| (want_log) when neither argument is a nonpositive integer. */
static inline double fj_sp_beta_core(double a, double b, int want_log) {
    int sign = 1, s;
    if (fabs(a) < fabs(b)) {
        double t = a;
        a = b;
        b = t;
    }
    if (fabs(a) > FJ_SP_ASYMP * fabs(b) && a > FJ_SP_ASYMP) {
        double r = fj_sp_lbeta_asym(a, b, &sign);
        return want_log ? r : sign * exp(r);
    }
    double y = a + b;
    if (fabs(y) > FJ_SP_MAXGAM || fabs(a) > FJ_SP_MAXGAM || fabs(b) > FJ_SP_MAXGAM) {
        double r = fj_sp_lgamma_s(y, &s);
        sign *= s;
        r = fj_sp_lgamma_s(b, &s) - r;
        sign *= s;
        r = fj_sp_lgamma_s(a, &s) + r;
        sign *= s;
        if (want_log) return r;
        return r > FJ_SP_MAXLOG ? sign * INFINITY : sign * exp(r);
    }
    double gy = fj_sp_gamma_p(y), ga = fj_sp_gamma_p(a), gb = fj_sp_gamma_p(b);
    if (gy == 0.0) return INFINITY;
    double r;
    if (fabs(fabs(ga) - fabs(gy)) > fabs(fabs(gb) - fabs(gy))) {
        r = gb / gy;
        r *= ga;
    } else {
        r = ga / gy;
        r *= gb;
    }
    return want_log ? log(fabs(r)) : r;
}

/* B(n, b) or ln|B(n, b)| for n a nonpositive integer: finite only for an integer b with
 * 1 - n - b > 0, where B(n, b) = (-1)^b B(1 - n - b, b). n = -2^31 overflows as in SciPy
 * (whose int 1 - n wraps). */
static inline double fj_sp_beta_negint(double n, double b, int want_log) {
    if (n > -2147483648.0 && b == floor(b) && fj_sp_int_range(b) && 1.0 - n - b > 0.0) {
        double c = 1.0 - n - b;
        double sign = fmod(b, 2.0) != 0.0 ? -1.0 : 1.0;
        double v = b <= 0.0 ? INFINITY : fj_sp_beta_core(c, b, want_log);
        return want_log ? v : sign * v;
    }
    return INFINITY;
}

static inline double fj_sp_beta_any(double a, double b, int want_log) {
    if (a <= 0.0 && a == floor(a)) return fj_sp_beta_negint(a, b, want_log);
    if (b <= 0.0 && b == floor(b)) return fj_sp_beta_negint(b, a, want_log);
    return fj_sp_beta_core(a, b, want_log);
}

static inline double fj_sp_beta(double a, double b) { return fj_sp_beta_any(a, b, 0); }
static inline double fj_sp_betaln(double a, double b) { return fj_sp_beta_any(a, b, 1); }

/* binom(n, k) for k > 1e8 |n| (so k > 0): Gamma(1 + n) (1/k + n/(2 k^2)) / (pi k^n) times
 * sin(pi (frac(k) - n)) with the sign of floor(k)'s parity (sin(pi (k - n)) for k beyond int). */
static inline double fj_sp_binom_bigk(double n, double k) {
    const double pi = 3.14159265358979323846;
    double g = fj_sp_gamma_p(1.0 + n);
    double num = g / k + g * n / (2.0 * k * k);
    num /= pi * pow(k, n);
    double kx = floor(k), dk = k, sign = 1.0;
    if (fj_sp_int_range(kx)) {
        dk = k - kx;
        sign = fmod(kx, 2.0) != 0.0 ? -1.0 : 1.0;
    }
    return num * sin((dk - n) * pi) * sign;
}

static inline double fj_sp_binom(double n, double k) {
    if (n < 0.0 && n == floor(n)) return NAN;
    double kx = floor(k);
    if (k == kx && (fabs(n) > 1e-8 || n == 0.0)) {
        double nx = floor(n);
        if (nx == n && kx > nx / 2.0 && nx > 0.0) kx = nx - kx;
        if (kx >= 0.0 && kx < 20.0) {
            double num = 1.0, den = 1.0;
            for (int i = 1; i < 1 + (int)kx; i++) {
                num *= i + n - kx;
                den *= i;
                if (fabs(num) > 1e50) {
                    num /= den;
                    den = 1.0;
                }
            }
            return num / den;
        }
    }
    if (n >= 1e10 * k && k > 0.0) return exp(-fj_sp_betaln(1.0 + n - k, 1.0 + k) - log(n + 1.0));
    if (k > 1e8 * fabs(n)) return fj_sp_binom_bigk(n, k);
    return 1.0 / (n + 1.0) / fj_sp_beta(1.0 + n - k, 1.0 + k);
}

/* gammasgn(x): the sign of Gamma(x): 1 for x > 0 and +0, -1 for -0, NaN at NaN, -inf and
 * the negative integers, (-1)^floor(x) between them (SciPy's is 1 below -2^31, where its
 * int conversion overflows). */
static inline double fj_sp_gammasgn(double x) {
    if (x > 0.0) return 1.0;
    if (x == 0.0) return signbit(x) ? -1.0 : 1.0;
    double f = floor(x);
    if (x != x || x == f) return NAN;  /* (-inf == floor(-inf)) */
    return fmod(f, 2.0) != 0.0 ? -1.0 : 1.0;
}

/* A nonpositive integer, as poch's tests in SciPy: below 1e13 in size (beyond, where every
 * double is an integer, SciPy lets the lgamma difference give its NaN). */
static inline int fj_sp_nonpos_int(double x) {
    return x <= 0.0 && x == floor(x) && fabs(x) < 1e13;
}

/* poch(a, m) = Gamma(a + m) / Gamma(a), SciPy's way: m brought within (-1, 1) by the
 * recurrence (stopping early at a pole, an overflow or a zero), then a's large-a expansion,
 * the poles and zeros, or exp(lgamma(a + m) - lgamma(a)) with the gammas' signs (that
 * difference cancels: its error is absolute, ~eps (|lgamma(a + m)| + |lgamma(a)|), in SciPy's
 * value as in this one, and the signs differ from SciPy's below -2^31, as gammasgn's). */
static inline double fj_sp_poch(double a, double m) {
    double r = 1.0;
    while (m >= 1.0) {
        if (a + m == 1.0) break;
        m -= 1.0;
        r *= a + m;
        if (!isfinite(r) || r == 0.0) break;
    }
    while (m <= -1.0) {
        if (a + m == 0.0) break;
        r /= a + m;
        m += 1.0;
        if (!isfinite(r) || r == 0.0) break;
    }
    if (m == 0.0) return r;
    if (a > 1e4 && fabs(m) <= 1.0) {
        double a2 = a * a;
        return r * pow(a, m) * (1.0 + m * (m - 1.0) / (2.0 * a)
                                + m * (m - 1.0) * (m - 2.0) * (3.0 * m - 1.0) / (24.0 * a2)
                                + m * m * (m - 1.0) * (m - 1.0) * (m - 2.0) * (m - 3.0)
                                  / (48.0 * a2 * a));
    }
    if (fj_sp_nonpos_int(a + m) && !fj_sp_nonpos_int(a) && a + m != m) return INFINITY;
    if (!fj_sp_nonpos_int(a + m) && fj_sp_nonpos_int(a)) return 0.0;
    return r * exp(lgamma(a + m) - lgamma(a)) * fj_sp_gammasgn(a + m) * fj_sp_gammasgn(a);
}

#endif /* FJ_SPECIAL_BETA_H */
