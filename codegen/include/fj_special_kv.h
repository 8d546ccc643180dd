/*
 * fj_special_kv.h -- scipy.special's exprel, sindg, cosdg, tandg, cotdg and the modified
 * Bessel functions of the second kind kv, kve, k0, k0e, k1, k1e, for fusejit's generated C
 * (and CUDA: codegen/cuda.py makes them device functions). Doubles; float32 operands are
 * computed in double and rounded, as SciPy's float loops. Special values follow SciPy 1.17.
 *
 *   fj_sp_exprel       (e^x - 1)/x through expm1; 1 for |x| < 1e-16, inf beyond x = 717:
 *       a few ulp.
 *   fj_sp_sindg, cosdg, tandg, cotdg   the argument in degrees reduced exactly (fmod by 360
 *       or 180, then the nearest multiple of 90 subtracted: Sterbenz's lemma makes each step
 *       exact), then libm's sin/cos/tan of at most 45 degrees in radians: ~2 ulp, and exact
 *       at the multiples of 45 degrees (sindg(180) = -0, tandg(90) = +inf, cotdg(0) = +inf,
 *       tandg(45) = 1, as SciPy). Beyond |x| = 1e14 degrees SciPy's value is 0 (its
 *       "total loss of precision"), and so is this one's.
 *   fj_sp_kve(v, x)    K_v(x) e^x from K_v(x) = int_0^inf exp(-x cosh t) cosh(v t) dt
 *       (x > 0): the trapezoidal rule over the whole line of this even, entire integrand
 *       converges geometrically in the step. The integrand, exp(v t - 2 x sinh^2(t/2))
 *       (1 + e^{-2 v t}) / 2 relative to its peak at t* = asinh(v/x), is summed with step
 *       h = min(1/4, s / 2.5), s = (x^2 + v^2)^(-1/4) its width there, from where it is
 *       e^-40 below the peak (or 0) to where it falls under that again. 20 to ~120
 *       terms (2800 at x ~ 1e-300): ~1e-14 relative (tests/test_special.py compares with
 *       SciPy, whose Amos routines agree to ~1e-16 for small orders), growing as
 *       v * eps beyond v ~ 1e3 where the exponent's terms are large. K_{-v} = K_v. SciPy
 *       (Amos) returns NaN for x beyond ~1.07e9 where it gives up; this gives the value
 *       (kv's is 0 there, kve's ~sqrt(pi / 2x)); for |v| beyond ~1e9 SciPy's is NaN where
 *       this gives the value, 0 or the overflow's inf. NaN for x < 0 or v infinite, inf at
 *       x = 0 (any v), 0 at x = inf (kve: NaN, as SciPy's; k0e and k1e: 0, as SciPy's).
 *   fj_sp_kv           kve's sum times exp(e* - x), e* the peak's exponent: 0 where K_v
 *       underflows (x > ~745 for small v), inf where it overflows (large v, small x).
 *   fj_sp_k0, k0e, k1, k1e   kv and kve of orders 0 and 1.
 */

/* --- degrees ------------------------------------------------------------------------------ */

#define FJ_SP_DEG 0.017453292519943295769  /* pi / 180 */

/* sin (which = 0) or cos (which = 1) of x degrees */
static inline double fj_sp_sincosdg(double x, int which) {
    if (isnan(x)) return x;
    const double a = fabs(x);
    if (a > 1e14) return 0.0;  /* SciPy: total loss of precision */
    const double r = fmod(a, 360.0);  /* exact */
    const int k = (int)floor(r / 90.0 + 0.5);  /* the nearest multiple of 90: 0 .. 4 */
    const double z = (r - 90.0 * k) * FJ_SP_DEG;  /* r - 90 k is exact, in [-45, 45] */
    const double s = sin(z), c = cos(z);
    /* sin(z + 90 k) and cos(z + 90 k) */
    const double sv = k == 0 || k == 4 ? s : k == 1 ? c : k == 2 ? -s : -c;
    if (which == 0) return x < 0.0 ? -sv : sv;  /* sindg(-0.0) is +0.0, as SciPy's */
    return k == 0 || k == 4 ? c : k == 1 ? -s : k == 2 ? -c : s;
}

static inline double fj_sp_sindg(double x) { return fj_sp_sincosdg(x, 0); }

static inline double fj_sp_cosdg(double x) { return fj_sp_sincosdg(x, 1); }

/* tan (cot = 0) or cot (cot = 1) of x degrees */
static inline double fj_sp_tancotdg(double x, int cot) {
    if (isnan(x)) return x;
    double sign = x < 0.0 ? -1.0 : 1.0;
    const double a = fabs(x);
    if (a > 1e14) return 0.0;
    double r = fmod(a, 180.0);  /* exact */
    if (r > 90.0) {  /* tan(180 - r) = -tan(r), 180 - r exact */
        r = 180.0 - r;
        sign = -sign;
    }
    /* r in [0, 90]; the poles and zeros are +inf and +0 whatever the sign, as SciPy's */
    if (r == 0.0) return cot ? INFINITY : 0.0;
    if (r == 90.0) return cot ? 0.0 : INFINITY;
    if (r == 45.0) return sign;
    /* at most 45 degrees in radians: tan(r), or 1 / tan(90 - r) (90 - r exact for r > 45) */
    const double t = r < 45.0 ? tan(r * FJ_SP_DEG) : tan((90.0 - r) * FJ_SP_DEG);
    return (r < 45.0) != (cot != 0) ? sign * t : sign / t;
}

static inline double fj_sp_tandg(double x) { return fj_sp_tancotdg(x, 0); }

static inline double fj_sp_cotdg(double x) { return fj_sp_tancotdg(x, 1); }

/* --- exprel ------------------------------------------------------------------------------- */

static inline double fj_sp_exprel(double x) {
    if (isnan(x)) return x;
    if (fabs(x) < 1e-16) return 1.0;
    if (x > 717.0) return INFINITY;
    return expm1(x) / x;
}

/* --- K_v ---------------------------------------------------------------------------------- */

/* v t - 2 x sinh^2(t/2): the exponent of exp(-x cosh t) e^{v t}, plus x */
static inline double fj_sp_kv_exponent(double v, double x, double t) {
    const double s = sinh(0.5 * t);
    return v * t - 2.0 * x * s * s;
}

/* The trapezoidal sum of K_v(x) e^x = exp(peak) * m, for v >= 0 finite and x > 0 finite:
 * returns the peak's exponent (inf or NaN where K_v overflows: huge v, tiny x) and sets m
 * (in (0, ~3)), or m = -1 where v > ~1e25 and the steps would not resolve t */
static inline double fj_sp_kv_terms(double v, double x, double *m) {
    const double ratio = v / x;
    /* t* = asinh(v/x); ln(2 v/x) where v/x overflows (x subnormal) */
    const double ts = ratio > 1e300 ? log(2.0 * v) - log(x) : asinh(ratio);
    const double peak = fj_sp_kv_exponent(v, x, ts);
    *m = -1.0;
    if (isinf(peak) || isnan(peak)) return peak;
    const double h = fmin(0.25, 1.0 / (2.5 * sqrt(hypot(x, v))));
    if (h < 1e-13 * ts) return peak;
    const double cut = -40.0;  /* terms below e^-40 of the peak are dropped */
    double lo = 0.0;
    if (fj_sp_kv_exponent(v, x, 0.0) - peak < cut) {  /* start near the rising edge */
        double hi = ts;
        for (int i = 0; i < 64; i++) {
            const double mid = 0.5 * (lo + hi);
            if (fj_sp_kv_exponent(v, x, mid) - peak < cut) lo = mid; else hi = mid;
        }
    }
    double sum = 0.0;
    const double j0 = floor(lo / h);
    for (int i = 0; i < (1 << 20); i++) {  /* (at most ~3000 terms: x ~ 1e-308) */
        const double t = (j0 + i) * h;
        const double d = fj_sp_kv_exponent(v, x, t) - peak;
        if (t > ts && d < cut) break;
        const double term = exp(d) * 0.5 * (1.0 + exp(-2.0 * v * t));
        sum += j0 + i == 0.0 ? 0.5 * term : term;
    }
    *m = h * sum;
    return peak;
}

/* K_v(x) e^x (scaled = 1) or K_v(x) (scaled = 0), for v >= 0 finite and x > 0 finite */
static inline double fj_sp_kv_sum(double v, double x, int scaled) {
    double m;
    const double peak = fj_sp_kv_terms(v, x, &m);
    if (isinf(peak) || isnan(peak)) return INFINITY;  /* K_v overflows (huge v, tiny x) */
    const double e = scaled ? peak : peak - x;
    if (m < 0.0) return e > 0.0 ? INFINITY : 0.0;  /* v > ~1e25: |e| is then huge */
    /* (m in (0, ~3): the exponential's factor alone may overflow) */
    if (e > 700.0) return exp(e - 40.0) * m * 2.3538526683701998e17;  /* e^40 */
    if (e < -700.0) return exp(e + log(m));
    return exp(e) * m;
}

/* log(K_v(x) e^x), for v >= 0 finite and x > 0 finite (fj_special_jy.h's I_v where K_v
 * overflows) */
static inline double fj_sp_kve_log(double v, double x) {
    double m;
    const double peak = fj_sp_kv_terms(v, x, &m);
    if (isinf(peak) || isnan(peak)) return INFINITY;
    if (m < 0.0) return peak > 0.0 ? INFINITY : -INFINITY;
    return peak + log(m);
}

/* scaled: 0 kv, 1 kve (NaN at x = inf, as SciPy's Amos), 2 k0e and k1e (0 there) */
static inline double fj_sp_kv_any(double v, double x, int scaled) {
    if (isnan(x) || x < 0.0) return NAN;
    if (x == 0.0) return INFINITY;  /* whatever v, NaN included, as SciPy */
    if (isnan(v) || isinf(v)) return NAN;
    if (isinf(x)) return scaled == 1 ? NAN : 0.0;
    return fj_sp_kv_sum(fabs(v), x, scaled);
}

static inline double fj_sp_kv(double v, double x) { return fj_sp_kv_any(v, x, 0); }

static inline double fj_sp_kve(double v, double x) { return fj_sp_kv_any(v, x, 1); }

static inline double fj_sp_k0(double x) { return fj_sp_kv_any(0.0, x, 0); }

static inline double fj_sp_k0e(double x) { return fj_sp_kv_any(0.0, x, 2); }

static inline double fj_sp_k1(double x) { return fj_sp_kv_any(1.0, x, 0); }

static inline double fj_sp_k1e(double x) { return fj_sp_kv_any(1.0, x, 2); }
