"""C for scipy.linalg.expm's LapackKernels (fn "expm"; codegen/clapack.py renders the kernel
around it): the matrix exponential of each float64 matrix of a batch, by scaling and squaring
of a diagonal Pade approximant (Higham, "The scaling and squaring method for the matrix
exponential revisited", 2005): the degree m in {3, 5, 7, 9, 13} and the scaling 2^-s from the
1-norm against that paper's bounds theta_m, U and V from even powers of A, R = (V - U)^-1
(V + U) by LAPACK's dgesv, then s squarings, with BLAS's dgemm for the products.

SciPy's special cases are kept: a diagonal matrix gives the exp of its diagonal; a triangular
one keeps its zero triangle, and while squaring its diagonal and first off-diagonal are set to
their exact values (exp(a_ii 2^-i), and (exp(a_jj) - exp(a_ii)) / (a_jj - a_ii) times the
off-diagonal entry, through sinh so that it does not cancel: Al-Mohy and Higham 2009's Code
Fragment 2.1, as SciPy). A matrix holding inf or NaN gives NaN (its zero triangle kept).
SciPy chooses m and s by Al-Mohy and Higham's 2009 estimates, which may scale less: the two
agree to rounding on the matrices the tests use (tests/test_expm.py).
"""

from __future__ import annotations

from fractions import Fraction
from math import factorial

# Higham 2005, Table 2.3: the largest 1-norm for which degree m's approximant is accurate to
# double's unit roundoff
THETA = {3: 1.495585217958292e-2, 5: 2.539398330063230e-1, 7: 9.504178996162932e-1,
         9: 2.097847961257068e0, 13: 5.371920351148152e0}


def pade_coefficients(m: int) -> list[int]:
    """b_0..b_m of the [m/m] Pade approximant of e^x, scaled so that b_m = 1:
    b_j = (2m - j)! m! / ((2m)! j! (m - j)!), divided by b_m's value."""
    c = [Fraction(factorial(2 * m - j) * factorial(m), factorial(2 * m) * factorial(j)
                  * factorial(m - j)) for j in range(m + 1)]
    scaled = [x / c[m] for x in c]
    assert all(x.denominator == 1 for x in scaled)
    return [int(x) for x in scaled]


def _table(m: int) -> str:
    return ", ".join(f"{b}.0" for b in pade_coefficients(m))


def workspace(n: int) -> tuple[int, int]:
    """(doubles, ints) of scratch one matrix needs: A and eight more n x n matrices, the
    pivots."""
    return 9 * n * n, max(n, 1)


EXPM_C = """
typedef void (*fj_expm_gemm_t)(const char *, const char *, const int *, const int *,
    const int *, const double *, const double *, const int *, const double *, const int *,
    const double *, double *, const int *);
typedef void (*fj_expm_gesv_t)(int *, int *, double *, int *, int *, double *, int *, int *);
static const double fj_expm_b3[] = {%(b3)s};
static const double fj_expm_b5[] = {%(b5)s};
static const double fj_expm_b7[] = {%(b7)s};
static const double fj_expm_b9[] = {%(b9)s};
static const double fj_expm_b13[] = {%(b13)s};

/* c = a b, n x n column-major */
static void fj_expm_mul(void *gemm, int n, const double *a, const double *b, double *c) {
    const char no = 'N';
    const double one = 1.0, zero = 0.0;
    ((fj_expm_gemm_t)gemm)(&no, &no, &n, &n, &n, &one, a, &n, b, &n, &zero, c, &n);
}

/* (e^y - e^x) / (y - x), without cancelling: e^((x+y)/2) sinh(d)/d, d = (y - x)/2 */
static double fj_expm_divided(double x, double y) {
    const double d = 0.5 * (y - x);
    return exp(0.5 * (x + y)) * (d == 0.0 ? 1.0 : sinh(d) / d);
}

/* exp of the n x n matrix w[0 .. n n) (column-major, n >= 2), in place; scratch
   w[n n .. 9 n n) and iw[0 .. n). Returns dgesv's info (> 0: V - U singular). */
static int fj_expm(void *gemm, void *gesv, int n, double *w, int *iw) {
    const int64_t nn = (int64_t)n * n;
    double *const a = w, *const a2 = w + nn, *const a4 = w + 2 * nn, *const a6 = w + 3 * nn,
        *const u = w + 4 * nn, *const v = w + 5 * nn, *const t = w + 6 * nn,
        *const r = w + 7 * nn, *const d0 = w + 8 * nn;
    int lower = 0, upper = 0, finite = 1;
    double norm = 0.0;
    for (int j = 0; j < n; j++) {
        double col = 0.0;
        for (int i = 0; i < n; i++) {
            const double x = a[i + j * n];
            col += fabs(x);
            if (x != 0.0) { lower |= i > j; upper |= i < j; }
            if (!isfinite(x)) finite = 0;
        }
        if (col > norm) norm = col;
    }
    if (!lower && !upper) {  /* diagonal: the exp of the diagonal (inf and NaN too) */
        for (int j = 0; j < n; j++) for (int i = 0; i < n; i++)
            a[i + j * n] = i == j ? exp(a[i + j * n]) : 0.0;
        return 0;
    }
    if (!finite) {  /* NaN, but the zero triangle of a triangular matrix stays 0 */
        for (int j = 0; j < n; j++) for (int i = 0; i < n; i++)
            a[i + j * n] = (i > j && !lower) || (i < j && !upper) ? 0.0 : NAN;
        return 0;
    }
    for (int i = 0; i < n; i++) d0[i] = a[i + i * n];  /* (the diagonal, and the */
    for (int i = 0; i + 1 < n; i++)  /* first off-diagonal of a triangular matrix) */
        d0[n + i] = upper ? a[i + (i + 1) * n] : a[i + 1 + i * n];
    int m = 13, s = 0;
    if (norm <= %(t3)r) m = 3;
    else if (norm <= %(t5)r) m = 5;
    else if (norm <= %(t7)r) m = 7;
    else if (norm <= %(t9)r) m = 9;
    else {
        s = (int)ceil(log2(norm / %(t13)r));
        if (s < 0) s = 0;
        const double f = ldexp(1.0, -s);
        for (int64_t k = 0; k < nn; k++) a[k] *= f;
    }
    fj_expm_mul(gemm, n, a, a, a2);
    if (m == 13) {
        const double *const b = fj_expm_b13;
        fj_expm_mul(gemm, n, a2, a2, a4);
        fj_expm_mul(gemm, n, a4, a2, a6);
        for (int64_t k = 0; k < nn; k++) {  /* t: the parts A6 multiplies */
            t[k] = b[13] * a6[k] + b[11] * a4[k] + b[9] * a2[k];
            r[k] = b[12] * a6[k] + b[10] * a4[k] + b[8] * a2[k];
        }
        fj_expm_mul(gemm, n, a6, t, u);  /* u = A6 (...) + b7 A6 + ... + b1 I: then A u */
        fj_expm_mul(gemm, n, a6, r, v);
        for (int64_t k = 0; k < nn; k++) {
            t[k] = u[k] + b[7] * a6[k] + b[5] * a4[k] + b[3] * a2[k];
            v[k] += b[6] * a6[k] + b[4] * a4[k] + b[2] * a2[k];
        }
        for (int i = 0; i < n; i++) { t[i + i * n] += b[1]; v[i + i * n] += b[0]; }
    } else {
        const double *const b = m == 3 ? fj_expm_b3 : m == 5 ? fj_expm_b5 :
            m == 7 ? fj_expm_b7 : fj_expm_b9;
        /* t = sum b_{2k+1} A^{2k}, v = sum b_{2k} A^{2k}, k = 0 .. (m-1)/2 */
        for (int64_t k = 0; k < nn; k++) { t[k] = b[3] * a2[k]; v[k] = b[2] * a2[k]; }
        if (m >= 5) {
            fj_expm_mul(gemm, n, a2, a2, a4);
            for (int64_t k = 0; k < nn; k++) { t[k] += b[5] * a4[k]; v[k] += b[4] * a4[k]; }
        }
        if (m >= 7) {
            fj_expm_mul(gemm, n, a4, a2, a6);
            for (int64_t k = 0; k < nn; k++) { t[k] += b[7] * a6[k]; v[k] += b[6] * a6[k]; }
        }
        if (m >= 9) {  /* A8 in u (free until A t) */
            fj_expm_mul(gemm, n, a4, a4, u);
            for (int64_t k = 0; k < nn; k++) { t[k] += b[9] * u[k]; v[k] += b[8] * u[k]; }
        }
        for (int i = 0; i < n; i++) { t[i + i * n] += b[1]; v[i + i * n] += b[0]; }
    }
    fj_expm_mul(gemm, n, a, t, u);  /* U = A t */
    for (int64_t k = 0; k < nn; k++) { t[k] = v[k] - u[k]; r[k] = v[k] + u[k]; }
    int info = 0;
    ((fj_expm_gesv_t)gesv)(&n, &n, t, &n, iw, r, &n, &info);
    const int tri = !lower || !upper;
    if (tri && s > 0)  /* the diagonal of exp(A 2^-s), exactly */
        for (int k = 0; k < n; k++) r[k + k * n] = exp(ldexp(d0[k], -s));
    for (int i = s - 1; i >= 0; i--) {  /* R <- R^2, s times (r and a alternate) */
        fj_expm_mul(gemm, n, r, r, a);
        if (tri) {  /* the exact diagonal and first off-diagonal of exp(A 2^-i) */
            const double f = ldexp(1.0, -i);
            for (int k = 0; k < n; k++) a[k + k * n] = exp(d0[k] * f);
            for (int k = 0; k + 1 < n; k++) {
                const double e = fj_expm_divided(d0[k] * f, d0[k + 1] * f) * (d0[n + k] * f);
                if (upper) a[k + (k + 1) * n] = e; else a[k + 1 + k * n] = e;
            }
        }
        for (int64_t k = 0; k < nn; k++) r[k] = a[k];
    }
    for (int j = 0; j < n; j++) for (int i = 0; i < n; i++)  /* into place; the zero */
        a[i + j * n] = tri && ((i > j && !lower) || (i < j && !upper)) ? 0.0 : r[i + j * n];
    return info;
}
"""


def expm_c() -> str:
    """The C helper every expm kernel of a program calls (emitted once)."""
    return EXPM_C % {"b3": _table(3), "b5": _table(5), "b7": _table(7), "b9": _table(9),
                     "b13": _table(13), "t3": THETA[3], "t5": THETA[5], "t7": THETA[7],
                     "t9": THETA[9], "t13": THETA[13]}


def expm_body(n: int, oc: tuple[int, ...], gemm_index: int) -> list[str]:
    """The C of one matrix after clapack.py copied it into fj_w (column-major)."""
    return [f"if (fj_expm(fj_lapack[{gemm_index}], fj_f, fj_n, fj_w, fj_iw) > 0) "
            "fj_err |= FJ_ERR_SINGULAR;",
            "(void)fj_ld; (void)fj_info;",
            f"for (int64_t i = 0; i < {n}; i++) for (int64_t j = 0; j < {n}; j++)",
            f"    fj_C[fj_oc + i * {oc[-2]} + j * {oc[-1]}] = fj_w[i + j * {n}];"]
