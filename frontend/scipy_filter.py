"""scipy.signal.lfilter and sosfilt of traced signals (installed by frontend/scipy_api.py),
and through them SciPy's own filtfilt, sosfiltfilt and the other Python code that calls them.

SciPy filters in compiled code (`_linear_filter`, direct form II transposed). Here an IIR
filter (len(a) > 1) is a `scan` node of fn "lfilter" (lowering/scan.py; codegen/cfilter.py):
each row along `axis` runs in order with a state of K - 1 values (K = max(len(a), len(b)),
both zero-padded to K and divided by a[0] in the result's dtype, as SciPy does), started from
zi's values or zeros, every operation SciPy's, so the output is SciPy's to the bit. The final
state zf (returned when zi is given) replays SciPy's last state updates from the last K - 1
inputs and outputs (the same operations), also SciPy's bits. An FIR filter (len(a) == 1) is
SciPy's path: the full convolution with b / a[0] (np.convolve for 1-d signals, a sum over
the taps along the axis otherwise: the same products, perhaps added in another order), zi
added to its first values, zf its last.

sosfilt is one scan of fn "sosfilt" whose points run every section in turn (SciPy's
_sosfilt's loop, which orders each section's operations its own way: codegen/cfilter.py);
with zi, a scan a section, so that zf is replayed from each section's inputs and outputs.

The coefficients are inputs of the scan like the signal (so a global array of coefficients,
which a jitted function reads at every call, or traced ones, work), normalised by traced
divisions (the same IEEE operations); an a[0] of 0 (lfilter) or sos[:, 3] other than 1
(sosfilt) fails when the program runs with SciPy's ValueError where the coefficients are
traced. Argument errors and the result's dtype are SciPy's: its own function runs on
stand-ins of the arguments' shapes and dtypes. Complex and long double filters are refused
by name.
"""

from __future__ import annotations

from typing import Any

import numpy as np
from numpy.lib.array_utils import normalize_axis_index

from ..errors import UnsupportedError
from . import tracer as T
from .numpy_lib import guarded, quietly, value_or_traced
from .scipy_signal import full_convolution


def _refuse(what: str) -> UnsupportedError:
    return UnsupportedError(f"scipy.signal.lfilter {what} is not supported by "
                            f"fusejit{T.where_msg()}")


def _stand_in(v: Any, fill: float = 0.0) -> np.ndarray:
    return np.full(v.shape, fill, v.dtype) if isinstance(v, T.Tracer) else np.asarray(v)


def _signal_stand_in(x: Any, axis: Any) -> np.ndarray:
    """Zeros like `x` for SciPy's own call, at most 2 long along `axis` (its errors and
    dtype do not depend on the signal's length; a long signal would be filtered for
    nothing)."""
    shape = list(x.shape)
    try:
        shape[normalize_axis_index(axis, x.ndim)] = min(shape[axis], 2)
    except (TypeError, np.exceptions.AxisError):
        pass  # (SciPy's own error, from the full shape)
    return np.zeros(tuple(shape), x.dtype)


def lfilter(b: Any, a: Any, x: Any, axis: int = -1, zi: Any = None) -> Any:
    """scipy.signal.lfilter with traced arrays (see the module)."""
    from scipy import signal

    b, a = (v if isinstance(v, T.Tracer) else np.asarray(v) for v in (b, a))
    b, a = np.atleast_1d(b), np.atleast_1d(a)
    x = value_or_traced(x)
    zi = None if zi is None else value_or_traced(zi)
    # SciPy's errors and result dtype: its own lfilter on stand-ins (a traced a: ones)
    zeros = _signal_stand_in(x, axis)
    args = (_stand_in(b), _stand_in(a, 1.0), zeros, axis)
    out = (quietly(signal.lfilter, *args) if zi is None else
           quietly(signal.lfilter, *args, np.zeros(zi.shape, zi.dtype))[0])
    dtype = np.asarray(out).dtype
    if dtype.kind != "f" or dtype.itemsize > 8:
        raise _refuse(f"in {dtype} (complex or long double filters)")
    axis = normalize_axis_index(axis, x.ndim)
    x = x.astype(dtype)
    b, a = b.astype(dtype), a.astype(dtype)
    if isinstance(a, T.Tracer) and len(a) > 1:  # (SciPy's check, for traced coefficients)
        a = guarded(a, a[0] == 0, "check_lfilter_a0", 1)
    if len(a) == 1:
        return _fir(b / a[0], x, axis, zi)
    k = max(len(a), len(b))
    bn = b if len(b) == k else np.concatenate([b, np.zeros(k - len(b), dtype)])
    an = a if len(a) == k else np.concatenate([a, np.zeros(k - len(a), dtype)])
    a0 = an[0]
    bn, an = bn / a0, an / a0  # (SciPy's normalisation, in the result's dtype)
    shape = list(x.shape)
    shape[axis] = k - 1
    if zi is not None:
        zi = np.broadcast_to(zi, tuple(shape)).astype(dtype)
    if x.shape[axis] == 0:
        if zi is not None:  # (SciPy's zf is then memory it never wrote)
            raise _refuse("of an empty signal with zi (SciPy's final state is then "
                          "undefined)")
        return np.zeros(x.shape, dtype)
    y = _filter_node("lfilter", x, zi, axis, bn, an)
    if zi is None:
        return y
    return y, _final_state(bn, an, x, y, zi, axis)


def _final_state(b: np.ndarray, a: np.ndarray, x: Any, y: Any, zi: Any, axis: int,
                 sos: bool = False) -> Any:
    """zf: the state after the last point, SciPy's updates replayed from its last inputs
    and outputs (z[j] after point s is z[j+1] after s - 1, plus b[j+1] x[s] - a[j+1] y[s],
    in lfilter's order or a sosfilt section's; zi's value before the first point)."""
    k = len(b)
    n = x.shape[axis]
    xm, ym, zm = (np.moveaxis(v, axis, -1) for v in (x, y, zi))

    def z(j: int, s: int) -> Any:
        if s < 0:
            return zm[..., j]
        if j == k - 2:
            return b[j + 1] * xm[..., s] - a[j + 1] * ym[..., s]
        if sos:
            return b[j + 1] * xm[..., s] - a[j + 1] * ym[..., s] + z(j + 1, s - 1)
        return z(j + 1, s - 1) + b[j + 1] * xm[..., s] - a[j + 1] * ym[..., s]

    return np.stack([z(j, n - 1) for j in range(k - 1)], axis=axis)


def _filter_node(fn: str, x: Any, zi: Any, axis: int, b: Any, a: Any) -> Any:
    dt = b.dtype
    ins = [T.to_node(v, dt) for v in (x, b, a)] + ([] if zi is None else [T.to_node(zi, dt)])
    return T.Tracer(T.make_node("scan", ins, x.shape, dt, fn=fn, axis=axis))


def sosfilt(sos: Any, x: Any, axis: int = -1, zi: Any = None) -> Any:
    """scipy.signal.sosfilt with a traced signal, sections or initial state: a scan of fn
    "sosfilt" (SciPy's _sosfilt's operations, to the bit; see the module)."""
    from scipy import signal

    sos = value_or_traced(sos)
    x = value_or_traced(x)
    zi = None if zi is None else value_or_traced(zi)
    zeros = _signal_stand_in(x, axis)
    standin = _stand_in(sos)
    if isinstance(sos, T.Tracer) and sos.ndim == 2 and sos.shape[1] == 6:
        standin[:, 3] = 1.0
    if zi is None:
        dtype = np.asarray(quietly(signal.sosfilt, standin, zeros, axis)).dtype
    else:
        dtype = np.asarray(quietly(signal.sosfilt, standin, zeros, axis,
                                   np.zeros(zi.shape, zi.dtype))[0]).dtype
    if dtype.kind != "f" or dtype.itemsize > 8:
        raise UnsupportedError(f"scipy.signal.sosfilt in {dtype} (complex or long double "
                               f"filters) is not supported by fusejit{T.where_msg()}")
    axis = normalize_axis_index(axis, x.ndim)
    sos = sos.astype(dtype)
    if isinstance(sos, T.Tracer):  # (SciPy's check, for traced sections)
        sos = guarded(sos, np.any(sos[:, 3] != 1), "check_sos_a0", 1)
    y = x.astype(dtype)
    if zi is None:  # every section in one kernel, as SciPy's loop (SciPy refuses an empty x)
        return _filter_node("sosfilt", y, None, axis, sos[:, :3], sos[:, 3:])
    states = []  # (one kernel a section: zf replays each section's last inputs and outputs)
    for s in range(sos.shape[0]):
        b, a = sos[s:s + 1, :3], sos[s:s + 1, 3:]
        z = zi[s].astype(dtype)
        out = _filter_node("sosfilt", y, z, axis, b, a)
        states.append(_final_state(b[0], a[0], y, out, z, axis, sos=True))
        y = out
    return y, np.stack(states, axis=0)


def _fir(b: np.ndarray, x: Any, axis: int, zi: Any) -> Any:
    """SciPy's FIR path: the full convolution along `axis`, zi added to its first len(b) - 1
    values; the output its first n values, zf the rest."""
    n, taps = x.shape[axis], len(b)
    if x.ndim == 1:
        full = np.convolve(b, x) if n else np.zeros(taps - 1, x.dtype)
    else:
        full = np.moveaxis(full_convolution(b, np.moveaxis(x, axis, -1)), -1, axis)
    if zi is not None:
        shape = list(x.shape)
        shape[axis] = taps - 1
        head = np.take(full, np.arange(taps - 1), axis=axis) + np.broadcast_to(
            zi, tuple(shape)).astype(x.dtype)
        full = np.concatenate([head, np.take(full, np.arange(taps - 1, full.shape[axis]),
                                             axis=axis)], axis=axis)
    out = np.take(full, np.arange(n), axis=axis)
    if zi is None:
        return out
    return out, np.take(full, np.arange(n, full.shape[axis]), axis=axis)
