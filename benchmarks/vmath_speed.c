/*
 * vmath_speed.c -- ns per element of fj_vtile.h's tile functions against the loops over the
 * scalar fj_*_f32 (fj_vmath_f32.h) that staged kernels ran before there were AVX2 tile
 * functions: one process, the variants interleaved, best of ROUNDS, 4096 floats in L1.
 *
 *   gcc -O3 -march=x86-64-v3 -fopenmp-simd -ffp-contract=off -I codegen/include \
 *       benchmarks/vmath_speed.c -lm -o /tmp/vmath_speed && /tmp/vmath_speed [ROUNDS]
 */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include "fj_vmath_f32.h"
#include "fj_vtile_tables.h"
#include "fj_vtile.h"

#define N 4096
#define REPS 200

static float xs[N] __attribute__((aligned(64))), ys[N] __attribute__((aligned(64)));

#define SCALAR_TILE(NAME, FN)                                                           \
    static void scalar_##NAME(float *restrict y, const float *restrict x, int64_t n) { \
        _Pragma("omp simd") for (int64_t i = 0; i < n; i++) y[i] = FN(x[i]);            \
    }
SCALAR_TILE(exp, fj_exp_f32)
SCALAR_TILE(tanh, fj_tanh_f32)
SCALAR_TILE(erf, fj_erf_f32)
SCALAR_TILE(log, fj_log_f32)

typedef void (*TileFn)(float *restrict, const float *restrict, int64_t);
static const struct {
    const char *name;
    TileFn scalar, tile;
    float lo, hi;
} CASES[] = {
    {"exp", scalar_exp, fj_tile_exp_f32, -5.0f, 5.0f},
    {"tanh", scalar_tanh, fj_tile_tanh_f32, -5.0f, 5.0f},
    {"erf", scalar_erf, fj_tile_erf_f32, -5.0f, 5.0f},
    {"log", scalar_log, fj_tile_log_f32, 0.01f, 100.0f},
};

static double now(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return t.tv_sec + 1e-9 * t.tv_nsec;
}

/* ns per element of REPS passes over the array, a tile (FJ_VTILE_N) per call */
static double run(TileFn fn) {
    const double t0 = now();
    for (int r = 0; r < REPS; r++) {
        for (int i = 0; i < N; i += FJ_VTILE_N) fn(ys + i, xs + i, FJ_VTILE_N);
        __asm__ volatile("" ::: "memory");
    }
    return (now() - t0) * 1e9 / ((double)REPS * N);
}

int main(int argc, char **argv) {
    const int rounds = argc > 1 ? atoi(argv[1]) : 40;
    printf("FJ_VTILE %d; ns per element, best of %d interleaved rounds\n", FJ_VTILE, rounds);
    for (size_t c = 0; c < sizeof CASES / sizeof *CASES; c++) {
        srand(1);
        for (int i = 0; i < N; i++)
            xs[i] = CASES[c].lo + (CASES[c].hi - CASES[c].lo) * (float)rand() / RAND_MAX;
        double best_s = 1e30, best_t = 1e30;
        for (int r = 0; r < rounds; r++) {
            const double s = run(CASES[c].scalar), t = run(CASES[c].tile);
            best_s = s < best_s ? s : best_s;
            best_t = t < best_t ? t : best_t;
        }
        printf("%-5s scalar loop %.3f  tile %.3f  ratio %.2f\n", CASES[c].name, best_s, best_t,
               best_t / best_s);
    }
    return 0;
}
