"""NumPy functions whose implementation is C (or Python that cannot run on tracers), written
here from traced operations: np.correlate/np.convolve, np.inner, np.kron, np.vander,
np.count_nonzero, np.nanvar/np.nanstd, np.searchsorted with constant sorted values (so
np.digitize traces through NumPy's code), np.broadcast_arrays, np.diagonal, np.choose,
np.nanargmax/nanargmin (both with NumPy's ValueError, raised when the program runs: the
op table's check_* ops); `x.real`, `x.imag`, `x.conj()`, `x.diagonal()` on tracers.

Each handler asks NumPy for dtypes and errors (by calling it on small stand-ins of the same
dtypes and ranks) and builds what NumPy computes from ufuncs, views, gathers by constant
indices and reductions, so the result fuses into its consumers.
"""

from __future__ import annotations

import operator
from collections.abc import Callable
from typing import Any

import numpy as np
from numpy.lib.array_utils import normalize_axis_index

from . import tracer as T
from .views import broadcast_to

_MODES = {"v": "valid", "valid": "valid", "s": "same", "same": "same", "f": "full",
          "full": "full", 0: "valid", 1: "same", 2: "full"}


def _tracer(x: Any) -> T.Tracer:
    if isinstance(x, T.Tracer):
        return T.Tracer(x.node) if x.weak is not None else x
    return T.Tracer(T.const_node(np.asarray(x)))


def _stand_in(t: T.Tracer) -> np.ndarray:
    """Zeros of t's dtype and rank, each axis of length min(n, 1): NumPy's checks see what
    they would see on t (emptiness, rank, dtype) without the cost."""
    return np.zeros([min(n, 1) for n in t.shape], t.dtype)


# --- correlate / convolve -----------------------------------------------------------------

def _correlate_full(a: T.Tracer, v: T.Tracer, dtype: np.dtype) -> T.Tracer:
    """full[k] = sum_j a[k + j - (m - 1)] * v[j] (zero outside a): one gather of `a` by a
    constant (n + m - 1, m) index table, a constant mask, a product and a row sum."""
    n, m = a.shape[0], v.shape[0]
    k = np.arange(n + m - 1)[:, None]
    j = np.arange(m)[None, :]
    idx = k + j - (m - 1)
    inside = (idx >= 0) & (idx < n)
    picked = a.astype(dtype, copy=False)[np.clip(idx, 0, n - 1)]
    zero = np.zeros((), dtype)
    terms = np.where(inside, np.multiply(picked, v.astype(dtype, copy=False)), zero)
    return np.sum(terms, axis=1, dtype=dtype)


def _correlate(a: Any, v: Any, mode: Any, convolve: bool) -> T.Tracer:
    ta, tv = _tracer(a), _tracer(v)
    reference = np.convolve if convolve else np.correlate
    dtype = reference(_stand_in(ta), _stand_in(tv), mode).dtype  # NumPy's errors, dtype
    n, m = ta.shape[0], tv.shape[0]
    if convolve:
        full = _correlate_full(ta, tv[::-1], dtype)
        offset = (min(n, m) - 1) // 2
    else:
        full = _correlate_full(ta, tv, dtype)
        offset = n // 2 if m > n else (m - 1) // 2
    which = _MODES[mode]
    if which == "full":
        return full
    if which == "same":
        return full[offset:offset + max(n, m)]
    return full[min(n, m) - 1:max(n, m)]


def correlate(a: Any, v: Any, mode: Any = "valid") -> T.Tracer:
    return _correlate(a, v, mode, convolve=False)


def convolve(a: Any, v: Any, mode: Any = "full") -> T.Tracer:
    return _correlate(a, v, mode, convolve=True)


# --- products -------------------------------------------------------------------------------

def inner(a: Any, b: Any, /) -> Any:
    """np.inner: the product over the last axes (a multiply when either is 0-d)."""
    ta, tb = _tracer(a), _tracer(b)
    if ta.ndim == 0 or tb.ndim == 0:
        return np.multiply(ta, tb)
    if ta.shape[-1] != tb.shape[-1]:
        raise ValueError(f"shapes {ta.shape} and {tb.shape} not aligned: {ta.shape[-1]} (dim "
                         f"{ta.ndim - 1}) != {tb.shape[-1]} (dim {tb.ndim - 1})")
    out = np.tensordot(ta, tb, axes=(-1, -1))
    out.scalar = out.shape == ()  # inner of two vectors is a NumPy scalar
    return out


def kron(a: Any, b: Any) -> T.Tracer:
    """np.kron: a and b interleaved by expand_dims, multiplied, reshaped (NumPy's method)."""
    tb = _tracer(b)
    ta = _tracer(a)
    if ta.ndim < tb.ndim:
        ta = ta.reshape((1,) * (tb.ndim - ta.ndim) + ta.shape)
    nda, ndb = ta.ndim, tb.ndim
    if nda == 0 or ndb == 0:
        return np.multiply(ta, tb)
    nd = max(nda, ndb)
    a_arr = np.expand_dims(ta, tuple(range(ndb - nda)))
    b_arr = np.expand_dims(tb, tuple(range(nda - ndb)))
    a_arr = np.expand_dims(a_arr, tuple(range(1, nd * 2, 2)))
    b_arr = np.expand_dims(b_arr, tuple(range(0, nd * 2, 2)))
    shape = tuple(int(x) * int(y) for x, y in zip((1,) * (nd - nda) + ta.shape,
                                                  (1,) * (nd - ndb) + tb.shape))
    return np.multiply(a_arr, b_arr).reshape(shape)


def vander(x: Any, N: Any = None, increasing: bool = False) -> T.Tracer:  # noqa: N803
    """np.vander: columns 1, x, x*x, ... by repeated products (NumPy's multiply.accumulate)."""
    t = _tracer(x)
    if t.ndim != 1:
        raise ValueError("x must be a one-dimensional array or sequence.")
    n = t.shape[0] if N is None else operator.index(N)
    if n < 0:
        raise ValueError("negative dimensions are not allowed")
    dtype = np.promote_types(t.dtype, int)
    if n == 0:
        return T.Tracer(T.const_node(np.zeros((t.shape[0], 0), dtype)))
    xs = t.astype(dtype, copy=False)
    cols = [np.ones_like(xs)]
    for _ in range(1, n):
        cols.append(xs if len(cols) == 1 else np.multiply(cols[-1], xs))
    out = np.stack(cols if increasing else cols[::-1], axis=1)
    return out


# --- counting and nan-statistics -----------------------------------------------------------

def count_nonzero(a: Any, axis: Any = None, *, keepdims: bool = False) -> Any:
    t = _tracer(a)
    nz = t if t.dtype == np.bool_ else t.astype(np.bool_)
    return np.sum(nz, axis=axis, dtype=np.intp, keepdims=keepdims)


def nanvar(a: Any, axis: Any = None, dtype: Any = None, out: Any = None, ddof: Any = 0,
           keepdims: Any = np._NoValue, *, where: Any = np._NoValue, mean: Any = np._NoValue,
           correction: Any = np._NoValue) -> Any:
    """numpy.nanvar: NaNs replaced by 0 and left out of the count; NaN where count <= ddof
    (complex values: their squared moduli)."""
    if out is not None or where is not np._NoValue or mean is not np._NoValue:
        raise T.UnsupportedError(f"np.nanvar/nanstd(out=/where=/mean=) is not supported by "
                                 f"fusejit{T.where_msg()}")
    if correction is not np._NoValue:
        if ddof != 0:
            raise ValueError("ddof and correction can't be provided simultaneously.")
        ddof = correction
    keep = bool(keepdims) if keepdims is not np._NoValue else False
    t = _tracer(a)
    if t.dtype.kind not in "fc":
        return np.var(t, axis=axis, dtype=dtype, ddof=ddof, keepdims=keep)
    if dtype is not None:
        dtype = np.dtype(dtype)
        if dtype.kind not in "fc":
            raise TypeError("If a is inexact, then dtype must be inexact")
    mask = np.isnan(t)
    arr = np.where(mask, t.dtype.type(0), t)
    cnt = np.sum(np.logical_not(mask), axis=axis, dtype=np.intp, keepdims=True)
    avg = np.sum(arr, axis=axis, dtype=dtype, keepdims=True)
    avg = np.divide(avg, cnt).astype(avg.dtype, copy=False)
    dev = np.subtract(arr, avg).astype(arr.dtype, copy=False)
    dev = np.where(mask, t.dtype.type(0), dev)
    if t.dtype.kind == "c":  # (|dev|^2, NumPy's x * conj(x) real part)
        var = np.sum(np.real(np.multiply(dev, np.conjugate(dev))), axis=axis, keepdims=keep)
    else:
        var = np.sum(np.multiply(dev, dev), axis=axis, dtype=dtype, keepdims=keep)
    count = np.sum(np.logical_not(mask), axis=axis, dtype=np.intp, keepdims=keep)
    dof = np.subtract(count, ddof)
    res = np.divide(var, dof).astype(var.dtype, copy=False)
    res = np.where(np.less_equal(dof, 0), var.dtype.type(np.nan), res)
    if res.shape == ():
        res.scalar = True
    return res


def nanstd(a: Any, axis: Any = None, dtype: Any = None, out: Any = None, ddof: Any = 0,
           keepdims: Any = np._NoValue, *, where: Any = np._NoValue, mean: Any = np._NoValue,
           correction: Any = np._NoValue) -> Any:
    var = nanvar(a, axis, dtype, out, ddof, keepdims, where=where, mean=mean,
                 correction=correction)
    res = np.sqrt(var)
    if isinstance(var, T.Tracer) and var.dtype != res.dtype:
        res = res.astype(var.dtype)
    return res


# --- searching ------------------------------------------------------------------------------

def sorted_constant(a: Any, v: Any, side: str, sorter: Any) -> np.ndarray:
    """The constant table of np.searchsorted(a, v, side, sorter) read through its sorter,
    after NumPy's own argument errors; UnsupportedError when it is not sorted (NumPy's
    result then depends on its binary search)."""
    arr = np.asarray(a)
    tv = _tracer(v)
    np.searchsorted(arr, np.zeros(tv.shape and (0,), tv.dtype), side=side,
                    sorter=sorter)  # NumPy's own errors (side, ranks, sorter)
    if sorter is not None:
        arr = arr[np.asarray(sorter)]
    with np.errstate(invalid="ignore"):
        nan = np.isnan(arr) if arr.dtype.kind == "f" else np.zeros(arr.shape, bool)
        body = arr[~nan]
        if np.any(body[:-1] > body[1:]) or (nan.any() and not nan[np.argmax(nan):].all()):
            raise T.UnsupportedError(
                f"np.searchsorted with unsorted constant values is not supported by fusejit"
                f"{T.where_msg()}: NumPy's result then depends on its binary search")
    return arr


def searchsorted(a: Any, v: Any, side: str = "left", sorter: Any = None) -> Any:
    """np.searchsorted into constant sorted values `a`: the count of a's values before each
    v (NaN sorts last, as in NumPy), one comparison per value of `a`, summed."""
    if isinstance(a, T.Tracer) or isinstance(sorter, T.Tracer):
        raise T.UnsupportedError(
            f"np.searchsorted into a traced array is not supported here{T.where_msg()}")
    arr = sorted_constant(a, v, side, sorter)
    tv = _tracer(v)
    nan = np.isnan(arr) if arr.dtype.kind == "f" else np.zeros(arr.shape, bool)
    col = tv[..., None]
    const = T.Tracer(T.const_node(arr))
    if side == "left" or str(side).lower().startswith("l"):
        before = np.less(const, col)
        if tv.dtype.kind == "f":
            before = np.logical_or(before, np.logical_and(np.isnan(col), ~nan))
    else:
        before = np.less_equal(const, col)
        if tv.dtype.kind == "f":
            before = np.logical_or(before, np.isnan(col))
    return np.sum(before, axis=-1, dtype=np.intp)


def _nanarg(fn: str, a: Any, axis: Any, out: Any, keepdims: Any) -> Any:
    """numpy.nanargmax/nanargmin: NaN replaced by -inf/+inf, then argmax/argmin; an all-NaN
    slice raises NumPy's ValueError when the program runs."""
    if out is not None:
        raise T.UnsupportedError(f"np.nan{fn}(..., out=) is not supported by fusejit"
                                 f"{T.where_msg()}: assign the result instead")
    keep = False if keepdims is np._NoValue else bool(keepdims)
    t = _tracer(a)
    arg = np.argmax if fn == "argmax" else np.argmin
    if t.dtype.kind not in "fc":
        return arg(t, axis=axis, keepdims=keep)
    nan = np.isnan(t)  # complex: a NaN in either part becomes -inf+0j / inf+0j, as in NumPy
    fill = t.dtype.type(-np.inf if fn == "argmax" else np.inf)
    res = arg(np.where(nan, fill, t), axis=axis, keepdims=keep)
    if t.size == 0:
        return res
    flag = _check("check_all_nan", np.all(nan, axis=axis, keepdims=keep))
    out_t = np.where(flag, np.zeros((), res.dtype), res)
    out_t.scalar = out_t.shape == ()
    return out_t


def nanargmax(a: Any, axis: Any = None, out: Any = None, *, keepdims: Any = np._NoValue) -> Any:
    return _nanarg("argmax", a, axis, out, keepdims)


def nanargmin(a: Any, axis: Any = None, out: Any = None, *, keepdims: Any = np._NoValue) -> Any:
    return _nanarg("argmin", a, axis, out, keepdims)


# --- shapes ---------------------------------------------------------------------------------

def broadcast_arrays(*args: Any, subok: bool = False) -> tuple:
    ts = [_tracer(a) for a in args]
    shape = T.broadcast(*(t.shape for t in ts))
    return tuple(t if t.shape == shape else broadcast_to(t, shape) for t in ts)


def diagonal(a: Any, offset: int = 0, axis1: int = 0, axis2: int = 1) -> T.Tracer:
    """np.diagonal: a gather by constant row and column indices (its last axis the
    diagonal, as in NumPy)."""
    t = _tracer(a)
    if t.ndim < 2:
        raise ValueError("diag requires an array of at least two dimensions")
    a1 = normalize_axis_index(axis1, t.ndim)
    a2 = normalize_axis_index(axis2, t.ndim)
    if a1 == a2:
        raise ValueError("axis1 and axis2 cannot be the same")
    offset = operator.index(offset)
    rest = [d for d in range(t.ndim) if d not in (a1, a2)]
    moved = np.transpose(t, rest + [a1, a2])
    n1, n2 = t.shape[a1], t.shape[a2]
    length = max(0, min(n1 + min(offset, 0), n2 - max(offset, 0)))
    rows = np.arange(length) - min(offset, 0)
    cols = np.arange(length) + max(offset, 0)
    return moved[(Ellipsis, rows, cols)]


def diag(v: Any, k: int = 0) -> T.Tracer:
    """np.diag: the k-th diagonal of a 2-D array, or a 2-D array with a 1-D one on it (a
    gather of v by a constant index table, zero off the diagonal)."""
    t = _tracer(v)
    k = operator.index(k)
    if t.ndim == 2:
        return diagonal(t, k)
    if t.ndim != 1:
        raise ValueError("Input must be 1- or 2-d.")
    n = t.shape[0]
    m = n + abs(k)
    i, j = np.indices((m, m))
    on = (j - i) == k
    idx = np.clip(i if k >= 0 else j, 0, max(n - 1, 0))
    if n == 0:
        return T.Tracer(T.const_node(np.zeros((m, m), t.dtype)))
    return np.where(on, t[idx], np.zeros((), t.dtype))


def _check(op: str, flag: T.Tracer) -> T.Tracer:
    """`flag` through a check_* op: the program raises that op's error where it is true."""
    return T.Tracer(T.make_node(op, [flag.node], flag.shape, np.dtype(bool)))


def trace(a: Any, offset: int = 0, axis1: int = 0, axis2: int = 1, dtype: Any = None,
          out: Any = None) -> Any:
    """np.trace: the sum of np.diagonal along its last axis (NumPy's sum dtypes)."""
    if out is not None:
        raise T.UnsupportedError(f"np.trace(..., out=) is not supported by fusejit"
                                 f"{T.where_msg()}: assign the result instead")
    return np.sum(diagonal(a, offset, axis1, axis2), axis=-1, dtype=dtype)


def vdot(a: Any, b: Any, /) -> Any:
    """np.vdot: the dot product of the flattened arrays, the first conjugated (a NumPy
    scalar)."""
    ta, tb = _tracer(a), _tracer(b)
    if ta.dtype.kind == "c":
        ta = np.conjugate(ta)
    if ta.size != tb.size:  # NumPy's error
        raise ValueError(f"cannot reshape array of size {tb.size} into shape ({ta.size},)")
    out = np.dot(ta.reshape(-1), tb.reshape(-1))
    out.scalar = True
    return out


def choose(a: Any, choices: Any, out: Any = None, mode: str = "raise") -> Any:
    """np.choose: nested selects; mode 'raise' checks the indices when the program runs."""
    if out is not None:
        raise T.UnsupportedError(f"np.choose(..., out=) is not supported by fusejit"
                                 f"{T.where_msg()}: assign the result instead")
    if mode not in ("wrap", "clip", "raise"):
        raise ValueError(f"clipmode must be one of 'clip', 'raise', or 'wrap' (got '{mode}')")
    index = _tracer(a)
    options = [_tracer(c) for c in choices]
    if not options:
        raise ValueError("0-length sequence.")
    dtype = np.result_type(*(np.empty(0, c.dtype) for c in options))
    if index.dtype.kind not in "biu":
        np.choose(np.zeros(1, index.dtype), [np.zeros(1, dtype)])  # NumPy's TypeError
    shape = T.broadcast(index.shape, *(c.shape for c in options))
    n = len(options)
    k = index.astype(np.int64)
    if mode == "raise":
        bad = _check("check_choice", np.logical_or(np.less(k, 0), np.greater_equal(k, n)))
        k = np.where(bad, 0, k)
    else:
        k = np.mod(k, n) if mode == "wrap" else np.clip(k, 0, n - 1)
    result = broadcast_to(options[-1].astype(dtype, copy=False), shape)
    for j in range(n - 2, -1, -1):
        result = np.where(np.equal(k, j), options[j].astype(dtype, copy=False), result)
    return T.Tracer(T.make_node("copy", [result.node], shape, dtype), scalar=shape == ())


HANDLERS: dict[Callable[..., Any], Callable[..., Any]] = {
    np.correlate: correlate, np.convolve: convolve, np.inner: inner, np.kron: kron,
    np.vander: vander, np.count_nonzero: count_nonzero, np.nanvar: nanvar, np.nanstd: nanstd,
    np.broadcast_arrays: broadcast_arrays,
    np.diagonal: diagonal, np.diag: diag, np.choose: choose, np.nanargmax: nanargmax,
    np.nanargmin: nanargmin, np.trace: trace, np.vdot: vdot,
}
