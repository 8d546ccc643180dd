"""Views at trace time: broadcasting, transposes, basic indexing and split as `view` nodes.

Every view is one op, `view`, with attrs `start` (per input axis) and `dims` (per output dim:
(input axis or -1, step)); out[i] = in[start + sum_d step_d * i_d along axis_d]. A view of a
view composes into a single view at trace time, so chains never reach the lowering.
"""

from __future__ import annotations

import operator
from typing import Any

import numpy as np

from . import tracer as T
from .ir import Node


def view_node(base: Node, start: tuple[int, ...], dims: tuple[tuple[int, int], ...],
              shape: tuple[int, ...]) -> Node:
    """A `view` of `base`, composed with `base` when `base` is itself a view. (A Tracer
    linked to a merged reshape has start None: see frontend.reshape.rederive.)"""
    if start is None:
        from .reshape import rederive

        return rederive(base, shape)
    if base.op == "view":
        inner_start, inner_dims = base.attrs["start"], base.attrs["dims"]
        new_start = list(inner_start)
        for d1, (axis, step) in enumerate(inner_dims):
            if axis >= 0:
                new_start[axis] += step * start[d1]
        new_dims = []
        for axis2, step2 in dims:
            if axis2 < 0 or inner_dims[axis2][0] < 0:
                new_dims.append((-1, 0))
            else:
                axis1, step1 = inner_dims[axis2]
                new_dims.append((axis1, step1 * step2))
        start, dims, base = tuple(new_start), tuple(new_dims), base.inputs[0]
    dims = tuple((a, s) if (a >= 0 and n != 1) else (-1, 0) for (a, s), n in zip(dims, shape))
    if (shape == base.shape and not any(start)
            and dims == tuple((i, 1) if n != 1 else (-1, 0) for i, n in enumerate(shape))):
        return base
    return T.make_node("view", [base], shape, base.dtype, start=tuple(start), dims=dims)


def make_view(t: T.Tracer, start: tuple[int, ...], dims: tuple[tuple[int, int], ...],
              shape: tuple[int, ...], scalar: bool = False, readonly: bool = False) -> T.Tracer:
    """A view of `t` as a Tracer linked to `t`, so in-place updates reach both (a NumPy
    scalar result is a copy, not a view, and is not linked)."""
    out = T.Tracer(view_node(t.node, start, dims, shape), scalar=scalar)
    if not scalar and not t.scalar and t.weak is None:
        out.parent, out.vargs, out.seen = t, (start, dims, shape), t.version
        out.readonly = readonly or t.readonly
    return out


def broadcast_to(t: T.Tracer, shape: tuple[int, ...]) -> T.Tracer:
    shape = tuple(operator.index(s) for s in shape)
    np.broadcast_to(np.empty(t.shape, dtype=[]), shape)  # NumPy's own check and error
    lead = len(shape) - t.ndim
    dims = tuple((-1, 0) if d < lead or t.shape[d - lead] == 1 else (d - lead, 1)
                 for d in range(len(shape)))
    return make_view(t, (0,) * t.ndim, dims, shape, readonly=True)


def transpose(t: T.Tracer, axes: Any) -> T.Tracer:
    perm = tuple(range(t.ndim))[::-1] if axes is None else tuple(
        operator.index(a) for a in axes)
    np.empty(t.shape, dtype=[]).transpose(perm)  # NumPy's checks and errors
    perm = tuple(a % t.ndim for a in perm) if t.ndim else perm
    shape = tuple(t.shape[a] for a in perm)
    # NumPy: a scalar's transpose is the scalar; a 0-d array's is a 0-d array.
    return make_view(t, (0,) * t.ndim, tuple((a, 1) for a in perm), shape,
                     scalar=t.scalar and not shape)


def basic_index(t: T.Tracer, index: Any) -> T.Tracer:
    """x[index] for integers, slices (any step), None and Ellipsis."""
    start, dims, shape, scalar = index_view(t, index)
    return make_view(t, start, dims, shape, scalar=scalar)


def expand_index(index: tuple, ndim: int) -> list[Any]:
    """`index` with its Ellipsis (or the missing trailing axes) spelled out as full slices:
    one entry per axis of an array of `ndim` dims, plus the None entries. NumPy's errors
    for two ellipses and for too many indices."""
    n_real = sum(1 for ix in index if ix is not None and ix is not Ellipsis)
    ellipses = sum(1 for ix in index if ix is Ellipsis)
    if ellipses > 1:
        raise IndexError("an index can only have a single ellipsis ('...')")
    if n_real > ndim:
        raise IndexError(f"too many indices for array: array is {ndim}-dimensional, but "
                         f"{n_real} were indexed")
    expanded: list[Any] = []
    for ix in index:
        expanded.extend([slice(None)] * (ndim - n_real) if ix is Ellipsis else [ix])
    if not ellipses:
        expanded.extend([slice(None)] * (ndim - n_real))
    return expanded


def index_view(t: T.Tracer, index: Any) -> tuple[tuple[int, ...], tuple[tuple[int, int], ...],
                                                 tuple[int, ...], bool]:
    """The view (start, dims, shape) that basic index `index` selects, and whether NumPy
    gives a scalar for it."""
    if not isinstance(index, tuple):
        index = (index,)
    for ix in index:
        if isinstance(ix, (T.Tracer, np.ndarray, list, tuple, bool, np.bool_)):
            raise advanced_index_error(ix)
    expanded = expand_index(index, t.ndim)
    start = [0] * t.ndim
    dims: list[tuple[int, int]] = []
    shape: list[int] = []
    axis = 0
    for ix in expanded:
        if ix is None:
            dims.append((-1, 0))
            shape.append(1)
            continue
        n = t.shape[axis]
        if isinstance(ix, slice):
            lo, hi, step = ix.indices(n)
            length = len(range(lo, hi, step))
            start[axis] = lo if length else 0
            dims.append((axis, step))
            shape.append(length)
        else:
            i = operator.index(ix)
            if not -n <= i < n:
                raise IndexError(f"index {i} is out of bounds for axis {axis} with size {n}")
            start[axis] = i % n
        axis += 1
    # NumPy: indexing down to 0-d gives a NumPy scalar unless the index has an Ellipsis.
    scalar = not shape and Ellipsis not in index
    return tuple(start), tuple(dims), tuple(shape), scalar


def advanced_index_error(ix: Any) -> T.UnsupportedError:
    """The error for an index fusejit cannot compile, saying what to write instead: a boolean
    mask (read or written), or an integer array or traced integer in an assignment (a
    scatter; reading through one is a gather, frontend.gather)."""
    if isinstance(ix, (T.Tracer, np.ndarray)):
        kind = ix.dtype.kind
    elif isinstance(ix, (bool, np.bool_)) or (isinstance(ix, (list, tuple)) and ix and all(
            isinstance(v, (bool, np.bool_)) for v in ix)):
        kind = "b"
    else:
        kind = "i"
    if kind == "b":
        subject = ("indexing with a boolean mask beside index arrays, None, a Python bool, or "
                   "integers a slice away from it,")
        advice = ("x[mask] (with slices, and integers next to the mask) is a selection whose "
                  "length is the data's (README, Boolean masks): index in two steps "
                  "(x[mask][:, :, i]), or keep the whole array: np.where(mask, x, 0), a "
                  "masked reduction (np.sum(x, where=mask)), x[...] = np.where(mask, v, x)")
    else:
        what = "a traced integer" if isinstance(ix, T.Tracer) and ix.ndim == 0 else \
            "an integer array or list"
        subject = f"assigning through {what} (a scatter, x[idx] = v)"
        advice = ("fusejit reads through index arrays (x[idx], np.take) but does not write "
                  "through them. Write slices (x[0:5:2] = v), or build the new array with "
                  "np.where(np.arange(n) == i, v, x)")
    return T.UnsupportedError(f"{subject} is not supported by fusejit{T.where_msg()}: "
                              f"{advice}")


def split(t: T.Tracer, indices_or_sections: Any, axis: int = 0, even: bool = True) -> list:
    """np.split / np.array_split along any axis, as views (NumPy's errors for bad sections)."""
    if t.ndim == 0:
        raise ValueError("array split does not work on 0-d arrays")
    axis = operator.index(axis)
    if not -t.ndim <= axis < t.ndim:
        raise np.exceptions.AxisError(axis, t.ndim)
    axis %= t.ndim
    n = t.shape[axis]
    try:
        sections = operator.index(indices_or_sections)
    except TypeError:
        bounds = [0] + [int(i) for i in indices_or_sections] + [n]
    else:
        if sections <= 0:
            raise ValueError("number sections must be larger than 0.")
        if even and n % sections:
            raise ValueError("array split does not result in an equal division")
        q, r = divmod(n, sections)
        sizes = [q + 1] * r + [q] * (sections - r)
        bounds = [0]
        for s in sizes:
            bounds.append(bounds[-1] + s)
    pieces = []
    for lo, hi in zip(bounds[:-1], bounds[1:]):
        index = [slice(None)] * t.ndim
        index[axis] = slice(lo, hi)
        pieces.append(basic_index(t, tuple(index)))
    return pieces
