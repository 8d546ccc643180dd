/*
 * fj_vtile.h -- float32 exp, tanh, erf and log over a tile of points, in AVX-512 or AVX2 vector
 * code.
 *
 *   fj_tile_exp_f32(y, x, n)   y[i] = e^x[i]         (also fj_tile_tanh_f32, _erf_, _log_)
 *
 * x and y are tile arrays of codegen/cstage.py (FJ_VTILE_N floats, 64-byte aligned); n <= that
 * many points are wanted, whole vectors of 16 (AVX2: 8) are computed (the lanes past n are in
 * the tile and ignored).  Staged kernels call these instead of a loop over fj_exp_f32 & co.
 *
 * Written with GCC vector types and the AVX-512 builtins (no <immintrin.h>: parsing it costs
 * ~0.14 s per compile), so the instructions that make vector math cheap are available:
 *   exp   the same reduction and polynomial as fj_vm_exp_f32 (fj_vmath_f32.h), the 2^k scaling
 *         by vscalefps (one correctly rounded step, as the two exact factors there): the same
 *         bits as fj_vm_exp_f32 for every input.
 *   tanh, erf, log
 *         one polynomial per interval, 32 intervals, each coefficient fetched by vpermt2ps from
 *         two registers (fj_vtile_tables.h, benchmarks/vmath_tables.py says how the intervals
 *         are cut and fitted): no branch, no division, no second piece computed and dropped.
 *         log takes m and e from vgetmantps / vgetexpps (subnormals included).
 * Per element on one Zen 4 core, data in L1 (TSC cycles at 2.6 GHz, tile loops over 2048
 * floats): exp 0.44 (libmvec 0.74-0.95), tanh 0.62 (libmvec 0.98, fj_vm 1.47), erf 0.68 (fj_vm
 * 1.25, libmvec 1.55), log 0.67 (libmvec 0.75).
 *
 * Accuracy, exhaustive over all 2^32 float32 inputs (benchmarks/vmath_accuracy.c, gcc 12.2,
 * against glibc's double functions; tanh and erf on the 2^31 non-negative inputs, the negative
 * ones checked to be exactly -f(-x)):
 *   function  max ULP  at            not correctly rounded  special  odd  monotonic violations
 *   exp       1.013    59.3060379    17362802 (0.40%)       0        -    0  (fj_vm_exp_f32's bits)
 *   tanh      1.094    0.215810791   20980584 x2 (0.98%)    0        0    0
 *   erf       1.024    0.107898928   20268774 x2 (0.94%)    0        0    40 x2 (within 1 ULP of 1)
 *   log       1.485    0.984530568   13615875 (0.32%)       0        -    0
 * (libmvec's, fj_vmath.h: expf 2.64, tanhf 1.37, erff 4.00, logf 3.94 ULP.)
 *
 * With AVX2 + FMA and no AVX-512 (x86-64-v3), 8 lanes, the same structure where AVX2 allows it:
 *   exp   fj_vm_exp_f32's algorithm and bits (vminps/vmaxps clamp, the same two exact
 *         power-of-two factors for 2^k: vscalefps does not exist there).
 *   tanh, erf, log
 *         one polynomial per interval, 8 intervals, each coefficient fetched by one vpermps
 *         (a 32-entry table would need 4 vpermps and 3 blends per coefficient), so of a higher
 *         degree (fj__tab8_* in fj_vtile_tables.h, benchmarks/vmath_tables.py):
 *         tanh  a binade of max(|x|, 2^-4) each up to [8, 9.125] (|x| clamped there), degree 9,
 *               interval 0 as a + a q (as erf's); anchors near the end of the flat intervals
 *               [1, 2) .. [4, 8) (else q's rounding exceeds tanh's step between floats there and
 *               breaks monotonicity) and chosen where tanh(anchor) is within 0.001 ULP of a float
 *               (a rounded c0 is otherwise compensated by large cancelling coefficients).
 *         erf   [0, 3/8) (a + a q), then halves of the binades up to 3.9375, degree 7.
 *         log   m in [0.75, 1.5) and e from the bits (integer ops; subnormals scaled by 2^23),
 *               eighths of [1, 1.5) and sixteenths of [0.75, 1), degree 5.
 *   Per element, one Zen 5 core at x86-64-v3, 4096 floats in L1, best of 30 interleaved rounds
 *   (benchmarks/vmath_speed.c; load average 12), against the loops over fj_vmath_f32.h's scalar
 *   functions that staged kernels ran before: exp 0.308 -> 0.255 ns, tanh 0.466 -> 0.350, erf
 *   0.458 -> 0.297, log 0.409 -> 0.368.
 *   exp and log test each pair of vectors once: where every lane is ordinary (exp |x| <= 86.5,
 *   log x a positive normal float) they skip the clamps, the subnormal scaling and the
 *   special-value selects, and exp puts 2^k into the exponent field by one integer add; the
 *   operations left are the same, so the same bits (compared for all 2^32 inputs).  Same
 *   harness (load 2): exp 0.234 -> 0.170 ns, log 0.347 -> 0.258.
 *   Accuracy, exhaustive (as above, built with -march=x86-64-v3):
 *   function  max ULP  at            not correctly rounded  special  odd  monotonic violations
 *   exp       1.013    59.3060379    17362802 (0.40%)       0        -    0  (fj_vm_exp_f32's bits)
 *   tanh      0.826    0.503689110   2514260 x2 (0.12%)     0        0    0
 *   erf       0.689    2.03816795    14369974 x2 (0.67%)    0        0    7 x2
 *   log       1.485    0.984530568   12603830 (0.29%)       0        -    0
 *   So the AVX-512 table's bounds hold on both (exp 1.013, tanh 1.094, erf 1.024, log 1.485).
 *
 * Without AVX2 + FMA (or with FJ_NO_VTILE defined) each tile function is a vectorisable loop over
 * the scalar fj_exp_f32 / fj_tanh_f32 / fj_erf_f32 / fj_log_f32 (fj_vmath_f32.h: the same code
 * as unstaged kernels run, so staged and unstaged results have the same bits there).  Builds for
 * such targets do not stage for tile functions (runtime/toolchain.py `vtile`).
 */
#ifndef FJ_VTILE_H
#define FJ_VTILE_H

#include <math.h>
#include <stdint.h>

#define FJ_VTILE_N 256 /* points per tile at most: codegen/cstage.py VTILE */

/* A tile function of vector code: two vectors of fj__vtile_t a step, interleaved (the two
 * evaluations are independent: x86-64-v3, one Zen 5 core, 256 floats a call, L1: exp 0.253 ->
 * 0.238, tanh 0.327 -> 0.316, log 0.355 -> 0.348 ns per element; AVX-512 within 2%).  The
 * tile (FJ_VTILE_N floats, a multiple of two vectors) holds the lanes past n. */
#define FJ__TILE_VECTOR(NAME, VFN)                                                         \
    static inline void fj_tile_##NAME##_f32(float *restrict y, const float *restrict x,    \
                                            int64_t n) {                                  \
        const int64_t lanes = (int64_t)(sizeof(fj__vtile_t) / sizeof(float));            \
        for (int64_t i = 0; i < n; i += 2 * lanes) {                                     \
            fj__vtile_t v, w;                                                            \
            __builtin_memcpy(&v, x + i, sizeof v);                                       \
            __builtin_memcpy(&w, x + i + lanes, sizeof w);                               \
            v = VFN(v);                                                                  \
            w = VFN(w);                                                                  \
            __builtin_memcpy(y + i, &v, sizeof v);                                       \
            __builtin_memcpy(y + i + lanes, &w, sizeof w);                               \
        }                                                                                \
    }

/* The same loop for a pair function PAIR(v, w) that computes both vectors in place (exp on
 * AVX2: one range test a pair picks the fast path). */
#define FJ__TILE_PAIR(NAME, PAIR)                                                          \
    static inline void fj_tile_##NAME##_f32(float *restrict y, const float *restrict x,    \
                                            int64_t n) {                                  \
        const int64_t lanes = (int64_t)(sizeof(fj__vtile_t) / sizeof(float));            \
        for (int64_t i = 0; i < n; i += 2 * lanes) {                                     \
            fj__vtile_t v, w;                                                            \
            __builtin_memcpy(&v, x + i, sizeof v);                                       \
            __builtin_memcpy(&w, x + i + lanes, sizeof w);                               \
            PAIR(v, w);                                                                  \
            __builtin_memcpy(y + i, &v, sizeof v);                                       \
            __builtin_memcpy(y + i + lanes, &w, sizeof w);                               \
        }                                                                                \
    }

#if defined(__AVX512F__) && !defined(FJ_NO_VTILE)
#define FJ_VTILE 1

#ifndef FJ_VTILE_TABLES_H
#error "fj_vtile_tables.h must come before fj_vtile.h"
#endif

typedef float fj_v16sf __attribute__((vector_size(64)));
typedef int32_t fj_v16si __attribute__((vector_size(64)));
typedef unsigned short fj_m16;

#define FJ__ALL ((fj_m16)0xffff)
#define FJ__RC 4 /* _MM_FROUND_CUR_DIRECTION */

static inline fj_v16sf fj__vf(float c) { return (fj_v16sf){0} + c; }
static inline fj_v16si fj__vi(int32_t c) { return (fj_v16si){0} + c; }
static inline fj_v16sf fj__vfma(fj_v16sf a, fj_v16sf b, fj_v16sf c) {
    return __builtin_ia32_vfmaddps512_mask(a, b, c, FJ__ALL, FJ__RC);
}
/* vminps/vmaxps return the SECOND operand when either is NaN: constants go first, so a NaN
 * argument passes through. */
static inline fj_v16sf fj__vmin(fj_v16sf c, fj_v16sf x) {
    return __builtin_ia32_minps512_mask(c, x, c, FJ__ALL, FJ__RC);
}
static inline fj_v16sf fj__vmax(fj_v16sf c, fj_v16sf x) {
    return __builtin_ia32_maxps512_mask(c, x, c, FJ__ALL, FJ__RC);
}
/* t[i] for each lane's index i (its low 5 bits): a 32-float table row in two registers. */
static inline fj_v16sf fj__vperm(const float *t, fj_v16si i) {
    fj_v16sf lo, hi;
    __builtin_memcpy(&lo, t, sizeof lo);
    __builtin_memcpy(&hi, t + 16, sizeof hi);
    return __builtin_ia32_vpermt2varps512_mask(i, lo, hi, FJ__ALL);
}

static inline fj_v16sf fj__vexp(fj_v16sf x) {
    const fj_v16sf xc = fj__vmin(fj__vf(89.0f), fj__vmax(fj__vf(-104.0f), x));
    /* k = rint(x * log2(e)) by the 1.5 * 2^23 trick in one fma, as fj_vm_exp_f32 */
    const fj_v16sf kf = fj__vfma(xc, fj__vf(0x1.715476p+0f), fj__vf(0x1.8p23f)) - fj__vf(0x1.8p23f);
    fj_v16sf r = fj__vfma(kf, fj__vf(-0x1.62e430p-1f), xc);
    r = fj__vfma(kf, fj__vf(0x1.05c610p-29f), r);
    fj_v16sf q = fj__vfma(fj__vf(0x1.6a4b98p-10f), r, fj__vf(0x1.123e5cp-7f));
    q = fj__vfma(q, r, fj__vf(0x1.5558bap-5f));
    q = fj__vfma(q, r, fj__vf(0x1.55548cp-3f));
    q = fj__vfma(q, r, fj__vf(0x1.fffffcp-2f));
    const fj_v16sf p = fj__vfma(r * r, q, r) + fj__vf(1.0f);
    return __builtin_ia32_scalefps512_mask(p, kf, p, FJ__ALL, FJ__RC); /* p * 2^k */
}

/* Horner over the rows c0..c5 of a table (rows[k] = coefficient k of all 32 intervals). */
static inline fj_v16sf fj__vpoly5(const float (*rows)[32], fj_v16si i, fj_v16sf r) {
    fj_v16sf p = fj__vfma(fj__vperm(rows[5], i), r, fj__vperm(rows[4], i));
    p = fj__vfma(p, r, fj__vperm(rows[3], i));
    p = fj__vfma(p, r, fj__vperm(rows[2], i));
    return fj__vfma(p, r, fj__vperm(rows[1], i));
}

/* The interval of a = |x| for tanh and erf: four per binade from 2^-4 on, everything below
 * in interval 0.  The permute reads the index's low 5 bits only, and the tables are stored
 * rotated to match (fj_vtile_tables.h), so exponent and top mantissa bits index them as
 * they are. */
static inline fj_v16si fj__vinterval(fj_v16sf a) {
    return (fj_v16si)fj__vmax(fj__vf(0x1p-4f), a) >> 21;
}

/* |x| for tanh and erf, clamped below 16 (the intervals from 10 on are the constant 1; the
 * clamp keeps r finite there and the index in [8, 16)'s intervals), and its sign bit. */
static inline fj_v16sf fj__vabs16(fj_v16sf x, fj_v16si *sign) {
    *sign = (fj_v16si)x & fj__vi((int32_t)0x80000000);
    return fj__vmin(fj__vf(0x1.fffffep+3f), (fj_v16sf)((fj_v16si)x ^ *sign));
}

/* tanh and erf: odd, so computed on |x| with the sign put back.  `tab` rows: anchors, then
 * (erf, `linear`) s, then c0..c5; f = c0 + s r + r (c1 + c2 r + ...).  In interval 0 of erf
 * s = 1 and c0 = 0: a + a q keeps the last bit near 0 (2/sqrt(pi) has no exact float). */
static inline fj_v16sf fj__vodd(fj_v16sf x, const float (*tab)[32], int linear) {
    fj_v16si sign;
    const fj_v16sf a = fj__vabs16(x, &sign);
    const fj_v16si i = fj__vinterval(a);
    const fj_v16sf r = a - fj__vperm(tab[0], i);
    const float (*c)[32] = tab + 1 + linear;
    const fj_v16sf q = fj__vpoly5(c, i, r);
    fj_v16sf c0 = fj__vperm(c[0], i);
    if (linear) c0 = fj__vfma(fj__vperm(tab[1], i), r, c0);
    return (fj_v16sf)((fj_v16si)fj__vfma(q, r, c0) | sign);
}

static inline fj_v16sf fj__vtanh(fj_v16sf x) { return fj__vodd(x, fj__tab_tanh, 0); }
static inline fj_v16sf fj__verf(fj_v16sf x) { return fj__vodd(x, fj__tab_erf, 1); }

static inline fj_v16sf fj__vlog(fj_v16sf x) {
    /* x = m 2^e, m in [0.75, 1.5) (vgetmantps, interval 3; sign control 2: NaN below 0) */
    const fj_v16sf m = __builtin_ia32_getmantps512_mask(x, (2 << 2) | 3, x, FJ__ALL, FJ__RC);
    fj_v16sf e = __builtin_ia32_getexpps512_mask(x, x, FJ__ALL, FJ__RC);
    /* getexp is floor(log2 |x|); where m < 1 the mantissa was >= 1.5 and m = mantissa / 2 */
    const fj_m16 below = __builtin_ia32_cmpps512_mask(m, fj__vf(1.0f), 1 /* LT_OS */, FJ__ALL,
                                                       FJ__RC);
    e = __builtin_ia32_addps512_mask(e, fj__vf(1.0f), e, below, FJ__RC);
    const fj_v16si i = (fj_v16si)m >> 18; /* low 5 bits: the interval */
    const fj_v16sf r = m - fj__vperm(fj__tab_log[0], i);
    fj_v16sf p = fj__vfma(fj__vperm(fj__tab_log[5], i), r, fj__vperm(fj__tab_log[4], i));
    p = fj__vfma(p, r, fj__vperm(fj__tab_log[3], i));
    p = fj__vfma(p, r, fj__vperm(fj__tab_log[2], i));
    p = fj__vfma(p, r, fj__vperm(fj__tab_log[1], i));
    /* e ln2 + p, ln2 = hi + lo with lo > 0 (so e = +-inf gives +-inf, not inf - inf) */
    const fj_v16sf y = fj__vfma(e, fj__vf(0x1.62e42ep-1f),
                                fj__vfma(e, fj__vf(0x1.efa39ep-25f), p));
    /* log(+-0) = -inf (getmant's sign control makes -0 a NaN) */
    const fj_m16 zero = __builtin_ia32_cmpps512_mask(x, fj__vf(0.0f), 0 /* EQ_OQ */, FJ__ALL,
                                                      FJ__RC);
    return __builtin_ia32_blendmps_512_mask(y, fj__vf(-__builtin_inff()), zero);
}

typedef fj_v16sf fj__vtile_t; /* the vector FJ__TILE_VECTOR steps by */
#define FJ__TILE_FN FJ__TILE_VECTOR

#elif defined(__AVX2__) && defined(__FMA__) && !defined(FJ_NO_VTILE)
#define FJ_VTILE 2 /* AVX2 + FMA: 8 lanes */

#ifndef FJ_VTILE_TABLES_H
#error "fj_vtile_tables.h must come before fj_vtile.h"
#endif

typedef float fj_v8sf __attribute__((vector_size(32)));
typedef int32_t fj_v8si __attribute__((vector_size(32)));

static inline fj_v8sf fj__vf(float c) { return (fj_v8sf){0} + c; }
static inline fj_v8si fj__vi(int32_t c) { return (fj_v8si){0} + c; }
static inline fj_v8sf fj__vfma(fj_v8sf a, fj_v8sf b, fj_v8sf c) {
    return __builtin_ia32_vfmaddps256(a, b, c);
}
/* As on AVX-512: vminps/vmaxps return the second operand when either is NaN. */
static inline fj_v8sf fj__vmin(fj_v8sf c, fj_v8sf x) { return __builtin_ia32_minps256(c, x); }
static inline fj_v8sf fj__vmax(fj_v8sf c, fj_v8sf x) { return __builtin_ia32_maxps256(c, x); }
/* m ? b : a per lane (m: a comparison's all-ones / zero lanes; vblendvps reads the sign) */
static inline fj_v8sf fj__vsel(fj_v8si m, fj_v8sf b, fj_v8sf a) {
    return __builtin_ia32_blendvps256(a, b, (fj_v8sf)m);
}
/* t[i] for each lane's index i (its low 3 bits): an 8-float table row, one vpermps. */
static inline fj_v8sf fj__vperm(const float *t, fj_v8si i) {
    fj_v8sf row;
    __builtin_memcpy(&row, t, sizeof row);
    return __builtin_ia32_permvarsf256(row, i);
}
/* Horner over rows[hi]..rows[1] of an 8-interval table: c1 + c2 r + ... */
static inline fj_v8sf fj__vhorner(const float (*rows)[8], int hi, fj_v8si i, fj_v8sf r) {
    fj_v8sf p = fj__vperm(rows[hi], i);
    for (int k = hi - 1; k >= 1; k--) p = fj__vfma(p, r, fj__vperm(rows[k], i));
    return p;
}

/* fj_vm_exp_f32 (fj_vmath_f32.h) in vector code, bit for bit: the clamp is vmaxps/vminps
 * (NaN passes, as through its selects), 2^k the same two exact power-of-two factors
 * 2^(k >> 1) 2^(k - (k >> 1)), their exponent fields taken from t's bits in 6 integer
 * operations (7 from k): t = 1.5 2^23 + k is an integer in [2^23, 2^24), so bits(t) is
 * bits(1.5 2^23) + k, whose low 10 bits are zero, and bits(t) << 23 is k << 23, bits(t) << 22
 * with bit 22 cleared is (k >> 1) << 23.  The same bits for all 2^32 inputs (compared
 * exhaustively with the form from k); one Zen 5 core, 4096 floats in L1: 0.246 -> 0.223 ns. */
static inline fj_v8sf fj__vexp(fj_v8sf x) {
    const fj_v8sf magic = fj__vf(0x1.8p23f);
    const fj_v8sf xc = fj__vmin(fj__vf(89.0f), fj__vmax(fj__vf(-104.0f), x));
    const fj_v8sf t = fj__vfma(xc, fj__vf(0x1.715476p+0f), magic);
    const fj_v8sf kf = t - magic;
    fj_v8sf r = fj__vfma(kf, fj__vf(-0x1.62e430p-1f), xc);
    r = fj__vfma(kf, fj__vf(0x1.05c610p-29f), r);
    fj_v8sf q = fj__vfma(fj__vf(0x1.6a4b98p-10f), r, fj__vf(0x1.123e5cp-7f));
    q = fj__vfma(q, r, fj__vf(0x1.5558bap-5f));
    q = fj__vfma(q, r, fj__vf(0x1.55548cp-3f));
    q = fj__vfma(q, r, fj__vf(0x1.fffffcp-2f));
    const fj_v8sf p = fj__vfma(r * r, q, r) + fj__vf(1.0f);
    const fj_v8si h = ((fj_v8si)t << 22) & fj__vi((int32_t)0xff800000); /* (k >> 1) << 23 */
    const fj_v8si e127 = fj__vi(127 << 23);
    return (p * (fj_v8sf)(h + e127)) * (fj_v8sf)(((fj_v8si)t << 23) + e127 - h);
}

/* fj__vexp where every lane has |x| <= 86.5 (so -125 <= k <= 125 and p 2^k is a normal
 * float): no clamp, and 2^k put into p's exponent field by one integer add (bits(t) << 23 is
 * k << 23, see above) instead of two multiplications -- both exact, so the same bits. */
static inline fj_v8sf fj__vexp_normal(fj_v8sf x) {
    const fj_v8sf magic = fj__vf(0x1.8p23f);
    const fj_v8sf t = fj__vfma(x, fj__vf(0x1.715476p+0f), magic);
    const fj_v8sf kf = t - magic;
    fj_v8sf r = fj__vfma(kf, fj__vf(-0x1.62e430p-1f), x);
    r = fj__vfma(kf, fj__vf(0x1.05c610p-29f), r);
    fj_v8sf q = fj__vfma(fj__vf(0x1.6a4b98p-10f), r, fj__vf(0x1.123e5cp-7f));
    q = fj__vfma(q, r, fj__vf(0x1.5558bap-5f));
    q = fj__vfma(q, r, fj__vf(0x1.55548cp-3f));
    q = fj__vfma(q, r, fj__vf(0x1.fffffcp-2f));
    const fj_v8sf p = fj__vfma(r * r, q, r) + fj__vf(1.0f);
    return (fj_v8sf)((fj_v8si)p + ((fj_v8si)t << 23));
}

/* Whether every lane of u and v has |x| <= 86.5 (NaN: no): one test a pair of vectors, so the
 * tile loops take fj__vexp_normal for almost every pair and fj__vexp for the rest. */
static inline int fj__vexp_pair_normal(fj_v8sf u, fj_v8sf v) {
    const fj_v8sf lim = fj__vf(86.5f), mag = (fj_v8sf)fj__vi(0x7fffffff);
    const fj_v8si ok = (fj_v8si)((fj_v8sf)((fj_v8si)u & (fj_v8si)mag) <= lim) &
                       (fj_v8si)((fj_v8sf)((fj_v8si)v & (fj_v8si)mag) <= lim);
    return __builtin_ia32_movmskps256((fj_v8sf)ok) == 0xff;
}
/* A pair of vectors through FAST when OK says every lane is in its range, else SLOW. */
#define FJ__PAIR(OK, FAST, SLOW, u, v)                                                      \
    do {                                                                                    \
        if (__builtin_expect(OK(u, v), 1)) {                                                \
            u = FAST(u);                                                                    \
            v = FAST(v);                                                                    \
        } else {                                                                            \
            u = SLOW(u);                                                                    \
            v = SLOW(v);                                                                    \
        }                                                                                   \
    } while (0)
#define FJ__VEXP_PAIR(u, v) FJ__PAIR(fj__vexp_pair_normal, fj__vexp_normal, fj__vexp, u, v)

/* tanh, erf: on a = |x| (clamped to `cap`, where f has rounded to 1; NaN passes), one
 * polynomial per interval; interval = low 3 bits of bits(max(a, lo)) >> shift.  f = c0 + s r +
 * r (c1 + c2 r + ...), r = a - anchor (exact); s is erf's (1 in its interval 0, c0 = 0 there). */
static inline fj_v8sf fj__vodd(fj_v8sf x, const float (*tab)[8], int degree, int linear,
                               float cap, float lo, int shift) {
    const fj_v8si sign = (fj_v8si)x & fj__vi((int32_t)0x80000000);
    const fj_v8sf a = fj__vmin(fj__vf(cap), (fj_v8sf)((fj_v8si)x ^ sign));
    const fj_v8si i = (fj_v8si)fj__vmax(fj__vf(lo), a) >> shift;
    const fj_v8sf r = a - fj__vperm(tab[0], i);
    const float (*c)[8] = tab + 1 + linear;
    const fj_v8sf q = fj__vhorner(c, degree, i, r);
    fj_v8sf c0 = fj__vperm(c[0], i);
    if (linear) c0 = fj__vfma(fj__vperm(tab[1], i), r, c0);
    return (fj_v8sf)((fj_v8si)fj__vfma(q, r, c0) | sign);
}

/* tanh rounds to 1 from 9.0109 on; interval k >= 1 is the binade [2^(k-4), 2^(k-3)) */
static inline fj_v8sf fj__vtanh(fj_v8sf x) {
    return fj__vodd(x, fj__tab8_tanh, 9, 1, 9.125f, 0x1p-4f, 23);
}
/* erf rounds to 1 from 3.9192 on; [0, 3/8), then halves of the binades up to 4 */
static inline fj_v8sf fj__verf(fj_v8sf x) {
    return fj__vodd(x, fj__tab8_erf, 7, 1, 3.9375f, 0.25f, 22);
}

static inline fj_v8sf fj__vlog(fj_v8sf x) {
    /* x = m 2^e, m in [0.75, 1.5) by integer arithmetic on the bits, subnormals scaled by 2^23
     * first (zero and negative x too: replaced at the end) */
    const fj_v8si sub = (fj_v8si)(x < fj__vf(0x1p-126f));
    const fj_v8sf xs = fj__vsel(sub, x * fj__vf(0x1p23f), x);
    const fj_v8si e = ((fj_v8si)xs - fj__vi(0x3f400000)) >> 23;
    const fj_v8sf m = (fj_v8sf)((fj_v8si)xs - (e << 23));
    const fj_v8si i = (fj_v8si)m >> 20; /* low 3 bits: the interval */
    const fj_v8sf r = m - fj__vperm(fj__tab8_log[0], i);
    const fj_v8sf p = fj__vfma(fj__vhorner(fj__tab8_log + 1, 5, i, r), r,
                               fj__vperm(fj__tab8_log[1], i));
    const fj_v8sf ef = __builtin_convertvector(e + (sub & fj__vi(-23)), fj_v8sf);
    /* e ln2 + p, ln2 = hi + lo with lo > 0, as fj_vm_log_f32 */
    fj_v8sf y = fj__vfma(ef, fj__vf(0x1.62e42ep-1f), fj__vfma(ef, fj__vf(0x1.efa39ep-25f), p));
    /* log(+inf) = inf, log(NaN) = NaN: x itself; log(+-0) = -inf; log(x < 0) = NaN */
    y = fj__vsel((fj_v8si)__builtin_ia32_cmpps256(x, fj__vf(__builtin_inff()), 0x15 /* NLT_UU */),
                 x, y);
    y = fj__vsel((fj_v8si)(x == fj__vf(0.0f)), fj__vf(-__builtin_inff()), y);
    return fj__vsel((fj_v8si)(x < fj__vf(0.0f)), fj__vf(__builtin_nanf("")), y);
}

/* fj__vlog where every lane is a positive normal finite float: no subnormal scaling and no
 * special-value selects, otherwise the same operations (so the same bits). */
static inline fj_v8sf fj__vlog_normal(fj_v8sf x) {
    const fj_v8si e = ((fj_v8si)x - fj__vi(0x3f400000)) >> 23;
    const fj_v8sf m = (fj_v8sf)((fj_v8si)x - (e << 23));
    const fj_v8si i = (fj_v8si)m >> 20;
    const fj_v8sf r = m - fj__vperm(fj__tab8_log[0], i);
    const fj_v8sf p = fj__vfma(fj__vhorner(fj__tab8_log + 1, 5, i, r), r,
                               fj__vperm(fj__tab8_log[1], i));
    const fj_v8sf ef = __builtin_convertvector(e, fj_v8sf);
    return fj__vfma(ef, fj__vf(0x1.62e42ep-1f), fj__vfma(ef, fj__vf(0x1.efa39ep-25f), p));
}

/* Whether every lane of u and v is in [2^-126, FLT_MAX] (NaN: no). */
static inline int fj__vlog_pair_normal(fj_v8sf u, fj_v8sf v) {
    const fj_v8sf lo = fj__vf(0x1p-126f), hi = fj__vf(0x1.fffffep127f);
    const fj_v8si ok = (fj_v8si)(u >= lo) & (fj_v8si)(u <= hi) & (fj_v8si)(v >= lo) &
                       (fj_v8si)(v <= hi);
    return __builtin_ia32_movmskps256((fj_v8sf)ok) == 0xff;
}
#define FJ__VLOG_PAIR(u, v) FJ__PAIR(fj__vlog_pair_normal, fj__vlog_normal, fj__vlog, u, v)

typedef fj_v8sf fj__vtile_t;
#define FJ__TILE_FN FJ__TILE_VECTOR

#else /* no AVX2+FMA: loops over the scalar functions, as unstaged kernels run them */
#define FJ_VTILE 0

#define FJ__TILE_FN(NAME, SFN)                                                             \
    static inline void fj_tile_##NAME##_f32(float *restrict y, const float *restrict x,    \
                                            int64_t n) {                                  \
        _Pragma("omp simd") for (int64_t i = 0; i < n; i++) y[i] = SFN(x[i]);            \
    }
#define fj__vexp fj_exp_f32
#define fj__vtanh fj_tanh_f32
#define fj__verf fj_erf_f32
#define fj__vlog fj_log_f32

#endif

#if defined(FJ__VEXP_PAIR)
FJ__TILE_PAIR(exp, FJ__VEXP_PAIR)
#else
FJ__TILE_FN(exp, fj__vexp)
#endif
FJ__TILE_FN(tanh, fj__vtanh)
FJ__TILE_FN(erf, fj__verf)
#if defined(FJ__VLOG_PAIR)
FJ__TILE_PAIR(log, FJ__VLOG_PAIR)
#else
FJ__TILE_FN(log, fj__vlog)
#endif

#endif /* FJ_VTILE_H */
