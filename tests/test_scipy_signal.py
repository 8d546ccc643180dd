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
