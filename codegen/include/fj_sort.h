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

/* floats: the bits, sign flipped for positives and all bits flipped for negatives */
#define FJ_FLOAT_KEYS(SFX, T, UT, TOP)                                                       \
    static inline UT fj_fbits_##SFX(T v) { UT u; memcpy(&u, &v, sizeof u); return u; }      \
    static inline UT fj_forder_##SFX(UT u) { return (u & (TOP)) ? (UT)~u : (UT)(u | (TOP)); } \
    static inline UT fj_skey_##SFX(T v) {                                                  \
        if (v != v) return (UT)~(UT)0;                                                     \
        return fj_forder_##SFX(v == 0 ? (UT)0 : fj_fbits_##SFX(v));                        \
    }                                                                                      \
    static inline UT fj_vkey_##SFX(T v) {                                                  \
        return v != v ? (UT)~(UT)0 : fj_forder_##SFX(fj_fbits_##SFX(v));                   \
    }                                                                                      \
    static inline T fj_unkey_##SFX(UT k) {                                                 \
        if (k == (UT)~(UT)0) return (T)__builtin_nanf("");                                 \
        UT u = (k & (TOP)) ? (UT)(k & ~(UT)(TOP)) : (UT)~k;                                \
        T v; memcpy(&v, &u, sizeof v); return v;                                           \
    }
FJ_FLOAT_KEYS(f16, _Float16, uint16_t, 0x8000U)
FJ_FLOAT_KEYS(f32, float, uint32_t, 0x80000000U)
FJ_FLOAT_KEYS(f64, double, uint64_t, 0x8000000000000000ULL)

/* Stable ascending sort of k[0..n) by the W-bit key in bits [SHIFT, SHIFT + W) of each
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
FJ_RADIX(fj_ksort32, uint32_t, 32, 11, 0)
FJ_RADIX(fj_ksort64, uint64_t, 64, 11, 0)
FJ_RADIX(fj_psort8, uint64_t, 8, 8, 32)
FJ_RADIX(fj_psort16, uint64_t, 16, 8, 32)
FJ_RADIX(fj_psort32, uint64_t, 32, 11, 32)

/* Stable sort of 64-bit keys k carrying positions ix (kt, ixt: scratch); as FJ_RADIX. */
static inline int fj_csort64(uint64_t *k, uint64_t *kt, uint32_t *ix, uint32_t *ixt, int64_t n) {
    enum { D = 11, P = 6, B = 1 << D };
    if (n <= 32) {
        for (int64_t i = 1; i < n; i++) {
            const uint64_t v = k[i];
            const uint32_t x = ix[i];
            int64_t j = i;
            for (; j > 0 && k[j - 1] > v; j--) { k[j] = k[j - 1]; ix[j] = ix[j - 1]; }
            k[j] = v;
            ix[j] = x;
        }
        return 0;
    }
    uint32_t cnt[P][B];
    memset(cnt, 0, sizeof cnt);
    for (int64_t i = 0; i < n; i++)
        for (int p = 0; p < P; p++) cnt[p][(k[i] >> (D * p)) & (B - 1)]++;
    int flip = 0;
    for (int p = 0; p < P; p++) {
        uint32_t *c = cnt[p];
        if (c[(k[0] >> (D * p)) & (B - 1)] == (uint32_t)n) continue;
        uint32_t s = 0;
        for (int d = 0; d < B; d++) { const uint32_t t = c[d]; c[d] = s; s += t; }
        for (int64_t i = 0; i < n; i++) {
            const uint32_t o = c[(k[i] >> (D * p)) & (B - 1)]++;
            kt[o] = k[i];
            ixt[o] = ix[i];
        }
        uint64_t *tk = k; k = kt; kt = tk;
        uint32_t *tx = ix; ix = ixt; ixt = tx;
        flip ^= 1;
    }
    return flip;
}

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
