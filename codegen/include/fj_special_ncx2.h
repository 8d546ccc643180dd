/*
 * fj_special_ncx2.h -- scipy.stats.ncx2's functions: SciPy's private ufuncs _ncx2_pdf(x, k, l),
 * _ncx2_sf and _ncx2_isf (Boost's non-central chi-squared, as SciPy 1.17 calls it) and
 * scipy.special.chndtr and chndtrix, for fusejit's generated C (and CUDA: device functions).
 * After fj_special_igam.h (fj_sp_igam_fac), fj_special_jy.h (fj_sp_iv) and fj_special_inv.h
 * (fj_sp_gammaincinv). Doubles.
 *
 * Boost's choice of method: for l <= 50, unless the exponent r = (k/4 - 1/2) log(x/l) -
 * (x + l)/2 is beyond a quarter of the largest double's log, the Bessel form
 * e^r I_{k/2-1}(sqrt(l x)) / 2; else the Poisson mixture of chi-squared densities,
 * sum_i e^{-l/2} (l/2)^i / i! f_{k+2i}(x), summed from its largest term upwards and
 * downwards by the ratio of neighbours until a term is below eps of the sum.
 * Boost's domain: NaN for a NaN, x < 0 or infinite, k <= 0 or infinite, l < 0 or infinite;
 * l = 0 is the chi-squared density (inf, 1/2 or 0 at x = 0); else 0 at x = 0 for any k, as
 * Boost returns (and where x/2 underflows).
 */
#ifndef FJ_SPECIAL_NCX2_H
#define FJ_SPECIAL_NCX2_H

#define FJ_NCX2_ITER 1000000
#define FJ_NCX2_EPS 2.220446049250313e-16
#define FJ_NCX2_FLOOR 5.562684646268003e-309  /* (Boost's smallest quantile, DBL_MIN / 4) */

/* x^(a-1) e^-x / Gamma(a), Boost's gamma_p_derivative (0 where it underflows; at x = 0 its
 * limit, as Boost's) */
static inline double fj_sp_ncx2_gpd(double a, double x) {
    if (x == 0.0) return a > 1.0 ? 0.0 : (a == 1.0 ? 1.0 : INFINITY);
    return fj_sp_igam_fac(a, x, 1) / x;
}

/* the Poisson mixture, l > 0, x > 0: summed from its largest term (the first i whose ratio to
 * the next, l x / (4 (i + 1)(k/2 + i)), is at most 1) both ways. That term is the product of
 * the two accurate factors, or of their logs where it would be below 1e-290 (so no start is
 * subnormal: Boost starts at the Poisson weights' mode, whose term can be, and loses up to
 * 10% of a value near 1e-200 there; mpmath agrees with this sum) */
static inline double fj_sp_ncx2_mixture(double x, double k, double l) {
    const double x2 = 0.5 * x, n2 = 0.5 * k, l2 = 0.5 * l, c = l2 * x2;
    if (isinf(c)) return 0.0;  /* (x near the largest double: e^-x/2 underflows) */
    const double root = 0.5 * (sqrt((n2 - 1.0) * (n2 - 1.0) + 4.0 * c) - (n2 + 1.0));
    const double peak = root > 0.0 ? ceil(root) : 0.0;
    const double t1 = fj_sp_ncx2_gpd(peak + 1.0, l2), t2 = fj_sp_ncx2_gpd(n2 + peak, x2);
    double scale = t1 * t2, log_scale = 0.0;
    if (!(t1 > 1e-290 && t2 > 1e-290 && scale > 1e-290) || isinf(scale)) {
        if (x2 == 0.0) return 0.0;  /* (x/2 underflowed: Boost's 0) */
        log_scale = peak * log(l2) - l2 - lgamma(peak + 1.0) + (n2 + peak - 1.0) * log(x2) -
                    x2 - lgamma(n2 + peak);
        if (log_scale < -760.0) return 0.0;  /* (the sum of at most 2e6 such terms underflows) */
        scale = 1.0;
    }
    double sum = 1.0, term = 1.0;
    for (int s = 0; s < FJ_NCX2_ITER; s++) {
        const double i = peak + s;
        term *= c / ((i + 1.0) * (n2 + i));
        sum += term;
        if (term < FJ_NCX2_EPS * sum) break;
    }
    term = 1.0;
    for (double i = peak - 1.0, s = 0; i >= 0.0 && s < FJ_NCX2_ITER; i -= 1.0, s++) {
        term *= (i + 1.0) * (n2 + i) / c;
        sum += term;
        if (term < FJ_NCX2_EPS * sum) break;
    }
    return log_scale != 0.0 ? 0.5 * exp(log_scale + log(sum)) : 0.5 * scale * sum;
}

static inline double fj_sp_ncx2_pdf(double x, double k, double l) {
    if (isnan(x) || isnan(k) || isnan(l) || x < 0.0 || isinf(x) || !(k > 0.0) || l < 0.0 ||
        isinf(k) || isinf(l))
        return NAN;
    if (l == 0.0) return fj_sp_ncx2_gpd(0.5 * k, 0.5 * x) * 0.5;  /* chi-squared */
    if (x == 0.0) return 0.0;
    if (l > 50.0) return fj_sp_ncx2_mixture(x, k, l);
    const double r = log(x / l) * (0.25 * k - 0.5) - 0.5 * (x + l);
    if (fabs(r) >= 709.782712893384 / 4.0) return fj_sp_ncx2_mixture(x, k, l);
    return 0.5 * exp(r) * fj_sp_iv(0.5 * k - 1.0, sqrt(l * x));
}

/* The distribution function on the side of the mean k + l where x lies, as sums of positive
 * terms run in the direction in which every recurrence multiplies or adds (a = k/2, t_m =
 * x2^(a+m) e^-x2 / Gamma(a + m + 1), the Poisson(l/2) weights w_m, W_m = P(X <= m) = Q(m + 1,
 * l/2), U_m = P(X > m) = P(m + 1, l/2)):
 *   cdf = sum_i w_i P(a + i, x2) = sum_m t_m W_m            (x below the mean: m upwards),
 *   sf = sum_i w_i Q(a + i, x2) = Q(a, x2) + sum_m t_m U_m  (x above it: m downwards),
 * started at FJ_NCX2_SPREAD(i) terms beyond the terms' largest (near the i with
 * (i + 1)(a + i + 1) = x2 l/2) on the side they come from, each start computed once, and
 * stopped once the geometric bound of what is left is below eps of the sum. The other
 * function is 1 minus it. */
#define FJ_NCX2_SPREAD(i) ceil(8.5 * sqrt((i) + 1.0) + 25.0)

static inline double fj_sp_ncx2_peak(double a, double c) {
    const double root = 0.5 * (sqrt(a * a + 4.0 * c) - (a + 2.0));
    return root > 0.0 ? floor(root) : 0.0;
}

/* the cdf below the mean (upper = 0), else the sf; returns the side's sum, sets *lower */
static inline double fj_sp_ncx2_side(double x, double k, double l, int *lower) {
    const double x2 = 0.5 * x, a = 0.5 * k, l2 = 0.5 * l;
    const double peak = fj_sp_ncx2_peak(a, x2 * l2), spread = FJ_NCX2_SPREAD(peak);
    double sum = 0.0;
    *lower = x < k + l;
    if (isinf(x2 * l2)) return *lower ? NAN : 0.0;  /* (x, or k and l, near the largest double) */
    if (*lower) {
        double m = fmax(0.0, peak - spread);
        double t = fj_sp_igam_fac(a + m, x2, 0), W = fj_sp_gammaincc(m + 1.0, l2);
        double w = fj_sp_igam_fac(m + 1.0, l2, 0);  /* w_(m+1) */
        for (int s = 0; s < FJ_NCX2_ITER; s++) {
            const double term = t * W;
            sum += term;
            const double r = x2 / (a + m + 1.0);
            if (r < 1.0 && term * r <= FJ_NCX2_EPS * sum * (1.0 - r)) break;  /* (or 0s) */
            t *= r;
            W += w;
            m += 1.0;
            w *= l2 / (m + 1.0);
        }
        return sum;
    }
    double m = peak + spread;
    double t = fj_sp_igam_fac(a + m, x2, 0), U = fj_sp_gammainc(m + 1.0, l2);
    double w = fj_sp_igam_fac(m, l2, 0);  /* w_m */
    for (int s = 0; s < FJ_NCX2_ITER && m >= 0.0; s++, m -= 1.0) {
        const double term = t * U;
        sum += term;
        const double r = (a + m) / x2;  /* t_(m-1) / t_m */
        if (r < 1.0 && t * r <= FJ_NCX2_EPS * sum * (1.0 - r)) break;  /* (or 0s) */
        t *= r;
        U += w;
        w *= m / l2;
    }
    return sum + fj_sp_gammaincc(a, x2);
}

/* Boost's domain as SciPy returns it: NaN for a NaN, x < 0, k <= 0 or infinite, l < 0 or
 * infinite; l = 0 is the chi-squared distribution; else at x = 0 the cdf 0 and the sf -0
 * (sic), at x = inf the cdf 1 and the sf NaN */
static inline double fj_sp_ncx2_cdf_any(double x, double k, double l, int upper) {
    if (isnan(x) || isnan(k) || isnan(l) || x < 0.0 || !(k > 0.0) || l < 0.0 || isinf(k) ||
        isinf(l))
        return NAN;
    if (l == 0.0) return upper ? fj_sp_gammaincc(0.5 * k, 0.5 * x) :
                                 fj_sp_gammainc(0.5 * k, 0.5 * x);
    if (x == 0.0) return upper ? -0.0 : 0.0;
    if (isinf(x)) return upper ? NAN : 1.0;
    int lower;
    double side = fj_sp_ncx2_side(x, k, l, &lower);
    side = side > 1.0 ? 1.0 : side;  /* (NaN kept) */
    return lower == !upper ? side : 1.0 - side;
}

/* scipy.special.chndtr(x, df, nc) and SciPy's private _ncx2_sf(x, k, l) */
static inline double fj_sp_chndtr(double x, double k, double l) {
    return fj_sp_ncx2_cdf_any(x, k, l, 0);
}
static inline double fj_sp_ncx2_sf(double x, double k, double l) {
    return fj_sp_ncx2_cdf_any(x, k, l, 1);
}

/* The quantile: x with F(x) = p (upper = 0) or S(x) = q (upper = 1). The side whose target
 * t is at most 1/2 is solved (the other's 1 - p is exact), by Newton's method on log G(x) =
 * log t in log x (G = F or S; d log G / d log x = +-x pdf(x) / G(x)), x multiplied by the
 * exp of each step (so no rounding of log x limits it), kept inside the bracket its values
 * have shown, bisected (geometrically) where a step would leave it, from Patnaik's
 * approximation c chi2_nu (c = (k + 2l)/(k + l), nu = (k + l)^2/(k + 2l)); until a step
 * is below 1e-15 (relative in x). SciPy's values at the ends: chndtrix 0 at p = 0 and inf
 * at 1, the isf inf at q = 0 (where SciPy's raises) and 0 at 1; NaN outside [0, 1]; l = 0
 * is chi2's; a root below DBL_MIN / 4 is that (Boost's floor). */
static inline double fj_sp_ncx2_quantile(double target, double k, double l, int upper) {
    if (isnan(target) || isnan(k) || isnan(l) || !(k > 0.0) || l < 0.0 || isinf(k) ||
        isinf(l) || target < 0.0 || target > 1.0)
        return NAN;
    if (target == 0.0) return upper ? INFINITY : 0.0;
    if (target == 1.0) return upper ? 0.0 : INFINITY;
    const int lower = upper ? target > 0.5 : target <= 0.5;  /* solve F (else S) */
    const double t = lower ? (upper ? 1.0 - target : target) : (upper ? target : 1.0 - target);
    if (l == 0.0)
        return 2.0 * (lower ? fj_sp_gammaincinv(0.5 * k, t) : fj_sp_gammainccinv(0.5 * k, t));
    const double c = (k + 2.0 * l) / (k + l), nu = (k + l) * (k + l) / (k + 2.0 * l);
    double x = 2.0 * c * (lower ? fj_sp_gammaincinv(0.5 * nu, t) :
                                  fj_sp_gammainccinv(0.5 * nu, t));
    if (lower && fj_sp_chndtr(FJ_NCX2_FLOOR, k, l) >= t) return FJ_NCX2_FLOOR;
    if (!(x > FJ_NCX2_FLOOR) || isinf(x)) x = k + l;
    double lo = FJ_NCX2_FLOOR, hi = INFINITY;
    const double log_t = log(t);
    for (int it = 0; it < 200; it++) {
        const double g = lower ? fj_sp_chndtr(x, k, l) : fj_sp_ncx2_sf(x, k, l);
        const double d = log(g) - log_t;  /* (G increasing in x for F, decreasing for S) */
        if (d == 0.0) break;
        if ((d > 0.0) == lower) hi = x; else lo = x;
        const double slope = x * fj_sp_ncx2_pdf(x, k, l) / g * (lower ? 1.0 : -1.0);
        const double du = -d / slope;  /* (Newton's step in log x: x's relative change) */
        double next = x * exp(du);
        int done = fabs(du) < 1e-15;
        if (!(next > lo && next < hi)) {  /* (a step out of the bracket, or NaN) */
            next = isinf(hi) ? fmax(x, lo) * 2.718281828459045 : sqrt(lo) * sqrt(hi);
            done = next == lo || next == hi;
        }
        x = next;
        if (done) break;
    }
    return x;
}

/* scipy.special.chndtrix(p, df, nc) and SciPy's private _ncx2_isf(q, k, l) */
static inline double fj_sp_chndtrix(double p, double k, double l) {
    return fj_sp_ncx2_quantile(p, k, l, 0);
}
static inline double fj_sp_ncx2_isf(double q, double k, double l) {
    return fj_sp_ncx2_quantile(q, k, l, 1);
}

#endif
