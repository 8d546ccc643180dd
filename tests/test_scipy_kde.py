"""scipy.stats.gaussian_kde with traced values (frontend/scipy_kde.py): built outside and
evaluated at traced points, or built from traced data (and weights), against SciPy; SciPy's
errors; gradients; plain calls unchanged."""

from __future__ import annotations

import numpy as np
import pytest
from gradcheck import check_grad

import fusejit

st = pytest.importorskip("scipy.stats")

RNG = np.random.default_rng(11)
DATA = RNG.standard_normal(150) * 1.5 + 0.3
GRID = np.linspace(-4, 4, 33)
DATA2 = RNG.standard_normal((2, 120))
POINTS2 = RNG.standard_normal((2, 17))
W = RNG.uniform(0.1, 1.0, 120)


def _close(got, want, rtol=1e-13) -> None:
    assert np.shape(got) == np.shape(want) and np.asarray(got).dtype == np.asarray(want).dtype
    np.testing.assert_allclose(got, want, rtol=rtol, atol=1e-300)


def test_built_outside_evaluated_at_traced_points() -> None:
    kde = st.gaussian_kde(DATA)
    for method in ("evaluate", "__call__", "pdf", "logpdf"):
        f = fusejit.jit(lambda g, m=method: getattr(kde, m)(g))
        _close(f(GRID), getattr(kde, method)(GRID))


@pytest.mark.parametrize("bw", [None, "silverman", 0.35, lambda k: k.n ** -0.2])
def test_built_from_traced_data(bw) -> None:
    def f(d, g):
        kde = st.gaussian_kde(d, bw_method=bw)
        return kde(g), kde.logpdf(g), kde.factor, kde.covariance

    for got, want in zip(fusejit.jit(f)(DATA, GRID), f(DATA, GRID)):
        _close(got, want)


def test_two_dimensions_weights_and_a_single_point() -> None:
    def f(d, w, g):
        kde = st.gaussian_kde(d, weights=w)
        return kde(g), kde.logpdf(g), kde(g[:, 0]), kde.neff

    for got, want in zip(fusejit.jit(f)(DATA2, W, POINTS2), f(DATA2, W, POINTS2)):
        _close(got, want)


def test_float32_points_and_scipys_errors() -> None:
    kde = st.gaussian_kde(DATA)
    g32 = GRID.astype(np.float32)
    _close(fusejit.jit(lambda g: kde(g))(g32), kde(g32), rtol=1e-12)

    def wrong_dims(g):
        return st.gaussian_kde(DATA2)(g)

    def too_few(d):
        return st.gaussian_kde(d)(GRID)

    for fn, arg in ((wrong_dims, GRID[:3].reshape(3, 1)), (too_few, DATA[:1])):
        with pytest.raises(ValueError) as want:
            fn(arg)
        with pytest.raises(ValueError, match=str(want.value)[:30]):
            fusejit.jit(fn)(arg)


def test_gradient_of_a_kde_log_likelihood() -> None:
    """d/dx of sum log kde(x) at traced points, and through the data itself."""
    kde = st.gaussian_kde(DATA)
    x = np.array([-1.0, 0.2, 2.5])

    def at_points(x):
        return kde.logpdf(x).sum()

    def through_data(d):
        return st.gaussian_kde(d, bw_method=0.4).logpdf(x).sum()

    check_grad(at_points, [x], 0, fusejit.grad(at_points)(x), rtol=1e-6)
    check_grad(through_data, [DATA[:20]], 0, fusejit.grad(through_data)(DATA[:20]),
               rtol=1e-5)


def test_plain_calls_are_scipys() -> None:
    kde = st.gaussian_kde(DATA)
    assert type(kde.evaluate).__name__ == "method"
    np.testing.assert_array_equal(kde(GRID), st.gaussian_kde(DATA)(GRID))
