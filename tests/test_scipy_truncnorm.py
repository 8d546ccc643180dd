"""scipy.stats.truncnorm on traced values (frontend/scipy_truncnorm.py: SciPy's masked
assignments as selects) and scipy.special.ndtri_exp (codegen/include/fj_special_inv.h), which
its quantiles need: random bounds and points against SciPy, the tails where SciPy's formulas
round q away (against exact references), typical use (sampling by the ppf of uniforms, a
frozen distribution with loc and scale) and gradients."""

from __future__ import annotations

import numpy as np
import pytest
from conftest import assert_same
from gradcheck import check_grad

import fusejit

st = pytest.importorskip("scipy.stats")
sp = pytest.importorskip("scipy.special")
pytestmark = pytest.mark.filterwarnings("ignore::RuntimeWarning")

R = np.random.default_rng(43)
N = 1500
A = np.concatenate([R.uniform(-10, 10, N), [-np.inf, -np.inf, 1.0, -2.0]])
B = np.concatenate([A[:N] + 10 ** R.uniform(-3, 1.5, N), [0.5, np.inf, np.inf, -2.5]])
X = np.concatenate([A[:N] + (B[:N] - A[:N]) * R.uniform(-0.1, 1.1, N), [0.0, 1.0, 3.0, 0.0]])
Q = np.concatenate([R.uniform(0, 1, N), [0.3, 0.5, 0.999, 0.25]])


@pytest.mark.parametrize("method", ["pdf", "logpdf", "cdf", "logcdf", "sf", "logsf"])
def test_distribution_functions(method: str) -> None:
    """1e-10 of SciPy: where x lies within 1e-5 of a bound of a narrow interval, both lose up
    to ~6e-11 to the difference of two log masses (SciPy's algorithm; mpmath agrees with
    neither beyond that), elsewhere they agree to ~1e-15."""
    f = getattr(st.truncnorm, method)
    assert_same(fusejit.jit(lambda x, a, b: f(x, a, b))(X, A, B), f(X, A, B), rtol=1e-10,
                atol=1e-300)


@pytest.mark.parametrize("method", ["ppf", "isf"])
def test_quantiles(method: str) -> None:
    """1e-9 of SciPy for q between 1e-10 and 1 - 1e-10 (SciPy's isf takes differences of
    masses that lose up to 5e-11 there; fusejit's sums are exact to 1e-15: see
    test_isf_in_the_tails)."""
    f = getattr(st.truncnorm, method)
    q = np.clip(Q, 1e-10, 1 - 1e-10)
    assert_same(fusejit.jit(lambda q, a, b: f(q, a, b))(q, A, B), f(q, A, B), rtol=1e-9)
    edge = np.array([0.0, 1.0, -0.5, 1.5, np.nan])
    got = fusejit.jit(lambda q: f(q, -1.0, 2.0))(edge)
    assert_same(got, f(edge, -1.0, 2.0))


def test_isf_in_the_tails() -> None:
    """A documented difference: where q is below 1e-16, SciPy's isf rounds it away (it takes
    log(Phi(-a) - (1 - q) mass)); fusejit's log(Phi(-b) + q mass) keeps it: the exact
    quantile norm.isf(q sf(a)) with b = inf, and b itself (to double) when a = -inf and q
    is 1e-43."""
    q = np.array([1e-300, 1e-20, 1.4875555014675806e-07])
    a = np.array([0.5, 0.5, 6.44747655086141])
    got = fusejit.jit(lambda q, a: st.truncnorm.isf(q, a, np.inf))(q, a)
    np.testing.assert_allclose(got, st.norm.isf(q * st.norm.sf(a)), rtol=1e-14)
    assert st.truncnorm.isf(1e-300, 0.5, np.inf) < 20  # (SciPy's: 17.18)
    left = fusejit.jit(lambda q: st.truncnorm.isf(q, -np.inf, 10.350226526445628))
    assert left(np.array([1.2544557071239e-43]))[0] == 10.350226526445628


def test_sampling_by_the_ppf_and_frozen() -> None:
    """The usual use: uniforms through a frozen truncnorm's ppf with loc and scale."""
    u = R.uniform(0, 1, (64, 8))
    lo, hi, loc, scale = -0.5, 2.0, 1.5, 0.3

    def sample(u, loc):
        return st.truncnorm(lo, hi, loc=loc, scale=scale).ppf(u)

    got = fusejit.jit(sample)(u, np.float64(loc))
    assert_same(got, sample(u, np.float64(loc)), rtol=1e-12)
    assert ((got >= loc + lo * scale) & (got <= loc + hi * scale)).all()


def test_ndtri_exp() -> None:
    """1e-11 of SciPy over 600 decades of y (below -2 SciPy's rational approximation is off
    by up to 7e-13; fusejit solves log_ndtr(x) = y by Newton's method: mpmath's roots,
    written here, to 1e-15), its special values, float32."""
    y = np.concatenate([-10 ** R.uniform(-300, 300, 3000), -R.uniform(0, 5, 1000),
                        [0.0, -0.0, 1e-300, 1.0, -np.inf, np.nan, -1e300, -1.7e308, -1e-300,
                         -0.14541345786885906, -0.145413457868859, -2.0, -2.0000001, np.inf,
                         -1e20, -1.0001e20]])
    f = fusejit.jit(lambda y: sp.ndtri_exp(y))
    assert_same(f(y), sp.ndtri_exp(y), rtol=1e-11)
    y32 = y[3000:4000].astype(np.float32)
    assert_same(f(y32), sp.ndtri_exp(y32), rtol=1e-6)
    exact = {-3.5: -1.8779005814200447, -45209942.76723064: -9508.936080162157,
             -30333.06716291705: -246.27887340724854, -1e15: -44721359.54999538}
    got = f(np.array(list(exact)))
    np.testing.assert_allclose(got, list(exact.values()), rtol=1e-15)


def test_gradients() -> None:
    x = np.array([-0.5, 0.2, 1.1, 1.9])
    y = np.array([-0.01, -0.5, -3.0, -40.0])

    def cdf(x):
        return np.sum(st.truncnorm.cdf(x, -1.0, 2.0) + st.truncnorm.logsf(x, -1.0, 2.0))

    check_grad(cdf, [x], 0, fusejit.grad(cdf)(x))

    def quantile(y):
        return np.sum(sp.ndtri_exp(y))

    check_grad(quantile, [y], 0, fusejit.grad(quantile)(y), rtol=1e-5)
