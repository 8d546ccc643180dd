/* fusejit sorting helpers (codegen/csort.py): order-preserving unsigned keys of every dtype,
   a stable LSD radix sort of keys (optionally carrying row positions), and binary search.

   Keys: fj_skey_<sfx>(v) is NumPy's sort order with ties where NumPy compares equal: -0.0
   and 0.0 get one key, every NaN the largest key (NaN sorts last); a stable sort of these
   keys carrying positions is NumPy's stable argsort. fj_vkey_<sfx>(v) is a bijection on the
   non-NaN values (-0.0 before 0.0, which NumPy's unstable sort may order either way) whose
   inverse fj_unkey_<sfx> turns sorted keys back into sorted values (NaN: the default NaN).
   Complex values (no key fits: NaN in either part makes four classes) sort by NumPy's own
   comparison fj_cless_<sfx> in a stable merge sort of positions (fj_cmsort_<sfx>). */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#define FJ_INT_KEYS(SFX, T, UT, BIAS)                                                        \
    static inline UT fj_skey_##SFX(T v) { return (UT)((UT)v ^ (UT)(BIAS)); }                \
    static inline UT fj_vkey_##SFX(T v) { return (UT)((UT)v ^ (UT)(BIAS)); }                \
    static inline T fj_unkey_##SFX(UT k) { return (T)(UT)(k ^ (UT)(BIAS)); }
FJ_INT_KEYS(b, uint8_t, uint8_t, 0)
FJ_INT_KEYS(u8, uint8_t, uint8_t, 0)
FJ_INT_KEYS(u16, uint16_t, uint16_t, 0)
FJ_INT_KEYS(u32, uint32_t, uint32_t, 0)
FJ_INT_KEYS(u64, uint64_t, uint64_t, 0)
FJ_INT_KEYS(i8, int8_t, uint8_t, 0x80U)
FJ_INT_KEYS(i16, int16_t, uint16_t, 0x8000U)
FJ_INT_KEYS(i32, int32_t, uint32_t, 0x80000000U)
FJ_INT_KEYS(i64, int64_t, uint64_t, 0x8000000000000000ULL)

/* floats: the bits, sign flipped for positives and all bits flipped for negatives; without
   branches (masks), so that the loops filling rows with keys vectorise */
#define FJ_FLOAT_KEYS(SFX, T, UT, TOP)                                                       \
    static inline UT fj_fbits_##SFX(T v) { UT u; memcpy(&u, &v, sizeof u); return u; }      \
    static inline UT fj_forder_##SFX(UT u) {                                               \
        return (UT)(u ^ ((UT)(0 - (UT)(u >> (8 * sizeof(UT) - 1))) | (UT)(TOP)));          \
    }                                                                                      \
    static inline UT fj_skey_##SFX(T v) {                                                  \
        const UT z = fj_fbits_##SFX(v) & (UT)(0 - (UT)(v != 0)); /* -0.0 -> 0.0 */         \
        return (UT)(fj_forder_##SFX(z) | (UT)(0 - (UT)(v != v)));                          \
    }                                                                                      \
    static inline UT fj_vkey_##SFX(T v) {                                                  \
        return (UT)(fj_forder_##SFX(fj_fbits_##SFX(v)) | (UT)(0 - (UT)(v != v)));          \
    }                                                                                      \
    static inline T fj_unkey_##SFX(UT k) {                                                 \
        if (k == (UT)~(UT)0) return (T)__builtin_nanf("");                                 \
        UT u = (k & (TOP)) ? (UT)(k & ~(UT)(TOP)) : (UT)~k;                                \
        T v; memcpy(&v, &u, sizeof v); return v;                                           \
    }
FJ_FLOAT_KEYS(f16, _Float16, uint16_t, 0x8000U)
FJ_FLOAT_KEYS(f32, float, uint32_t, 0x80000000U)
FJ_FLOAT_KEYS(f64, double, uint64_t, 0x8000000000000000ULL)

/* 8- and 16-bit keys (32 and 64: fj_rsort* below).
   Stable ascending sort of k[0..n) by the W-bit key in bits [SHIFT, SHIFT + W) of each
   element; kt is scratch of the same size. Returns 1 when the result is in kt, else 0.
   Short rows: insertion sort of the whole elements; longer: LSD radix sort, D-bit digits,
   a digit skipped when all keys share it (small integers, narrow ranges). Packed elements
   (key << 32 | position, SHIFT 32) sort stably either way: positions break the ties. */
#define FJ_RADIX(NAME, UT, W, D, SHIFT)                                                      \
    static inline int NAME(UT *k, UT *kt, int64_t n) {                                              \
        enum { P = ((W) + (D) - 1) / (D), B = 1 << (D) };                                    \
        if (n <= 32) {                                                                       \
            for (int64_t i = 1; i < n; i++) {                                                \
                const UT v = k[i];                                                           \
                int64_t j = i;                                                               \
                for (; j > 0 && k[j - 1] > v; j--) k[j] = k[j - 1];                          \
                k[j] = v;                                                                    \
            }                                                                                \
            return 0;                                                                        \
        }                                                                                    \
        uint32_t cnt[P][B];                                                                  \
        memset(cnt, 0, sizeof cnt);                                                          \
        for (int64_t i = 0; i < n; i++) {                                                    \
            const UT v = (UT)(k[i] >> (SHIFT));                                              \
            for (int p = 0; p < P; p++) cnt[p][(v >> ((D) * p)) & (B - 1)]++;                \
        }                                                                                    \
        int flip = 0;                                                                        \
        for (int p = 0; p < P; p++) {                                                        \
            uint32_t *c = cnt[p];                                                            \
            const int sh = (SHIFT) + (D) * p;                                                \
            if (c[(k[0] >> sh) & (B - 1)] == (uint32_t)n) continue;                          \
            uint32_t s = 0;                                                                  \
            for (int d = 0; d < B; d++) { const uint32_t t = c[d]; c[d] = s; s += t; }       \
            for (int64_t i = 0; i < n; i++) {                                                \
                const UT v = k[i];                                                           \
                kt[c[(v >> sh) & (B - 1)]++] = v;                                            \
            }                                                                                \
            UT *tk = k; k = kt; kt = tk;                                                     \
            flip ^= 1;                                                                       \
        }                                                                                    \
        return flip;                                                                         \
    }
FJ_RADIX(fj_ksort8, uint8_t, 8, 8, 0)
FJ_RADIX(fj_ksort16, uint16_t, 16, 8, 0)
FJ_RADIX(fj_psort8, uint64_t, 8, 8, 32)
FJ_RADIX(fj_psort16, uint64_t, 16, 8, 32)

/* Rows of 32- and 64-bit keys (fj_rsort*): fj_rsort<NAME>(k, kt, x, xt, n, diff) sorts
   k[0..n) stably by the key bits (element >> SHIFT), carrying positions x when CARRY;
   returns 1 when the result is in kt (and xt), else 0. diff holds the key bits that differ
   between the elements (OR ^ AND of the keys): the digits, of at most FJ_LSD_D bits each
   (8 in shorter rows: FJ_LSD_M8, FJ_LSD_M8W), are spread evenly over the bits from its
   lowest to its highest set bit and a digit with no differing bit is skipped. Rows of up
   to 32: insertion sort. Otherwise an LSD radix sort that counts every digit in one read.
   fj_rsort<NAME>_team(..., t, nt) is called by every thread t of a team of nt (a long row,
   codegen/csort.py): slice t of the row (n*t/nt to n*(t+1)/nt) is radix-sorted by thread t,
   then the slices are merged pairwise, stably (the left slice first on ties), each thread
   writing slice t of each merge's output, found by binary search (merge path); so slice t
   of the result is thread t's own writing (no barrier needed before it reads it back).
   fj_rsort<NAME>_par(..., sh, t, nt), what codegen/csort.py calls for a long row: one
   parallel MSD pass, then cache-sized buckets sorted by the threads, no merge (it keeps
   _team for rows whose keys crowd into one bucket). A stable sort has one result, so the
   thread count never changes it. */
#define FJ_LSD_D 11
/* rows shorter than these take digits of at most 8 bits: more passes, but each pass's count
   table, cleared and scanned whole, no longer outweighs the row (FJ_LSD_M8 where the keys
   differ in 32 bits or fewer, FJ_LSD_M8W where in more) */
#ifndef FJ_LSD_M8
#define FJ_LSD_M8 512
#endif
#ifndef FJ_LSD_M8W
#define FJ_LSD_M8W 2048
#endif

/* c[0..n) replaced by its exclusive prefix sums; returns the total. In vectors of
   FJ_SCAN_LANES counts (log2(lanes) shifted adds each, the carry kept in a vector) where the
   compiler has __builtin_shufflevector: a digit's count table of 2048 is scanned several
   times faster than one count at a time (a chain of loads, adds and stores). */
#if defined(__AVX512F__)
#define FJ_SCAN_LANES 16
#elif defined(__AVX2__)
#define FJ_SCAN_LANES 8
#else
#define FJ_SCAN_LANES 4
#endif
#if defined(__has_builtin)
#if __has_builtin(__builtin_shufflevector)
#define FJ_SCAN_VECTOR 1
#endif
#endif
static inline uint32_t fj_exscan_u32(uint32_t *c, int64_t n) {
    int64_t j = 0;
    uint32_t s = 0;
#ifdef FJ_SCAN_VECTOR
    typedef uint32_t fj_sv __attribute__((vector_size(4 * FJ_SCAN_LANES)));
    const fj_sv z = {0};
    fj_sv carry = {0};
    for (; j + FJ_SCAN_LANES <= n; j += FJ_SCAN_LANES) {
        fj_sv x;
        memcpy(&x, c + j, sizeof x);
        const fj_sv o = x;
#if FJ_SCAN_LANES == 16
        x += __builtin_shufflevector(z, x, 0, 16, 17, 18, 19, 20, 21, 22, 23, 24, 25, 26, 27,
                                     28, 29, 30);
        x += __builtin_shufflevector(z, x, 0, 1, 16, 17, 18, 19, 20, 21, 22, 23, 24, 25, 26,
                                     27, 28, 29);
        x += __builtin_shufflevector(z, x, 0, 1, 2, 3, 16, 17, 18, 19, 20, 21, 22, 23, 24, 25,
                                     26, 27);
        x += __builtin_shufflevector(z, x, 0, 1, 2, 3, 4, 5, 6, 7, 16, 17, 18, 19, 20, 21, 22,
                                     23);
        const fj_sv e = x - o + carry;
        carry += __builtin_shufflevector(x, x, 15, 15, 15, 15, 15, 15, 15, 15, 15, 15, 15, 15,
                                         15, 15, 15, 15);
#elif FJ_SCAN_LANES == 8
        x += __builtin_shufflevector(z, x, 0, 8, 9, 10, 11, 12, 13, 14);
        x += __builtin_shufflevector(z, x, 0, 1, 8, 9, 10, 11, 12, 13);
        x += __builtin_shufflevector(z, x, 0, 1, 2, 3, 8, 9, 10, 11);
        const fj_sv e = x - o + carry;
        carry += __builtin_shufflevector(x, x, 7, 7, 7, 7, 7, 7, 7, 7);
#else
        x += __builtin_shufflevector(z, x, 0, 4, 5, 6);
        x += __builtin_shufflevector(z, x, 0, 1, 4, 5);
        const fj_sv e = x - o + carry;
        carry += __builtin_shufflevector(x, x, 3, 3, 3, 3);
#endif
        memcpy(c + j, &e, sizeof e);
    }
    s = carry[0];
#endif
    for (; j < n; j++) { const uint32_t e = c[j]; c[j] = s; s += e; }
    return s;
}
#define FJ_LEAF_BYTES (512 << 10) /* a bucket this big, with its scratch, fits a core's L2 */
#ifdef _OPENMP
#define FJ_MAX_THREADS omp_get_max_threads()
#define FJ_THREAD_NUM omp_get_thread_num()
#define FJ_NUM_THREADS omp_get_num_threads()
#define FJ_BARRIER _Pragma("omp barrier")
#else
#define FJ_MAX_THREADS 1
#define FJ_THREAD_NUM 0
#define FJ_NUM_THREADS 1
#define FJ_BARRIER
#endif
#define FJ_MSD_D 11      /* the top MSD digit of 64-bit keys (2048 buckets; float64: sign and 10
                            exponent bits) */
#define FJ_MSD_D32 9     /* of 32-bit keys (float32: sign and exponent; faster than 11 bits
                            for float32, uint32 and packed argsort keys, 1e6 of them) */
#define FJ_BKT_EXTRA 3   /* a bucket of m sorted on its top bitlen(m) + 3 differing bits */
#define FJ_INS 24        /* buckets up to this long: insertion sort */
#define FJ_CLAIM 8192    /* elements of buckets a thread claims at a time (NAME##_par) */
#define FJ_PAR_SHARED(nt) (2 + (size_t)(nt) * (1 << FJ_MSD_D))
/* one thread's state between fj_rsort*_par and fj_rsort*_next */
typedef struct { uint32_t st[(1 << FJ_MSD_D) + 1]; int64_t c0, c1; int B, j, mode; } fj_pstate;
#define FJ_RSORT(NAME, UT, SHIFT, CARRY)                                                     \
    static inline int NAME##_lsd(UT *a, UT *b, uint32_t *xa, uint32_t *xb, int64_t m,       \
                                 UT diff, int lo, int np, int d) {                           \
        const UT mask = (UT)((1u << d) - 1);                                                 \
        uint32_t cnt[((64 + FJ_LSD_D - 1) / FJ_LSD_D) << FJ_LSD_D];                          \
        memset(cnt, 0, (size_t)(np << d) * sizeof(uint32_t));                                \
        if (np > (8 * (int)sizeof(UT) - (SHIFT) + FJ_LSD_D - 1) / FJ_LSD_D) /* short rows */ \
            for (int64_t i = 0; i < m; i++) {                                                \
                const UT v = (UT)(a[i] >> ((SHIFT) + lo));                                   \
                for (int p = 0; p < np; p++) cnt[(p << d) + ((v >> (d * p)) & mask)]++;      \
            }                                                                                \
        else                                                                                 \
            for (int64_t i = 0; i < m; i++) {                                                \
                const UT v = (UT)(a[i] >> ((SHIFT) + lo));                                   \
                _Pragma("GCC unroll 8")                                                      \
                for (int p = 0; p < (8 * (int)sizeof(UT) - (SHIFT) + FJ_LSD_D - 1) / FJ_LSD_D; p++) \
                    if (p < np) cnt[(p << d) + ((v >> (d * p)) & mask)]++;                   \
            }                                                                                \
        int flip = 0;                                                                        \
        for (int p = 0; p < np; p++) {                                                       \
            if (!((diff >> (lo + d * p)) & mask)) continue;                                  \
            uint32_t *const c = cnt + (p << d);                                              \
            const int sh = (SHIFT) + lo + d * p;                                             \
            fj_exscan_u32(c, 1 << d);                                                        \
            for (int64_t i = 0; i < m; i++) {                                                \
                const UT v = a[i];                                                           \
                const uint32_t o = c[(v >> sh) & mask]++;                                    \
                b[o] = v;                                                                    \
                if (CARRY) xb[o] = xa[i];                                                    \
            }                                                                                \
            UT *const t = a; a = b; b = t;                                                   \
            uint32_t *const tx = xa; xa = xb; xb = tx;                                       \
            flip ^= 1;                                                                       \
        }                                                                                    \
        return flip;                                                                         \
    }                                                                                        \
    /* a[0..m) sorted by the key bits in diff, the result in b when want, else in a: LSD   \
       when the elements fit a core's cache (FJ_LEAF_BYTES) or take 3 passes at most, else one  \
       MSD pass on the top bits of diff into b (buckets of ~2^14 when uniform), each bucket \
       sorted recursively on the bits below */                                               \
    static inline void NAME##_hyb(UT *a, UT *b, uint32_t *xa, uint32_t *xb, int64_t m,     \
                                  UT diff, int want) {                                       \
        const int lo = diff ? __builtin_ctzll((uint64_t)diff) : 0;                           \
        const int hi = diff ? 64 - __builtin_clzll((uint64_t)diff) : 0;                      \
        if (m * (int64_t)(sizeof(UT) + (CARRY ? 4 : 0)) <= FJ_LEAF_BYTES                     \
            || hi - lo <= 3 * FJ_LSD_D) {                                                    \
            int f = 0;                                                                       \
            if (diff && m > 1) {                                                             \
                const int dw = m < (hi - lo > 32 ? FJ_LSD_M8W : FJ_LSD_M8) ? 8 : FJ_LSD_D;  \
                const int np = (hi - lo + dw - 1) / dw;                                      \
                f = NAME##_lsd(a, b, xa, xb, m, diff, lo, np, (hi - lo + np - 1) / np);      \
            }                                                                                \
            if (f != want) {                                                                 \
                memcpy(f ? a : b, f ? b : a, (size_t)m * sizeof(UT));                        \
                if (CARRY) memcpy(f ? xa : xb, f ? xb : xa, (size_t)m * sizeof(uint32_t));   \
            }                                                                                \
            return;                                                                          \
        }                                                                                    \
        int dm = 49 - __builtin_clzll((uint64_t)m);                                          \
        dm = dm > FJ_LSD_D ? FJ_LSD_D : dm;                                                  \
        const int top = hi - dm, B = 1 << dm;                                                \
        uint32_t c[(1 << FJ_LSD_D) + 1], st[(1 << FJ_LSD_D) + 1];                           \
        memset(c, 0, (size_t)B * sizeof(uint32_t));                                          \
        for (int64_t i = 0; i < m; i++) c[(a[i] >> ((SHIFT) + top)) & (UT)(B - 1)]++;        \
        uint32_t q = 0;                                                                      \
        for (int j = 0; j < B; j++) { st[j] = q; q += c[j]; c[j] = st[j]; }                  \
        st[B] = q;                                                                           \
        for (int64_t i = 0; i < m; i++) {                                                    \
            const UT v = a[i];                                                               \
            const uint32_t w = c[(v >> ((SHIFT) + top)) & (UT)(B - 1)]++;                    \
            b[w] = v;                                                                        \
            if (CARRY) xb[w] = xa[i];                                                        \
        }                                                                                    \
        const UT sub = (UT)(diff & (UT)(((UT)1 << top) - 1));                                \
        for (int j = 0; j < B; j++)                                                          \
            if (st[j + 1] > st[j])                                                           \
                NAME##_hyb(b + st[j], a + st[j], CARRY ? xb + st[j] : 0,                     \
                           CARRY ? xa + st[j] : 0, st[j + 1] - st[j], sub, !want);           \
    }                                                                                        \
    /* output positions [k0, k1) of the stable merge of A[0..la) and B[0..lb) */             \
    static inline int64_t NAME##_split(const UT *A, int64_t la, const UT *B, int64_t lb,    \
                                       int64_t k) {                                          \
        int64_t lo = k > lb ? k - lb : 0, hi = k < la ? k : la;                              \
        while (lo < hi) {                                                                    \
            const int64_t mid = lo + ((hi - lo) >> 1);                                       \
            if ((UT)(A[mid] >> (SHIFT)) <= (UT)(B[k - mid - 1] >> (SHIFT))) lo = mid + 1;    \
            else hi = mid;                                                                   \
        }                                                                                    \
        return lo;                                                                           \
    }                                                                                        \
    static inline void NAME##_merge(const UT *A, const uint32_t *XA, int64_t la, const UT *B, \
                                    const uint32_t *XB, int64_t lb, UT *O, uint32_t *XO,     \
                                    int64_t k0, int64_t k1) {                                \
        int64_t i = NAME##_split(A, la, B, lb, k0), j = k0 - i;                              \
        const int64_t ie = NAME##_split(A, la, B, lb, k1), je = k1 - ie;                     \
        int64_t o = k0;                                                                      \
        while (i < ie && j < je) {                                                           \
            const UT va = A[i], vb = B[j];                                                   \
            const int tb = (UT)(vb >> (SHIFT)) < (UT)(va >> (SHIFT));                        \
            O[o] = tb ? vb : va;                                                             \
            if (CARRY) XO[o] = tb ? XB[j] : XA[i];                                           \
            o++; i += !tb; j += tb;                                                          \
        }                                                                                    \
        for (; i < ie; i++, o++) { O[o] = A[i]; if (CARRY) XO[o] = XA[i]; }                  \
        for (; j < je; j++, o++) { O[o] = B[j]; if (CARRY) XO[o] = XB[j]; }                  \
    }                                                                                        \
    static inline int NAME##_team(UT *k, UT *kt, uint32_t *x, uint32_t *xt, int64_t n,      \
                                  UT diff, int t, int nt) {                                  \
        if (!diff || n < 2) return 0;                                                        \
        if (nt == 1 && n <= 32) {                                                            \
            for (int64_t i = 1; i < n; i++) {                                                \
                const UT v = k[i];                                                           \
                const uint32_t xv = CARRY ? x[i] : 0;                                        \
                int64_t j = i;                                                               \
                for (; j > 0 && (UT)(k[j - 1] >> (SHIFT)) > (UT)(v >> (SHIFT)); j--) {       \
                    k[j] = k[j - 1];                                                         \
                    if (CARRY) x[j] = x[j - 1];                                              \
                }                                                                            \
                k[j] = v;                                                                    \
                if (CARRY) x[j] = xv;                                                        \
            }                                                                                \
            return 0;                                                                        \
        }                                                                                    \
        const int64_t c0 = n * t / nt, c1 = n * (t + 1) / nt;                                \
        NAME##_hyb(k + c0, kt + c0, CARRY ? x + c0 : 0, CARRY ? xt + c0 : 0, c1 - c0, diff,  \
                   1);                                                                       \
        int f = 1;                                                                           \
        for (int w = 1; w < nt; w *= 2) {                                                    \
            UT *const src = f ? kt : k, *const dst = f ? k : kt;                             \
            uint32_t *const xs = f ? xt : x, *const xd = f ? x : xt;                         \
            FJ_BARRIER                                                                       \
            for (int g = 0; g < nt; g += 2 * w) {                                            \
                const int64_t s = n * g / nt;                                                \
                const int64_t mid = n * (g + w < nt ? g + w : nt) / nt;                      \
                const int64_t e = n * (g + 2 * w < nt ? g + 2 * w : nt) / nt;                \
                const int64_t a0 = s > c0 ? s : c0, a1 = e < c1 ? e : c1;                    \
                if (a0 >= a1) continue;                                                      \
                NAME##_merge(src + s, CARRY ? xs + s : 0, mid - s, src + mid,                \
                             CARRY ? xs + mid : 0, e - mid, dst + s, CARRY ? xd + s : 0,     \
                             a0 - s, a1 - s);                                                \
            }                                                                                \
            f ^= 1;                                                                          \
        }                                                                                    \
        return f;                                                                            \
    }                                                                                        \
    static inline int NAME(UT *k, UT *kt, uint32_t *x, uint32_t *xt, int64_t n, UT diff) {  \
        return NAME##_team(k, kt, x, xt, n, diff, 0, 1);                                     \
    }                                                                                        \
    /* stable insertion sort of a[0..m) by the key bits */                                   \
    static inline void NAME##_ins(UT *a, uint32_t *xa, int64_t m) {                          \
        for (int64_t i = 1; i < m; i++) {                                                    \
            const UT v = a[i];                                                               \
            const uint32_t xv = CARRY ? xa[i] : 0;                                           \
            int64_t j = i;                                                                   \
            for (; j > 0 && (UT)(a[j - 1] >> (SHIFT)) > (UT)(v >> (SHIFT)); j--) {           \
                a[j] = a[j - 1];                                                             \
                if (CARRY) xa[j] = xa[j - 1];                                                \
            }                                                                                \
            a[j] = v;                                                                        \
            if (CARRY) xa[j] = xv;                                                           \
        }                                                                                    \
    }                                                                                        \
    /* a[0..m) sorted stably by the key bits, in place (b, xb: scratch of m). Two (or four) \
       LSD passes on the top bitlen(m) + FJ_BKT_EXTRA of the bits that differ in the bucket \
       (its own OR ^ AND): uniform keys then differ in those bits but for a few neighbours, \
       and the runs that agree in all of them are finished by insertion sort (up to FJ_INS) \
       or sorted the same way on the bits below (longer runs: ties, narrow low bits). */    \
    static void NAME##_bkt(UT *a, UT *b, uint32_t *xa, uint32_t *xb, int64_t m) {           \
        if (m <= FJ_INS) { NAME##_ins(a, xa, m); return; }                                   \
        UT o = 0, z = (UT)~(UT)0;                                                            \
        for (int64_t i = 0; i < m; i++) {                                                    \
            const UT v = (UT)(a[i] >> (SHIFT));                                              \
            o |= v; z &= v;                                                                  \
        }                                                                                    \
        const UT r = o ^ z;                                                                  \
        if (!r) return;                                                                      \
        const int hi = 64 - __builtin_clzll((uint64_t)r), lo = __builtin_ctzll((uint64_t)r); \
        int K = 64 - __builtin_clzll((uint64_t)m) + FJ_BKT_EXTRA;                            \
        K = K > hi - lo ? hi - lo : K;                                                       \
        const int P = 2 * ((K + 2 * FJ_LSD_D - 1) / (2 * FJ_LSD_D)), d = (K + P - 1) / P;    \
        const int bot = hi - P * d > 0 ? hi - P * d : 0;                                     \
        const UT mask = (UT)((1u << d) - 1);                                                 \
        uint32_t c[1 << d];                                                                  \
        UT *pa = a, *pb = b;                                                                 \
        uint32_t *xpa = xa, *xpb = xb;                                                       \
        for (int p = 0; p < P; p++) {                                                        \
            const int sh = (SHIFT) + bot + d * p;                                            \
            memset(c, 0, sizeof c);                                                          \
            for (int64_t i = 0; i < m; i++) c[(pa[i] >> sh) & mask]++;                       \
            fj_exscan_u32(c, 1 << d);                                                        \
            for (int64_t i = 0; i < m; i++) {                                                \
                const UT v = pa[i];                                                          \
                const uint32_t w = c[(v >> sh) & mask]++;                                    \
                pb[w] = v;                                                                   \
                if (CARRY) xpb[w] = xpa[i];                                                  \
            }                                                                                \
            UT *const tk = pa; pa = pb; pb = tk;                                             \
            uint32_t *const tx = xpa; xpa = xpb; xpb = tx;                                   \
        }                                                                                    \
        if (bot <= lo) return;                                                               \
        const int sb = (SHIFT) + bot;                                                        \
        for (int64_t i = 1; i < m; i++) {                                                    \
            if ((a[i] ^ a[i - 1]) >> sb) continue; /* a run starts at i - 1 */               \
            const int64_t s = i - 1;                                                         \
            int64_t e = i + 1;                                                               \
            while (e < m && !((a[e] ^ a[s]) >> sb)) e++;                                     \
            if (e - s > FJ_INS) NAME##_bkt(a + s, b + s, CARRY ? xa + s : 0, CARRY ? xb + s : 0, e - s); \
            else NAME##_ins(a + s, CARRY ? xa + s : 0, e - s);                               \
            i = e;                                                                           \
        }                                                                                    \
    }                                                                                        \
    /* A long row over a team (every thread t of nt calls NAME##_par, then NAME##_next until \
       it returns 0): one parallel MSD pass on the top FJ_MSD_D (32-bit keys: FJ_MSD_D32)  \
       differing bits (each thread counts its slice, then moves it into the buckets, slice \
       0's elements first: stable); then each NAME##_next claims FJ_CLAIM elements' worth  \
       of buckets, sorts them (NAME##_bkt) and returns their range [*a, *b) of the result, \
       for the caller to write out while it is in cache (no barrier: a range is one        \
       thread's). One thread with 32-bit keys runs NAME##_hyb instead (at most three LSD    \
       passes; the MSD pass and the buckets' own passes made float32 1e6 ~15% slower).     \
       NAME##_par returns 1 when the result is in kt (xt), else 0. sh: shared               \
       scratch of FJ_PAR_SHARED(nt) uint32; ps: the thread's own state. A row whose largest \
       bucket would exceed 3/4 of a thread's share is sorted by NAME##_team instead (slices \
       sorted, then merged: balanced); NAME##_next then gives thread t its slice t, which  \
       it wrote itself in the last merge (so does a row with nothing to sort). */           \
    static inline int NAME##_par(UT *k, UT *kt, uint32_t *x, uint32_t *xt, int64_t n,       \
                                 UT diff, uint32_t *sh, int t, int nt, fj_pstate *ps) {      \
        ps->c0 = n * t / nt; ps->c1 = n * (t + 1) / nt; ps->mode = 0;                       \
        if (!diff || n < 2) return 0;                                                        \
        if (nt == 1 && sizeof(UT) == 4) { /* 3 LSD passes at most: fewer than MSD + bucket */ \
            NAME##_hyb(k, kt, x, xt, n, diff, 1);                                            \
            return 1;                                                                        \
        }                                                                                    \
        const int hi = 64 - __builtin_clzll((uint64_t)diff), lo = __builtin_ctzll((uint64_t)diff); \
        const int dt = 8 * (int)sizeof(UT) - (SHIFT) > 32 ? FJ_MSD_D : FJ_MSD_D32;         \
        const int d = hi - lo < dt ? hi - lo : dt, top = hi - d, B = 1 << d;                 \
        int64_t *const claim = (int64_t *)(void *)sh;                                        \
        uint32_t *const cnt = sh + 2, *const c = cnt + (size_t)t * B;                        \
        const int64_t c0 = ps->c0, c1 = ps->c1;                                              \
        { /* two tables, even and odd elements: two chains of updates where neighbours     \
             share a bucket (floats' exponents) */                                           \
            uint32_t c2[B];                                                                  \
            memset(c, 0, (size_t)B * sizeof(uint32_t));                                      \
            memset(c2, 0, (size_t)B * sizeof(uint32_t));                                     \
            int64_t i = c0;                                                                  \
            for (; i + 1 < c1; i += 2) {                                                     \
                c[(k[i] >> ((SHIFT) + top)) & (UT)(B - 1)]++;                                \
                c2[(k[i + 1] >> ((SHIFT) + top)) & (UT)(B - 1)]++;                           \
            }                                                                                \
            if (i < c1) c[(k[i] >> ((SHIFT) + top)) & (UT)(B - 1)]++;                        \
            for (int j = 0; j < B; j++) c[j] += c2[j];                                       \
        }                                                                                    \
        if (t == 0) *claim = 0;                                                              \
        FJ_BARRIER                                                                           \
        uint32_t *const st = ps->st, off[B];                                                 \
        uint32_t q = 0, big = 0;                                                             \
        for (int j = 0; j < B; j++) {                                                        \
            st[j] = q;                                                                       \
            uint32_t o = q;                                                                  \
            for (int u = 0; u < nt; u++) {                                                   \
                const uint32_t e = cnt[(size_t)u * B + j];                                   \
                if (u < t) o += e;                                                           \
                q += e;                                                                      \
            }                                                                                \
            off[j] = o;                                                                      \
            big = q - st[j] > big ? q - st[j] : big;                                         \
        }                                                                                    \
        st[B] = q;                                                                           \
        if (nt > 1 && (int64_t)big * 4 > n * 3 / nt) {                                       \
            FJ_BARRIER /* every thread has read the counts */                                \
            return NAME##_team(k, kt, x, xt, n, diff, t, nt);                                \
        }                                                                                    \
        for (int64_t i = c0; i < c1; i++) {                                                  \
            const UT v = k[i];                                                               \
            const uint32_t w = off[(v >> ((SHIFT) + top)) & (UT)(B - 1)]++;                  \
            kt[w] = v;                                                                       \
            if (CARRY) xt[w] = x[i];                                                         \
        }                                                                                    \
        ps->mode = 1; ps->B = B; ps->j = 0;                                                  \
        FJ_BARRIER                                                                           \
        return 1;                                                                            \
    }                                                                                        \
    static inline int NAME##_next(UT *k, UT *kt, uint32_t *x, uint32_t *xt, int64_t n,      \
                                  uint32_t *sh, fj_pstate *ps, int64_t *a, int64_t *b) {     \
        if (ps->mode != 1) {                                                                 \
            *a = ps->c0; *b = ps->c1;                                                        \
            const int first = ps->mode == 0;                                                 \
            ps->mode = 2;                                                                    \
            return first && *b > *a;                                                         \
        }                                                                                    \
        const uint32_t *const st = ps->st;                                                   \
        const int B = ps->B;                                                                 \
        int j = ps->j;                                                                       \
        for (;;) {                                                                           \
            const int64_t p = __atomic_fetch_add((int64_t *)(void *)sh, FJ_CLAIM,           \
                                                 __ATOMIC_RELAXED);                          \
            if (p >= n) { ps->j = j; return 0; }                                             \
            while (j < B && st[j] < p) j++;                                                  \
            const int j0 = j;                                                                \
            for (; j < B && st[j] < p + FJ_CLAIM; j++)                                       \
                if (st[j + 1] > st[j])                                                       \
                    NAME##_bkt(kt + st[j], k + st[j], CARRY ? xt + st[j] : 0,                \
                               CARRY ? x + st[j] : 0, st[j + 1] - st[j]);                    \
            if (j > j0) { ps->j = j; *a = st[j0]; *b = st[j]; return 1; }                    \
        }                                                                                    \
    }
FJ_RSORT(fj_rsort32, uint32_t, 0, 0)
FJ_RSORT(fj_rsort64, uint64_t, 0, 0)
FJ_RSORT(fj_rpsort32, uint64_t, 32, 0)
FJ_RSORT(fj_rcsort64, uint64_t, 0, 1)

/* The number of values of sorted a[0..n) (element stride s) before x: those that sort
   below it (left) or not above it (right), in NumPy's order (NaN last, -0.0 == 0.0). */
#define FJ_SEARCH(SFX, T, UT)                                                                \
    static inline int64_t fj_search_##SFX(const T *a, int64_t s, int64_t n, T x, int right) { \
        const UT v = fj_skey_##SFX(x);                                                       \
        int64_t lo = 0, hi = n;                                                              \
        while (lo < hi) {                                                                    \
            const int64_t mid = lo + ((hi - lo) >> 1);                                       \
            const UT am = fj_skey_##SFX(a[mid * s]);                                         \
            if (right ? am <= v : am < v) lo = mid + 1; else hi = mid;                       \
        }                                                                                    \
        return lo;                                                                           \
    }
FJ_SEARCH(b, uint8_t, uint8_t)
FJ_SEARCH(u8, uint8_t, uint8_t)
FJ_SEARCH(u16, uint16_t, uint16_t)
FJ_SEARCH(u32, uint32_t, uint32_t)
FJ_SEARCH(u64, uint64_t, uint64_t)
FJ_SEARCH(i8, int8_t, uint8_t)
FJ_SEARCH(i16, int16_t, uint16_t)
FJ_SEARCH(i32, int32_t, uint32_t)
FJ_SEARCH(i64, int64_t, uint64_t)
FJ_SEARCH(f16, _Float16, uint16_t)
FJ_SEARCH(f32, float, uint32_t)
FJ_SEARCH(f64, double, uint64_t)

/* Complex values in NumPy's sort order: by real part, then imaginary part; all R + Rj, then
   R + NaNj (by real part), NaN + Rj (by imaginary part), NaN + NaNj (npysort's less). */
#define FJ_CSORT(SFX, T, P)                                                                  \
    static inline int fj_cless_##SFX(T a, T b) {                                           \
        const P ar = __real__ a, ai = __imag__ a, br = __real__ b, bi = __imag__ b;         \
        if (ar < br) return ai == ai || bi != bi;                                           \
        if (ar > br) return bi != bi && ai == ai;                                           \
        if (ar == br || (ar != ar && br != br)) return ai < bi || (bi != bi && ai == ai);   \
        return br != br;                                                                    \
    }                                                                                       \
    /* Stable sort of positions a[0..n) by v[position] (b: scratch of n); returns the      \
       buffer holding the result. Runs of 16 by insertion, then bottom-up merges. */        \
    static inline uint32_t *fj_cmsort_##SFX(const T *v, uint32_t *a, uint32_t *b,          \
                                            int64_t n) {                                    \
        for (int64_t s = 0; s < n; s += 16) {                                               \
            const int64_t e = s + 16 < n ? s + 16 : n;                                      \
            for (int64_t i = s + 1; i < e; i++) {                                           \
                const uint32_t x = a[i];                                                    \
                int64_t j = i;                                                              \
                for (; j > s && fj_cless_##SFX(v[x], v[a[j - 1]]); j--) a[j] = a[j - 1];    \
                a[j] = x;                                                                   \
            }                                                                               \
        }                                                                                   \
        for (int64_t w = 16; w < n; w *= 2) {                                               \
            for (int64_t s = 0; s < n; s += 2 * w) {                                        \
                const int64_t m = s + w < n ? s + w : n, e = s + 2 * w < n ? s + 2 * w : n; \
                int64_t i = s, j = m, o = s;                                                \
                while (i < m && j < e)                                                      \
                    b[o++] = fj_cless_##SFX(v[a[j]], v[a[i]]) ? a[j++] : a[i++];            \
                while (i < m) b[o++] = a[i++];                                              \
                while (j < e) b[o++] = a[j++];                                              \
            }                                                                               \
            uint32_t *const t = a; a = b; b = t;                                            \
        }                                                                                   \
        return a;                                                                           \
    }                                                                                       \
    static inline int64_t fj_search_##SFX(const T *a, int64_t s, int64_t n, T x, int right) { \
        int64_t lo = 0, hi = n;                                                             \
        while (lo < hi) {                                                                   \
            const int64_t mid = lo + ((hi - lo) >> 1);                                      \
            const T am = a[mid * s];                                                        \
            if (right ? !fj_cless_##SFX(x, am) : fj_cless_##SFX(am, x)) lo = mid + 1;       \
            else hi = mid;                                                                  \
        }                                                                                   \
        return lo;                                                                          \
    }
FJ_CSORT(c64, float _Complex, float)
FJ_CSORT(c128, double _Complex, double)
