"""scipy.special.ellipkinc and ellipeinc (codegen/include/fj_special_ellip.h: Carlson's R_F
and R_D, phi reduced as SciPy's Cephes reduces it) against SciPy over every pair of special
values of phi and m (NaN for m > 1, m = 1 and m = -inf's cases, infinities, zeros) and random
ones, float32 loops, and the gradients in phi."""

from __future__ import annotations

import numpy as np
import pytest
from conftest import assert_same
from gradcheck import check_grad

import fusejit

sp = pytest.importorskip("scipy.special")
pytestmark = pytest.mark.filterwarnings("ignore::RuntimeWarning")

R = np.random.default_rng(23)
PHI = np.concatenate([[0.0, -0.0, 0.5, 1.0, np.pi / 2, -np.pi / 2, 2.0, 3.3, -0.5, -4.0, 100.0,
                       1e10, 1e20, 1e300, np.inf, -np.inf, np.nan, 1e-300, np.pi, 2 * np.pi],
                      R.uniform(-10, 10, 60)])
M_ = np.concatenate([[2.0, 1.0, 1.0 - 1e-6, 1 - 1e-15, -1e10, -np.inf, np.inf, 0.0, -0.0,
                      1e-300, -1e300, 1.0000001, np.nan, 0.5, -0.5, -1.0, -100.0],
                     R.uniform(-5, 1, 30)])
P, M = np.meshgrid(PHI, M_)


@pytest.mark.parametrize("name", ["ellipkinc", "ellipeinc"])
def test_against_scipy(name: str) -> None:
    """1e-13 of SciPy's Cephes (Landen's transformations there, Carlson's here)."""
    f = getattr(sp, name)
    assert_same(fusejit.jit(lambda p, m: f(p, m))(P, M), f(P, M), rtol=1e-13)
    p32, m32 = P.astype(np.float32), M.astype(np.float32)
    assert_same(fusejit.jit(lambda p, m: f(p, m))(p32, m32), f(p32, m32), rtol=1e-6)


def test_beyond_1e16() -> None:
    """A documented difference: past |phi| ~ 1e16 the remainder of phi mod pi/2 is rounding
    noise; the value is n K(m) (n = phi / (pi/2)) to double precision, which fusejit gives
    for every m, and SciPy too except, for m < 0, where its Cephes takes a logarithm of the
    noise's sine and returns NaN."""
    phi = np.array([2.34946252e253, 5.42593884e247, -4.54948928e226, 3e20])
    m = np.array([-15.5382098, -0.181393128, -1.21730543, 0.4])
    got = fusejit.jit(lambda p, m: sp.ellipkinc(p, m))(phi, m)
    n = np.floor(phi / (np.pi / 2))
    np.testing.assert_allclose(got, n * sp.ellipk(m), rtol=1e-14)
    want = sp.ellipkinc(phi, m)
    assert np.isnan(want[:3]).any() and np.isclose(want[3], got[3], rtol=1e-14)


def test_gradients_in_phi() -> None:
    phi = np.array([0.2, 0.9, 1.4, 2.5, -3.0])

    def f(phi):
        return np.sum(sp.ellipkinc(phi, 0.7) + 2 * sp.ellipeinc(phi, -1.5))

    check_grad(f, [phi], 0, fusejit.grad(f)(phi))
    with pytest.raises(fusejit.UnsupportedError, match="in m"):
        fusejit.grad(lambda m: sp.ellipkinc(0.5, m))(0.3)
