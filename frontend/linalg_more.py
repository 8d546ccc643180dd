"""np.linalg.tensorsolve and np.linalg.cond of traced arrays, as NumPy computes them.

- tensorsolve: the axes moved, the operand reshaped to a square matrix (NumPy's LinAlgError
  when it cannot be) and np.linalg.solve (np.linalg.tensorinv traces through NumPy's own
  code: frontend/numpy_lib.py).
- cond: for p None, 2 and -2 the ratio of the extreme singular values; for 1, -1, inf, -inf
  and 'fro' norm(x, p) * norm(inv(x), p) with the inverse's errors ignored (an `inv_nan`
  node: NaN for a singular matrix, never LinAlgError); a NaN result turned to inf unless the
  matrix holds a NaN, as NumPy does.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from . import tracer as T
from .lapack import lapack_node, stacked_square, svd


def tensorsolve(a: Any, b: Any, axes: Any = None) -> T.Tracer:
    ta, tb = T.as_tracer(a), T.as_tracer(b)
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


def cond(x: Any, p: Any = None) -> Any:
    t = T.as_tracer(x)
    if t.size == 0 and t.ndim >= 2 and t.shape[-1] * t.shape[-2] == 0:
        raise np.linalg.LinAlgError("cond is not defined on empty arrays")
    if isinstance(p, T.Tracer) or (p is not None and p not in (2, -2, 1, -1, np.inf, -np.inf,
                                                             "fro")):
        return np.linalg.cond(np.eye(2), p)  # NumPy's error for an unknown order
    if p is None or (not isinstance(p, str) and p in (2, -2)):
        s = svd(t, compute_uv=False)
        r = s[..., -1] / s[..., 0] if p == -2 else s[..., 0] / s[..., -1]
    else:
        t = stacked_square(t)
        dtype = np.linalg.inv(np.eye(1, dtype=t.dtype)).dtype  # NumPy's result dtype
        wide = np.dtype(np.float64)
        invx = lapack_node(t, "inv_nan", t.shape, wide, wide)
        r = np.linalg.norm(t.astype(wide), p, axis=(-2, -1)) * np.linalg.norm(
            invx, p, axis=(-2, -1))
        r = r.astype(dtype)
    r = np.where(np.isnan(r) & ~np.isnan(t).any(axis=(-2, -1)), np.inf, r).astype(r.dtype)
    return T.Tracer(r.node, scalar=True) if r.ndim == 0 else r


HANDLERS: dict[Callable[..., Any], Callable[..., Any]] = {np.linalg.tensorsolve: tensorsolve,
                                                          np.linalg.cond: cond}
