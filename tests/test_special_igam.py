"""scipy.special.gammainc, gammaincc, exp1 and expi (codegen/include/fj_special_igam.h): the
special values, SciPy where it is accurate, reference values (mpmath, 45 digits, written out
below) where it is not (large a), gradients, and the header's generated coefficients
(codegen/special_tables.py). tests/test_special.py also runs them over its wide ranges, every
dtype and layout.

Tolerances: a relative 1e-13 plus 8 eps times the size of the exponent a ln(x/a) - x + a that
x^a e^-x / Gamma(a) is formed from: its rounding is the error of every method (and of SciPy's),
so near-underflow tails carry it.
"""

from __future__ import annotations

import math

import numpy as np
import pytest
from gradcheck import check_grad

import fusejit
from fusejit.codegen import special_tables
from fusejit.errors import UnsupportedError

sp = pytest.importorskip("scipy.special")
pytestmark = pytest.mark.filterwarnings("ignore::RuntimeWarning")
EPS = np.finfo(np.float64).eps

# (a, x, P(a, x), Q(a, x)): x = a + z sqrt(a) for z in -30, -5, -1, -0.1, 0.1, 1, 5, 30. a =
# 9999.5 runs the series and the continued fraction at their longest (just below Temme's
# expansion, from 1e4); SciPy 1.17 loses accuracy from a ~ 1e4 on (13% at a = 3.8e7, z = -5.9).
REFERENCE = [
    (9999.5, 6999.575000937523, 9.674784421742254e-249, 1.0),
    (9999.5, 9499.512500156254, 1.862433783972652e-07, 0.9999998137566216),
    (9999.5, 9899.50250003125, 0.15865119198973976, 0.8413488080102602),
    (9999.5, 9989.500250003126, 0.46148245847518304, 0.5385175415248169),
    (9999.5, 10009.499749996874, 0.5411374956264517, 0.4588625043735483),
    (9999.5, 10099.49749996875, 0.8413487506467021, 0.15865124935329783),
    (9999.5, 10499.487499843746, 0.9999995724086341, 4.275913658812614e-07),
    (9999.5, 12999.424999062478, 1.0, 4.719469219358719e-166),
    (20000.0, 15757.359312880715, 5.593701145919629e-231, 1.0),
    (20000.0, 19292.893218813453, 2.1205211754198314e-07, 0.9999997879478825),
    (20000.0, 19858.578643762692, 0.15865322731604892, 0.8413467726839511),
    (20000.0, 19985.85786437627, 0.4610985922480516, 0.5389014077519484),
    (20000.0, 20014.14213562373, 0.5407539481160061, 0.4592460518839939),
    (20000.0, 20141.421356237308, 0.8413467524049631, 0.15865324759503685),
    (20000.0, 20707.106781186547, 0.9999996185192662, 3.8148073381669324e-07),
    (20000.0, 24242.640687119285, 1.0, 3.684207285950743e-174),
    (1000000.0, 970000.0, 4.920908778591162e-202, 1.0),
    (1000000.0, 995000.0, 2.749580359270071e-07, 0.9999997250419641),
    (1000000.0, 999000.0, 0.15865521357430365, 0.8413447864256963),
    (1000000.0, 999900.0, 0.4603031602514001, 0.5396968397485999),
    (1000000.0, 1000100.0, 0.5399588284317236, 0.4600411715682764),
    (1000000.0, 1001000.0, 0.8413447863683403, 0.15865521363165971),
    (1000000.0, 1005000.0, 0.999999701250986, 2.987490140114635e-07),
    (1000000.0, 1030000.0, 1.0, 3.262430144876734e-194),
    (100000000.0, 99700000.0, 1.990882289646706e-198, 1.0),
    (100000000.0, 99950000.0, 2.854642139958626e-07, 0.999999714535786),
    (100000000.0, 99990000.0, 0.15865525352814383, 0.8413447464718562),
    (100000000.0, 99999000.0, 0.4601852621889073, 0.5398147378110927),
    (100000000.0, 100001000.0, 0.539840936679228, 0.46015906332077205),
    (100000000.0, 100010000.0, 0.8413447464717988, 0.15865525352820117),
    (100000000.0, 100050000.0, 0.9999997121570313, 2.878429686852781e-07),
    (100000000.0, 100300000.0, 1.0, 1.2044173125193529e-197),
]
# Ei near its zero x0 = 0.37250741078136663 (SciPy's value there is off by ~5e-17 absolute,
# so relative to Ei it has no correct digit at x0's neighbours), and E1 (mpmath, 40 digits)
EI = [(0.3725074107813666, -5.1196989365556847e-17), (0.3725074107813667, 1.6508643146897012e-16),
      (0.3725074108186174, 1.4513693834946634e-10), (0.3725, -2.8874183188745963e-05),
      (0.38, 0.02901122141928304), (0.25, -0.5425432646619137), (0.5, 0.4542199048631736),
      (39.5, 3710918879133970.5), (40.5, 9831586535606510.0), (700.0, 1.4509787360525608e+301),
      (716.0, 1.2605029106040893e+308)]
E1 = [(1e-300, 690.1983122333122), (0.5, 0.5597735947761608), (1.0, 0.21938393439552029),
      (1.0000001, 0.21938389760757981), (1.7176126767880273, 0.07278816421582833),
      (5.0, 0.0011482955912753257), (700.0, 1.406518766234033e-307)]


def _pq(a, x):
    return fusejit.jit(lambda a, x: (sp.gammainc(a, x), sp.gammaincc(a, x)))(a, x)


def _tolerance(a: np.ndarray, x: np.ndarray) -> np.ndarray:
    with np.errstate(all="ignore"):
        exponent = np.abs(a * np.log(x / a)) + np.abs(x - a)
    return 1e-13 + 8 * EPS * np.nan_to_num(exponent)


def test_generated_coefficients_are_current() -> None:
    with open(special_tables.HEADER, encoding="utf-8") as f:
        assert special_tables.header_block(f.read()) == special_tables.render()


def test_temme_coefficients_known_values() -> None:
    """C_0 = -1/3 + eta/12 - 2 eta^2/135 + eta^3/864 + ..., C_1(0) = -1/540, C_2(0) = 25/6048
    (Temme 1979, DiDonato & Morris 1986)."""
    from fractions import Fraction as F

    c = special_tables.temme_coefficients(3, 5)
    assert c[0][:4] == [F(-1, 3), F(1, 12), F(-2, 135), F(1, 864)]
    assert c[1][0] == F(-1, 540) and c[2][0] == F(25, 6048)


def test_special_values_match_scipy() -> None:
    v = np.array([np.nan, -1.0, 0.0, -0.0, 1e-300, 0.5, 1.0, 10.0, 1e5, np.inf])
    a, x = (g.ravel() for g in np.meshgrid(v, v, indexing="ij"))
    p, q = _pq(a, x)
    np.testing.assert_array_equal(np.isnan(p), np.isnan(sp.gammainc(a, x)))
    np.testing.assert_array_equal(np.isnan(q), np.isnan(sp.gammaincc(a, x)))
    np.testing.assert_allclose(p, sp.gammainc(a, x), rtol=1e-13, atol=0)
    np.testing.assert_allclose(q, sp.gammaincc(a, x), rtol=1e-13, atol=0)
    e = np.array([np.nan, -np.inf, -800.0, -1.0, -1e-300, -0.0, 0.0, 1e-300, 0.5, 1.0, 700.0,
                  np.inf])
    got1, goti = fusejit.jit(lambda x: (sp.exp1(x), sp.expi(x)))(e)
    for got, want in ((got1, sp.exp1(e)), (goti, sp.expi(e))):
        np.testing.assert_allclose(got, want, rtol=1e-15, atol=0)
        np.testing.assert_array_equal(np.signbit(got), np.signbit(want))


def test_against_scipy_where_it_is_accurate() -> None:
    """a from 1e-20 to 500, x around a, far below and far above it, and in [0, 3]."""
    rng = np.random.default_rng(3)
    n = 4000
    a = np.exp(rng.uniform(np.log(1e-20), np.log(500), n))
    k = n // 4
    x = np.concatenate([np.exp(rng.uniform(np.log(1e-20), np.log(1e4), k)),
                        np.abs(a[k:2 * k] + rng.standard_normal(k) * np.sqrt(a[k:2 * k]) * 3),
                        a[2 * k:3 * k] * np.exp(rng.uniform(-1, 1, k)),
                        rng.uniform(0, 3, k)])
    p, q = _pq(a, x)
    tol = _tolerance(a, x)
    for got, want in ((p, sp.gammainc(a, x)), (q, sp.gammaincc(a, x))):
        keep = want > 1e-290  # (both round subnormal results; relative error means nothing)
        err = np.abs(got - want)[keep] / want[keep]
        assert (err <= 4 * tol[keep]).all(), (a[keep][err > 4 * tol[keep]][:4],
                                              x[keep][err > 4 * tol[keep]][:4])


def test_large_a_against_reference() -> None:
    a, x, p_want, q_want = (np.array(c) for c in zip(*REFERENCE))
    p, q = _pq(a, x)
    tol = _tolerance(a, x)
    for got, want in ((p, p_want), (q, q_want)):
        assert (np.abs(got - want) <= tol * want).all(), (got, want)


def test_where_scipy_is_wrong() -> None:
    """Where SciPy 1.17's methods lose (README): P(3.8e7, x) 5.9 sqrt(a) below a (SciPy:
    1.5086e-9, 13% off; the reference is mpmath's); P(1e20, 1e20 - 1e11), the normal tail
    ndtr(-10) to ~1e-10 (SciPy: 1.5e-29); a = 3e307, where SciPy's NaN (an overflow) is 0 or
    1."""
    p, q = _pq(np.array([38389328.38170141, 1e20, 3e307, 3e307]),
               np.array([38352740.34115991, 1e20 - 1e11, 1.5e307, 6e307]))
    assert p[0] == pytest.approx(1.7418257172955354e-09, rel=1e-12)
    assert p[1] == pytest.approx(sp.ndtr(-10.0), rel=1e-9)
    np.testing.assert_array_equal(p[2:], [0.0, 1.0])
    np.testing.assert_array_equal(q[2:], [1.0, 0.0])


def test_exponential_integrals_against_reference() -> None:
    x, want = (np.array(c) for c in zip(*EI))
    got = fusejit.jit(lambda x: sp.expi(x))(x)
    np.testing.assert_allclose(got, want, rtol=8 * EPS, atol=0)
    np.testing.assert_allclose(fusejit.jit(lambda x: sp.expi(-x))(x[:8]), -sp.exp1(x[:8]),
                               rtol=4 * EPS)
    x, want = (np.array(c) for c in zip(*E1))
    np.testing.assert_allclose(fusejit.jit(lambda x: sp.exp1(x))(x), want, rtol=8 * EPS)
    xs = np.exp(np.random.default_rng(4).uniform(-700, math.log(700), 2000))
    got1, goti = fusejit.jit(lambda x: (sp.exp1(x), sp.expi(x)))(xs)
    np.testing.assert_allclose(got1, sp.exp1(xs), rtol=16 * EPS)
    far = np.abs(xs - EI[0][0]) > 1e-3  # SciPy's absolute error near Ei's zero
    np.testing.assert_allclose(goti[far], sp.expi(xs)[far], rtol=16 * EPS)


def test_gradients_in_x_and_refused_in_a() -> None:
    a = np.array([0.5, 1.0, 2.5, 40.0, 2e4])
    x = np.array([0.3, 0.7, 2.0, 38.0, 2.01e4])
    for f in (lambda x, a: np.sum(sp.gammainc(a, x) * np.arange(1.0, 6.0)),
              lambda x, a: np.sum(sp.gammaincc(a, 2 * x)),
              lambda x, a: np.sum(sp.exp1(x[:3]) + sp.expi(x[:3] - 0.1)),
              lambda x, a: np.sum(sp.chdtr(2 * a, x) - sp.chdtrc(a, x) + sp.pdtr(a, x)
                                  - sp.pdtrc(a * 3, x))):
        check_grad(f, [x, a], 0, fusejit.grad(f)(x, a), rtol=1e-6, atol=1e-9)
    # d P(1, x)/dx = e^-x, 1 at x = 0
    assert fusejit.grad(lambda x: sp.gammainc(1.0, x).sum())(np.zeros(2)).tolist() == [1, 1]
    with pytest.raises(UnsupportedError, match=r"scipy\.special\.gammaincc .*test_special_igam"
                                               r"\.py.*shape parameters"):
        fusejit.grad(lambda a, x: np.sum(sp.gammaincc(a, x)))(a, x)
