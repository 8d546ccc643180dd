/* fj_reduce.h -- reduction support for generated kernels.
 *
 * fj_pw: pairwise summation over chunks. Each chunk (up to FJ_CHUNK elements, summed in
 * double by vector lanes) is pushed into a binary-counter cascade: level k holds the sum of
 * 2^k consecutive chunks, so the chunk sums are combined as a balanced binary tree, in a fixed
 * order. The error grows like log2(n / FJ_CHUNK), as in NumPy's pairwise summation, and the
 * result never depends on threads or timing.
 *
 * fj_pwv_*: the same cascade for a block of w columns at once (column reductions): level k of
 * column j lives at lv[k * ld + j]; each push adds one chunk of rows for every column, and the
 * per-column order of additions is exactly fj_pw's, so a column's sum never depends on the
 * block width or the thread count.
 *
 * FJ_KADD / fj_ktotal: compensated sums of float64 (double can hold no more of them). Each
 * lane of a row (4 to 16 of them, or FJ_LANES beside arg/max/min lanes: codegen/creduce.py)
 * or each column keeps a sum S and the exact rounding errors of its additions, C (Knuth's
 * TwoSum: S + C is the lane's sum to about eps^2); the lanes are combined pairwise at the end,
 * with their errors. The result is the exact sum rounded once in all but very ill-conditioned
 * cases (error <= eps |sum| + about (n eps)^2 sum|x|): at least as accurate as NumPy's
 * pairwise sum, in a fixed order, so the same bits on every call and any number of threads.
 *
 * fj_max_* / fj_min_*: NaN-propagating reductions (as np.max / np.min) usable in
 * `#pragma omp simd reduction(...)` loops.
 */
#ifndef FJ_REDUCE_H
#define FJ_REDUCE_H
#include <stdint.h>

#define FJ_CHUNK 1024
#define FJ_LANES 32 /* argmax/argmin: points of a row followed at once, one per lane */

typedef struct { double level[64]; int64_t count; } fj_pw;

static inline void fj_pw_init(fj_pw *p) { p->count = 0; }

static inline void fj_pw_push(fj_pw *p, double v) {
    int64_t n = p->count++;
    int k = 0;
    while (n & 1) {
        v = p->level[k] + v;
        n >>= 1;
        k++;
    }
    p->level[k] = v;
}

static inline double fj_pw_total(const fj_pw *p) {
    double total = 0.0;
    int started = 0;
    for (int k = 0; k < 64; k++) {
        if (p->count >> k & 1) {
            total = started ? p->level[k] + total : p->level[k];
            started = 1;
        }
    }
    return total;
}

/* Push chunk v (the n-th push, n counted from 0) into the cascade of w columns. */
#define FJ_PWV_PUSH(NAME, T)                                                              \
static inline void NAME(double *restrict lv, int64_t ld, int64_t n, const T *restrict v,  \
                        int64_t w) {                                                      \
    if (!(n & 1)) {                                                                       \
        _Pragma("omp simd")                                                              \
        for (int64_t j = 0; j < w; j++) lv[j] = (double)v[j];                             \
        return;                                                                           \
    }                                                                                     \
    _Pragma("omp simd")                                                                  \
    for (int64_t j = 0; j < w; j++) lv[j] = lv[j] + (double)v[j];                         \
    int64_t k = 1;                                                                        \
    for (n >>= 1; n & 1; n >>= 1, k++) {                                                  \
        double *restrict hi = lv + k * ld;                                                \
        const double *restrict lo = lv + (k - 1) * ld;                                    \
        _Pragma("omp simd")                                                              \
        for (int64_t j = 0; j < w; j++) hi[j] = hi[j] + lo[j];                            \
    }                                                                                     \
    double *restrict hi = lv + k * ld;                                                    \
    const double *restrict lo = lv + (k - 1) * ld;                                        \
    _Pragma("omp simd")                                                                  \
    for (int64_t j = 0; j < w; j++) hi[j] = lo[j];                                        \
}
FJ_PWV_PUSH(fj_pwv_push_f32, float)
FJ_PWV_PUSH(fj_pwv_push_f64, double)

/* The total of column j after n pushes (levels combined low to high, as fj_pw_total). */
static inline double fj_pwv_total(const double *lv, int64_t ld, int64_t n, int64_t j) {
    double total = 0.0;
    int started = 0;
    for (int k = 0; n >> k; k++) {
        if (n >> k & 1) {
            total = started ? lv[k * ld + j] + total : lv[k * ld + j];
            started = 1;
        }
    }
    return total;
}

/* S, C += x: S the rounded running sum, C the sum of its rounding errors (TwoSum, branch-free
   so that lane loops vectorise; exact in IEEE double without -ffast-math). */
#define FJ_KADD(S, C, X)                                                                  \
    do {                                                                                  \
        const double fj_kx = (X), fj_ks = (S);                                            \
        const double fj_kt = fj_ks + fj_kx, fj_kz = fj_kt - fj_ks;                        \
        (C) += (fj_ks - (fj_kt - fj_kz)) + (fj_kx - fj_kz);                               \
        (S) = fj_kt;                                                                      \
    } while (0)

/* The n lanes (s[l], c[l]) combined pairwise (lane l with l + h, h = n/2..1; n a power of
   two); the total's high part is returned and its error term stored in *lo. Each
   level is a loop of fixed width, which gcc vectorises (a loop over h it did not: 8 lanes,
   rows of 64, 12.2 -> 11.5 ns a row; 16 lanes, rows of 16, 28.9 -> 7.4 ns), with the same
   additions in the same order, so the same bits. */
#define FJ_KLEVEL(H)                                                                      \
    _Pragma("omp simd")                                                                  \
    for (int l = 0; l < (H); l++) {                                                       \
        double a = s[l], e = c[l] + c[l + (H)];                                           \
        FJ_KADD(a, e, s[l + (H)]);                                                        \
        s[l] = a;                                                                         \
        c[l] = e;                                                                         \
    }
static inline double fj_ktotal(double *restrict s, double *restrict c, double *lo, int n) {
    for (int h = n / 2; h >= 32; h >>= 1) { FJ_KLEVEL(h) }
    if (n >= 32) { FJ_KLEVEL(16) }
    if (n >= 16) { FJ_KLEVEL(8) }
    if (n >= 8) { FJ_KLEVEL(4) }
    if (n >= 4) { FJ_KLEVEL(2) }
    if (n >= 2) { FJ_KLEVEL(1) }
    *lo = c[0];
    return s[0];
}

/* hi + lo, the compensated total; an inf or NaN high part stands (its error term is NaN). */
static inline double fj_kfinish(double hi, double lo) {
    return __builtin_isfinite(hi) ? hi + lo : hi;
}

/* fj_row_sum_f32: the sum in double of float x[0..n), in one fixed order on every x86-64 build:
 * lane l of 16 adds x[16 i + l] over the whole groups of 16, lane 0 then the rest in order,
 * and the total is 0.0 + lane 0 + lane 1 + ... + lane 15 -- the order of gcc's 512-bit
 * vectorised `omp simd reduction(+)` loop, so AVX-512 builds keep their bits, and AVX2 ones
 * (whose 256-bit loop had 8 lanes) now give the same bits, four independent accumulator chains
 * instead of two (codegen/creduce.py: a sum re-read from a stored chunk, creread.py). */
#if defined(__AVX512F__) || defined(__AVX__)
#if defined(__AVX512F__)
typedef float fj__rsf __attribute__((vector_size(32)));  /* 8 floats -> 8 doubles (zmm) */
typedef double fj__rdf __attribute__((vector_size(64)));
#define FJ__RCVT(v) __builtin_ia32_cvtps2pd512_mask(v, (fj__rdf){0}, 0xff, 4)
#else
typedef float fj__rsf __attribute__((vector_size(16)));  /* 4 floats -> 4 doubles (ymm) */
typedef double fj__rdf __attribute__((vector_size(32)));
#define FJ__RCVT(v) __builtin_ia32_cvtps2pd256(v)
#endif
static inline double fj_row_sum_f32(const float *restrict x, int64_t n) {
    enum { W = (int)(sizeof(fj__rsf) / sizeof(float)), G = 16 / W }; /* accumulators */
    fj__rdf acc[G];
    for (int g = 0; g < G; g++) acc[g] = (fj__rdf){0};
    int64_t i = 0;
    for (; i + 16 <= n; i += 16) {
        for (int g = 0; g < G; g++) {
            fj__rsf v;
            __builtin_memcpy(&v, x + i + g * W, sizeof v);
            acc[g] += FJ__RCVT(v);
        }
    }
    double lane[16];
    __builtin_memcpy(lane, acc, sizeof lane);
    for (; i < n; i++) lane[0] += (double)x[i];
    double total = 0.0;
    for (int l = 0; l < 16; l++) total += lane[l];
    return total;
}
#else /* SSE2: gcc's own vectorised loop (its order) */
static inline double fj_row_sum_f32(const float *restrict x, int64_t n) {
    double total = 0.0;
    _Pragma("omp simd reduction(+:total)")
    for (int64_t i = 0; i < n; i++) total += x[i];
    return total;
}
#endif

/* fj_row_exp_f32: y[i] = e^x[i] for i < n, fj_vtile.h's vector exp over whole vectors and
 * fj_exp_f32 for the rest (the same bits for every input: fj_vtile.h), writing nothing past
 * y[n - 1], so y may be a row of an output (codegen/crowexp.py: a row kernel's exp).
 * fj_row_exp_pf_f32 also prefetches the n * pfb bytes from ahead (a row that a later point
 * will load, codegen/cprefetch.py), a line or two per step, so that the misses go out while
 * the exps compute instead of in one burst (which stalls the core once the fill buffers are
 * busy). */
#if defined(FJ_VTILE) && FJ_VTILE
static inline void fj_row_exp_pf_f32(float *restrict y, const float *restrict x, int64_t n,
                                     const char *ahead, int64_t pfb) {
    const int64_t lanes = (int64_t)(sizeof(fj__vtile_t) / sizeof(float));
    int64_t i = 0;
    for (; i + 2 * lanes <= n; i += 2 * lanes) { /* two chains in flight */
        if (ahead)
            for (int64_t b = i * pfb; b < (i + 2 * lanes) * pfb; b += 64)
                __builtin_prefetch(ahead + b, 0, 3);
        fj__vtile_t u, v;
        __builtin_memcpy(&u, x + i, sizeof u);
        __builtin_memcpy(&v, x + i + lanes, sizeof v);
#if defined(FJ__VEXP_PAIR)
        FJ__VEXP_PAIR(u, v);
#else
        u = fj__vexp(u);
        v = fj__vexp(v);
#endif
        __builtin_memcpy(y + i, &u, sizeof u);
        __builtin_memcpy(y + i + lanes, &v, sizeof v);
    }
    if (ahead)
        for (int64_t b = i * pfb; b < n * pfb; b += 64) __builtin_prefetch(ahead + b, 0, 3);
    for (; i + lanes <= n; i += lanes) {
        fj__vtile_t v;
        __builtin_memcpy(&v, x + i, sizeof v);
        v = fj__vexp(v);
        __builtin_memcpy(y + i, &v, sizeof v);
    }
    for (; i < n; i++) y[i] = fj_exp_f32(x[i]);
}
static inline void fj_row_exp_f32(float *restrict y, const float *restrict x, int64_t n) {
    fj_row_exp_pf_f32(y, x, n, (const char *)0, 0);
}
#endif

/* NaN first, then the plain select (branch-free, so the reduction loops vectorise; see
   fj_maximum_* in fj_scalar.h). */
static inline float fj_rmax_f32(float a, float b) { return (a != a) ? a : ((a > b) ? a : b); }
static inline float fj_rmin_f32(float a, float b) { return (a != a) ? a : ((a < b) ? a : b); }
static inline double fj_rmax_f64(double a, double b) { return (a != a) ? a : ((a > b) ? a : b); }
static inline double fj_rmin_f64(double a, double b) { return (a != a) ? a : ((a < b) ? a : b); }
#pragma omp declare reduction(fj_max_f32 : float : omp_out = fj_rmax_f32(omp_out, omp_in)) \
    initializer(omp_priv = -__builtin_inff())
#pragma omp declare reduction(fj_min_f32 : float : omp_out = fj_rmin_f32(omp_out, omp_in)) \
    initializer(omp_priv = __builtin_inff())
#pragma omp declare reduction(fj_max_f64 : double : omp_out = fj_rmax_f64(omp_out, omp_in)) \
    initializer(omp_priv = -__builtin_inf())
#pragma omp declare reduction(fj_min_f64 : double : omp_out = fj_rmin_f64(omp_out, omp_in)) \
    initializer(omp_priv = __builtin_inf())
#endif
