"""Rearranging functions at trace time: np.flip (fliplr, flipud), np.roll, np.tile,
np.repeat and np.pad, built from views, gathers and concatenation.

Each is what NumPy computes, written with operations fusejit already traces, so the result
fuses into the kernels that use it: a flip is a view (negative steps, linked to its array as
NumPy's flip is a view); tile, repeat and the index modes of pad ('edge', 'wrap', 'reflect',
'symmetric') are one gather by constant index arrays that NumPy itself computes from
`np.arange`; roll and constant padding concatenate slices and constant blocks, each piece
written by the kernel that computes its region. Shapes, dtypes and errors are NumPy's.
"""

from __future__ import annotations

import operator
from collections.abc import Callable
from typing import Any

import numpy as np

from . import tracer as T
from .concat import concatenate
from .gather import gather_by_constants

# np.pad modes whose padded values are copies of the array's elements, found by index
_INDEX_MODES = ("edge", "wrap", "reflect", "symmetric")


def _axes(axis: Any, ndim: int) -> tuple[int, ...]:
    """Normalised axes (NumPy's AxisError and duplicate-axis ValueError)."""
    return tuple(np.lib.array_utils.normalize_axis_tuple(axis, ndim))


def flip(m: Any, axis: Any = None) -> T.Tracer:
    m = T.as_tracer(m)
    axes = tuple(range(m.ndim)) if axis is None else _axes(axis, m.ndim)
    return m[tuple(slice(None, None, -1) if a in axes else slice(None) for a in range(m.ndim))]


def fliplr(m: Any) -> T.Tracer:
    m = T.as_tracer(m)
    if m.ndim < 2:
        raise ValueError("Input must be >= 2-d.")
    return m[:, ::-1]


def flipud(m: Any) -> T.Tracer:
    m = T.as_tracer(m)
    if m.ndim < 1:
        raise ValueError("Input must be >= 1-d.")
    return m[::-1, ...]


def roll(a: Any, shift: Any, axis: Any = None) -> T.Tracer:
    """np.roll: a copy, each rolled axis the concatenation of its two slices."""
    a = T.as_tracer(a)
    if axis is None:
        return roll(np.ravel(a), shift, 0).reshape(a.shape)
    axes = np.lib.array_utils.normalize_axis_tuple(axis, a.ndim, allow_duplicate=True)
    pairs = np.broadcast(np.asarray(shift), np.asarray(axes))  # NumPy's ValueError
    if pairs.ndim > 1:
        raise ValueError("'shift' and 'axis' should be scalars or 1D sequences")
    total = dict.fromkeys(range(a.ndim), 0)
    for sh, ax in pairs:
        total[int(ax)] += operator.index(sh)
    out = a
    for ax, sh in total.items():
        n = a.shape[ax]
        k = sh % n if n else 0
        if k:
            head = tuple(slice(n - k, None) if d == ax else slice(None) for d in range(a.ndim))
            tail = tuple(slice(None, n - k) if d == ax else slice(None) for d in range(a.ndim))
            out = concatenate((out[head], out[tail]), axis=ax)
    return out if out is not a else np.copy(a)


def tile(A: Any, reps: Any) -> T.Tracer:  # noqa: N803 - NumPy's name
    """np.tile: one gather, each axis read at `arange(n * r) % n`."""
    A = T.as_tracer(A)
    tup = tuple(reps) if np.iterable(reps) else (reps,)
    tup = tuple(operator.index(r) for r in tup)
    if any(r < 0 for r in tup):
        raise ValueError("negative dimensions are not allowed")
    d = len(tup)
    src = A if A.ndim >= d else A.reshape((1,) * (d - A.ndim) + A.shape)
    tup = (1,) * (src.ndim - d) + tup
    if all(r == 1 for r in tup):
        return np.copy(src)
    index = [np.arange(n * r) % n if n else np.zeros(0, np.intp)
             for n, r in zip(src.shape, tup)]
    return gather_by_constants(src, index)


def repeat(a: Any, repeats: Any, axis: Any = None) -> T.Tracer:
    """np.repeat with repeats known when tracing: one gather along the axis."""
    a = T.as_tracer(a)
    if isinstance(repeats, T.Tracer):
        raise T.UnsupportedError(
            f"np.repeat with traced repeats is not supported by fusejit{T.where_msg()}: the "
            "result's shape would depend on the data. Pass repeats as a constant or a static "
            "argument (static_argnums=/static_argnames=)")
    if axis is None:
        a, axis = np.ravel(a), 0
    axis = _axes(axis, a.ndim)[0]
    n = a.shape[axis]
    index = np.repeat(np.arange(n), repeats)  # NumPy's own checks and errors
    return gather_by_constants(a, [index if d == axis else None for d in range(a.ndim)])


def pad(array: Any, pad_width: Any, mode: Any = "constant", **kwargs: Any) -> T.Tracer:
    """np.pad in the modes 'constant' (and 'empty', filled with zeros), 'edge', 'wrap',
    'reflect' and 'symmetric' (reflect_type 'even') as gathers and concatenations; the modes
    'maximum', 'minimum', 'mean', 'median', 'linear_ramp' and reflect_type 'odd' through
    NumPy's own code on a traced zero-padded array."""
    array = T.as_tracer(array)
    pad_width = _dict_widths(pad_width, array.ndim)
    if mode in _NUMPY_MODES or (mode in ("reflect", "symmetric")
                                and kwargs.get("reflect_type", "even") == "odd"):
        return _numpy_pad()(array, pad_width, mode, **kwargs)
    if callable(mode) or mode not in ("constant", "empty") + _INDEX_MODES:
        raise T.UnsupportedError(
            f"np.pad(mode={mode!r}) is not supported by fusejit{T.where_msg()}: supported "
            "modes are 'constant', 'empty', 'edge', 'wrap', 'reflect', 'symmetric', "
            "'maximum', 'minimum', 'mean', 'median' and 'linear_ramp'")
    allowed = {"constant": {"constant_values"}, "empty": set(), "edge": set(), "wrap": set(),
               "reflect": {"reflect_type"}, "symmetric": {"reflect_type"}}[mode]
    unknown = set(kwargs) - allowed
    if unknown:
        raise ValueError(f"unsupported keyword arguments for mode '{mode}': {unknown}")
    widths = _pairs(pad_width, array.ndim)
    if (widths < 0).any():
        raise ValueError("index can't contain negative values")
    if mode in _INDEX_MODES:
        if all(b == 0 and e == 0 for b, e in widths):
            return np.copy(array)
        index = []
        for n, (b, e) in zip(array.shape, widths):
            if n == 0 and b + e:
                raise ValueError(f"can't extend empty axis {len(index)} using modes other "
                                 "than 'constant' or 'empty'")
            index.append(np.pad(np.arange(n), (int(b), int(e)), mode=mode) if b or e
                         else None)
        return gather_by_constants(array, index)
    values = _pairs(kwargs.get("constant_values", 0) if mode == "constant" else 0,
                    array.ndim, integers=False)
    out = array
    for ax, ((b, e), (vb, ve)) in enumerate(zip(widths, values)):
        pieces = []
        for width, v in ((b, vb), (e, ve)):
            shape = out.shape[:ax] + (int(width),) + out.shape[ax + 1:]
            fill = np.array(v).astype(array.dtype)  # what assigning v into the array stores
            pieces.append(np.broadcast_to(T.Tracer(T.const_node(fill)), shape))
        if b or e:
            out = concatenate((pieces[0], out, pieces[1]), axis=ax)
    return out if out is not array else np.copy(array)


def _dict_widths(pad_width: Any, ndim: int) -> Any:
    """NumPy 2.4's {axis: width or (before, after)} form of pad_width, as a list of pairs."""
    if not isinstance(pad_width, dict):
        return pad_width
    seq = [(0, 0)] * ndim
    for axis, width in pad_width.items():
        if isinstance(width, int):
            seq[axis] = width, width
        elif isinstance(width, tuple) and len(width) == 2 and all(
                isinstance(w, int) for w in width):
            seq[axis] = width
        else:  # NumPy's typing.assert_never
            raise AssertionError(f"Expected code to be unreachable, but got: {width!r}")
    return seq


# np.pad modes run through NumPy's own code (frontend.numpy_lib), with its two in-place
# helpers replaced by traced equivalents
_NUMPY_MODES = ("maximum", "minimum", "mean", "median", "linear_ramp")
_NUMPY_PAD: list[Callable[..., Any]] = []


def _pad_simple(array: Any, pad_width: Any, fill_value: Any = None) -> tuple[Any, tuple]:
    """NumPy's _pad_simple: the array inside a zero-filled traced array of the padded shape
    (NumPy's is np.empty; every padded element is written before it is read)."""
    padded = pad(array, pad_width) if np.asarray(pad_width).any() else np.copy(array)
    area = tuple(slice(int(b), int(b) + n) for n, (b, _) in zip(array.shape, pad_width))
    return padded, area


def _round_if_needed(arr: Any, dtype: np.dtype) -> None:
    """NumPy's arr.round(out=arr) for integer dtypes, as an assignment."""
    if np.issubdtype(dtype, np.integer):
        arr[...] = np.round(arr)


def _numpy_pad() -> Callable[..., Any]:
    if not _NUMPY_PAD:
        from .numpy_lib import traced_function

        fn = traced_function(np.pad._implementation)  # type: ignore[attr-defined]
        fn.__globals__["_pad_simple"] = _pad_simple
        fn.__globals__["_round_if_needed"] = _round_if_needed
        _NUMPY_PAD.append(fn)
    return _NUMPY_PAD[0]


def _pairs(x: Any, ndim: int, integers: bool = True) -> np.ndarray:
    """NumPy's broadcasting of pad widths or values to one (before, after) pair per axis."""
    arr = np.asarray(x)
    if integers:
        if arr.dtype.kind not in "iu" and arr.size:
            raise TypeError("`pad_width` must be of integral type.")
        arr = arr.astype(np.intp)
    try:
        return np.broadcast_to(arr, (ndim, 2))
    except ValueError:
        raise ValueError(f"Unable to create correctly shaped tuple from {x}") from None


HANDLERS: dict[Callable[..., Any], Callable[..., Any]] = {
    np.flip: flip, np.fliplr: fliplr, np.flipud: flipud, np.roll: roll, np.tile: tile,
    np.repeat: repeat, np.pad: pad,
}
