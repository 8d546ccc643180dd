"""np.ravel_multi_index of traced coordinates (constant dims), as NumPy computes it: the
coordinates broadcast together, each wrapped or clipped by its mode, or checked ('raise':
a coordinate outside its dimension raises NumPy's ValueError when the program runs, through
the UNRAVEL_RANGE check np.unravel_index uses), and summed with the C or Fortran strides
into intp. (np.unravel_index is frontend/everyday.py's.)"""

from __future__ import annotations

import operator
from collections.abc import Callable
from typing import Any

import numpy as np

from . import tracer as T


def ravel_multi_index(multi_index: Any, dims: Any, mode: Any = "raise",
                      order: str = "C") -> T.Tracer:
    coords = [T.as_tracer(c) for c in multi_index]
    shape = (operator.index(dims),) if np.ndim(dims) == 0 else tuple(
        operator.index(d) for d in dims)
    # NumPy's errors (the count of coordinates, their dtypes, modes, order, dims)
    np.ravel_multi_index(tuple(np.zeros(c.shape, c.dtype) for c in coords), shape, mode,
                         order)
    modes = (mode,) * len(shape) if isinstance(mode, str) else tuple(mode)
    strides, step = [0] * len(shape), 1
    for ax in (range(len(shape) - 1, -1, -1) if order == "C" else range(len(shape))):
        strides[ax] = step
        step *= shape[ax]
    bcast = np.broadcast_shapes(*(c.shape for c in coords))
    flat = None
    bad = None
    for c, n, m, st in zip(coords, shape, modes, strides):
        i = np.broadcast_to(c.astype(np.intp), bcast)
        if m == "wrap":
            i = np.remainder(i, n) if n else i
        elif m == "clip":
            i = np.clip(i, 0, max(n - 1, 0))
        else:
            out = (i < 0) | (i >= n)
            bad = out if bad is None else bad | out
        term = i * st
        flat = term if flat is None else flat + term
    if bad is not None:
        check = T.Tracer(T.make_node("check_unravel_range", [np.any(bad).node], (),
                                     np.dtype(bool)))
        flat = np.where(check, np.zeros((), np.intp), flat)
    result = flat.astype(np.intp)
    result.scalar = result.shape == ()
    return result


HANDLERS: dict[Callable[..., Any], Callable[..., Any]] = {
    np.ravel_multi_index: ravel_multi_index}
