"""scipy.linalg's common functions of traced arrays, on fusejit's np.linalg kernels (installed by
frontend/scipy_api.py): inv, solve, det, solve_triangular, lstsq, cholesky, cho_factor,
cho_solve, eigh, eigvalsh, svd, svdvals, norm, qr, pinv, expm, lu, lu_factor and lu_solve.

SciPy's functions ask the array for its flags and call LAPACK, so a traced value cannot flow
through them. With a traced argument these compute SciPy's result from np.linalg's traced
operations instead, with SciPy's semantics where the two libraries differ:
- check_finite=True (SciPy's default): the program raises SciPy's ValueError ("array must not
  contain infs or NaNs") when an input holds one (np.asarray_chkfinite's check).
- the triangle read: cholesky, cho_factor and solve(assume_a='sym'/'her'/'pos') read only the
  triangle `lower` names (the other is made its mirror image); cholesky returns the upper
  factor unless lower=True; cho_factor returns the factor in that triangle and the input's
  other one, as LAPACK leaves it (or zeros there, where the installed SciPy zeroes it);
  solve(assume_a='pos') factors by Cholesky, so a matrix that is not positive definite
  raises LinAlgError, as SciPy's.
- lstsq's default cond is the machine epsilon of the working precision (LAPACK's), where
  np.linalg.lstsq's is eps x max(M, N); pinv's cutoff is atol + rtol x max(s) with rtol
  max(M, N) x eps of the input's precision (float32's for float32), and zeroes the
  reciprocals of the singular values below it (SciPy drops those columns: the same product).
- qr's modes: 'full' is np.linalg.qr's 'complete', 'economic' its 'reduced', and 'r' the
  full-height R in a 1-tuple.
- expm: one `lapack` node (fn "expm", codegen/clapack_expm.py: scaling and squaring of a
  Pade approximant, Higham 2005, in float64) with SciPy's special cases: a 1 x 1 or 0-d
  one-element input is exp (0-d: a (1, 1) float64 array), a diagonal matrix the exp of its
  diagonal, a triangular one keeps its zero triangle (and its diagonal and first off-diagonal
  are recomputed exactly while squaring); float16 comes back float32, integers float64.
- lu, lu_factor: one `lapack` node (fn "lu": LAPACK getrf in the operand's precision, float32
  or float64, as SciPy; codegen/clapack_lu.py) holding LU, the pivots and the row
  permutation, of which lu_factor's (lu, piv) and lu's P, L, U (p_indices, permute_l) are
  views and elementwise ops; an exactly singular matrix is factored without error (SciPy
  warns). lu_solve: one `lapack_solve` node (getrs, trans 0/1/2) of [lu | piv] and b, for an
  unbatched lu; a pivot outside [0, n) raises IndexError when the program runs (SciPy reads
  past its memory).
SciPy's argument checks come from SciPy's own function, called on stand-ins (identity
matrices and zeros of the arguments' shapes and dtypes): its ValueErrors for non-square or
mismatched arrays, bad keywords. Results are fusejit's np.linalg (float32 computed in
float64 and rounded, where SciPy's LAPACK works in float32: within float32 rounding);
eigenvectors and singular vectors are unique only up to sign, and may differ from SciPy's
by one. Complex matrices are refused as fusejit's np.linalg refuses them. Refused by name:
a generalized eigenproblem (eigh's b), subset_by_value (its
shape depends on the data), other assume_a structures, and SciPy's LinAlgWarning for an
ill-conditioned solve is not raised (it would branch on the data).
"""

from __future__ import annotations

import functools
from typing import Any

import numpy as np

from ..errors import UnsupportedError
from . import tracer as T
from .lapack import lapack_node, solve_node
from .numpy_lib import quietly


def _refuse(what: str) -> UnsupportedError:
    return UnsupportedError(f"scipy.linalg.{what} is not supported by fusejit{T.where_msg()}")


def _stand_in(x: Any, identity: bool = False) -> Any:
    """A real array of x's shape and dtype: the identity in each square matrix, or zeros."""
    if not isinstance(x, T.Tracer):
        x = np.asarray(x)
    out = np.zeros(x.shape, x.dtype if x.dtype.kind in "fc" else np.float64)
    if identity and x.ndim >= 2:
        out[...] = np.eye(x.shape[-2], x.shape[-1], dtype=out.dtype)
    return out


def _scipy_checks(name: str, *args: Any, **kwargs: Any) -> None:
    import scipy.linalg

    quietly(getattr(scipy.linalg, name), *args, **kwargs)


def _operand(x: Any, check_finite: bool) -> Any:
    """x as a traced or real array (floats: integers and bools become float64, as LAPACK's
    inputs), checked for inf and NaN when the program runs if `check_finite`."""
    t = x if isinstance(x, T.Tracer) else np.asarray(x)
    if t.dtype.kind not in "fc":
        t = t.astype(np.float64)
    return np.asarray_chkfinite(t) if check_finite else t


def _mirrored(a: Any, lower: bool, conj: bool) -> Any:
    """The matrix whose `lower` (else upper) triangle is a's and the other its mirror image."""
    tri = np.tril(a) if lower else np.triu(a)
    strict = np.tril(a, -1) if lower else np.triu(a, 1)
    other = np.swapaxes(strict, -1, -2)
    return tri + (np.conj(other) if conj else other)


def _h(m: Any) -> Any:
    return np.conj(np.swapaxes(m, -1, -2))


def inv(a: Any, overwrite_a: bool = False, check_finite: bool = True, *, assume_a: Any = None,
        lower: bool = False) -> Any:
    if assume_a not in (None, "general", "gen"):
        raise _refuse(f"inv(..., assume_a={assume_a!r}) of a traced matrix")
    _scipy_checks("inv", _stand_in(a, True))
    return np.linalg.inv(_operand(a, check_finite))


def det(a: Any, overwrite_a: bool = False, check_finite: bool = True) -> Any:
    _scipy_checks("det", _stand_in(a, True))
    return np.linalg.det(_operand(a, check_finite))


def solve(a: Any, b: Any, lower: bool = False, overwrite_a: bool = False,
          overwrite_b: bool = False, check_finite: bool = True, assume_a: Any = None,
          transposed: bool = False) -> Any:
    structure = {None: "gen", "general": "gen", "gen": "gen", "symmetric": "sym", "sym": "sym",
                 "hermitian": "her", "her": "her", "positive definite": "pos",
                 "pos": "pos"}.get(assume_a)
    if structure is None:
        raise _refuse(f"solve(..., assume_a={assume_a!r}) of traced arrays")
    _scipy_checks("solve", _stand_in(a, True), _stand_in(b), lower=lower, assume_a=assume_a,
                  transposed=transposed)
    m, rhs = _operand(a, check_finite), _operand(b, check_finite)
    if structure != "gen":
        m = _mirrored(m, lower, structure in ("her", "pos") and m.dtype.kind == "c")
    if transposed:
        m = np.swapaxes(m, -1, -2)
    if structure == "pos":  # (a matrix that is not positive definite raises LinAlgError)
        return cho_solve((np.linalg.cholesky(m), True), rhs, check_finite=False)
    return np.linalg.solve(m, rhs)


def solve_triangular(a: Any, b: Any, trans: Any = 0, lower: bool = False,
                     unit_diagonal: bool = False, overwrite_b: bool = False,
                     check_finite: bool = True) -> Any:
    _scipy_checks("solve_triangular", _stand_in(a, True), _stand_in(b), trans=trans,
                  lower=lower, unit_diagonal=unit_diagonal)
    m, rhs = _operand(a, check_finite), _operand(b, check_finite)
    m = np.tril(m) if lower else np.triu(m)
    if unit_diagonal:
        eye = np.eye(m.shape[-1], dtype=bool)
        m = np.where(eye, np.ones((), m.dtype), m)
    kind = {0: "N", 1: "T", 2: "C"}.get(trans, trans)
    if kind in ("T", "C"):
        m = np.swapaxes(m, -1, -2)
        m = np.conj(m) if kind == "C" else m
    return np.linalg.solve(m, rhs)


def lstsq(a: Any, b: Any, cond: Any = None, overwrite_a: bool = False,
          overwrite_b: bool = False, check_finite: bool = True, lapack_driver: Any = None) -> Any:
    _scipy_checks("lstsq", _stand_in(a), _stand_in(b), cond=cond, lapack_driver=lapack_driver)
    m, rhs = _operand(a, check_finite), _operand(b, check_finite)
    work = np.result_type(m.dtype, rhs.dtype)
    rcond = np.finfo(work).eps if cond is None else cond
    x, residues, rank, s = np.linalg.lstsq(m, rhs, rcond=rcond)
    return x, residues, rank, s


def cholesky(a: Any, lower: bool = False, overwrite_a: bool = False,
             check_finite: bool = True) -> Any:
    _scipy_checks("cholesky", _stand_in(a, True), lower=lower)
    m = _operand(a, check_finite)
    factor = np.linalg.cholesky(_mirrored(m, lower, m.dtype.kind == "c"))
    return factor if lower else _h(factor)


def cho_factor(a: Any, lower: bool = False, overwrite_a: bool = False,
               check_finite: bool = True) -> tuple[Any, bool]:
    m = _operand(a, check_finite)
    factor = cholesky(m, lower, check_finite=False)
    keep = np.tril(np.ones(m.shape[-2:], bool)) if lower else np.triu(
        np.ones(m.shape[-2:], bool))
    return np.where(keep, factor, m if _cho_factor_keeps_other_triangle() else 0), lower


@functools.cache
def _cho_factor_keeps_other_triangle() -> bool:
    """Whether the installed SciPy's cho_factor leaves the triangle it does not read as it
    was (SciPy's documented "random data" there: the input, with LAPACK's potrf) or zeroes it
    (some SciPy versions do): asked of SciPy's own function on a 2x2 matrix."""
    import scipy.linalg

    c, _ = quietly(scipy.linalg.cho_factor, np.array([[4.0, 2.0], [3.0, 5.0]]))
    return bool(c[1, 0] == 3.0)


def cho_solve(c_and_lower: Any, b: Any, overwrite_b: bool = False,
              check_finite: bool = True) -> Any:
    c, lower = c_and_lower
    _scipy_checks("cho_solve", (_stand_in(c, True), lower), _stand_in(b))
    m, rhs = _operand(c, check_finite), _operand(b, check_finite)
    low = np.tril(m) if lower else _h(np.triu(m))
    return np.linalg.solve(_h(low), np.linalg.solve(low, rhs))


def eigh(a: Any, b: Any = None, *, lower: bool = True, eigvals_only: bool = False,
         overwrite_a: bool = False, overwrite_b: bool = False, type: int = 1,
         check_finite: bool = True, subset_by_index: Any = None, subset_by_value: Any = None,
         driver: Any = None) -> Any:
    if b is not None:
        raise _refuse("eigh with b= (a generalized eigenproblem) of traced arrays")
    if subset_by_value is not None:
        raise _refuse("eigh(..., subset_by_value=) of a traced matrix: the number of "
                      "eigenvalues in the interval depends on the data")
    _scipy_checks("eigh", _stand_in(a, True), lower=lower, eigvals_only=eigvals_only,
                  type=type, subset_by_index=subset_by_index, driver=driver)
    m = _operand(a, check_finite)
    w, v = np.linalg.eigh(m, UPLO="L" if lower else "U")
    if subset_by_index is not None:
        lo, hi = (int(i) for i in subset_by_index)
        w, v = w[..., lo:hi + 1], v[..., lo:hi + 1]
    return w if eigvals_only else (w, v)


def eigvalsh(a: Any, b: Any = None, *, lower: bool = True, overwrite_a: bool = False,
             overwrite_b: bool = False, type: int = 1, check_finite: bool = True,
             subset_by_index: Any = None, subset_by_value: Any = None, driver: Any = None) -> Any:
    return eigh(a, b, lower=lower, eigvals_only=True, type=type, check_finite=check_finite,
                subset_by_index=subset_by_index, subset_by_value=subset_by_value, driver=driver)


def svd(a: Any, full_matrices: bool = True, compute_uv: bool = True,
        overwrite_a: bool = False, check_finite: bool = True,
        lapack_driver: str = "gesdd") -> Any:
    _scipy_checks("svd", _stand_in(a), full_matrices=full_matrices, compute_uv=compute_uv,
                  lapack_driver=lapack_driver)
    m = _operand(a, check_finite)
    if not compute_uv:
        return np.linalg.svd(m, compute_uv=False)
    return tuple(np.linalg.svd(m, full_matrices=full_matrices))


def svdvals(a: Any, overwrite_a: bool = False, check_finite: bool = True) -> Any:
    return svd(a, compute_uv=False, check_finite=check_finite)


def norm(a: Any, ord: Any = None, axis: Any = None, keepdims: bool = False,
         check_finite: bool = True) -> Any:
    _scipy_checks("norm", _stand_in(a), ord=ord, axis=axis, keepdims=keepdims)
    t = a if isinstance(a, T.Tracer) else np.asarray(a)
    if check_finite:
        t = np.asarray_chkfinite(t)
    return np.linalg.norm(t, ord=ord, axis=axis, keepdims=keepdims)


def qr(a: Any, overwrite_a: bool = False, lwork: Any = None, mode: str = "full",
       pivoting: bool = False, check_finite: bool = True) -> Any:
    if pivoting or mode == "raw":
        raise _refuse(f"qr(..., {'pivoting=True' if pivoting else 'mode=raw'}) of a traced "
                      "matrix")
    _scipy_checks("qr", _stand_in(a), mode=mode)
    m = _operand(a, check_finite)
    if mode == "r":
        return (np.linalg.qr(m, mode="complete")[1],)
    return tuple(np.linalg.qr(m, mode="complete" if mode == "full" else "reduced"))


def pinv(a: Any, *, atol: Any = None, rtol: Any = None, return_rank: bool = False,
         check_finite: bool = True) -> Any:
    if isinstance(atol, T.Tracer) or isinstance(rtol, T.Tracer):
        raise _refuse("pinv with a traced atol or rtol")
    _scipy_checks("pinv", _stand_in(a), atol=atol, rtol=rtol)
    x = a if isinstance(a, T.Tracer) else np.asarray(a)
    eps = np.finfo(x.dtype if x.dtype.kind in "fc" else np.float64).eps
    m = _operand(x, check_finite)
    u, s, vh = np.linalg.svd(m, full_matrices=False)
    cut = (0.0 if atol is None else atol) + np.max(s, axis=-1, keepdims=True, initial=0.0) * (
        max(m.shape[-2:]) * eps if rtol is None else rtol)
    keep = s > cut
    inverse = np.where(keep, 1.0 / np.where(keep, s, 1.0), 0.0)
    result = _h(vh) @ (inverse[..., :, None] * _h(u))
    return (result, np.sum(keep, axis=-1)) if return_rank else result


def expm(A: Any) -> Any:
    import scipy.linalg

    t = T.as_tracer(A)
    if t.dtype.kind == "c":
        raise _refuse("expm of complex matrices")
    # SciPy's errors (not 2-d, not square) and result dtype, from a stand-in matrix
    stand = np.zeros(t.shape[-2:] if t.ndim >= 2 else t.shape, t.dtype)
    dtype = np.asarray(quietly(scipy.linalg.expm, stand)).dtype
    if t.size == 1 and t.ndim < 2:  # SciPy: np.array([[np.exp(a.item())]])
        return np.reshape(np.exp(t.astype(np.float64)), (1, 1))
    if min(t.shape) == 0:
        return np.zeros(t.shape, dtype)
    if t.shape[-2:] == (1, 1):
        return np.exp(t)
    return lapack_node(t, "expm", t.shape, np.dtype(np.float64), dtype)


def _lu_dtype(x: Any, call: str) -> np.dtype:
    """SciPy's result dtype for lu/lu_factor of x's dtype (float16 -> float32, ints -> float64)
    and its argument errors (from a stand-in identity matrix of x's shape)."""
    import scipy.linalg

    res = quietly(getattr(scipy.linalg, call), _stand_in(x, True))
    return np.asarray(res[0] if call == "lu_factor" else res[-1]).dtype


def _lu_parts(a: Any, call: str, check_finite: bool) -> tuple[Any, Any, Any, np.dtype]:
    """(LU, pivots, row permutation: row i of A is row p[i] of L U) of a's matrices as traced
    arrays, and their dtype."""
    t = T.as_tracer(a)
    if t.dtype.kind == "c":
        raise _refuse(f"{call} of complex matrices")
    dtype = _lu_dtype(t, call)
    if t.ndim < 2:
        raise _refuse(f"{call} of a {t.ndim}-d array")
    m, n = t.shape[-2:]
    k = min(m, n)
    x = _operand(t, check_finite and t.size > 0).astype(dtype)
    r = lapack_node(x, "lu", t.shape[:-2] + (m * n + k + m,), dtype, dtype)
    lu = np.reshape(r[..., :m * n], t.shape)
    return lu, r[..., m * n:m * n + k], r[..., m * n + k:], dtype


def lu_factor(a: Any, overwrite_a: bool = False, check_finite: bool = True) -> Any:
    lu, piv, _, _ = _lu_parts(a, "lu_factor", check_finite)
    # (SciPy's batch decorator returns a list for stacked matrices)
    return [lu, piv.astype(np.int32)] if lu.ndim > 2 else (lu, piv.astype(np.int32))


def lu(a: Any, permute_l: bool = False, overwrite_a: bool = False, check_finite: bool = True,
       p_indices: bool = False) -> Any:
    packed, _, perm, dtype = _lu_parts(a, "lu", check_finite)
    *nd, m, n = packed.shape
    k = min(m, n)
    if min(packed.shape) == 0:  # SciPy's empty case
        low, up = np.zeros((*nd, m, k), dtype), np.zeros((*nd, k, n), dtype)
        if permute_l:
            return low, up
        p = (np.zeros((*nd, 0), np.int32) if p_indices else
             np.zeros((*nd, 0, 0), np.float32 if dtype == np.float32 else np.float64))
        return p, low, up
    if (m, n) == (1, 1):  # SciPy's scalar case: P, L ones, U the matrix
        one = np.ones_like(packed)
        if permute_l:
            return one, packed
        return (np.zeros((*nd, m), np.int_) if p_indices else one), one, packed
    i, j = np.arange(m)[:, None], np.arange(k)[None, :]
    low = np.where(i > j, packed[..., :, :k], np.where(i == j, dtype.type(1), dtype.type(0)))
    up = np.triu(packed[..., :k, :])
    rows = perm.astype(np.int32)  # row i of A is row rows[i] of L U
    if permute_l:  # P L: row i is L's row rows[i] (a gather: -0.0 entries stay as SciPy's)
        return np.take_along_axis(low, rows[..., :, None], axis=-2), up
    p = (rows[..., :, None] == np.arange(m, dtype=np.int32)).astype(dtype)  # A = P L U
    return (rows if p_indices else p), low, up


def lu_solve(lu_and_piv: Any, b: Any, trans: int = 0, overwrite_b: bool = False,
             check_finite: bool = True) -> Any:
    import scipy.linalg

    lu_, piv = lu_and_piv
    tl = lu_ if isinstance(lu_, T.Tracer) else np.asarray(lu_)
    tp = piv if isinstance(piv, T.Tracer) else np.asarray(piv)
    tb = b if isinstance(b, T.Tracer) else np.asarray(b)
    if tl.dtype.kind == "c" or tb.dtype.kind == "c":
        raise _refuse("lu_solve of complex matrices")
    # SciPy's errors (shapes, trans) and result dtype, from stand-ins
    stand = (np.eye(*tl.shape[-2:], dtype=tl.dtype) if tl.ndim >= 2 else
             np.zeros(tl.shape, tl.dtype), np.arange(tp.shape[-1] if tp.ndim else 1,
                                                     dtype=np.int32))
    dtype = np.asarray(quietly(scipy.linalg.lu_solve, stand, np.zeros(tb.shape, tb.dtype),
                               trans=trans)).dtype
    if tl.ndim != 2 or tp.ndim != 1:
        raise _refuse("lu_solve of a batch of factorisations")
    n = tl.shape[0]
    lu_t = _operand(tl, check_finite).astype(dtype)
    packed = np.concatenate([lu_t, np.reshape(tp, (n, 1)).astype(dtype)], axis=1)
    rhs = _operand(tb, check_finite).astype(dtype)
    cols = rhs if rhs.ndim == 2 else np.reshape(rhs, (n, 1))
    x = solve_node(packed, cols, "lu_solve_t" if trans in (1, 2) else "lu_solve", dtype)
    return x if rhs.ndim == 2 else np.reshape(x, (n,))
