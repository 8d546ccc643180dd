"""scipy.stats.hypergeom on traced values: its private ufuncs _hypergeom_pmf, _hypergeom_cdf,
_hypergeom_sf (codegen/include/fj_special_hyper.h) and its logcdf/logsf (SciPy's Python
loops: frontend/scipy_hypergeom.py's ops) against SciPy over every point of small supports
and beyond them, invalid parameters, the enrichment p-value as users write it, and large
populations against exact sums (mpmath's, written here), where SciPy's Boost loses up to 2e-10
and its log-space sums 2e-9."""

from __future__ import annotations

import numpy as np
import pytest
from conftest import assert_same

import fusejit
from fusejit.errors import UnsupportedError

st = pytest.importorskip("scipy.stats")
pytestmark = pytest.mark.filterwarnings("ignore::RuntimeWarning")

METHODS = ("pmf", "logpmf", "cdf", "sf", "logcdf", "logsf")
PARAMS = [(20, 7, 12), (500, 60, 200), (50, 50, 10), (30, 0, 5), (40, 10, 40), (7, 3, 3)]


@pytest.mark.parametrize("method", METHODS)
def test_against_scipy(method: str) -> None:
    """1e-12 of SciPy (logpmf 1e-13 absolute: SciPy's betaln formula, traced) at every k of
    the support, outside it, at non-integers (not for logcdf and logsf: see below), inf and
    NaN, and for invalid parameters."""
    f = getattr(st.hypergeom, method)
    for M, n, N in PARAMS + [(20.5, 7, 12), (20, 25, 12), (-3, 1, 1)]:
        k = np.concatenate([np.arange(-2.0, min(n, N) + 3), [np.inf, -np.inf, np.nan],
                            [] if method.startswith("logs") or method == "logcdf" else [2.5]])
        got = fusejit.jit(lambda k, M=M, n=n, N=N: f(k, M, n, N))(k)
        assert_same(got, f(k, M, n, N), rtol=1e-12, atol=1e-13 if method == "logpmf" else 0)


def test_traced_parameters_and_enrichment() -> None:
    """The over-representation p-value P(X >= k) = sf(k - 1, M, n, N), parameters traced."""
    k = np.array([3.0, 5.0, 8.0, 12.0])
    M, n, N = np.array([200.0, 200, 1000, 1000]), np.array([20.0, 20, 50, 50]), \
        np.array([30.0, 30, 100, 100])

    def pvalue(k, M, n, N):
        return st.hypergeom.sf(k - 1, M, n, N)

    assert_same(fusejit.jit(pvalue)(k, M, n, N), pvalue(k, M, n, N), rtol=1e-12)


def test_large_populations_against_exact_sums() -> None:
    """M = 1e6 and 1e4: fusejit's values are the exact sums (mpmath, 50 digits) to 3e-13 (a
    pmf 250 standard deviations out) and its log cdf to 1e-13; SciPy's differ by up to 2e-10
    (pmf, cdf, sf) and 2e-9 (log cdf, absolute)."""
    exact = {  # (M, n, N, k): pmf, cdf, sf, log cdf, log sf
        (10**6, 5000, 200000, 23): (0.0, 0.0, 1.0, -1006.3394624233484, 0.0),
        (10**6, 5000, 200000, 148): (2.767222348389821e-287, 3.1489337378669567e-287, 1.0,
                                     -659.6948577896715, -3.1489337378669567e-287),
        (10**6, 5000, 200000, 973): (0.009008448605653039, 0.1738997234565058,
                                     0.8261002765434942, -1.749276447867524,
                                     -0.19103911265584195),
        (10**6, 5000, 200000, 1100): (2.9628201659961694e-05, 0.999786694194931,
                                      0.00021330580506900075, -0.00021332855798784944,
                                      -8.452783717343939),
        (10000, 300, 4000, 82): (1.023857263739767e-06, 2.2344728701746396e-06,
                                 0.9999977655271298, -13.011505209987117,
                                 -2.234475366612862e-06),
    }
    keys = list(exact)
    k, M, n, N = (np.array([key[i] for key in keys], float) for i in (3, 0, 1, 2))

    def f(k, M, n, N):
        h = st.hypergeom
        return (h.pmf(k, M, n, N), h.cdf(k, M, n, N), h.sf(k, M, n, N), h.logcdf(k, M, n, N),
                h.logsf(k, M, n, N))

    got = fusejit.jit(f)(k, M, n, N)
    for i, column in enumerate(zip(*exact.values())):
        np.testing.assert_allclose(got[i], column, rtol=1e-13 if i == 3 else 1e-12, atol=1e-300)
    assert abs(st.hypergeom.logcdf(23, 10**6, 5000, 200000) + 1006.3394624233484) > 1e-10


def test_non_integers_in_the_log_functions() -> None:
    """A documented difference: SciPy's cdf and sf of a non-integral k are NaN (Boost's domain
    error), and its logcdf and logsf loop over np.arange(k + 1, ...), a shifted range, there;
    fusejit's are NaN as the cdf is."""
    k = np.array([2.5, 3.0])
    got = fusejit.jit(lambda k: (st.hypergeom.logcdf(k, 20, 7, 12),
                                 st.hypergeom.logsf(k, 20, 7, 12)))(k)
    for g, f in zip(got, (st.hypergeom.logcdf, st.hypergeom.logsf)):
        assert np.isnan(g[0]) and np.isclose(g[1], f(3.0, 20, 7, 12), rtol=1e-12)
    assert np.isnan(st.hypergeom.cdf(2.5, 20, 7, 12))


def test_quantiles_stay_refused() -> None:
    with pytest.raises(UnsupportedError, match=r"scipy\.stats\.hypergeom\.ppf"):
        fusejit.jit(lambda q: st.hypergeom.ppf(q, 20, 7, 12))(np.array([0.3, 0.7]))
