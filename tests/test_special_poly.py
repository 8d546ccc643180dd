"""scipy.special's orthogonal polynomials of integer degree (codegen/include/fj_special_poly.h)
against SciPy: degrees from -7 to 1000 (and 10^5 near 0, where the power series takes over
from the recurrence), x over [-1.2, 1.2] and wide, the special values (+-0, +-inf, NaN: the
recurrences meet inf - inf where SciPy's do), the parameters alpha of genlaguerre and
gegenbauer where SciPy's value is NaN or its hypergeometric form (alpha = 0); integer, float32
and Python-int operands; the float degrees refused by name; the gradients in x against
NumPy's polynomial classes and central differences.

Tolerance: relative 1e-12 (both evaluate the same recurrences; a degree of 10^5: 1e-9).
"""

from __future__ import annotations

import numpy as np
import pytest
from conftest import match_mask, run_both

import fusejit

sp = pytest.importorskip("scipy.special")
pytestmark = pytest.mark.filterwarnings("ignore::RuntimeWarning")
RNG = np.random.default_rng(30)

TWO = ("legendre", "sh_legendre", "chebyt", "chebyu", "chebyc", "chebys", "sh_chebyt",
       "sh_chebyu", "hermite", "hermitenorm", "laguerre")
SPECIAL_X = np.array([-2.0, -1.0, -0.5, 0.0, -0.0, 1e-6, -3e-6, 9.9e-6, 1e-300, 0.3, 1.0,
                      2.0, np.nan, np.inf, -np.inf])
DEGREES = np.array([-7, -3, -2, -1, 0, 1, 2, 3, 5, 8, 13, 40, 101, 1000])


def _x() -> np.ndarray:
    return np.concatenate([SPECIAL_X, RNG.uniform(-1.2, 1.2, 150), RNG.standard_normal(40) * 10])


def _check(got: np.ndarray, want: np.ndarray, rtol: float = 1e-12) -> None:
    assert got.dtype == want.dtype and got.shape == want.shape
    ok = match_mask(got, want, rtol, 1e-300)
    assert ok.all(), (f"{int((~ok).sum())} mismatches: got {got[~ok][:4]} want {want[~ok][:4]}")


@pytest.mark.parametrize("name", TWO)
def test_against_scipy(name: str) -> None:
    f = getattr(sp, "eval_" + name)
    n, x = DEGREES[:, None], _x()[None, :]
    _check(fusejit.jit(lambda n, x: f(n, x))(n, x), f(n, x))


@pytest.mark.parametrize("alpha", [-1.0, -0.5, 0.0, 0.5, 1.5, 3.25, np.nan])
def test_genlaguerre_and_gegenbauer(alpha: float) -> None:
    """alpha <= -1 (NaN), -1/2 (gegenbauer's NaN binomial), 0 (gegenbauer's hypergeometric
    form: 0 times T_n(x), NaN beyond n = 171 where its Gamma overflows), NaN."""
    n, x = DEGREES[:, None], _x()[None, :]
    for f in (sp.eval_genlaguerre, sp.eval_gegenbauer):
        got, want = fusejit.jit(lambda n, x, f=f: f(n, alpha, x))(n, x), f(n, alpha, x)
        if alpha == 0.0 and f is sp.eval_gegenbauer:  # zero times T_n(x): where T_n(x) is 0
            # or within rounding of it, its sign is the recurrence's, not SciPy's hyp2f1's
            got, want = got + 0.0, want + 0.0
        _check(got, want)
    a = np.array([-0.9, 0.25, 2.0, 7.5])[:, None, None]
    _check(fusejit.jit(lambda n, a, x: sp.eval_gegenbauer(n, a, x))(n, a, x),
           sp.eval_gegenbauer(n, a, x))


def test_high_degrees_near_zero() -> None:
    """|x| < 1e-5: the power series from its lowest term (its first coefficient an
    asymptotic series beyond n = 2000)."""
    x = np.array([1e-6, -3e-6, 9e-6, 2e-5, 0.3, -0.7])
    n = np.array([2000, 2001, 2002, 2003, 100_000, 100_001])[:, None]
    _check(fusejit.jit(lambda n, x: sp.eval_legendre(n, x))(n, x), sp.eval_legendre(n, x), 1e-9)
    _check(fusejit.jit(lambda n, x: sp.eval_gegenbauer(n, 0.75, x))(n, x),
           sp.eval_gegenbauer(n, 0.75, x), 1e-9)


def test_operand_types() -> None:
    """SciPy's 'ld->d' loop: float32 and integer x give float64; int8/int32/uint8 degrees
    and NumPy and Python ints; 0-d results and broadcasting."""
    x = RNG.uniform(-1, 1, (3, 4))
    run_both(lambda x: (sp.eval_hermite(3, x.astype(np.float32)), sp.eval_chebyt(np.int8(4), x),
                        sp.eval_legendre(np.arange(4, dtype=np.int32), x),
                        sp.eval_laguerre(np.arange(3, dtype=np.uint8)[:, None], x),
                        sp.eval_chebyu(2, 3), sp.eval_gegenbauer(3, 1, x[0, 0])), x)
    run_both(lambda x: sp.eval_hermitenorm(x.astype(np.int64), x), x)


def test_refused_and_errors() -> None:
    x = RNG.uniform(-1, 1, 5)
    for f in (lambda x: sp.eval_legendre(2.0, x), lambda x: sp.eval_chebyt(x, x),
              lambda x: sp.eval_legendre(np.uint64(3), x)):
        with pytest.raises(fusejit.UnsupportedError, match="degree or order n.*pass n as integers"):
            fusejit.jit(f)(x)
    with pytest.raises(fusejit.UnsupportedError, match="eval_legendre of complex"):
        fusejit.jit(lambda x: sp.eval_legendre(3, x + 1j))(x)
    run_both(lambda x: sp.eval_hermite(x, x), x)  # no float loop: NumPy's TypeError


def _fd(f, x: np.ndarray, h: float = 1e-6) -> np.ndarray:
    return (f(x + h) - f(x - h)) / (2 * h)


def test_gradients() -> None:
    """One compiled gradient per function over every degree (and alpha): the degrees and
    alphas are constant arrays broadcast against x."""
    P = np.polynomial
    x = np.array([-0.9, -0.3, 0.05, 0.4, 0.77, 1.3, -2.1])
    degrees = (-5, -2, -1, 0, 1, 2, 3, 7)
    n = np.array(degrees)[:, None]
    t = np.broadcast_to(x, (len(degrees), x.size)).copy()

    def rows(make) -> np.ndarray:
        return np.array([make(d, d if d >= 0 else -d - 1) for d in degrees])

    nan_below = np.where(n < 0, np.nan, 0.0)
    want = {"legendre": rows(lambda d, p: P.Legendre.basis(p).deriv()(x)),
            "sh_legendre": rows(lambda d, p: 2 * P.Legendre.basis(p).deriv()(2 * x - 1)),
            "chebyt": rows(lambda d, p: P.Chebyshev.basis(abs(d)).deriv()(x)),
            "hermite": rows(lambda d, p: P.Hermite.basis(max(d, 0)).deriv()(x)) + nan_below,
            "hermitenorm": rows(lambda d, p: P.HermiteE.basis(max(d, 0)).deriv()(x)) + nan_below,
            "laguerre": rows(lambda d, p: P.Laguerre.basis(max(d, 0)).deriv()(x) * (d >= 0))}
    for name in TWO:
        f = getattr(sp, "eval_" + name)
        w = want[name] if name in want else _fd(lambda t, f=f: f(n, t), t)
        got = fusejit.grad(lambda t, f=f: np.sum(f(n, t)))(t)
        np.testing.assert_allclose(got, w, rtol=1e-6, atol=1e-6, err_msg=name)
    a = np.array([-0.5, 0.0, 0.75, 2.5])[:, None, None]  # (-1/2: gegenbauer's value is NaN,
    ta = np.broadcast_to(t, (4, *t.shape)).copy()  # so is its slope)
    for f in (sp.eval_genlaguerre, sp.eval_gegenbauer):
        got = fusejit.grad(lambda t, f=f: np.sum(f(n, a, t)))(ta)
        np.testing.assert_allclose(got, _fd(lambda t, f=f: f(n, a, t), ta), rtol=1e-6,
                                   atol=1e-6, err_msg=f.__name__)
    with pytest.raises(fusejit.UnsupportedError, match="derivative in alpha"):
        fusejit.grad(lambda a: np.sum(sp.eval_gegenbauer(3, a, x)))(np.array(0.5))
