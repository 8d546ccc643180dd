"""NumPy functions (not ufuncs) that a Tracer answers through `__array_function__`.

Each handler reproduces the NumPy function's dtype, shape and error behaviour by building graph
nodes (or views); anything not listed here raises UnsupportedError naming the function.
"""

from __future__ import annotations

import operator
from collections.abc import Callable
from typing import Any

import numpy as np

from . import ops as O
from . import tracer as T
from . import views as V


def _probe(x: Any) -> Any:
    """An empty stand-in with the dtype NumPy would see (Python scalars stay weak)."""
    spec = T.operand_spec(x)
    return np.empty(0, spec) if isinstance(spec, np.dtype) else spec


def _as_tracer(x: Any) -> T.Tracer:
    if isinstance(x, T.Tracer):
        return x
    arr = np.asarray(x)
    return T.Tracer(T.const_node(arr), scalar=isinstance(x, np.generic))


def where(condition: Any, x: Any = None, y: Any = None) -> T.Tracer:
    if x is None and y is None:
        raise T.UnsupportedError("np.where(cond) with one argument has a data-dependent shape; "
                                 f"fusejit cannot compile it{T.where_msg()}")
    if x is None or y is None:
        raise ValueError("either both or neither of x and y should be given")
    with np.errstate(all="ignore"):
        dtype = np.where(np.empty(0, bool), _probe(x), _probe(y)).dtype
    O.check_dtype(dtype, "the result of np.where")
    shape = T.broadcast(*(T.shape_of(a) for a in (condition, x, y)))
    cond = T.to_node(condition, np.dtype(bool))
    node = T.make_node("where", [cond, T.to_node(x, dtype), T.to_node(y, dtype)], shape, dtype)
    return T.Tracer(node)


def clip(a: Any, a_min: Any = None, a_max: Any = None, out: Any = None, **kwargs: Any) -> Any:
    if out is not None or kwargs:
        raise T.UnsupportedError(f"np.clip(..., out=/kwargs) is not supported yet{T.where_msg()}")
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
    nodes = [T.to_node(v, dtype) for v in (a, a_min, a_max)]
    return T.Tracer(T.make_node("clip", nodes, shape, dtype), scalar=shape == ())


def full_like(a: Any, fill_value: Any, dtype: Any = None, order: str = "K", subok: bool = True,
              shape: Any = None, **kwargs: Any) -> T.Tracer:
    dtype = O.check_dtype(np.dtype(dtype) if dtype is not None else T.operand_spec(a)
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
    return _as_tracer(a).copy()


def around(a: Any, decimals: int = 0, out: Any = None) -> Any:
    if out is not None:
        raise T.UnsupportedError(f"np.round(..., out=) is not supported yet{T.where_msg()}")
    t = _as_tracer(a)
    decimals = operator.index(decimals)
    if t.dtype.kind in "biu":
        if decimals >= 0:
            return t.copy()
        raise T.UnsupportedError(f"np.round of integers with negative decimals is not "
                                 f"supported yet{T.where_msg()}")
    if decimals == 0:
        return np.rint(t)
    factor = t.dtype.type(10.0 ** abs(decimals))
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


HANDLERS: dict[Callable[..., Any], Callable[..., Any]] = {
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
    np.shape: shape,
    np.ndim: ndim,
    np.size: size,
    np.result_type: result_type,
}
if hasattr(np, "astype"):
    HANDLERS[np.astype] = astype
