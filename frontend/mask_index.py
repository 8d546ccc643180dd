"""Boolean arrays in an index, at trace time (read by frontend.gather and frontend.inplace).

NumPy reads a boolean array in an index as the integer arrays of its np.nonzero, in its place;
a 0-d boolean (`x[True]`, `x[..., False]`) as a new axis of length 1 or 0.
A mask whose value is known while tracing (a NumPy array, a list of bools, or a traced array
that depends on no argument: frontend/known.py) becomes those index arrays here, so `x[mask]`
is a gather and `x[mask] = v` a scatter, with shapes fixed when compiling. A mask that depends
on the arguments stays: its selection's length depends on the data (frontend/masked.py).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from . import tracer as T
from .known import known_value
from .views import basic_index


def _is_bool_array(e: Any) -> bool:
    """A boolean array (traced or not, at least 1-d) or a non-empty list of bools."""
    if isinstance(e, (T.Tracer, np.ndarray)):
        return e.dtype == np.bool_ and e.ndim > 0
    if isinstance(e, list) and e:
        flat = e
        while flat and isinstance(flat[0], list):
            flat = flat[0]
        return bool(flat) and isinstance(flat[0], (bool, np.bool_))
    return False


def _consumed(e: Any) -> int:
    """How many axes of the indexed array an index entry consumes (Ellipsis: 0 here)."""
    if e is None or e is Ellipsis or isinstance(e, (bool, np.bool_)):
        return 0
    if _is_bool_array(e):
        return np.ndim(e) if not isinstance(e, T.Tracer) else e.ndim
    if isinstance(e, (T.Tracer, np.ndarray)) and e.dtype == np.bool_:
        return 0  # a 0-d boolean: a new axis, as None
    return 1


def mask_axes(shape: tuple[int, ...], entries: tuple) -> list[int]:
    """The first axis of the indexed array each entry of `entries` reads (None, a 0-d
    boolean: the axis it goes before), with NumPy's IndexError for a boolean array whose
    shape does not match the axes it indexes."""
    used = [_consumed(e) for e in entries]
    total, ndim = sum(used), len(shape)
    if total > ndim:
        raise IndexError(f"too many indices for array: array is {ndim}-dimensional, but "
                         f"{total} were indexed")
    axes, axis = [], 0
    for e, n in zip(entries, used):
        if e is Ellipsis:
            axis += ndim - total
        axes.append(axis)
        if not _is_bool_array(e):
            axis += n
            continue
        for j, m in enumerate(np.shape(e) if not isinstance(e, T.Tracer) else e.shape):
            if m != shape[axis + j]:
                raise IndexError(
                    f"boolean index did not match indexed array along axis {axis + j}; size "
                    f"of axis is {shape[axis + j]} but size of corresponding boolean axis is "
                    f"{m}")
        axis += n
    return axes


def _known_mask(e: Any) -> np.ndarray | None:
    """The value of a boolean-array entry when it is known while tracing, else None."""
    if isinstance(e, T.Tracer):
        return known_value(e.node)
    return np.asarray(e, dtype=bool)


def expand_known_masks(shape: tuple[int, ...], index: Any) -> Any:
    """`index` with each boolean array whose value is known replaced by the index arrays of
    its np.nonzero (NumPy's reading of it); masks that depend on the arguments stay."""
    entries = index if isinstance(index, tuple) else (index,)
    if not any(_is_bool_array(e) for e in entries):
        return index
    mask_axes(shape, entries)  # NumPy's IndexError for a mask of the wrong shape
    out: list[Any] = []
    for e in entries:
        value = _known_mask(e) if _is_bool_array(e) else None
        if value is None:
            out.append(e)
        else:
            out.extend(np.nonzero(value))
    return tuple(out)


def traced_mask(index: Any) -> bool:
    """Whether `index` holds a traced boolean array (after expand_known_masks: one that
    depends on the arguments), 0-d ones included."""
    entries = index if isinstance(index, tuple) else (index,)
    return any(isinstance(e, T.Tracer) and e.dtype == np.bool_ for e in entries)


def _known_bool0(e: Any) -> bool | None:
    """The value of a 0-d boolean index entry known while tracing (a Python or NumPy bool,
    a 0-d bool array, a traced one that depends on no argument), else None."""
    if isinstance(e, (bool, np.bool_)):
        return bool(e)
    if isinstance(e, np.ndarray) and e.dtype == np.bool_ and e.ndim == 0:
        return bool(e)
    if isinstance(e, T.Tracer) and e.dtype == np.bool_ and e.ndim == 0:
        value = known_value(e.node)
        return None if value is None else bool(value)
    return None


def _is_int(e: Any) -> bool:
    return isinstance(e, (int, np.integer)) and not isinstance(e, (bool, np.bool_))


def scalar_bool_index(t: T.Tracer, index: Any) -> T.Tracer | None:
    """`x[b]` for one known 0-d boolean `b` among integers, slices, None and Ellipsis, as
    NumPy reads it: a new axis of length 1 (True) or 0 (False) where `b` stands, or first when
    the integers beside it (advanced indices too, then) are not adjacent to it; None for
    any other index."""
    entries = index if isinstance(index, tuple) else (index,)
    found = [k for k, e in enumerate(entries) if _known_bool0(e) is not None]
    if len(found) != 1:
        return None
    k = found[0]
    rest = [e for j, e in enumerate(entries) if j != k]
    if not all(e is None or e is Ellipsis or isinstance(e, slice) or _is_int(e) for e in rest):
        return None
    advanced = [j for j, e in enumerate(entries) if j == k or _is_int(e)]
    adjacent = advanced == list(range(advanced[0], advanced[-1] + 1))
    out = basic_index(t, entries[:k] + (None,) + entries[k + 1:])
    axis = sum(1 for e in entries[:k] if e is None or isinstance(e, slice))
    if Ellipsis in entries[:k]:
        consumed = sum(1 for e in rest if isinstance(e, slice) or _is_int(e))
        axis += t.ndim - consumed
    if not adjacent:
        out = np.moveaxis(out, axis, 0)
        axis = 0
    if not _known_bool0(entries[k]):
        out = out[(slice(None),) * axis + (slice(0, 0),)]
    return out
