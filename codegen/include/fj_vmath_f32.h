/*
 * fj_vmath_f32.h -- fusejit's own float32 exp, tanh, erf and log, written so that gcc
 * vectorises them inside `#pragma omp simd` loops: plain arithmetic, explicit
 * fmaf (results do not depend on -ffp-contract), bit reinterpretation through
 * memcpy, integer exponent arithmetic for the 2^k scaling, and bit-blend selects
 * instead of branches (every piece is evaluated for every lane).  No libm calls.
 *
 *   fj_vm_exp_f32(x)   e^x
 *   fj_vm_tanh_f32(x)  tanh(x), exactly odd (computed on |x|, sign copied back)
 *   fj_vm_erf_f32(x)   erf(x), exactly odd
 *   fj_vm_log_f32(x)   log(x)
 *   fj_exp_f32, fj_tanh_f32, fj_erf_f32, fj_log_f32: what generated code calls (frontend/ops.py):
 *   fj_vm_* on every build with FMA (AVX2 and AVX-512), but tanh from libmvec at 512 bits
 *   (end of this file).
 *
 * Methods (coefficients: benchmarks/vmath_fit.py, minimax by Lawson's IRLS in
 * float64, rounded to float32 lowest degree first with the higher ones refitted):
 *   exp:  k = rint(x*log2(e)) by the 1.5*2^23 trick, r = x - k*ln2 in two fmaf
 *         steps (ln2 split hi+lo), e^r = 1 + r + r^2*Q(r), Q of degree 4 (rel.
 *         fit error 0.06 * 2^-24); 2^k applied as two exact power-of-two
 *         factors 2^(k>>1) * 2^(k-(k>>1)), so the only rounding to subnormal or
 *         to inf is the last multiply.  x is first clamped to [-104, 89] (NaN
 *         passes through the comparisons), so +-inf give inf / +0.
 *   tanh: |x| < 0.984375: x + x^3*P(x^2), P of degree 7 (rel. 0.006 * 2^-24);
 *         above: 1 - 2/(e^{2|x|} + 1) (there 2/(..) < 1/4, so its error counts
 *         at most a quarter), |x| clamped to 9.125 (tanh rounds to 1 from 9.0109 on).
 *   erf:  |x| < 1: x + x*P(x^2), P of degree 7 (rel. 0.016 * 2^-24); [1, 3.9375]:
 *         hi + (lo + t*Q(t)), t = (x - 2.46875)/2, Q of degree 13, the constant term split
 *         in two floats (abs. fit error 0.12 * 2^-24); x is clamped to 3.9375 (the polynomial
 *         rounds to 1 there, as erf does from 3.9192059 on).  No exp and no division: about
 *         half the work of the erfc-based form it replaced (1 - exp(-x^2) R(x), with the
 *         small-x polynomial in double), which was monotonic; evaluating near 1 in float is
 *         not, quite (below).
 *   log:  x = m 2^e, m in [sqrt(1/2), sqrt(2)) by integer arithmetic on the bits (subnormals
 *         scaled by 2^23 first), f = m - 1 exact, log(1+f) = (f - f^2/2) + f^3 P(f), P of
 *         degree 7 (rel. fit error 0.098 * 2^-24), f - f^2/2 in one fmaf; + e ln2 (two floats).
 *
 * Accuracy, exhaustive over all 2^32 float32 inputs (benchmarks/vmath_accuracy.c:
 * the vectorised loops, gcc 12.2 -O3 -march=native (AVX-512 machine, 256-bit
 * vectors), -ffp-contract=off), against glibc 2.36's double exp/tanh/erf, ULP
 * measured at the unrounded double reference (2^-149 below 2^-126):
 *   function  max ULP  at             not correctly rounded  special  odd  monotonic
 *   exp       1.013    59.3060379     17362802 (0.40%)       0        -    0
 *   tanh      0.972    0.98837626     1615752 x2 (0.08%)     0        0    0
 *   erf       1.062    1.00177443     15720256 x2 (0.73%)    0        0    11403 x2
 *   log       1.142    0.675507247    15154251 (0.35%)       0        -    0
 * (tanh, erf: the 2^31 non-negative inputs; the negative ones are checked to be
 * exactly -f(-x).  special = NaN/inf/zero/signed-zero results that differ from
 * the reference rounded to float32; monotonic = f(y) < f(x) for consecutive
 * floats x < y, within runs of 65536 inputs; erf's are where its value is within
 * a few ULP of 1, around x = 3.)  The same bits with -march=x86-64-v3 (AVX2+FMA): explicit fmaf,
 * no contraction, so the vector width does not change a result.  libmvec's, for comparison
 * (fj_vmath.h): expf 2.64, tanhf 1.37, erff 4.00, logf 3.94 ULP; its erff, through the same checker: 694784443
 * not correctly rounded (32%), 3449752 monotonic violations.
 *
 * Speed (single thread, min of 2000 x 10 loops over 4096 floats in [-5, 5],
 * shared 2-core Xeon with AVX-512, load ~1.5): ns per element,
 *               256-bit vectors (fusejit's default)   512-bit (-mprefer-vector-width=512)
 *   exp    fj_vm 0.37-0.38  libmvec 0.36-0.37         fj_vm 0.25-0.26  libmvec 0.24-0.25
 *   tanh   fj_vm 0.65       libmvec 0.64-0.67         fj_vm 0.50-0.52  libmvec 0.30-0.31
 *   erf    fj_vm 1.18-1.21  libmvec 0.55-0.56         fj_vm 0.83-0.86  libmvec 0.50-0.51
 *          (the erfc-based erf these were taken with; the polynomial one: 0.54 against
 *          libmvec's 0.78 per element at 512 bits on a 2-core Zen 4, and black_scholes,
 *          two erf per element, 2.60 -> 2.29 ns per element on one core)
 * libmvec's tanhf leaves its fast path for larger |x| (the gelu_tanh benchmark,
 * 3*N(0,1) inputs: 45-49 ms with it, 29-32 ms with fj_vm_tanh_f32, one thread),
 * fj_vm_* cost the same for every input.  So fj_exp_f32, fj_erf_f32 and fj_log_f32 are
 * always ours where there is FMA (as fast as libmvec's, 2.6x / 4x / 3.4x more accurate, and
 * the same bits in vector loops and scalar remainders; fj_vtile.h's tile functions, which
 * staged kernels call on AVX2+FMA and AVX-512 builds, give exp's bits and their own tanh, erf
 * and log), and fj_tanh_f32 is ours at 256 bits but libmvec's when programs are built for
 * 512-bit vectors on AVX-512 (FJ_WIDE_VECTORS with __AVX512F__: runtime/toolchain.py;
 * gelu_tanh 2 threads 10.1 -> 5.6 ms, lstm_cell 1.6 -> 1.0 ms).  Until this session exp and
 * log were libmvec's on AVX2 builds; with a call inside the loop, staged and unstaged kernels
 * could differ in the last bit (vector variant vs scalar remainder).
 *
 * Speed on AVX2 (-march=x86-64-v3, 256-bit vectors; one Zen 5 core, shared machine, 4096 floats
 * in L1, ns per element): exp 0.40, log 0.48, tanh 0.61-0.75, erf 0.66; the whole gelu_tanh
 * 0.88, with x ** 3 (fj_vpow.h) 1.18.  AVX-512 (512-bit, tile functions): 0.16-0.25.
 * Session 10 (same bits for all 2^32 inputs, compared exhaustively on an x86-64-v3 build): tanh's
 * big piece no longer goes through fj_vm_exp_f32's clamp and two-factor scaling (|x| clamped to
 * 9.125 instead, 2^k one float); exp's clamp is two selects; tanh's and erf's upper clamps are
 * an integer min on the bits; erf's (b - 2.46875) / 2 one fmaf.  On this machine a ymm FMA, add,
 * compare or blend each costs about one cycle of throughput and a logic/integer op about half,
 * so these functions cost what their arithmetic and select count is.  Same harness (L1, one
 * core), before -> after: x86-64-v3 tanh 0.72 -> 0.58, erf 0.60 -> 0.56, exp 0.34 -> 0.335;
 * native (512-bit) fj_vm_tanh 0.36-0.41 -> 0.27 (libmvec's tanhf, used there: 0.27-0.28),
 * erf 0.285 -> 0.252, exp 0.209 -> 0.192.
 *
 * Without a fast fmaf (__FP_FAST_FMAF undefined: no FMA instructions) the
 * fj_vm_* fall back to the libm functions, which is correct but not vectorised.
 */
#ifndef FJ_VMATH_F32_H
#define FJ_VMATH_F32_H

#include <math.h>
#include <stdint.h>
#include <string.h>

#if defined(__FP_FAST_FMAF)

static inline uint32_t fj__f32_bits(float x) {
    uint32_t u;
    memcpy(&u, &x, sizeof u);
    return u;
}

static inline float fj__f32_from_bits(uint32_t u) {
    float x;
    memcpy(&x, &u, sizeof x);
    return x;
}

/* c ? a : b as a bit blend: a `?:` lets gcc sink each side's work under a branch, and it
 * cannot if-convert the fmaf calls there back, so the loop would not vectorise.  Without
 * AVX-512, b ^ ((a ^ b) & m) is what gcc turns into one vpblendvb; (a & m) | (b & ~m) became
 * a vpblendvb with zero, a vpand and a vpor (x86-64-v3, one Zen 5 core, L1: tanh 0.499 ->
 * 0.473, erf 0.497 -> 0.478, gelu with x ** 3 1.039 -> 0.978 ns per element).  With AVX-512
 * the and/or form becomes a masked blend and the xor form is slower (exp 0.172 -> 0.192). */
static inline float fj__f32_select(int c, float a, float b) {
    const uint32_t m = 0u - (uint32_t)(c != 0);
#if defined(__AVX512F__)
    return fj__f32_from_bits((fj__f32_bits(a) & m) | (fj__f32_bits(b) & ~m));
#else
    const uint32_t ub = fj__f32_bits(b);
    return fj__f32_from_bits(ub ^ ((fj__f32_bits(a) ^ ub) & m));
#endif
}

static inline float fj_vm_exp_f32(float x) {
    const float magic = 0x1.8p23f; /* adding it rounds to an integer */
    /* two selects (2 instructions each on AVX2; the nested `?:` compiled to 6), NaN stays */
    const float lo = fj__f32_select(x < -104.0f, -104.0f, x);
    const float xc = fj__f32_select(lo > 89.0f, 89.0f, lo);
    const float t = fmaf(xc, 0x1.715476p+0f, magic);
    const float kf = t - magic;
    const int32_t k = (int32_t)(fj__f32_bits(t) - fj__f32_bits(magic));
    float r = fmaf(kf, -0x1.62e430p-1f, xc); /* ln2 = hi + lo */
    r = fmaf(kf, 0x1.05c610p-29f, r);
    float q = fmaf(0x1.6a4b98p-10f, r, 0x1.123e5cp-7f);
    q = fmaf(q, r, 0x1.5558bap-5f);
    q = fmaf(q, r, 0x1.55548cp-3f);
    q = fmaf(q, r, 0x1.fffffcp-2f);
    const float p = fmaf(r * r, q, r) + 1.0f;
    const int32_t k1 = k >> 1, k2 = k - k1; /* each in [-75, 65] */
    const float s1 = fj__f32_from_bits((uint32_t)(k1 + 127) << 23);
    const float s2 = fj__f32_from_bits((uint32_t)(k2 + 127) << 23);
    return (p * s1) * s2;
}

static inline float fj_vm_tanh_f32(float x) {
    const uint32_t sign = fj__f32_bits(x) & 0x80000000u;
    const float a = fj__f32_from_bits(fj__f32_bits(x) ^ sign);
    const float v = a * a;
    float p = fmaf(0x1.0ee468p-13f, v, -0x1.c85276p-11f);
    p = fmaf(p, v, 0x1.996e02p-9f);
    p = fmaf(p, v, -0x1.1ad5ap-7f);
    p = fmaf(p, v, 0x1.652fep-6f);
    p = fmaf(p, v, -0x1.ba0424p-5f);
    p = fmaf(p, v, 0x1.11109ep-3f);
    p = fmaf(p, v, -0x1.555554p-2f);
    const float small = fmaf(a, v * p, a);
    /* big: 1 - 2/(e^{2b} + 1) for b = min(a, 9.125): from 9.0109 on tanh rounds to 1, and
     * 2b in [1.97, 18.25] needs neither fj_vm_exp_f32's clamp nor its two-factor scaling
     * (2^k, k in [3, 26], is one normal float), so e^{2b} is fj_vm_exp_f32(2b) bit for bit
     * with 15 instructions fewer.  NaN takes `small` (NaN). */
    const uint32_t ua = fj__f32_bits(a), u9 = 0x41120000u; /* 9.125f */
    const float b = fj__f32_from_bits(ua < u9 ? ua : u9); /* min on the bits: one integer op */
    const float b2 = b + b;
    const float magic = 0x1.8p23f;
    const float t = fmaf(b2, 0x1.715476p+0f, magic);
    const float kf = t - magic;
    const int32_t k = (int32_t)(fj__f32_bits(t) - fj__f32_bits(magic));
    float r = fmaf(kf, -0x1.62e430p-1f, b2);
    r = fmaf(kf, 0x1.05c610p-29f, r);
    float q = fmaf(0x1.6a4b98p-10f, r, 0x1.123e5cp-7f);
    q = fmaf(q, r, 0x1.5558bap-5f);
    q = fmaf(q, r, 0x1.55548cp-3f);
    q = fmaf(q, r, 0x1.fffffcp-2f);
    const float e = (fmaf(r * r, q, r) + 1.0f) * fj__f32_from_bits((uint32_t)(k + 127) << 23);
    const float big = 1.0f - 2.0f / (e + 1.0f);
    const float res = fj__f32_select(a >= 0.984375f, big, small);
    return fj__f32_from_bits(fj__f32_bits(res) | sign);
}

static inline float fj_vm_erf_f32(float x) {
    const uint32_t sign = fj__f32_bits(x) & 0x80000000u;
    const float a = fj__f32_from_bits(fj__f32_bits(x) ^ sign);
    /* a < 1: a + a P(a^2) */
    const float v = a * a;
    float p = fmaf(-0x1.2281ep-19f, v, 0x1.6999ecp-14f);
    p = fmaf(p, v, -0x1.a995dp-11f);
    p = fmaf(p, v, 0x1.5482dp-8f);
    p = fmaf(p, v, -0x1.b8044cp-6f);
    p = fmaf(p, v, 0x1.ce2d74p-4f);
    p = fmaf(p, v, -0x1.81274p-2f);
    p = fmaf(p, v, 0x1.06eba8p-3f);
    const float small = fmaf(a, p, a);
    /* [1, 3.9375]: hi + (lo + t Q(t)), t = (b - 2.46875) / 2 in [-0.74, 0.74] (exact), Q of
     * degree 13; b = min(a, 3.9375), where the polynomial rounds to 1 (as erf does from
     * 3.9192059 on); NaN takes the small piece (NaN). */
    /* min on the bits (a >= 0 orders as its bits do), not a float `?:`: gcc would move
     * (b - 2.46875) * 0.5 under a branch, which it cannot if-convert back without AVX-512
     * masks (-ftrapping-math), and on AVX2 the loop then did not vectorise; an integer min is
     * one instruction (vpminud), a float select two */
    const uint32_t ua = fj__f32_bits(a), ucap = 0x407c0000u; /* 3.9375f */
    const float b = fj__f32_from_bits(ua < ucap ? ua : ucap); /* a >= 0: min on the bits */
    /* (b - 2.46875) / 2 in one fmaf: b - 2.46875 is exact for every b in [1, 3.9375], so
     * this is the same value (and the same bits for b < 1, whose `big` is not taken) */
    const float t = fmaf(b, 0.5f, -1.234375f);
    float q = fmaf(0x1.1907ep-6f, t, 0x1.b5770ap-10f);
    q = fmaf(q, t, -0x1.1cf834p-4f);
    q = fmaf(q, t, 0x1.829258p-5f);
    q = fmaf(q, t, 0x1.43f248p-4f);
    q = fmaf(q, t, -0x1.337b5cp-3f);
    q = fmaf(q, t, 0x1.5df25cp-4f);
    q = fmaf(q, t, 0x1.fb507cp-5f);
    q = fmaf(q, t, -0x1.7d4c58p-3f);
    q = fmaf(q, t, 0x1.b38ba6p-3f);
    q = fmaf(q, t, -0x1.3b38e6p-3f);
    q = fmaf(q, t, 0x1.36fd8p-4f);
    q = fmaf(q, t, -0x1.9ba0f4p-6f);
    q = fmaf(q, t, 0x1.4d7642p-8f);
    const float big = 0x1.ffc102p-1f + fmaf(q, t, -0x1.aeaf98p-27f);
    const float r = fj__f32_select(a >= 1.0f, big, small); /* NaN takes `small`: NaN */
    return fj__f32_from_bits(fj__f32_bits(r) | sign);
}

/* log: x = m 2^e, m in [sqrt(1/2), sqrt(2)) (subnormals scaled by 2^23 first), f = m - 1 (exact),
 * log(1 + f) = (f - f^2/2) + f^3 P(f), P of degree 7 (rel. fit error 0.098 * 2^-24,
 * benchmarks/vmath_fit.py), the first part with one rounding (an fmaf); e ln2 added with ln2 split
 * in two floats (the lower one positive, so e = 0 adds exact zeros). */
static inline float fj_vm_log_f32(float x) {
    const int sub = x < 0x1p-126f; /* zero and negative x too: replaced below */
    const float xs = fj__f32_select(sub, x * 0x1p23f, x);
    const uint32_t u = fj__f32_bits(xs);
    const int32_t e = ((int32_t)(u - 0x3f3504f3u)) >> 23;
    const float f = fj__f32_from_bits(u - ((uint32_t)e << 23)) - 1.0f;
    float p = fmaf(-0x1.38c9dep-4f, f, 0x1.055ec6p-3f);
    p = fmaf(p, f, -0x1.0d8242p-3f);
    p = fmaf(p, f, 0x1.22d92ep-3f);
    p = fmaf(p, f, -0x1.54728ap-3f);
    p = fmaf(p, f, 0x1.99a01cp-3f);
    p = fmaf(p, f, -0x1.000226p-2f);
    p = fmaf(p, f, 0x1.555554p-2f);
    const float lp = fmaf((f * f) * f, p, fmaf(-0.5f * f, f, f));
    const float ef = (float)(e - 23 * sub);
    const float y = fmaf(ef, 0x1.62e42ep-1f, fmaf(ef, 0x1.efa39ep-25f, lp));
    /* log(+inf) = inf, log(+-0) = -inf, log(x < 0) = log(NaN) = NaN */
    float r = fj__f32_select(x == __builtin_inff(), x, y);
    r = fj__f32_select(x == 0.0f, -__builtin_inff(), r);
    return fj__f32_select(x >= 0.0f, r, __builtin_nanf(""));
}

#define FJ_VMATH_F32 1

#else /* no fast fmaf: the libm functions */

static inline float fj_vm_exp_f32(float x) { return expf(x); }
static inline float fj_vm_tanh_f32(float x) { return tanhf(x); }
static inline float fj_vm_erf_f32(float x) { return erff(x); }
static inline float fj_vm_log_f32(float x) { return logf(x); }

#define FJ_VMATH_F32 0

#endif /* __FP_FAST_FMAF */

/* What generated code calls.  With a fast fmaf, exp, erf and log are always ours: as fast as
 * libmvec's at 256 and 512 bits (timings above and in fj_vtile.h), 2.6x / 3.8x more accurate
 * than its expf / logf, erf 4x; and the same code (and bits) in a vector loop, in its scalar
 * remainder.  On AVX2+FMA and AVX-512 builds fj_vm_exp_f32 gives the bits of fj_tile_exp_f32
 * (staged kernels) for every input.  tanh is libmvec's only
 * when programs are built for 512-bit vectors on AVX-512 (FJ_WIDE_VECTORS, 0.31 vs 0.51 ns per
 * element); at 256 bits libmvec's tanhf leaves its fast path for larger |x|.  Without FMA
 * (x86-64 baseline) the fj_vm_* are the libm functions (libmvec's vector ones with
 * FJ_LIBMVEC). */
static inline float fj_exp_f32(float x) { return fj_vm_exp_f32(x); }
static inline float fj_erf_f32(float x) { return fj_vm_erf_f32(x); }
static inline float fj_log_f32(float x) { return fj_vm_log_f32(x); }
#if defined(FJ_VMATH_ACTIVE) && FJ_VMATH_ACTIVE && defined(FJ_WIDE_VECTORS) && \
    defined(__AVX512F__)
static inline float fj_tanh_f32(float x) { return tanhf(x); }
#else
static inline float fj_tanh_f32(float x) { return fj_vm_tanh_f32(x); }
#endif

#endif /* FJ_VMATH_F32_H */
