"""np.nan_to_num and np.real_if_close of complex arrays against NumPy: every part of the
special-value grid, replacement values (cast to the part's dtype, overflowing ones too),
0-d arrays (NumPy's scalar), copy=False (the caller's array written as NumPy writes it),
views; real_if_close's real result, and the run-time error where NumPy would keep the
complex array (its dtype depends on the values)."""

from __future__ import annotations

import numpy as np
import pytest
from conftest import assert_same
from test_complex import CDTYPES, quiet_numpy, special_grid

import fusejit
from fusejit.errors import RuntimeFailure


@pytest.mark.parametrize("dtype", CDTYPES, ids=str)
def test_nan_to_num_special_values(dtype: np.dtype) -> None:
    g = special_grid(dtype)

    def f(g):
        return (np.nan_to_num(g), np.nan_to_num(g, nan=1.5, posinf=2, neginf=-3.0),
                np.nan_to_num(g, nan=1e300), np.nan_to_num(g[::-3].reshape(4, 12)),
                np.nan_to_num(g[7]), np.nan_to_num(g.real), g * 1)

    got = quiet_numpy(fusejit.jit(f), g)
    assert_same(got, quiet_numpy(f, g), rtol=0.0)


@pytest.mark.parametrize("dtype", CDTYPES, ids=str)
def test_nan_to_num_copy_false_writes_the_argument(dtype: np.dtype) -> None:
    def f(z):
        np.nan_to_num(z, copy=False, nan=-1.0)
        return z + 1

    g1, g2 = special_grid(dtype), special_grid(dtype)
    assert_same(quiet_numpy(fusejit.jit(f), g1), quiet_numpy(f, g2), rtol=0.0)
    assert_same(g1, g2, rtol=0.0)


@pytest.mark.parametrize("dtype", CDTYPES, ids=str)
def test_real_if_close(dtype: np.dtype) -> None:
    x = np.linspace(-2, 2, 9)
    z = (x + 1j * np.where(x > 0, 1e-16, -0.0)).astype(dtype)

    def f(z):
        return np.real_if_close(z), np.real_if_close(z * 1j + 3, tol=10 ** 17), \
            np.real_if_close(z[:0] * 5j), np.real_if_close(z.real)

    assert_same(quiet_numpy(fusejit.jit(f), z), quiet_numpy(f, z), rtol=0.0)
    far = z + 0.5j
    assert np.real_if_close(far).dtype == dtype  # NumPy keeps it complex
    with pytest.raises(RuntimeFailure, match="NumPy would return the complex array"):
        fusejit.jit(lambda z: np.real_if_close(z))(far)
    assert_same(fusejit.jit(lambda z: np.real_if_close(z)[0])(z), np.real_if_close(z)[0])
