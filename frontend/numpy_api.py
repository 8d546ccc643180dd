"""NumPy functions (not ufuncs) that a Tracer answers through `__array_function__`.

Each handler reproduces the NumPy function's dtype, shape and error behaviour by building graph
nodes (or views); anything not listed here raises UnsupportedError naming the function.
"""

from __future__ import annotations

import math
import operator
import warnings
from collections.abc import Callable
from typing import Any

import numpy as np
from numpy.lib.array_utils import normalize_axis_index

from . import gather as G
from . import ops as O
from . import reshape as R
from . import tracer as T
from . import ufuncs as U
from . import views as V


def _probe(x: Any) -> Any:
    """An empty stand-in with the dtype NumPy would see (Python scalars stay weak)."""
    spec = T.operand_spec(x)
    return np.empty(0, spec) if isinstance(spec, np.dtype) else spec


def _as_tracer(x: Any) -> T.Tracer:
    x = T.array_operand(x)
    if isinstance(x, T.Tracer):
        return x
    arr = np.asarray(x)
    return T.Tracer(T.const_node(arr), scalar=isinstance(x, np.generic))


def where(condition: Any, x: Any = None, y: Any = None) -> T.Tracer:
    if x is None and y is None:  # np.nonzero's positions (frontend/masked_index.py)
        from .masked_index import nonzero

        return nonzero(condition)
    if x is None or y is None:
        raise ValueError("either both or neither of x and y should be given")
    with np.errstate(all="ignore"):
        dtype = np.where(np.empty(0, bool), _probe(x), _probe(y)).dtype
    O.check_dtype(dtype, "the result of np.where")
    shape = T.broadcast(*(T.shape_of(a) for a in (condition, x, y)))
    cond = T.to_node(condition, np.dtype(bool))
    node = T.make_node("where", [cond, _where_operand(x, dtype), _where_operand(y, dtype)],
                       shape, dtype)
    return T.Tracer(node)


def _where_wraps_python_ints() -> bool:
    """Whether this NumPy's np.where casts a Python int that does not fit the result dtype
    unsafely (NumPy 2.4: it wraps) rather than raising OverflowError (NumPy 2.5)."""
    try:
        with warnings.catch_warnings():  # (a NumPy that warns before it raises: it wraps)
            warnings.simplefilter("ignore")
            np.where(np.ones(1, bool), np.zeros(1, np.uint8), -1)
    except OverflowError:
        return False
    return True


WHERE_WRAPS_PYTHON_INTS = _where_wraps_python_ints()


def _where_operand(x: Any, dtype: np.dtype) -> Any:
    # Where np.where wraps an out-of-range Python int, a Python-int argument gets no range
    # check; where it raises OverflowError, the argument is range-checked as everywhere else.
    if isinstance(x, T.Tracer) and x.weak is not None and WHERE_WRAPS_PYTHON_INTS:
        return T.cast_node(x.node, dtype)
    return T.to_node(x, dtype)


def clip(a: Any, a_min: Any = np._NoValue, a_max: Any = np._NoValue, out: Any = None,
         **kwargs: Any) -> Any:
    # NumPy 2.1's (and the Array API's) min=/max= keywords, with NumPy's errors
    lo, hi, none = kwargs.pop("min", np._NoValue), kwargs.pop("max", np._NoValue), np._NoValue
    if a_min is none and a_max is none:
        a_min, a_max = (None if lo is none else lo), (None if hi is none else hi)
    elif a_min is none or a_max is none:
        raise TypeError("clip() missing 1 required positional argument: "
                        f"'{'a_min' if a_min is none else 'a_max'}'")
    elif lo is not none or hi is not none:
        raise ValueError("Passed `min` or `max` keyword argument when `a_min` and `a_max` "
                         "were passed. This is not supported.")
    if kwargs:
        raise T.UnsupportedError(f"np.clip(..., kwargs) is not supported yet{T.where_msg()}")
    if out is not None:  # np.clip(c, lo, hi, out=c): the clipped value written into `out`
        if not isinstance(out, T.Tracer):
            raise T.UnsupportedError(f"np.clip(..., out=) into an array that is not traced "
                                     f"is not supported{T.where_msg()}")
        copyto(out, clip(a, a_min, a_max))
        return out
    a_dtype = a.dtype if isinstance(a, T.Tracer) else np.asarray(a).dtype
    if a_dtype.kind in "iu":
        # NumPy's clip drops a Python-int bound beyond an integer array's range (instead of
        # raising OverflowError as NEP 50 would), see numpy/_core/_methods.py:_clip.
        info = np.iinfo(a_dtype)
        if type(a_min) is int and a_min <= info.min:
            a_min = None
        if type(a_max) is int and a_max >= info.max:
            a_max = None
        if a_min is not None or a_max is not None:
            with np.errstate(all="ignore"):  # a Python-int argument converts to the array's
                kind = np.clip(_probe(a), *(None if b is None else _probe(b)  # type only
                                            for b in (a_min, a_max))).dtype.kind
            if kind in "iu":  # (a float bound makes the result float: nothing converts)
                a_min = _int_bound(a_min, a_dtype, lower=True)
                a_max = _int_bound(a_max, a_dtype, lower=False)
    if a_min is None and a_max is None:
        return np.positive(a) if isinstance(a, T.Tracer) else a
    if a_min is None:
        return np.minimum(a, a_max)
    if a_max is None:
        return np.maximum(a, a_min)
    with np.errstate(all="ignore"):
        dtype = np.clip(_probe(a), _probe(a_min), _probe(a_max)).dtype
    O.check_dtype(dtype, "the result of np.clip")
    shape = T.broadcast(*(T.shape_of(v) for v in (a, a_min, a_max)))
    compute = U.compute_dtype(dtype)  # float16 is computed in float32, as NumPy does
    nodes = [T.to_node(v, compute) for v in (a, a_min, a_max)]
    if dtype == np.float16:  # NumPy's half clip: plain comparisons, ties keep the value
        x = U.half_pick("maximum", nodes[0], nodes[1],
                        T.broadcast(nodes[0].shape, nodes[1].shape))
        node = T.cast_node(U.half_pick("minimum", x, nodes[2], shape), dtype)
        return T.Tracer(node, scalar=shape == ())
    keep = dtype.kind == "f" and _clip_keeps_ties(a_min, a_max, shape)
    node = T.cast_node(T.make_node("clip_keep" if keep else "clip", nodes, shape, compute),
                       dtype)
    return T.Tracer(node, scalar=shape == ())


def _clip_keeps_ties(a_min: Any, a_max: Any, shape: tuple[int, ...]) -> bool:
    """Whether NumPy's float clip keeps the value on a tie (+0 against -0) with the bound, as
    its half loop always does: its loop for bounds of stride 0 (0-d or Python scalars, or
    size-1 arrays broadcast over more than one element); its general loop gives the bound
    (fj_maximum/fj_minimum), also for a size-1 array bound of a one-element result."""
    def stride_zero(b: Any) -> bool:
        s = T.shape_of(b)
        return s == () or (int(np.prod(s)) == 1 and int(np.prod(shape)) > 1)

    return stride_zero(a_min) and stride_zero(a_max)


def _int_bound(b: Any, dtype: np.dtype, lower: bool) -> Any:
    """A Python-int *argument* as a clip bound of an integer array: its value is only known at
    run time, so the bound is clamped into the dtype's range (which is what dropping it
    amounts to) and only the other side is range-checked (NumPy raises OverflowError there)."""
    if not (isinstance(b, T.Tracer) and b.weak is int):
        return b
    info, i64 = np.iinfo(dtype), np.iinfo(np.int64)
    node = b.node
    if node.op == "input":
        lo, hi = node.attrs.get("range", (int(i64.min), int(i64.max)))
        allowed = (int(i64.min), int(info.max)) if lower else (int(info.min), int(i64.max))
        node.attrs["range"] = (max(lo, allowed[0]), min(hi, allowed[1]))
    edge = int(info.min) if lower else int(info.max)
    if i64.min <= edge <= i64.max:
        const = T.const_node(np.int64(edge))
        node = T.make_node("maximum" if lower else "minimum", [node, const], node.shape,
                           np.dtype(np.int64))
    return T.Tracer(T.cast_node(node, dtype), scalar=True)


def full_like(a: Any, fill_value: Any, dtype: Any = None, order: str = "K", subok: bool = True,
              shape: Any = None, **kwargs: Any) -> T.Tracer:
    dtype = O.check_dtype(np.dtype(dtype) if dtype is not None else a.dtype
                          if isinstance(a, T.Tracer) else np.asarray(a).dtype, "full_like()")
    shape = tuple(T.shape_of(a) if shape is None else
                  ((shape,) if isinstance(shape, int) else tuple(shape)))
    if isinstance(fill_value, T.Tracer):
        value = T.cast_node(fill_value.node, dtype)
        base = T.Tracer(value)
    else:
        base = T.Tracer(T.const_node(np.asarray(fill_value).astype(dtype, casting="unsafe")))
    out = V.broadcast_to(base, shape)
    return T.Tracer(T.make_node("copy", [out.node], shape, dtype))


def zeros_like(a: Any, dtype: Any = None, order: str = "K", subok: bool = True,
               shape: Any = None, **kwargs: Any) -> T.Tracer:
    return full_like(a, 0, dtype=dtype, shape=shape)


def ones_like(a: Any, dtype: Any = None, order: str = "K", subok: bool = True,
              shape: Any = None, **kwargs: Any) -> T.Tracer:
    return full_like(a, 1, dtype=dtype, shape=shape)


def copy(a: Any, order: str = "K", subok: bool = False) -> T.Tracer:
    t = _as_tracer(a)
    return T.Tracer(T.make_node("copy", [t.node], t.shape, t.dtype))  # always an array


def _power_of_ten(n: int) -> float:
    """NumPy's power_of_ten (the factor np.round scales by): exact table up to 1e8, then
    repeated multiplication by 10 in double, which differs from the correctly rounded 10.0 ** n
    in the last bit for most n >= 23 (and overflows to inf above 1e308)."""
    if n < 9:
        return 10.0 ** n
    ret = 1e9
    for _ in range(n - 9):
        ret *= 10.0
        if ret == math.inf:
            break
    return ret


def around(a: Any, decimals: int = 0, out: Any = None) -> Any:
    if out is not None:
        raise T.UnsupportedError(f"np.round(..., out=) is not supported yet{T.where_msg()}")
    t = _as_tracer(a)
    decimals = operator.index(decimals)
    if t.dtype.kind == "b":
        if decimals:  # NumPy's own error (bool * 10**decimals cannot be cast back to bool)
            np.round(np.zeros(1, bool), decimals)
        return np.rint(t)  # float16, as in NumPy
    if t.dtype.kind in "iu":
        if decimals >= 0:  # like every ufunc result, a 0-d result is a NumPy scalar
            return T.Tracer(T.make_node("copy", [t.node], t.shape, t.dtype),
                            scalar=t.shape == ())
        # NumPy: in float64, x / 10**-decimals, rint, times 10**-decimals, cast back
        factor = np.float64(_power_of_ten(-decimals))
        wide = np.multiply(np.rint(np.divide(t.astype(np.float64), factor)), factor)
        out = wide.astype(t.dtype)
        out.scalar = t.scalar or t.shape == ()
        return out
    if decimals == 0:
        return np.rint(t)
    with np.errstate(over="ignore"):  # 1e39 is inf in float32, as NumPy's weak cast gives
        factor = t.dtype.type(_power_of_ten(abs(decimals)))
    if decimals > 0:
        return np.divide(np.rint(np.multiply(t, factor)), factor)
    return np.multiply(np.rint(np.divide(t, factor)), factor)


def astype(x: Any, dtype: Any, /, *, copy: bool = True, device: Any = None) -> T.Tracer:
    return _as_tracer(x).astype(dtype, copy=copy)


def split(ary: Any, indices_or_sections: Any, axis: int = 0) -> list:
    return V.split(_as_tracer(ary), indices_or_sections, axis, even=True)


def array_split(ary: Any, indices_or_sections: Any, axis: int = 0) -> list:
    return V.split(_as_tracer(ary), indices_or_sections, axis, even=False)


def broadcast_to(array: Any, shape: Any, subok: bool = False) -> T.Tracer:
    shape = (shape,) if isinstance(shape, int) else tuple(shape)
    return V.broadcast_to(_as_tracer(array), shape)


def transpose(a: Any, axes: Any = None) -> T.Tracer:
    return V.transpose(_as_tracer(a), axes)


def expand_dims(a: Any, axis: Any) -> T.Tracer:
    t = _as_tracer(a)
    axes = (axis,) if isinstance(axis, int) else tuple(axis)
    nd = t.ndim + len(axes)
    norm = sorted(np.lib.array_utils.normalize_axis_tuple(axes, nd))
    index = tuple(None if d in norm else slice(None) for d in range(nd))
    return V.basic_index(t, index)


def squeeze(a: Any, axis: Any = None) -> T.Tracer:
    t = _as_tracer(a)
    if axis is None:
        axes = tuple(d for d, n in enumerate(t.shape) if n == 1)
    else:
        axes = np.lib.array_utils.normalize_axis_tuple(axis, t.ndim)
        if any(t.shape[d] != 1 for d in axes):
            raise ValueError("cannot select an axis to squeeze out which has size not equal "
                             "to one")
    out = V.basic_index(t, tuple(0 if d in axes else slice(None) for d in range(t.ndim)))
    out.scalar = t.scalar  # squeezing every axis of an array leaves a 0-d array
    return out


def swapaxes(a: Any, axis1: int, axis2: int) -> T.Tracer:
    t = _as_tracer(a)
    a1, a2 = np.lib.array_utils.normalize_axis_tuple((axis1, axis2), t.ndim,
                                                     allow_duplicate=True)
    perm = list(range(t.ndim))
    perm[a1], perm[a2] = perm[a2], perm[a1]
    return V.transpose(t, perm)


def moveaxis(a: Any, source: Any, destination: Any) -> T.Tracer:
    t = _as_tracer(a)
    src = np.lib.array_utils.normalize_axis_tuple(source, t.ndim, "source")
    dst = np.lib.array_utils.normalize_axis_tuple(destination, t.ndim, "destination")
    if len(src) != len(dst):
        raise ValueError("`source` and `destination` arguments must have the same number "
                         "of elements")
    order = [n for n in range(t.ndim) if n not in src]
    for d, s in sorted(zip(dst, src)):
        order.insert(d, s)
    return V.transpose(t, order)


def reshape(a: Any, /, shape: Any = None, order: str = "C", *, newshape: Any = None,
            copy: Any = None) -> T.Tracer:
    if copy is not None:
        raise T.UnsupportedError(f"np.reshape(..., copy=) is not supported by fusejit"
                                 f"{T.where_msg()}")
    return R.reshape(_as_tracer(a), shape if newshape is None else newshape, order)


def ravel(a: Any, order: str = "C") -> T.Tracer:
    return R.ravel(_as_tracer(a), order)


def _atleast(n: int) -> Callable[..., Any]:
    def atleast(*arys: Any) -> Any:
        res = tuple(R.atleast(_as_tracer(a), n) for a in arys)
        return res[0] if len(res) == 1 else res

    return atleast


def take(a: Any, indices: Any, axis: Any = None, out: Any = None, mode: str = "raise") -> Any:
    if out is not None:
        raise T.UnsupportedError(f"np.take(..., out=) is not supported by fusejit"
                                 f"{T.where_msg()}: assign the result instead")
    if getattr(type(indices), "fusejit_selection", False):  # np.take(x, np.flatnonzero(m))
        if mode != "raise":
            raise T.UnsupportedError(f"np.take(mode={mode!r}) by a mask's positions is not "
                                     f"supported by fusejit{T.where_msg()}")
        t = _as_tracer(a)
        if axis is None:
            return np.ravel(t)[indices]
        axis = normalize_axis_index(axis, t.ndim)
        return t[(slice(None),) * axis + (indices,)]
    return G.take(_as_tracer(a), indices, axis, mode)


def take_along_axis(arr: Any, indices: Any, axis: Any = -1) -> Any:
    return G.take_along_axis(_as_tracer(arr), indices, axis)


def shape(a: Any) -> tuple[int, ...]:
    return T.shape_of(a)


def ndim(a: Any) -> int:
    return len(T.shape_of(a))


def size(a: Any, axis: int | None = None) -> int:
    s = T.shape_of(a)
    return int(np.prod(s, dtype=np.int64)) if axis is None else s[axis]


def result_type(*arrays_and_dtypes: Any) -> np.dtype:
    return np.result_type(*(_probe(a) if isinstance(a, T.Tracer) else a
                            for a in arrays_and_dtypes))


def copyto(dst: Any, src: Any, casting: str = "same_kind", where: Any = True) -> None:
    from .inplace import copyto as copy_into

    copy_into(dst, src, casting, where)


HANDLERS: dict[Callable[..., Any], Callable[..., Any]] = {
    np.copyto: copyto,
    np.where: where,
    np.clip: clip,
    np.full_like: full_like,
    np.zeros_like: zeros_like,
    np.ones_like: ones_like,
    np.empty_like: zeros_like,
    np.copy: copy,
    np.round: around,
    np.around: around,
    np.split: split,
    np.array_split: array_split,
    np.broadcast_to: broadcast_to,
    np.transpose: transpose,
    np.expand_dims: expand_dims,
    np.squeeze: squeeze,
    np.swapaxes: swapaxes,
    np.moveaxis: moveaxis,
    np.reshape: reshape,
    np.ravel: ravel,
    np.atleast_1d: _atleast(1),
    np.atleast_2d: _atleast(2),
    np.atleast_3d: _atleast(3),
    np.shape: shape,
    np.ndim: ndim,
    np.size: size,
    np.result_type: result_type,
}
HANDLERS[np.take] = take
HANDLERS[np.take_along_axis] = take_along_axis
if hasattr(np, "astype"):
    HANDLERS[np.astype] = astype

# ndarray.clip(tracer, ...) reaches NumPy's internal `clip` ufunc, not np.clip.
_UMATH_CLIP = getattr(np._core.umath, "clip", None) if hasattr(np, "_core") else None
UFUNCS: dict[np.ufunc, Callable[..., Any]] = {_UMATH_CLIP: clip} if _UMATH_CLIP else {}
