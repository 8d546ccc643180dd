/*
 * vmath_accuracy.c -- accuracy of codegen/include/fj_vmath_f32.h, fj_vtile.h and fj_vpow.h
 * against double libm.
 *
 * Exhaustive (default): every one of the 2^32 float32 bit patterns, per function.
 * Sampled (-DFJ_SAMPLED, used by tests/test_vmath.py): the inputs are read from stdin as raw
 * float32 (any count), so the test chooses them.
 *
 *   gcc -O3 -march=native -fopenmp -fno-math-errno -ffp-contract=off \
 *       -I codegen/include benchmarks/vmath_accuracy.c -lm -o /tmp/vmath_acc && /tmp/vmath_acc
 *
 * Each function runs in the vectorised loop generated code uses (`#pragma omp simd`).  Reported
 * per function: max error in ULP (|got - ref| / ulp(ref), ulp at the double reference, with the
 * subnormal ulp 2^-149 below 2^-126), the input where it occurs, the number of results that are
 * not the reference rounded to float32 ("not correctly rounded", as far as double libm is), and
 * mismatches that are not accuracy: NaN <-> non-NaN, infinities, the sign of zero, oddness
 * (f(-x) != -f(x) bit for bit for tanh and erf) and monotonicity (f(y) < f(x) for the next
 * float y > x, all three functions are nondecreasing).  The exit status is 1 when any max error
 * exceeds FJ_MAX_ULP (default 2) or any mismatch was found (monotonicity: exp and tanh only;
 * erf's violations are counted and reported).
 *
 * fj_pow_f32 (fj_vpow.h) is checked as functions of x for fixed exponents against double pow:
 * pow3, powm2, pow7 (y = 3, -2, 7 as constants: the integer path), powr3 (y = 3 read at run
 * time: the general path), pow25 and powm15 (y = 2.5 and -1.5); odd ones (odd integer y) for
 * exact oddness, x^3 and x^7 for monotonicity.  `./a.out NAME` runs one function.
 */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fj_vmath_f32.h"
#include "fj_vtile_tables.h"
#include "fj_vtile.h"
#include "fj_vpow.h"

#ifndef FJ_MAX_ULP
#define FJ_MAX_ULP 2.0
#endif
#define CHUNK 65536

typedef struct {
    double max_ulp;
    float worst;
    uint64_t inexact, bad_special, bad_odd, bad_mono;
} Stats;

#define DEFINE_LOOP(NAME, FN)                                                         \
    static void loop_##NAME(const float *restrict x, float *restrict y, int n) {     \
        _Pragma("omp simd") for (int i = 0; i < n; i++) y[i] = FN(x[i]);               \
    }
DEFINE_LOOP(exp, fj_vm_exp_f32)
DEFINE_LOOP(tanh, fj_vm_tanh_f32)
DEFINE_LOOP(erf, fj_vm_erf_f32)
DEFINE_LOOP(log, fj_vm_log_f32)

/* The tile functions of fj_vtile.h, a tile at a time (the arrays are padded to whole tiles). */
#define DEFINE_TILE_LOOP(NAME, FN)                                                      \
    static void loop_##NAME(const float *restrict x, float *restrict y, int n) {       \
        for (int i = 0; i < n; i += FJ_VTILE_N)                                         \
            FN(y + i, x + i, n - i < FJ_VTILE_N ? n - i : FJ_VTILE_N);                  \
    }
DEFINE_TILE_LOOP(exp_tile, fj_tile_exp_f32)
DEFINE_TILE_LOOP(tanh_tile, fj_tile_tanh_f32)
DEFINE_TILE_LOOP(erf_tile, fj_tile_erf_f32)
DEFINE_TILE_LOOP(log_tile, fj_tile_log_f32)

/* fj_pow_f32 with a constant exponent (folded after inlining: the integer path for integers),
 * and with one read at run time (the general path, integer or not). */
static volatile float runtime_three = 3.0f;
#define DEFINE_POW(NAME, Y)                                                             \
    static float NAME##_f(float x) { return fj_pow_f32(x, Y); }                      \
    static double NAME##_ref(double x) { return pow(x, (double)(Y)); }                \
    DEFINE_LOOP(NAME, NAME##_f)
DEFINE_POW(pow3, 3.0f)
DEFINE_POW(powm2, -2.0f)
DEFINE_POW(pow7, 7.0f)
DEFINE_POW(pow25, 2.5f)
DEFINE_POW(powm15, -1.5f)
static double powr3_ref(double x) { return pow(x, 3.0); }
static void loop_powr3(const float *restrict x, float *restrict y, int n) {
    const float e = runtime_three;
#pragma omp simd
    for (int i = 0; i < n; i++) y[i] = fj_pow_f32(x[i], e);
}

typedef struct {
    const char *name;
    void (*loop)(const float *, float *, int);
    double (*ref)(double);
    int odd;
    int monotone; /* 1: a violation fails; 0: counted (erf evaluates a polynomial in float near
                     1); -1: not a monotone function, not checked */
} Func;

static const Func FUNCS[] = {
    {"exp", loop_exp, exp, 0, 1},
    {"tanh", loop_tanh, tanh, 1, 1},
    {"erf", loop_erf, erf, 1, 0},
    {"log", loop_log, log, 0, 1},
    {"exp_tile", loop_exp_tile, exp, 0, 1},
    {"tanh_tile", loop_tanh_tile, tanh, 1, 1},
    {"erf_tile", loop_erf_tile, erf, 1, 0},
    {"log_tile", loop_log_tile, log, 0, 1},
    {"pow3", loop_pow3, pow3_ref, 1, 1},
    {"powm2", loop_powm2, powm2_ref, 0, -1},
    {"pow7", loop_pow7, pow7_ref, 1, 1},
    {"powr3", loop_powr3, powr3_ref, 1, 1},
    {"pow25", loop_pow25, pow25_ref, 0, -1},
    {"powm15", loop_powm15, powm15_ref, 0, -1},
};

static uint32_t bits(float x) {
    uint32_t u;
    memcpy(&u, &x, 4);
    return u;
}

static double ulp_error(float got, double ref) {
    double a = fabs(ref);
    if (a > 0x1.fffffep127) a = 0x1.fffffep127;
    int e;
    frexp(a, &e);  /* a = m * 2^e, m in [0.5, 1) */
    if (e - 1 < -126) e = -125;
    return fabs((double)got - ref) / ldexp(1.0, e - 24);
}

/* Accumulate the checks of one block of inputs x[0..n) with results y. */
static void check(const Func *f, const float *x, const float *y, const float *yneg, int n,
                  Stats *s) {
    for (int i = 0; i < n; i++) {
        const double ref = f->ref((double)x[i]);
        const float rf = (float)ref;
        const float g = y[i];
        if (isnan(rf) || isnan(g) || isinf(rf) || isinf(g) || rf == 0 || g == 0) {
            if (isnan(rf) != isnan(g) || (!isnan(rf) && bits(rf) != bits(g))) {
                if (!(isnan(rf) && isnan(g))) {
                    /* zero or inf results must be exact; a tiny nonzero vs 0 is accuracy */
                    if (isnan(rf) || isnan(g) || isinf(rf) || isinf(g) ||
                        (rf == 0 && g == 0) || ulp_error(g, ref) > FJ_MAX_ULP)
                        s->bad_special++;
                }
            }
        }
        if (!isnan(rf) && !isnan(g) && !isinf(g)) {
            const double u = ulp_error(g, ref);
            if (u > s->max_ulp) {
                s->max_ulp = u;
                s->worst = x[i];
            }
        }
        if (!isnan(rf) && bits(g) != bits(rf)) s->inexact++;
        if (f->odd && yneg && !isnan(g) && bits(yneg[i]) != (bits(g) ^ 0x80000000u)) s->bad_odd++;
        if (f->monotone >= 0 && i > 0 && x[i] > x[i - 1] && y[i] < y[i - 1]) s->bad_mono++;
        if (f->monotone >= 0 && i > 0 && x[i] < x[i - 1] && y[i] > y[i - 1]) s->bad_mono++;
    }
}

static int report(const Func *f, const Stats *s, uint64_t count) {
    const int bad = s->max_ulp > FJ_MAX_ULP || s->bad_special || s->bad_odd ||
                    (f->monotone > 0 && s->bad_mono);
    printf("%-9s inputs %llu max_ulp %.4f at %a (%.9g) not_correctly_rounded %llu "
           "special_mismatch %llu odd_mismatch %llu monotonic_violations %llu%s\n",
           f->name, (unsigned long long)count, s->max_ulp, (double)s->worst, (double)s->worst,
           (unsigned long long)s->inexact, (unsigned long long)s->bad_special,
           (unsigned long long)s->bad_odd, (unsigned long long)s->bad_mono, bad ? " FAIL" : "");
    return bad;
}

#ifdef FJ_SAMPLED
/* Inputs from stdin (raw float32); results for x and -x. */
int main(void) {
    size_t cap = 1 << 20, n = 0;
    float *x = malloc(cap * sizeof *x);
    size_t got;
    while ((got = fread(x + n, sizeof *x, cap - n, stdin)) > 0) {
        n += got;
        if (n == cap) x = realloc(x, (cap *= 2) * sizeof *x);
    }
    const size_t padded = (n + FJ_VTILE_N - 1) / FJ_VTILE_N * FJ_VTILE_N;
    x = realloc(x, (padded + 1) * sizeof *x);
    float *xn = malloc(padded * sizeof *x), *y = malloc(padded * sizeof *x);
    float *yn = malloc(padded * sizeof *x);
    for (size_t i = n; i < padded; i++) x[i] = 0.0f;
    for (size_t i = 0; i < n; i++) xn[i] = -x[i];
    int bad = 0;
    for (size_t k = 0; k < sizeof FUNCS / sizeof *FUNCS; k++) {
        const Func *f = &FUNCS[k];
        Stats s = {0};
        f->loop(x, y, (int)n);
        f->loop(xn, yn, (int)n);
        check(f, x, y, yn, (int)n, &s);
        bad |= report(f, &s, n);
    }
    return bad;
}
#else
static void merge(Stats *into, const Stats *s) {
    if (s->max_ulp > into->max_ulp) {
        into->max_ulp = s->max_ulp;
        into->worst = s->worst;
    }
    into->inexact += s->inexact;
    into->bad_special += s->bad_special;
    into->bad_odd += s->bad_odd;
    into->bad_mono += s->bad_mono;
}

/* Every bit pattern; odd functions: the positive half, with the negative half for oddness. */
int main(int argc, char **argv) {
    int bad = 0;
    for (size_t k = 0; k < sizeof FUNCS / sizeof *FUNCS; k++) {
        const Func *f = &FUNCS[k];
        if (argc > 1 && strcmp(argv[1], f->name) != 0) continue;
        const uint64_t total = f->odd ? (1ull << 31) : (1ull << 32);
        Stats all = {0};
#pragma omp parallel
        {
            float *x = malloc(CHUNK * sizeof *x), *xn = malloc(CHUNK * sizeof *x);
            float *y = malloc(CHUNK * sizeof *x), *yn = malloc(CHUNK * sizeof *x);
            Stats s = {0};
#pragma omp for schedule(dynamic, 16)
            for (int64_t c = 0; c < (int64_t)(total / CHUNK); c++) {
                for (int i = 0; i < CHUNK; i++) {
                    const uint32_t u = (uint32_t)(c * CHUNK + i);
                    memcpy(&x[i], &u, 4);
                    xn[i] = -x[i];
                }
                f->loop(x, y, CHUNK);
                if (f->odd) f->loop(xn, yn, CHUNK);
                check(f, x, y, f->odd ? yn : NULL, CHUNK, &s);
            }
#pragma omp critical
            merge(&all, &s);
            free(x), free(xn), free(y), free(yn);
        }
        bad |= report(f, &all, total);
        fflush(stdout);
    }
    return bad;
}
#endif
