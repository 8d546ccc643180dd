/*
 * probe_libmvec.c -- decide whether fusejit may define FJ_LIBMVEC.
 *
 * The toolchain compiles, links and runs this once:
 *     cc -O0 -march=native -fno-math-errno -DFJ_LIBMVEC \
 *        probe_libmvec.c -lmvec -lm -o probe && ./probe
 * and enables FJ_LIBMVEC only if all three steps succeed (exit status 0).
 *
 * It fails to compile where fj_vmath.h's declarations are not accepted
 * (non-GNU compiler, FJ_LIBMVEC not defined), fails to link where libmvec
 * lacks a vector variant of a function fj_vmath.h declares (every variant
 * of every ISA this -march enables is called: SSE 'b', AVX 'c', AVX2 'd',
 * AVX-512 'e'), and returns nonzero where a variant's results disagree with
 * the scalar libm ones (more than 16 ULP on ordinary arguments, or wrong
 * NaN / +-Inf / signed-zero results).
 *
 * The variants are called directly, by their vector-ABI names, rather than
 * from loops gcc vectorises: that compiles in a tenth of the time (this
 * probe is on the path of the very first compilation with an empty cache).
 * That gcc does vectorise loops over fj_vmath.h's declarations into calls of
 * these variants is checked by tests/test_c_semantics.py.
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

#define N 203

/* The vector-ABI argument types, as GCC vector types (<immintrin.h> alone takes longer to
 * compile than the rest of this file). */
typedef double vd2 __attribute__((vector_size(16)));
typedef float vf4 __attribute__((vector_size(16)));
typedef double vd4 __attribute__((vector_size(32)));
typedef float vf8 __attribute__((vector_size(32)));
typedef double vd8 __attribute__((vector_size(64)));
typedef float vf16 __attribute__((vector_size(64)));

static float xf[N], yf[N], of[N];
static double xd[N], yd[N], od[N];
static int failures;

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

/* Inputs: a deterministic spread over [LO, HI] plus special values first. */
static const double SPECIAL[] = {NAN, INFINITY, -INFINITY, 0.0, -0.0, 1.0, -1.0, 0.5};
#define NSPECIAL ((int)(sizeof SPECIAL / sizeof SPECIAL[0]))

static void fill(double *d, float *f, double lo, double hi, int shuffle)
{
    for (int i = 0; i < N; i++) {
        int j = shuffle ? (i * 37 + 11) % N : i;
        double t = (j + 0.5) / N;
        d[i] = (i < NSPECIAL) ? SPECIAL[(i + shuffle) % NSPECIAL] : lo + (hi - lo) * t;
        f[i] = (float)d[i];
    }
}

/* Apply a vector variant to whole vectors of the inputs (the first N - N % W of them) and
 * compare with the scalar function; one runner per vector type keeps this file small. */
#define RUNNERS(VT, T, W, out, x, y)                                            \
    static void run1_##VT(VT (*fn)(VT), T (*ref)(T), const char *label)         \
    {                                                                           \
        for (int i = 0; i + (W) <= N; i += (W)) {                               \
            VT a;                                                               \
            memcpy(&a, x + i, sizeof a);                                        \
            a = fn(a);                                                          \
            memcpy(out + i, &a, sizeof a);                                      \
        }                                                                       \
        for (int i = 0; i < N - N % (W); i++)                                   \
            check(label, sizeof(T) == 4, x[i], out[i], ref(x[i]));              \
    }                                                                           \
    static void run2_##VT(VT (*fn)(VT, VT), T (*ref)(T, T), const char *label)  \
    {                                                                           \
        for (int i = 0; i + (W) <= N; i += (W)) {                               \
            VT a, b;                                                            \
            memcpy(&a, x + i, sizeof a);                                        \
            memcpy(&b, y + i, sizeof b);                                        \
            a = fn(a, b);                                                       \
            memcpy(out + i, &a, sizeof a);                                      \
        }                                                                       \
        for (int i = 0; i < N - N % (W); i++)                                   \
            check(label, sizeof(T) == 4, x[i], out[i], ref(x[i], y[i]));        \
    }

RUNNERS(vd2, double, 2, od, xd, yd)
RUNNERS(vf4, float, 4, of, xf, yf)
#if defined(__AVX__)
RUNNERS(vd4, double, 4, od, xd, yd)
RUNNERS(vf8, float, 8, of, xf, yf)
#endif
#if defined(__AVX512F__)
RUNNERS(vd8, double, 8, od, xd, yd)
RUNNERS(vf16, float, 16, of, xf, yf)
#endif

/* One variant, declared by its vector-ABI name: the link fails where libmvec lacks it. */
#define V1(SYM, VT, scalar, label)                                              \
    {                                                                           \
        extern VT SYM(VT);                                                      \
        run1_##VT(SYM, scalar, label);                                          \
    }
#define V2(SYM, VT, scalar, label)                                              \
    {                                                                           \
        extern VT SYM(VT, VT);                                                  \
        run2_##VT(SYM, scalar, label);                                          \
    }

/* Every ISA this compilation targets: gcc may call any of them from a vectorised loop.
 * V is V1 or V2, P the vector-ABI parameter code (v, vv); f is the float function. */
#define ISAS(V, P, name, f)                                                     \
    V(_ZGVbN2##P##_##name, vd2, name, #name " b")                               \
    V(_ZGVbN4##P##_##f, vf4, f, #f " b")                                        \
    ISA_AVX(V, P, name, f) ISA_AVX2(V, P, name, f) ISA_AVX512(V, P, name, f)

#if defined(__AVX__)
#define ISA_AVX(V, P, name, f)                                                  \
    V(_ZGVcN4##P##_##name, vd4, name, #name " c")                               \
    V(_ZGVcN8##P##_##f, vf8, f, #f " c")
#else
#define ISA_AVX(V, P, name, f)
#endif
#if defined(__AVX2__)
#define ISA_AVX2(V, P, name, f)                                                 \
    V(_ZGVdN4##P##_##name, vd4, name, #name " d")                               \
    V(_ZGVdN8##P##_##f, vf8, f, #f " d")
#else
#define ISA_AVX2(V, P, name, f)
#endif
#if defined(__AVX512F__)
#define ISA_AVX512(V, P, name, f)                                               \
    V(_ZGVeN8##P##_##name, vd8, name, #name " e")                               \
    V(_ZGVeN16##P##_##f, vf16, f, #f " e")
#else
#define ISA_AVX512(V, P, name, f)
#endif

#define PROBE1(name, LO, HI)                                                    \
    __attribute__((noinline)) static void probe_##name(void)                                            \
    {                                                                           \
        fill(xd, xf, LO, HI, 0);                                                \
        ISAS(V1, v, name, name##f)                                                     \
    }

#define PROBE2(name, LO, HI, LO2, HI2)                                          \
    __attribute__((noinline)) static void probe_##name(void)                                            \
    {                                                                           \
        fill(yd, yf, LO2, HI2, 1);                                              \
        fill(xd, xf, LO, HI, 0);                                                \
        ISAS(V2, vv, name, name##f)                                                     \
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

int main(void)
{
    /* fj_cos_* are cos/cosf under another C name: the same symbols as probe_cos checks. */
    float (*volatile c32)(float) = fj_cos_f32;
    if (c32(0.0f) != 1.0f)
        failures++;
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
    if (failures) {
        fprintf(stderr, "probe_libmvec: %d wrong results, libmvec unusable\n", failures);
        return 1;
    }
    return 0;
}
