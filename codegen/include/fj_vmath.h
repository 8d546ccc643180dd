/*
 * fj_vmath.h -- let gcc vectorise libm calls through glibc's libmvec.
 * (Measurement table: see the end of this comment.)
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
 *     cc -O3 -march=native -fopenmp -fno-math-errno -DFJ_LIBMVEC \
 *        probe_libmvec.c -lmvec -lm && ./a.out
 *
 * Findings (gcc 12.2, glibc 2.36, x86_64 AMD EPYC/Zen 4 seen as znver3 with
 * AVX-512; flags -O3 -march=native -fopenmp -fno-math-errno -fwrapv
 * -fno-trapping-math):
 *   - all 52 functions below vectorise: the main loop calls the
 *     _ZGVeN16v_*f / _ZGVeN8v_* (zmm) variants, the vectorised epilogue
 *     the _ZGVdN8v_*f / _ZGVdN4v_* (ymm) ones; two-argument functions use
 *     the "vv" variants (_ZGVeN16vv_powf, ...).
 *   - notinbranch: the call must be unconditional in the loop body.
 *     `c ? expf(x) : y` is if-converted and still vectorises (the call is
 *     evaluated for every lane), but a call inside an `if` statement that
 *     gcc cannot if-convert does not.  fj_scalar.h is written accordingly.
 *   - sincos/sincosf are left out on purpose (their variants take vectors of
 *     pointers); a loop computing both sin(x) and cos(x) still vectorises
 *     into separate _ZGV*_sin / _ZGV*_cos calls.
 *   - Harmless after (or before) <math.h>, with or without -ffast-math
 *     (glibc's identical attribute / `omp declare simd` merge with ours),
 *     and with -std=c99 (exp10/exp10f are declared here as glibc does under
 *     _GNU_SOURCE).
 *   - libmvec does not provide fmod, floor, fabs, sqrt, rint, ...; those
 *     that gcc inlines (floor, rint, sqrt, fabs, copysign) vectorise
 *     without it, fmod never does.
 *
 * Accuracy: max error in ULP of the vector variant (the zmm one, which is
 * what the main loop uses) against a high-precision reference: float
 * functions vs the double libm result rounded to float, double functions vs
 * the x87 80-bit long double libm result.  Sample per function: 2^22 random
 * bit patterns over the whole domain, 2^22 uniform and 2^22 log-uniform
 * arguments in the function's interesting range, plus NaN, +-Inf, +-0,
 * +-denormals, +-FLT/DBL_MAX and large arguments (1e4..1e22 for the
 * trigonometric ones).  "scalar" is glibc's scalar function on the same
 * sample for comparison.
 *
 *   function    float: vector  scalar | double: vector  scalar
 *   (FJ_ULP_TABLE)
 *
 * Special values: NaN -> NaN, +-Inf and +-0 results (incl. the sign of
 * zero, e.g. sinf(-0) == -0, expm1(-0) == -0, atan2(+-0, -0) == +-pi)
 * match the scalar functions, and therefore NumPy, for every function in
 * the list except where noted in the table.
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

#undef FJ__V1
#undef FJ__V2
#undef FJ__VDECL

#else

#define FJ_VMATH_ACTIVE 0

#endif /* FJ_LIBMVEC */

#endif /* FJ_VMATH_H */
