/*
 * fj_special_sph.h -- scipy.special's spherical Bessel functions spherical_jn, spherical_yn,
 * spherical_in, spherical_kn and their derivatives (SciPy's private ufuncs _spherical_jn,
 * _spherical_jn_d, ...), for fusejit's generated C (and CUDA: codegen/cuda.py makes them
 * device functions), over fj_special_jy.h's jv and iv. Of an integer order n, with SciPy
 * 1.17's special values: NaN for n < 0; j_n(-x) = (-1)^n j_n(x), y_n(-x) = (-1)^(n+1)
 * y_n(x), i_n(-x) = (-1)^n i_n(x); j_n and y_n by the upward recurrence from sin and cos
 * below n < x (j_n otherwise through J_n+1/2), i_n through I_n+1/2, k_n by its upward
 * recurrence from (pi/2) e^-x / x (for negative x, the function's continuation, as SciPy's:
 * -pi i_n(|x|) + (-1)^(n+1) k_n(|x|)).
 * The derivatives: z_n-1 - (n + 1)/x z_n (j, y, i; k: -k_n-1 - ...), at n = 0 -z_1 (i: +i_1),
 * at x = 0 1/3 for n = 1, else 0 (j and i).
 */

/* the upward recurrence s_k+1 = (2k + 1)/x s_k - s_k-1 from s_0, s_1 to s_n (n >= 2) */
static inline double fj_sp__sph_up(long long n, double x, double s0, double s1) {
    double sn = s1;
    for (long long i = 0; i < n - 1; i++) {
        sn = (2.0 * (double)i + 3.0) * s1 / x - s0;
        s0 = s1;
        s1 = sn;
        if (isinf(sn)) return sn;  /* (overflowed: SciPy stops there) */
    }
    return sn;
}

static inline double fj_sp_spherical_jn(long long n, double x) {
    if (isnan(x)) return x;
    if (n < 0) return NAN;
    if (x < 0.0) {
        const double r = fj_sp_spherical_jn(n, -x);
        return n % 2 == 0 ? r : -r;
    }
    if (isinf(x)) return 0.0;
    if (x == 0.0) return n == 0 ? 1.0 : 0.0;
    if (n > 0 && (double)n >= x) return sqrt(0.5 * FJ_SP_PI / x) * fj_sp_jv((double)n + 0.5, x);
    const double s0 = sin(x) / x;
    if (n == 0) return s0;
    const double s1 = (s0 - cos(x)) / x;
    if (n == 1) return s1;
    return fj_sp__sph_up(n, x, s0, s1);
}

static inline double fj_sp_spherical_yn(long long n, double x) {
    if (isnan(x)) return x;
    if (n < 0) return NAN;
    if (x < 0.0) {
        const double r = fj_sp_spherical_yn(n, -x);
        return n % 2 == 1 ? r : -r;
    }
    if (isinf(x)) return 0.0;
    if (x == 0.0) return -INFINITY;
    const double s0 = -cos(x) / x;
    if (n == 0) return s0;
    const double s1 = (s0 - sin(x)) / x;
    if (n == 1) return s1;
    return fj_sp__sph_up(n, x, s0, s1);
}

static inline double fj_sp_spherical_in(long long n, double x) {
    if (isnan(x)) return x;
    if (n < 0) return NAN;
    if (x == 0.0) return n == 0 ? 1.0 : 0.0;
    if (isinf(x)) return x < 0.0 && n % 2 == 1 ? -INFINITY : INFINITY;
    if (x < 0.0) {
        const double r = fj_sp_spherical_in(n, -x);
        return n % 2 == 0 ? r : -r;
    }
    return sqrt(0.5 * FJ_SP_PI / x) * fj_sp_iv((double)n + 0.5, x);
}

static inline double fj_sp_spherical_kn(long long n, double x) {
    if (isnan(x)) return x;
    if (n < 0) return NAN;
    if (x == 0.0) return INFINITY;
    if (isinf(x)) return x > 0.0 ? 0.0 : -INFINITY;
    if (x < 0.0) {  /* k_n(-x) = -pi i_n(x) + (-1)^(n+1) k_n(x), neither term cancelling */
        const double k = fj_sp_spherical_kn(n, -x);
        return -FJ_SP_PI * fj_sp_spherical_in(n, -x) + (n % 2 == 1 ? k : -k);
    }
    double k0 = 0.5 * FJ_SP_PI * exp(-x) / x;
    if (n == 0) return k0;
    double k1 = k0 * (1.0 + 1.0 / x);
    for (long long m = 1; m < n && isfinite(k1); m++) {  /* k_m+1 = k_m-1 + (2m+1)/x k_m */
        const double next = k0 + (2.0 * (double)m + 1.0) / x * k1;
        k0 = k1;
        k1 = next;
    }
    return k1;
}

static inline double fj_sp_spherical_jn_d(long long n, double x) {
    if (n == 0) return -fj_sp_spherical_jn(1, x);
    if (x == 0.0) return n == 1 ? 1.0 / 3.0 : 0.0;
    return fj_sp_spherical_jn(n - 1, x) - (double)(n + 1) * fj_sp_spherical_jn(n, x) / x;
}

static inline double fj_sp_spherical_yn_d(long long n, double x) {
    if (n == 0) return -fj_sp_spherical_yn(1, x);
    return fj_sp_spherical_yn(n - 1, x) - (double)(n + 1) * fj_sp_spherical_yn(n, x) / x;
}

static inline double fj_sp_spherical_in_d(long long n, double x) {
    if (n == 0) return fj_sp_spherical_in(1, x);
    if (x == 0.0) return n == 1 ? 1.0 / 3.0 : 0.0;
    return fj_sp_spherical_in(n - 1, x) - (double)(n + 1) * fj_sp_spherical_in(n, x) / x;
}

static inline double fj_sp_spherical_kn_d(long long n, double x) {
    if (n == 0) return -fj_sp_spherical_kn(1, x);
    return -fj_sp_spherical_kn(n - 1, x) - (double)(n + 1) * fj_sp_spherical_kn(n, x) / x;
}
