"""scipy.signal's periodic waveforms on traced values: sawtooth, square and chirp (installed by
frontend/scipy_api.py).

SciPy writes sawtooth and square piece by piece: `extract` the points of each piece (a
data-dependent shape) and `place` the piece's values there into a float64 array of zeros.
Here each piece's formula is computed on every point, in the dtype SciPy computes it in, and
selected where SciPy places it (`np.where`), so the values, the NaN for a width or duty
outside [0, 1] and the float64 result are SciPy's. chirp is SciPy's own code on globals where
its `asarray` keeps a traced `t` (its frequencies and times are Python floats, as SciPy's
`float(f0)` makes them: traced ones raise fusejit's concretization error).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from . import numpy_lib as NL

PI = np.pi


def _aligned(t: Any, w: Any) -> tuple[Any, Any]:
    """t and the width broadcast against each other, in SciPy's dtypes: w + (t - t) and
    t + (w - w), from the arrays np.asarray makes of them (a Python number: a 0-d array)."""
    t, w = NL.asarray(t), NL.asarray(w)
    if not hasattr(t, "dtype"):
        t = np.asarray(t)
    if not hasattr(w, "dtype"):
        w = np.asarray(w)
    w2 = w + (t - t)
    return t + (w - w), w2


def _pieces(t: Any, width: Any) -> tuple[Any, Any, Any, Any, Any]:
    """SciPy's start of sawtooth and square: the float64 output, NaN where the width is
    outside [0, 1]; t mod 2 pi; the width; the masks of the first piece (tmod < width 2 pi)
    and of the second."""
    t, w = _aligned(t, width)
    bad = (w > 1) | (w < 0)
    y = np.where(bad, np.nan, np.zeros(np.shape(t), np.float64))
    tmod = np.mod(t, 2 * PI)
    first = np.logical_not(bad) & (tmod < w * 2 * PI)
    return y, tmod, w, first, np.logical_not(bad) & np.logical_not(first)


def sawtooth(t: Any, width: Any = 1) -> Any:
    """scipy.signal.sawtooth: rising from -1 to 1 on [0, width 2 pi), falling back to -1 on
    [width 2 pi, 2 pi); NaN where width is outside [0, 1]. (Each piece computed in SciPy's
    dtype everywhere, then cast to float64 as np.place casts it, where it applies.)"""
    y, tmod, w, rising, falling = _pieces(t, width)
    y = np.where(rising, (tmod / (PI * w) - 1).astype(np.float64), y)
    return np.where(falling, ((PI * (w + 1) - tmod) / (PI * (1 - w))).astype(np.float64), y)


def square(t: Any, duty: Any = 0.5) -> Any:
    """scipy.signal.square: 1 on [0, duty 2 pi), -1 on the rest of each period; NaN where
    duty is outside [0, 1]."""
    y, _, _, high, low = _pieces(t, duty)
    return np.where(low, -1.0, np.where(high, 1.0, y))


def chirp(t: Any, f0: Any, t1: Any, f1: Any, method: str = "linear", phi: Any = 0,
          vertex_zero: bool = True, **kwargs: Any) -> Any:
    """scipy.signal.chirp: SciPy's code, its conversions keeping a traced `t`."""
    from scipy.signal import _waveforms

    original = getattr(_waveforms.chirp, "__fusejit_original__", _waveforms.chirp)
    fn = NL.traced_function(original)
    return fn(t, f0, t1, f1, method, phi, vertex_zero, **kwargs)
