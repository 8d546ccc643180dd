/*
 * vpow_cube_exact.c -- float32 x ** 3, exhaustively, against the correctly rounded cube computed
 * exactly in integers (x = m 2^e, m^3 in 128 bits, rounded to nearest even at 24 bits or at the
 * subnormal grid 2^-149): fj_pow_f32(x, 3) (codegen/include/fj_vpow.h: the double path generated
 * code uses), glibc's powf (what NumPy calls for float32 power without AVX-512), and the
 * float32-only "FMA cube" (x2 = x*x, e2 = fma(x, x, -x2) exact, fma(x2, x, e2*x)), which would
 * keep 8 lanes per ymm register instead of converting to 2 x 4 doubles.
 *
 *   gcc -O3 -march=x86-64-v3 -fopenmp -fno-math-errno -ffp-contract=off -I codegen/include \
 *       benchmarks/vpow_cube_exact.c -lm -o /tmp/cube && /tmp/cube        # add `powf` to time
 *                                                                          # glibc's powf too
 * Every x >= 0 finite (the three are exactly odd); the FMA cube's misses are counted per binade
 * of x.  Result on Zen 5 (gcc 12.2, glibc 2.36), 2^31 - 2^23 inputs:
 *   fj_pow_f32(x, 3)   0 not correctly rounded
 *   glibc powf         477841 (0.02%)
 *   FMA cube           x in [2^-50, 2^-33): 2.1 million (e2*x falls below 2^-126 and loses
 *                      bits: results up to ~2^-100, and all subnormal results); x >= 2^51:
 *                      every input (e2*x or x2 overflows: NaN or -inf where inf is right);
 *                      exact everywhere else.
 * The large side is one clamp (|x| to 2^43); the small side is not fixable by scaling x up and
 * the result down by powers of two, because that rounds subnormal results twice: a correct
 * result there needs the product's rounding remainder and a tie test, more instructions than
 * the conversions it would save (see fj_vpow.h).
 */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "fj_vpow.h"

static inline uint32_t bits(float x) {
    uint32_t u;
    memcpy(&u, &x, sizeof u);
    return u;
}

static inline float from_bits(uint32_t u) {
    float x;
    memcpy(&x, &u, sizeof x);
    return x;
}

/* The correctly rounded cube of the non-negative finite float with bits u. */
static float exact_cube(uint32_t u) {
    if (u == 0) return 0.0f;
    const uint32_t ex = u >> 23;
    uint32_t m = u & 0x7fffffu;
    int e;
    if (ex == 0) {
        e = -149;
    } else {
        m |= 0x800000u;
        e = (int)ex - 150;
    }
    const unsigned __int128 m3 = (unsigned __int128)m * m * m;
    const int big_e = 3 * e;
    int p = 127;
    while (!((m3 >> p) & 1)) p--;
    const int q = p + big_e; /* the result is in [2^q, 2^(q+1)) before rounding */
    if (q >= 128) return INFINITY;
    const int shift = q >= -126 ? p - 23 : -149 - big_e;
    if (shift <= 0) return ldexpf((float)(uint64_t)m3, big_e);
    if (shift >= 100) return 0.0f;
    unsigned __int128 k = m3 >> shift;
    const unsigned __int128 rem = m3 - (k << shift), half = (unsigned __int128)1 << (shift - 1);
    if (rem > half || (rem == half && (k & 1))) k++;
    return ldexpf((float)(uint64_t)k, big_e + shift); /* k <= 2^24: exact, or inf */
}

static inline float fma_cube(float x) {
    const float x2 = x * x, e2 = fmaf(x, x, -x2);
    return fmaf(x2, x, e2 * x);
}

#define CHUNK 65536

int main(int argc, char **argv) {
    const int with_powf = argc > 1 && strcmp(argv[1], "powf") == 0;
    static uint64_t miss_fma[256];
    uint64_t miss_fj = 0, miss_powf = 0;
#pragma omp parallel for schedule(dynamic) reduction(+ : miss_fj, miss_powf)
    for (uint32_t c = 0; c < 0x7f800000u / CHUNK; c++) {
        float x[CHUNK], a[CHUNK], b[CHUNK];
        uint64_t h[256] = {0};
        for (int i = 0; i < CHUNK; i++) x[i] = from_bits(c * CHUNK + (uint32_t)i);
#pragma omp simd
        for (int i = 0; i < CHUNK; i++) a[i] = fj_pow_f32(x[i], 3.0f);
#pragma omp simd
        for (int i = 0; i < CHUNK; i++) b[i] = fma_cube(x[i]);
        for (int i = 0; i < CHUNK; i++) {
            const uint32_t want = bits(exact_cube(bits(x[i])));
            miss_fj += bits(a[i]) != want;
            if (bits(b[i]) != want) h[bits(x[i]) >> 23]++;
            if (with_powf) miss_powf += bits(powf(x[i], 3.0f)) != want;
        }
#pragma omp critical
        for (int k = 0; k < 256; k++) miss_fma[k] += h[k];
    }
    printf("x >= 0 finite: %u inputs\n", 0x7f800000u);
    printf("fj_pow_f32(x, 3) not correctly rounded: %llu\n", (unsigned long long)miss_fj);
    if (with_powf) printf("glibc powf(x, 3) not correctly rounded: %llu\n",
                          (unsigned long long)miss_powf);
    printf("FMA cube not correctly rounded, by binade of x:\n");
    for (int k = 0; k < 256; k++)
        if (miss_fma[k])
            printf("  [2^%d, 2^%d): %llu\n", k - 127, k - 126, (unsigned long long)miss_fma[k]);
    return miss_fj != 0;
}
