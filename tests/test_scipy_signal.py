"""scipy.signal.convolve and correlate of traced arrays (frontend/scipy_signal.py): SciPy's
values (to rounding), dtype and shape for every mode and method (1-d direct through
np.convolve; fft through np.fft; n-d direct as a sum over the kernel's taps), integers,
complex, SciPy's errors. (savgol_filter: tests/test_numpy_tail.py.)"""

from __future__ import annotations

import numpy as np
import pytest
from conftest import assert_same

import fusejit

sg = pytest.importorskip("scipy.signal")

RNG = np.random.default_rng(31)
X1, K1 = RNG.standard_normal(40), RNG.standard_normal(7)
X2, K2 = RNG.standard_normal((6, 7)), RNG.standard_normal((3, 2))
XI, KI = RNG.integers(-9, 9, (5, 6)), RNG.integers(-3, 3, (2, 3))
Z, KZ = X2 + 1j * X2[::-1], K2 + 2j * K2
CASES = {
    "1-d": (X1, K1), "1-d, kernel longer": (K1, X1), "2-d": (X2, K2), "2-d ints": (XI, KI),
    "2-d complex": (Z, KZ), "2-d, kernel larger": (K2, X2),
}


@pytest.mark.parametrize("method", ["auto", "direct", "fft"])
@pytest.mark.parametrize("mode", ["full", "same", "valid"])
@pytest.mark.parametrize("name", ["convolve", "correlate"])
@pytest.mark.parametrize("case", list(CASES))
def test_match_scipy(case: str, name: str, mode: str, method: str) -> None:
    a, b = CASES[case]
    f = lambda a: getattr(sg, name)(a, b, mode=mode, method=method)  # noqa: E731
    try:
        want = f(a)
    except ValueError:
        with pytest.raises(ValueError):
            fusejit.jit(f)(a)
        return
    got = fusejit.jit(f)(a)
    assert_same(got, want, rtol=1e-11, atol=1e-11 * float(np.abs(want).max() + 1))


@pytest.mark.parametrize("case", [
    lambda a: sg.convolve(a, K2, method="bogus"),
    lambda a: sg.convolve(a, K2, mode="bogus"),
    lambda a: sg.correlate(a, K1),  # dimensions differ
])
def test_scipys_errors(case) -> None:
    with pytest.raises(ValueError) as want:
        case(X2)
    with pytest.raises(ValueError, match=str(want.value)[:20]):
        fusejit.jit(case)(X2)


def test_zero_dimensional_inputs_multiply() -> None:
    f = lambda a: sg.correlate(a, np.complex128(2 - 1j))  # noqa: E731
    assert_same(fusejit.jit(f)(np.float64(3.0)), f(np.float64(3.0)))


UPFIRDN = {
    "up 2, down 3": lambda x: sg.upfirdn([1.0, 2.0, 1.0], x, 2, 3),
    "down 2": lambda x: sg.upfirdn([0.5, 0.5], x, 1, 2),
    "2-d along axis 0": lambda x: sg.upfirdn([1.0, 1.0, 1.0], x.reshape(20, 10), 3, 2,
                                                 axis=0),
    "float32": lambda x: sg.upfirdn(np.array([1, 2, 1], np.float32),
                                        x.astype(np.float32), 2, 1),
    "integers": lambda x: sg.upfirdn([1, 2, 1], (x * 10).astype(int), 2, 1),
    "resample_poly": lambda x: sg.resample_poly(x, 3, 2),
    "resample_poly, mean padding": lambda x: sg.resample_poly(x, 2, 5, padtype="mean"),
    "decimate, FIR": lambda x: sg.decimate(x, 4, ftype="fir"),
    "decimate, IIR": lambda x: sg.decimate(x, 4),
}


@pytest.mark.parametrize("name", list(UPFIRDN))
def test_upfirdn_and_resampling(name: str) -> None:
    """scipy.sg.upfirdn (frontend/scipy_signal.py), and SciPy's resample_poly and
    decimate through it (and through lfilter/filtfilt): SciPy's values to rounding."""
    f = UPFIRDN[name]
    x = np.random.default_rng(0).standard_normal(200)
    want, got = f(x), fusejit.jit(f)(x)
    assert got.dtype == want.dtype and got.shape == want.shape
    np.testing.assert_allclose(got, want, rtol=1e-6 if want.dtype == np.float32 else 1e-12,
                               atol=1e-12)
    with pytest.raises(fusejit.UnsupportedError, match="mode"):
        fusejit.jit(lambda x: sg.upfirdn([1.0, 1.0], x, 2, 1, mode="reflect"))(x)
