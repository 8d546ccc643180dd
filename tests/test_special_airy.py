"""scipy.special.airy and airye of real x (codegen/include/fj_special_airy.h: the Maclaurin
series on [-2, 1], Bessel functions of order 1/3 and 2/3 elsewhere) against SciPy (AMOS and
Cephes): random x to |x| = 100, the joins of the regimes, SciPy's special values and limits
(NaN beyond |x| ~ 1048576, airy's underflowed Ai and NaN Bi above x ~ 103.1, airye's NaN Ai
for x < 0), large negative x (the rounded phase zeta = (2/3)|x|^(3/2) limits both to
~eps zeta), float32 loops and the gradients (Airy's equation)."""

from __future__ import annotations

import numpy as np
import pytest
from conftest import assert_same
from gradcheck import check_grad

import fusejit

sp = pytest.importorskip("scipy.special")
pytestmark = pytest.mark.filterwarnings("ignore::RuntimeWarning")

R = np.random.default_rng(37)
JOINS = [-2.0, np.nextafter(-2.0, -3), 1.0, np.nextafter(1.0, 2)]
SPECIAL = [0.0, -0.0, 1e-300, -1e-300, np.inf, -np.inf, np.nan, 103.0968, 103.0969,
           103.28, 103.29, 1048575.0, 1048577.0, -1048577.0, 2e5]
X = np.concatenate([R.uniform(-100, 100, 600), R.uniform(-3, 2, 300), JOINS, SPECIAL])


@pytest.mark.parametrize("name", ["airy", "airye"])
def test_against_scipy(name: str) -> None:
    """1e-13 of SciPy's (relative, or of the oscillation's amplitude |x|^(-1/4) for Ai and
    Bi, |x|^(1/4) for the derivatives, where x < 0), and eps zeta relative for x > 0 (the
    factors e^-+zeta of the rounded zeta = (2/3) x^(3/2))."""
    fn = getattr(sp, name)
    got, want = fusejit.jit(lambda x: fn(x))(X), fn(X)
    for k, (g, w) in enumerate(zip(got, want)):
        amp = np.where(X < 0, np.abs(X) ** (0.25 if k % 2 else -0.25), 0.0)
        np.testing.assert_array_equal(np.isnan(g), np.isnan(w))
        zeta = 2 / 3 * np.abs(X) ** 1.5
        tol = 1e-13 * np.maximum(np.abs(w), amp) + 3e-16 * zeta * np.abs(w) + 1e-300
        ok = np.isnan(w) | (np.abs(g - w) <= tol)
        assert ok.all(), (name, k, X[~ok], g[~ok], w[~ok])
        assert g.dtype == w.dtype
    x32 = X[600:900].astype(np.float32)
    assert_same(fusejit.jit(lambda x: fn(x))(x32), fn(x32), rtol=2e-6, atol=1e-7)


def test_large_negative_x() -> None:
    """Out to SciPy's limit the values agree to ~eps zeta of the amplitude (both round the
    phase); a scalar argument gives scalars."""
    x = -np.logspace(2.5, 6, 8)
    got, want = fusejit.jit(lambda x: sp.airy(x))(x), sp.airy(x)
    for k, (g, w) in enumerate(zip(got, want)):
        amp = np.abs(x) ** (0.25 if k % 2 else -0.25)
        zeta = 2 / 3 * np.abs(x) ** 1.5
        assert (np.abs(g - w) <= 4e-16 * zeta * amp + 1e-15 * amp).all(), k
    assert_same(fusejit.jit(lambda x: sp.airye(x))(np.float64(2.5)), sp.airye(2.5), rtol=1e-13)


def test_gradients() -> None:
    x = np.array([-3.0, -0.5, 0.4, 1.7, 6.0])
    xp = x[2:]

    def f(x):
        ai, aip, bi, bip = sp.airy(x)
        return np.sum(ai + 2 * aip + 0.1 * bi + 0.01 * bip)

    def fe(x):
        ai, aip, bi, bip = sp.airye(x)
        return np.sum(ai + 2 * aip + 3 * bi + 4 * bip)

    check_grad(f, [x], 0, fusejit.grad(f)(x))
    check_grad(fe, [xp], 0, fusejit.grad(fe)(xp))

    def fneg(x):  # (airye below 0: Bi and Bi' unscaled)
        return np.sum(sp.airye(x)[2] + sp.airye(x)[3])

    check_grad(fneg, [x[:2]], 0, fusejit.grad(fneg)(x[:2]))
