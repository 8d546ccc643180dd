"""NumPy functions composed from operations fusejit already traces: `np.linalg.norm` (the
norms NumPy computes without an SVD), `np.isclose` (and a clear refusal of `np.allclose`),
`np.average`, `np.outer` (and `ufunc.outer`), `np.diff`, `np.triu` and `np.tril`.

Each handler follows NumPy's own implementation step by step (numpy/linalg/_linalg.py,
numpy/_core/numeric.py, numpy/lib/_function_base_impl.py, numpy/lib/_twodim_base_impl.py) with
ufuncs, views, reductions, `np.where` and `np.concatenate`, so the graph is the one the user
would have traced by writing the same code out: it fuses the same way, and its dtypes, shapes
and errors are NumPy's. Static arguments (`ord`, `axis`, `n`, `k`, constant weights) are
evaluated at trace time, as NumPy evaluates them before touching the data.
"""

from __future__ import annotations

import operator
import warnings
from collections.abc import Callable
from typing import Any

import numpy as np
from numpy.lib.array_utils import normalize_axis_index, normalize_axis_tuple

from . import tracer as T
from . import views as V

_INEXACT = "fc"


def _array(x: Any) -> T.Tracer:
    """`np.asarray(x)` as a tracer: a Python-scalar argument becomes a strong 0-d array."""
    if isinstance(x, T.Tracer):
        return T.Tracer(x.node) if x.weak is not None else x
    return T.Tracer(T.const_node(np.asarray(x)))


def _scalar_if_0d(t: Any) -> Any:
    """NumPy returns a NumPy scalar where a reduction or `result[()]` leaves 0-d."""
    if isinstance(t, T.Tracer) and t.shape == ():
        t.scalar = True
    return t


# --- np.linalg.norm ---------------------------------------------------------------------------

def norm(x: Any, ord: Any = None, axis: Any = None, keepdims: bool = False) -> Any:
    """numpy.linalg.norm (vector norms, and matrix norms without an SVD)."""
    t = _array(x)
    if t.dtype.kind not in _INEXACT:
        t = t.astype(np.float64)
    nd = t.ndim
    if axis is None and (ord is None or (ord in ("f", "fro") and nd == 2)
                         or (ord == 2 and nd == 1)):
        flat = t.reshape(-1)
        if flat.dtype.kind == "c":  # NumPy: x.real.dot(x.real) + x.imag.dot(x.imag)
            sq = np.add(np.sum(np.multiply(flat.real, flat.real)),
                        np.sum(np.multiply(flat.imag, flat.imag)))
        else:
            sq = np.sum(np.multiply(flat, flat))
        ret = _scalar_if_0d(np.sqrt(sq))
        return ret.reshape(nd * [1]) if keepdims and nd else ret
    if axis is None:
        axis = tuple(range(nd))
    elif not isinstance(axis, tuple):
        try:
            axis = (int(axis),)
        except TypeError as e:
            raise TypeError("'axis' must be None, an integer or a tuple of integers") from e
    if len(axis) == 1:
        return _scalar_if_0d(_vector_norm(t, ord, axis, keepdims))
    if len(axis) != 2:
        raise ValueError("Improper number of dimensions to norm.")
    ret = _matrix_norm(t, ord, axis)
    if keepdims:
        shape = list(t.shape)
        shape[axis[0]] = 1
        shape[axis[1]] = 1
        return ret.reshape(shape)
    return _scalar_if_0d(ret)


def _abs2(t: T.Tracer) -> Any:
    """|t|^2 as NumPy's norm computes it: t * t, or (t.conj() * t).real for complex t."""
    return np.multiply(t.conj(), t).real if t.dtype.kind == "c" else np.multiply(t, t)


def _vector_norm(t: T.Tracer, ord: Any, axis: tuple, keepdims: bool) -> Any:
    if ord == np.inf:
        return np.abs(t).max(axis=axis, keepdims=keepdims, initial=0)
    if ord == -np.inf:
        return np.abs(t).min(axis=axis, keepdims=keepdims)
    if ord == 0:
        return np.not_equal(t, 0).astype(t.real.dtype).sum(axis=axis, keepdims=keepdims)
    if ord == 1:
        return np.add.reduce(np.abs(t), axis=axis, keepdims=keepdims)
    if ord is None or ord == 2:
        return np.sqrt(np.add.reduce(_abs2(t), axis=axis, keepdims=keepdims))
    if isinstance(ord, str):
        raise ValueError(f"Invalid norm order '{ord}' for vectors")
    absx = np.abs(t)
    absx = np.power(absx, ord).astype(absx.dtype)  # `absx **= ord` keeps absx's dtype
    ret = np.add.reduce(absx, axis=axis, keepdims=keepdims)
    return np.power(ret, np.reciprocal(ord, dtype=ret.dtype))


def _matrix_norm(t: T.Tracer, ord: Any, axis: tuple) -> Any:
    nd = t.ndim
    row_axis = normalize_axis_index(axis[0], nd)
    col_axis = normalize_axis_index(axis[1], nd)
    if row_axis == col_axis:
        raise ValueError("Duplicate axes given.")
    if (not isinstance(ord, str) and ord in (2, -2)) or ord == "nuc":
        # NumPy's _multi_svd_norm: the largest, smallest or summed singular values
        y = np.moveaxis(t, (row_axis, col_axis), (-2, -1))
        s = np.linalg.svd(y, compute_uv=False)
        return s.max(axis=-1) if ord == 2 else s.min(axis=-1) if ord == -2 else s.sum(axis=-1)
    if ord in (1, -1):
        if col_axis > row_axis:
            col_axis -= 1
        sums = np.add.reduce(np.abs(t), axis=row_axis)
        return sums.max(axis=col_axis, initial=0) if ord == 1 else sums.min(axis=col_axis)
    if ord in (np.inf, -np.inf):
        if row_axis > col_axis:
            row_axis -= 1
        sums = np.add.reduce(np.abs(t), axis=col_axis)
        return sums.max(axis=row_axis, initial=0) if ord == np.inf else sums.min(axis=row_axis)
    if ord in (None, "fro", "f"):
        return np.sqrt(np.add.reduce(_abs2(t), axis=axis))
    raise ValueError("Invalid norm order for matrices.")


# --- np.isclose / np.allclose -----------------------------------------------------------------

def _isclose_operand(v: Any) -> Any:
    """NumPy's `a if isinstance(a, (int, float, complex)) else asanyarray(a)`."""
    if isinstance(v, (int, float, complex)) or isinstance(v, T.Tracer):
        return v
    return np.asanyarray(v)


def isclose(a: Any, b: Any, rtol: Any = 1.e-5, atol: Any = 1.e-8,
            equal_nan: bool = False) -> Any:
    """numpy.isclose (NumPy 2.x): `|x - y| <= atol + rtol*|y|` where y is finite, or x == y."""
    x, y, atol, rtol = (_isclose_operand(v) for v in (a, b, atol, rtol))
    if isinstance(y, T.Tracer) and y.weak is int:  # a Python int argument: float(y)
        y = T.Tracer(T.cast_node(y.node, np.dtype(np.float64)), scalar=True, weak=float)
    elif isinstance(y, T.Tracer) and y.weak is None:
        dt = np.result_type(y.dtype, 1.)
        y = T.Tracer(T.cast_node(y.node, dt), scalar=y.scalar)
    elif isinstance(y, np.ndarray):
        y = np.asanyarray(y, dtype=np.result_type(y, 1.))
    elif isinstance(y, int):
        y = float(y)
    concrete = [v for v in (atol, rtol) if not isinstance(v, T.Tracer)]
    if not all(np.all(np.isfinite(v)) for v in concrete):
        err_s = np.geterr()["invalid"]
        err_msg = f"One of rtol or atol is not valid, atol: {atol}, rtol: {rtol}"
        if err_s == "warn":
            warnings.warn(err_msg, RuntimeWarning, stacklevel=2)
        elif err_s == "raise":
            raise FloatingPointError(err_msg)
        elif err_s == "print":
            print(err_msg)
    result = ((np.less_equal(abs(x - y), atol + rtol * abs(y)) & np.isfinite(y))
              | np.equal(x, y))
    if equal_nan:
        result = result | (np.isnan(x) & np.isnan(y))
    return _scalar_if_0d(result)


def allclose(a: Any, b: Any, rtol: Any = 1.e-5, atol: Any = 1.e-8,
             equal_nan: bool = False) -> Any:
    raise T.UnsupportedError(
        f"np.allclose returns a Python bool, which a compiled function cannot compute from "
        f"traced arrays{T.where_msg()}: use np.isclose(a, b, rtol, atol, equal_nan).all() "
        "(a NumPy bool) instead")


# --- np.average -------------------------------------------------------------------------------

def average(a: Any, axis: Any = None, weights: Any = None, returned: bool = False, *,
            keepdims: Any = np._NoValue) -> Any:
    """numpy.average. NumPy raises ZeroDivisionError when the weights sum to zero: checked
    here for constant weights, and when the program runs for traced ones."""
    t = _array(a)
    if axis is not None:
        axis = normalize_axis_tuple(axis, t.ndim, argname="axis")
    keepdims_kw = {} if keepdims is np._NoValue else {"keepdims": keepdims}
    if weights is None:
        avg = np.mean(t, axis, **keepdims_kw)
        scl = avg.dtype.type(t.size / avg.size)
    else:
        traced = isinstance(weights, T.Tracer)
        wgt = _weights_are_valid(weights if traced else np.asanyarray(weights), t.shape, axis)
        if t.dtype.kind in "biu":
            result_dtype = np.result_type(t.dtype, wgt.dtype, "f8")
        else:
            result_dtype = np.result_type(t.dtype, wgt.dtype)
        scl = wgt.sum(axis=axis, dtype=result_dtype, **keepdims_kw)
        if traced and scl.size and (wgt.size == 0 or t.size == 0):
            if wgt.size == 0:  # every sum is over nothing: zero, whatever the data
                raise ZeroDivisionError("Weights sum to zero, can't be normalized")
            raise T.UnsupportedError(
                f"np.average(..., weights=) with traced weights and an empty result is not "
                f"supported by fusejit{T.where_msg()}: NumPy raises ZeroDivisionError when "
                "the weights sum to zero, which a program computing nothing cannot check")
        if traced:  # the program raises NumPy's ZeroDivisionError when any sum is zero
            zero = T.Tracer(T.make_node("check_weights_zero", [np.any(scl == 0.0).node], (),
                                        np.dtype(bool)))
            scl = _scalar_if_0d(np.where(zero, np.ones((), scl.dtype), scl))
        elif np.any(scl == 0.0):
            raise ZeroDivisionError("Weights sum to zero, can't be normalized")
        total = np.multiply(t, wgt, dtype=result_dtype).sum(axis, **keepdims_kw)
        avg = _scalar_if_0d(np.divide(total, scl))
    if not returned:
        return avg
    if isinstance(scl, T.Tracer):
        return avg, (np.broadcast_to(scl, avg.shape).copy() if scl.shape != avg.shape
                     else scl)
    if np.shape(scl) != avg.shape:
        scl = np.broadcast_to(scl, avg.shape).copy()
    node = T.const_node(np.asarray(scl))
    return avg, T.Tracer(T.make_node("copy", [node], node.shape, node.dtype),
                         scalar=not isinstance(scl, np.ndarray))


def _weights_are_valid(wgt: np.ndarray, shape: tuple[int, ...], axis: Any) -> np.ndarray:
    if shape != wgt.shape:
        if axis is None:
            raise TypeError("Axis must be specified when shapes of a and weights differ.")
        if wgt.shape != tuple(shape[ax] for ax in axis):
            raise ValueError("Shape of weights must be consistent with shape of a along "
                             "specified axis.")
        wgt = wgt.transpose(np.argsort(axis))
        wgt = wgt.reshape(tuple((s if ax in axis else 1) for ax, s in enumerate(shape)))
    return wgt


# --- np.outer, np.diff, np.triu, np.tril ------------------------------------------------------

def outer(a: Any, b: Any, out: Any = None) -> Any:
    if out is not None:
        raise T.UnsupportedError(f"np.outer(..., out=) is not supported by fusejit"
                                 f"{T.where_msg()}: assign the result instead")
    return np.multiply(_array(a).reshape(-1)[:, None], _array(b).reshape(-1)[None, :])


def ufunc_outer(ufunc: np.ufunc, a: Any, b: Any, /, **kwargs: Any) -> Any:
    """`ufunc.outer(a, b)`: the ufunc of every element of `a` with every element of `b`,
    shape a.shape + b.shape (a's axes extended by b.ndim ones)."""
    if ufunc.nin != 2:
        raise ValueError("method outer is only allowed in ufunc with 2 input and 1 output")
    ta, tb = _array(a), _array(b)
    return ufunc(np.reshape(ta, ta.shape + (1,) * tb.ndim), tb, **kwargs)


def diff(a: Any, n: int = 1, axis: int = -1, prepend: Any = np._NoValue,
         append: Any = np._NoValue) -> Any:
    n = operator.index(n)
    if n == 0:
        return a
    if n < 0:
        raise ValueError("order must be non-negative but got " + repr(n))
    t = _array(a)
    nd = t.ndim
    if nd == 0:
        raise ValueError("diff requires input that is at least one dimensional")
    axis = normalize_axis_index(axis, nd)
    combined = []
    for extra in (prepend, None, append):
        if extra is None:
            combined.append(t)
        elif extra is not np._NoValue:
            e = _array(extra)
            if e.ndim == 0:
                shape = list(t.shape)
                shape[axis] = 1
                e = V.broadcast_to(e, tuple(shape))
            combined.append(e)
    if len(combined) > 1:
        t = np.concatenate(combined, axis)
    after = tuple(slice(1, None) if d == axis else slice(None) for d in range(nd))
    before = tuple(slice(None, -1) if d == axis else slice(None) for d in range(nd))
    op = np.not_equal if t.dtype == np.bool_ else np.subtract
    for _ in range(n):
        t = op(t[after], t[before])
    return t


def _trilu(upper: bool) -> Callable[..., Any]:
    def trilu(m: Any, k: int = 0) -> Any:
        t = _array(m)
        zero = np.zeros(1, t.dtype)
        if upper:
            mask = np.tri(*t.shape[-2:], k=k - 1, dtype=bool)
            return np.where(mask, zero, t)
        mask = np.tri(*t.shape[-2:], k=k, dtype=bool)
        return np.where(mask, t, zero)

    trilu.__name__ = "triu" if upper else "tril"
    return trilu


HANDLERS: dict[Callable[..., Any], Callable[..., Any]] = {
    np.linalg.norm: norm,
    np.isclose: isclose,
    np.allclose: allclose,
    np.average: average,
    np.outer: outer,
    np.diff: diff,
    np.triu: _trilu(True),
    np.tril: _trilu(False),
}

UFUNC_METHODS = {"outer": ufunc_outer}
