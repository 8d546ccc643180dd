"""The NumPy meaning of the `lapack` and `lapack_solve` ops (the op table's references).

One op computes one stored array per batch of square matrices, laid out as the compiled
kernel (codegen/clapack.py) writes it; frontend/lapack.py takes NumPy's results out of it by
views and elementwise ops:
- `solve` (a, b): x with a @ x = b, b of shape (..., n, k);
- `inv`: the inverse; `inv_nan` (np.linalg.cond's) the same, NaN for a singular matrix;
  `cholesky`: the lower factor L (zeros above the diagonal);
- `slogdet`: (..., 2) holding sign and log|det|;
- `eigh`: (..., n + 1, n), row 0 the eigenvalues (ascending), rows 1.. the eigenvectors as
  columns; `eigvalsh`: (..., n) the eigenvalues.
The `uplo` attribute names the triangle eigh and eigvalsh read.
- `svd` / `svd_full` (a of shape (..., m, n), k = min(m, n)): (..., L) holding U (m x k, or
  m x m), row-major, then S (k), then Vh (k x n, or n x n), row-major; `svdvals`: (..., k).
- `expm`: scipy.linalg.expm, the matrix exponential;
- `lu` (a of shape (..., m, n)): (..., m n + k + m) holding LU row-major, the pivots (k =
  min(m, n), 0-based) and the row permutation p (row i of a is row p[i] of L U);
  `lu_solve` / `lu_solve_t` (a: [LU | pivots] of shape (n, n + 1), b (n, k)): x with
  a x = b (or a^T x = b), an IndexError for a pivot outside [0, n);
- `qr` / `qr_complete` (a of shape (..., m, n)): (..., L) holding Q (m x k, or m x m when
  complete and m > n) then R (Q's columns x n), both row-major; `qr_r`: R (..., k, n).
- `lstsq` (a of shape (m, n), b of shape (m, k), float64 or complex128, attribute `rcond`):
  one flat array of a's dtype, [x (n, k) row-major | residuals (k) | singular values
  (min(m, n)) | rank]; the residuals are the squared norms of b - a @ x's columns when
  m > n (0 otherwise), whatever the rank.
"""

from __future__ import annotations

from typing import Any

import numpy as np


def lapack_ref(a: np.ndarray, fn: str, uplo: str = "L", **_: Any) -> np.ndarray:
    """The stored result of one-operand LAPACK op `fn` on stacked matrices `a`."""
    if fn == "inv":
        return np.linalg.inv(a)
    if fn == "inv_nan":  # each matrix's inverse, NaN where it is singular
        out = np.empty_like(a)
        for i in np.ndindex(a.shape[:-2]):
            try:
                out[i] = np.linalg.inv(a[i])
            except np.linalg.LinAlgError:
                out[i] = np.nan
        return out
    if fn == "cholesky":
        return np.linalg.cholesky(a)
    if fn == "slogdet":
        sign, logdet = np.linalg.slogdet(a)
        return np.stack([np.asarray(sign), np.asarray(logdet)], axis=-1).astype(a.dtype)
    if fn == "eigvalsh":
        return np.linalg.eigvalsh(a, UPLO=uplo)
    if fn == "eigh":
        w, v = np.linalg.eigh(a, UPLO=uplo)
        return np.concatenate([w[..., None, :], v], axis=-2)
    if fn == "svdvals":
        return np.linalg.svd(a, compute_uv=False)
    if fn in ("svd", "svd_full"):
        u, s, vh = np.linalg.svd(a, full_matrices=fn == "svd_full")
        flat = a.shape[:-2] + (-1,)
        return np.concatenate([u.reshape(flat), s, vh.reshape(flat)], axis=-1)
    if fn == "qr_r":
        return np.linalg.qr(a, mode="r")
    if fn in ("qr", "qr_complete"):
        q, r = np.linalg.qr(a, mode="complete" if fn == "qr_complete" else "reduced")
        flat = a.shape[:-2] + (-1,)
        return np.concatenate([q.reshape(flat), r.reshape(flat)], axis=-1)
    if fn == "lu":
        import scipy.linalg

        m, n = a.shape[-2:]
        flat = []
        for mat in a.reshape((-1, m, n)):
            lu, piv = scipy.linalg.lu_factor(mat)
            perm = np.arange(m)
            for i, r in enumerate(piv):
                perm[[i, r]] = perm[[r, i]]
            flat.append(np.concatenate([lu.ravel(), piv, np.argsort(perm)]))
        return np.asarray(flat, a.dtype).reshape(a.shape[:-2] + (-1,))
    if fn == "expm":
        import scipy.linalg

        return scipy.linalg.expm(a)
    raise ValueError(f"unknown LAPACK op {fn!r}")


def lapack_solve_ref(a: np.ndarray, b: np.ndarray, fn: str = "solve", rcond: float = -1.0,
                     **_: Any) -> np.ndarray:
    """The stored result of two-operand LAPACK op `fn` (solve: b of shape (..., n, k);
    lstsq: the flat layout above)."""
    if fn == "solve":
        return np.linalg.solve(a, b)
    if fn in ("lu_solve", "lu_solve_t"):
        import scipy.linalg

        n = a.shape[0]
        piv = a[:, n]
        if not np.all((piv >= 0) & (piv < n)):
            raise IndexError("index out of bounds: an index array holds a value outside "
                             "the axis it indexes.")
        return scipy.linalg.lu_solve((a[:, :n], piv.astype(np.int32)), b,
                                     trans=1 if fn == "lu_solve_t" else 0)
    assert fn == "lstsq", fn
    (m, n), k = a.shape, b.shape[1]
    x, _, rank, s = np.linalg.lstsq(a, b, rcond=rcond)
    resid = (np.abs(b - a @ x) ** 2).sum(axis=0) if m > n else np.zeros(k)
    return np.concatenate([x.ravel(), resid, s, [rank]]).astype(a.dtype)
