"""scipy.signal with traced arrays (installed by frontend/scipy_api.py): convolve and correlate,
upfirdn (and through it SciPy's resample_poly), and the polynomial fit behind savgol_filter's
edges.

SciPy's convolve and correlate branch on the data (whether an fft result's first value is NaN
or inf, to warn; for integer inputs, whether the largest product is exact in floating point,
to choose the method) and compute n-d direct correlations in compiled code. With a traced
argument these take SciPy's path with the decisions made from what fusejit knows at trace
time: method='auto' is SciPy's choose_conv_method on stand-ins of the arguments' shapes and
dtypes for floats (it looks at shapes only), and 'direct' for integers (exact, as SciPy's fft
result rounded back is); 'fft' is SciPy's fftconvolve (traced through np.fft), rounded and
cast for integer inputs; 'direct' of 1-d inputs is np.convolve / np.correlate, as SciPy's
fast path, and of n-d inputs the sum over the kernel's taps of shifted, zero-extended inputs
(SciPy's compiled loop: the same products, perhaps added in another order). The NaN warning
of the fft path is not raised (it would branch on the data). Argument errors are SciPy's: its
own function runs on zeros of the arguments' shapes (by fft, quickly), after the method name
is checked.

savgol_filter's edges (mode='interp') call SciPy's private array-API polyfit, whose rank
check branches on a traced value: `polyfit` is np.polyfit as fusejit traces it
(frontend/numpy_tail.py), whose rank check is on the sample points, values there.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from . import tracer as T
from .numpy_lib import quietly, value_or_traced

CONV_METHODS = ("auto", "direct", "fft")


def _stand_in(x: Any) -> np.ndarray:
    return np.zeros(x.shape, x.dtype)


def _reversed(x: Any) -> Any:
    out = x[(slice(None, None, -1),) * x.ndim]
    return np.conj(out) if x.dtype.kind == "c" else out


def _checked(name: str, a: Any, b: Any, mode: str, method: str) -> None:
    from scipy import signal

    if method not in CONV_METHODS:
        raise ValueError("Acceptable method flags are 'auto', 'direct', or 'fft'.")
    if mode not in ("full", "same", "valid"):
        raise ValueError("Acceptable mode flags are 'valid', 'same', or 'full'.")
    if a.ndim and b.ndim:  # (0-d: SciPy multiplies)
        quietly(getattr(signal, name), _stand_in(a), _stand_in(b), mode,
                "fft" if a.ndim == b.ndim else method)


def _method(a: Any, b: Any, mode: str, method: str) -> str:
    from scipy import signal

    if method != "auto":
        return method
    if np.result_type(a.dtype, b.dtype).kind in "biu":
        return "direct"
    return signal.choose_conv_method(_stand_in(a), _stand_in(b), mode=mode)


def _correlate_direct(a: Any, b: Any, mode: str) -> Any:
    """sum_k a[i + k] conj(b[k]) over b's positions, `a` extended by zeros ('full'), cut to
    a's shape around the centre ('same') or not extended ('valid'), as SciPy's direct
    correlation; the taps in C order (SciPy's compiled loop may add in another order)."""
    if mode == "valid" and any(x < y for x, y in zip(a.shape, b.shape)):
        return _reversed(_correlate_direct(b, a, mode))  # (SciPy swaps them, then back)
    if mode == "valid":
        padded = a
    else:
        padded = np.pad(a, [(n - 1, n - 1) for n in b.shape])
    dtype = np.result_type(a.dtype, b.dtype)
    full = tuple(p - n + 1 for p, n in zip(padded.shape, b.shape))
    taps = b if b.dtype.kind != "c" else np.conj(b)
    out: Any = np.zeros(full, dtype)
    for k in np.ndindex(*b.shape):
        window = padded[tuple(slice(i, i + n) for i, n in zip(k, full))]
        out = out + window * taps[k]
    if mode == "same":
        start = [(f - n) // 2 for f, n in zip(full, a.shape)]
        out = out[tuple(slice(s, s + n) for s, n in zip(start, a.shape))]
    return out.astype(dtype, copy=False)


def _direct(name: str, a: Any, b: Any, mode: str) -> Any:
    """method='direct': np.convolve/np.correlate for 1-d inputs (SciPy's fast path), else
    the sum over the kernel's taps (convolution: the kernel reversed)."""
    if a.ndim == 1 and (mode != "same" or a.shape[0] >= b.shape[0]):
        return (np.convolve if name == "convolve" else np.correlate)(a, b, mode)
    if name == "convolve":  # (correlate with the kernel reversed and conjugated, as SciPy)
        b = _reversed(b)
    return _correlate_direct(a, b, mode)


def convolve(in1: Any, in2: Any, mode: str = "full", method: str = "auto") -> Any:
    """scipy.signal.convolve with a traced argument (SciPy's path; see the module)."""
    from scipy.signal import _signaltools, fftconvolve

    volume, kernel = value_or_traced(in1), value_or_traced(in2)
    _checked("convolve", volume, kernel, mode, method)
    if volume.ndim == kernel.ndim == 0:
        return volume * kernel
    if _signaltools._inputs_swap_needed(mode, volume.shape, kernel.shape):
        volume, kernel = kernel, volume
    method = _method(volume, kernel, mode, method)
    if method == "direct":
        return _direct("convolve", volume, kernel, mode)
    out = fftconvolve(volume, kernel, mode=mode)
    result = np.result_type(volume.dtype, kernel.dtype)
    if result.kind in "iu":
        out = np.round(out)
    return out.astype(result)


def correlate(in1: Any, in2: Any, mode: str = "full", method: str = "auto") -> Any:
    """scipy.signal.correlate with a traced argument (SciPy's path; see the module)."""
    a, b = value_or_traced(in1), value_or_traced(in2)
    _checked("correlate", a, b, mode, method)
    if a.ndim == b.ndim == 0:
        return a * (np.conj(b) if b.dtype.kind == "c" else b)
    if method in ("fft", "auto"):
        return convolve(a, _reversed(b), mode, method)
    return _direct("correlate", a, b, mode)


def polyfit(x: Any, y: Any, deg: Any, *, xp: Any, rcond: Any = None) -> Any:
    """SciPy's private array-API polyfit (savgol_filter's edges) with a traced y."""
    from .numpy_tail import polyfit as numpy_polyfit

    return numpy_polyfit(x, y, deg, rcond)


def full_convolution(taps: Any, v: Any) -> Any:
    """The full convolution of each line of `v` along its last axis with 1-d `taps`: taps[i]
    times the line shifted i places, summed in the taps' order (length n + len(taps) - 1)."""
    k = taps.shape[0]
    out: Any = None
    for i in range(k):
        term = taps[i] * np.pad(v, [(0, 0)] * (v.ndim - 1) + [(i, k - 1 - i)])
        out = term if out is None else out + term
    return out


def upfirdn(h: Any, x: Any, up: int = 1, down: int = 1, axis: int = -1,
            mode: str = "constant", cval: Any = 0) -> Any:
    """scipy.signal.upfirdn of a traced signal (and so SciPy's resample_poly and decimate's
    FIR path): x upsampled by `up` (zeros between), convolved with h in full, every `down`-th
    value kept, in SciPy's dtype and length, with its errors (its own upfirdn on stand-ins).
    The sum over the taps may add in another order than SciPy's polyphase loop. Only the
    default extension (mode 'constant' with cval 0) is compiled."""
    from scipy import signal

    t, taps = value_or_traced(x), value_or_traced(h)
    if isinstance(taps, T.Tracer) or mode != "constant" or cval != 0:
        from ..errors import UnsupportedError

        raise UnsupportedError(f"scipy.signal.upfirdn with traced h, or mode={mode!r} / "
                               f"cval={cval!r}, is not supported by fusejit{T.where_msg()}")
    want = quietly(signal.upfirdn, taps, _stand_in(t), up, down, axis, mode, cval)
    dtype = np.asarray(want).dtype
    axis = int(axis) % t.ndim
    v = np.moveaxis(t, axis, -1).astype(dtype)
    n = v.shape[-1]
    if up > 1:  # x[0], 0, ..., 0, x[1], ...: (n - 1) * up + 1 values
        v = np.stack([v] + [np.zeros(v.shape, dtype)] * (up - 1), axis=-1)
        v = v.reshape(v.shape[:-2] + (n * up,))[..., :(n - 1) * up + 1]
    full = full_convolution(taps.astype(dtype), v)
    out = full[..., ::down][..., :np.asarray(want).shape[axis]]
    return np.moveaxis(out, -1, axis)
