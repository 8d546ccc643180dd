"""Everyday NumPy calls that benchmarks/survey_calls.py found refused, written from traced
operations or run through NumPy's own code: np.hsplit/vsplit/dsplit, np.block,
np.put_along_axis, np.i0 (NumPy's own code), np.diagflat (np.diag of the flattened array),
np.fill_diagonal and ndarray.fill (np.copyto), np.put (a scatter at the unravelled flat
indices), np.unravel_index (floor divisions; NumPy's ValueError when the program runs),
sliding_window_view (a view), ndarray.flat (FlatIter), np.place (a select of values cycled by
the mask's running count), ndarray.clip (NumPy's method signature), ndarray.choose, round() of
a traced NumPy scalar, and the ufuncs np.float_power (power in the dtype NumPy's loops give),
np.divmod (floor_divide, remainder) and np.modf (trunc and the exact difference). Dtypes,
shapes and errors are NumPy's."""

from __future__ import annotations

import builtins
import operator
from collections.abc import Callable
from typing import Any

import numpy as np

from . import tracer as T
from .numpy_lib import asarray, numpy_code
from .ops_more import BITCAST_DTYPES
from .views import make_view


def _no_kwargs(name: str, kwargs: dict[str, Any]) -> None:
    if kwargs.get("out") is None:
        kwargs.pop("out", None)
    if kwargs:
        raise T.UnsupportedError(f"np.{name}(..., {', '.join(kwargs)}=) is not supported by "
                                 f"fusejit{T.where_msg()}")


def _dtype_of(x: Any) -> np.dtype:
    """The dtype NumPy's type resolution sees for an operand (a Python scalar as its default
    array dtype: only complex vs real matters for the float64-or-wider loops below)."""
    if isinstance(x, T.Tracer):
        return x.dtype
    return np.asarray(x).dtype


def float_power(x1: Any, x2: Any, **kwargs: Any) -> T.Tracer:
    """np.float_power: np.power in float64 (complex128 for complex operands), NumPy's loops."""
    _no_kwargs("float_power", kwargs)
    dtype = np.float_power(np.empty(0, _dtype_of(x1)), np.empty(0, _dtype_of(x2))).dtype
    base = asarray(x1).astype(dtype)
    if not isinstance(x2, T.Tracer) and np.ndim(x2) == 0 and x2 == 0.5 and dtype.kind == "f":
        # np.power's scalar fast path (sqrt) is not float_power's: C's pow(-0.0, 0.5) is
        # +0.0 and pow(-inf, 0.5) is +inf
        return np.where(base == -np.inf, np.inf, np.sqrt(base) + 0.0)
    return np.power(base, asarray(x2).astype(dtype))


def divmod_(x1: Any, x2: Any, **kwargs: Any) -> tuple[Any, Any]:
    """np.divmod: (np.floor_divide, np.remainder), which NumPy's loops compute alike."""
    _no_kwargs("divmod", kwargs)
    return np.floor_divide(x1, x2), np.remainder(x1, x2)


def modf(x: Any, **kwargs: Any) -> tuple[Any, Any]:
    """np.modf: (fractional, integral) parts as C's modf, both with the sign of x; the
    fractional part of an infinity is a signed zero. x - trunc(x) is exact."""
    _no_kwargs("modf", kwargs)
    t = asarray(x) if not isinstance(x, T.Tracer) else x
    dtype = np.modf(np.empty(0, _dtype_of(x)))[0].dtype  # ints: the smallest safe float
    t = t.astype(dtype, copy=False)
    whole = np.trunc(t)
    frac = np.copysign(np.where(np.isinf(t), 0, t - whole), t)
    return frac, whole


def frexp(x: Any, **kwargs: Any) -> tuple[Any, Any]:
    """np.frexp: (mantissa, exponent) as C's frexp, the exponent int32 (0 for inf and NaN);
    ints and bools go through NumPy's float loop for them."""
    _no_kwargs("frexp", kwargs)
    t = asarray(x) if not isinstance(x, T.Tracer) else x
    mdt, edt = (r.dtype for r in np.frexp(np.empty(0, _dtype_of(x))))
    t = t.astype(mdt, copy=False)
    scalar = t.ndim == 0
    return tuple(T.Tracer(T.make_node(op, [t.node], t.shape, dt), scalar=scalar)
                 for op, dt in (("frexp_mantissa", mdt), ("frexp_exponent", edt)))


def diagflat(v: Any, k: int = 0) -> T.Tracer:
    """np.diagflat: the flattened input on the k-th diagonal of a square matrix."""
    return np.diag(np.ravel(asarray(v)), k)


def fill_diagonal(a: Any, val: Any, wrap: bool = False) -> None:
    """np.fill_diagonal: NumPy's flat positions (a.flat[:end:step]) as a constant mask, the
    values (cycled as a flat assignment cycles them) written with np.copyto."""
    if not isinstance(a, T.Tracer):
        raise T.UnsupportedError(f"np.fill_diagonal of an array that is not traced is not "
                                 f"supported by fusejit{T.where_msg()}")
    labels = np.full(a.shape, -1, dtype=np.intp)
    np.fill_diagonal(labels, np.arange(labels.size), wrap=wrap)  # NumPy's positions, errors
    mask = labels >= 0
    v = asarray(val) if isinstance(val, T.Tracer) else np.asarray(val)
    if v.size == 1 or not mask.any():
        values = v.reshape(()) if v.size == 1 else np.zeros((), a.dtype)
    elif v.size == 0:
        return  # NumPy: a flat assignment of nothing writes nothing
    else:  # the k-th diagonal element gets val.flat[k % val.size]
        which = np.where(mask, labels % v.size, 0)
        values = np.take(np.ravel(v), which)
    np.copyto(a, values.astype(a.dtype) if isinstance(values, T.Tracer)
              else np.asarray(values).astype(a.dtype), where=mask)


def place(arr: Any, mask: Any, vals: Any) -> None:
    """np.place: the i-th True position of `mask` (C order) gets vals.flat[i % len(vals)];
    the index is the mask's running count, so the shape does not depend on the data."""
    if not isinstance(arr, T.Tracer):
        raise T.UnsupportedError(f"np.place into an array that is not traced is not supported "
                                 f"by fusejit{T.where_msg()}")
    m = asarray(mask) if isinstance(mask, T.Tracer) else np.asarray(mask)
    if m.size != arr.size:
        raise ValueError("place: mask and data must be the same size")
    m = m.astype(bool).reshape(arr.shape)
    v = np.ravel(asarray(vals) if isinstance(vals, T.Tracer) else np.asarray(vals))
    if v.size == 0:  # NumPy: an error only when some position is to be written
        if isinstance(m, T.Tracer):
            raise T.UnsupportedError(f"np.place with empty `vals` and a traced mask is not "
                                     f"supported by fusejit{T.where_msg()}: NumPy raises "
                                     "only when the mask has a True element")
        if m.any():
            raise ValueError("Cannot insert from an empty array!")
        return
    if v.size == 1:
        values = v.reshape(())
    else:
        rank = np.cumsum(np.ravel(m).astype(np.intp)) - 1
        table = v if isinstance(v, T.Tracer) else T.Tracer(T.const_node(v))
        values = np.take(table, np.reshape(rank % v.size, arr.shape))
    values = values.astype(arr.dtype) if isinstance(values, T.Tracer) else np.asarray(
        values).astype(arr.dtype)
    np.copyto(arr, values, where=m)


def put(a: Any, ind: Any, v: Any, mode: str = "raise") -> None:
    """np.put / a.put: a[np.unravel_index(ind)] = v cycled to len(ind), one scatter (a repeated
    index keeps its last value, as NumPy's sequential loop does). Out-of-range indices raise
    NumPy's IndexError (constant ones when traced, traced ones when the program runs)."""
    if not isinstance(a, T.Tracer):
        raise T.UnsupportedError(f"np.put into an array that is not traced is not supported "
                                 f"by fusejit{T.where_msg()}")
    if mode not in ("raise", "wrap", "clip"):
        raise ValueError(f"clipmode must be one of 'clip', 'raise', or 'wrap' (got {mode!r})")
    values = np.ravel(asarray(v) if isinstance(v, T.Tracer) else np.asarray(v))
    if isinstance(ind, T.Tracer):
        flat = np.ravel(ind).astype(np.intp)
    else:
        flat = np.ravel(np.asarray(ind)).astype(np.intp)
        if values.size:  # NumPy's own index errors, on an array of a's size
            np.put(np.zeros(a.size, np.int8), flat, 0, mode=mode)
    if flat.size == 0 or values.size == 0:
        return
    if values.size != flat.size:  # NumPy repeats v to the length of ind
        table = values if isinstance(values, T.Tracer) else T.Tracer(T.const_node(values))
        values = np.take(table, np.arange(flat.size) % values.size)
    values = values.astype(a.dtype) if isinstance(values, T.Tracer) else values.astype(a.dtype)
    target = a if a.ndim else a[None]
    size = target.size
    if mode == "wrap":
        flat = np.mod(flat, size)
    elif mode == "clip":
        flat = np.clip(flat, 0, size - 1)
    if not isinstance(flat, T.Tracer):
        target[np.unravel_index(np.where(flat < 0, flat + size, flat), target.shape)] = values
        return
    j = np.where(flat < 0, flat + size, flat)
    strides = [int(np.prod(target.shape[k + 1:], dtype=np.int64)) for k in range(target.ndim)]
    index = [np.where(j < 0, target.shape[0], j // strides[0])]  # out of range: IndexError
    index += [(j // st) % n for st, n in zip(strides[1:], target.shape[1:])]
    target[tuple(index)] = values


def _method_put(self: T.Tracer, indices: Any, values: Any, mode: str = "raise") -> None:
    put(self, indices, values, mode)


def unravel_index(indices: Any, shape: Any, order: str = "C") -> tuple[Any, ...]:
    """np.unravel_index of traced indices (a constant shape): each coordinate a floor
    division and remainder; an index outside [0, size) raises NumPy's ValueError when the
    program runs."""
    dims = (operator.index(shape),) if np.ndim(shape) == 0 else tuple(
        operator.index(d) for d in shape)
    i = asarray(indices)
    if i.dtype.kind not in "biu":
        raise TypeError("only int indices permitted")
    if order not in ("C", "F"):
        raise ValueError("only 'C' or 'F' order is permitted")
    np.unravel_index(np.zeros(0, np.intp), dims, order)  # NumPy's errors about the shape
    size = int(np.prod(dims, dtype=np.int64))
    i = i.astype(np.intp)
    bad = np.any((i < 0) | (i >= size))
    check = T.Tracer(T.make_node("check_unravel_range", [bad.node], (), np.dtype(bool)))
    i = np.where(check, np.zeros((), np.intp), i)
    axes = range(len(dims)) if order == "F" else range(len(dims) - 1, -1, -1)
    out: list[Any] = [None] * len(dims)
    for ax in axes:  # the fastest-varying axis first
        out[ax] = np.remainder(i, dims[ax]) if dims[ax] else i
        i = np.floor_divide(i, dims[ax]) if dims[ax] else i
    if isinstance(indices, T.Tracer) and indices.ndim == 0:
        for t in out:
            t.scalar = True
    return tuple(out)


def sliding_window_view(x: Any, window_shape: Any, axis: Any = None, *, subok: bool = False,
                        writeable: bool = False) -> T.Tracer:
    """np.lib.stride_tricks.sliding_window_view: a read-only view whose window dims index
    the same axes again (out[i, k] = x[i + k]), fused into the loop that reads it. With
    writeable=True (SciPy's spectral helper asks for it, and only reads) it reads alike, and
    a write through it is refused when it happens: the windows overlap, so a write would
    reach several of them."""
    t = asarray(x) if not isinstance(x, T.Tracer) else x
    fake = np.lib.stride_tricks.as_strided(np.zeros(1, np.int8), t.shape, (0,) * t.ndim)
    probe = np.lib.stride_tricks.sliding_window_view(fake, window_shape, axis)  # NumPy's errors
    axes = tuple(range(t.ndim)) if axis is None else (
        tuple(axis) if np.iterable(axis) else (axis,))
    axes = tuple(np.lib.array_utils.normalize_axis_index(a, t.ndim) for a in axes)
    dims = tuple((a, 1) for a in range(t.ndim)) + tuple((a, 1) for a in axes)
    view = make_view(t, (0,) * t.ndim, dims, probe.shape, readonly=True)
    if writeable:
        view.readonly = ("a write through sliding_window_view(..., writeable=True) is not "
                         "supported by fusejit{where}: its windows overlap, so the write "
                         "would reach several of them")
    return view


def _method_round(self: T.Tracer, ndigits: Any = None) -> Any:
    """round(x, n) of a NumPy scalar is np.round(x, n); round(x) a Python int; an array (and
    a NumPy bool) has no __round__."""
    if self.weak is not None:
        raise T.UnsupportedError(
            f"round() of a Python-scalar argument is not supported by fusejit{T.where_msg()}: "
            "Python rounds its decimal value; use np.round(x, n)")
    if not self.scalar or self.dtype.kind == "b":
        name = "numpy.bool" if self.scalar else "numpy.ndarray"
        raise TypeError(f"type {name} doesn't define __round__ method")
    if ndigits is None:
        return self._concrete("round() (a Python int)")
    return np.round(self, operator.index(ndigits))


def _method_choose(self: T.Tracer, choices: Any, out: Any = None, mode: str = "raise") -> Any:
    return np.choose(self, choices, out=out, mode=mode)


def _method_fill(self: T.Tracer, value: Any) -> None:
    """ndarray.fill: every element set to `value` cast to the array's dtype."""
    v = asarray(value) if isinstance(value, T.Tracer) else np.asarray(value)
    if v.ndim:
        v = v.reshape(())  # NumPy: only a size-1 value converts to a scalar
    np.copyto(self, v.astype(self.dtype) if isinstance(v, T.Tracer)
              else v.astype(self.dtype), casting="unsafe")


def _method_clip(self: T.Tracer, min: Any = None, max: Any = None, out: Any = None,
                 **kwargs: Any) -> Any:
    """ndarray.clip(min=None, max=None): one bound may be left out, unlike np.clip's."""
    return np.clip(self, min, max, out=out, **kwargs)


_put_along_axis = numpy_code(np.put_along_axis)


def put_along_axis(arr: Any, indices: Any, values: Any, axis: Any) -> None:
    """np.put_along_axis through NumPy's own code (a scatter through index arrays)."""
    if axis is None:
        raise T.UnsupportedError(
            f"np.put_along_axis(..., axis=None) is not supported by fusejit{T.where_msg()}: "
            "NumPy 2.4 writes into a flattened copy and leaves `arr` unchanged; np.put(arr, "
            "indices, values) writes at flat indices")
    _put_along_axis(arr, indices, values, axis)


HANDLERS: dict[Callable[..., Any], Callable[..., Any]] = {
    np.hsplit: numpy_code(np.hsplit),
    np.vsplit: numpy_code(np.vsplit),
    np.dsplit: numpy_code(np.dsplit),
    np.block: numpy_code(np.block),
    np.put_along_axis: put_along_axis,
    np.i0: numpy_code(np.i0),
    np.diagflat: diagflat,
    np.fill_diagonal: fill_diagonal,
    np.place: place,
    np.put: put,
    np.unravel_index: unravel_index,
    np.lib.stride_tricks.sliding_window_view: sliding_window_view,
}

REFUSED: dict[Any, str] = {
    np.array_equal: "it returns a Python bool, which a compiled function cannot compute from "
                    "traced arrays: use (a == b).all() (a NumPy bool), with a shape check "
                    "of your own where the shapes may differ",
    np.array_equiv: "it returns a Python bool, which a compiled function cannot compute from "
                    "traced arrays: use (a == b).all() (a NumPy bool)",
    **dict.fromkeys((np.linalg.eig, np.linalg.eigvals),
                    "the dtype of its result depends on the values (NumPy returns real "
                    "arrays when every eigenvalue is real, complex ones otherwise), which a "
                    "compiled function cannot have: for a symmetric matrix use "
                    "np.linalg.eigh/eigvalsh, else compute it outside the compiled function"),
    np.polymul: "NumPy drops the leading zeros of each factor first (np.poly1d), so the "
                "length of its result depends on the values: use np.convolve(a, b), which "
                "is np.polymul of factors without leading zeros",
    np.polydiv: "NumPy drops the leading zeros of the divisor and of the remainder, so the "
                "lengths of its results depend on the values",
    np.roots: "the number of roots and their dtype (real or complex) depend on the "
              "values; compute it outside the compiled function",
    np.trim_zeros: "the length of its result depends on the values; slice with lengths "
                   "known outside the compiled function",
    **dict.fromkeys((np.setdiff1d, np.union1d, np.intersect1d, np.setxor1d),
                    "the length of its result depends on the values (how many are "
                    "distinct); np.isin(a, b) gives the mask of fixed shape"),
    **dict.fromkeys((np.shares_memory, np.may_share_memory),
                    "a traced array has no memory of its own (fusejit's memory plan places "
                    "it), so there is nothing to compare"),
}

class FlatIter:
    """ndarray.flat of a traced array: indexing reads the C-order flattened array
    (np.ravel(a)[index]: its IndexErrors too), assignment writes through np.put (values cycled
    to the indices, as NumPy's flat iterator does); iteration yields its elements."""

    def __init__(self, base: T.Tracer) -> None:
        self.base = base

    def __len__(self) -> int:
        return self.base.size

    def __iter__(self) -> Any:
        return iter(np.ravel(self.base))

    def __getitem__(self, index: Any) -> Any:
        return np.ravel(self.base)[index]

    def __setitem__(self, index: Any, value: Any) -> None:
        if isinstance(index, T.Tracer):
            ind = index
        else:  # the flat positions, with NumPy's IndexError (and message) for a bad index
            try:
                ind = np.arange(self.base.size)[index]
            except IndexError as e:
                raise IndexError(str(e).replace("array", "flat iterator")) from None
        put(self.base, ind, value)

    def __getattr__(self, name: str) -> Any:
        if not name.startswith("_") and hasattr(np.flatiter, name):
            raise T.UnsupportedError(f"ndarray.flat.{name} is not supported by fusejit"
                                     f"{T.where_msg()}")
        raise AttributeError(name)


def _method_view(self: T.Tracer, dtype: Any = None, type: Any = None) -> T.Tracer:
    """ndarray.view: the array itself (no dtype, or its own), or its bits as another integer
    or float dtype of the same item size (bitcast_<dtype>); writing through that view is
    refused, since fusejit's values do not share memory."""
    if type is None and isinstance(dtype, builtins.type) and issubclass(dtype, np.ndarray):
        dtype, type = None, dtype
    if type is not None and type is not np.ndarray:
        raise T.UnsupportedError(f"ndarray.view(type={type.__name__}) (a subclass) is not "
                                 f"supported by fusejit{T.where_msg()}")
    if dtype is None or np.dtype(dtype) == self.dtype:
        return self
    dt = np.dtype(dtype)
    if dt.itemsize != self.dtype.itemsize:
        raise T.UnsupportedError(
            f"ndarray.view({dt}) of a {self.dtype} array (another item size: NumPy changes "
            f"the last axis) is not supported by fusejit{T.where_msg()}")
    if dt not in BITCAST_DTYPES or self.dtype not in BITCAST_DTYPES:
        raise T.UnsupportedError(
            f"ndarray.view({dt}) of a {self.dtype} array is not supported by fusejit"
            f"{T.where_msg()}: integer and float32/float64 bits only")
    out = T.Tracer(T.make_node(f"bitcast_{dt.name}", [self.node], self.shape, dt),
                   scalar=self.scalar)
    out.readonly = ("writing through ndarray.view(dtype) (the same memory as another dtype) "
                    "is not supported by fusejit{where}: compute the new bits and assign "
                    "them back, x[...] = bits.view(x.dtype)")
    return out


def _flat_set(self: T.Tracer, value: Any) -> None:
    """`a.flat = v`: every element, v cycled."""
    FlatIter(self)[...] = value


UFUNCS: dict[np.ufunc, Callable[..., Any]] = {
    np.float_power: float_power,
    np.divmod: divmod_,
    np.modf: modf,
    np.frexp: frexp,
}

METHODS: dict[str, Any] = {"fill": _method_fill, "clip": _method_clip, "put": _method_put,
                           "choose": _method_choose, "__round__": _method_round,
                           "flat": property(FlatIter, _flat_set), "view": _method_view}
