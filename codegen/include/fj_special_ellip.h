/*
 * fj_special_ellip.h -- scipy.special.ellipkinc and ellipeinc, the incomplete elliptic
 * integrals of the first and second kind F(phi | m) and E(phi | m) (Carlson's R_F and R_D,
 * which fj_special_carlson.h makes public with R_C, R_G and R_J), for fusejit's generated C
 * (and CUDA: the renderer makes these device functions). Doubles; float32 operands are
 * computed in double and the result rounded, as SciPy's float loops.
 *
 * On |phi| <= pi/2 both are Carlson's symmetric integrals (B. C. Carlson, "Numerical
 * computation of real or complex elliptic integrals", 1995): with s = sin phi, c = cos phi,
 * F = s R_F(c^2, 1 - m s^2, 1) and E = F - (m/3) s^3 R_D(c^2, 1 - m s^2, 1), R_F and R_D by
 * the duplication theorem until the arguments agree to ~1e-16, then their fifth-order Taylor
 * series. A larger phi is reduced as SciPy's Cephes reduces it: n = floor(phi / (pi/2)), made
 * even, phi - n pi/2 taken in double, and n times the complete integral (K = R_F(0, 1 - m, 1),
 * E(m) = K - (m/3) R_D(0, 1 - m, 1)) added.
 *
 * Special values are SciPy 1.17's: NaN for m > 1 (every phi) or a NaN; F = 0 and E = inf at
 * m = -inf (phi = 0 too); phi = +-inf gives +-inf; phi itself at m = 0, and at phi = -0 SciPy's
 * sign of zero; at m = 1, F = asinh(tan phi) inside |phi| < pi/2 and +inf beyond (either sign),
 * and E(phi | 1) = n + sin(phi - n pi/2).
 *
 * Beyond |phi| ~ 1e16 the reduction's remainder is rounding noise (SciPy's and this one's);
 * n times the complete integral is the value either way, but for m < 0 SciPy's Cephes turns
 * that noise into NaN about half the time (a logarithm of its sine), where this gives the
 * finite value (a documented difference, tests/test_special_ellip.py).
 */
#ifndef FJ_SPECIAL_ELLIP_H
#define FJ_SPECIAL_ELLIP_H

#define FJ_ELLIP_PIO2 1.5707963267948966
#define FJ_ELLIP_ITER 100

/* R_F(x, y, z) for x, y, z >= 0, at most one of them 0, finite. The scaled differences of the
 * series are (a0 - x0) 4^-m / a_m (exactly the iterates' a_m - x_m, without their
 * cancellation). */
static inline double fj_sp_carlson_rf(double x, double y, double z) {
    const double x0 = x, y0 = y, a0 = (x + y + z) / 3.0;
    double dx = fabs(a0 - x), dy = fabs(a0 - y), dz = fabs(a0 - z);
    double q = dx > dy ? dx : dy;
    q = (q > dz ? q : dz) * 3.2237097505807e2;  /* (3 eps)^(-1/6), eps = 2^-53 */
    double a = a0, f = 1.0;
    for (int i = 0; i < FJ_ELLIP_ITER && q * f >= fabs(a); i++) {
        const double sx = sqrt(x), sy = sqrt(y), sz = sqrt(z);
        const double lam = sx * sy + sy * sz + sz * sx;
        x = 0.25 * (x + lam);
        y = 0.25 * (y + lam);
        z = 0.25 * (z + lam);
        a = 0.25 * (a + lam);
        f *= 0.25;
    }
    const double X = (a0 - x0) * f / a, Y = (a0 - y0) * f / a, Z = -(X + Y);
    const double e2 = X * Y - Z * Z, e3 = X * Y * Z;
    return (1.0 - e2 / 10.0 + e3 / 14.0 + e2 * e2 / 24.0 - 3.0 * e2 * e3 / 44.0) / sqrt(a);
}

/* R_D(x, y, z) for x, y >= 0 (at most one 0), z > 0, finite. */
static inline double fj_sp_carlson_rd(double x, double y, double z) {
    const double x0 = x, y0 = y, a0 = (x + y + 3.0 * z) / 5.0;
    double dx = fabs(a0 - x), dy = fabs(a0 - y), dz = fabs(a0 - z);
    double q = dx > dy ? dx : dy;
    q = (q > dz ? q : dz) * 4.0636862361578e2;  /* (eps / 4)^(-1/6), eps = 2^-53 */
    double a = a0, f = 1.0, sum = 0.0;
    for (int i = 0; i < FJ_ELLIP_ITER && q * f >= fabs(a); i++) {
        const double sx = sqrt(x), sy = sqrt(y), sz = sqrt(z);
        const double lam = sx * sy + sy * sz + sz * sx;
        sum += f / (sz * (z + lam));
        x = 0.25 * (x + lam);
        y = 0.25 * (y + lam);
        z = 0.25 * (z + lam);
        a = 0.25 * (a + lam);
        f *= 0.25;
    }
    const double X = (a0 - x0) * f / a, Y = (a0 - y0) * f / a, Z = -(X + Y) / 3.0;
    const double xy = X * Y, z2 = Z * Z;
    const double e2 = xy - 6.0 * z2, e3 = (3.0 * xy - 8.0 * z2) * Z;
    const double e4 = 3.0 * (xy - z2) * z2, e5 = xy * z2 * Z;
    const double series = 1.0 - 3.0 * e2 / 14.0 + e3 / 6.0 + 9.0 * e2 * e2 / 88.0 -
                          3.0 * e4 / 22.0 - 9.0 * e2 * e3 / 52.0 + 3.0 * e5 / 26.0;
    return f * series / (a * sqrt(a)) + 3.0 * sum;
}

/* phi reduced as Cephes: *n = floor(phi / (pi/2)) made even, the rest phi - n pi/2. */
static inline double fj_sp_ellip_reduce(double phi, double *n) {
    double k = floor(phi / FJ_ELLIP_PIO2);
    if (fmod(fabs(k), 2.0) == 1.0) k += 1.0;
    *n = k;
    return k != 0.0 ? phi - k * FJ_ELLIP_PIO2 : phi;
}

static inline double fj_sp_ellipkinc(double phi, double m) {
    if (isnan(phi) || isnan(m) || m > 1.0) return NAN;
    if (isinf(m)) return isinf(phi) ? NAN : 0.0;  /* (m = -inf) */
    if (isinf(phi) || m == 0.0) return phi;
    /* phi = -0: SciPy's sign (kept at m = 1 and where 1 - m > 1, its m < 0 path; else +0) */
    if (phi == 0.0) return (m == 1.0 || 1.0 - m > 1.0) ? phi : 0.0;
    double n;
    const double r = fj_sp_ellip_reduce(phi, &n);
    if (m == 1.0) {
        if (fabs(phi) >= FJ_ELLIP_PIO2) return INFINITY;  /* (either sign: SciPy's) */
        return asinh(tan(phi));
    }
    const double s = sin(r), c = cos(r);
    const double part = s * fj_sp_carlson_rf(c * c, 1.0 - m * s * s, 1.0);
    return n != 0.0 ? part + n * fj_sp_carlson_rf(0.0, 1.0 - m, 1.0) : part;
}

static inline double fj_sp_ellipeinc(double phi, double m) {
    if (isnan(phi) || isnan(m) || m > 1.0) return NAN;
    if (isinf(phi)) return phi;
    if (isinf(m)) return INFINITY;  /* (m = -inf, any finite phi: SciPy's) */
    if (m == 0.0) return phi;
    if (phi == 0.0) return 0.0;
    double n;
    const double r = fj_sp_ellip_reduce(phi, &n);
    const double s = sin(r), c = cos(r);
    if (m == 1.0) return s + n;
    const double c2 = c * c, t = 1.0 - m * s * s;
    const double part = s * fj_sp_carlson_rf(c2, t, 1.0) -
                        m / 3.0 * (s * s * s) * fj_sp_carlson_rd(c2, t, 1.0);
    if (n == 0.0) return part;
    const double whole = fj_sp_carlson_rf(0.0, 1.0 - m, 1.0) -
                         m / 3.0 * fj_sp_carlson_rd(0.0, 1.0 - m, 1.0);
    return part + n * whole;
}

/* scipy.special.ellipj(u, m): sn, cn, dn and the amplitude ph = am(u | m), the four through one
 * computation. NaN for m outside [0, 1], an infinite u or a NaN (SciPy's). For m below 1e-9
 * the first-order series in m (A&S 16.13), at m = 1 the hyperbolic functions (tanh, sech,
 * sech, gd); near 1 (m >= 1 - 1e-10) the first-order series in 1 - m (A&S 16.15) where it
 * holds, (1 - m) cosh(u)^2 < 1e-8, and elsewhere the arithmetic-geometric mean with descending
 * Landen transformations (A&S 16.4): phi_N = 2^N a_N u, phi_{n-1} = (phi_n + asin(c_n sin phi_n
 * / a_n)) / 2, dn = cos phi_0 / cos(phi_1 - phi_0) (sqrt(1 - m sn^2) where that divisor is
 * below 0.1).
 * Differences from SciPy 1.17, which applies the series in 1 - m at any u: there its cn and dn
 * leave [-1, 1] once (1 - m) cosh(u)^2 nears 1 (cn = -133 at u = 30, m = 1 - 1e-10; the true
 * value is 2e-4), and at m = 1 it is NaN past |u| ~ 355 (cosh u sinh u overflows) where this gives
 * +-1, 0, 0, +-pi/2. */
/* r = {sn, cn, dn, ph} */
static inline void fj_sp_ellipj_all(double u, double m, double *r) {
    double *sn = &r[0], *cn = &r[1], *dn = &r[2], *ph = &r[3];
    if (isnan(u) || isnan(m) || isinf(u) || m < 0.0 || m > 1.0) {
        *sn = *cn = *dn = *ph = NAN;
        return;
    }
    if (m < 1e-9) {
        const double t = sin(u), b = cos(u), ai = 0.25 * m * (u - t * b);
        *sn = t - ai * b;
        *cn = b + ai * t;
        *ph = u - ai;
        *dn = 1.0 - 0.5 * m * t * t;
        return;
    }
    if (m == 1.0) {
        const double sech = 1.0 / cosh(u);
        *sn = tanh(u) + 0.0;  /* (+0 at u = -0, as SciPy) */
        *cn = *dn = sech;
        *ph = atan(sinh(u)) + 0.0;
        return;
    }
    const double ch = cosh(u);
    if (m >= 0.9999999999 && (1.0 - m) * ch * ch < 1e-8) {
        const double sh = sinh(u), t = sh / ch, sech = 1.0 / ch, twon = ch * sh;
        double ai = 0.25 * (1.0 - m);
        *sn = t + ai * (twon - u) / (ch * ch);
        *ph = atan(sh) + ai * (twon - u) / ch;
        ai *= t * sech;
        *cn = sech - ai * (twon - u);
        *dn = sech + ai * (twon + u);
        return;
    }
    double a[16], c[16], b = sqrt(1.0 - m), twon = 1.0;
    int i = 0;
    a[0] = 1.0;
    c[0] = sqrt(m);
    while (fabs(c[i] / a[i]) > 1.1102230246251565e-16 && i < 15) {
        const double ai = a[i];
        i++;
        c[i] = 0.5 * (ai - b);
        a[i] = 0.5 * (ai + b);
        b = sqrt(ai * b);
        twon *= 2.0;
    }
    double phi = twon * a[i] * u, last = phi;
    for (; i > 0; i--) {
        last = phi;
        phi = 0.5 * (asin(c[i] * sin(phi) / a[i]) + phi);
    }
    *sn = sin(phi);
    *cn = cos(phi);
    const double ratio = cos(last - phi);  /* (near 0, cn / it cancels: 1 - m sn^2 does not) */
    *dn = fabs(ratio) < 0.1 ? sqrt(1.0 - m * *sn * *sn) : *cn / ratio;
    *ph = phi;
}

static inline double fj_sp_ellipj_at(double u, double m, int k) {
    double r[4];
    fj_sp_ellipj_all(u, m, r);
    return r[k];
}

static inline double fj_sp_ellipj_sn(double u, double m) { return fj_sp_ellipj_at(u, m, 0); }
static inline double fj_sp_ellipj_cn(double u, double m) { return fj_sp_ellipj_at(u, m, 1); }
static inline double fj_sp_ellipj_dn(double u, double m) { return fj_sp_ellipj_at(u, m, 2); }
static inline double fj_sp_ellipj_ph(double u, double m) { return fj_sp_ellipj_at(u, m, 3); }

#endif
