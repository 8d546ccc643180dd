"""scipy.signal.csd of traced signals (frontend/scipy_spectral.py) and, through it, SciPy's
own welch, periodogram and coherence; spectrogram and stft through SciPy's spectral helper
(on fusejit's sliding_window_view): SciPy's values to rounding, dtypes and shapes."""

from __future__ import annotations

import warnings

import numpy as np
import pytest

import fusejit

sg = pytest.importorskip("scipy.signal")

RNG = np.random.default_rng(0)
X = RNG.standard_normal(300)
Y = RNG.standard_normal(300)
X2 = RNG.standard_normal((3, 200))

CASES = {
    "welch": (lambda x: sg.welch(x, nperseg=64), (X,)),
    "welch, defaults": (lambda x: sg.welch(x), (X,)),
    "welch float32": (lambda x: sg.welch(x, nperseg=64), (X.astype(np.float32),)),
    "welch median, 2-d": (lambda x: sg.welch(x, nperseg=64, average="median"), (X2,)),
    "welch axis 0, linear detrend": (lambda x: sg.welch(x, nperseg=50, axis=0,
                                                        detrend="linear"), (X2.T,)),
    "welch spectrum, nfft": (lambda x: sg.welch(x, nperseg=50, noverlap=10, nfft=64,
                                                scaling="spectrum"), (X,)),
    "welch two-sided": (lambda x: sg.welch(x, nperseg=64, return_onesided=False), (X,)),
    "welch one segment": (lambda x: sg.welch(x[:40]), (X,)),
    "welch complex": (lambda x, y: sg.welch(x + 1j * y, nperseg=64), (X, Y)),
    "periodogram": (lambda x: sg.periodogram(x), (X,)),
    "periodogram hann spectrum": (lambda x: sg.periodogram(x, window="hann",
                                                           scaling="spectrum"), (X,)),
    "csd": (lambda x, y: sg.csd(x, y, nperseg=64), (X, Y)),
    "csd median, unequal lengths": (lambda x, y: sg.csd(x[:200], y, nperseg=64,
                                                        average="median"), (X, Y)),
    "coherence": (lambda x, y: sg.coherence(x, y, nperseg=64), (X, Y)),
    "spectrogram": (lambda x: sg.spectrogram(x, nperseg=32), (X,)),
    "stft": (lambda x: sg.stft(x, nperseg=32), (X,)),
}


@pytest.mark.parametrize("name", list(CASES))
def test_match_scipy(name: str) -> None:
    f, args = CASES[name]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        want = f(*args)
        got = fusejit.jit(f)(*args)
    assert len(got) == len(want)
    for g, w in zip(got, want):
        g, w = np.asarray(g), np.asarray(w)
        assert g.dtype == w.dtype and g.shape == w.shape
        tol = 1e-5 if w.dtype in (np.float32, np.complex64) else 1e-12
        np.testing.assert_allclose(g, w, rtol=tol, atol=tol * float(np.max(np.abs(w))))


def test_errors_are_scipys() -> None:
    with pytest.raises(ValueError, match="average"):
        fusejit.jit(lambda x: sg.welch(x, nperseg=64, average="mode"))(X)
    with pytest.raises(ValueError, match="scaling"):
        fusejit.jit(lambda x: sg.welch(x, scaling="power"))(X)
    with pytest.raises(ValueError):
        fusejit.jit(lambda x: sg.welch(x, nperseg=64, noverlap=64))(X)
    try:  # (SciPy 1.17's csd refuses a complex y with a real x one-sided; older ones not)
        sg.csd(X, X * 1j, nperseg=32)
    except ValueError:
        with pytest.raises(ValueError):
            fusejit.jit(lambda x: sg.csd(x, x * 1j, nperseg=32))(X)

