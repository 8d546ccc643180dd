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
    with pytest.raises(fusejit.UnsupportedError, match=f"{name} of complex values"):
        fusejit.jit(lambda x: f(x + 1j))(x[:5])


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


def test_expn() -> None:
    """expn(n, x) of integer n (SciPy's 'ld->d' loop; its float loops, which truncate n, are
    refused): orders -1 to 6000, x from 1e-300 past log(DBL_MAX) (0 there, as Cephes);
    E_n' = -E_n-1, E_0' = -E_0 (1 + 1/x)."""
    x = np.concatenate([[0.0, -0.0, -1.0, 1e-300, 0.5, 1.0, 1.5, 20.0, 700.0, 709.8, 800.0,
                         np.inf, np.nan], np.exp(RNG.uniform(-15, 6.5, 200))])
    n = np.array([-1, 0, 1, 2, 3, 10, 50, 6000])[:, None]
    got, want = fusejit.jit(lambda n, x: sp.expn(n, x))(n, x), sp.expn(n, x)
    assert got.dtype == want.dtype
    assert match_mask(got, want, 1e-13, 1e-300).all()
    with pytest.raises(fusejit.UnsupportedError, match="degree or order n"):
        fusejit.jit(lambda x: sp.expn(2.0, x))(x)
    m, t = np.array([0, 1, 2, 5]), np.array([0.3, 1.5, 4.0, 0.7])
    want = -np.where(m == 0, sp.expn(0, t) * (1 + 1 / t), sp.expn(np.maximum(m - 1, 0), t))
    np.testing.assert_allclose(fusejit.grad(lambda t: np.sum(sp.expn(m, t)))(t), want,
                               rtol=1e-14)
