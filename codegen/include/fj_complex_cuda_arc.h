/*
 * fj_complex_cuda_arc.h -- complex asinh, acos, acosh and atanh for fusejit's generated CUDA
 * (after fj_complex_cuda.h, whose fj_cx, csqrt and real wrappers it uses).
 */
#ifndef FJ_COMPLEX_CUDA_ARC_H
#define FJ_COMPLEX_CUDA_ARC_H

/* ---- the inverse functions: Kahan's formulas ("Branch cuts for complex elementary
   functions", 1987) over csqrt for finite values, C99 Annex G's table (glibc's choices where
   it leaves a sign open) for the others; casin(z) = -i casinh(iz), catan(z) = -i catanh(iz) */
template <typename T> __device__ __forceinline__ T fj_m_pi(T) { return (T)3.14159265358979323846; }
/* a finite z whose square would overflow: Kahan's products too (sqrt(max) / 4 and above) */
template <typename T>
__device__ __forceinline__ bool fj__cbig(fj_cx<T> z) {
    const T big = fj_m_sqrt(fj_m_max(z.re)) / 4;
    return fj_m_fabs(z.re) > big || fj_m_fabs(z.im) > big;
}
/* log(2 |z|) without overflow */
template <typename T>
__device__ __forceinline__ T fj__log2abs(fj_cx<T> z) {
    return fj_m_log(fj_m_hypot(z.re / 2, z.im / 2)) + (T)2 * (T)0.693147180559945309417232121458176568;
}
template <typename T>
__device__ __forceinline__ fj_cx<T> fj__casinh(fj_cx<T> z) {
    const T x = z.re, y = z.im, pi = fj_m_pi(x);
    if (!isfinite(x) || !isfinite(y)) {
        if (isinf(x)) {
            if (isnan(y)) return z;
            return fj_cx<T>(x, fj_m_copysign(isinf(y) ? pi / 4 : (T)0, y));
        }
        if (isinf(y))  /* (x NaN: Inf of its sign, as glibc) */
            return fj_cx<T>(fj_m_copysign((T)INFINITY, x), isnan(x) ? (T)NAN : fj_m_copysign(pi / 2, y));
        return fj_cx<T>(NAN, isnan(x) && y == 0 ? y : (T)NAN);
    }
    if (fj__cbig(z)) {  /* asinh(u) = log(2u) + O(1/u^2), on u = +-z with Re u >= 0 */
        const T sg = signbit(x) ? (T)-1 : (T)1;
        return fj_cx<T>(sg * fj__log2abs(z), sg * fj_m_atan2(y * sg, x * sg));
    }
    /* Kahan's casin at w = iz = (-y, x): its real part is our imaginary part, minus its
       imaginary part our real part */
    const T wr = -y, wi = x;
    const fj_cx<T> s1 = fj__csqrt(fj_cx<T>(1 - wr, -wi)), s2 = fj__csqrt(fj_cx<T>(1 + wr, wi));
    const T re = fj_m_atan2(wr, s1.re * s2.re - s1.im * s2.im);
    const T im = fj_m_asinh(s1.re * s2.im - s1.im * s2.re);
    return fj_cx<T>(im, -re);
}
template <typename T>
__device__ __forceinline__ fj_cx<T> fj__cacos(fj_cx<T> z) {
    const T x = z.re, y = z.im, pi = fj_m_pi(x);
    if (!isfinite(x) || !isfinite(y)) {
        if (isinf(x)) {
            if (isnan(y)) return fj_cx<T>(NAN, -fj_m_copysign((T)INFINITY, y));
            const T re = isinf(y) ? (x > 0 ? pi / 4 : 3 * pi / 4) : (x > 0 ? (T)0 : pi);
            return fj_cx<T>(re, -fj_m_copysign((T)INFINITY, y));
        }
        if (isinf(y)) return fj_cx<T>(isnan(x) ? (T)NAN : pi / 2, -fj_m_copysign((T)INFINITY, y));
        return fj_cx<T>(x == 0 ? pi / 2 : (T)NAN, NAN);
    }
    if (fj__cbig(z))  /* acos(z) = -i log(2z) + O(1/z^2) in the upper half plane */
        return fj_cx<T>(fj_m_atan2(fj_m_fabs(y), x), -fj_m_copysign(fj__log2abs(z), y));
    const fj_cx<T> s1 = fj__csqrt(fj_cx<T>(1 - x, -y)), s2 = fj__csqrt(fj_cx<T>(1 + x, y));
    return fj_cx<T>(2 * fj_m_atan2(s1.re, s2.re), fj_m_asinh(s2.re * s1.im - s2.im * s1.re));
}
template <typename T>
__device__ __forceinline__ fj_cx<T> fj__cacosh(fj_cx<T> z) {
    const T x = z.re, y = z.im, pi = fj_m_pi(x);
    if (!isfinite(x) || !isfinite(y)) {
        if (isinf(x)) {
            if (isnan(y)) return fj_cx<T>(INFINITY, NAN);
            const T im = isinf(y) ? (x > 0 ? pi / 4 : 3 * pi / 4) : (x > 0 ? (T)0 : pi);
            return fj_cx<T>(INFINITY, fj_m_copysign(im, y));
        }
        if (isinf(y)) return fj_cx<T>(INFINITY, isnan(x) ? (T)NAN : fj_m_copysign(pi / 2, y));
        return fj_cx<T>(NAN, x == 0 ? pi / 2 : (T)NAN);
    }
    if (fj__cbig(z)) return fj_cx<T>(fj__log2abs(z), fj_m_atan2(y, x));  /* log(2z) */
    const fj_cx<T> s1 = fj__csqrt(fj_cx<T>(x - 1, y)), s2 = fj__csqrt(fj_cx<T>(x + 1, y));
    return fj_cx<T>(fj_m_asinh(s1.re * s2.re + s1.im * s2.im), 2 * fj_m_atan2(s1.im, s2.re));
}
template <typename T>
__device__ __forceinline__ fj_cx<T> fj__catanh(fj_cx<T> z) {
    const T x = z.re, y = z.im, pi = fj_m_pi(x), ax = fj_m_fabs(x), ay = fj_m_fabs(y);
    if (!isfinite(x) || !isfinite(y)) {
        if (isinf(y)) return fj_cx<T>(fj_m_copysign((T)0, x), fj_m_copysign(pi / 2, y));
        if (isinf(x)) return fj_cx<T>(fj_m_copysign((T)0, x), isnan(y) ? y : fj_m_copysign(pi / 2, y));
        return fj_cx<T>(x == 0 ? x : (T)NAN, NAN);
    }
    if (ax == 1 && y == 0) return fj_cx<T>(fj_m_copysign((T)INFINITY, x), y);
    /* catanh(-z) = -catanh(z): on u = +-z with a non-negative real part, where |1 - u| is
       the small one near a branch point */
    const T sg = signbit(x) ? (T)-1 : (T)1, ux = x * sg, uy = y * sg;
    const T big = fj_m_sqrt(fj_m_max(x)) / 4;
    T re, im;
    if (ux > big || ay > big) {  /* 1/u + i pi/2: the real part of 1/u without overflow */
        if (ux >= ay) { const T r = uy / ux; re = (1 / ux) / (1 + r * r); }
        else { const T r = ux / uy; re = (r / uy) / (1 + r * r); }
        im = fj_m_copysign(pi / 2, uy);
    } else {  /* log(|1 + u|^2 / |1 - u|^2) / 4 + i arg((1 - ux)(1 + ux) - uy^2 + 2i uy) / 2 */
        const T h = fj_m_hypot(1 - ux, uy);
        if (h > fj_m_sqrt(fj_m_minnorm(x)) * 4) re = fj_m_log1p(4 * ux / (h * h)) / 4;
        else re = (fj_m_log(4 * ux) - 2 * fj_m_log(h)) / 4;
        im = fj_m_atan2(2 * uy, (1 - ux) * (1 + ux) - uy * uy) / 2;
    }
    return fj_cx<T>(re * sg, im * sg);
}

#endif
