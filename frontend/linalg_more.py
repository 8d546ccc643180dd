"""np.linalg.tensorsolve of traced arrays, as NumPy computes it: the axes moved, the operand
reshaped to a square matrix (NumPy's LinAlgError when it cannot be) and np.linalg.solve.
(np.linalg.tensorinv traces through NumPy's own code: frontend/numpy_lib.py.)"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from . import tracer as T


def _tracer(x: Any) -> T.Tracer:
    return x if isinstance(x, T.Tracer) else T.Tracer(T.const_node(np.asarray(x)))


def tensorsolve(a: Any, b: Any, axes: Any = None) -> T.Tracer:
    ta, tb = _tracer(a), _tracer(b)
    an = ta.ndim
    if axes is not None:
        order = list(range(an))
        for k in axes:
            order.remove(k)
            order.insert(an, k)
        ta = np.transpose(ta, order)
    oldshape = ta.shape[-(an - tb.ndim):]
    prod = int(np.prod(oldshape))
    if ta.size != prod ** 2:
        raise np.linalg.LinAlgError(
            "Input arrays must satisfy the requirement prod(a.shape[b.ndim:]) == "
            "prod(a.shape[:b.ndim])")
    res = np.linalg.solve(np.reshape(ta, (prod, prod)), np.ravel(tb))
    return np.reshape(res, oldshape)


HANDLERS: dict[Callable[..., Any], Callable[..., Any]] = {np.linalg.tensorsolve: tensorsolve}
