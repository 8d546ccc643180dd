/*
 * fj_complex.h -- NumPy's complex64 / complex128 arithmetic for fusejit's generated C.
 *
 * Values are C99 `float _Complex` / `double _Complex` (the same memory layout as NumPy's
 * complex64 / complex128: real part, then imaginary part).  C's own `*` and `/` on complex
 * values follow Annex G (infinity recovery, scaled division), which NumPy does not, so every
 * operation whose special values differ is a helper here written over the two real parts the
 * way NumPy's ufunc loops compute it:
 *
 *   fj_cmul_T(a,b)    np.multiply: (ar*br - ai*bi, ar*bi + ai*br) with one rounding in each
 *                     part (fma, as NumPy's SIMD loops on x86-64), no Annex G recovery
 *   fj_csquare_T(a)   np.square: (fma(ar, ar, -ai*ai), ar*ai + ai*ar) as NumPy
 *   fj_cdiv_T(a,b)    np.divide: Smith's algorithm as in NumPy's complex divide loop (a zero
 *                     divisor gives ar/|0|, ai/|0|)
 *   fj_crecip_T(a)    np.reciprocal: NumPy's branchy form of 1/a
 *   fj_cpowi_T(a,n)   np.power with an integer exponent |n| < 100 (frontend/ufuncs.py refuses
 *                     others): NumPy's nc_pow (n == 0 -> 1, a == 0 -> 0 or NaN, else repeated
 *                     plain products fj_cprod_T, a negative n then 1 / that by fj_cdiv_T)
 *   fj_clt_T etc.     np.less ... : lexicographic, NaN-aware as NumPy's CLT/CLE/CGT/CGE
 *   fj_cabs_T(a)      np.abs: hypot of the parts (libm / libmvec), a real result
 *   cexp / clog / csqrt of libm: NumPy's own loops call them too (npy_cexp -> cexp).
 *
 * gcc 12's SLP pattern matcher fuses a difference `x - y*z` beside a sum `u + v*w` in the
 * other part into one vfmaddsub even under -ffp-contract=off, which rounds once where NumPy
 * rounds twice; FJ_NOFMA (__builtin_assoc_barrier) keeps such a product a product.
 *
 * Suffixes: c64 = float _Complex, c128 = double _Complex.
 */
#ifndef FJ_COMPLEX_H
#define FJ_COMPLEX_H
#include <math.h>
#include <stdint.h>

float _Complex cexpf(float _Complex);
double _Complex cexp(double _Complex);
float _Complex clogf(float _Complex);
double _Complex clog(double _Complex);
float _Complex csqrtf(float _Complex);
double _Complex csqrt(double _Complex);

/* A product that gcc may not fuse into an add/sub: see the header comment. */
#define FJ_NOFMA(x) __builtin_assoc_barrier(x)

#define FJ_CDEF(S, T, F)                                                                   \
static inline T _Complex fj_cpack_##S(T r, T i) { return __builtin_complex(r, i); }       \
static inline T _Complex fj_cmul_##S(T _Complex a, T _Complex b) {                        \
    const T ar = __real__ a, ai = __imag__ a, br = __real__ b, bi = __imag__ b;           \
    return __builtin_complex(__builtin_fma##F(ar, br, -(ai * bi)),                        \
                             __builtin_fma##F(ar, bi, ai * br));                          \
}                                                                                         \
static inline T _Complex fj_csquare_##S(T _Complex a) {                                   \
    const T ar = __real__ a, ai = __imag__ a;                                             \
    return __builtin_complex(__builtin_fma##F(ar, ar, -(ai * ai)), ar * ai + ai * ar);    \
}                                                                                         \
static inline T _Complex fj_cdiv_##S(T _Complex a, T _Complex b) {                        \
    const T ar = __real__ a, ai = __imag__ a, br = __real__ b, bi = __imag__ b;           \
    const T abr = fabs##F(br), abi = fabs##F(bi);                                         \
    if (abr >= abi) {                                                                     \
        if (abr == 0 && abi == 0)                                                         \
            return __builtin_complex(ar / abr, ai / abr);                                 \
        const T rat = bi / br, scl = (T)1.0 / (br + bi * rat);                            \
        return __builtin_complex((ar + ai * rat) * scl, (ai - FJ_NOFMA(ar * rat)) * scl);           \
    }                                                                                     \
    const T rat = br / bi, scl = (T)1.0 / (bi + br * rat);                                \
    return __builtin_complex((ar * rat + ai) * scl, (FJ_NOFMA(ai * rat) - ar) * scl);               \
}                                                                                         \
static inline T _Complex fj_crecip_##S(T _Complex a) {                                    \
    const T ar = __real__ a, ai = __imag__ a;                                             \
    if (fabs##F(ai) <= fabs##F(ar)) {                                                     \
        const T r = ai / ar, d = ar + ai * r;                                             \
        return __builtin_complex((T)1 / d, -r / d);                                       \
    }                                                                                     \
    const T r = ar / ai, d = ar * r + ai;                                                 \
    return __builtin_complex(r / d, (T)-1 / d);                                           \
}                                                                                         \
static inline T _Complex fj_cprod_##S(T _Complex a, T _Complex b) {                       \
    const T ar = __real__ a, ai = __imag__ a, br = __real__ b, bi = __imag__ b;           \
    return __builtin_complex(FJ_NOFMA(ar * br) - ai * bi, ar * bi + ai * br);             \
}                                                                                         \
static inline T _Complex fj_cpowi_##S(T _Complex a, int64_t n) {                          \
    if (n == 0) return __builtin_complex((T)1, (T)0);                                     \
    if (__real__ a == 0 && __imag__ a == 0)                                               \
        return n > 0 ? __builtin_complex((T)0, (T)0) : __builtin_complex((T)NAN, (T)NAN); \
    if (n == 1) return a;                                                                 \
    if (n == 2) return fj_cprod_##S(a, a);                                                \
    if (n == 3) return fj_cprod_##S(a, fj_cprod_##S(a, a));                               \
    const int64_t m = n < 0 ? -n : n;                                                     \
    T _Complex acc = __builtin_complex((T)1, (T)0), p = a;                                \
    for (int64_t mask = 1;; mask <<= 1) {                                                 \
        if (m & mask) acc = fj_cprod_##S(acc, p);                                         \
        if (m < (mask << 1)) break;                                                       \
        p = fj_cprod_##S(p, p);                                                           \
    }                                                                                     \
    return n < 0 ? fj_cdiv_##S(__builtin_complex((T)1, (T)0), acc) : acc;                 \
}                                                                                         \
static inline T fj_cabs_##S(T _Complex a) { return hypot##F(__real__ a, __imag__ a); }    \
static inline int fj_clt_##S(T _Complex a, T _Complex b) {                                \
    const T xr = __real__ a, xi = __imag__ a, yr = __real__ b, yi = __imag__ b;           \
    return (xr < yr && !isnan(xi) && !isnan(yi)) || (xr == yr && xi < yi);                \
}                                                                                         \
static inline int fj_cle_##S(T _Complex a, T _Complex b) {                                \
    const T xr = __real__ a, xi = __imag__ a, yr = __real__ b, yi = __imag__ b;           \
    return (xr < yr && !isnan(xi) && !isnan(yi)) || (xr == yr && xi <= yi);               \
}                                                                                         \
static inline int fj_cgt_##S(T _Complex a, T _Complex b) {                                \
    const T xr = __real__ a, xi = __imag__ a, yr = __real__ b, yi = __imag__ b;           \
    return (xr > yr && !isnan(xi) && !isnan(yi)) || (xr == yr && xi > yi);                \
}                                                                                         \
static inline int fj_cge_##S(T _Complex a, T _Complex b) {                                \
    const T xr = __real__ a, xi = __imag__ a, yr = __real__ b, yi = __imag__ b;           \
    return (xr > yr && !isnan(xi) && !isnan(yi)) || (xr == yr && xi >= yi);               \
}

FJ_CDEF(c64, float, f)
FJ_CDEF(c128, double, )
#undef FJ_CDEF
#endif
