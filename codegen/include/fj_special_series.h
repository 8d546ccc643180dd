/*
 * fj_special_series.h -- scipy.special's Hurwitz and Riemann zeta functions (the private
 * ufuncs _zeta and _riemann_zeta behind scipy.special.zeta, and polygamma through them),
 * erfi and dawsn, as sums of series, for fusejit's generated C (and CUDA: codegen/cuda.py
 * makes them device functions). Doubles; float32 operands are computed in double and
 * rounded. Special values follow SciPy 1.17.
 *
 *   fj_sp_zeta(x, q)   sum_{k >= 0} (q + k)^-x: the first N terms directly, with N the
 *       first for which a = q + N >= max(10, 3 (x + 26) / (2 pi)), then the Euler-Maclaurin
 *       tail a^(1-x)/(x-1) + a^-x/2 + 13 Bernoulli terms B_2j/(2j)! x(x+1)..(x+2j-2)
 *       a^(-x-2j+1), whose ratio that a keeps below 1/9: ~4 ulp (tests/test_special_series.py
 *       against SciPy and against 100-digit mpmath values). From x = 64 the direct terms
 *       alone, until they fall below eps of the sum once q + k >= 1 (SciPy's is NaN for
 *       1 < q <= 1e8 beyond x ~ 1e13, where the sum underflows to 0: this one's is 0). inf at x = 1 and
 *       at q = 0, -1, -2, ...; NaN for x < 1, and for q < 0 unless x is an integer (then the
 *       terms up to q + N > 0 are summed as they are: |q| of them, as SciPy's loop does).
 *       At x = inf SciPy's values (cephes' loop) are kept: 1 at q = 1, 0 beyond q = 1e8, NaN
 *       for 1 < q <= 1e8, inf otherwise.
 *   fj_sp_riemann_zeta(x)   zeta(x, 1) for x > 1; for -0.1 <= x < 1 the same sum and tail,
 *       valid there (it cancels by a few bits); below -0.1 the reflection
 *       zeta(x) = (2 pi)^x / pi sin(pi x/2) Gamma(1-x) zeta(1-x), with sin(pi x/2) of the exact
 *       remainder of x modulo 2 (0 at the even negative integers, accurate next to them; SciPy's
 *       loses digits there) and, below x = -169, in logarithms; (2 pi)^x and the exponential
 *       lose ~|x| eps (relative 1e-13 at x = -180). 1 at inf, NaN at -inf.
 *   fj_sp_erfi(x), fj_sp_dawsn(x)   erfi(x) = 2/sqrt(pi) sum x^(2n+1) / (n! (2n+1)) (positive
 *       terms: no cancellation) for |x| < 6, and dawsn(x) = sqrt(pi)/2 exp(-x^2) erfi(x);
 *       from |x| = 6 dawsn's asymptotic series 1/(2x) sum (2n-1)!!/(2x^2)^n (its smallest term
 *       is below 1e-15 there) and erfi = 2/sqrt(pi) exp(x^2) dawsn(x), exp(+-x^2) with x^2
 *       split exactly (fma): a few ulp; erfi overflows from |x| ~ 26.64, as SciPy's.
 */

#include <stdint.h>

/* B_2(j+1) / (2(j+1))!, j = 0 .. 12 (a switch, not a table: CUDA's device code reads no
   host arrays) */
static inline double fj_sp_zeta_bern(int j) {
    switch (j) {
        case 0: return 0.08333333333333333;
        case 1: return -0.001388888888888889;
        case 2: return 3.306878306878307e-05;
        case 3: return -8.267195767195768e-07;
        case 4: return 2.08767569878681e-08;
        case 5: return -5.284190138687493e-10;
        case 6: return 1.3382536530684679e-11;
        case 7: return -3.3896802963225827e-13;
        case 8: return 8.586062056277845e-15;
        case 9: return -2.174868698558062e-16;
        case 10: return 5.5090028283602295e-18;
        case 11: return -1.3954464685812522e-19;
        case 12: return 3.534707039629467e-21;
        default: return 0.0;
    }
}

/* the shifted sum and Euler-Maclaurin tail, for x != 1 and q + k != 0 */
static inline double fj_sp_zeta_em(double x, double q) {
    const double need = fmax(10.0, 3.0 * (x + 26.0) * 0.15915494309189535);  /* /(2 pi) */
    double s = 0.0, a = q;
    for (int64_t k = 0; a < need; k++) {
        if (k >= ((int64_t)1 << 31)) return NAN;  /* (q below -2^31: SciPy loops that long) */
        s += pow(a, -x);
        a = q + (double)(k + 1);
    }
    double t = pow(a, 1.0 - x) / (x - 1.0) + 0.5 * pow(a, -x);
    double fac = x, p = pow(a, -x - 1.0);
    const double a2 = a * a;
    for (int j = 0; j < 13; j++) {
        t += fj_sp_zeta_bern(j) * fac * p;
        fac *= (x + 2 * j + 1) * (x + 2 * j + 2);
        p /= a2;
    }
    return s + t;
}

static inline double fj_sp_zeta(double x, double q) {
    if (isnan(q)) return q;
    if (x == 1.0) return INFINITY;
    if (x < 1.0) return NAN;
    if (q <= 0.0) {
        if (q == floor(q)) return INFINITY;  /* a pole (q = -inf too), whatever x */
        if (x != floor(x)) return NAN;  /* (q + k)^-x of a negative base */
    }
    if (isnan(x)) return x;
    if (isinf(x))  /* SciPy's (cephes') values */
        return q == 1.0 ? 1.0 : q > 1e8 ? 0.0 : q > 1.0 ? NAN : INFINITY;
    if (isinf(q)) return 0.0;
    if (x >= 64.0) {  /* the terms fall by 2^-64 or more from q + k = 1 */
        double s = 0.0, a = q;
        for (int64_t k = 0; k < ((int64_t)1 << 31); k++, a = q + (double)k) {
            const double t = pow(a, -x);
            s += t;
            if (a >= 1.0 && fabs(t) <= 1e-17 * fabs(s)) return s;
        }
        return NAN;  /* (q below -2^31: SciPy loops that long) */
    }
    return fj_sp_zeta_em(x, q);
}

/* sin(pi x/2): (-1)^m sin(pi d/2), x = 2m + d exactly (|d| <= 1), so that it keeps its
   digits next to its zeros, the even integers (0 there) */
static inline double fj_sp_sin_half_pi(double x) {
    const double m = nearbyint(0.5 * x), d = x - 2.0 * m;
    const double s = fabs(d) <= 0.5 ? sin(d * 1.5707963267948966)
                                     : copysign(cos((1.0 - fabs(d)) * 1.5707963267948966), d);
    return fmod(m, 2.0) != 0.0 ? -s : s;
}

static inline double fj_sp_riemann_zeta(double x) {
    if (isnan(x)) return x;
    if (x == 1.0) return INFINITY;
    if (x == INFINITY) return 1.0;
    if (x == -INFINITY) return NAN;
    if (x > 1.0) return fj_sp_zeta(x, 1.0);
    if (x >= -0.1) return fj_sp_zeta_em(x, 1.0);  /* (the reflection's 1 - x loses x there) */
    /* x < 0: (2 pi)^x / pi sin(pi x/2) Gamma(1-x) zeta(1-x) */
    const double s = fj_sp_sin_half_pi(x);
    if (s == 0.0) return 0.0;  /* the trivial zeros */
    const double z = fj_sp_zeta(1.0 - x, 1.0);
    if (x > -169.0)
        return pow(6.283185307179586, x) * 0.3183098861837907 * s * tgamma(1.0 - x) * z;
    const double lg = x * 1.8378770664093453 - 1.1447298858494002 + lgamma(1.0 - x);
    return s * z * exp(lg);  /* ln(2 pi), ln(pi) */
}

/* exp(-x^2) with x^2 split exactly (fj_special.h's fj_sp_exp_sq is exp(x^2)) */
static inline double fj_sp_exp_negsq(double x) {
    const double hi = x * x, lo = fma(x, x, -hi);
    return exp(-hi) * (1.0 - lo);
}

/* sum x^(2n+1) / (n! (2n+1)) for |x| < 6: sqrt(pi)/2 erfi(x) */
static inline double fj_sp_erfi_series(double x) {
    const double x2 = x * x;
    double t = x, s = x;
    for (int n = 1; n < 200; n++) {
        t *= x2 / n;
        const double u = t / (2 * n + 1);
        s += u;
        if (fabs(u) <= 1e-17 * fabs(s)) break;
    }
    return s;
}

/* dawsn(x) for |x| >= 6: 1/(2x) sum (2n-1)!!/(2x^2)^n, to its smallest term */
static inline double fj_sp_dawsn_asym(double x) {
    const double r = 0.5 / (x * x);  /* 0 once x * x overflows: dawsn = 1/(2x) */
    double u = 1.0, s = 1.0;
    for (int n = 1; n < 200; n++) {
        const double next = u * (2 * n - 1) * r;
        if (next >= u || next <= 1e-17 * s) break;
        u = next;
        s += u;
    }
    return s * 0.5 / x;
}

static inline double fj_sp_dawsn(double x) {
    if (isnan(x)) return x;
    if (isinf(x)) return x > 0 ? 0.0 : -0.0;
    if (fabs(x) < 6.0) return fj_sp_exp_negsq(x) * fj_sp_erfi_series(x);
    return fj_sp_dawsn_asym(x);
}

static inline double fj_sp_erfi(double x) {
    if (isnan(x) || isinf(x)) return x;
    if (fabs(x) < 6.0) return 1.1283791670955126 * fj_sp_erfi_series(x);  /* 2/sqrt(pi) */
    if (fabs(x) > 27.0) return x > 0 ? INFINITY : -INFINITY;
    return 1.1283791670955126 * fj_sp_exp_sq(x) * fj_sp_dawsn_asym(x);
}
