"""scipy.signal.csd of traced signals (installed by frontend/scipy_api.py), and through it
SciPy's own welch, periodogram and coherence.

SciPy's csd computes its segments' spectra with ShortTimeFFT, which writes each one into an
array it allocated (`S[..., p] = ...`), so a traced value cannot flow through it. Its older
path, `_spectral_helper` (still SciPy's, behind spectrogram and stft), reads the segments
through a sliding window view (fusejit's, frontend/everyday.py), detrends, windows and
transforms them with traced operations; this is csd on that helper, as SciPy computed it
before ShortTimeFFT: the same segments, window, scaling, doubling of the one-sided
spectrum's inner bins, mean or median (with SciPy's bias) over the segments, dtype, and the
empty inputs' answers; argument errors are the installed SciPy's own (its csd runs on
stand-ins first). Values agree with SciPy's to rounding (the FFTs are fusejit's).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from .numpy_lib import quietly, value_or_traced


def csd(x: Any, y: Any, fs: float = 1.0, window: Any = "hann", nperseg: Any = None,
        noverlap: Any = None, nfft: Any = None, detrend: Any = "constant",
        return_onesided: bool = True, scaling: str = "density", axis: int = -1,
        average: str = "mean") -> Any:
    """scipy.signal.csd with traced signals (see the module)."""
    from scipy.signal import _spectral_py as spectral

    same = y is x
    x = value_or_traced(x)
    y = x if same else value_or_traced(y)
    stand_x = np.zeros(x.shape, x.dtype)  # SciPy's own errors (its csd on stand-ins)
    quietly(spectral.csd, stand_x, stand_x if same else np.zeros(y.shape, y.dtype), fs,
            window, nperseg, noverlap, nfft, detrend, return_onesided, scaling, axis, average)
    axis = int(axis)
    if not same:
        xo, yo = list(x.shape), list(y.shape)
        xo.pop(axis)
        yo.pop(axis)
        try:
            outer = np.broadcast_shapes(tuple(xo), tuple(yo))
        except ValueError as e:
            raise ValueError("x and y cannot be broadcast together.") from e
        if x.size == 0 or y.size == 0:
            empty = np.moveaxis(np.empty(outer + (min(x.shape[axis], y.shape[axis]),)), -1,
                                axis)
            return empty, empty
    elif x.size == 0:
        return np.empty(x.shape), np.empty(x.shape)
    if scaling not in ("spectrum", "density"):
        raise ValueError(f"Parameter {scaling=} not in "
                         "{'spectrum': 'magnitude', 'density': 'psd'}!")
    freqs, _, pxy = spectral._spectral_helper(
        x, y, fs, window, nperseg, noverlap, nfft, False if detrend is False else detrend,
        return_onesided, scaling, axis, mode="psd")
    if pxy.shape[-1] > 1:
        if average == "median":
            bias = spectral._median_bias(pxy.shape[-1])
            if pxy.dtype.kind == "c":
                pxy = np.median(np.real(pxy), axis=-1) + np.median(np.imag(pxy), axis=-1) * 1j
            else:
                pxy = np.median(pxy, axis=-1)
            pxy = pxy / bias
        elif average == "mean":
            pxy = pxy.mean(axis=-1)
        else:
            raise ValueError(f"Parameter {average=} must be 'median' or 'mean'!")
    else:
        pxy = np.reshape(pxy, pxy.shape[:-1])
    return freqs, pxy
