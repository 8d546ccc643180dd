/*
 * probe_libmvec.c -- decide whether fusejit may define FJ_LIBMVEC.
 *
 * The toolchain compiles, links and runs this once:
 *     cc -O3 -march=native -fopenmp -fno-math-errno -DFJ_LIBMVEC \
 *        probe_libmvec.c -lmvec -lm -o probe && ./probe
 * and enables FJ_LIBMVEC only if all three steps succeed (exit status 0).
 *
 * It fails to compile where fj_vmath.h's declarations are not accepted
 * (non-GNU compiler, FJ_LIBMVEC not defined), fails to link where libmvec is
 * missing or lacks a vector variant gcc chose for this -march (every
 * function fj_vmath.h declares is called from a vectorisable loop, so every
 * needed _ZGV* symbol is referenced), and returns nonzero where the vector
 * results disagree with the scalar libm ones (more than 16 ULP on ordinary
 * arguments, or wrong NaN / +-Inf / signed-zero results).
 */
#ifndef FJ_LIBMVEC
#error "compile with -DFJ_LIBMVEC"
#endif
#if !defined(__GNUC__) || defined(__clang__) || !defined(__x86_64__)
#error "libmvec via __attribute__((simd)) is only validated for gcc on x86_64"
#endif

#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "fj_vmath.h"

#define N 203 /* not a multiple of any vector length: exercises the epilogue */

static float xf[N], yf[N], of[N];
static double xd[N], yd[N], od[N];

/* ULP distance between two finite values of the same type, via their
 * monotone integer encodings. */
static int64_t ord_d(double v)
{
    int64_t i;
    memcpy(&i, &v, sizeof i);
    return (i < 0) ? INT64_MIN - i : i;
}

static int64_t ord_f(float v)
{
    int32_t i;
    memcpy(&i, &v, sizeof i);
    return (i < 0) ? (int64_t)INT32_MIN - i : i;
}

static int same_special(double got, double want)
{
    if (isnan(want) || isnan(got))
        return isnan(want) && isnan(got);
    if (isinf(want) || isinf(got) || want == 0 || got == 0)
        return got == want && !signbit(got) == !signbit(want);
    return -1; /* ordinary value: compare by ULP */
}

static int failures;

static void check(const char *name, int is_float, double x, double got, double want)
{
    int s = same_special(got, want);
    int64_t d = 0;
    if (s < 0) {
        d = is_float ? ord_f((float)got) - ord_f((float)want) : ord_d(got) - ord_d(want);
        if (d < 0)
            d = -d;
    }
    if (s == 0 || d > 16) {
        if (failures < 20)
            fprintf(stderr, "probe_libmvec: %s(%a) = %a, scalar libm gives %a\n", name, x, got,
                    want);
        failures++;
    }
}

/* Inputs: a deterministic spread over [LO, HI] plus special values. */
static const double SPECIAL[] = {NAN, INFINITY, -INFINITY, 0.0, -0.0, 1.0, -1.0, 0.5};
#define NSPECIAL ((int)(sizeof SPECIAL / sizeof SPECIAL[0]))

static void fill(double lo, double hi, int shuffle)
{
    for (int i = 0; i < N; i++) {
        int j = shuffle ? (i * 37 + 11) % N : i;
        double t = (j + 0.5) / N;
        xd[i] = (i < NSPECIAL) ? SPECIAL[(i + shuffle) % NSPECIAL] : lo + (hi - lo) * t;
        xf[i] = (float)xd[i];
    }
}

/* A noinline loop per function so that each is vectorised on its own; the
 * scalar reference is called through a volatile pointer so it stays scalar. */
#define PROBE1(name, LO, HI)                                                    \
    __attribute__((noinline)) static void loop_##name(void)                     \
    {                                                                           \
        for (int i = 0; i < N; i++)                                             \
            od[i] = name(xd[i]);                                                \
        for (int i = 0; i < N; i++)                                             \
            of[i] = name##f(xf[i]);                                             \
    }                                                                           \
    static void probe_##name(void)                                              \
    {                                                                           \
        double (*volatile sd)(double) = name;                                   \
        float (*volatile sf)(float) = name##f;                                  \
        fill(LO, HI, 0);                                                        \
        loop_##name();                                                          \
        for (int i = 0; i < N; i++) {                                           \
            check(#name, 0, xd[i], od[i], sd(xd[i]));                           \
            check(#name "f", 1, xf[i], of[i], sf(xf[i]));                       \
        }                                                                       \
    }

#define PROBE2(name, LO, HI, LO2, HI2)                                          \
    __attribute__((noinline)) static void loop_##name(void)                     \
    {                                                                           \
        for (int i = 0; i < N; i++)                                             \
            od[i] = name(xd[i], yd[i]);                                         \
        for (int i = 0; i < N; i++)                                             \
            of[i] = name##f(xf[i], yf[i]);                                      \
    }                                                                           \
    static void probe_##name(void)                                              \
    {                                                                           \
        double (*volatile sd)(double, double) = name;                           \
        float (*volatile sf)(float, float) = name##f;                           \
        fill(LO2, HI2, 1);                                                      \
        for (int i = 0; i < N; i++) {                                           \
            yd[i] = xd[i];                                                      \
            yf[i] = xf[i];                                                      \
        }                                                                       \
        fill(LO, HI, 0);                                                        \
        loop_##name();                                                          \
        for (int i = 0; i < N; i++) {                                           \
            check(#name, 0, xd[i], od[i], sd(xd[i], yd[i]));                    \
            check(#name "f", 1, xf[i], of[i], sf(xf[i], yf[i]));                \
        }                                                                       \
    }

PROBE1(exp, -80, 80)
PROBE1(exp2, -100, 100)
PROBE1(exp10, -30, 30)
PROBE1(expm1, -10, 10)
PROBE1(log, 0, 1000)
PROBE1(log2, 0, 1000)
PROBE1(log10, 0, 1000)
PROBE1(log1p, -1, 100)
PROBE1(sin, -100, 100)
PROBE1(cos, -100, 100)
PROBE1(tan, -10, 10)
PROBE1(asin, -1, 1)
PROBE1(acos, -1, 1)
PROBE1(atan, -50, 50)
PROBE1(sinh, -20, 20)
PROBE1(cosh, -20, 20)
PROBE1(tanh, -10, 10)
PROBE1(asinh, -100, 100)
PROBE1(acosh, 1, 100)
PROBE1(atanh, -1, 1)
PROBE1(cbrt, -1000, 1000)
PROBE1(erf, -4, 4)
PROBE1(erfc, -4, 9)
PROBE2(atan2, -10, 10, -10, 10)
PROBE2(hypot, -100, 100, -100, 100)
PROBE2(pow, 0, 10, -20, 20)

/* fj_sin_* / fj_cos_* (cos bound to the libm symbol under another name). */
__attribute__((noinline)) static void loop_sincos(void)
{
    for (int i = 0; i < N; i++)
        od[i] = fj_sin_f64(xd[i]) * fj_cos_f64(xd[i]);
    for (int i = 0; i < N; i++)
        of[i] = fj_sin_f32(xf[i]) * fj_cos_f32(xf[i]);
}

static void probe_sincos(void)
{
    double (*volatile sd)(double) = sin, (*volatile cd)(double) = cos;
    float (*volatile sf)(float) = sinf, (*volatile cf)(float) = cosf;
    fill(-100, 100, 0);
    loop_sincos();
    for (int i = 0; i < N; i++) {
        check("sin*fj_cos", 0, xd[i], od[i], sd(xd[i]) * cd(xd[i]));
        check("sinf*fj_cosf", 1, xf[i], of[i], sf(xf[i]) * cf(xf[i]));
    }
}

int main(void)
{
    probe_exp();
    probe_exp2();
    probe_exp10();
    probe_expm1();
    probe_log();
    probe_log2();
    probe_log10();
    probe_log1p();
    probe_sin();
    probe_cos();
    probe_tan();
    probe_asin();
    probe_acos();
    probe_atan();
    probe_sinh();
    probe_cosh();
    probe_tanh();
    probe_asinh();
    probe_acosh();
    probe_atanh();
    probe_cbrt();
    probe_erf();
    probe_erfc();
    probe_atan2();
    probe_hypot();
    probe_pow();
    probe_sincos();
    if (failures) {
        fprintf(stderr, "probe_libmvec: %d wrong results, libmvec unusable\n", failures);
        return 1;
    }
    return 0;
}
