/*
 * fj_complex_cuda_names.h -- the names codegen/include/fj_complex.h gives NumPy's complex
 * loops and libm's complex functions (fj_cmul_c64, fj_lm_cexpf ...), as device functions
 * over fj_complex_cuda.h and fj_complex_cuda_arc.h: the shared expression renderer writes
 * these names for both backends; and fj_sort.h's complex order and search (fj_cless_c64,
 * fj_search_c64 ...) for the sort kernels (codegen/cuda_sort_complex.py).  Suffixes: c64 = fj_c64, c128 = fj_c128; F: libm's `f`.
 */
#ifndef FJ_COMPLEX_CUDA_NAMES_H
#define FJ_COMPLEX_CUDA_NAMES_H

#define FJ_CDEF(S, T, F)                                                                  \
__device__ __forceinline__ fj_cx<T> fj_lm_cexp##F(fj_cx<T> z) { return fj__cexp(z); }      \
__device__ __forceinline__ fj_cx<T> fj_lm_clog##F(fj_cx<T> z) { return fj__clog(z); }      \
__device__ __forceinline__ fj_cx<T> fj_lm_csqrt##F(fj_cx<T> z) { return fj__csqrt(z); }    \
__device__ __forceinline__ fj_cx<T> fj_lm_csinh##F(fj_cx<T> z) { return fj__csinhcosh<T, false>(z); } \
__device__ __forceinline__ fj_cx<T> fj_lm_ccosh##F(fj_cx<T> z) { return fj__csinhcosh<T, true>(z); } \
__device__ __forceinline__ fj_cx<T> fj_lm_ctanh##F(fj_cx<T> z) { return fj__ctanh(z); }    \
/* csin(z) = -i csinh(iz), ccos(z) = ccosh(iz), ctan(z) = -i ctanh(iz) */                 \
__device__ __forceinline__ fj_cx<T> fj_lm_csin##F(fj_cx<T> z) {                           \
    if (!isfinite(z.re) && isinf(z.im)) return fj_cx<T>(NAN, INFINITY); /* (glibc's sign) */ \
    const fj_cx<T> w = fj__csinhcosh<T, false>(fj_cx<T>(fj_m_neg(z.im), z.re));           \
    return fj_cx<T>(w.im, fj_m_neg(w.re));                                                \
}                                                                                         \
__device__ __forceinline__ fj_cx<T> fj_lm_ccos##F(fj_cx<T> z) {                           \
    return fj__csinhcosh<T, true>(fj_cx<T>(fj_m_neg(z.im), z.re));                        \
}                                                                                         \
__device__ __forceinline__ fj_cx<T> fj_lm_ctan##F(fj_cx<T> z) {                           \
    const fj_cx<T> w = fj__ctanh(fj_cx<T>(fj_m_neg(z.im), z.re));                         \
    return fj_cx<T>(w.im, fj_m_neg(w.re));                                                \
}                                                                                         \
__device__ __forceinline__ fj_cx<T> fj_lm_casinh##F(fj_cx<T> z) { return fj__casinh(z); }  \
__device__ __forceinline__ fj_cx<T> fj_lm_cacos##F(fj_cx<T> z) { return fj__cacos(z); }    \
__device__ __forceinline__ fj_cx<T> fj_lm_cacosh##F(fj_cx<T> z) { return fj__cacosh(z); }  \
__device__ __forceinline__ fj_cx<T> fj_lm_catanh##F(fj_cx<T> z) { return fj__catanh(z); }  \
__device__ __forceinline__ fj_cx<T> fj_lm_casin##F(fj_cx<T> z) {                          \
    const fj_cx<T> w = fj__casinh(fj_cx<T>(fj_m_neg(z.im), z.re));                        \
    return fj_cx<T>(w.im, fj_m_neg(w.re));                                                \
}                                                                                         \
__device__ __forceinline__ fj_cx<T> fj_lm_catan##F(fj_cx<T> z) {                          \
    const fj_cx<T> w = fj__catanh(fj_cx<T>(fj_m_neg(z.im), z.re));                        \
    return fj_cx<T>(w.im, fj_m_neg(w.re));                                                \
}                                                                                         \
__device__ __forceinline__ fj_cx<T> fj_lm_cpow##F(fj_cx<T> a, fj_cx<T> b) {               \
    return fj__cexp(fj__cmul_annexg(b, fj__clog(a)));                                     \
}                                                                                         \
__device__ __forceinline__ fj_cx<T> fj_cpack_##S(T r, T i) { return fj_cx<T>(r, i); }      \
__device__ __forceinline__ fj_cx<T> fj_cneg_##S(fj_cx<T> a) {                              \
    return fj_cx<T>(fj_m_neg(a.re), fj_m_neg(a.im));                                      \
}                                                                                         \
__device__ __forceinline__ fj_cx<T> fj_cconj_##S(fj_cx<T> a) { return fj_cx<T>(a.re, fj_m_neg(a.im)); } \
__device__ __forceinline__ fj_cx<T> fj_cmul_##S(fj_cx<T> a, fj_cx<T> b) { return a * b; }  \
__device__ __forceinline__ fj_cx<T> fj_csquare_##S(fj_cx<T> a) {                          \
    return fj_cx<T>(fj_m_fma(a.re, a.re, -(a.im * a.im)), a.re * a.im + a.im * a.re);      \
}                                                                                         \
__device__ __forceinline__ fj_cx<T> fj_cdiv_##S(fj_cx<T> a, fj_cx<T> b) { return fj__cdiv(a, b); } \
__device__ __forceinline__ fj_cx<T> fj_crecip_##S(fj_cx<T> a) { return fj__crecip(a); }    \
__device__ __forceinline__ fj_cx<T> fj_cprod_##S(fj_cx<T> a, fj_cx<T> b) { return fj__cprod(a, b); } \
__device__ __forceinline__ fj_cx<T> fj_cpowi_##S(fj_cx<T> a, long long n) { return fj__cpowi(a, n); } \
__device__ __forceinline__ fj_cx<T> fj_cpow_##S(fj_cx<T> a, fj_cx<T> b) {                 \
    const T br = b.re, bi = b.im;                                                         \
    if (bi == 0 && fj_m_fabs(br) < 100 && br == (T)(long long)br)                         \
        return fj__cpowi(a, (long long)br);                                               \
    if (br == 0 && bi == 0) return fj_cx<T>(1, 0);                                        \
    if (a.re == 0 && a.im == 0) return br > 0 ? fj_cx<T>(0, 0) : fj_cx<T>(NAN, NAN);      \
    return fj_lm_cpow##F(a, b);                                                           \
}                                                                                         \
__device__ __forceinline__ T fj_cabs_##S(fj_cx<T> a) { return fj_m_hypot(a.re, a.im); }    \
__device__ __forceinline__ fj_cx<T> fj_cscale_##S(fj_cx<T> a, T c) { return fj_cx<T>(a.re * c, a.im * c); } \
__device__ __forceinline__ fj_cx<T> fj_clog2_##S(fj_cx<T> a) {                            \
    return fj_cscale_##S(fj__clog(a), (T)1.442695040888963407359924681001892137L);        \
}                                                                                         \
__device__ __forceinline__ fj_cx<T> fj_clog10_##S(fj_cx<T> a) {                           \
    return fj_cscale_##S(fj__clog(a), (T)0.434294481903251827651128918916605082L);        \
}                                                                                         \
__device__ __forceinline__ fj_cx<T> fj_cexp2_##S(fj_cx<T> a) {                            \
    return fj__cexp(fj_cscale_##S(a, (T)0.693147180559945309417232121458176568L));        \
}                                                                                         \
__device__ __forceinline__ fj_cx<T> fj_clog1p_##S(fj_cx<T> a) {                           \
    const T r = a.re + 1, i = a.im;                                                       \
    return fj_cx<T>(fj_m_log(fj_m_hypot(r, i)), fj_m_atan2(i, r));                        \
}                                                                                         \
__device__ __forceinline__ fj_cx<T> fj_cexpm1_##S(fj_cx<T> a) {                           \
    const T r = a.re, i = a.im, h = fj_m_sin(i / 2);                                      \
    return fj_cx<T>(fj_m_expm1(r) * fj_m_cos(i) - 2 * h * h, fj_m_exp(r) * fj_m_sin(i));  \
}                                                                                         \
__device__ __forceinline__ fj_cx<T> fj_csign_##S(fj_cx<T> a) {                            \
    const T r = a.re, i = a.im, m = fj_m_hypot(r, i);                                     \
    if (isnan(m)) return fj_cx<T>(NAN, NAN);                                              \
    if (isinf(m)) {                                                                       \
        if (isinf(r)) return isinf(i) ? fj_cx<T>(NAN, NAN) : fj_cx<T>(r > 0 ? 1 : -1, 0); \
        return fj_cx<T>(0, i > 0 ? 1 : -1);                                               \
    }                                                                                     \
    if (m == 0) return fj_cx<T>(0, 0);                                                    \
    return fj_cx<T>(r / m, i / m);                                                        \
}                                                                                         \
__device__ __forceinline__ bool fj_clt_##S(fj_cx<T> a, fj_cx<T> b) {                      \
    return (a.re < b.re && !isnan(a.im) && !isnan(b.im)) || (a.re == b.re && a.im < b.im); \
}                                                                                         \
__device__ __forceinline__ bool fj_cle_##S(fj_cx<T> a, fj_cx<T> b) {                      \
    return (a.re < b.re && !isnan(a.im) && !isnan(b.im)) || (a.re == b.re && a.im <= b.im); \
}                                                                                         \
__device__ __forceinline__ bool fj_cgt_##S(fj_cx<T> a, fj_cx<T> b) {                      \
    return (a.re > b.re && !isnan(a.im) && !isnan(b.im)) || (a.re == b.re && a.im > b.im); \
}                                                                                         \
__device__ __forceinline__ bool fj_cge_##S(fj_cx<T> a, fj_cx<T> b) {                      \
    return (a.re > b.re && !isnan(a.im) && !isnan(b.im)) || (a.re == b.re && a.im >= b.im); \
}                                                                                         \
/* NumPy's sort order (fj_sort.h's fj_cless): R+Rj < R+nanj < nan+Rj < nan+nanj, each class \
   lexicographic in its non-NaN parts; and the binary search of a sorted table by it */    \
__device__ __forceinline__ bool fj_cless_##S(fj_cx<T> a, fj_cx<T> b) {                    \
    const T ar = a.re, ai = a.im, br = b.re, bi = b.im;                                   \
    if (ar < br) return ai == ai || bi != bi;                                             \
    if (ar > br) return bi != bi && ai == ai;                                             \
    if (ar == br || (ar != ar && br != br)) return ai < bi || (bi != bi && ai == ai);     \
    return br != br;                                                                      \
}                                                                                         \
__device__ __forceinline__ long long fj_search_##S(const fj_cx<T> *a, long long s,        \
                                                   long long n, fj_cx<T> x, int right) {  \
    long long lo = 0, hi = n;                                                             \
    while (lo < hi) {                                                                     \
        const long long mid = lo + ((hi - lo) >> 1);                                      \
        const fj_cx<T> am = a[mid * s];                                                   \
        if (right ? !fj_cless_##S(x, am) : fj_cless_##S(am, x)) lo = mid + 1;             \
        else hi = mid;                                                                    \
    }                                                                                     \
    return lo;                                                                            \
}                                                                                         \
__device__ __forceinline__ bool fj_cnan_##S(fj_cx<T> a) { return isnan(a.re) || isnan(a.im); } \
__device__ __forceinline__ fj_cx<T> fj_cmaximum_##S(fj_cx<T> a, fj_cx<T> b) {             \
    return fj_cnan_##S(a) || fj_cge_##S(a, b) ? a : b;                                    \
}                                                                                         \
__device__ __forceinline__ fj_cx<T> fj_cminimum_##S(fj_cx<T> a, fj_cx<T> b) {             \
    return fj_cnan_##S(a) || fj_cle_##S(a, b) ? a : b;                                    \
}                                                                                         \
__device__ __forceinline__ fj_cx<T> fj_cfmax_##S(fj_cx<T> a, fj_cx<T> b) {                \
    return fj_cnan_##S(b) || fj_cge_##S(a, b) ? a : b;                                    \
}                                                                                         \
__device__ __forceinline__ fj_cx<T> fj_cfmin_##S(fj_cx<T> a, fj_cx<T> b) {                \
    return fj_cnan_##S(b) || fj_cle_##S(a, b) ? a : b;                                    \
}                                                                                         \
__device__ __forceinline__ fj_cx<T> fj_cclip_##S(fj_cx<T> x, fj_cx<T> lo, fj_cx<T> hi) {  \
    const fj_cx<T> t = fj_cnan_##S(x) || x.re > lo.re || (x.re == lo.re && x.im > lo.im) ? x : lo; \
    return fj_cnan_##S(t) || t.re < hi.re || (t.re == hi.re && t.im < hi.im) ? t : hi;    \
}

FJ_CDEF(c64, float, f)
FJ_CDEF(c128, double, )
#undef FJ_CDEF

#endif
