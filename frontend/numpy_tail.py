"""NumPy calls whose own code cannot run on traced arrays, written from traced operations:
np.insert and np.delete with static indices (a gather at positions that NumPy's own function
computes on an index array), np.piecewise (a chain of selects), np.isin (equalities), NumPy
2's gufuncs np.vecdot, np.matvec and np.vecmat (a product and a sum, or matmul), and
np.polyfit of traced y at sample points given as values (the least-squares solution operator
of those points, a constant matrix, times y). Dtypes, shapes and errors are NumPy's (the index
arithmetic and its errors are NumPy's own, on integers)."""

from __future__ import annotations

import functools
import operator
from collections.abc import Callable
from typing import Any

import numpy as np

from . import tracer as T
from .numpy_lib import asarray, holds_tracer
from .views import broadcast_to


def _static(obj: Any, func: str) -> Any:
    if isinstance(obj, T.Tracer) or (isinstance(obj, (list, tuple)) and any(
            isinstance(e, T.Tracer) for e in obj)):
        raise T.UnsupportedError(f"np.{func} with traced indices is not supported by fusejit"
                                 f"{T.where_msg()}: the result's shape would depend on the "
                                 "data; pass the indices as constants or static arguments")
    return obj


def _gather(flat: T.Tracer, index: np.ndarray) -> T.Tracer:
    """flat[index] for a constant int index array (any shape), as a fresh array."""
    if index.size == 0:
        return T.Tracer(T.const_node(np.zeros(index.shape, flat.dtype)))
    return np.take(flat, index)


def delete(arr: Any, obj: Any, axis: Any = None) -> T.Tracer:
    """np.delete with static `obj`: the kept positions are np.delete of an index array."""
    obj = _static(obj, "delete")
    a = asarray(arr)
    if axis is None:
        a = a.reshape(-1)
        axis = 0
    labels = np.arange(a.size).reshape(a.shape)
    keep = np.delete(labels, obj, axis=axis)
    return _gather(a.reshape(-1), keep)


def insert(arr: Any, obj: Any, values: Any, axis: Any = None) -> T.Tracer:
    """np.insert with static `obj`: NumPy's own np.insert run on index arrays says where
    each element of the result comes from (`arr` or the cast `values`)."""
    obj = _static(obj, "insert")
    a = asarray(arr)
    v = asarray(values)
    v_shape = v.shape if isinstance(v, T.Tracer) else np.shape(values)
    labels = np.arange(a.size).reshape(a.shape)
    v_labels = (a.size + np.arange(int(np.prod(v_shape)))).reshape(v_shape)
    where = np.insert(labels, obj, v_labels, axis=axis)  # NumPy's index errors first
    if isinstance(v, T.Tracer):
        v = v.astype(a.dtype)
    else:
        v = T.Tracer(T.const_node(np.asarray(values, dtype=a.dtype)))  # NumPy's cast
    flat = np.concatenate([a.reshape(-1), v.reshape(-1)])
    return _gather(flat, where)


def piecewise(x: Any, condlist: Any, funclist: Any, *args: Any, **kw: Any) -> T.Tracer:
    """np.piecewise as selects in order (a later condition wins, as NumPy's assignments do).
    Each function is called on the whole of `x`, not on x[cond] (whose shape would depend on
    the data): right for elementwise functions, which is what np.piecewise is used with."""
    x = asarray(x)
    n2 = len(funclist)
    if isinstance(condlist, T.Tracer) and condlist.scalar:
        condlist = [condlist]
    elif isinstance(condlist, T.Tracer):  # NumPy looks at condlist[0] (and its errors)
        if condlist.ndim == 0:
            raise IndexError("too many indices for array: array is 0-dimensional, but 1 "
                             "were indexed")
        if condlist.shape[0] == 0:
            raise IndexError("index 0 is out of bounds for axis 0 with size 0")
        condlist = ([condlist] if condlist.ndim == 1 and x.ndim != 0 else
                    [condlist[i] for i in range(condlist.shape[0])])
    elif np.isscalar(condlist) or (
            not isinstance(condlist[0], (list, np.ndarray, T.Tracer)) and x.ndim != 0):
        condlist = [condlist]
    n = len(condlist)
    if n not in (n2, n2 - 1):
        raise ValueError(f"with {n} condition(s), either {n} or {n + 1} functions are expected")
    conds = [broadcast_to(asarray(c).astype(bool), x.shape)
             if _cond_ok(c, x) else _bad_cond(c, x) for c in condlist]
    if n == n2 - 1:  # the extra function is the "otherwise" case
        others = conds[0]
        for c in conds[1:]:
            others = np.logical_or(others, c)
        conds.append(np.logical_not(others))
    y = T.Tracer(T.const_node(np.zeros(x.shape, x.dtype)))
    for cond, func in zip(conds, funclist):
        value = func(x, *args, **kw) if callable(func) else func
        value = asarray(value)
        value = value.astype(x.dtype) if isinstance(value, T.Tracer) else np.asarray(
            value).astype(x.dtype)
        y = np.where(cond, value, y)
    return T.Tracer(T.make_node("copy", [y.node], x.shape, x.dtype))  # 0-d: an array


def _cond_ok(c: Any, x: T.Tracer) -> bool:
    return np.shape(c) == x.shape or np.ndim(c) == 0 and x.ndim == 0


def _bad_cond(c: Any, x: T.Tracer) -> T.Tracer:
    shape = np.shape(c)
    for d, (m, k) in enumerate(zip(x.shape, shape)):
        if m != k:
            raise IndexError(f"boolean index did not match indexed array along axis {d}; "
                             f"size of axis is {m} but size of corresponding boolean axis "
                             f"is {k}")
    raise IndexError(f"too many indices for array: array is {x.ndim}-dimensional, but "
                     f"{len(shape)} were indexed")


# --- NumPy 2's vecdot, matvec, vecmat ----------------------------------------------------

def _gufunc_args(ufunc: np.ufunc, inputs: tuple, kwargs: dict) -> tuple:
    name = ufunc.__name__
    out = kwargs.pop("out", None)
    dtype = kwargs.pop("dtype", None)
    axis = kwargs.pop("axis", None) if name == "vecdot" else None
    if out is not None or kwargs:
        raise T.UnsupportedError(f"np.{name}(..., {', '.join(sorted(kwargs) or ['out'])}=) is "
                                 f"not supported by fusejit{T.where_msg()}")
    if len(inputs) != 2:
        raise TypeError(f"{name}() takes from 2 to 3 positional arguments but {len(inputs)} "
                        "were given")
    a, b = (T.as_tracer(x) for x in inputs)
    a, b = T.Tracer(a.node), T.Tracer(b.node)
    for i, t in enumerate((a, b)):
        need = 2 if (name, i) in (("matvec", 0), ("vecmat", 1)) else 1
        if t.ndim < need:
            raise ValueError(f"{name}: Input operand {i} does not have enough dimensions "
                             f"(has {t.ndim}, gufunc core with signature {ufunc.signature} "
                             f"requires {need})")
    # NumPy's loop and result dtype (and its TypeError), from tiny stand-ins
    probe = ufunc(np.zeros((1,) * (2 if name == "matvec" else 1), a.dtype),
                  np.zeros((1,) * (2 if name == "vecmat" else 1), b.dtype),
                  **({"dtype": dtype} if dtype is not None else {}))
    if axis is not None:
        a, b = np.moveaxis(a, axis, -1), np.moveaxis(b, axis, -1)
    return name, a, b, probe.dtype


def _core_mismatch(name: str, sig: str, k1: int, k2: int) -> None:
    if k1 != k2:
        raise ValueError(f"{name}: Input operand 1 has a mismatch in its core dimension 0, "
                         f"with gufunc signature {sig} (size {k2} is different from {k1})")


def gufunc(ufunc: np.ufunc, *inputs: Any, **kwargs: Any) -> T.Tracer:
    """np.vecdot(x1, x2, axis=), np.matvec(A, v), np.vecmat(v, A) on real operands."""
    name, a, b, dtype = _gufunc_args(ufunc, inputs, dict(kwargs))
    if name == "vecdot":
        _core_mismatch(name, ufunc.signature, a.shape[-1], b.shape[-1])
        a, b = a.astype(dtype, copy=False), b.astype(dtype, copy=False)
        if dtype.kind == "b":
            return np.any(np.logical_and(a, b), axis=-1)
        return np.sum(np.multiply(a, b), axis=-1, dtype=dtype)
    if name == "matvec":
        _core_mismatch(name, ufunc.signature, a.shape[-1], b.shape[-1])
        np.broadcast_shapes(a.shape[:-2], b.shape[:-1])
        a, b = a.astype(dtype, copy=False), b.astype(dtype, copy=False)
        return np.matmul(a, b) if b.ndim == 1 else np.matmul(a, b[..., np.newaxis])[..., 0]
    _core_mismatch(name, ufunc.signature, a.shape[-1], b.shape[-2])
    np.broadcast_shapes(a.shape[:-1], b.shape[:-2])
    a, b = a.astype(dtype, copy=False), b.astype(dtype, copy=False)
    return np.matmul(a, b) if a.ndim == 1 else np.matmul(a[..., np.newaxis, :], b)[..., 0, :]


def isin(element: Any, test_elements: Any, assume_unique: bool = False, invert: bool = False,
         *, kind: Any = None) -> T.Tracer:
    """np.isin: each element compared with every test element (a fused any over equalities;
    NaN is in nothing, as in NumPy)."""
    if kind not in (None, "sort", "table"):
        raise ValueError(f"Invalid kind: '{kind}'. Please use None, 'sort' or 'table'.")
    e = T.Tracer(T.const_node(np.asarray(element))) if not isinstance(element, T.Tracer) \
        else element
    tests = asarray(test_elements)
    tests = tests.reshape(-1) if isinstance(tests, T.Tracer) else np.ravel(tests)
    if tests.shape[0] == 0:
        hit = T.Tracer(T.const_node(np.zeros(e.shape, bool)))
    else:
        hit = np.any(np.equal(e[..., np.newaxis], tests), axis=-1)
    hit = np.logical_not(hit) if invert else hit
    return T.Tracer(T.make_node("copy", [hit.node], e.shape, np.dtype(bool)))


APPLY_SLICES = 64  # np.apply_along_axis: slices traced one by one, at most (~3 s of compile)


def apply_along_axis(func1d: Any, axis: Any, arr: Any, *args: Any, **kwargs: Any) -> Any:
    """np.apply_along_axis as NumPy runs it: `func1d` called on each 1-d slice along `axis`
    (traced once per slice, up to APPLY_SLICES of them), the results (the first one's shape
    and dtype; later ones cast to it) stacked, their own axes put where `axis` was."""
    from numpy.lib.array_utils import normalize_axis_index

    t = asarray(arr)
    if not isinstance(t, T.Tracer):
        t = T.Tracer(T.to_node(np.asarray(t), np.asarray(t).dtype))
    axis = normalize_axis_index(operator.index(axis), t.ndim)
    moved = np.moveaxis(t, axis, -1)
    outer = moved.shape[:-1]
    count = int(np.prod(outer, dtype=np.int64))
    if count == 0:
        raise ValueError("Cannot apply_along_axis when any iteration dimensions are 0")
    if count > APPLY_SLICES:
        raise T.UnsupportedError(
            f"np.apply_along_axis over {count} slices is not supported by fusejit"
            f"{T.where_msg()}: it calls the function once per slice, and fusejit traces each "
            f"call (up to {APPLY_SLICES}); write the function over the whole array with axis= "
            "(np.sum(a, axis=1), ...) instead")
    results: list[T.Tracer] = []
    for index in np.ndindex(*outer):
        r = asarray(func1d(moved[index], *args, **kwargs))
        if not isinstance(r, T.Tracer):
            r = T.Tracer(T.to_node(np.asarray(r), np.asarray(r).dtype))
        if results:
            if r.shape != results[0].shape:  # (NumPy's assignment into its buffer)
                raise ValueError(f"could not broadcast input array from shape {r.shape} "
                                 f"into shape {results[0].shape}")
            r = r.astype(results[0].dtype)
        results.append(r)
    first = results[0]
    out = np.reshape(np.stack(results), outer + first.shape)
    own = list(range(len(outer), out.ndim))
    return np.moveaxis(out, own, list(range(axis, axis + len(own)))) if own else out


def polyfit(x: Any, y: Any, deg: Any, rcond: Any = None, full: bool = False, w: Any = None,
            cov: Any = False) -> Any:
    """np.polyfit with a traced `y` (and `x`, `w` given as values): everything NumPy decides
    (the scaled Vandermonde matrix, its rank and RankWarning, the errors) depends on x and w
    only, so NumPy's own function runs on them with a stand-in y, and the coefficients are
    the solution operator of the scaled least-squares problem (np.linalg.lstsq of the
    identity, a constant) applied to w * y, unscaled: NumPy's values to rounding."""
    if any(isinstance(v, T.Tracer) or holds_tracer(v) for v in (x, w, deg, rcond)):
        raise T.UnsupportedError(
            f"np.polyfit with traced x, w, deg or rcond is not supported by fusejit"
            f"{T.where_msg()}: NumPy's code warns when the Vandermonde matrix is rank-deficient, "
            "a Python branch on the data; make the sample points inside the function "
            "(np.linspace, np.arange: values; a global array is read at every call, a traced "
            "input), or fit with np.linalg.lstsq(np.vander(x, deg + 1), y, rcond=None)")
    if full or cov:
        raise T.UnsupportedError(
            f"np.polyfit(..., full=True or cov=) with a traced y is not supported by fusejit"
            f"{T.where_msg()}: use the coefficients alone")
    yt = asarray(y)
    np.polyfit(x, np.zeros(yt.shape), deg, rcond, False, w)  # NumPy's errors and RankWarning
    xv = np.asarray(x) + 0.0
    order = int(deg) + 1
    lhs = np.vander(xv, order)
    weights = None if w is None else np.asarray(w) + 0.0
    if weights is not None:
        lhs *= weights[:, np.newaxis]
    scale = np.sqrt((lhs * lhs).sum(axis=0))
    lhs /= scale
    eps_rcond = len(xv) * np.finfo(xv.dtype).eps if rcond is None else rcond
    solve = np.linalg.lstsq(lhs, np.eye(len(xv)), eps_rcond)[0] / scale[:, np.newaxis]
    rhs = yt.astype(np.result_type(yt.dtype, np.float64), copy=False)
    if weights is not None:
        rhs = rhs * (weights if rhs.ndim == 1 else weights[:, np.newaxis])
    return np.matmul(solve, rhs)


# np.vecdot, np.matvec, np.vecmat are ufuncs (gufuncs): __array_ufunc__ reaches them.
UFUNCS: dict[Any, Callable[..., Any]] = {
    getattr(np, n): functools.partial(gufunc, getattr(np, n))
    for n in ("vecdot", "matvec", "vecmat") if hasattr(np, n)}
HANDLERS: dict[Callable[..., Any], Callable[..., Any]] = {
    np.insert: insert, np.delete: delete, np.piecewise: piecewise,
    np.apply_along_axis: apply_along_axis, np.isin: isin, np.polyfit: polyfit}
