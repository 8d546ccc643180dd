"""scipy.special's round, cosm1, radian, powm1, agm and zetac, traced as elementary operations
(frontend/special_elementary.py), against SciPy: special values (every pair of them for the
two-operand ones: infinities, zeros of both signs, NaN, negative integers), random values,
SciPy's quirks (powm1's 0 where x^y - 1 overflows with y < 0, zetac's 0 from 127 on, round's
+0.0), float32 loops and gradients."""

from __future__ import annotations

import numpy as np
import pytest
from conftest import assert_same
from gradcheck import check_grad

import fusejit

sp = pytest.importorskip("scipy.special")
pytestmark = pytest.mark.filterwarnings("ignore::RuntimeWarning")

R = np.random.default_rng(5)
SPECIAL = np.array([-np.inf, -1e300, -7.5, -2.5, -2.0, -1.5, -1.0, -0.5, -0.4, -1e-300, -0.0,
                    0.0, 1e-310, 0.3, 0.5, np.pi / 4, 0.79, 1.0, 1.5, 2.0, 2.5, 3.0, 127.0,
                    1e300, np.inf, np.nan])
PAIR_X, PAIR_Y = np.meshgrid(SPECIAL, SPECIAL)
WIDE = np.concatenate([SPECIAL, R.standard_normal(300) * 10])


def _same(f, *args, rtol=1e-14, atol=0.0) -> None:
    assert_same(fusejit.jit(f)(*args), f(*args), rtol=rtol, atol=atol)


def test_round_is_cephes_half_to_even_with_positive_zeros() -> None:
    halves = np.arange(-8.5, 9.0, 1.0)
    _same(lambda x, h: (sp.round(x), sp.round(h), sp.round(x.astype(np.float32)),
                        sp.round(np.float64(-0.4))), WIDE, halves, rtol=0)


def test_cosm1_is_exact_near_zero() -> None:
    """No cancellation for |x| <= pi/4 (SciPy's relative accuracy); beyond, both compute
    cos(x) - 1 and fusejit's cos is within an ulp of libm's (absolute ~1e-16)."""
    small = np.concatenate([R.standard_normal(200) * 1e-5, [1e-200, -1e-200, 0.0, -0.0]])
    _same(lambda x: sp.cosm1(x), small)
    _same(lambda x: (sp.cosm1(x), sp.cosm1(x.astype(np.float32))), WIDE, rtol=1e-13,
          atol=1e-15)


def test_radian() -> None:
    _same(lambda d, m: (sp.radian(d, m, d * 3), sp.radian(d.astype(np.float32), 30, 15)),
          PAIR_X, PAIR_Y)


def test_powm1_every_case() -> None:
    """Every pair of special values; random bases and exponents (small exponents take
    expm1); negative bases with integer exponents; the overflow thresholds of float64 and
    float32 (SciPy gives 0 past them for y < 0)."""
    _same(lambda x, y: sp.powm1(x, y), PAIR_X, PAIR_Y)
    x, y = R.uniform(0, 3, 2000), R.standard_normal(2000) * 100
    _same(lambda x, y: (sp.powm1(x, y), sp.powm1(x, y * 1e-6), sp.powm1(-x, np.round(y))),
          x, y)
    _same(lambda x, y: (sp.powm1(x, y), sp.powm1(x[:9], 127.99999)), x.astype(np.float32),
          y.astype(np.float32), rtol=3e-6)
    _same(lambda x, y: sp.powm1(x, y), PAIR_X.astype(np.float32), PAIR_Y.astype(np.float32),
          rtol=1e-6)
    edges = (np.array([0.5, 0.5, 2.0, 0.5, 1e-310, -0.5, -0.5, 2.0]),
             np.array([-1024.0, -1023.99, 1024.0, -1025.0, -1.0, -1025.0, -1023.0, 1023.99]))
    _same(lambda x, y: sp.powm1(x, y), *edges)


def test_agm() -> None:
    """Signs, zeros and infinities as SciPy; ratios up to 1e600 (the far formula)."""
    _same(lambda a, b: sp.agm(a, b), PAIR_X, PAIR_Y)
    a, b = np.exp(R.uniform(-700, 700, 3000)), np.exp(R.uniform(-700, 700, 3000))
    a = np.where((a > 5e153) & (a < 1e154), 1.0, a)  # (SciPy's NaN: test_agm_near_...)
    _same(lambda a, b: (sp.agm(a, b), sp.agm(a, a * np.abs(b[::-1]) ** 0.001),
                        sp.agm(-a, -b)), a, b)
    _same(lambda a, b: sp.agm(a, b), a.astype(np.float32) + 1, b.astype(np.float32) + 1,
          rtol=1e-6)


def test_agm_near_the_square_root_of_the_largest_float() -> None:
    """A documented difference: for both operands near 7e153 SciPy 1.17 leaves its iteration
    for a formula whose (a + b)^2 overflows, and returns NaN; fusejit's iteration on scaled
    operands gives the AGM (mpmath's value, 40 digits, rounded)."""
    a, b = np.array([7.062811854957557e153, 6e153]), np.array([6.929085799409369e153, 9e153])
    got = fusejit.jit(lambda a, b: sp.agm(a, b))(a, b)
    want = np.array([6.995789063575454e153, 7.424041308708913e153])  # mpmath.agm(a, b)
    np.testing.assert_allclose(got, want, rtol=1e-15)
    assert np.isnan(sp.agm(a, b)).any() or np.allclose(sp.agm(a, b), want, rtol=1e-15)


def test_zetac() -> None:
    """1e-13 of SciPy's, plus 3e-16 / |sin(pi x / 2)| for x < 0: SciPy's reflection formula
    loses digits next to the trivial zeros (zetac(-42.001367320383096): SciPy
    288468826428234.44, off by 1.5e-13; fusejit 288468826428277.44, mpmath ...277.06)."""
    x = np.concatenate([SPECIAL, R.uniform(-60, 140, 3000), [1 + 1e-10, 1 - 1e-10, 126.99,
                                                              -42.001367320383096]])
    f = fusejit.jit(lambda x: (sp.zetac(x), sp.zetac(x.astype(np.float32))))
    got, got32 = f(x)
    want = sp.zetac(x)
    rtol = 1e-13 + np.where(x < 0, 3e-16 / np.abs(np.sin(np.pi * x / 2)), 0.0)
    ok = (got == want) | (np.abs(got - want) <= rtol * np.abs(want)) | (
        np.isnan(got) & np.isnan(want))
    assert ok.all(), (x[~ok], got[~ok], want[~ok])
    assert got.dtype == want.dtype
    assert abs(got[-1] - 288468826428277.06) < 2e-15 * 288468826428277.06
    assert_same(got32, sp.zetac(x.astype(np.float32)), rtol=1e-13)


def test_gradients_flow_through_the_operations() -> None:
    x = np.array([0.3, 0.7, 1.9, 2.6])

    def loss(x):  # (zetac's gradient is zeta's, which fusejit does not compute)
        return np.sum(sp.powm1(x, 1.7) + sp.agm(x, 2.0) + sp.cosm1(x) + sp.radian(x, x, 1))

    check_grad(loss, [x], 0, fusejit.grad(loss)(x), rtol=1e-6)
