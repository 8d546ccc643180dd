/*
 * fj_scalar.h -- NumPy scalar semantics for fusejit's generated C kernels.
 *
 * Self-contained C99 (only <stdint.h>, <math.h>, <stdbool.h>).  Every function
 * is `static inline` and written as straight-line code (selects, no early
 * returns, no UB on any input) so that gcc can inline and if-convert it and
 * auto-vectorise the surrounding loop.  Validated against NumPy 2.4 / SciPy
 * 1.17 on x86_64 with
 *     gcc -O3 -march=native -fopenmp -fno-math-errno -fwrapv -fno-trapping-math
 * (no -ffast-math: NaN, Inf and -0.0 are honoured) by tests/test_c_semantics.py.
 *
 * Type suffixes:  b=uint8_t (NumPy bool, 0/1)  i8 i16 i32 i64 = intN_t
 *                 u8 u16 u32 u64 = uintN_t     f32=float  f64=double
 *
 * Integer functions (every integer suffix):
 *   fj_floordiv_T(a,b)  np.floor_divide; b==0 -> 0; MIN // -1 -> MIN
 *   fj_remainder_T(a,b) np.remainder (sign of divisor); b==0 -> 0; MIN % -1 -> 0
 *   fj_fmod_T(a,b)      np.fmod (sign of dividend); b==0 -> 0; MIN fmod -1 -> 0
 *   fj_power_T(a,b)     np.power, exact wrap-around; signed b<0 -> 0 (the
 *                       caller must raise NumPy's ValueError itself)
 *   fj_abs_T(a)         np.abs; abs(MIN) == MIN; identity for unsigned
 *   fj_sign_T(a)        np.sign
 *   fj_lshift_T(a,b)    np.left_shift: count taken as unsigned, >= width -> 0
 *   fj_rshift_T(a,b)    np.right_shift: count taken as unsigned, >= width ->
 *                       0, or -1 when a signed a is negative
 *   fj_maximum_T, fj_minimum_T, fj_square_T (wrapping)
 *   fj_gcd_T(a,b), fj_lcm_T(a,b)  np.gcd, np.lcm (NumPy's npy_gcd/npy_lcm)
 *   fj_bitwise_count_T(a) np.bitwise_count: the 1-bits of |a|, as uint8_t
 *   fj_bits_A_B(x)      x's bits as type B (ndarray.view; same size, ints and floats)
 *   fj_reciprocal_T(a)  np.reciprocal: NumPy computes (T)(1.0 / a) in double,
 *                       so 1 -> 1, -1 -> -1, other non-zero -> 0 and, on
 *                       x86_64 (cvttsd2si of +inf), 0 -> INT32_MIN for i32,
 *                       INT64_MIN for i64 and 0 for every other integer type.
 * Bool: fj_maximum_b (or), fj_minimum_b (and), fj_abs_b (identity).
 *
 * Float functions (f32, f64):
 *   fj_floordiv_T, fj_remainder_T   NumPy's npy_divmod algorithm (fmod, sign
 *                       fix-up, floor with snap); b==0 gives a/b resp. fmod(a,0)
 *   fj_sign_T           1/-1, +0.0 for +-0.0, NaN -> the NaN itself
 *   fj_maximum_T, fj_minimum_T  NaN-propagating; for equal operands
 *                       (+0.0 vs -0.0) the SECOND operand is returned, exactly
 *                       like NumPy's x86 SIMD and scalar loops
 *   fj_clipk_T(x,lo,hi) np.clip's loop for bounds of stride 0: NaN-propagating,
 *                       a tie keeps x (clip = fj_minimum(fj_maximum(...)) gives
 *                       the bound, as NumPy's general clip loop)
 *   fj_logaddexp_T, fj_logaddexp2_T  npy_logaddexp(2) incl. +-inf/NaN cases
 *   fj_expit_T          scipy.special.expit = 1/(1+exp(-x)) (never NaN for
 *                       finite/inf x: large |x| saturates to 0 or 1)
 *   fj_rint_T           round half to even (np.rint, np.round(x, 0))
 *   fj_square_T, fj_reciprocal_T, fj_heaviside_T(x,h0), fj_deg2rad_T,
 *   fj_rad2deg_T
 *   fj_where_T(c,a,b)   np.where's select, branch-free on the bit patterns
 *
 * Vectorisation (gcc 12, -march=native on Zen 4, also x86-64-v2/v3): every
 * function vectorises except
 *   - 64-bit floordiv/remainder/fmod: no SIMD integer divide; 8/16/32-bit
 *     ones divide exactly in float/double instead (see FJ__FDIV), 4.4x faster
 *     than scalar idiv for array/array int32 (0.50 vs 2.2 ns/element), 1.4x
 *     slower than gcc's multiply-shift for a constant divisor (0.33 vs 0.23);
 *   - float floordiv/remainder: they call libm fmod, which has no vector
 *     variant (NumPy does not vectorise these either);
 *   - logaddexp, logaddexp2, expit: they call exp/exp2/log1p and vectorise
 *     only with fj_vmath.h and FJ_LIBMVEC;
 *   - unsigned abs (identity: the loop becomes a memcpy).
 *
 * Floating-point contraction: gcc's default -ffp-contract=fast fuses
 * m + LOG2E*log1p(..) in fj_logaddexp2_* into an FMA; NumPy's is unfused, so
 * results then differ by a few ULP of the log term (many ULP where the
 * result cancels to ~0).  With -ffp-contract=off every float function here
 * is bit-identical to NumPy 2.4 on the tested inputs (same glibc libm).
 */
#ifndef FJ_SCALAR_H
#define FJ_SCALAR_H

#include <math.h>
#include <stdbool.h>
#include <stdint.h>

/* ------------------------------------------------------------------------ */
/* Integer division family                                                   */
/* ------------------------------------------------------------------------ */

/* 64-bit: integer division with a divisor that never traps: 1 when b == 0
 * or when the quotient would overflow (MIN / -1).  a / 1 == MIN is then
 * exactly NumPy's MIN // -1 result, and a % 1 == 0 its remainder.  (x86 has
 * no SIMD integer division, so these loops vectorise only for a
 * compile-time-constant divisor, which gcc strength-reduces.) */
#define FJ__SDIV(SUF, T, MINV)                                                  \
    static inline T fj_floordiv_##SUF(T a, T b)                                 \
    {                                                                           \
        const bool bad = (b == 0) | ((a == (MINV)) & (b == -1));                \
        const T d = bad ? (T)1 : b;                                             \
        const T q = (T)(a / d);                                                 \
        const T r = (T)(a % d);                                                 \
        const T fq = (T)(q - (T)((r != 0) & ((r < 0) != (d < 0))));             \
        return (b == 0) ? (T)0 : fq;                                            \
    }                                                                           \
    static inline T fj_remainder_##SUF(T a, T b)                                \
    {                                                                           \
        const bool bad = (b == 0) | ((a == (MINV)) & (b == -1));                \
        const T d = bad ? (T)1 : b;                                             \
        const T r = (T)(a % d);                                                 \
        const T fr = ((r != 0) & ((r < 0) != (d < 0))) ? (T)(r + d) : r;       \
        return (b == 0) ? (T)0 : fr;                                            \
    }                                                                           \
    static inline T fj_fmod_##SUF(T a, T b)                                     \
    {                                                                           \
        const bool bad = (b == 0) | ((a == (MINV)) & (b == -1));                \
        const T d = bad ? (T)1 : b;                                             \
        return (b == 0) ? (T)0 : (T)(a % d);                                    \
    }

#define FJ__UDIV(SUF, T)                                                        \
    static inline T fj_floordiv_##SUF(T a, T b)                                 \
    {                                                                           \
        const T d = (b == 0) ? (T)1 : b;                                        \
        return (b == 0) ? (T)0 : (T)(a / d);                                    \
    }                                                                           \
    static inline T fj_remainder_##SUF(T a, T b)                                \
    {                                                                           \
        const T d = (b == 0) ? (T)1 : b;                                        \
        return (b == 0) ? (T)0 : (T)(a % d);                                    \
    }                                                                           \
    static inline T fj_fmod_##SUF(T a, T b) { return fj_remainder_##SUF(a, b); }

/* 8/16/32-bit: divide in floating point, which vectorises (4x faster than
 * scalar idiv for array/array operands on Zen 4).  Exact: with |a| <= 2^N
 * and a mantissa of P bits (N=16,P=24 float; N=32,P=53 double) the rounding
 * error of a/b is at most 2^(N-P)/|b| < 1/|b|, while a non-integral a/b is at
 * least 1/|b| away from every integer, so floor() and trunc() of the rounded
 * quotient equal those of the exact one.  The integral quotient is converted
 * with int32 conversions only (SSE2/AVX2 have no vector float->int64) and
 * wraps to T, so MIN // -1 (== 2^(bits-1)) gives MIN like NumPy; the
 * remainder a - q*b is then computed with wrapping unsigned arithmetic
 * (MIN % -1 == 0).  FT: float type, F: its libm suffix, CONV: quotient ->
 * integer, UW: unsigned type at least as wide as unsigned int and T. */
static inline int32_t fj__q_small(float q) { return (int32_t)q; } /* |q| <= 2^16 */
static inline int32_t fj__q_i32(double q) /* q integral in [-2^31, 2^31] */
{
    const bool big = q > 2147483647.0;
    const int32_t i = (int32_t)(big ? 2147483647.0 : q);
    return big ? INT32_MIN : i;
}
static inline uint32_t fj__q_u32(double q) /* q integral in [0, 2^32) */
{
    return (uint32_t)(int32_t)(q - 2147483648.0) + 0x80000000u;
}

#define FJ__FDIV(SUF, T, FT, F, CONV, UW)                                       \
    static inline FT fj__fdivq_##SUF(T a, T b, bool floored)                    \
    {                                                                           \
        const FT q = (FT)a / ((b == 0) ? (FT)1 : (FT)b);                        \
        return floored ? floor##F(q) : trunc##F(q);                             \
    }                                                                           \
    static inline T fj_floordiv_##SUF(T a, T b)                                 \
    {                                                                           \
        const T q = (T)CONV(fj__fdivq_##SUF(a, b, true));                       \
        return (b == 0) ? (T)0 : q;                                             \
    }                                                                           \
    static inline T fj_remainder_##SUF(T a, T b)                                \
    {                                                                           \
        const UW q = (UW)CONV(fj__fdivq_##SUF(a, b, true));                     \
        const UW ub = (UW)b, ua = (UW)a;                                        \
        const T r = (T)(ua - q * ub);                                           \
        return (b == 0) ? (T)0 : r;                                             \
    }                                                                           \
    static inline T fj_fmod_##SUF(T a, T b)                                     \
    {                                                                           \
        const UW q = (UW)CONV(fj__fdivq_##SUF(a, b, false));                    \
        const UW ub = (UW)b, ua = (UW)a;                                        \
        const T r = (T)(ua - q * ub);                                           \
        return (b == 0) ? (T)0 : r;                                             \
    }

FJ__FDIV(i8, int8_t, float, f, fj__q_small, uint32_t)
FJ__FDIV(i16, int16_t, float, f, fj__q_small, uint32_t)
FJ__FDIV(i32, int32_t, double, , fj__q_i32, uint32_t)
FJ__SDIV(i64, int64_t, INT64_MIN)
FJ__FDIV(u8, uint8_t, float, f, fj__q_small, uint32_t)
FJ__FDIV(u16, uint16_t, float, f, fj__q_small, uint32_t)
FJ__FDIV(u32, uint32_t, double, , fj__q_u32, uint32_t)
FJ__UDIV(u64, uint64_t)


/* ------------------------------------------------------------------------ */
/* power, square, abs, sign, maximum, minimum, reciprocal, shifts             */
/* ------------------------------------------------------------------------ */

/* Arithmetic is done in an unsigned type at least as wide as `unsigned int`
 * (W) so that products wrap instead of being UB (uint16 * uint16 would
 * otherwise promote to a signed int and overflow).  U is the unsigned type of
 * the suffix's width.  power: square-and-multiply over every exponent bit
 * with a fixed trip count (NBITS) so the loop has no data-dependent exit and
 * gcc can unroll it and vectorise the caller's loop; the result equals
 * NumPy's a**b mod 2**NBITS. */
#if defined(__GNUC__) || defined(__clang__)
#define FJ__UNROLL _Pragma("GCC unroll 32")
#else
#define FJ__UNROLL
#endif

/* One square-and-multiply step; m is all-ones when the exponent bit is set. */
#define FJ__POWSTEP(U, W)                                                       \
    const W m = (W)0 - (W)(e & 1u);                                             \
    r = (U)(r * ((base & m) | ((W)1 & ~m)));                                    \
    base = (U)(base * base);                                                    \
    e = (U)(e >> 1);

#define FJ__INTCOMMON(SUF, T, U, W, NBITS)                                      \
    static inline T fj_square_##SUF(T a)                                        \
    {                                                                           \
        return (T)(U)((W)(U)a * (W)(U)a);                                       \
    }                                                                           \
    static inline T fj_maximum_##SUF(T a, T b) { return (a > b) ? a : b; }      \
    static inline T fj_minimum_##SUF(T a, T b) { return (a < b) ? a : b; }      \
    static inline T fj_lshift_##SUF(T a, T b)                                   \
    {                                                                           \
        const U n = (U)b;                                                       \
        const U s = (U)((W)(U)a << (n & (U)((NBITS)-1)));                       \
        return (n < (U)(NBITS)) ? (T)s : (T)0;                                  \
    }                                                                           \
    static inline T fj__ipow_##SUF(T a, U e, W r)                               \
    {                                                                           \
        W base = (W)(U)a;                                                       \
        FJ__UNROLL                                                              \
        for (int i = 0; i < ((NBITS) < 32 ? (NBITS) : 32); i++) {               \
            FJ__POWSTEP(U, W)                                                   \
        }                                                                       \
        FJ__UNROLL                                                              \
        for (int i = 32; i < (NBITS); i++) {                                    \
            FJ__POWSTEP(U, W)                                                   \
        }                                                                       \
        return (T)(U)r;                                                         \
    }

#define FJ__SINT(SUF, T, U, W, NBITS, MINV, RECIP0)                             \
    FJ__INTCOMMON(SUF, T, U, W, NBITS)                                          \
    static inline T fj_abs_##SUF(T a)                                           \
    {                                                                           \
        return (T)((a < 0) ? (U)((U)0 - (U)a) : (U)a);                          \
    }                                                                           \
    static inline W fj__uabs_##SUF(T a) { return (a < 0) ? (W)0 - (W)a : (W)a; } \
    static inline T fj_sign_##SUF(T a) { return (T)((a > 0) - (a < 0)); }       \
    static inline T fj_rshift_##SUF(T a, T b)                                   \
    {                                                                           \
        const U n = (U)b;                                                       \
        /* count >= width: arithmetic shift by width-1 gives 0 or -1 */         \
        const U c = (n < (U)(NBITS)) ? n : (U)((NBITS)-1);                      \
        return (T)(a >> c);                                                     \
    }                                                                           \
    static inline T fj_power_##SUF(T a, T b)                                    \
    {                                                                           \
        /* a zero initial accumulator makes the result 0 for b < 0 */           \
        return fj__ipow_##SUF(a, (U)b, (W)(b >= 0));                            \
    }                                                                           \
    static inline T fj_reciprocal_##SUF(T a)                                    \
    {                                                                           \
        return (a == 1) ? (T)1 : (a == -1) ? (T)-1 : (a == 0) ? (T)(RECIP0) : (T)0; \
    }

#define FJ__UINT(SUF, T, W, NBITS)                                              \
    FJ__INTCOMMON(SUF, T, T, W, NBITS)                                          \
    static inline T fj_abs_##SUF(T a) { return a; }                             \
    static inline W fj__uabs_##SUF(T a) { return (W)a; }                        \
    static inline T fj_sign_##SUF(T a) { return (T)(a > 0); }                   \
    static inline T fj_rshift_##SUF(T a, T b)                                   \
    {                                                                           \
        const T s = (T)(a >> (b & (T)((NBITS)-1)));                             \
        return (b < (T)(NBITS)) ? s : (T)0;                                     \
    }                                                                           \
    static inline T fj_power_##SUF(T a, T b) { return fj__ipow_##SUF(a, b, 1); }\
    static inline T fj_reciprocal_##SUF(T a) { return (T)(a == 1); }

/* np.gcd and np.lcm as NumPy's npy_gcd/npy_lcm: Euclid on |a| and |b| in unsigned int
 * (unsigned long long for 64-bit types; 8/16-bit operands promoted as C promotes them), lcm =
 * |a| / gcd * |b| wrapping there, the result converted back: gcd(MIN, 0) == MIN and an lcm
 * beyond the type wraps, as NumPy's.  (A loop per element: these do not vectorise.) */
#define FJ__GCD(SUF, T, W)                                                      \
    static inline W fj__gcdu_##SUF(W a, W b)                                    \
    {                                                                           \
        while (a != 0) {                                                        \
            const W c = a;                                                      \
            a = b % a;                                                          \
            b = c;                                                              \
        }                                                                       \
        return b;                                                               \
    }                                                                           \
    static inline T fj_gcd_##SUF(T a, T b)                                      \
    {                                                                           \
        return (T)fj__gcdu_##SUF(fj__uabs_##SUF(a), fj__uabs_##SUF(b));         \
    }                                                                           \
    static inline T fj_lcm_##SUF(T a, T b)                                      \
    {                                                                           \
        const W x = fj__uabs_##SUF(a), y = fj__uabs_##SUF(b);                   \
        const W g = fj__gcdu_##SUF(x, y);                                       \
        return (T)(g == 0 ? (W)0 : (W)(x / g * y));                             \
    }

FJ__SINT(i8, int8_t, uint8_t, uint32_t, 8, INT8_MIN, 0)
FJ__SINT(i16, int16_t, uint16_t, uint32_t, 16, INT16_MIN, 0)
FJ__SINT(i32, int32_t, uint32_t, uint32_t, 32, INT32_MIN, INT32_MIN)
FJ__SINT(i64, int64_t, uint64_t, uint64_t, 64, INT64_MIN, INT64_MIN)
FJ__UINT(u8, uint8_t, uint32_t, 8)
FJ__UINT(u16, uint16_t, uint32_t, 16)
FJ__UINT(u32, uint32_t, uint32_t, 32)
FJ__UINT(u64, uint64_t, uint64_t, 64)
FJ__GCD(i8, int8_t, uint32_t) FJ__GCD(i16, int16_t, uint32_t) FJ__GCD(i32, int32_t, uint32_t)
FJ__GCD(i64, int64_t, uint64_t) FJ__GCD(u8, uint8_t, uint32_t) FJ__GCD(u16, uint16_t, uint32_t)
FJ__GCD(u32, uint32_t, uint32_t) FJ__GCD(u64, uint64_t, uint64_t)

/* np.bitwise_count: the 1-bits of |a| (NumPy counts the magnitude of a signed value, so
 * bitwise_count(INT64_MIN) is 1), as a uint8; the bit-parallel count in 64 bits, which gcc
 * vectorises (and turns into popcnt where the target has it). */
static inline uint8_t fj__popcount64(uint64_t x)
{
    x = x - ((x >> 1) & 0x5555555555555555ULL);
    x = (x & 0x3333333333333333ULL) + ((x >> 2) & 0x3333333333333333ULL);
    x = (x + (x >> 4)) & 0x0f0f0f0f0f0f0f0fULL;
    return (uint8_t)((x * 0x0101010101010101ULL) >> 56);
}
#define FJ__BITCOUNT(SUF, T)                                                    \
    static inline uint8_t fj_bitwise_count_##SUF(T a)                           \
    {                                                                           \
        return fj__popcount64((uint64_t)fj__uabs_##SUF(a));                     \
    }
FJ__BITCOUNT(i8, int8_t) FJ__BITCOUNT(i16, int16_t) FJ__BITCOUNT(i32, int32_t)
FJ__BITCOUNT(i64, int64_t) FJ__BITCOUNT(u8, uint8_t) FJ__BITCOUNT(u16, uint16_t)
FJ__BITCOUNT(u32, uint32_t) FJ__BITCOUNT(u64, uint64_t)

/* ndarray.view(dtype) of the same item size: the bits reinterpreted (through a union, which
 * C99 allows and gcc and nvcc compile to nothing). */
#define FJ__BITS(A, TA, B, TB)                                                  \
    static inline TB fj_bits_##A##_##B(TA x)                                    \
    {                                                                           \
        union { TA a; TB b; } u;                                                \
        u.a = x;                                                                \
        return u.b;                                                             \
    }
FJ__BITS(i8, int8_t, u8, uint8_t) FJ__BITS(u8, uint8_t, i8, int8_t)
FJ__BITS(i16, int16_t, u16, uint16_t) FJ__BITS(u16, uint16_t, i16, int16_t)
FJ__BITS(i32, int32_t, u32, uint32_t) FJ__BITS(u32, uint32_t, i32, int32_t)
FJ__BITS(i32, int32_t, f32, float) FJ__BITS(f32, float, i32, int32_t)
FJ__BITS(u32, uint32_t, f32, float) FJ__BITS(f32, float, u32, uint32_t)
FJ__BITS(i64, int64_t, u64, uint64_t) FJ__BITS(u64, uint64_t, i64, int64_t)
FJ__BITS(i64, int64_t, f64, double) FJ__BITS(f64, double, i64, int64_t)
FJ__BITS(u64, uint64_t, f64, double) FJ__BITS(f64, double, u64, uint64_t)

/* np.negative of a float: its sign bit flipped. gcc folds `-x` of an fma (a part of a complex
 * product, inlined) into one fnmsub, (-a*b) - c, which is +0 where NumPy's -(+0) is -0
 * (-np.real(z * w) at z = 0); and PTX's neg leaves a NaN's sign open. */
static inline float fj_neg_f32(float x) { return fj_bits_u32_f32(fj_bits_f32_u32(x) ^ 0x80000000u); }
static inline double fj_neg_f64(double x) {
    return fj_bits_u64_f64(fj_bits_f64_u64(x) ^ 0x8000000000000000ull);
}

/* np.spacing: the step from |x| to the next float up (its bits plus one: inf after the
 * largest finite value, a NaN after inf), negative for x < 0 (-0.0 counts as 0). */
static inline float fj_spacing_f32(float x) {
    const float a = fabsf(x);
    const float d = fj_bits_u32_f32(fj_bits_f32_u32(a) + 1u) - a;
    return x < 0 ? -d : d;
}
static inline double fj_spacing_f64(double x) {
    const double a = fabs(x);
    const double d = fj_bits_u64_f64(fj_bits_f64_u64(a) + 1u) - a;
    return x < 0 ? -d : d;
}

/* NumPy bool (uint8_t holding 0/1). */
static inline uint8_t fj_maximum_b(uint8_t a, uint8_t b) { return (uint8_t)(a | b); }
static inline uint8_t fj_minimum_b(uint8_t a, uint8_t b) { return (uint8_t)(a & b); }
static inline uint8_t fj_abs_b(uint8_t a) { return a; }

/* ------------------------------------------------------------------------ */
/* Floating point                                                             */
/* ------------------------------------------------------------------------ */

/* F: libm suffix ("" for double, f for float); C: literal suffix. */
#define FJ__FLOAT(SUF, T, F, LN2, LOG2E, PI)                                    \
    /* npy_divmod: mod = fmod(a,b); div = (a-mod)/b; fix signs; snap floor */   \
    static inline T fj_floordiv_##SUF(T a, T b)                                 \
    {                                                                           \
        const T mod = fmod##F(a, b);                                            \
        const T q = a / b;                                                      \
        const bool fix = (mod != 0) & ((b < 0) != (mod < 0));                   \
        const T div0 = (a - mod) / b;                                           \
        const T div = fix ? div0 - (T)1 : div0;                                 \
        const T fl0 = floor##F(div);                                            \
        const T fl = (div - fl0 > (T)0.5) ? fl0 + (T)1 : fl0;                   \
        const T res = (div == 0) ? copysign##F((T)0, q) : fl;                   \
        return (b == 0) ? q : res;                                              \
    }                                                                           \
    static inline T fj_remainder_##SUF(T a, T b)                                \
    {                                                                           \
        const T mod = fmod##F(a, b);                                            \
        const bool fix = (mod != 0) & ((b < 0) != (mod < 0));                   \
        const T m1 = fix ? mod + b : mod;                                       \
        const T res = (mod == 0) ? copysign##F((T)0, b) : m1;                   \
        return (b == 0) ? mod : res;                                            \
    }                                                                           \
    static inline T fj_sign_##SUF(T x)                                          \
    {                                                                           \
        return (x > 0) ? (T)1 : (x < 0) ? (T)-1 : (x == 0) ? (T)0 : x;          \
    }                                                                           \
    /* NaN first, then the plain select: this shape stays branch-free when     \
       nested (clip = minimum(maximum(x, lo), hi)); `(a > b) | (a != a)` made  \
       gcc branch, and without -fno-trapping-math it then cannot vectorise. */ \
    static inline T fj_maximum_##SUF(T a, T b)                                  \
    {                                                                           \
        return (a != a) ? a : ((a > b) ? a : b);                                \
    }                                                                           \
    static inline T fj_minimum_##SUF(T a, T b)                                  \
    {                                                                           \
        return (a != a) ? a : ((a < b) ? a : b);                                \
    }                                                                           \
    /* np.clip with bounds of stride 0: a tie (+0 vs -0) keeps the value. */    \
    static inline T fj_clipk_##SUF(T x, T lo, T hi)                             \
    {                                                                           \
        const T t = (x != x) ? x : ((x >= lo) ? x : lo);                        \
        return (t != t) ? t : ((t <= hi) ? t : hi);                             \
    }                                                                           \
    /* x == y handles equal infinities; NaN inputs return x - y (a NaN). */     \
    static inline T fj_logaddexp_##SUF(T x, T y)                                \
    {                                                                           \
        const T d = x - y;                                                      \
        const T m = (d > 0) ? x : y;                                            \
        const T r = m + log1p##F(exp##F(-fabs##F(d)));                          \
        const T r1 = (d != d) ? d : r;                                          \
        return (x == y) ? x + (T)(LN2) : r1;                                    \
    }                                                                           \
    static inline T fj_logaddexp2_##SUF(T x, T y)                               \
    {                                                                           \
        const T d = x - y;                                                      \
        const T m = (d > 0) ? x : y;                                            \
        const T r = m + (T)(LOG2E) * log1p##F(exp2##F(-fabs##F(d)));            \
        const T r1 = (d != d) ? d : r;                                          \
        return (x == y) ? x + (T)1 : r1;                                        \
    }                                                                           \
    static inline T fj_expit_##SUF(T x) { return (T)1 / ((T)1 + exp##F(-x)); }  \
    static inline T fj_rint_##SUF(T x) { return rint##F(x); }                   \
    static inline T fj_square_##SUF(T x) { return x * x; }                      \
    static inline T fj_reciprocal_##SUF(T x) { return (T)1 / x; }               \
    static inline T fj_heaviside_##SUF(T x, T h0)                               \
    {                                                                           \
        return (x < 0) ? (T)0 : (x > 0) ? (T)1 : (x == 0) ? h0 : x;             \
    }                                                                           \
    static inline T fj_deg2rad_##SUF(T x) { return x * ((T)(PI) / (T)180); }    \
    static inline T fj_rad2deg_##SUF(T x) { return x * ((T)180 / (T)(PI)); }    \
    /* np.frexp's two results: the mantissa, and the exponent (0 for inf and NaN) */ \
    static inline T fj_frexpm_##SUF(T x) { int e; return frexp##F(x, &e); }       \
    static inline int32_t fj_frexpe_##SUF(T x)                                  \
    {                                                                           \
        int e = 0;                                                              \
        (void)frexp##F(x, &e);                                                  \
        return isfinite(x) ? (int32_t)e : 0;                                    \
    }

FJ__FLOAT(f32, float, f, 0.693147180559945309417232121458176568f,
          1.442695040888963407359924681001892137f,
          3.141592653589793238462643383279502884f)
FJ__FLOAT(f64, double, , 0.693147180559945309417232121458176568,
          1.442695040888963407359924681001892137,
          3.141592653589793238462643383279502884)

/* np.where for float32/float64 results: fj_where_T(c, a, b) is c ? a : b with both arms
 * evaluated and the choice made on their bit patterns (an and/andnot/or blend, vblendv or a
 * masked move once vectorised), so NaN payloads and signed zeros pass through untouched.
 * Written as `c ? a : b`, gcc (default -ftrapping-math) will not speculate a floating-point
 * operation inside an arm and leaves the loop scalar (xent_grad's row kernel on x86-64-v3:
 * 1.1 vs 0.40 ns a point).  With AVX-512VL gcc vectorises `?:` itself through masked
 * arithmetic (masked lanes raise nothing) in fewer instructions than the blend (two compares
 * and an or: once measured 3-7% slower on a 2^22 float32 where), so float64 keeps `?:`
 * there; but not a float32 select whose value is widened into a float64 sum (a masked
 * float32 sum: gcc 12 "control flow in loop", 25 vs 4.9 ms for np.sum(np.where(m, (p - y)
 * ** 2, 0)) over 2^24 on a 2-core EPYC, where a stored float32 where measured the same
 * either way, within noise): float32 takes the blend everywhere.
 * The CUDA build has no vectoriser to help: it keeps the plain select. */
#define FJ__WHERE(SUF, T, U)                                                    \
    static inline T fj_where_##SUF(bool c, T a, T b)                            \
    {                                                                           \
        union { T f; U u; } x, y;                                               \
        const U m = (U)0 - (U)c;                                                \
        x.f = a;                                                                \
        y.f = b;                                                                \
        x.u = (x.u & m) | (y.u & ~m);                                           \
        return x.f;                                                             \
    }
#if defined(__CUDACC__) || defined(__AVX512VL__)
static inline double fj_where_f64(bool c, double a, double b) { return c ? a : b; }
#else
FJ__WHERE(f64, double, uint64_t)
#endif
#if defined(__CUDACC__)
static inline float fj_where_f32(bool c, float a, float b) { return c ? a : b; }
#else
FJ__WHERE(f32, float, uint32_t)
#endif

/* Gather indices (lowering: Load.index). An index array's element, read as int64 the way
 * NumPy converts index arrays to intp, made an element index into an axis of n elements:
 *   fj_ix_bad(i, n)    the index is out of range (negative ones count from the end): the
 *                      kernel reports NumPy's IndexError (op table ERR_INDEX_RANGE)
 *   fj_ix_raise(i, n)  the element it names, or 0 when it is out of range (the load stays
 *                      inside the array while the error is reported)
 *   fj_ix_wrap(i, n)   np.take(mode="wrap"): i modulo n (n > 0)
 *   fj_ix_clip(i, n)   np.take(mode="clip"): i clamped to [0, n - 1] (n > 0)       */
static inline int fj_ix_bad(int64_t i, int64_t n)
{
    const int64_t k = i + ((i < 0) ? n : 0);
    return (uint64_t)k >= (uint64_t)n;
}
static inline int64_t fj_ix_raise(int64_t i, int64_t n)
{
    const int64_t k = i + ((i < 0) ? n : 0);
    return ((uint64_t)k < (uint64_t)n) ? k : 0;
}
static inline int64_t fj_ix_wrap(int64_t i, int64_t n)
{
    const int64_t r = i % n;
    return (r < 0) ? r + n : r;
}
static inline int64_t fj_ix_clip(int64_t i, int64_t n)
{
    return (i < 0) ? 0 : ((i >= n) ? n - 1 : i);
}

#endif /* FJ_SCALAR_H */
