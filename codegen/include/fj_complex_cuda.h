/*
 * fj_complex_cuda.h -- NumPy's complex64 / complex128 for fusejit's generated CUDA.
 *
 * nvcc has no C99 `_Complex` in device code, so a complex value is fj_cx<T>: the real part,
 * then the imaginary part, aligned to its size (8 / 16 bytes, NumPy's layout), named fj_c64 /
 * fj_c128.  The CUDA renderer (codegen/cuda_complex.py) rewrites the shared C expressions'
 * spellings onto it: `float _Complex` -> fj_c64, `__real__ (z)` -> fj_re(z), `__imag__ (z)`
 * -> fj_im(z), `__builtin_complex(r, i)` -> fj_cbuild(r, i).  Everything else keeps the names
 * of codegen/include/fj_complex.h (fj_cmul_c64, fj_lm_cexpf ...), with the same meaning:
 *
 *   + - (unary and binary), == and != are NumPy's (part by part); `*` is np.multiply (one
 *   fma in each part, as fj_cmul_T); a real value converts implicitly (imaginary part +0),
 *   the other precision only by an explicit cast.
 *   exp, log, sqrt, sinh, cosh, tanh (sin, cos, tan through them, C99's identities) and pow
 *   are written here after C99 Annex G and glibc, whose cexp ... NumPy calls on the host: the same special values (Inf/NaN parts, signed zeros, branch cuts)
 *   and results within a few ulps.  The inverse trigonometric and hyperbolic functions are
 *   in fj_complex_cuda_arc.h, the fj_complex.h names over all of these in
 *   fj_complex_cuda_names.h (codegen/cuda_complex.py puts the three in one source, in order).
 */
#ifndef FJ_COMPLEX_CUDA_H
#define FJ_COMPLEX_CUDA_H

/* ---- real functions by overload (float: the f-suffixed function) ---- */
#define FJ_RM1(name) \
    __device__ __forceinline__ float fj_m_##name(float x) { return name##f(x); } \
    __device__ __forceinline__ double fj_m_##name(double x) { return name(x); }
#define FJ_RM2(name) \
    __device__ __forceinline__ float fj_m_##name(float x, float y) { return name##f(x, y); } \
    __device__ __forceinline__ double fj_m_##name(double x, double y) { return name(x, y); }
FJ_RM1(exp) FJ_RM1(expm1) FJ_RM1(log) FJ_RM1(log1p) FJ_RM1(sqrt) FJ_RM1(sin) FJ_RM1(cos)
FJ_RM1(sinh) FJ_RM1(cosh) FJ_RM1(fabs) FJ_RM1(rint) FJ_RM1(asinh)
FJ_RM2(hypot) FJ_RM2(atan2) FJ_RM2(copysign)
#undef FJ_RM1
#undef FJ_RM2
/* -x by its sign bit: PTX's neg leaves the sign of a NaN unspecified (the GPU's arithmetic
   NaN is positive), while C on x86 flips it, and Annex G's results copy signs from NaNs */
__device__ __forceinline__ float fj_m_neg(float x) { return __uint_as_float(__float_as_uint(x) ^ 0x80000000u); }
__device__ __forceinline__ double fj_m_neg(double x) {
    return __longlong_as_double(__double_as_longlong(x) ^ (long long)0x8000000000000000ull);
}
__device__ __forceinline__ float fj_m_fma(float a, float b, float c) { return fmaf(a, b, c); }
__device__ __forceinline__ double fj_m_fma(double a, double b, double c) { return fma(a, b, c); }
__device__ __forceinline__ float fj_m_max(float) { return 3.40282346638528859812e+38f; }
__device__ __forceinline__ double fj_m_max(double) { return 1.79769313486231570815e+308; }
__device__ __forceinline__ float fj_m_minnorm(float) { return 1.17549435082228750797e-38f; }
__device__ __forceinline__ double fj_m_minnorm(double) { return 2.22507385850720138309e-308; }
__device__ __forceinline__ float fj_m_eps(float) { return 1.1920928955078125e-07f; }
__device__ __forceinline__ double fj_m_eps(double) { return 2.220446049250313080847e-16; }
/* (max exponent - 1) * ln 2: exp() of more overflows */
__device__ __forceinline__ float fj_m_tover(float) { return 88.0296919311130543f; }
__device__ __forceinline__ double fj_m_tover(double) { return 709.08956571282405153; }

template <typename T>
struct alignas(2 * sizeof(T)) fj_cx {
    T re, im;
    fj_cx() = default;
    __device__ __forceinline__ fj_cx(T r, T i = T(0)) : re(r), im(i) {}
    /* between the two precisions: explicit casts only (the renderer writes them) */
    template <typename U>
    __device__ __forceinline__ explicit fj_cx(fj_cx<U> z) : re((T)z.re), im((T)z.im) {}
    __device__ __forceinline__ friend fj_cx operator+(fj_cx a, fj_cx b) { return fj_cx(a.re + b.re, a.im + b.im); }
    __device__ __forceinline__ friend fj_cx operator-(fj_cx a, fj_cx b) { return fj_cx(a.re - b.re, a.im - b.im); }
    __device__ __forceinline__ friend fj_cx operator-(fj_cx a) { return fj_cx(-a.re, -a.im); }
    __device__ __forceinline__ friend fj_cx operator*(fj_cx a, fj_cx b) {
        return fj_cx(fj_m_fma(a.re, b.re, -(a.im * b.im)), fj_m_fma(a.re, b.im, a.im * b.re));
    }
    __device__ __forceinline__ friend bool operator==(fj_cx a, fj_cx b) { return a.re == b.re && a.im == b.im; }
    __device__ __forceinline__ friend bool operator!=(fj_cx a, fj_cx b) { return a.re != b.re || a.im != b.im; }
};
typedef fj_cx<float> fj_c64;
typedef fj_cx<double> fj_c128;

template <typename T> __device__ __forceinline__ T fj_re(fj_cx<T> z) { return z.re; }
template <typename T> __device__ __forceinline__ T fj_im(fj_cx<T> z) { return z.im; }
__device__ __forceinline__ fj_c64 fj_cbuild(float r, float i) { return fj_c64(r, i); }
__device__ __forceinline__ fj_c128 fj_cbuild(double r, double i) { return fj_c128(r, i); }
__device__ __forceinline__ fj_c64 fj_cnarrow_c64(fj_c128 z) { return fj_c64((float)z.re, (float)z.im); }

/* warp shuffles of a complex value: part by part */
template <typename T>
__device__ __forceinline__ fj_cx<T> fj_shfl_down(fj_cx<T> v, int o, int w) {
    return fj_cx<T>(__shfl_down_sync(0xffffffffu, v.re, o, w), __shfl_down_sync(0xffffffffu, v.im, o, w));
}
template <typename T>
__device__ __forceinline__ fj_cx<T> fj_shfl0(fj_cx<T> v, int w) {
    return fj_cx<T>(__shfl_sync(0xffffffffu, v.re, 0, w), __shfl_sync(0xffffffffu, v.im, 0, w));
}

/* ---- NumPy's loops (see fj_complex.h for what each one is) ---- */
template <typename T>
__device__ __forceinline__ fj_cx<T> fj__cdiv(fj_cx<T> a, fj_cx<T> b) {
    const T ar = a.re, ai = a.im, br = b.re, bi = b.im;
    const T abr = fj_m_fabs(br), abi = fj_m_fabs(bi);
    if (abr >= abi) {
        if (abr == 0 && abi == 0) return fj_cx<T>(ar / abr, ai / abr);
        const T rat = bi / br, scl = (T)1.0 / (br + bi * rat);
        return fj_cx<T>((ar + ai * rat) * scl, (ai - ar * rat) * scl);
    }
    const T rat = br / bi, scl = (T)1.0 / (bi + br * rat);
    return fj_cx<T>((ar * rat + ai) * scl, (ai * rat - ar) * scl);
}
template <typename T>
__device__ __forceinline__ fj_cx<T> fj__crecip(fj_cx<T> a) {
    const T ar = a.re, ai = a.im;
    if (fj_m_fabs(ai) <= fj_m_fabs(ar)) {
        const T r = ai / ar, d = ar + ai * r;
        return fj_cx<T>((T)1 / d, -r / d);
    }
    const T r = ar / ai, d = ar * r + ai;
    return fj_cx<T>(r / d, (T)-1 / d);
}
template <typename T>
__device__ __forceinline__ fj_cx<T> fj__cprod(fj_cx<T> a, fj_cx<T> b) {  /* each product rounded */
    return fj_cx<T>(a.re * b.re - a.im * b.im, a.re * b.im + a.im * b.re);
}
template <typename T>
__device__ __forceinline__ fj_cx<T> fj__cpowi(fj_cx<T> a, long long n) {
    if (n == 0) return fj_cx<T>(1, 0);
    if (a.re == 0 && a.im == 0) return n > 0 ? fj_cx<T>(0, 0) : fj_cx<T>(NAN, NAN);
    if (n == 1) return a;
    if (n == 2) return fj__cprod(a, a);
    if (n == 3) return fj__cprod(a, fj__cprod(a, a));
    const long long m = n < 0 ? -n : n;
    fj_cx<T> acc(1, 0), p = a;
    for (long long mask = 1;; mask <<= 1) {
        if (m & mask) acc = fj__cprod(acc, p);
        if (m < (mask << 1)) break;
        p = fj__cprod(p, p);
    }
    return n < 0 ? fj__cdiv(fj_cx<T>(1, 0), acc) : acc;
}

/* ---- C99 Annex G functions (glibc's special values) ---- */
template <typename T>
__device__ __forceinline__ fj_cx<T> fj__cexp(fj_cx<T> z) {
    const T x = z.re, y = z.im;
    if (isfinite(x)) {
        if (!isfinite(y)) return fj_cx<T>(NAN, NAN);
        T s = y, c = 1;  /* y == 0: exactly (exp(x), y) */
        if (y != 0) { s = fj_m_sin(y); c = fj_m_cos(y); }
        const T t = fj_m_tover(x);
        T r = x;
        if (r > t) {  /* exp(x) overflows where exp(x) * cos(y) may not: scale in steps */
            const T e = fj_m_exp(t);
            r -= t; s *= e; c *= e;
            if (r > t) { r -= t; s *= e; c *= e; }
            if (r > t) return fj_cx<T>(fj_m_max(x) * c, fj_m_max(x) * s);
        }
        const T e = fj_m_exp(r);
        return fj_cx<T>(e * c, e * s);
    }
    if (isinf(x)) {
        if (isfinite(y)) {
            const T v = x > 0 ? (T)INFINITY : (T)0;
            if (y == 0) return fj_cx<T>(v, y);
            return fj_cx<T>(fj_m_copysign(v, fj_m_cos(y)), fj_m_copysign(v, fj_m_sin(y)));
        }
        if (x > 0) return fj_cx<T>(INFINITY, y - y);
        return fj_cx<T>(0, fj_m_copysign((T)0, y));
    }
    return fj_cx<T>(NAN, y == 0 ? y : (T)NAN);  /* x is NaN */
}
template <typename T>
__device__ __forceinline__ fj_cx<T> fj__clog(fj_cx<T> z) {
    const T x = z.re, y = z.im, ax = fj_m_fabs(x), ay = fj_m_fabs(y);
    const T im = fj_m_atan2(y, x);
    const T big = ax > ay ? ax : ay, small = ax > ay ? ay : ax;
    if (big >= (T)0.5 && big <= (T)2 && isfinite(small)) {
        /* |z| near 1: log|z| = log1p((big - 1)(big + 1) + small^2) / 2, without cancelling */
        const T d = fj_m_fma(big - 1, big + 1, small * small);
        return fj_cx<T>(fj_m_log1p(d) / 2, im);
    }
    if (big < fj_m_minnorm(x) * 4 && big > 0) {  /* subnormal parts: |z| scaled up first */
        const T up = sizeof(T) == 4 ? (T)16777216.0 : (T)18014398509481984.0;  /* 2^24, 2^54 */
        return fj_cx<T>(fj_m_log(fj_m_hypot(x * up, y * up)) - fj_m_log(up), im);
    }
    if (big > fj_m_max(x) / 4 && isfinite(big))  /* |z| may overflow where log|z| does not */
        return fj_cx<T>(fj_m_log(fj_m_hypot(x / 4, y / 4)) + (T)1.386294361119890618834464242916353136, im);
    return fj_cx<T>(fj_m_log(fj_m_hypot(x, y)), im);  /* hypot: Inf beats NaN, 0 -> -Inf */
}
template <typename T>
__device__ __forceinline__ fj_cx<T> fj__csqrt(fj_cx<T> z) {
    T x = z.re, y = z.im;
    if (isinf(y)) return fj_cx<T>(INFINITY, y);
    if (isnan(x)) return fj_cx<T>(NAN, NAN);
    if (isinf(x)) {
        if (isnan(y)) return x > 0 ? fj_cx<T>(x, y) : fj_cx<T>(y, fj_m_copysign((T)INFINITY, y));
        return x > 0 ? fj_cx<T>(x, fj_m_copysign((T)0, y)) : fj_cx<T>(0, fj_m_copysign(-x, y));
    }
    if (isnan(y)) return fj_cx<T>(NAN, NAN);
    if (x == 0 && y == 0) return fj_cx<T>(0, y);
    T scale = 1;
    const T ax = fj_m_fabs(x), ay = fj_m_fabs(y);
    if (ax > fj_m_max(x) / 4 || ay > fj_m_max(x) / 4) {
        x *= (T)0.25; y *= (T)0.25; scale = 2;
    } else if (ax < fj_m_minnorm(x) * 4 && ay < fj_m_minnorm(x) * 4) {
        const T up = sizeof(T) == 4 ? (T)16777216.0 : (T)18014398509481984.0;  /* 2^24, 2^54 */
        x *= up * up; y *= up * up; scale = 1 / up;
    }
    const T t = fj_m_sqrt((fj_m_fabs(x) + fj_m_hypot(x, y)) * (T)0.5);
    if (x >= 0) return fj_cx<T>(t * scale, y / (2 * t) * scale);
    return fj_cx<T>(fj_m_fabs(y) / (2 * t) * scale, fj_m_copysign(t, y) * scale);
}
/* sinh (cosh: `c`) of x + iy: sinh(x)cos(y) + i cosh(x)sin(y) (cosh(x)cos(y) + i sinh(x)sin(y)) */
template <typename T, bool C>
__device__ __forceinline__ fj_cx<T> fj__csinhcosh(fj_cx<T> z) {
    const T x = z.re, y = z.im, ax = fj_m_fabs(x);
    const T sx = fj_m_copysign((T)1, x);
    if (isfinite(x) && isfinite(y)) {
        T s = y, c = 1;
        if (y != 0) { s = fj_m_sin(y); c = fj_m_cos(y); }
        const T t = fj_m_tover(x);
        if (ax > t) {  /* sinh and cosh are exp(|x|)/2 here: scale in steps, as glibc */
            const T e = fj_m_exp(t);
            T r = ax - t, hc = c * e / 2, hs = s * e / 2;
            if (r > t) { r -= t; hc *= e; hs *= e; }
            T pc, ps;
            if (r > t) { pc = fj_m_max(x) * hc; ps = fj_m_max(x) * hs; }
            else { const T ev = fj_m_exp(r); pc = ev * hc; ps = ev * hs; }
            return C ? fj_cx<T>(pc, sx * ps) : fj_cx<T>(sx * pc, ps);
        }
        const T sh = fj_m_sinh(x), ch = fj_m_cosh(x);
        return C ? fj_cx<T>(ch * c, sh * s) : fj_cx<T>(sh * c, ch * s);
    }
    if (isfinite(x)) {  /* y is Inf or NaN */
        if (x == 0) return C ? fj_cx<T>(y - y, 0) : fj_cx<T>(x, y - y);
        return fj_cx<T>(NAN, NAN);
    }
    if (isinf(x)) {
        if (isfinite(y) && y != 0) {
            const T s = fj_m_sin(y), c = fj_m_cos(y);
            return C ? fj_cx<T>(fj_m_copysign((T)INFINITY, c), fj_m_copysign((T)INFINITY, s) * sx)
                     : fj_cx<T>(fj_m_copysign((T)INFINITY, c) * sx, fj_m_copysign((T)INFINITY, s));
        }
        if (y == 0) return C ? fj_cx<T>(INFINITY, y * sx) : fj_cx<T>(x, y);
        return fj_cx<T>(INFINITY, y - y);  /* (+Inf for both: glibc's choice) */
    }
    return fj_cx<T>(NAN, y == 0 ? (C ? y * 0 : y) : (T)NAN);  /* x is NaN */
}
template <typename T>
__device__ __forceinline__ fj_cx<T> fj__ctanh(fj_cx<T> z) {
    const T x = z.re, y = z.im;
    if (!isfinite(x) || !isfinite(y)) {
        if (isinf(x)) {
            if (isfinite(y) && fj_m_fabs(y) > 1)
                return fj_cx<T>(fj_m_copysign((T)1, x), fj_m_copysign((T)0, fj_m_sin(y) * fj_m_cos(y)));
            return fj_cx<T>(fj_m_copysign((T)1, x), fj_m_copysign((T)0, y));
        }
        if (y == 0) return z;
        return fj_cx<T>(x == 0 ? x : (T)NAN, NAN);  /* ctanh(+-0 + i Inf or NaN): +-0 + i NaN */
    }
    T s = y, c = 1;
    if (fj_m_fabs(y) > fj_m_minnorm(y)) { s = fj_m_sin(y); c = fj_m_cos(y); }
    const T t = (T)(int)(fj_m_tover(x) / 2);
    if (fj_m_fabs(x) > t) {  /* tanh(x) is +-1 here; the imaginary part decays as exp(-2|x|) */
        const T e2t = fj_m_exp(2 * t);
        T im = 4 * s * c / e2t;
        const T r = fj_m_fabs(x) - t;
        im = r > t ? im / e2t : im / fj_m_exp(2 * r);
        return fj_cx<T>(fj_m_copysign((T)1, x), im);
    }
    T sh = x, ch = 1;
    if (fj_m_fabs(x) > fj_m_minnorm(x)) { sh = fj_m_sinh(x); ch = fj_m_cosh(x); }
    const T den = fj_m_fabs(sh) > fj_m_fabs(c) * fj_m_eps(x) ? sh * sh + c * c : c * c;
    return fj_cx<T>(sh * ch / den, s * c / den);
}
/* Annex G's multiplication (glibc's __muldc3: recovers infinities a plain product loses),
   for cpow's b * log(a), as C's `*` in glibc's cpow */
template <typename T>
__device__ __forceinline__ fj_cx<T> fj__cmul_annexg(fj_cx<T> p, fj_cx<T> q) {
    T a = p.re, b = p.im, c = q.re, d = q.im;
    const T ac = a * c, bd = b * d, ad = a * d, bc = b * c;
    T x = ac - bd, y = ad + bc;
    if (isnan(x) && isnan(y)) {
        bool recalc = false;
        if (isinf(a) || isinf(b)) {
            a = fj_m_copysign(isinf(a) ? (T)1 : (T)0, a);
            b = fj_m_copysign(isinf(b) ? (T)1 : (T)0, b);
            if (isnan(c)) c = fj_m_copysign((T)0, c);
            if (isnan(d)) d = fj_m_copysign((T)0, d);
            recalc = true;
        }
        if (isinf(c) || isinf(d)) {
            c = fj_m_copysign(isinf(c) ? (T)1 : (T)0, c);
            d = fj_m_copysign(isinf(d) ? (T)1 : (T)0, d);
            if (isnan(a)) a = fj_m_copysign((T)0, a);
            if (isnan(b)) b = fj_m_copysign((T)0, b);
            recalc = true;
        }
        if (!recalc && (isinf(ac) || isinf(bd) || isinf(ad) || isinf(bc))) {
            if (isnan(a)) a = fj_m_copysign((T)0, a);
            if (isnan(b)) b = fj_m_copysign((T)0, b);
            if (isnan(c)) c = fj_m_copysign((T)0, c);
            if (isnan(d)) d = fj_m_copysign((T)0, d);
            recalc = true;
        }
        if (recalc) {
            x = (T)INFINITY * (a * c - b * d);
            y = (T)INFINITY * (a * d + b * c);
        }
    }
    return fj_cx<T>(x, y);
}

#endif
