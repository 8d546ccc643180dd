/*
 * fj_special_misc.h -- scipy.special.spence (the dilogarithm) and the Kolmogorov distribution
 * (kolmogorov, kolmogi, and SciPy's private _kolmogc, _kolmogci, _kolmogp behind
 * scipy.stats.kstwobign), for fusejit's generated C (and CUDA: the renderer makes these device
 * functions). Doubles; float32 operands are computed in double and the result rounded.
 *
 * spence(x) = Li2(1 - x) = -int_1^x log(t) / (t - 1) dt for real x >= 0 (NaN below 0, at inf
 * and for a NaN, as SciPy's): the Bernoulli series Li2(z) = sum B_n u^(n+1) / (n+1)!,
 * u = -log(1 - z), where |u| <= log 2 (1/2 <= x < 2, u = -log x), and through Li2(z) =
 * pi^2/6 - log z log(1 - z) - Li2(1 - z) below 1/2 (log z = log1p(-x)) and Li2(z) = -pi^2/6 -
 * log^2(-z)/2 - Li2(1/z) from 2 on (u = log1p(-1/x)), so no argument loses digits.
 *
 * The Kolmogorov distribution's survival function kolmogorov(x) = 2 sum (-1)^(k-1)
 * exp(-2 k^2 x^2) from x = 0.82 on, else 1 - K(x) with K(x) = sqrt(2 pi) / x sum
 * exp(-(2k - 1)^2 pi^2 / (8 x^2)) (its cdf, _kolmogc, each where it does not cancel); _kolmogp
 * their derivative (-0 for x <= 0 and x = inf); kolmogi and _kolmogci their inverses by
 * bisection on [0, 40] (the smaller of the two tails solved), 0 and inf at the ends, NaN
 * outside [0, 1]. 1 (or 0) for x <= 0, as SciPy's.
 */
#ifndef FJ_SPECIAL_MISC_H
#define FJ_SPECIAL_MISC_H

#define FJ_PI2_6 1.6449340668482264  /* pi^2 / 6 */
#define FJ_KOLMOG_CUT 0.82
#define FJ_KOLMOG_TOP 40.0

/* Li2(z) from u = -log(1 - z), |u| <= log 2: u - u^2/4 + u sum B_2k u^2k / (2k + 1)!. */
static inline double fj_sp_li2_series(double u) {
    const double v = u * u;
    double s = 2.395218621026187e-19;
    s = s * v - 1.0356517612181247e-17;
    s = s * v + 4.518980029619918e-16;
    s = s * v - 1.9939295860721074e-14;
    s = s * v + 8.921691020456452e-13;
    s = s * v - 4.0647616451442256e-11;
    s = s * v + 1.8978869988971e-09;
    s = s * v - 9.185773074661964e-08;
    s = s * v + 4.72411186696901e-06;
    s = s * v - 0.0002777777777777778;
    s = s * v + 0.027777777777777776;
    return u - 0.25 * v + u * (s * v);
}

static inline double fj_sp_spence(double x) {
    if (isnan(x) || x < 0.0 || isinf(x)) return NAN;
    if (x == 0.0) return FJ_PI2_6;
    if (x >= 2.0) {  /* z = 1 - x <= -1 */
        const double l = log(x - 1.0);
        return -FJ_PI2_6 - 0.5 * l * l - fj_sp_li2_series(log1p(-1.0 / x));
    }
    if (x >= 0.5) return fj_sp_li2_series(-log(x)) + 0.0;  /* (+0 at x = 1, as SciPy's) */
    /* z = 1 - x in (1/2, 1) */
    return FJ_PI2_6 - log1p(-x) * log(x) - fj_sp_li2_series(-log1p(-x));
}

/* 2 sum (-1)^(k-1) exp(-2 k^2 x^2) (or, `deriv`, its derivative), x >= FJ_KOLMOG_CUT. */
static inline double fj_sp_kolmog_tail(double x, int deriv) {
    const double t = -2.0 * x * x;
    double s = 0.0, sign = 1.0;
    for (int k = 1; k <= 20; k++) {
        const double e = exp(t * (double)(k * k));
        const double term = deriv ? (double)(k * k) * e : e;
        s += sign * term;
        sign = -sign;
        if (e == 0.0 || term < 1e-18 * fabs(s)) break;
    }
    return deriv ? -8.0 * x * s : 2.0 * s;
}

/* K(x) = sqrt(2 pi) / x sum exp(-(2k-1)^2 pi^2 / (8 x^2)) (or its derivative), 0 < x. */
static inline double fj_sp_kolmog_head(double x, int deriv) {
    const double w = -1.2337005501361697 / (x * x);  /* -pi^2 / (8 x^2) */
    double s = 0.0;
    for (int k = 1; k <= 8; k++) {
        const double a = (double)((2 * k - 1) * (2 * k - 1));
        const double e = exp(a * w);
        if (e == 0.0) break;  /* (and x tiny: w = -inf) */
        s += deriv ? e * (2.0 * a * -w - 1.0) : e;
    }
    if (s == 0.0) return 0.0;  /* (x * x may underflow too) */
    return 2.5066282746310002 * s / (deriv ? x * x : x);  /* sqrt(2 pi) */
}

static inline double fj_sp_kolmogorov(double x) {
    if (isnan(x)) return NAN;
    if (x <= 0.0) return 1.0;
    if (isinf(x)) return 0.0;
    return x >= FJ_KOLMOG_CUT ? fj_sp_kolmog_tail(x, 0) : 1.0 - fj_sp_kolmog_head(x, 0);
}

static inline double fj_sp_kolmogc(double x) {
    if (isnan(x)) return NAN;
    if (x <= 0.0) return 0.0;
    if (isinf(x)) return 1.0;
    return x >= FJ_KOLMOG_CUT ? 1.0 - fj_sp_kolmog_tail(x, 0) : fj_sp_kolmog_head(x, 0);
}

static inline double fj_sp_kolmogp(double x) {
    if (isnan(x)) return NAN;
    if (x <= 0.0 || isinf(x)) return -0.0;
    return x >= FJ_KOLMOG_CUT ? fj_sp_kolmog_tail(x, 1) : -fj_sp_kolmog_head(x, 1);
}

/* The y in (0, FJ_KOLMOG_TOP) where the survival function (by_sf) or the cdf is `target`, by
 * bisection: the survival function falls, the cdf rises. */
static inline double fj_sp_kolmog_solve(double target, int by_sf) {
    double lo = 0.0, hi = FJ_KOLMOG_TOP;
    for (int i = 0; i < 200 && hi - lo > 2e-16 * hi; i++) {
        const double mid = 0.5 * (lo + hi);
        const int left = by_sf ? fj_sp_kolmogorov(mid) < target : fj_sp_kolmogc(mid) > target;
        if (left) hi = mid; else lo = mid;
    }
    return 0.5 * (lo + hi);
}

static inline double fj_sp_kolmogi(double p) {
    if (isnan(p) || p < 0.0 || p > 1.0) return NAN;
    if (p == 0.0) return INFINITY;
    if (p == 1.0) return 0.0;
    return p <= 0.5 ? fj_sp_kolmog_solve(p, 1) : fj_sp_kolmog_solve(1.0 - p, 0);
}

static inline double fj_sp_kolmogci(double q) {
    if (isnan(q) || q < 0.0 || q > 1.0) return NAN;
    if (q == 0.0) return 0.0;
    if (q == 1.0) return INFINITY;
    return q <= 0.5 ? fj_sp_kolmog_solve(q, 0) : fj_sp_kolmog_solve(1.0 - q, 1);
}

#endif
