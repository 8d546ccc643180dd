/*
 * fj_special_dquant.h -- the discrete distributions scipy.stats evaluates through special
 * functions fusejit did not have: scipy.special.pdtrik (the Poisson cdf's inverse in k, which
 * scipy.stats.poisson.ppf rounds up), and SciPy's private ufuncs of scipy.stats.binom's ppf and
 * isf and scipy.stats.nbinom's pmf, cdf, sf, ppf and isf (Boost's there). For fusejit's
 * generated C (and CUDA: the renderer makes these device functions); doubles.
 *
 * Quantiles: the smallest integer k with cdf(k) >= q (ppf) or sf(k) <= q (isf), found by
 * bisection over the integers of a bracket (binom's [0, n]; nbinom's doubled from 1) with the
 * cdf and sf of fj_special_ibeta.h; Boost rounds up a root of the continuous extension, which is
 * that k except where q equals a cdf value to the last bit (Boost may then give k + 1).
 * scipy.stats' methods call these only for 0 < q < 1 and valid parameters; elsewhere they give
 * NaN (or inf for an nbinom quantile beyond 2^62), never loop long.
 *
 * pdtrik(p, m): the k >= 0 with Q(k + 1, m) = p (Q: fj_special_igam.h's gammaincc), by the
 * Illinois method on a bracket (every third step a bisection), to ~1e-15 relative; 0 where
 * Q(1, m) = exp(-m) >= p already (as SciPy's cdflib); NaN for p outside [0, 1), m < 0, a NaN,
 * and m = inf unless p = 0; 0 at p = 0 or m = 0.
 */
#ifndef FJ_SPECIAL_DQUANT_H
#define FJ_SPECIAL_DQUANT_H

#define FJ_DQ_TOP 4611686018427387904.0  /* 2^62: nbinom's bracket stops doubling here */
#define FJ_DQ_ITER 200

/* nbinom: cdf I_p(n, k + 1) and sf 1 - I_p(n, k + 1) of an integer k >= 0 (Boost's, the
 * floor taken by SciPy's caller); pmf p^n (1 - p)^k Gamma(n + k) / (Gamma(n) k!) = p / (n + k)
 * times the derivative of I_x(n, k + 1) at p, continuous in k as Boost's; NaN outside n > 0,
 * 0 <= p <= 1, k >= 0. */
static inline int fj_sp_nbinom_bad(double k, double n, double p) {
    return isnan(k) || isnan(n) || isnan(p) || !(n > 0.0) || isinf(n) || p < 0.0 || p > 1.0 ||
           k < 0.0;
}

static inline double fj_sp_nbinom_pmf(double k, double n, double p) {
    if (fj_sp_nbinom_bad(k, n, p) || isinf(k)) return NAN;
    if (p == 0.0) return 0.0;
    if (p == 1.0) return k == 0.0 ? 1.0 : 0.0;
    if (k == 0.0) return exp(n * log(p));
    return p / (n + k) * fj_sp_ibeta_derivative(n, k + 1.0, p, 1.0 - p);
}

static inline double fj_sp_nbinom_cdf(double k, double n, double p) {
    if (fj_sp_nbinom_bad(k, n, p)) return NAN;
    if (isinf(k) || p == 1.0) return 1.0;
    return fj_sp_betainc(n, k + 1.0, p);
}

static inline double fj_sp_nbinom_sf(double k, double n, double p) {
    if (fj_sp_nbinom_bad(k, n, p)) return NAN;
    if (isinf(k) || p == 1.0) return 0.0;
    return fj_sp_betaincc(n, k + 1.0, p);
}

/* A bisection over the integers between lo (false) and hi (true); bounded, since beyond 2^53
 * neighbouring doubles are more than 1 apart. */
#define FJ_DQ_BISECT(TEST)                                                      \
    for (int fj_it = 0; fj_it < FJ_DQ_ITER && hi - lo > 1.0; fj_it++) {         \
        const double mid = floor(lo + 0.5 * (hi - lo));                         \
        if (TEST) hi = mid; else lo = mid;                                      \
    }

static inline int fj_dq_binom_bad(double q, double n, double p) {
    return isnan(q) || q < 0.0 || q > 1.0 || isnan(n) || n < 0.0 || isinf(n) || isnan(p) ||
           p < 0.0 || p > 1.0;
}

static inline double fj_sp_binom_ppf(double q, double n, double p) {
    if (fj_dq_binom_bad(q, n, p)) return NAN;
    const double nn = floor(n);
    double lo = -1.0, hi = nn;  /* cdf(-1) = 0 < q; cdf(n) = 1 >= q */
    if (q == 0.0) return 0.0;
    FJ_DQ_BISECT(fj_sp_binom_cdf(mid, nn, p) >= q)
    return hi;
}

static inline double fj_sp_binom_isf(double q, double n, double p) {
    if (fj_dq_binom_bad(q, n, p)) return NAN;
    const double nn = floor(n);
    double lo = -1.0, hi = nn;  /* sf(-1) = 1 > q (q < 1); sf(n) = 0 <= q */
    if (q == 1.0) return 0.0;
    FJ_DQ_BISECT(fj_sp_binom_sf(mid, nn, p) <= q)
    return hi;
}

static inline double fj_sp_nbinom_ppf(double q, double n, double p) {
    if (isnan(q) || q < 0.0 || q > 1.0 || fj_sp_nbinom_bad(0.0, n, p)) return NAN;
    if (q == 0.0 || p == 1.0 || fj_sp_nbinom_cdf(0.0, n, p) >= q) return 0.0;
    double lo = 0.0, hi = 1.0;
    while (fj_sp_nbinom_cdf(hi, n, p) < q) {
        if (hi >= FJ_DQ_TOP) return INFINITY;
        lo = hi;
        hi *= 2.0;
    }
    FJ_DQ_BISECT(fj_sp_nbinom_cdf(mid, n, p) >= q)
    return hi;
}

static inline double fj_sp_nbinom_isf(double q, double n, double p) {
    if (isnan(q) || q < 0.0 || q > 1.0 || fj_sp_nbinom_bad(0.0, n, p)) return NAN;
    if (q == 1.0 || p == 1.0 || fj_sp_nbinom_sf(0.0, n, p) <= q) return 0.0;
    double lo = 0.0, hi = 1.0;
    while (fj_sp_nbinom_sf(hi, n, p) > q) {
        if (hi >= FJ_DQ_TOP) return INFINITY;
        lo = hi;
        hi *= 2.0;
    }
    FJ_DQ_BISECT(fj_sp_nbinom_sf(mid, n, p) <= q)
    return hi;
}

/* pdtrik: Q(k + 1, m) rises with k from exp(-m) at k = 0 to 1; its root by the Illinois
 * method (regula falsi halving the stale end's value), bracketed by doubling. */
static inline double fj_sp_pdtrik(double p, double m) {
    if (isnan(p) || isnan(m) || p < 0.0 || p >= 1.0 || m < 0.0) return NAN;
    if (p == 0.0 || m == 0.0) return 0.0;
    if (isinf(m)) return NAN;
    double a = 0.0, fa = exp(-m) - p;
    if (fa >= 0.0) return 0.0;
    double b = m > 1.0 ? m : 1.0, fb = fj_sp_gammaincc(b + 1.0, m) - p;
    while (fb < 0.0) {
        if (b > 1e300) return INFINITY;
        a = b;
        fa = fb;
        b *= 2.0;
        fb = fj_sp_gammaincc(b + 1.0, m) - p;
    }
    double c = b;
    int side = 0;
    for (int it = 0; it < FJ_DQ_ITER; it++) {
        /* every third step a bisection: Q is flat for k far below its root (exp(-m) can
         * underflow), where regula falsi alone creeps */
        c = it % 3 == 2 ? 0.5 * (a + b) : (a * fb - b * fa) / (fb - fa);
        if (!(c > a && c < b)) c = 0.5 * (a + b);
        const double fc = fj_sp_gammaincc(c + 1.0, m) - p;
        if (fc == 0.0) return c;
        if (fc < 0.0) {
            a = c;
            fa = fc;
            if (side == -1) fb *= 0.5;
            side = -1;
        } else {
            b = c;
            fb = fc;
            if (side == 1) fa *= 0.5;
            side = 1;
        }
        if (b - a <= 4e-16 * b) break;
    }
    return c;
}

#endif
