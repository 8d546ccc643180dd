"""The indices of a traced mask: np.nonzero, np.where(cond), np.flatnonzero, np.argwhere and
x.nonzero() give selections (frontend/masked.py) of index grids, and those index arrays
index other arrays.

np.nonzero(m)[j] is, as a selection, the grid of axis j's positions (np.indices) where m is
true: reducing it works like any selection's (`np.nonzero(m)[0].max()` is the last true
row), and `x[np.nonzero(m)]`, `x[np.flatnonzero(m)]`, `x[:, np.where(m)[0]]` gather x at
every position of the grid (where the mask is false at index 0, which is never read) as a
selection by the same mask. Writing through them is writing through the mask, when they are
the positions of x's own axes (`x[np.nonzero(x > 0)] = 0`, x[np.where(m)] with m of x's
leading shape).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from . import tracer as T
from .known import holds_tracer, known_value
from .masked import Selection, refusal


def _known(a: Any) -> np.ndarray | None:
    """`a`'s value when it is known while tracing (then NumPy's own function answers)."""
    if isinstance(a, T.Tracer):
        return known_value(a.node)
    return None if holds_tracer(a) else np.asarray(a)


def _mask(a: Any, name: str) -> T.Tracer:
    t = T.as_tracer(a)
    if t.ndim == 0:
        raise ValueError(f"Calling {name} on 0d arrays is not allowed. Use "
                         "np.atleast_1d(scalar).nonzero() instead. If the context of this "
                         "error is of the form `arr[nonzero(cond)]`, just use `arr[cond]`.")
    return t if t.dtype == np.bool_ else np.not_equal(t, 0)


def _grid(shape: tuple[int, ...], axis: int) -> T.Tracer:
    """The positions along `axis` of an array of `shape` (np.indices(shape)[axis]): a
    constant as long as that axis, broadcast (no constant of the mask's size)."""
    ix = np.arange(shape[axis], dtype=np.intp).reshape(
        tuple(n if i == axis else 1 for i, n in enumerate(shape)))
    return np.broadcast_to(T.Tracer(T.const_node(ix)), shape)


class _Positions(Selection):
    """np.nonzero(m)[axis] (or np.flatnonzero(m): axis None, m raveled): a selection of
    the positions along m's axis, which indexing and writing through it recognise."""

    def __init__(self, mask: T.Tracer, axis: int | None) -> None:
        values = _grid(mask.shape, axis if axis is not None else 0)
        super().__init__(values, mask, 0,
                         label="np.flatnonzero(m)" if axis is None else "np.nonzero(m)")
        self.axis = axis


def nonzero(a: Any) -> tuple[Any, ...]:
    value = _known(a)
    if value is not None:
        return np.nonzero(value)
    m = _mask(a, "nonzero")
    return tuple(_Positions(m, j) for j in range(m.ndim))


def flatnonzero(a: Any) -> Any:
    value = _known(a)
    if value is not None:
        return np.flatnonzero(value)
    m = np.ravel(_mask(np.atleast_1d(a) if np.ndim(a) == 0 else a, "flatnonzero"))
    return _Positions(m, None)


def argwhere(a: Any) -> Selection:
    """np.argwhere(m): the (k, m.ndim) positions, a selection with one axis after k."""
    value = _known(a)
    if value is not None:
        return np.argwhere(value)
    t = T.as_tracer(a)
    m = np.reshape(t, (1,)) if t.ndim == 0 else t
    m = m if m.dtype == np.bool_ else np.not_equal(m, 0)
    grids = np.stack([_grid(m.shape, j) for j in range(m.ndim)], axis=-1)
    if t.ndim == 0:  # (NumPy: shape (1, 0) or (0, 0))
        grids = np.zeros((1, 0), np.intp)
        grids = T.Tracer(T.const_node(grids))
    return Selection(grids, m, 1, label="np.argwhere(m)")


def _entries(index: Any) -> tuple:
    return index if isinstance(index, tuple) else (index,)


def has_positions(index: Any) -> bool:
    return any(isinstance(e, Selection) for e in _entries(index))


def gather(t: T.Tracer, index: Any) -> Selection:
    """t[index] with selections of indices among the entries (the rest slices): the gather at
    every grid position (index 0 where the mask is false), a selection by the mask."""
    entries = _entries(index)
    if sum(1 for e in entries if e is Ellipsis) == 1:  # spelled out as full slices
        k = entries.index(Ellipsis)
        fill = (slice(None),) * max(t.ndim - (len(entries) - 1), 0)
        entries = entries[:k] + fill + entries[k + 1:]
    sels = [e for e in entries if isinstance(e, Selection)]
    first = sels[0]
    if any(not first.same_mask(s) or s.ndim != 1 for s in sels) or not all(
            isinstance(e, (Selection, slice)) for e in entries):
        raise refusal("indexing with index arrays taken from a mask beside other index "
                      "arrays, integers or None (or from several masks)")
    if any(s.dtype.kind not in "iu" for s in sels):
        raise IndexError("arrays used as indices must be of integer (or boolean) type")
    if any(t.shape[i] == 0 for i, e in enumerate(entries) if isinstance(e, Selection)):
        raise refusal("indexing an empty axis with a mask's positions")
    arrays = [np.where(s.mask, s.values, 0) for s in sels]
    picked = tuple(arrays.pop(0) if isinstance(e, Selection) else e for e in entries)
    values = t[picked]
    # where the index arrays' dims land: NumPy's rule (adjacent: in their place; else first)
    pos = [i for i, e in enumerate(entries) if isinstance(e, Selection)]
    adjacent = pos == list(range(pos[0], pos[0] + len(pos)))
    lead = pos[0] if adjacent else 0
    post = values.ndim - lead - first.mask.ndim
    return Selection(T.Tracer(values.node), first.mask, post)


def own_mask(t: T.Tracer, index: Any) -> tuple | None:
    """The mask index equivalent to `index` for writing into t (x[np.nonzero(m)] = v with m
    of t's leading shape: x[m] = v), or None."""
    entries = _entries(index)
    if not entries or not all(isinstance(e, _Positions) for e in entries):
        return None
    first = entries[0]
    if first.axis is None:
        ok = len(entries) == 1 and t.ndim >= 1 and first.mask.shape == t.shape[:1]
    else:
        ok = ([e.axis for e in entries] == list(range(first.mask.ndim))
              and all(first.same_mask(e) for e in entries)
              and first.mask.shape == t.shape[:first.mask.ndim])
    return (first.mask,) if ok else None


HANDLERS = {np.nonzero: nonzero, np.flatnonzero: flatnonzero, np.argwhere: argwhere}
