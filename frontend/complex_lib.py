"""np.nan_to_num and np.real_if_close of complex arrays (real ones run NumPy's own code,
frontend/numpy_lib.py).

nan_to_num fixes each part as NumPy's does (NaN, +Inf and -Inf of the original part replaced
by `nan`, `posinf`, `neginf`, cast to the part's dtype) and packs the parts back, every
other value kept bit for bit; copy=False writes the caller's array as NumPy does.
real_if_close returns a dtype NumPy picks from the values (the real part where every
imaginary part is below `tol`, else the complex array): fusejit compiles the real part and
raises errors.Status.REAL_IF_CLOSE when the program runs on values NumPy would have left
complex (check_real_if_close), never returning what NumPy would not.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from ..errors import UnsupportedError
from . import tracer as T
from .numpy_lib import numpy_code

_NAN_TO_NUM = numpy_code(np.nan_to_num)
_REAL_IF_CLOSE = numpy_code(np.real_if_close)


def _part_value(v: Any, part: np.dtype) -> Any:
    """A replacement value in the part's dtype, as np.copyto casts it."""
    if isinstance(v, T.Tracer):
        return v.astype(part)
    with np.errstate(all="ignore"):
        return np.asarray(v).astype(part)[()]


def nan_to_num(x: Any, copy: bool = True, nan: Any = 0.0, posinf: Any = None,
               neginf: Any = None) -> Any:
    """np.nan_to_num: complex Tracers part by part, anything else through NumPy's code."""
    if not (isinstance(x, T.Tracer) and x.dtype.kind == "c"):
        return _NAN_TO_NUM(x, copy=copy, nan=nan, posinf=posinf, neginf=neginf)
    part = np.empty(0, x.dtype).real.dtype
    info = np.finfo(part)
    vnan = _part_value(nan, part)
    vpos = _part_value(info.max if posinf is None else posinf, part)
    vneg = _part_value(info.min if neginf is None else neginf, part)

    def fix(d: T.Tracer) -> T.Tracer:
        out = np.where(np.isneginf(d), vneg, d).astype(part)
        out = np.where(np.isposinf(d), vpos, out).astype(part)
        return np.where(np.isnan(d), vnan, out).astype(part)

    re, im = fix(np.real(x)), fix(np.imag(x))
    node = T.make_node("complex_pack", [re.node, im.node], x.shape, x.dtype)
    result = T.Tracer(node)
    if not copy:
        x[...] = result
        result = x
    return T.Tracer(result.node, scalar=True) if x.ndim == 0 else result


def real_if_close(a: Any, tol: Any = 100) -> Any:
    """np.real_if_close: for a complex Tracer the real part, checked when the program runs."""
    if not (isinstance(a, T.Tracer) and a.dtype.kind == "c"):
        return _REAL_IF_CLOSE(a, tol=tol)
    if isinstance(tol, T.Tracer):
        raise UnsupportedError(f"np.real_if_close with a traced tol is not supported by "
                               f"fusejit{T.where_msg()}: pass tol as a constant")
    if tol > 1:
        tol = np.finfo(a.dtype).eps * tol
    close = np.all(np.less(np.abs(np.imag(a)), tol))
    bad = T.Tracer(T.make_node("check_real_if_close", [np.logical_not(close).node], (),
                               np.dtype(bool)))
    real = np.real(a)
    return np.where(bad, real.dtype.type(0), real).astype(real.dtype)


HANDLERS: dict[Callable[..., Any], Callable[..., Any]] = {
    np.nan_to_num: nan_to_num, np.real_if_close: real_if_close,
}
