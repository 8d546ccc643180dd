/*
 * fj_vmath.h -- let gcc vectorise libm calls through glibc's libmvec.
 * (The measured accuracy table follows the findings below.)
 *
 * With FJ_LIBMVEC undefined this header only includes <math.h>.
 * With FJ_LIBMVEC defined it re-declares the libm functions for which glibc
 * (2.22+, x86_64) ships vector variants for ALL of SSE4 ('b'), AVX ('c'),
 * AVX2 ('d') and AVX-512 ('e') -- with __attribute__((simd("notinbranch"))).
 * glibc's own <bits/math-vector.h> does exactly this, but only under
 * __FAST_MATH__; the attribute lets gcc (>= 6) call e.g. _ZGVeN16v_expf /
 * _ZGVdN8v_expf from a loop compiled WITHOUT -ffast-math, provided
 * -fno-math-errno is given (otherwise libm calls are not "const" and gcc
 * will not vectorise them) and the program links `-lmvec -lm`.  Neither
 * -fopenmp nor -fopenmp-simd is needed for the attribute form.  Whether it
 * is usable on a machine is decided by compiling and running
 * probe_libmvec.c once:
 *     cc -O0 -march=native -fno-math-errno -DFJ_LIBMVEC \
 *        probe_libmvec.c -lmvec -lm && ./a.out
 *
 * Findings (gcc 12.2, glibc 2.36, x86_64 AMD EPYC/Zen 4 seen as znver3 with
 * AVX-512; flags -O3 -march=native -fopenmp -fno-math-errno -fwrapv
 * -fno-trapping-math):
 *   - all 52 functions below vectorise: the main loop calls the
 *     _ZGVeN16v_*f / _ZGVeN8v_* (zmm) variants, the vectorised epilogue
 *     the _ZGVdN8v_*f / _ZGVdN4v_* (ymm) ones; two-argument functions use
 *     the "vv" variants (_ZGVeN16vv_powf, ...).
 *   - "notinbranch" variants are called for every lane: `c ? expf(x) : y`
 *     and even `if (c) out[i] = expf(x);` (masked store with AVX-512) still
 *     vectorise, but code that gcc cannot if-convert does not.  fj_scalar.h
 *     evaluates its libm calls unconditionally for that reason.
 *   - FJ_LIBMVEC requires -fno-math-errno (without it the calls may set
 *     errno and are never vectorised) and linking with -lmvec -lm (on
 *     glibc the libm.so linker script already pulls libmvec in AS_NEEDED).
 *     Of the 52 functions only exp, log, sin, cos, pow (+f) exist since
 *     glibc 2.22; the rest appeared in glibc 2.35, so on older glibc the
 *     probe fails to link and FJ_LIBMVEC stays off as a whole.
 *   - sincos/sincosf are left out (their variants take vectors of pointers
 *     and gcc cannot use them).  Worse, gcc's sincos pass turns sin(x) and
 *     cos(x) of the same x in one loop into a complex cexpi call and the
 *     loop then does NOT vectorise; use fj_sin_f64/fj_cos_f64 (and _f32),
 *     defined below, which avoid that (the loop then calls _ZGV*_sin and
 *     _ZGV*_cos).  Without FJ_LIBMVEC they are plain sin/cos.
 *   - Harmless after (or before) <math.h>, with or without -ffast-math
 *     (glibc's identical attribute / `omp declare simd` merge with ours),
 *     and with -std=c99 (exp10/exp10f are declared here as glibc does under
 *     _GNU_SOURCE).
 *   - libmvec does not provide fmod, floor, fabs, sqrt, rint, ...; those
 *     that gcc inlines (floor, rint, sqrt, fabs, copysign) vectorise
 *     without it, fmod never does.
 *
 * Accuracy: max error in ULP of the vector variants against a
 * high-precision reference: float functions vs the double libm result (not
 * rounded), double functions vs glibc's x87 80-bit long double libm.
 * Sample per function and precision: 2^22 random bit patterns over the whole
 * domain, 2^22 uniform and 2^22 log-uniform arguments in the function's
 * interesting range (e.g. exp [-104,89]/[-746,710], sin/cos/tan +-1e4 and
 * +-1e6, log (0,1e6], erfc [-5,11]/[-7,27], pow x in (0,10], y in [-40,40]),
 * plus NaN, +-Inf, +-0, +-denormals, +-FLT/DBL_MAX, 1e4..1e22 and all pairs
 * of these for the two-argument functions.  zmm = _ZGVe* (AVX-512, the main
 * loop), ymm = _ZGVd* (AVX2, used for the vectorised epilogue and with
 * -mprefer-vector-width=256); exhst = all 2^32 float inputs (zmm); scalar =
 * glibc's scalar function on the same sample, for comparison (NumPy uses
 * it, or its own SIMD code, for most of these).
 *
 *               ---------- float ---------   | ------- double -------
 *   function  zmm   ymm  exhst scalar | zmm   ymm  scalar
 *   exp      2.59  2.59  2.64   0.50  |  3.01  3.01   0.51
 *   exp2     0.99  0.81     -   0.50  |  1.03  1.64   0.51
 *   exp10    3.76  1.73     -   0.50  |  1.75  1.75   1.98
 *   expm1    2.32  1.67  2.35   0.81  |  2.04  2.94   0.81
 *   log      3.90  3.90  3.94   0.81  |  1.42  1.42   0.52
 *   log2     1.96  2.01     -   0.75  |  1.81  1.52   0.54
 *   log10    3.41  2.09     -   1.92  |  1.81  1.55   1.58
 *   log1p    1.87  1.87  1.96   0.81  |  1.92  2.04   0.81
 *   sin      2.11  2.11  2.11   0.56  |  3.25  3.25   0.52
 *   cos      1.93  1.93  2.01   0.56  |  3.50  3.50   0.52
 *   tan      3.64  3.42     -   1.30  |  3.50  3.39   0.56
 *   asin     3.03  2.64     -   0.88  |  2.55  2.53   0.51
 *   acos     1.98  2.06     -   0.89  |  1.70  1.71   0.52
 *   atan     2.06  2.29     -   0.84  |  2.44  2.44   0.52
 *   sinh     1.88  1.88     -   1.88  |  1.88  1.88   1.82
 *   cosh     2.39  1.98     -   1.86  |  1.95  1.80   1.80
 *   tanh     1.37  1.03  1.37   2.16  |  1.19  2.14   2.12
 *   asinh    0.98  2.00     -   1.70  |  1.48  2.45   1.63
 *   acosh    1.00  2.41     -   1.93  |  0.92  2.49   1.71
 *   atanh    1.80  2.00     -   1.72  |  1.42  2.33   1.59
 *   cbrt     1.93  2.85     -   0.97  |  1.80  2.73   3.34
 *   erf      4.00  1.92  4.00   0.97  |  2.47  2.47   1.09
 *   erfc     1.61  1.61     -   2.87  |  1.96  1.96   3.58
 *   atan2    3.25  3.25     -   1.45  |  2.45  2.45   0.52
 *   hypot    1.21  1.16     -   0.50  |  1.33  1.15   0.56
 *   pow      0.62  0.62     -   0.56  |  1.00  1.00   0.51
 *
 * So: every vector variant is within 4.0 ULP (worst: erff 4.00, logf 3.94,
 * exp10f 3.76 (zmm), tanf 3.64, cos/tan 3.5); the scalar libm ones are
 * within 3.6 ULP (erfc).  tests/test_c_semantics.py allows 5 ULP for them.
 * fj_vmath_f32.h has fusejit's own float32 exp, tanh, erf, log (within 1.15 ULP,
 * all 2^32 inputs); generated code uses them wherever there is FMA (tanh: libmvec's
 * at 512 bits), and fj_vpow.h its own float power (libmvec's powf is scalar for
 * negative bases).
 *
 * Special values: on the whole sample above, NaN positions, +-Inf results
 * and signed zeros (e.g. sinf(-0) == -0, expm1(-0) == -0, atan2(+-0,-0) ==
 * +-pi, pow(-0,-1) == -inf) of every vector variant are identical to the
 * reference (0 mismatches for all 52 functions), and the tests check them
 * against NumPy on NaN/+-Inf/+-0/denormal/+-MAX inputs (and all pairs).
 */
#ifndef FJ_VMATH_H
#define FJ_VMATH_H

#include <math.h>

#if defined(FJ_LIBMVEC)

#define FJ_VMATH_ACTIVE 1
#define FJ__VDECL extern __attribute__((__simd__("notinbranch")))

/* One-argument functions, double and float. */
#define FJ__V1(name)                                                            \
    FJ__VDECL double name(double);                                              \
    FJ__VDECL float name##f(float);
/* Two-argument functions. */
#define FJ__V2(name)                                                            \
    FJ__VDECL double name(double, double);                                      \
    FJ__VDECL float name##f(float, float);

FJ__V1(exp)
FJ__V1(exp2)
FJ__V1(exp10)
FJ__V1(expm1)
FJ__V1(log)
FJ__V1(log2)
FJ__V1(log10)
FJ__V1(log1p)
FJ__V1(sin)
FJ__V1(cos)
FJ__V1(tan)
FJ__V1(asin)
FJ__V1(acos)
FJ__V1(atan)
FJ__V1(sinh)
FJ__V1(cosh)
FJ__V1(tanh)
FJ__V1(asinh)
FJ__V1(acosh)
FJ__V1(atanh)
FJ__V1(cbrt)
FJ__V1(erf)
FJ__V1(erfc)
FJ__V2(atan2)
FJ__V2(hypot)
FJ__V2(pow)

/* cos under another C name bound to the same symbol.  gcc rewrites sin(x)
 * and cos(x) of the same x into one sincos/cexpi call, which has no vector
 * form, so such a loop would not vectorise; fj_cos_* is not recognised as
 * the builtin cos, which keeps the two calls apart (both then vectorise).
 * Generated code should call fj_sin_* / fj_cos_* rather than sin / cos. */
FJ__VDECL __attribute__((__const__, __nothrow__)) double fj_cos_f64(double) __asm__("cos");
FJ__VDECL __attribute__((__const__, __nothrow__)) float fj_cos_f32(float) __asm__("cosf");

#undef FJ__V1
#undef FJ__V2
#undef FJ__VDECL

#else

#define FJ_VMATH_ACTIVE 0

static inline double fj_cos_f64(double x) { return cos(x); }
static inline float fj_cos_f32(float x) { return cosf(x); }

#endif /* FJ_LIBMVEC */

static inline double fj_sin_f64(double x) { return sin(x); }
static inline float fj_sin_f32(float x) { return sinf(x); }

#endif /* FJ_VMATH_H */
