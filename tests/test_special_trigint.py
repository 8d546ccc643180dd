"""scipy.special's sici, shichi and fresnel (codegen/include/fj_special_trigint.h: a result
per op, the pairs from frontend/special_composite.py) against SciPy: both pairs' dtypes
(SciPy's 'f->ff' loops), the series/continued-fraction borders, negative x, the special
values; against mpmath's values (40 digits, written here) where SciPy's Fresnel integrals
lose digits (x beyond ~1e3: its phase pi x^2 / 2 is rounded); gradients (their integrands).

Tolerance: relative 1e-13, 1e-15 absolute (next to the zeros of Ci and Chi).
"""

from __future__ import annotations

import numpy as np
import pytest
from conftest import match_mask, run_both

import fusejit

sp = pytest.importorskip("scipy.special")
pytestmark = pytest.mark.filterwarnings("ignore::RuntimeWarning")
RNG = np.random.default_rng(30)
NAMES = ("sici", "shichi", "fresnel")


@pytest.mark.parametrize("name", NAMES)
def test_against_scipy(name: str) -> None:
    x = np.concatenate([[-np.inf, -3.0, -1.0, -0.0, 0.0, 1e-300, 1e-9, 0.5, 3.0, 50.0,
                         np.inf, np.nan, 0.6165, 2.5, 1.6, 8.0],
                        RNG.uniform(-30, 30, 200), np.exp(RNG.uniform(-10, 6.9, 200)),
                        -np.exp(RNG.uniform(-5, 5, 50))])
    f = getattr(sp, name)
    for got, want in zip(fusejit.jit(lambda x: f(x))(x), f(x)):
        assert got.dtype == want.dtype
        ok = match_mask(got + 0.0, want + 0.0, 1e-13, 1e-300) | (np.abs(got - want) < 1e-15)
        assert ok.all(), (name, x[~ok][:4], got[~ok][:4], want[~ok][:4])
    run_both(lambda x: f(x.astype(np.float32)), x[16:60])  # float32 pairs
    run_both(lambda x: f(x[3]), x[:5])  # 0-d: NumPy scalars


def test_fresnel_large_x_against_mpmath() -> None:
    x = np.array([6465.275110375886, 14614.474814872223, 33554.69479321142,
                  117045.21272256332, 1e17])
    s_exact = [0.5000454013951541, 0.5000214289110609, 0.5000047573003775,
               0.5000011195118895, 0.5]
    s, c = fusejit.jit(lambda x: sp.fresnel(x))(x)
    np.testing.assert_allclose(s, s_exact, rtol=0, atol=2e-16)
    assert abs(sp.fresnel(x[3])[0] - s_exact[3]) > 5e-13  # (SciPy's, 1e-12 off)
    assert c[-1] == 0.5


def test_gradients() -> None:
    x = np.array([0.0, 0.3, 1.7, 6.0, -2.5, 25.0])
    t = np.pi * x * x / 2
    with np.errstate(divide="ignore", invalid="ignore"):
        want = {("sici", 0): np.where(x == 0, 1.0, np.sin(x) / x),
                ("sici", 1): np.cos(x) / x,
                ("shichi", 0): np.where(x == 0, 1.0, np.sinh(x) / x),
                ("shichi", 1): np.cosh(x) / x,
                ("fresnel", 0): np.sin(t), ("fresnel", 1): np.cos(t)}
    for (name, i), w in want.items():
        f = getattr(sp, name)
        got = fusejit.grad(lambda x, f=f, i=i: np.sum(f(x)[i]))(x)
        np.testing.assert_allclose(got, w, rtol=1e-14, atol=1e-15, err_msg=f"{name}[{i}]")
