"""scipy.stats distributions on traced values (frontend/scipy_stats.py): each public method
against SciPy's own call, with `assert_same` (values, NaN/0/1/-inf fills, float64, a NumPy
scalar for 0-d), over points inside, at the ends of and outside the support, NaN and inf,
invalid shape parameters, traced and constant loc/scale, broadcasting and frozen
distributions; refusals name the distribution and the user's line."""

from __future__ import annotations

import warnings

import numpy as np
import pytest
from conftest import assert_same
from gradcheck import check_grad

import fusejit
from fusejit.errors import UnsupportedError

st = pytest.importorskip("scipy.stats")
pytestmark = pytest.mark.filterwarnings("ignore::RuntimeWarning")

X = np.array([-1.0, 0.0, 0.3, 1.0, 1.7, 6.0, np.nan, np.inf, -np.inf])
Q = np.array([-0.1, 0.0, 1e-300, 0.2, 0.5, 0.9, 1.0, 1.5, np.nan])
K = np.array([-1.0, 0.0, 1.0, 2.5, 3.0, 10.0, 100.0, np.nan, np.inf])
CONTINUOUS = ("pdf", "logpdf", "cdf", "logcdf", "sf", "logsf", "ppf", "isf")
DISCRETE = ("pmf", "logpmf", "cdf", "logcdf", "sf", "logsf")
# (distribution, shape parameters, the methods that trace: SciPy's private methods of the
# others call functions fusejit does not compile, e.g. gamma.ppf's gammaincinv)
CASES = [("norm", (), CONTINUOUS), ("expon", (), CONTINUOUS), ("lognorm", (0.5,), CONTINUOUS),
         ("logistic", (), CONTINUOUS), ("laplace", (), CONTINUOUS), ("uniform", (), CONTINUOUS),
         ("weibull_min", (1.5,), CONTINUOUS), ("halfnorm", (), CONTINUOUS),
         ("rayleigh", (), CONTINUOUS), ("gumbel_r", (), CONTINUOUS),
         ("pareto", (2.0,), CONTINUOUS),
         # (SciPy's pieces by _lazyselect: selects here)
         ("triang", (0.3,), CONTINUOUS),
         ("trapezoid", (0.2, 0.7), ("pdf", "logpdf", "cdf", "sf", "ppf", "isf")),
         ("kappa4", (0.1, 0.1), CONTINUOUS), ("kappa4", (-0.5, 0.0), CONTINUOUS),
         # (masked assignments under `if`: frontend/scipy_truncnorm.py's selects)
         ("truncnorm", (-1.0, 2.0), CONTINUOUS),
         ("truncnorm", (0.5, np.inf), CONTINUOUS[:-1]),  # (isf of 1e-300: SciPy's rounds q
         # away; tests/test_scipy_truncnorm.py)
         ("truncnorm", (-np.inf, -3.0), CONTINUOUS),
         ("gamma", (2.0,), ("pdf", "logpdf", "cdf", "sf")),
         ("chi2", (3.0,), ("pdf", "logpdf", "cdf", "sf")),
         ("t", (4.0,), ("pdf", "logpdf", "cdf", "sf")), ("beta", (2.0, 3.0), ("pdf", "cdf", "sf")),
         ("poisson", (2.0,), DISCRETE), ("geom", (0.3,), DISCRETE),
         ("randint", (1, 6), DISCRETE), ("planck", (0.5,), DISCRETE),
         ("binom", (10, 0.3), DISCRETE), ("bernoulli", (0.3,), DISCRETE),
         ("dlaplace", (0.8,), DISCRETE), ("nbinom", (2.5, 0.4), DISCRETE),
         ("hypergeom", (20, 7, 12), ("pmf", "logpmf", "cdf", "sf"))]  # (its logcdf of k =
# 2.5: tests/test_scipy_hypergeom.py)


def _points(method: str) -> np.ndarray:
    return Q if method in ("ppf", "isf") else K if method in DISCRETE and method != "cdf" \
        else X


@pytest.mark.parametrize("name,shapes,methods", CASES, ids=[c[0] for c in CASES])
def test_methods_match_scipy(name: str, shapes: tuple, methods: tuple) -> None:
    """Every method of one distribution in one compiled function: loc traced, scale
    constant."""
    dist = getattr(st, name)
    discrete = methods is DISCRETE or "pmf" in methods
    points = [K if discrete else _points(m) for m in methods]

    def f(loc, xs):
        kw = {"loc": loc} if discrete else {"loc": loc, "scale": 2.0}
        return tuple(getattr(dist, m)(x, *shapes, **kw) for m, x in zip(methods, xs))

    xs = np.stack(points)
    assert_same(fusejit.jit(f)(0.5, xs), f(0.5, xs))


def test_traced_shape_parameters_and_scale() -> None:
    """Invalid parameters (a negative shape or scale, NaN) give SciPy's NaN fill; traced
    shape parameters broadcast against x."""
    s = np.array([[0.5], [-1.0], [np.nan], [2.0]])
    scale = np.array([1.0, 2.0, -1.0, 0.5, 3.0, 1.0, 1.0, 1.0, 1.0])

    def f(x, s, scale):
        return (st.lognorm.pdf(x, s, scale=scale), st.lognorm.cdf(x, s, loc=-0.5),
                st.weibull_min.logsf(x, s), st.gamma.cdf(x, s * 3, scale=scale),
                st.poisson.pmf(np.floor(x), s + 1))

    assert_same(fusejit.jit(f)(X, s, scale), f(X, s, scale))


def test_scalars_dtypes_and_frozen_distributions() -> None:
    jf = fusejit.jit(lambda x: st.norm.cdf(x))
    assert_same(jf(np.float64(0.3)), st.norm.cdf(np.float64(0.3)))  # a NumPy scalar
    x32 = X.astype(np.float32)
    assert_same(fusejit.jit(lambda x: st.expon.logpdf(x))(x32), st.expon.logpdf(x32))

    def frozen(x, mu):
        return st.norm(mu, 2.0).logpdf(x) + st.expon(scale=mu).sf(x)

    assert_same(fusejit.jit(frozen)(X, 1.5), frozen(X, 1.5))
    # plain calls still run SciPy's method unchanged
    assert st.norm.cdf(0.3) == st.norm.cdf.__fusejit_original__(st.norm, 0.3)


def test_gradient_of_a_log_likelihood() -> None:
    """The fills are selects, so gradients flow where SciPy computes the density."""
    x = np.array([0.1, 0.7, 1.3, 2.2, 3.5])

    def nll(mu, sigma):
        return -np.sum(st.norm.logpdf(x, mu, sigma)) - np.sum(st.gamma.logpdf(x, 2.0, 0, sigma))

    args = [np.float64(1.1), np.float64(0.8)]
    grads = fusejit.grad(nll, argnums=(0, 1))(*args)
    for i in (0, 1):
        check_grad(nll, args, i, grads[i], rtol=1e-6, atol=1e-8)


DISCRETE_QUANTILES = [("geom", (0.3,)), ("randint", (1, 6)), ("planck", (0.5,)),
                      ("dlaplace", (0.8,)), ("boltzmann", (1.4, 19))]


@pytest.mark.parametrize("name,shapes", DISCRETE_QUANTILES,
                         ids=[c[0] for c in DISCRETE_QUANTILES])
def test_discrete_quantiles(name: str, shapes: tuple) -> None:
    """rv_discrete's ppf and isf where the distribution's own _ppf/_isf is a formula: the
    ends of the support at q = 0 and 1, NaN outside [0, 1], loc traced."""
    dist = getattr(st, name)

    def f(q, loc):
        return dist.ppf(q, *shapes, loc=loc), dist(*shapes).isf(q), dist.ppf(q[3], *shapes)

    assert_same(fusejit.jit(f)(Q, 2.0), f(Q, 2.0))


def test_refusals_name_the_distribution_and_line() -> None:
    with pytest.raises(UnsupportedError, match=r"scipy\.stats\.nct\.pdf of traced "
                                               r"values .*test_scipy_stats\.py"):
        fusejit.jit(lambda x: st.nct.pdf(x, 5, 0.4))(X)
    with pytest.raises(UnsupportedError, match=r"scipy\.stats\.hypergeom\.ppf"):
        fusejit.jit(lambda q: st.hypergeom(20, 7, 12).ppf(q))(Q)
    with pytest.raises(UnsupportedError, match=r"scipy\.stats\.ncf\.cdf"):
        fusejit.jit(lambda x: st.ncf.cdf(x, 3, 4, 0.4))(X)
    # quantiles by SciPy's search per element (np.vectorize), or by special functions
    # fusejit does not compile (poisson's pdtrik)
    with pytest.raises(UnsupportedError, match=r"scipy\.stats\.logser\.ppf"):
        fusejit.jit(lambda q: st.logser.ppf(q, 0.6))(Q)
    with pytest.raises(UnsupportedError, match=r"scipy\.stats\.zipf\.isf"):
        fusejit.jit(lambda q: st.zipf.isf(q, 3.0))(Q)
    # levy_stable's pdf calls rv_continuous.pdf through super(): refused, not a recursion
    with pytest.raises(UnsupportedError, match=r"scipy\.stats\.levy_stable\.pdf"):
        fusejit.jit(lambda x: st.levy_stable.pdf(x, 1.8, -0.5))(X)
    with pytest.raises(TypeError):  # SciPy's own error for a missing shape parameter
        fusejit.jit(lambda x: st.gamma.pdf(x))(X)


_R = np.random.default_rng(41)
RANKDATA = {
    "average": (lambda x: st.rankdata(x), np.array([3.0, 1, 4, 1, 5, 2, 4])),
    "a NaN makes the slice NaN": (lambda x: st.rankdata(x), np.array([3.0, 1, np.nan, 1])),
    "omit": (lambda x: st.rankdata(x, nan_policy="omit"), np.array([3.0, np.nan, 1, 1])),
    "axis 0": (lambda x: st.rankdata(x, axis=0), np.round(_R.standard_normal((4, 5)))),
    "-0.0 ties 0.0": (lambda x: st.rankdata(x), np.array([-0.0, 0.0, 1.0])),
    **{f"integers, {m}": ((lambda x, m=m: st.rankdata(x, m, axis=1)), _R.integers(0, 4, (3, 6)))
       for m in ("min", "max", "dense", "ordinal", "average")},
    "bools": (lambda x: st.rankdata(x, "dense"), _R.integers(0, 2, 7) > 0),
    "empty": (lambda x: st.rankdata(x), np.zeros(0)),
    "unknown method": (lambda x: st.rankdata(x, "best"), np.ones(3)),
}


@pytest.mark.parametrize("name", list(RANKDATA))
def test_rankdata(name: str) -> None:
    """scipy.stats.rankdata (frontend/scipy_rank.py): SciPy's ranks and dtypes."""
    f, x = RANKDATA[name]
    try:
        want = f(x)
    except ValueError:
        with pytest.raises(ValueError):
            fusejit.jit(f)(x)
        return
    got = fusejit.jit(f)(x)
    assert np.asarray(got).dtype == np.asarray(want).dtype
    np.testing.assert_array_equal(got, want)


def test_rankdata_refuses_integer_ranks_of_floats() -> None:
    with pytest.raises(UnsupportedError, match="method='average' is supported"):
        fusejit.jit(lambda x: st.rankdata(x, "min"))(X)


@pytest.mark.parametrize("case", ["one pair", "rows", "a constant input"])
def test_pearsonr(case: str) -> None:
    """scipy.stats.pearsonr through SciPy's own code: its `at(r, const).set(nan)` copies a
    traced NumPy scalar before writing (array_api_extra's writeable test, frontend/scipy_api),
    then sets it through a 0-d mask."""
    rng = np.random.default_rng(43)
    x = rng.standard_normal((3, 20)) if case == "rows" else rng.standard_normal(20)
    y = np.ones_like(x) if case == "a constant input" else x ** 2 + x
    f = lambda a, b: tuple(st.pearsonr(a, b, axis=-1))  # noqa: E731
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        want = f(x, y)
    assert_same(fusejit.jit(f)(x, y), want, rtol=1e-12)
