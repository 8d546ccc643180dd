/*
 * fj_vpow.h -- np.power for float32 (and float64 with a small integer exponent), written so
 * that gcc vectorises it inside `#pragma omp simd` loops on every x86-64 (SSE2, AVX2,
 * AVX-512): plain double arithmetic, bit reinterpretation through memcpy, bit-blend selects
 * instead of branches, no libm calls.
 *
 *   fj_pow_f32(x, y)   powf(x, y) -- what generated code calls for float32 np.power
 *   fj_pow_f64(x, y)   pow(x, y)  -- float64
 *
 * NumPy computes float power with libm's pow/powf (correctly rounded in all but rare cases),
 * after its fast paths for the exponents 1, 2 and 0.5 (lowering/simplify.py rewrites those
 * when NumPy takes them).  Both paths below compute in double and round once to float32, so
 * they give NumPy's bits except where the exact result lies within ~2^-25 (integer path) or
 * ~2^-12 (general path) of a rounding boundary:
 *
 *   integer path   y a compile-time constant integer, |y| <= 64 (after inlining: `x ** 3`,
 *                  the staged loops' `const float v6 = 0x1.8p+1f`): square-and-multiply on x
 *                  in double (x^2 is exact, each further product one rounding of 2^-53),
 *                  1 / x^|y| for y < 0.  Signs, zeros, infinities and NaN come out of the
 *                  arithmetic as C's pow has them (pow(x, 0) = 1 for NaN x too).
 *   general path   |x|^y = 2^(y log2|x|) in double: log2 from m 2^e (m in [sqrt(1/2),
 *                  sqrt(2)), every float a normal double) as 2 atanh(s), s = (m-1)/(m+1),
 *                  = 2s + 2s^3 Q(s^2), Q of degree 4 (relative error < 2^-43); 2^t for
 *                  t = k + f, |f| <= 1/2, by a degree-8 polynomial (< 2^-40) and the exponent
 *                  bits of 2^k (t clamped to +-200, beyond float's range); then C99's special
 *                  cases by selects (y = 0 or x = 1 -> 1; x = -1, y = +-inf -> 1; x < 0 finite
 *                  and y finite non-integer -> NaN; odd integer y keeps x's sign, -0 and -inf
 *                  included).  Coefficients: IRLS minimax fits in the manner of
 *                  benchmarks/vmath_fit.py, in double.
 *
 * fj_pow_f64 with a compile-time constant integer y, |y| <= 64 (x ** 3 in float64): the same
 * square-and-multiply in double-double (the error of each product recovered by an fma), the
 * pair summed once at the end: error ~0.5 ULP + 2^-100 relative, NumPy's bits but for rare
 * ties.  Needs a fast fma (__FP_FAST_FMA); other exponents, and builds without FMA, call
 * pow (libmvec's vector pow with FJ_LIBMVEC).
 *
 * Accuracy, exhaustive over all 2^32 float32 x for each exponent below (odd integer y: the
 * 2^31 non-negative x, the negative ones checked to be exactly -f(-x)), in the vectorised loops
 * (benchmarks/vmath_accuracy.c, gcc 12.2 -O3 -march=native on Zen 5, -ffp-contract=off), against
 * glibc 2.36's double pow, ULP at the unrounded double reference (2^-149 below 2^-126):
 *   function                      max ULP   not correctly rounded   special  odd  monotonic
 *   pow3   (y = 3, integer path)   0.5000    0                       0        0    0
 *   powm2  (y = -2, integer path)  0.5000    0                       0        -    -
 *   pow7   (y = 7, integer path)   0.5000    0                       0        0    0
 *   powr3  (y = 3 at run time)     0.5000    5725 x2                 0        0    0
 *   pow25  (y = 2.5)               0.5000    5024                    0        -    -
 *   powm15 (y = -1.5)              0.5000    8423                    0        -    -
 * (max ULP 0.5000: below 0.50005.)  -march=x86-64-v3 gives the same bits (explicit fma, no
 * contraction: checked on 2^22 inputs per function); -march=x86-64 (no FMA: a * b + c) the same
 * figures on tests/test_vmath.py's 2^20-input sample.
 * NumPy's own float32 power on an AVX-512 machine (its SIMD loop) differs from the correctly
 * rounded result for ~7% of random inputs (x ** 3, x ** 2.5), by up to 1 ULP (tests/test_vmath.py
 * checks <= 1.5 ULP).
 *
 * Speed (one Zen 5 core, 4096 floats in L1, ns per element): y = 3 0.07 (AVX-512) / 0.12
 * (x86-64-v3) / 0.24 (x86-64); general path 1.27 / 2.4 / 45 (not vectorised on SSE2: it needs
 * blends; a per-element latency chain when scalar).  libmvec's powf calls the scalar powf for
 * every lane with a negative base, which is what made `0.044715 * x ** 3` in gelu 28x the
 * bandwidth bound.
 *
 * Why y = 3 stays in double on AVX2 (session 11, benchmarks/vpow_cube_exact.c: every float
 * against the cube rounded exactly in 128-bit integers).  The double path is correctly rounded
 * for all 2^32 inputs; glibc's powf (NumPy's float32 power without AVX-512) misses 477841 of
 * the finite non-negative ones; NumPy's AVX-512 loop ~10% of random ones (by up to 1 ULP).  A
 * float32-only cube (x2 = x*x, e2 = fmaf(x, x, -x2) exact, fmaf(x2, x, e2*x)) keeps 8 lanes
 * per ymm instead of 2 x 4 doubles and is correctly rounded for |x| in [2^-33, 2^51), but
 * wrong for 2.1 million x in [2^-50, 2^-33) (e2*x drops below 2^-126 and loses bits; subnormal
 * results need the product's remainder and a tie test, since scaling x up and the result down
 * rounds twice) and for |x| >= 2^51 (overflow to NaN or -inf).  In the gelu loop
 * (x86-64-v3, L1, one core) the bare 4-instruction float cube already costs 0.09 ns per element
 * over x * x * x and the double path 0.24; with the clamps and the subnormal fix the float cube
 * would cost more than the conversions it saves.
 */
#ifndef FJ_VPOW_H
#define FJ_VPOW_H

#include <math.h>
#include <stdint.h>
#include <string.h>

static inline uint64_t fj__f64_bits(double x) {
    uint64_t u;
    memcpy(&u, &x, sizeof u);
    return u;
}

static inline double fj__f64_from_bits(uint64_t u) {
    double x;
    memcpy(&x, &u, sizeof x);
    return x;
}

static inline uint32_t fj__pw_f32_bits(float x) {
    uint32_t u;
    memcpy(&u, &x, sizeof u);
    return u;
}

static inline float fj__pw_f32_from_bits(uint32_t u) {
    float x;
    memcpy(&x, &u, sizeof x);
    return x;
}

/* c ? a : b as a bit blend (a `?:` would let gcc move either side's work under a branch that
 * it cannot if-convert back without AVX-512 masks). */
static inline double fj__pw_sel64(int c, double a, double b) {
    const uint64_t m = 0ull - (uint64_t)(c != 0);
    return fj__f64_from_bits((fj__f64_bits(a) & m) | (fj__f64_bits(b) & ~m));
}

static inline float fj__pw_sel32(int c, float a, float b) {
    const uint32_t m = 0u - (uint32_t)(c != 0);
    return fj__pw_f32_from_bits((fj__pw_f32_bits(a) & m) | (fj__pw_f32_bits(b) & ~m));
}

/* x^n in double, n a constant integer with |n| <= 64 (the steps fold away after inlining). */
static inline double fj__pw_ipow(double x, int n) {
    const unsigned k = (unsigned)(n < 0 ? -n : n);
    double r = 1.0, b = x;
#pragma GCC unroll 7
    for (int i = 0; i < 7; i++) {
        if (k >> i == 0) break;
        if ((k >> i) & 1u) r = r * b;
        if (k >> (i + 1)) b = b * b;
    }
    return n < 0 ? 1.0 / r : r;
}

#if defined(__FP_FAST_FMA)
#define FJ__PW_FMA(a, b, c) fma(a, b, c)
#else
#define FJ__PW_FMA(a, b, c) ((a) * (b) + (c))
#endif

/* log2(a) for a double a > 0 finite (every float, subnormals included, is a normal double):
 * a = m 2^e, m in [sqrt(1/2), sqrt(2)); ln m = 2 atanh(s) = 2 s + 2 s^3 Q(s^2) with
 * s = (m-1)/(m+1), |s| <= 0.1716, Q of degree 4 (relative error 2^-36.4 of Q, < 2^-43 of
 * ln m; benchmarks/vmath_fit.py style IRLS fit). */
static inline double fj__pw_log2(double a) {
    /* e + 1024 from the exponent field of a / sqrt(1/2), as unsigned arithmetic (no 64-bit
     * arithmetic shift on AVX2), and as a double by the 2^52 trick (no int64 -> double) */
    const uint64_t u = fj__f64_bits(a);
    const uint64_t eb = (u - 0x3fe6a09e667f3bcdull + (1ull << 62)) >> 52;
    const double m = fj__f64_from_bits(u - ((eb - 1024u) << 52));
    const double e = fj__f64_from_bits(0x4330000000000000ull | eb) - (0x1p52 + 1024.0);
    const double s = (m - 1.0) / (m + 1.0), s2 = s * s;
    double q = FJ__PW_FMA(0x1.8c9517a05c701p-4, s2, 0x1.c67a5e38807c4p-4);
    q = FJ__PW_FMA(q, s2, 0x1.249324eb8f7bdp-3);
    q = FJ__PW_FMA(q, s2, 0x1.999998c99b85ep-3);
    q = FJ__PW_FMA(q, s2, 0x1.55555555650e0p-2);
    const double lnm = FJ__PW_FMA(2.0 * s, s2 * q, 2.0 * s);
    return FJ__PW_FMA(lnm, 0x1.71547652b82fep+0, e);
}

/* 2^t for t in [-200, 200] or NaN (the caller clamps), in double: t = k + f, |f| <= 1/2,
 * 2^f by a degree-8 polynomial (relative error 2^-40.2), 2^k from the exponent bits. */
static inline double fj__pw_exp2(double t) {
    const double magic = 0x1.8p52;
    const double sum = t + magic;
    const double f = t - (sum - magic); /* exact */
    double p = FJ__PW_FMA(0x1.61afc9f90e000p-20, f, 0x1.00dad25f6e700p-16);
    p = FJ__PW_FMA(p, f, 0x1.430acca8efb40p-13);
    p = FJ__PW_FMA(p, f, 0x1.5d87483840450p-10);
    p = FJ__PW_FMA(p, f, 0x1.3b2ab5c525290p-7);
    p = FJ__PW_FMA(p, f, 0x1.c6b08dd46d4ccp-5);
    p = FJ__PW_FMA(p, f, 0x1.ebfbdff931a0cp-3);
    p = FJ__PW_FMA(p, f, 0x1.62e42fef86162p-1);
    p = FJ__PW_FMA(p, f, 0x1.ffffffffff7a3p-1);
    /* 2^k from the low bits of `sum` (k + 1023 in [823, 1223]) */
    const double scale = fj__f64_from_bits((fj__f64_bits(sum) + 1023u) << 52);
    return p * scale;
}

/* powf(x, y) for any x, y, computed through double: see the header comment. */
static inline float fj__pw_general_f32(float x, float y) {
    const float a = fabsf(x);
    const int finite_a = a < __builtin_inff(), zero_a = a == 0.0f;
    const double l = fj__pw_log2((double)fj__pw_sel32(finite_a & !zero_a, a, 1.0f));
    /* log2 of 0 and inf; NaN x gives NaN through y * NaN */
    const float special = fj__pw_sel32(zero_a, -__builtin_inff(), a); /* -inf, inf or NaN */
    const double lx = fj__pw_sel64(finite_a & !zero_a, l, (double)special);
    double t = (double)y * lx;
    t = fj__pw_sel64(t > 200.0, 200.0, fj__pw_sel64(t < -200.0, -200.0, t)); /* NaN stays */
    float r = (float)fj__pw_exp2(t);
    /* y an integer: |y| >= 2^24 is always an even one */
    const float ay = fabsf(y);
    const int big_y = !(ay < 0x1p24f); /* NaN too */
    const int32_t yi = (int32_t)fj__pw_sel32(big_y, 0.0f, y);
    const int y_int = big_y | ((float)yi == y);
    const int odd = !big_y & ((float)yi == y) & (yi & 1);
    const uint32_t neg = fj__pw_f32_bits(x) & 0x80000000u;
    r = fj__pw_f32_from_bits(fj__pw_f32_bits(r) | (odd ? neg : 0u));
    /* x < 0 finite, y finite non-integer: NaN (big_y covers inf and NaN y: not NaN here) */
    r = fj__pw_sel32((x < 0.0f) & finite_a & !y_int, __builtin_nanf(""), r);
    /* y = 0 or x = 1: 1 (NaN included); x = -1 with y = +-inf: 1 */
    const int one = (y == 0.0f) | (x == 1.0f) | ((a == 1.0f) & (ay == __builtin_inff()));
    return fj__pw_sel32(one, 1.0f, r);
}

static inline float fj_pow_f32(float x, float y) {
    if (__builtin_constant_p(y) && y >= -64.0f && y <= 64.0f && y == (float)(int)y)
        return (float)fj__pw_ipow((double)x, (int)y);
    return fj__pw_general_f32(x, y);
}

#if defined(__FP_FAST_FMA)
/* x^3 in float32 arithmetic: x^2 = x2 + e2 exactly (fma), x^3 = fma(x2, x, e2 x) rounded once
 * (e2 x's own rounding does not move it): the correctly rounded cube, so fj_pow_f32(x, 3)'s
 * bits, for x = 0 and 2^-33 <= |x| < 2^51 (all 2^32 inputs compared: benchmarks/
 * vpow_cube_exact.c); below 2^-33 e2 x loses bits as a subnormal, from 2^51 on x2 e2 overflow.
 * Eight lanes a ymm register where the double path converts to two halves.  Staged loops
 * (codegen/ccube.py) take it for a whole tile when fj_cube_key's min and max over the tile
 * pass fj_cube_redo, and otherwise run the loop again with fj_pow_f32. */
static inline float fj_cube_fma_f32(float x) {
    const float x2 = x * x;
    return fmaf(x2, x, fmaf(x, x, -x2) * x);
}
/* bits(|x|) - 1: 0 -> 0xffffffff (the unsigned minimum ignores it), 0 -> -1 as a signed int
 * (the signed maximum ignores it) */
static inline uint32_t fj_cube_key(float x) {
    uint32_t u;
    __builtin_memcpy(&u, &x, sizeof u);
    return (u & 0x7fffffffu) - 1u;
}
/* Whether a tile whose keys have unsigned minimum lo and signed maximum hi holds an x != 0
 * outside [2^-33, 2^43) (or an inf or NaN): then fj_cube_fma_f32 may be wrong there. */
static inline int fj_cube_redo(uint32_t lo, int32_t hi) {
    return lo < 0x2f000000u - 1u || hi >= 0x55000000 - 1;
}
/* Taken on AVX2 + FMA builds; AVX-512 ones keep the double path (16 lanes convert to two
 * halves of 8 doubles: gelu_pow, full size, two threads 2.44 -> 2.46 ms, no gain). */
#if !defined(__AVX512F__)
#define FJ_CUBE_FMA 1
#endif

/* x^n in double-double, n a constant integer with |n| <= 64, rounded once.  n < 0 raises the
 * pair 1/x (q + (1 - q x) q) to -n: no intermediate overflows where the result is a subnormal. */
static inline double fj__pw_ipow_f64(double x, int n) {
    const unsigned k = (unsigned)(n < 0 ? -n : n);
    const double q = 1.0 / x;
    double rh = 1.0, rl = 0.0;
    double bh = n < 0 ? q : x, bl = n < 0 ? fma(-q, x, 1.0) * q : 0.0;
#pragma GCC unroll 7
    for (int i = 0; i < 7; i++) {
        if (k >> i == 0) break;
        if ((k >> i) & 1u) { /* r *= b */
            const double p = rh * bh;
            rl = fma(rh, bh, -p) + (rh * bl + rl * bh);
            rh = p;
        }
        if (k >> (i + 1)) { /* b *= b */
            const double p = bh * bh;
            bl = fma(bh, bh, -p) + 2.0 * (bh * bl);
            bh = p;
        }
    }
    /* the pair summed once; zero, inf and NaN results are rh's (rl may be NaN there: 1/0) */
    return fj__pw_sel64((fabs(rh) < __builtin_inf()) & (rh != 0.0), rh + rl, rh);
}

static inline double fj_pow_f64(double x, double y) {
    if (__builtin_constant_p(y) && y >= -64.0 && y <= 64.0 && y == (double)(int)y)
        return fj__pw_ipow_f64(x, (int)y);
    return pow(x, y);
}
#else
static inline double fj_pow_f64(double x, double y) { return pow(x, y); }
#endif
#ifndef FJ_CUBE_FMA
#define FJ_CUBE_FMA 0
#endif

#endif /* FJ_VPOW_H */
