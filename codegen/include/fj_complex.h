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
 *   fj_cpow_T(a,b)    np.power, any exponent: NumPy's nc_pow (an integer exponent |n| < 100 is
 *                     fj_cpowi_T; b == 0 -> 1; a == 0 -> 0 where b's real part is > 0, else NaN;
 *                     else libm's cpow, as NumPy's npy_cpow calls it)
 *   fj_clt_T etc.     np.less ... : lexicographic, NaN-aware as NumPy's CLT/CLE/CGT/CGE
 *   fj_cmaximum_T(a,b) np.maximum / np.minimum (fj_cminimum_T): a where a has a NaN part or
 *                     CGE(a, b) (CLE), else b, as NumPy's loop: a NaN in either operand wins,
 *                     the first one on ties; fj_cfmax_T / fj_cfmin_T: a where b has a NaN part
 *                     or CGE(a, b) (CLE), else b (the non-NaN operand wins)
 *   fj_cclip_T(x,lo,hi) np.clip (NumPy's clip loop, not maximum/minimum): t = x where x has a
 *                     NaN part or x > lo in plain lexicographic order, else lo; then t where t
 *                     has a NaN part or t < hi, else hi (ties go to the bound)
 *   fj_cabs_T(a)      np.abs: hypot of the parts (libm / libmvec), a real result
 *   cexp / clog / csqrt of libm: NumPy's own loops call them too (npy_cexp -> cexp), and so
 *                     csin ccos ctan csinh ccosh ctanh casin cacos catan casinh cacosh catanh
 *   fj_clog2_T / fj_clog10_T / fj_cexp2_T  NumPy's nc_log2/nc_log10 (clog, then both parts
 *                     times log2(e) / log10(e)) and nc_exp2 (cexp of both parts times ln 2)
 *   fj_clog1p_T(a)    NumPy's nc_log1p: (log(hypot(ar + 1, ai)), atan2(ai, ar + 1))
 *   fj_cexpm1_T(a)    NumPy's nc_expm1: (expm1(ar) cos(ai) - 2 sin(ai/2)^2, exp(ar) sin(ai))
 *   fj_csign_T(a)     np.sign (NumPy 2): a / |a|, with NumPy's branches for Inf, NaN and 0
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

/* libm's functions under names gcc does not know as builtins (fj_lm_csin is libm's csin):
 * gcc would fold a call with constant operands at compile time, correctly rounded (MPC /
 * MPFR), where libm -- and so NumPy -- may round the other way. */
#define FJ_LM(R, name, ...) R fj_lm_##name(__VA_ARGS__) __asm__(#name);
#define FJ_CLIBM(name)                                                                    \
FJ_LM(float _Complex, name##f, float _Complex) FJ_LM(double _Complex, name, double _Complex)
#define FJ_RLIBM(name) FJ_LM(float, name##f, float) FJ_LM(double, name, double)
FJ_CLIBM(cexp) FJ_CLIBM(clog) FJ_CLIBM(csqrt) FJ_CLIBM(csin) FJ_CLIBM(ccos) FJ_CLIBM(ctan)
FJ_CLIBM(csinh) FJ_CLIBM(ccosh) FJ_CLIBM(ctanh) FJ_CLIBM(casin) FJ_CLIBM(cacos)
FJ_CLIBM(catan) FJ_CLIBM(casinh) FJ_CLIBM(cacosh) FJ_CLIBM(catanh)
FJ_RLIBM(log) FJ_RLIBM(exp) FJ_RLIBM(expm1) FJ_RLIBM(sin) FJ_RLIBM(cos)
FJ_LM(float, hypotf, float, float) FJ_LM(double, hypot, double, double)
FJ_LM(float, atan2f, float, float) FJ_LM(double, atan2, double, double)
FJ_LM(float _Complex, cpowf, float _Complex, float _Complex)
FJ_LM(double _Complex, cpow, double _Complex, double _Complex)
#undef FJ_CLIBM
#undef FJ_RLIBM
#undef FJ_LM

/* A product that gcc may not fuse into an add/sub: see the header comment. */
#define FJ_NOFMA(x) __builtin_assoc_barrier(x)

/* complex128 -> complex64 (astype): each part rounded to float. gcc 12's SLP vectoriser folds
 * (double _Complex)(float _Complex)z back to z at -O2 and above, the rounding lost (also when
 * the parts are rounded one by one into __builtin_complex); an empty asm on the rounded parts
 * keeps them. */
#if defined(__x86_64__)
#define FJ_KEEP_F32(r, i) __asm__("" : "+x"(r), "+x"(i))
#else
#define FJ_KEEP_F32(r, i) __asm__("" : "+g"(r), "+g"(i))
#endif
static inline float _Complex fj_cnarrow_c64(double _Complex a) {
    float r = (float)__real__ a, i = (float)__imag__ a;
    FJ_KEEP_F32(r, i);
    return __builtin_complex(r, i);
}

/* (negation flips sign bits: fj_neg_T, fj_scalar.h) */
#define FJ_CDEF(S, T, F, R)                                                               \
static inline T _Complex fj_cpack_##S(T r, T i) { return __builtin_complex(r, i); }       \
static inline T _Complex fj_cneg_##S(T _Complex a) {                                      \
    return __builtin_complex(fj_neg_##R(__real__ a), fj_neg_##R(__imag__ a));            \
}                                                                                         \
static inline T _Complex fj_cconj_##S(T _Complex a) {                                     \
    return __builtin_complex(__real__ a, fj_neg_##R(__imag__ a));                         \
}                                                                                         \
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
        return __builtin_complex((ar + ai * rat) * scl, (ai - FJ_NOFMA(ar * rat)) * scl); \
    }                                                                                     \
    const T rat = br / bi, scl = (T)1.0 / (bi + br * rat);                                \
    return __builtin_complex((ar * rat + ai) * scl, (FJ_NOFMA(ai * rat) - ar) * scl);     \
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
static inline T _Complex fj_cpow_##S(T _Complex a, T _Complex b) {                        \
    const T br = __real__ b, bi = __imag__ b;                                             \
    if (bi == 0 && fabs##F(br) < 100 && br == (T)(int64_t)br)                             \
        return fj_cpowi_##S(a, (int64_t)br);                                              \
    if (br == 0 && bi == 0) return __builtin_complex((T)1, (T)0);                         \
    if (__real__ a == 0 && __imag__ a == 0)                                               \
        return br > 0 ? __builtin_complex((T)0, (T)0) : __builtin_complex((T)NAN, (T)NAN); \
    return fj_lm_cpow##F(a, b);                                                           \
}                                                                                         \
static inline T fj_cabs_##S(T _Complex a) { return hypot##F(__real__ a, __imag__ a); }    \
static inline T _Complex fj_cscale_##S(T _Complex a, T c) {                               \
    return __builtin_complex(__real__ a * c, __imag__ a * c);                             \
}                                                                                         \
static inline T _Complex fj_clog2_##S(T _Complex a) {                                     \
    return fj_cscale_##S(fj_lm_clog##F(a), (T)1.442695040888963407359924681001892137L);   \
}                                                                                         \
static inline T _Complex fj_clog10_##S(T _Complex a) {                                    \
    return fj_cscale_##S(fj_lm_clog##F(a), (T)0.434294481903251827651128918916605082L);   \
}                                                                                         \
static inline T _Complex fj_cexp2_##S(T _Complex a) {                                     \
    return fj_lm_cexp##F(fj_cscale_##S(a, (T)0.693147180559945309417232121458176568L));   \
}                                                                                         \
static inline T _Complex fj_clog1p_##S(T _Complex a) {                                    \
    const T r = __real__ a + 1, i = __imag__ a;                                           \
    return __builtin_complex(fj_lm_log##F(fj_lm_hypot##F(r, i)),                          \
                             fj_lm_atan2##F(i, r));                                       \
}                                                                                         \
static inline T _Complex fj_cexpm1_##S(T _Complex a) {                                    \
    const T r = __real__ a, i = __imag__ a, h = fj_lm_sin##F(i / 2);                      \
    const T e = FJ_NOFMA(fj_lm_expm1##F(r) * fj_lm_cos##F(i));                            \
    return __builtin_complex(e - FJ_NOFMA(2 * h * h),                                     \
                             fj_lm_exp##F(r) * fj_lm_sin##F(i));                          \
}                                                                                         \
static inline T _Complex fj_csign_##S(T _Complex a) {                                     \
    const T r = __real__ a, i = __imag__ a, m = fj_lm_hypot##F(r, i);                     \
    if (isnan(m)) return __builtin_complex((T)NAN, (T)NAN);                               \
    if (isinf(m)) {                                                                       \
        if (isinf(r))                                                                     \
            return isinf(i) ? __builtin_complex((T)NAN, (T)NAN)                           \
                            : __builtin_complex(r > 0 ? (T)1 : (T)-1, (T)0);              \
        return __builtin_complex((T)0, i > 0 ? (T)1 : (T)-1);                             \
    }                                                                                     \
    if (m == 0) return __builtin_complex((T)0, (T)0);                                     \
    return __builtin_complex(r / m, i / m);                                               \
}                                                                                         \
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
}                                                                                          \
static inline int fj_cnan_##S(T _Complex a) { return isnan(__real__ a) || isnan(__imag__ a); } \
static inline T _Complex fj_cmaximum_##S(T _Complex a, T _Complex b) {                    \
    return fj_cnan_##S(a) || fj_cge_##S(a, b) ? a : b;                                    \
}                                                                                         \
static inline T _Complex fj_cminimum_##S(T _Complex a, T _Complex b) {                    \
    return fj_cnan_##S(a) || fj_cle_##S(a, b) ? a : b;                                    \
}                                                                                         \
static inline T _Complex fj_cfmax_##S(T _Complex a, T _Complex b) {                       \
    return fj_cnan_##S(b) || fj_cge_##S(a, b) ? a : b;                                    \
}                                                                                         \
static inline T _Complex fj_cfmin_##S(T _Complex a, T _Complex b) {                       \
    return fj_cnan_##S(b) || fj_cle_##S(a, b) ? a : b;                                    \
}                                                                                         \
static inline T _Complex fj_cclip_##S(T _Complex x, T _Complex lo, T _Complex hi) {       \
    const T xr = __real__ x, xi = __imag__ x, lr = __real__ lo, li = __imag__ lo;         \
    const T _Complex t = fj_cnan_##S(x) || xr > lr || (xr == lr && xi > li) ? x : lo;     \
    const T tr = __real__ t, ti = __imag__ t, hr = __real__ hi, hi_ = __imag__ hi;        \
    return fj_cnan_##S(t) || tr < hr || (tr == hr && ti < hi_) ? t : hi;                  \
}

FJ_CDEF(c64, float, f, f32)
FJ_CDEF(c128, double, , f64)
#undef FJ_CDEF
#endif
