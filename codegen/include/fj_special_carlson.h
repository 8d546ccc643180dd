/*
 * fj_special_carlson.h -- scipy.special's Carlson symmetric elliptic integrals of real
 * arguments: elliprf, elliprd, elliprc, elliprg and elliprj, for fusejit's generated C (and
 * CUDA: device functions). Doubles; float32 operands are computed in double and rounded, as
 * SciPy's float loops. After fj_special_ellip.h (fj_sp_carlson_rf and fj_sp_carlson_rd, the
 * duplication theorem for finite arguments).
 *
 * R_C and R_J are Carlson's duplication algorithms (B. C. Carlson, "Numerical computation of
 * real or complex elliptic integrals", 1995) to their seventh- and fifth-order series; R_C of
 * a negative y and R_J of a negative p are Cauchy principal values through Carlson's
 * transformations to positive ones (DLMF 19.2.20 and 19.20.14). R_G is
 * 2 R_G = z R_F - (x - z)(y - z) R_D / 3 + sqrt(x y / z) with z the middle argument (no
 * cancellation: both products are >= 0).
 *
 * Special values are SciPy 1.17's, in its order of precedence: NaN for a NaN or a negative
 * x, y, z (and for R_C's x < 0, y = 0, and R_J's p = 0); two zeros among x, y, z give inf
 * (R_G: sqrt(z) / 2), as does R_D's z = 0; then an infinite argument gives 0 (R_G: inf;
 * R_C(inf, y <= 0): NaN, R_C(x, -inf): 0 with x's sign, R_C(inf, NaN): 0). SciPy scales
 * arguments near the limits of double where this does not: arguments beyond ~1e100 (R_J's
 * products overflow) or spanning more than ~200 decades may differ (either may be the one
 * that loses digits; tests/test_special_carlson.py shows both).
 */
#ifndef FJ_SPECIAL_CARLSON_H
#define FJ_SPECIAL_CARLSON_H

/* R_C(x, y) for x >= 0 and y > 0, finite. */
static inline double fj_sp_carlson_rc(double x, double y) {
    const double a0 = (x + 2.0 * y) / 3.0, y0 = y;
    const double q = fabs(a0 - x) * 86.03666435637686;  /* (3 eps)^(-1/8), eps = 2^-53 */
    double a = a0, f = 1.0;
    for (int i = 0; i < FJ_ELLIP_ITER && q * f >= fabs(a); i++) {
        const double lam = 2.0 * sqrt(x) * sqrt(y) + y;
        x = 0.25 * (x + lam);
        y = 0.25 * (y + lam);
        a = 0.25 * (a + lam);
        f *= 0.25;
    }
    const double s = (y0 - a0) * f / a;
    const double series = 1.0 + s * s * (3.0 / 10.0 + s * (1.0 / 7.0 + s * (3.0 / 8.0 + s * (
        9.0 / 22.0 + s * (159.0 / 208.0 + s * (9.0 / 8.0))))));
    return series / sqrt(a);
}

/* 1 + e of R_J's duplication step, e = (p - x)(p - y)(p - z) / d^2 = r_x r_y r_z with
 * r_x = (sqrt p - sqrt x) / (sqrt p + sqrt x) = (p0 - x0) f / (sqrt p + sqrt x)^2 (the
 * differences scale by f = 4^-m exactly): where the product is negative, 1 + e =
 * 1 - |r_x||r_y||r_z| is w_x + |r_x| (w_y + |r_y| w_z) with w = 1 - |r| =
 * 2 min(sqrt p, sqrt x) / (sqrt p + sqrt x), a sum of non-negative terms (no cancellation
 * when p is far below x, y and z, where e nears -1). */
static inline double fj_sp_carlson_one_e(const double *d0, const double *sq, double sp,
                                         double f) {
    double r[3], w[3];
    for (int k = 0; k < 3; k++) {
        const double sum = sp + sq[k];
        r[k] = d0[k] * f / (sum * sum);
        w[k] = 2.0 * fmin(sp, sq[k]) / sum;
    }
    const double e = r[0] * r[1] * r[2];
    if (e >= 0.0) return 1.0 + e;
    return w[0] + fabs(r[0]) * (w[1] + fabs(r[1]) * w[2]);
}

/* R_J(x, y, z, p) for x, y, z >= 0 (at most one 0), p > 0, finite. */
static inline double fj_sp_carlson_rj(double x, double y, double z, double p) {
    const double x0 = x, y0 = y, z0 = z, a0 = (x + y + z + 2.0 * p) / 5.0;
    const double d0[3] = {p - x, p - y, p - z};
    double q = fmax(fmax(fabs(a0 - x), fabs(a0 - y)), fmax(fabs(a0 - z), fabs(a0 - p)));
    q *= 4.0636862361578e2;  /* (eps / 4)^(-1/6) */
    double a = a0, f = 1.0, sum = 0.0;
    for (int i = 0; i < FJ_ELLIP_ITER && q * f >= fabs(a); i++) {
        const double sq[3] = {sqrt(x), sqrt(y), sqrt(z)}, sp = sqrt(p);
        const double lam = sq[0] * sq[1] + sq[0] * sq[2] + sq[1] * sq[2];
        const double d = (sp + sq[0]) * (sp + sq[1]) * (sp + sq[2]);
        sum += f * fj_sp_carlson_rc(1.0, fj_sp_carlson_one_e(d0, sq, sp, f)) / d;
        x = 0.25 * (x + lam);
        y = 0.25 * (y + lam);
        z = 0.25 * (z + lam);
        p = 0.25 * (p + lam);
        a = 0.25 * (a + lam);
        f *= 0.25;
    }
    const double X = (a0 - x0) * f / a, Y = (a0 - y0) * f / a, Z = (a0 - z0) * f / a;
    const double P = -0.5 * (X + Y + Z), xyz = X * Y * Z, p2 = P * P;
    const double e2 = X * Y + X * Z + Y * Z - 3.0 * p2;
    const double e3 = xyz + 2.0 * e2 * P + 4.0 * p2 * P;
    const double e4 = (2.0 * xyz + e2 * P + 3.0 * p2 * P) * P, e5 = xyz * p2;
    const double series = 1.0 - 3.0 * e2 / 14.0 + e3 / 6.0 + 9.0 * e2 * e2 / 88.0 -
                          3.0 * e4 / 22.0 - 9.0 * e2 * e3 / 52.0 + 3.0 * e5 / 26.0;
    return f * series / (a * sqrt(a)) + 6.0 * sum;
}

static inline int fj_sp_carlson_bad(double x, double y, double z) {
    return isnan(x) || isnan(y) || isnan(z) || x < 0.0 || y < 0.0 || z < 0.0;
}

static inline int fj_sp_carlson_zeros(double x, double y, double z) {
    return (x == 0.0) + (y == 0.0) + (z == 0.0);
}

static inline double fj_sp_elliprf(double x, double y, double z) {
    if (fj_sp_carlson_bad(x, y, z)) return NAN;
    if (isinf(x) || isinf(y) || isinf(z)) return 0.0;
    if (fj_sp_carlson_zeros(x, y, z) >= 2) return INFINITY;
    return fj_sp_carlson_rf(x, y, z);
}

static inline double fj_sp_elliprd(double x, double y, double z) {
    if (fj_sp_carlson_bad(x, y, z)) return NAN;
    if (z == 0.0) return INFINITY;
    if (isinf(x) || isinf(y) || isinf(z)) return 0.0;
    if (x == 0.0 && y == 0.0) return INFINITY;
    return fj_sp_carlson_rd(x, y, z);
}

static inline double fj_sp_elliprc(double x, double y) {
    if (isnan(x) || x == -INFINITY) return NAN;
    if (isinf(x)) return isnan(y) || y > 0.0 ? 0.0 : NAN;
    if (y == -INFINITY) return copysign(0.0, x);
    if (isnan(y) || x < 0.0 || y == 0.0) return NAN;
    if (y < 0.0) {  /* the principal value: sqrt(x / (x - y)) R_C(x - y, -y) */
        if (x == 0.0) return x;
        return sqrt(x / (x - y)) * fj_sp_carlson_rc(x - y, -y);
    }
    if (isinf(y)) return 0.0;
    return fj_sp_carlson_rc(x, y);
}

static inline double fj_sp_elliprg(double x, double y, double z) {
    if (fj_sp_carlson_bad(x, y, z)) return NAN;
    if (isinf(x) || isinf(y) || isinf(z)) return INFINITY;
    /* lo <= mid <= hi */
    const double lo = fmin(fmin(x, y), z), hi = fmax(fmax(x, y), z);
    const double mid = fmax(fmin(x, y), fmin(fmax(x, y), z));
    if (hi == 0.0) return 0.5 * sqrt(z);  /* (z's sign of zero: SciPy's) */
    if (mid == 0.0) return 0.5 * sqrt(hi);
    const double prod = (lo - mid) * (hi - mid);  /* (0: R_D, maybe inf, is not needed) */
    const double rd = prod == 0.0 ? 0.0 : prod * fj_sp_carlson_rd(lo, hi, mid) / 3.0;
    return 0.5 * (mid * fj_sp_carlson_rf(lo, hi, mid) - rd + sqrt(lo * hi / mid));
}

static inline double fj_sp_elliprj(double x, double y, double z, double p) {
    if (fj_sp_carlson_bad(x, y, z) || p == 0.0) return NAN;
    if (fj_sp_carlson_zeros(x, y, z) >= 2) return INFINITY;
    if (isinf(x) || isinf(y) || isinf(z) || isinf(p)) return 0.0;
    if (isnan(p)) return NAN;
    if (p > 0.0) return fj_sp_carlson_rj(x, y, z, p);
    /* the principal value (DLMF 19.20.14), with x <= y <= z and q = -p:
     * (y + q) R_J(x, y, z, -q) = (s - y) R_J(x, y, z, s) - 3 R_F(x, y, z)
     *                            + 3 sqrt(x y z / (x z + s q)) R_C(x z + s q, s q),
     * s = y + (z - y)(y - x) / (y + q) >= y (s = y when x = y: that term is 0) */
    const double lo = fmin(fmin(x, y), z), hi = fmax(fmax(x, y), z);
    const double mid = fmax(fmin(x, y), fmin(fmax(x, y), z));
    const double q = -p, s = mid + (hi - mid) * (mid - lo) / (mid + q);
    const double xz = lo * hi + s * q;
    const double first = s == mid ? 0.0 : (s - mid) * fj_sp_carlson_rj(lo, mid, hi, s);
    const double r = first - 3.0 * fj_sp_carlson_rf(lo, mid, hi) +
                     3.0 * sqrt(lo * mid * hi / xz) * fj_sp_carlson_rc(xz, s * q);
    return r / (mid + q);
}

#endif
