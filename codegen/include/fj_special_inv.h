/*
 * fj_special_inv.h -- the inverses of the incomplete gamma and beta functions and the
 * distribution functions built on them, for fusejit's generated C (and CUDA: the renderer
 * makes these device functions): scipy.special gammaincinv, gammainccinv, chdtri,
 * betaincinv, betainccinv, stdtrit, fdtri (and fdtr, fdtrc), and scipy.stats' private
 * _beta_ppf, _cauchy_ppf and _cauchy_isf, through which scipy.stats' t, chi2, gamma, erlang,
 * beta, f and cauchy ppf/isf run. Doubles; float32 operands are computed in double and the
 * result rounded, as SciPy's float loops.
 *
 * Each inverse solves for the point whose tail probability is the given one, on the smaller
 * tail (P = p where p <= 1/2, Q = 1 - p beyond: 1 - p is exact there), so tail quantiles keep
 * their digits: Halley's method on the logarithm of that tail (in ln x below the mean, where
 * it is nearly a power of x; in x beyond, where it is nearly an exponential),
 * kept inside a bracket that every evaluation narrows (a step leaving it bisects, in ln x
 * when the bracket spans orders of magnitude). The beta inverses iterate on whichever of x and
 * 1 - x is the smaller (the other is formed from it), so both keep their digits; stdtrit and
 * fdtri form their results from both. The iteration stops after a Halley step below 2e-6
 * relative (its error is of the order of the step's cube) or one of 2 ulp; the result is the root to within a few ulp of the conditioning of the
 * forward function (measured against mpmath and SciPy by tests/test_special_inv.py).
 *
 * Special values are SciPy 1.17's: NaN for a NaN, a probability outside [0, 1], a shape
 * parameter <= 0 or infinite; the ends of the range at probabilities 0 and 1. stdtrit(df, 0)
 * is +inf as SciPy's; where SciPy's stdtrit overflows to +inf for a tiny probability
 * (stdtrit(3, 1e-300)), this gives the quantile (-1.4e100).
 */
#ifndef FJ_SPECIAL_INV_H
#define FJ_SPECIAL_INV_H

#define FJ_INV_ITER 200
#define FJ_INV_TOL 4.440892098500626e-16 /* 2 ulp */
#define FJ_INV_TINY 2.2250738585072014e-308 /* the smallest normal double */
#define FJ_INV_DONE 2e-6 /* a relative Halley step below this is the last */

/* The next point of a bracketed iteration: `next` when it lies strictly inside (lo, hi), else
 * the bracket's middle: geometric where hi / lo > 4 (from the smallest normal double where
 * lo = 0), doubling lo past a bracket with no upper end. */
static inline double fj_sp_inv_keep(double next, double lo, double hi) {
    if (next > lo && next < hi) return next;
    if (isinf(hi)) return lo > 0.0 ? 2.0 * lo : 1.0;
    const double l = fmax(lo, FJ_INV_TINY);
    if (hi > 4.0 * l) return sqrt(l) * sqrt(hi);
    return 0.5 * (lo + hi);
}

/* Halley's step for h(u) = 0 from h and its first two derivatives (Newton's where the
 * correction is large: far from the root). */
static inline double fj_sp_halley(double h, double h1, double h2) {
    const double n = h / h1, c = 1.0 - 0.5 * n * h2 / h1;
    return c > 0.5 && c < 2.0 ? n / c : n;
}

/* x with P(a, x) = t (lower = 1) or Q(a, x) = t (lower = 0), 0 < t <= 1/2, a > 0 finite. */
static inline double fj_sp_igam_solve(double a, double t, int lower) {
    const double lt = log(t), s = lower ? 1.0 : -1.0;
    /* first guesses: the Wilson-Hilferty cube of the normal quantile; on the lower tail
     * P ~ x^a / Gamma(a + 1) for small x (where that is below the smallest normal double, so
     * is the root: returned as it is), on the upper Q ~ e^-x; the second is tried when the
     * first's tail is off by more than a factor 1.5 */
    const double z = lower ? fj_sp_ndtri(t) : -fj_sp_ndtri(t);
    const double w = 1.0 - 1.0 / (9.0 * a) + z / (3.0 * sqrt(a));
    const double xs = lower ? exp((lt + fj_sp_lgam1p(a)) / a) : -lt;
    if (lower && xs < FJ_INV_TINY) return xs;
    double guess[2] = {w > 0.0 ? a * w * w * w : 0.0, xs}, x = 1.0, F = NAN, best = INFINITY;
    for (int k = 0; k < 2 && best > 0.4; k++) {
        const double g = guess[k];
        if (!(g > 0.0) || isinf(g)) continue;
        const double Fg = lower ? fj_sp_gammainc(a, g) : fj_sp_gammaincc(a, g);
        const double e = Fg > 0.0 ? fabs(log(Fg) - lt) : INFINITY;
        if (e < best) { best = e; x = g; F = Fg; }
    }
    double lo = 0.0, hi = INFINITY;
    for (int i = 0; i < FJ_INV_ITER; i++) {
        if (isnan(F)) F = lower ? fj_sp_gammainc(a, x) : fj_sp_gammaincc(a, x);
        if (!(F > 0.0)) {  /* (underflow: past the root on the lower tail, short of it beyond) */
            if (lower) lo = x; else hi = x;
            x = fj_sp_inv_keep(NAN, lo, hi);
            F = NAN;
            continue;
        }
        const double h = log(F) - lt;
        if (h == 0.0) break;
        if ((h < 0.0) == (lower != 0)) lo = x; else hi = x;
        const double d = fj_sp_igam_fac(a, x, 1) / (x * F);  /* |d ln F / dx| */
        /* Halley's method in ln x below the mean, where F is nearly a power of x, in x
         * beyond, where it is nearly an exponential */
        double next, step;
        if (x < a + 1.0) {
            const double h1 = s * x * d;
            step = fj_sp_halley(h, h1, h1 * (a - x - s * x * d));
            next = x * exp(-step);
        } else {
            const double h1 = s * d;
            step = fj_sp_halley(h, h1, h1 * ((a - 1.0) / x - 1.0 - s * d)) / x;
            next = x - step * x;
        }
        const double kept = fj_sp_inv_keep(next, lo, hi);
        F = NAN;
        /* (a step this small leaves an error of its cube: done) */
        if (kept == next && fabs(step) <= FJ_INV_DONE) { x = next; break; }
        if (fabs(kept - x) <= FJ_INV_TOL * x) { x = kept; break; }
        x = kept;
        if (hi - lo <= FJ_INV_TOL * lo) break;
    }
    return x;
}

static inline double fj_sp_gammaincinv(double a, double p) {
    if (isnan(a) || isnan(p) || !(a > 0.0) || isinf(a) || p < 0.0 || p > 1.0) {
        if (a == 0.0 && (p == 0.0 || p == 1.0)) return p == 0.0 ? 0.0 : INFINITY;
        return NAN;
    }
    if (p == 0.0) return 0.0;
    if (p == 1.0) return INFINITY;
    return p <= 0.5 ? fj_sp_igam_solve(a, p, 1) : fj_sp_igam_solve(a, 1.0 - p, 0);
}

static inline double fj_sp_gammainccinv(double a, double q) {
    if (isnan(a) || isnan(q) || !(a > 0.0) || isinf(a) || q < 0.0 || q > 1.0) {
        if (a == 0.0 && (q == 0.0 || q == 1.0)) return q == 0.0 ? INFINITY : 0.0;
        return NAN;
    }
    if (q == 0.0) return INFINITY;
    if (q == 1.0) return 0.0;
    return q <= 0.5 ? fj_sp_igam_solve(a, q, 0) : fj_sp_igam_solve(a, 1.0 - q, 1);
}

/* chdtri(v, q): the chi-square quantile of upper tail q, 2 gammainccinv(v / 2, q). */
static inline double fj_sp_chdtri(double v, double q) {
    return 2.0 * fj_sp_gammainccinv(0.5 * v, q);
}

/* ---- the incomplete beta function's inverse ------------------------------------------ */

/* I_x(a, b) (upper = 0) or 1 - I_x(a, b) (upper = 1) at x, with y = 1 - x. */
static inline double fj_sp_ibeta_tail(double a, double b, double x, double y, int upper) {
    return upper ? fj_sp_ibeta_core(b, a, y, x) : fj_sp_ibeta_core(a, b, x, y);
}

/* x (and *y = 1 - x, each to its own digits) with I_x(a, b) = t (upper = 0) or
 * 1 - I_x(a, b) = t (upper = 1); 0 < t <= 1/2, a, b > 0 finite, lb = ln B(a, b). */
static inline double fj_sp_ibeta_solve(double a, double b, double t, int upper, double lb,
                                       double hint, double *yout) {
    const double lt = log(t);
    const double lp = upper ? log1p(-t) : lt, lq = upper ? lt : log1p(-t);
    /* first guesses: the caller's `hint` (NaN: none), the normal approximation about the
     * mean, then each tail's leading power (I ~ x^a / (a B), 1 - I ~ y^b / (b B)), while the
     * best so far is off by more than a factor 1.5 */
    const double z = upper ? -fj_sp_ndtri(t) : fj_sp_ndtri(t);
    const double s = a + b, mean = a / s, sd = sqrt(a * b / (s * s * (s + 1.0)));
    double guess[4] = {exp((lp + log(a) + lb) / a), 1.0 - exp((lq + log(b) + lb) / b),
                       mean + z * sd, hint};
    double x = 0.5, F = NAN, best = INFINITY;
    for (int k = 3; k >= 0 && best > 0.4; k--) {  /* (the caller's, then the normal one) */
        const double g = guess[k];
        if (!(g > 0.0 && g < 1.0)) continue;
        const double Fg = fj_sp_ibeta_tail(a, b, g, 1.0 - g, upper);
        const double e = Fg > 0.0 ? fabs(log(Fg) - lt) : INFINITY;
        if (e < best) { best = e; x = g; F = Fg; }
    }
    /* Halley's method in ln v, v the smaller of x and 1 - x: on the complement (its tail, a
     * and b swapped) while x > 1/2 */
    int swap = 0, up = upper;
    double A = a, B = b, v = x, lo = 0.0, hi = 1.0;
    for (int i = 0; i < FJ_INV_ITER; i++) {
        if (v > 0.5) {  /* (the bracket turns over with it) */
            const double l = lo;
            swap = !swap; up = !up;
            A = swap ? b : a; B = swap ? a : b;
            v = 1.0 - v; lo = 1.0 - hi; hi = 1.0 - l;
        }
        if (isnan(F)) F = fj_sp_ibeta_tail(A, B, v, 1.0 - v, up);
        if (!(F > 0.0)) {  /* (underflow: below the root on a lower tail, above on an upper) */
            if (up) hi = v; else lo = v;
            v = fj_sp_inv_keep(NAN, lo, hi);
            F = NAN;
            continue;
        }
        const double h = log(F) - lt;
        if (h == 0.0) break;
        if ((h < 0.0) != (up != 0)) lo = v; else hi = v;
        const double s = up ? -1.0 : 1.0;
        /* |d ln F / d ln v|: the density from ln B(a, b) (the step's size only: its error,
         * which grows with a and b, slows the convergence, not the root's accuracy; the
         * careful density beyond a + b = 1e4) */
        const double pdf = a + b < 1e4 ? exp((A - 1.0) * log(v) + (B - 1.0) * log1p(-v) - lb)
                                       : fj_sp_ibeta_derivative(A, B, v, 1.0 - v);
        const double D = v * pdf / F;
        const double h1 = s * D;
        const double step = fj_sp_halley(h, h1, h1 * (A - (B - 1.0) * v / (1.0 - v) - s * D));
        const double next = v * exp(-step);
        const double kept = fj_sp_inv_keep(next, lo, hi);
        F = NAN;
        if (kept == next && fabs(step) <= FJ_INV_DONE) { v = next; break; }
        if (fabs(kept - v) <= FJ_INV_TOL * v) { v = kept; break; }
        v = kept;
        if (hi - lo <= FJ_INV_TOL * lo) break;
    }
    if (swap) { *yout = v; return 1.0 - v; }
    *yout = 1.0 - v;
    return v;
}

static inline int fj_sp_ibeta_inv_bad(double a, double b, double y) {
    return isnan(a) || isnan(b) || isnan(y) || !(a > 0.0) || !(b > 0.0) || isinf(a) ||
           isinf(b) || y < 0.0 || y > 1.0;
}

static inline double fj_sp_betaincinv(double a, double b, double y) {
    if (fj_sp_ibeta_inv_bad(a, b, y)) return NAN;
    if (y == 0.0 || y == 1.0) return y;
    double c;
    const double lb = fj_sp_betaln(a, b);
    return y <= 0.5 ? fj_sp_ibeta_solve(a, b, y, 0, lb, NAN, &c)
                    : fj_sp_ibeta_solve(a, b, 1.0 - y, 1, lb, NAN, &c);
}

static inline double fj_sp_betainccinv(double a, double b, double y) {
    if (fj_sp_ibeta_inv_bad(a, b, y)) return NAN;
    if (y == 0.0 || y == 1.0) return 1.0 - y;
    double c;
    const double lb = fj_sp_betaln(a, b);
    return y <= 0.5 ? fj_sp_ibeta_solve(a, b, y, 1, lb, NAN, &c)
                    : fj_sp_ibeta_solve(a, b, 1.0 - y, 0, lb, NAN, &c);
}

/* scipy.stats.beta's ppf (SciPy's private _beta_ppf(q, a, b)): betaincinv(a, b, q). */
static inline double fj_sp_beta_ppf(double q, double a, double b) {
    return fj_sp_betaincinv(a, b, q);
}

/* stdtrit(df, p): t with stdtr(df, t) = p. Below p = 1/2, t = -sqrt(df y / x) where
 * x = I^-1(df/2, 1/2; 2p) and y = 1 - x (both to their digits: y is tiny for a large df);
 * above, +sqrt of the same at 2 (1 - p); where x < e^-80, from ln x by the tail's leading
 * power. The normal quantile for df = inf; 0 at p = 1/2 and,
 * as SciPy's, +inf at p = 0 and p = 1. */
static inline double fj_sp_stdtrit(double df, double p) {
    if (isnan(df) || isnan(p) || !(df > 0.0) || p < 0.0 || p > 1.0) return NAN;
    if (p == 0.0 || p == 1.0) return INFINITY;
    if (p == 0.5) return 0.0;
    if (isinf(df)) return fj_sp_ndtri(p);
    const double tail = p < 0.5 ? 2.0 * p : 2.0 * (1.0 - p);  /* (exact) */
    const double a = 0.5 * df;
    /* far in the tail x ~ df / t^2 would lose its digits as a subnormal: there
     * I_x(a, 1/2) = x^a / (a B(a, 1/2)) (1 + O(x)) gives ln x, and t from it */
    const double lb = fj_sp_betaln(a, 0.5), lx = (log(tail) + log(a) + lb) / a;
    if (lx < -80.0) {
        const double t = exp(0.5 * (log(df) - lx));
        return p < 0.5 ? -t : t;
    }
    /* a first guess of t: the Cornish-Fisher expansion in 1/df about the normal quantile
     * (Abramowitz & Stegun 26.7.5), as the x = df / (df + t^2) it stands for */
    const double z = fj_sp_ndtri(p < 0.5 ? p : 1.0 - p), z2 = z * z, r = 1.0 / df;
    const double g1 = (z2 + 1.0) * z / 4.0;
    const double g2 = ((5.0 * z2 + 16.0) * z2 + 3.0) * z / 96.0;
    const double g3 = (((3.0 * z2 + 19.0) * z2 + 17.0) * z2 - 15.0) * z / 384.0;
    const double g4 = ((((79.0 * z2 + 776.0) * z2 + 1482.0) * z2 - 1920.0) * z2 - 945.0) * z
                      / 92160.0;
    const double tg = z + r * (g1 + r * (g2 + r * (g3 + r * g4)));
    const double hint = df / (df + tg * tg);
    double y;
    const double x = tail <= 0.5 ? fj_sp_ibeta_solve(a, 0.5, tail, 0, lb, hint, &y)
                                 : fj_sp_ibeta_solve(a, 0.5, 1.0 - tail, 1, lb, hint, &y);
    const double t = sqrt(df) * (sqrt(y) / sqrt(x));
    return p < 0.5 ? -t : t;
}

/* fdtr / fdtrc (the F distribution's cdf and sf at x): I_w(dfn/2, dfd/2) and its complement,
 * w = dfn x / (dfd + dfn x), 1 - w = dfd / (dfd + dfn x) formed apart. */
static inline int fj_sp_fdtr_bad(double a, double b, double x) {
    return isnan(a) || isnan(b) || isnan(x) || !(a > 0.0) || !(b > 0.0) || isinf(a) ||
           isinf(b) || x < 0.0;
}

static inline double fj_sp_fdtr(double dfn, double dfd, double x) {
    if (fj_sp_fdtr_bad(dfn, dfd, x)) return NAN;
    if (x == 0.0) return 0.0;
    if (isinf(x)) return 1.0;
    const double s = dfd + dfn * x;
    return fj_sp_unit(fj_sp_ibeta_core(0.5 * dfn, 0.5 * dfd, dfn * x / s, dfd / s));
}

static inline double fj_sp_fdtrc(double dfn, double dfd, double x) {
    if (fj_sp_fdtr_bad(dfn, dfd, x)) return NAN;
    if (x == 0.0) return 1.0;
    if (isinf(x)) return 0.0;
    const double s = dfd + dfn * x;
    return fj_sp_unit(fj_sp_ibeta_core(0.5 * dfd, 0.5 * dfn, dfd / s, dfn * x / s));
}

/* fdtri(dfn, dfd, p): x with fdtr(dfn, dfd, x) = p: (dfd / dfn) w / (1 - w) where
 * w = I^-1(dfn/2, dfd/2; p). */
static inline double fj_sp_fdtri(double dfn, double dfd, double p) {
    if (fj_sp_fdtr_bad(dfn, dfd, 0.0) || isnan(p) || p < 0.0 || p > 1.0) return NAN;
    if (p == 0.0) return 0.0;
    if (p == 1.0) return INFINITY;
    double y;
    const double a = 0.5 * dfn, b = 0.5 * dfd, lb = fj_sp_betaln(a, b);
    const double w = p <= 0.5 ? fj_sp_ibeta_solve(a, b, p, 0, lb, NAN, &y)
                              : fj_sp_ibeta_solve(a, b, 1.0 - p, 1, lb, NAN, &y);
    const double f = (dfd / dfn) * (w / y);
    return isinf(f) ? exp(log(dfd) - log(dfn) + log(w) - log(y)) : f;  /* (w / y overflowed) */
}

/* scipy.stats.cauchy's private ppf and isf (Boost's quantile): loc -+ scale / tan(pi P), P
 * the probability folded into (-1/2, 1/2] (so a tail keeps its digits), loc at P = 1/2;
 * NaN outside [0, 1] or for a scale <= 0; -+inf at the ends. */
static inline double fj_sp_cauchy_q(double q, double loc, double scale, double sign) {
    if (isnan(q) || isnan(loc) || isnan(scale) || q < 0.0 || q > 1.0 || !(scale > 0.0) ||
        isinf(scale) || isinf(loc))
        return NAN;
    if (q == 0.0 || q == 1.0) return (q == 0.0 ? -sign : sign) * INFINITY;
    double P = q > 0.5 ? q - 1.0 : q;
    if (P == 0.5) return loc;
    return loc - sign * scale / tan(3.14159265358979323846 * P);
}

static inline double fj_sp_cauchy_ppf(double q, double loc, double scale) {
    return fj_sp_cauchy_q(q, loc, scale, 1.0);
}

static inline double fj_sp_cauchy_isf(double q, double loc, double scale) {
    return fj_sp_cauchy_q(q, loc, scale, -1.0);
}

/* scipy.special.ndtri_exp(y) = ndtri(exp(y)) for y <= 0: SciPy's split (-ndtri(-expm1(y))
 * above log1p(-e^-2), ndtri(exp(y)) down to -2); below -2 Newton's method on
 * log_ndtr(x) = y from x0 = -sqrt(s - log(2 pi s)), s = -2y, its slope phi(x) / Phi(x) =
 * sqrt(2/pi) / erfcx(-x / sqrt 2) (no cancellation however far out); -sqrt(-2y) itself below
 * -1e20 (the logarithmic terms are below its last digit). NaN above 0, inf at 0, -inf at
 * -inf. */
static inline double fj_sp_ndtri_exp(double y) {
    if (isnan(y) || y > 0.0) return NAN;
    if (y == 0.0) return INFINITY;
    if (y == -INFINITY) return -INFINITY;
    if (y > -0.14541345786885906) return -fj_sp_ndtri(-expm1(y));
    if (y >= -2.0) return fj_sp_ndtri(exp(y));
    if (y < -1e20) return -1.4142135623730951 * sqrt(-y);
    const double s = -2.0 * y;
    double x = -sqrt(s - log(6.283185307179586 * s));
    for (int i = 0; i < 8; i++) {
        const double f = fj_sp_log_ndtr(x) - y;
        const double slope = 0.79788456080286536 / fj_sp_erfcx(-x * 0.70710678118654752440);
        const double step = f / slope;
        x -= step;
        if (fabs(step) <= 1e-16 * fabs(x)) break;
    }
    return x;
}

#endif
