"""Piecewise polynomials of scipy.interpolate evaluated at traced points: PPoly and its
subclasses (CubicSpline, PchipInterpolator, Akima1DInterpolator, CubicHermiteSpline), built
from values outside the traced function or inside it from values (`patch`, run by
frontend/scipy_api.py's import hook, makes `_PPolyBase.__call__` come here for a traced x).

SciPy evaluates in compiled code (`_ppoly.evaluate`). Here, as it does: each point's
interval by its breakpoints (the last interval for the right end, the first and last for
points outside when extrapolating, NaN outside otherwise; `extrapolate='periodic'` maps the
points into the range first), then sum over the coefficients from the constant up of
c[k - 1 - j] * s**j with s the distance from the interval's left breakpoint and the power
built by repeated products, SciPy's order of operations (so its bits). A derivative (nu > 0)
evaluates SciPy's own derivative polynomial (to rounding). The coefficients must be values:
a spline built from traced data (CubicSpline(x, traced y)) is not compiled. Also interp1d's
`_evaluate` of traced points (interp1d_evaluate), and interp1d built from traced x or y (its
kinds that need no spline: SciPy's own constructor and evaluation on traced arrays).
"""

from __future__ import annotations

import functools
import sys
from collections.abc import Callable
from typing import Any

import numpy as np

from ..errors import UnsupportedError
from . import tracer as T
from .numpy_lib import guarded
from .numpy_patch import ORIGINALS, WRAPPERS


def _table(a: np.ndarray) -> T.Tracer:
    """A constant array as a traced one, to index with traced positions."""
    return T.Tracer(T.to_node(a, a.dtype))


def ppoly_call(poly: Any, x: Any, nu: int = 0, extrapolate: Any = None) -> Any:
    """poly(x) for a traced x (see the module)."""
    if nu:
        if nu < 0:
            raise UnsupportedError(f"evaluating an antiderivative (nu={nu}) of a "
                                   f"scipy.interpolate.PPoly is not supported by "
                                   f"fusejit{T.where_msg()}")
        return ppoly_call(poly.derivative(nu), x, 0, extrapolate)
    c, bp = np.asarray(poly.c), np.asarray(poly.x, np.float64)
    if extrapolate is None:
        extrapolate = poly.extrapolate
    if bp[-1] < bp[0]:
        raise UnsupportedError(f"a scipy.interpolate.PPoly with decreasing breakpoints, at "
                               f"traced points, is not supported by fusejit{T.where_msg()}")
    t = x if isinstance(x, T.Tracer) else np.asarray(x)
    shape, ndim = t.shape, t.ndim
    xf = np.ravel(t).astype(np.float64)
    if extrapolate == "periodic":
        xf = bp[0] + np.remainder(xf - bp[0], bp[-1] - bp[0])
        extrapolate = False
    k, m = c.shape[0], c.shape[1]
    flat = c.reshape(k, m, -1)
    i = np.clip(np.searchsorted(bp, xf, side="right") - 1, 0, m - 1)
    s = (xf - _table(bp)[i])[:, None]
    res: Any = np.zeros((xf.shape[0], flat.shape[2]), c.dtype)
    z: Any = np.ones((), np.float64)
    for kp in range(k):
        res = res + _table(flat[k - kp - 1])[i] * z
        if kp < k - 1:
            z = z * s
    if not extrapolate:
        out = (xf < bp[0]) | (xf > bp[-1])
        res = np.where(out[:, None], np.nan, res)
    res = res.reshape(shape + c.shape[2:])
    if poly.axis != 0:
        order = list(range(res.ndim))
        order = (order[ndim:ndim + poly.axis] + order[:ndim] + order[ndim + poly.axis:])
        res = np.transpose(res, order)
    return res


def interp1d_evaluate(f: Any, x_new: Any) -> Any:
    """interp1d's `_evaluate` of traced points (its __call__ prepares and reshapes them):
    SciPy's interpolation for the kinds linear (np.interp where SciPy uses it), nearest,
    nearest-up, previous and next, its fill values outside the range, and its ValueError
    when the program meets a point outside with bounds_error (status INTERP1D_BOUNDS)."""
    name = getattr(f._call, "__name__", "")
    if name == "_call_linear_np":
        y_new = np.interp(x_new, f.x, f.y)
    elif name == "_call_linear":
        i = np.clip(np.searchsorted(f.x, x_new), 1, len(f.x) - 1).astype(int)
        lo, hi = i - 1, i
        xs, ys = _table(np.asarray(f.x)), _table(np.asarray(f._y))
        x_lo, x_hi, y_lo, y_hi = xs[lo], xs[hi], ys[lo], ys[hi]
        slope = (y_hi - y_lo) / (x_hi - x_lo)[:, None]
        y_new = slope * (x_new - x_lo)[:, None] + y_lo
    elif name == "_call_nearest":
        i = np.clip(np.searchsorted(f.x_bds, x_new, side=f._side), 0, len(f.x) - 1)
        y_new = _table(np.asarray(f._y))[i.astype(np.intp)]
    elif name == "_call_previousnext":
        i = np.clip(np.searchsorted(f._x_shift, x_new, side=f._side), 1 - f._ind,
                    len(f.x) - f._ind).astype(np.intp)
        y_new = _table(np.asarray(f._y))[i + f._ind - 1]
    else:
        raise UnsupportedError(f"scipy.interpolate.interp1d(kind={f._kind!r}) at traced "
                               f"points is not supported by fusejit{T.where_msg()}: its "
                               "spline kinds evaluate a BSpline; use CubicSpline or "
                               "make_interp_spline's PPoly (PPoly.from_spline)")
    if f._extrapolate:
        return y_new
    below, above = x_new < f.x[0], x_new > f.x[-1]
    if f.bounds_error:
        y_new = guarded(y_new, np.any(below | above), "check_interp1d_bounds")
    if y_new.shape[0] == 0:
        return y_new
    shape = (slice(None),) + (None,) * (y_new.ndim - 1)
    fill_below, fill_above = (  # (SciPy's: flattened, or (1,) for 1-d values)
        np.broadcast_to(np.ravel(v), (1,) if y_new.ndim == 1 else y_new.shape[1:]).reshape(
            y_new.shape[1:]) for v in (f._fill_value_below, f._fill_value_above))
    y_new = np.where(below[shape], fill_below.astype(y_new.dtype), y_new)
    return np.where(above[shape], fill_above.astype(y_new.dtype), y_new)


def _dispatching(cls: type, method: str, impl: str, applies: Callable[[Any], bool]) -> None:
    """cls.method, sending a call whose first argument is traced (by the copy of fusejit
    that traces it) to this module's `impl` when `applies(self)`."""
    original = vars(cls).get(method)
    if original is None or getattr(original, "__fusejit_original__", None) is not None:
        return

    @functools.wraps(original)
    def call(self: Any, x: Any, *args: Any, **kwargs: Any) -> Any:
        kind = type(x)
        if getattr(kind, "__fusejit_tracer__", False) and applies(self):
            package = kind.__module__.rpartition(".")[0]
            return getattr(sys.modules[f"{package}.scipy_interp"], impl)(self, x, *args,
                                                                          **kwargs)
        return original(self, x, *args, **kwargs)

    call.__fusejit_original__ = original  # type: ignore[attr-defined]
    setattr(cls, method, call)


def patch(module: Any) -> None:
    """Install the dispatchers in scipy.interpolate._interpolate (scipy_api's import hook):
    PPoly's __call__ (its base class's) and interp1d's _evaluate."""
    base, ppoly = getattr(module, "_PPolyBase", None), getattr(module, "PPoly", None)
    if base is not None and ppoly is not None:
        _dispatching(base, "__call__", "ppoly_call", lambda poly: isinstance(poly, ppoly))
    interp1d = getattr(module, "interp1d", None)
    if interp1d is not None:
        _dispatching(interp1d, "_evaluate", "interp1d_evaluate", lambda f: True)
    # interp1d(x, y) copies its data with `from numpy import array`: NumPy's array, which
    # takes a traced x or y as np.array does while tracing (frontend/numpy_patch.py)
    if getattr(module, "array", None) is ORIGINALS["array"]:
        module.array = WRAPPERS["array"]
