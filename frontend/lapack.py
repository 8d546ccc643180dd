"""np.linalg's dense solvers at trace time: solve, inv, cholesky, det, slogdet, eigh, eigvalsh,
lstsq, svd, qr.

Each becomes one `lapack` (or `lapack_solve`) node over operands cast to the dtype NumPy
computes in (float64, float32 operands included: NumPy's linalg always calls the double
LAPACK routines and casts the results back to float32; NumPy's own TypeError for float16 and
others), batched over the leading dims, whose stored result
(frontend/lapack_ref.py) the caller's values are views and elementwise ops of: det is
sign * exp(log|det|) from slogdet, as NumPy computes it; eigh's eigenvalues and vectors are
rows of one array. Shape errors are NumPy's LinAlgError / ValueError with NumPy's messages;
a singular or non-positive-definite matrix is reported by the compiled kernel (errors.Status)
and raised after the call.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ..errors import UnsupportedError
from . import tracer as T
from .ir import Node

try:  # NumPy's result tuples (private module path; plain tuples when it moves)
    from numpy.linalg._linalg import EighResult, QRResult, SlogdetResult, SVDResult
except ImportError:  # pragma: no cover - other NumPy layouts
    EighResult = QRResult = SlogdetResult = SVDResult = None  # type: ignore[assignment,misc]

LinAlgError = np.linalg.LinAlgError


def stacked_square(x: Any) -> T.Tracer:
    """`x` as a Tracer of stacked square matrices, or NumPy's LinAlgError."""
    t = T.as_tracer(x)
    if t.ndim < 2:
        raise LinAlgError(f"{t.ndim}-dimensional array given. Array must be at least "
                          "two-dimensional")
    if t.shape[-1] != t.shape[-2]:
        raise LinAlgError("Last 2 dimensions of the array must be square")
    return t


def _operand(t: T.Tracer, dtype: np.dtype) -> Node:
    """`t`'s node cast to `dtype`, copied first when it is read through a reshape (the
    kernel reads its operands through views only)."""
    node = t.node
    probe = node
    while probe.op in ("view", "reshape"):
        if probe.op == "reshape":
            node = T.make_node("copy", [node], node.shape, node.dtype)
            break
        probe = probe.inputs[0]
    return T.cast_node(node, dtype)


def _dtype1(t: T.Tracer) -> np.dtype:
    """The dtype NumPy computes and returns one-operand linalg results in."""
    return np.linalg.inv(np.eye(1, dtype=t.dtype)).dtype


def _wide(dtype: np.dtype) -> np.dtype:
    """The dtype NumPy's linalg computes a `dtype` result in (its _commonType: double)."""
    return np.dtype(np.float64) if dtype.kind == "f" else dtype


def _scalar(t: T.Tracer) -> T.Tracer:
    return T.Tracer(t.node, scalar=True) if t.ndim == 0 else t


def _lapack(t: T.Tracer, fn: str, shape: tuple[int, ...], uplo: str = "L",
            wide: bool = False) -> T.Tracer:
    """The `fn` node computed in NumPy's dtype (float64), its result cast to NumPy's result
    dtype unless `wide`."""
    dtype = _dtype1(t)
    node = T.make_node("lapack", [_operand(t, _wide(dtype))], shape, _wide(dtype), fn=fn,
                       uplo=uplo)
    return T.Tracer(node if wide else T.cast_node(node, dtype))


def lapack_node(t: T.Tracer, fn: str, shape: tuple[int, ...], wide: np.dtype,
                dtype: np.dtype) -> T.Tracer:
    """The `fn` node of `t` computed in `wide`, its result cast to `dtype` (scipy.linalg's
    functions: frontend/scipy_linalg.py)."""
    node = T.make_node("lapack", [_operand(t, wide)], shape, wide, fn=fn, uplo="L")
    return T.Tracer(T.cast_node(node, dtype))


def solve_node(a: T.Tracer, b: T.Tracer, fn: str, dtype: np.dtype) -> T.Tracer:
    """The `lapack_solve` node `fn` of a (n, n + 1) and b (n, k), in `dtype` (scipy.linalg's
    lu_solve: frontend/scipy_linalg.py)."""
    node = T.make_node("lapack_solve", [_operand(a, dtype), _operand(b, dtype)],
                       (a.shape[0], b.shape[1]), dtype, fn=fn)
    return T.Tracer(node)


def solve(a: Any, b: Any) -> T.Tracer:
    """np.linalg.solve: b of shape (n,) or (..., n, k), batches broadcast."""
    ta, tb = stacked_square(a), T.as_tracer(b)
    dtype = np.linalg.solve(np.eye(1, dtype=ta.dtype), np.ones((1, 1), tb.dtype)).dtype
    n = ta.shape[-1]
    vector = tb.ndim == 1
    name, sig = ("solve1", "(m,m),(m)->(m)") if vector else ("solve", "(m,m),(m,n)->(m,n)")
    if tb.ndim == 0:
        raise ValueError(f"{name}: Input operand 1 does not have enough dimensions (has 0, "
                         f"gufunc core with signature {sig} requires 2)")
    m = tb.shape[0] if vector else tb.shape[-2]
    if m != n:
        raise ValueError(f"{name}: Input operand 1 has a mismatch in its core dimension 0, "
                         f"with gufunc signature {sig} (size {m} is different from {n})")
    if vector:
        tb = tb[:, None]
        batch = ta.shape[:-2]
    else:
        try:
            batch = np.broadcast_shapes(ta.shape[:-2], tb.shape[:-2])
        except ValueError:
            raise ValueError(f"operands could not be broadcast together with remapped shapes "
                             f"[original->remapped]: {ta.shape}->{ta.shape[:-2]} "
                             f"{tb.shape}->{tb.shape[:-2]}") from None
    k = tb.shape[-1]
    ta = np.broadcast_to(ta, batch + (n, n))
    tb = np.broadcast_to(tb, batch + (n, k))
    node = T.make_node("lapack_solve", [_operand(ta, _wide(dtype)), _operand(tb, _wide(dtype))],
                       batch + (n, k), _wide(dtype), fn="solve")
    x = T.Tracer(T.cast_node(node, dtype))
    return x[..., 0] if vector else x


def inv(a: Any) -> T.Tracer:
    """np.linalg.inv."""
    t = stacked_square(a)
    return _lapack(t, "inv", t.shape)


def cholesky(a: Any, /, *, upper: bool = False) -> T.Tracer:
    """np.linalg.cholesky: the lower factor; with upper=True the upper factor of the upper
    triangle (the one NumPy reads then), i.e. the lower factor of a^T, transposed."""
    t = stacked_square(a)
    if not upper:
        return _lapack(t, "cholesky", t.shape)
    return np.swapaxes(_lapack(np.swapaxes(t, -1, -2), "cholesky", t.shape), -1, -2)


def slogdet(a: Any) -> Any:
    """np.linalg.slogdet: (sign, log|det|)."""
    t = stacked_square(a)
    r = _lapack(t, "slogdet", t.shape[:-2] + (2,))
    sign, logdet = _scalar(r[..., 0]), _scalar(r[..., 1])
    return SlogdetResult(sign, logdet) if SlogdetResult is not None else (sign, logdet)


def det(a: Any) -> T.Tracer:
    """np.linalg.det as NumPy computes it: sign * exp(log|det|) in float64, then cast."""
    t = stacked_square(a)
    r = _lapack(t, "slogdet", t.shape[:-2] + (2,), wide=True)
    d = np.multiply(r[..., 0], np.exp(r[..., 1]))
    return _scalar(T.Tracer(T.cast_node(d.node, _dtype1(t))))


def _uplo(UPLO: Any) -> str:
    u = str(UPLO).upper()
    if u not in ("L", "U"):
        raise ValueError("UPLO argument must be 'L' or 'U'")
    return u


def eigh(a: Any, UPLO: str = "L") -> Any:
    """np.linalg.eigh: eigenvalues (ascending) and eigenvectors (columns)."""
    uplo = _uplo(UPLO)
    t = stacked_square(a)
    n = t.shape[-1]
    r = _lapack(t, "eigh", t.shape[:-2] + (n + 1, n), uplo)
    w, v = r[..., 0, :], r[..., 1:, :]
    return EighResult(w, v) if EighResult is not None else (w, v)


def eigvalsh(a: Any, UPLO: str = "L") -> T.Tracer:
    """np.linalg.eigvalsh: the eigenvalues, ascending."""
    uplo = _uplo(UPLO)
    t = stacked_square(a)
    return _lapack(t, "eigvalsh", t.shape[:-1], uplo)


def _least_squares_operands(a: Any, b: Any) -> tuple[T.Tracer, T.Tracer, bool]:
    """a and b (b as columns) after NumPy's shape checks, and whether b was 1-D."""
    ta, tb = T.as_tracer(a), T.as_tracer(b)
    vector = tb.ndim == 1
    if vector:
        tb = tb[:, None]
    for t in (ta, tb):
        if t.ndim != 2:
            raise LinAlgError(f"{t.ndim}-dimensional array given. Array must be "
                              "two-dimensional")
    if ta.shape[0] != tb.shape[0]:
        raise LinAlgError("Incompatible dimensions")
    return ta, tb, vector


def lstsq(a: Any, b: Any, rcond: Any = None) -> tuple:
    """np.linalg.lstsq through LAPACK's dgelsd (zgelsd), in float64 (complex128) as NumPy
    computes it (results cast to NumPy's result dtype). The residuals' shape NumPy decides
    from the computed rank: it is (K,) here whenever M > N (full rank), (0,) otherwise; a
    rank-deficient M > N system whose residuals the program uses raises LinAlgError when it
    runs (check_lstsq_rank)."""
    ta, tb, vector = _least_squares_operands(a, b)
    if isinstance(rcond, T.Tracer):
        raise UnsupportedError("np.linalg.lstsq: rcond must be a constant (a Python or NumPy "
                               "number), not a traced value")
    probe = np.linalg.lstsq(np.ones((1, 1), ta.dtype), np.ones(1, tb.dtype), rcond=None)
    dtype, real = probe[0].dtype, probe[3].dtype  # NumPy's TypeError for float16 and others
    (m, n), k = ta.shape, tb.shape[1]
    p = min(m, n)
    rc = float(np.finfo(np.float64).eps * max(m, n) if rcond is None else rcond)
    wide = np.dtype(np.complex128 if dtype.kind == "c" else np.float64)  # zgelsd / dgelsd
    node = T.make_node("lapack_solve", [_operand(ta, wide), _operand(tb, wide)],
                       (n * k + k + p + 1,), wide, fn="lstsq", rcond=rc)
    r = T.Tracer(node)
    x = r[:n * k].reshape(n, k).astype(dtype)
    if vector:
        x = x[:, 0]
    parts = np.real(r[n * k:])  # residuals, singular values and rank: real
    rank = T.Tracer(parts[k + p].astype(np.int32).node, scalar=True)
    s = parts[k:k + p].astype(real)
    if m > n:
        bad = T.Tracer(T.make_node("check_lstsq_rank", [np.not_equal(rank, n).node], (),
                                   np.dtype(bool)))
        resid = np.where(bad, 0.0, parts[:k]).astype(real)
    else:
        resid = T.Tracer(T.const_node(np.zeros(0, real)))
    return x, resid, rank, s


def svd(a: Any, full_matrices: Any = True, compute_uv: Any = True,
        hermitian: Any = False) -> Any:
    """np.linalg.svd through LAPACK's dgesdd, in float64 as NumPy computes it (results cast
    to NumPy's result dtype): U, S, Vh as views of one stored array (frontend/lapack_ref.py),
    or S alone. An empty matrix's results are NumPy's constants."""
    t = T.as_tracer(a)
    for name, flag in (("full_matrices", full_matrices), ("compute_uv", compute_uv),
                       ("hermitian", hermitian)):
        if isinstance(flag, T.Tracer):
            raise UnsupportedError(f"np.linalg.svd: {name} must be a constant, not a traced "
                                   "value")
    if t.ndim < 2:
        raise LinAlgError(f"{t.ndim}-dimensional array given. Array must be at least "
                          "two-dimensional")
    dtype = np.linalg.svd(np.eye(1, dtype=t.dtype), compute_uv=False).dtype  # NumPy's errors
    if t.dtype.kind == "c":
        raise UnsupportedError("np.linalg.svd of complex matrices is not supported by fusejit "
                               "yet; compute it outside the compiled function")
    if hermitian:
        return _svd_hermitian(t, bool(compute_uv))
    if t.size == 0:  # NumPy's results do not depend on the (absent) values
        r = np.linalg.svd(np.zeros(t.shape, dtype), bool(full_matrices), bool(compute_uv))
        consts = [T.Tracer(T.const_node(np.asarray(x))) for x in (r if compute_uv else [r])]
        return SVDResult(*consts) if compute_uv and SVDResult is not None else (
            tuple(consts) if compute_uv else consts[0])
    batch, (m, n) = t.shape[:-2], t.shape[-2:]
    p = min(m, n)
    if not compute_uv:
        fn, mu, nv = "svdvals", 0, 0
    else:
        fn, mu, nv = ("svd_full", m, n) if full_matrices else ("svd", p, p)
    size = m * mu + p + nv * n
    node = T.make_node("lapack", [_operand(t, np.dtype(np.float64))], batch + (size,),
                       np.dtype(np.float64), fn=fn, uplo="L")
    r = T.Tracer(T.cast_node(node, dtype))
    if not compute_uv:
        return r
    u = r[..., :m * mu].reshape(batch + (m, mu))
    s = r[..., m * mu:m * mu + p]
    vh = r[..., m * mu + p:].reshape(batch + (nv, n))
    return SVDResult(u, s, vh) if SVDResult is not None else (u, s, vh)


def _svd_hermitian(t: T.Tracer, compute_uv: bool) -> Any:
    """np.linalg.svd(hermitian=True) as NumPy computes it: from eigh, the singular values the
    eigenvalues' magnitudes in descending order, their signs moved into Vh."""
    if not compute_uv:
        return np.sort(np.abs(eigvalsh(t)), axis=-1)[..., ::-1]
    s, u = eigh(t)
    sgn = np.copysign(1.0, s)
    s = np.abs(s)
    sidx = np.argsort(s, axis=-1)[..., ::-1]
    sgn = np.take_along_axis(sgn, sidx, axis=-1)
    s = np.take_along_axis(s, sidx, axis=-1)
    u = np.take_along_axis(u, sidx[..., None, :], axis=-1)
    vt = np.swapaxes(u * sgn[..., None, :], -1, -2)
    return SVDResult(u, s, vt) if SVDResult is not None else (u, s, vt)


def qr(a: Any, mode: Any = "reduced") -> Any:
    """np.linalg.qr through LAPACK's dgeqrf and dorgqr, in float64 as NumPy computes it
    (results cast to NumPy's result dtype): modes 'reduced', 'complete' and 'r'."""
    if mode not in ("reduced", "complete", "r", "raw"):
        raise ValueError(f"Unrecognized mode '{mode}'")
    t = T.as_tracer(a)
    if t.ndim < 2:
        raise LinAlgError(f"{t.ndim}-dimensional array given. Array must be at least "
                          "two-dimensional")
    dtype = np.linalg.qr(np.eye(1, dtype=t.dtype), mode="r").dtype  # NumPy's errors
    if t.dtype.kind == "c" or mode == "raw":
        what = "of complex matrices" if t.dtype.kind == "c" else "with mode='raw'"
        raise UnsupportedError(f"np.linalg.qr {what} is not supported by fusejit yet; "
                               "compute it outside the compiled function")
    if t.size == 0:  # NumPy's results do not depend on the (absent) values
        r = np.linalg.qr(np.zeros(t.shape, dtype), mode=mode)
        consts = [T.Tracer(T.const_node(np.asarray(x))) for x in (r if mode != "r" else [r])]
        if mode == "r":
            return consts[0]
        return QRResult(*consts) if QRResult is not None else tuple(consts)
    batch, (m, n) = t.shape[:-2], t.shape[-2:]
    p = min(m, n)
    fn, mc = {"reduced": ("qr", p), "complete": ("qr_complete", m if m > n else p),
              "r": ("qr_r", 0)}[mode]
    rows = mc or p
    node = T.make_node("lapack", [_operand(t, np.dtype(np.float64))],
                       batch + (m * mc + rows * n,), np.dtype(np.float64), fn=fn, uplo="L")
    res = T.Tracer(T.cast_node(node, dtype))
    rr = res[..., m * mc:].reshape(batch + (rows, n))
    if mode == "r":
        return rr
    q = res[..., :m * mc].reshape(batch + (m, mc))
    return QRResult(q, rr) if QRResult is not None else (q, rr)


def pinv(a: Any, rcond: Any = None, hermitian: Any = False, *, rtol: Any = np._NoValue) -> Any:
    """np.linalg.pinv as NumPy computes it: Vh^T diag(1/s where s > rcond * max(s), else 0)
    U^T from the reduced SVD (the cutoff may be a traced value)."""
    t = T.as_tracer(a)
    if rcond is None:
        if rtol is np._NoValue:
            rcond = 1e-15
        elif rtol is None:
            rcond = max(t.shape[-2:]) * np.finfo(t.dtype).eps
        else:
            rcond = rtol
    elif rtol is not np._NoValue:
        raise ValueError("`rtol` and `rcond` can't be both set.")
    if isinstance(hermitian, T.Tracer) or hermitian:
        raise UnsupportedError("np.linalg.pinv(..., hermitian=True) is not supported by "
                               "fusejit yet; compute it outside the compiled function")
    if t.ndim >= 2 and t.size == 0 and t.shape[-1] * t.shape[-2] == 0:
        return T.Tracer(T.const_node(np.empty(t.shape[:-2] + t.shape[:-3:-1], t.dtype)))
    u, s, vt = svd(t, full_matrices=False)
    cutoff = np.multiply(np.asarray(rcond)[..., None], s.max(axis=-1, keepdims=True))
    sinv = np.where(s > cutoff, np.divide(1, s), 0).astype(s.dtype)
    return np.matmul(np.swapaxes(vt, -1, -2), np.multiply(sinv[..., None],
                                                          np.swapaxes(u, -1, -2)))


HANDLERS = {np.linalg.svd: svd, np.linalg.qr: qr, np.linalg.pinv: pinv,
            np.linalg.solve: solve, np.linalg.inv: inv, np.linalg.cholesky: cholesky,
            np.linalg.slogdet: slogdet, np.linalg.det: det, np.linalg.eigh: eigh,
            np.linalg.eigvalsh: eigvalsh, np.linalg.lstsq: lstsq}
