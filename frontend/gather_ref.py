"""What a gather (x[idx], np.take) means, for the op table and every stage that places its
dims: NumPy's placement of the index dims (gather_dims, gather_shape) and the reference
evaluation (gather_reference)."""

from __future__ import annotations

from typing import Any

import numpy as np


def gather_dims(ndim: int, axes: tuple[int, ...], nb: int) -> tuple[int, list[int]]:
    """Where a gather puts its dims: (first output dim of the index arrays' broadcast shape,
    the source axis of every other output dim in order). NumPy's rule: the index dims replace
    the indexed axes when those are adjacent, and go first when they are not."""
    rest = [a for a in range(ndim) if a not in axes]
    adjacent = list(axes) == list(range(axes[0], axes[0] + len(axes)))
    return (axes[0] if adjacent else 0), rest


def gather_shape(src: tuple[int, ...], axes: tuple[int, ...],
                 index: tuple[int, ...]) -> tuple[int, ...]:
    """The shape of a gather of `src` along `axes` by index arrays broadcast to `index`."""
    first, rest = gather_dims(len(src), axes, len(index))
    other = [src[a] for a in rest]
    return tuple(other[:first]) + tuple(index) + tuple(other[first:])


def gather_reference(src: np.ndarray, *index: np.ndarray, axes: tuple[int, ...],
                     mode: str) -> np.ndarray:
    """Evaluate a `gather`: src[..., index_k along axes_k, ...] with NumPy's placement of
    the index dims; `mode` raise (IndexError), wrap or clip as in np.take."""
    picks: list[Any] = [slice(None)] * src.ndim
    for a, ix in zip(axes, index):
        ix = np.asarray(ix).astype(np.intp)  # what NumPy's indexing does with index arrays
        n = src.shape[a]
        if mode == "wrap" and n:
            ix = ix % n
        elif mode == "clip" and n:
            ix = np.clip(ix, 0, n - 1)
        picks[a] = ix
    return np.array(src[tuple(picks)])
