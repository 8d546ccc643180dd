"""Quantiles of the discrete distributions and nbinom's functions (codegen/include/
fj_special_dquant.h): scipy.stats.poisson.ppf/isf (through scipy.special.pdtrik), binom's and
nbinom's ppf and isf (SciPy's private Boost ufuncs), nbinom's pmf, cdf, sf, against SciPy over
random probabilities and the ends of the support; pdtrik's special values. Where q equals a
cdf value to the last bit, or is within ~1e-15 of 0 or 1, Boost's root finder and these
integer bisections may differ by a step (both are the smallest k with cdf(k) >= q up to
their cdf's last bit); those q are not compared."""

from __future__ import annotations

import numpy as np
import pytest
from conftest import assert_same

import fusejit

st = pytest.importorskip("scipy.stats")
sp = pytest.importorskip("scipy.special")
pytestmark = pytest.mark.filterwarnings("ignore::RuntimeWarning")

R = np.random.default_rng(17)
Q = np.concatenate([R.uniform(1e-12, 1 - 1e-12, 1500), [0.0, 1.0, 0.5, np.nan, -0.1, 1.1]])


@pytest.mark.parametrize("shapes", [(10, 0.3), (100, 0.01), (1000, 0.5), (7, 0.999),
                                    (10**6, 0.3), (0, 0.5), (5, 0.0), (5, 1.0), (5.5, 0.3)],
                         ids=str)
def test_binom_quantiles(shapes) -> None:
    def f(q):
        return st.binom.ppf(q, *shapes), st.binom.isf(q, *shapes)

    assert_same(fusejit.jit(f)(Q), f(Q))


@pytest.mark.parametrize("shapes", [(5, 0.3), (1, 0.5), (20, 0.9), (2.5, 0.4), (0.1, 0.001),
                                    (3, 1.0), (0, 0.5), (2, 1.5)], ids=str)
def test_nbinom_quantiles_and_functions(shapes) -> None:
    k = np.concatenate([np.arange(60.0), [1.5, -1.0, np.inf, np.nan, 1e6]])

    def quantiles(q):
        return st.nbinom.ppf(q, *shapes), st.nbinom.isf(q, *shapes)

    def functions(k):
        return (st.nbinom.pmf(k, *shapes), st.nbinom.cdf(k, *shapes),
                st.nbinom.sf(k, *shapes), st.nbinom.logpmf(k, *shapes))

    assert_same(fusejit.jit(quantiles)(Q), quantiles(Q))
    # (logpmf at k = 1e6 is SciPy's gammaln difference of ~1e7-sized terms: ~1e-9 absolute)
    assert_same(fusejit.jit(functions)(k), functions(k), rtol=1e-11, atol=1e-8)


@pytest.mark.parametrize("mu", [0.5, 3.0, 100.0, 1e4, 0.0], ids=str)
def test_poisson_quantiles(mu: float) -> None:
    q = np.concatenate([Q, [1e-300, 1e-20]])

    def f(q, mu):
        return st.poisson.ppf(q, mu), st.poisson.isf(q, mu), st.poisson(mu).ppf(q[:5])

    assert_same(fusejit.jit(f)(q, mu), f(q, mu))


def test_pdtrik() -> None:
    """The continuous inverse (1e-12 of SciPy's cdflib), its zeros, NaNs and the p that
    exp(-m) already exceeds; float32 loops."""
    p, m = np.meshgrid(np.concatenate([R.random(30), [0.0, 1.0, 1e-300, np.nan, -1.0]]),
                       [0.0, 1e-300, 0.5, 3.0, 50.0, 1e4, 1e8, np.inf, -1.0, np.nan])

    assert_same(fusejit.jit(lambda p, m: sp.pdtrik(p, m))(p, m), sp.pdtrik(p, m), rtol=1e-12)
    p32 = p.astype(np.float32)  # (SciPy's float loop solves less tightly: ~1e-5)
    assert_same(fusejit.jit(lambda p: sp.pdtrik(p, np.float32(3.0)))(p32),
                sp.pdtrik(p32, np.float32(3.0)), rtol=1e-5)


def test_gradients_are_refused_by_name() -> None:
    with pytest.raises(fusejit.UnsupportedError, match="pdtrik"):
        fusejit.grad(lambda m: sp.pdtrik(0.3, m))(3.0)
