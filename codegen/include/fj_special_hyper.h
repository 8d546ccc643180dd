/*
 * fj_special_hyper.h -- scipy.stats.hypergeom's private ufuncs _hypergeom_pmf, _hypergeom_cdf
 * and _hypergeom_sf (Boost's hypergeometric distribution, as SciPy 1.17 calls it: k drawn
 * good items, n good among M, N drawn), for fusejit's generated C (and CUDA: device
 * functions). After fj_special_ibeta.h (fj_sp_binom_pmf). Doubles.
 *
 * pmf C(n, k) C(M - n, N - k) / C(M, N) as three binomial pmfs at p = N / M (their powers of p
 * and 1 - p cancel; at that p each is near its mode, so none underflows where the result does
 * not), each Boost's derivative of the incomplete beta function: ~1e-15 relative at any size.
 * cdf and sf sum pmfs from k towards the far end of the support by the ratio of neighbours,
 * on the side of the mode k lies (the tail, whose terms fall geometrically: stopped once below
 * 1e-17 of the sum), and take 1 minus the other side's sum past the mode.
 * NaN for a NaN, negative or non-integral argument, n or N above M, and k outside the support
 * [max(0, N - (M - n)), min(n, N)] (pmf) -- SciPy's methods call these only inside it; the
 * cdf of k below the support is 0 and above it 1 (sf: 1 and 0). A non-integral k is NaN in
 * cdf and sf too, as Boost's domain error makes SciPy's (hypergeom.cdf(2.5, ...) is NaN), and
 * in the log cdf and log sf here, where SciPy's Python loops sum over a shifted range.
 */
#ifndef FJ_SPECIAL_HYPER_H
#define FJ_SPECIAL_HYPER_H

#define FJ_HYPER_ITER 10000000.0

static inline int fj_sp_hyper_bad(double n, double N, double M) {
    return isnan(n) || isnan(N) || isnan(M) || n < 0.0 || N < 0.0 || M < 0.0 || isinf(M) ||
           n > M || N > M || n != floor(n) || N != floor(N) || M != floor(M);
}

static inline double fj_sp_hyper_pmf_at(double k, double n, double N, double M) {
    if (N == 0.0 || N == M || n == 0.0 || n == M) return 1.0;  /* (a single point) */
    const double p = N / M;
    return fj_sp_binom_pmf(k, n, p) * fj_sp_binom_pmf(N - k, M - n, p) /
           fj_sp_binom_pmf(N, M, p);
}

static inline double fj_sp_hypergeom_pmf(double k, double n, double N, double M) {
    if (isnan(k) || fj_sp_hyper_bad(n, N, M) || k != floor(k)) return NAN;
    const double lo = fmax(0.0, N - (M - n)), hi = fmin(n, N);
    if (k < lo || k > hi) return NAN;
    return fj_sp_hyper_pmf_at(k, n, N, M);
}

/* The sum of the pmf over [lo, k] (down = 1, from k downwards) or [k, hi] (from k up) over
 * pmf(k): 1 plus the products of the ratios of neighbours, until they fall below 1e-17 of it */
static inline double fj_sp_hyper_relsum(double k, double n, double N, double M, int down) {
    const double lo = fmax(0.0, N - (M - n)), hi = fmin(n, N);
    double term = 1.0, sum = 1.0;
    for (double j = k, steps = 0.0; steps < FJ_HYPER_ITER; steps += 1.0) {
        if (down) {
            if (j <= lo) break;
            term *= j * (M - n - N + j) / ((n - j + 1.0) * (N - j + 1.0));
            j -= 1.0;
        } else {
            if (j >= hi) break;
            term *= (n - j) * (N - j) / ((j + 1.0) * (M - n - N + j + 1.0));
            j += 1.0;
        }
        sum += term;
        if (term < 1e-17 * sum) break;
    }
    return sum;
}

/* Stirling's remainder log(x!) - log(sqrt(2 pi x) (x/e)^x) for an integer x >= 0: its
 * asymptotic series from 15 on, lgamma's (values below 0.1: no cancellation) below */
static inline double fj_sp_hyper_stirlerr(double x) {
    if (x < 15.0) {
        if (x == 0.0) return 0.0;
        return lgamma(x + 1.0) - (x + 0.5) * log(x) + x - 0.91893853320467274178;
    }
    const double r = 1.0 / (x * x);
    return (1.0 / 12.0 - r * (1.0 / 360.0 - r * (1.0 / 1260.0 - r * (1.0 / 1680.0 -
            r / 1188.0)))) / x;
}

/* x log(x / m) + m - x >= 0 without cancellation (C. Loader, "Fast and accurate computation
 * of binomial probabilities", 2000): for x near m the series 2x sum v^(2j+1) / (2j+1) +
 * (x - m) v with v = (x - m) / (x + m) */
static inline double fj_sp_hyper_bd0(double x, double m) {
    if (fabs(x - m) < 0.1 * (x + m)) {
        const double v = (x - m) / (x + m), v2 = v * v;
        double s = (x - m) * v, ej = 2.0 * x * v;
        for (int j = 1; j < 1000; j++) {
            ej *= v2;
            const double s1 = s + ej / (2 * j + 1);
            if (s1 == s) break;
            s = s1;
        }
        return s;
    }
    return x * log(x / m) + m - x;
}

/* log C(n, x) p^x (1 - p)^(n - x), integer 0 <= x <= n, 0 < p < 1: Stirling's remainders and
 * bd0 (every term keeps its digits however small the probability) */
static inline double fj_sp_hyper_logbinom(double x, double n, double p) {
    const double q = 1.0 - p;
    if (x == 0.0) return n * log1p(-p);
    if (x == n) return n * log(p);
    const double lc = fj_sp_hyper_stirlerr(n) - fj_sp_hyper_stirlerr(x) -
                      fj_sp_hyper_stirlerr(n - x) - fj_sp_hyper_bd0(x, n * p) -
                      fj_sp_hyper_bd0(n - x, n * q);
    return lc + 0.5 * log(n / (6.283185307179586 * x * (n - x)));
}

/* log pmf(k) (k in the support): the log of the pmf, or where that underflows the sum of the
 * three binomial pmfs' logs */
static inline double fj_sp_hyper_logpmf(double k, double n, double N, double M) {
    const double pmf = fj_sp_hyper_pmf_at(k, n, N, M);
    if (pmf > 1e-290) return log(pmf);
    const double p = N / M;
    return fj_sp_hyper_logbinom(k, n, p) + fj_sp_hyper_logbinom(N - k, M - n, p) -
           fj_sp_hyper_logbinom(N, M, p);
}

/* cdf (lower = 1) or sf of the integer k, or their logs: the small side (the tail beyond the
 * mode that k lies on) is its sum of pmfs from k (or k + 1) outwards, pmf(start) times the
 * sum relative to it (in logs: log pmf(start) plus its log, which no underflow reaches); the
 * other side is 1 minus it (log1p of minus it). */
static inline double fj_sp_hyper_part(double k, double n, double N, double M, int lower,
                                      int logs) {
    if (isnan(k) || fj_sp_hyper_bad(n, N, M) || (k != floor(k) && !isinf(k))) return NAN;
    const double lo = fmax(0.0, N - (M - n)), hi = fmin(n, N);
    const double none = logs ? -INFINITY : 0.0, all = logs ? 0.0 : 1.0;
    if (k < lo) return lower ? none : all;
    if (k >= hi) return lower ? all : none;
    const int down = k < floor((N + 1.0) * (n + 1.0) / (M + 2.0));  /* (k below the mode) */
    const double start = down ? k : k + 1.0;
    const double rel = fj_sp_hyper_relsum(start, n, N, M, down);
    if (down == lower) {
        return logs ? fj_sp_hyper_logpmf(start, n, N, M) + log(rel)
                    : fj_sp_hyper_pmf_at(start, n, N, M) * rel;
    }
    const double small = fj_sp_hyper_pmf_at(start, n, N, M) * rel;
    return logs ? log1p(-small) : 1.0 - small;
}

static inline double fj_sp_hypergeom_logcdf(double k, double n, double N, double M) {
    return fj_sp_hyper_part(k, n, N, M, 1, 1);
}

static inline double fj_sp_hypergeom_logsf(double k, double n, double N, double M) {
    return fj_sp_hyper_part(k, n, N, M, 0, 1);
}

static inline double fj_sp_hypergeom_cdf(double k, double n, double N, double M) {
    return fj_sp_hyper_part(k, n, N, M, 1, 0);
}

static inline double fj_sp_hypergeom_sf(double k, double n, double N, double M) {
    return fj_sp_hyper_part(k, n, N, M, 0, 0);
}

#endif
