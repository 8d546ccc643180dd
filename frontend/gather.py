"""Gathers at trace time: indexing with integer arrays or traced integers, np.take and
np.take_along_axis, as `gather` nodes (op table: frontend/ops.py, `gather_*`).

`x[index]` where the index holds an integer array (traced, NumPy, or a list) follows NumPy's
advanced indexing: integers beside it count as index arrays too, the index arrays broadcast
together, and their dims replace the indexed axes when those are adjacent in the index (else
they go first). Slices, None and Ellipsis apply first, as a view. The result is a copy, as in
NumPy. Constant indices are checked here (NumPy's IndexError at the first call); traced ones
are checked by the compiled code, which raises the same IndexError.

A traced integer scalar (a Python int or NumPy integer argument, `x.argmax()`) is a basic
index in NumPy, whose result is a view: its gather is linked to the array like a view, so it
reads the array's later value (frontend.tracer), and writing through it writes the array (a
scatter, frontend.scatter).
A boolean mask known while tracing reads as its np.nonzero index arrays; one that depends on
the arguments gives a selection whose length is data (frontend/masked.py).
"""

from __future__ import annotations

import operator
from typing import Any

import numpy as np
from numpy.lib.array_utils import normalize_axis_index

from . import tracer as T
from .mask_index import expand_known_masks, scalar_bool_index, traced_mask
from .masked import select
from .masked_index import gather as gather_positions
from .masked_index import has_positions
from .ops import gather_shape
from .views import advanced_index_error, basic_index, expand_index, index_view, view_node

_INVALID = ("only integers, slices (`:`), ellipsis (`...`), numpy.newaxis (`None`) and integer "
            "or boolean arrays are valid indices")
_NOT_INT = "arrays used as indices must be of integer (or boolean) type"
_MODES = ("raise", "wrap", "clip")

Index = T.Tracer | np.ndarray  # an index array: traced, or a constant


def _index_array(e: Any) -> Index | None:
    """`e` as an index array, None when it is not one (an int, slice, None, Ellipsis)."""
    if isinstance(e, T.Tracer):
        if e.dtype.kind == "b":
            raise advanced_index_error(e)
        if e.dtype.kind not in "iu":
            raise IndexError(_NOT_INT if e.ndim else _INVALID)
        return e
    if isinstance(e, (np.ndarray, list, tuple)):
        arr = np.asarray(e)
        if arr.dtype.kind == "b":
            raise advanced_index_error(arr)
        if arr.size == 0 and arr.dtype.kind == "f":  # an empty list: NumPy takes it as intp
            arr = arr.astype(np.intp)
        if arr.dtype.kind not in "iu":
            raise IndexError(_NOT_INT)
        return arr
    if isinstance(e, (bool, np.bool_)):
        raise advanced_index_error(e)
    return None


def has_index_array(index: Any) -> bool:
    """Whether `x[index]` needs a gather (some entry is an integer array or a traced int)."""
    entries = index if isinstance(index, tuple) else (index,)
    return any(isinstance(e, (T.Tracer, np.ndarray, list, tuple)) for e in entries)


def index_plan(t: T.Tracer, index: Any) -> tuple[tuple[int, ...], tuple, tuple[int, ...],
                                                 Any, bool, bool]:
    """How `t[index]` reads `t` (an index holding an integer array or a traced integer):
    the view (start, dims, shape) that applies the slices and None and keeps every indexed
    axis whole, and its gather node along the indexed view dims; also whether every index
    is a scalar integer (NumPy's basic indexing: a view) and whether the index has an
    Ellipsis."""
    entries = index if isinstance(index, tuple) else (index,)
    parsed: list[Any] = []
    for e in entries:
        if e is None or e is Ellipsis or isinstance(e, slice):
            parsed.append(e)
            continue
        arr = _index_array(e)
        if arr is None:
            try:
                arr = operator.index(e)
            except TypeError:
                raise IndexError(_INVALID) from None
        parsed.append(arr)
    expanded = expand_index(tuple(parsed), t.ndim)
    ellipses = any(e is Ellipsis for e in parsed)
    # Slices and None first, as a view that keeps every indexed axis whole: each entry of
    # `expanded` is one dim of that view.
    start, dims, shape, _ = index_view(t, tuple(
        e if e is None or isinstance(e, slice) else slice(None) for e in expanded))
    picks: list[tuple[int, int, Index]] = []  # (view dim, source axis, index)
    ints = []  # the picks that were Python or NumPy integers
    axis = 0
    for d, e in enumerate(expanded):
        if e is None or isinstance(e, slice):
            axis += e is not None
            continue
        n = t.shape[axis]
        if isinstance(e, int):
            if not -n <= e < n:
                raise IndexError(f"index {e} is out of bounds for axis {axis} with size {n}")
            ints.append(len(picks))
            e = np.asarray(e, np.intp)
        picks.append((d, axis, e))
        axis += 1
    src = view_node(t.node, start, dims, shape)
    axes = tuple(d for d, _, _ in picks)
    node = _gather(src, [(axis, ix) for _, axis, ix in picks], axes, "raise")
    # NumPy indexes with integer scalars (Python ints, NumPy integers: traced ones here)
    # by a view; a 0-d array is an index array, whose result is a copy.
    traced = [ix for _, _, ix in picks if isinstance(ix, T.Tracer)]
    basic = bool(traced) and len(traced) + len(ints) == len(picks) and all(
        ix.ndim == 0 and (ix.scalar or ix.weak is not None) for ix in traced)
    return start, dims, shape, node, basic, ellipses


def getitem(t: T.Tracer, index: Any) -> T.Tracer:
    """x[index] for any mix of integers, slices, None, Ellipsis and integer index arrays;
    boolean arrays as NumPy reads them (frontend/mask_index.py, frontend/masked.py)."""
    if has_positions(index):  # x[np.nonzero(m)], x[np.flatnonzero(m)]
        return gather_positions(t, index)
    picked = scalar_bool_index(t, index)  # x[True], x[..., False]
    if picked is not None:
        return picked
    index = expand_known_masks(t.shape, index)
    if traced_mask(index):
        return select(t, index)
    if not has_index_array(index):
        return basic_index(t, index)
    start, dims, shape, node, basic, ellipses = index_plan(t, index)
    scalar = not node.shape and not ellipses
    out = T.Tracer(node, scalar=scalar)
    if basic and not scalar and not t.scalar and t.weak is None:
        _link(out, t, start, dims, shape, node)
    return out


def _link(out: T.Tracer, t: T.Tracer, start: tuple[int, ...], dims: tuple, shape: tuple,
          gathered: Any) -> None:
    """Make `out` (x[i] for traced integer scalars: a view in NumPy) follow `t`'s value, and
    writes into it (`x[i] += 1`, `row = x[i]; row *= 2`) write `t` (a scatter)."""
    index, attrs = gathered.inputs[1:], gathered.attrs

    def rederive(base: Any) -> Any:
        return T.make_node("gather", [view_node(base, start, dims, shape), *index],
                           gathered.shape, gathered.dtype, **attrs)

    def write(old: Any, value: Any) -> Any:  # writing through it: a scatter (inplace.assign)
        return T.make_node("scatter", [old, value, *index], old.shape, old.dtype, start=start,
                           dims=dims, vshape=shape, axes=attrs["axes"], fn=None, loop=None)

    out.parent, out.vargs, out.seen = t, (rederive, write), t.version
    out.readonly = t.readonly


def _gather(src: Any, index: list[tuple[int, Index]], axes: tuple[int, ...], mode: str) -> Any:
    """The gather node of view node `src` along `axes` (one per index; `axis` is the user's
    axis number, for messages), checking constant indices and NumPy's shape rules."""
    shapes = [ix.shape for _, ix in index]
    try:
        b_shape = np.broadcast_shapes(*shapes)
    except ValueError:
        listed = " ".join("(" + ",".join(map(str, s)) + ("," if len(s) == 1 else "") + ")"
                          for s in shapes)
        raise IndexError("shape mismatch: indexing arrays could not be broadcast together "
                         f"with shapes {listed} ") from None
    nonempty = int(np.prod(b_shape, dtype=np.int64)) > 0
    nodes = []
    for a, (axis, ix) in zip(axes, index):
        n = src.shape[a]
        if n == 0 and nonempty:
            raise IndexError(f"index 0 is out of bounds for axis {axis} with size 0"
                             if mode == "raise" else
                             "cannot do a non-empty take from an empty axes.")
        if isinstance(ix, T.Tracer):
            nodes.append(ix.node)
            continue
        flat = np.asarray(ix).astype(np.intp).reshape(-1)
        if mode == "raise" and flat.size:
            bad = flat[(flat < -n) | (flat >= n)]
            if bad.size:
                raise IndexError(f"index {bad[0]} is out of bounds for axis {axis} with size {n}")
        nodes.append(T.const_node(np.asarray(ix)))
    shape = gather_shape(src.shape, axes, b_shape)
    return T.make_node("gather", [src, *nodes], shape, src.dtype, axes=axes, mode=mode)


def gather_by_constants(t: T.Tracer, index: list[np.ndarray | None]) -> T.Tracer:
    """`t` read at constant 1-D index arrays along its axes (None: the axis as it is), as
    an outer product: out[i0, i1, ...] = t[index0[i0], index1[i1], ...]. One gather node;
    with two or more indexed axes every axis is indexed (an arange where None), so the
    index dims stay in place."""
    picked = [a for a, ix in enumerate(index) if ix is not None]
    if not picked:
        return np.copy(t)
    if len(picked) == 1:
        (a,) = picked
        node = _gather(t.node, [(a, np.asarray(index[a], np.intp))], (a,), "raise")
        return T.Tracer(node)
    full = [(a, _along(a, t.shape, ix)) for a, ix in enumerate(index)]
    return T.Tracer(_gather(t.node, full, tuple(range(t.ndim)), "raise"))


def _along(a: int, shape: tuple[int, ...], ix: np.ndarray | None = None) -> np.ndarray:
    """1-D index array `ix` (an arange over axis `a` of `shape` when None) shaped to run along
    axis a of an outer-product gather."""
    ix = np.arange(shape[a], dtype=np.intp) if ix is None else np.asarray(ix, np.intp)
    return ix.reshape([-1 if d == a else 1 for d in range(len(shape))])


def take(a: T.Tracer, indices: Any, axis: Any = None, mode: str = "raise") -> T.Tracer:
    """np.take(a, indices, axis, mode=...): always a copy; a scalar for a 0-d result."""
    if mode not in _MODES:
        raise ValueError(f"clipmode must be one of 'clip', 'raise', or 'wrap' (got {mode!r})")
    if axis is None:
        a, axis = np.ravel(a), 0
    axis = normalize_axis_index(operator.index(axis), a.ndim)
    ix = _index_array(indices)
    if ix is None:
        ix = np.asarray(operator.index(indices), np.intp)
    node = _gather(a.node, [(axis, ix)], (axis,), mode)
    return T.Tracer(node, scalar=not node.shape)


def take_along_axis(arr: T.Tracer, indices: Any, axis: Any) -> T.Tracer:
    """np.take_along_axis: a gather along every axis, the others indexed by broadcast
    aranges (their index dims line up with `indices`' dims)."""
    ix = _index_array(indices)
    if ix is None:
        raise IndexError(_NOT_INT)
    if axis is None:
        if ix.ndim != 1:
            raise ValueError("when axis=None, `indices` must have a single dimension.")
        arr, axis = np.ravel(arr), 0
    if ix.ndim != arr.ndim:
        raise ValueError("`indices` and `arr` must have the same number of dimensions")
    axis = normalize_axis_index(operator.index(axis), arr.ndim)
    index: list[tuple[int, Index]] = []
    for d in range(arr.ndim):
        index.append((d, ix if d == axis else _along(d, arr.shape)))
    return T.Tracer(_gather(arr.node, index, tuple(range(arr.ndim)), "raise"))
