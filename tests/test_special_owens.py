"""scipy.special.owens_t (codegen/include/fj_special_owens.h: Gauss-Legendre quadrature for
|a| <= 1, Owen's identity beyond) against SciPy over |h| <= 40 and ten decades of a, its
special values, the small-a range where SciPy loses digits (against the series, written
here; where a is tiny and h large SciPy's is wrong by orders of magnitude), float32, and the
gradients."""

from __future__ import annotations

import numpy as np
import pytest
from conftest import assert_same
from gradcheck import check_grad

import fusejit
from fusejit.codegen import special_tables

sp = pytest.importorskip("scipy.special")
pytestmark = pytest.mark.filterwarnings("ignore::RuntimeWarning")

R = np.random.default_rng(47)
F = fusejit.jit(lambda h, a: sp.owens_t(h, a))


def test_against_scipy() -> None:
    """5e-13 of SciPy (relative; subnormal results within 1e-300) for |a| >= 1e-4."""
    h = np.concatenate([R.uniform(-40, 40, 3000), 10 ** R.uniform(-10, 1.5, 1000)])
    a = 10 ** R.uniform(-4, 5, 4000) * np.sign(R.uniform(-1, 1, 4000))
    a[::3] = R.uniform(-1, 1, a[::3].size)
    a = np.where(np.abs(a) < 1e-4, 1e-4, a)
    assert_same(F(h, a), sp.owens_t(h, a), rtol=5e-13, atol=1e-300)
    s = np.array([0.0, -0.0, 1.0, -1.0, 0.5, np.inf, -np.inf, np.nan, 1e-300, 40.0, 38.0])
    hh, aa = (g.ravel() for g in np.meshgrid(s, s))
    assert_same(F(hh, aa), sp.owens_t(hh, aa), rtol=1e-14, atol=1e-300)
    assert_same(F(np.float32(1.5), np.float32(0.5)), sp.owens_t(np.float32(1.5),
                                                                 np.float32(0.5)))


def test_small_a_against_the_series() -> None:
    """Where a is near 1e-5 SciPy's value is off by up to 2e-12; T(h, a) =
    e^(-h^2/2) / (2 pi) (a - (1 + h^2/2) a^3 / 3 + (1 + h^2/2 + h^4/8) a^5 / 5 - ...), whose
    fourth term is below 1e-19 of the sum here."""
    h, a = R.uniform(-15, 15, 500), 10 ** R.uniform(-7, -4.5, 500)
    h2 = h * h / 2
    series = np.exp(-h2) / (2 * np.pi) * (a - (1 + h2) * a ** 3 / 3 +
                                          (1 + h2 + h2 * h2 / 2) * a ** 5 / 5)
    np.testing.assert_allclose(F(h, a), series, rtol=2e-15)
    # (where a is far smaller and h large SciPy's is off by orders of magnitude: 8.9e-271 for
    # T(10.29, 6.1e-245), whose series' first term is 9.7e-269)
    h, a = np.array([10.29179233, 16.71352487]), np.array([6.10512925e-245, 6.63178656e-98])
    first = a * np.exp(-h * h / 2) / (2 * np.pi)
    np.testing.assert_allclose(F(h, a), first, rtol=1e-14)
    assert sp.owens_t(h[0], a[0]) < first[0] / 50


def test_generated_rule_is_current() -> None:
    with open(special_tables.OWENS_HEADER, encoding="utf-8") as f:
        assert special_tables.header_block(f.read()) == special_tables.render_owens()


def test_gradients() -> None:
    h, a = np.array([-2.0, 0.3, 1.5, 4.0]), np.array([0.5, -2.0, 1.0, 7.0])

    def f(h, a):
        return np.sum(sp.owens_t(h, a))

    check_grad(f, [h, a], 0, fusejit.grad(f, argnums=0)(h, a))
    check_grad(f, [h, a], 1, fusejit.grad(f, argnums=1)(h, a))
