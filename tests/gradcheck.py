"""Central finite differences in float64, the reference the gradient tests compare with."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np


def numeric_grad(f: Callable[..., Any], args: list[Any], argnum: int,
                 eps: float = 1e-6) -> np.ndarray:
    """d f(*args) / d args[argnum], element by element (f returns a scalar)."""
    x = np.array(args[argnum], dtype=np.float64)
    out = np.zeros_like(x)
    flat, gflat = x.reshape(-1), out.reshape(-1)
    for k in range(flat.size):
        old = flat[k]
        h = eps * max(1.0, abs(old))
        flat[k] = old + h
        hi = float(f(*args[:argnum], x.copy(), *args[argnum + 1:]))
        flat[k] = old - h
        lo = float(f(*args[:argnum], x.copy(), *args[argnum + 1:]))
        flat[k] = old
        gflat[k] = (hi - lo) / (2 * h)
    return out


def check_grad(f: Callable[..., Any], args: list[Any], argnum: int, got: Any,
               rtol: float = 1e-6, atol: float = 1e-7) -> None:
    """fusejit's gradient `got` equals the finite difference of f, with its argument's shape
    and dtype."""
    want = numeric_grad(f, args, argnum)
    got = np.asarray(got)
    assert got.shape == np.shape(args[argnum]), (got.shape, np.shape(args[argnum]))
    assert got.dtype == np.asarray(args[argnum]).dtype
    np.testing.assert_allclose(got, want, rtol=rtol, atol=atol)


def directional(f: Callable[..., Any], args: list[Any], argnums: list[int],
                dirs: list[np.ndarray], eps: float) -> float:
    """The central difference of f along the directions `dirs` of the arguments `argnums`."""
    return (_moved(f, args, argnums, dirs, eps) - _moved(f, args, argnums, dirs, -eps)) / (
        2 * eps)


def one_sided(f: Callable[..., Any], args: list[Any], argnums: list[int],
              dirs: list[np.ndarray], eps: float) -> tuple[float, float]:
    """The forward and backward differences of f along `dirs`: far apart at a kink (a tie
    of a min or max, |x| at 0), where the central difference is no derivative."""
    mid = _moved(f, args, argnums, dirs, 0.0)
    return ((_moved(f, args, argnums, dirs, eps) - mid) / eps,
            (mid - _moved(f, args, argnums, dirs, -eps)) / eps)


def _moved(f: Callable[..., Any], args: list[Any], argnums: list[int],
           dirs: list[np.ndarray], step: float) -> float:
    moved = list(args)
    for a, d in zip(argnums, dirs):
        moved[a] = np.asarray(args[a], np.float64) + step * d
    return float(f(*moved))
