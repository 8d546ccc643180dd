"""scipy.stats.linregress and spearmanr of traced samples (frontend/scipy_regress.py), and
SciPy's result objects with attributes beside their fields returned from a jitted function."""

from __future__ import annotations

import warnings

import numpy as np
import pytest

import fusejit
from fusejit import UnsupportedError

st = pytest.importorskip("scipy.stats")

_rng = np.random.default_rng(0)
X = _rng.standard_normal(30)
Y = 2 * X + _rng.standard_normal(30)
SAMPLES = {
    "float64": (X, Y),
    "float32": (X.astype(np.float32), Y.astype(np.float32)),
    "ints": (np.arange(5), np.arange(5) ** 2),
    "ties": (np.round(X), np.round(Y)),
    "two points": (X[:2], Y[:2]),
    "two points, y equal": (X[:2], np.ones(2)),
    "one point": (X[:1], Y[:1]),
    "empty": (X[:0], Y[:0]),
    "y constant": (X, np.full(30, 2.0)),
    "a NaN": (X, np.where(X > 0, np.nan, Y)),
    "exact line (r clipped)": (X, 3 * X + 1),
}


def _fields(res):
    return list(res) + list(res.__dict__.values())


def _same(got, want, rtol: float) -> None:
    assert type(got) is type(want)
    for g, w in zip(_fields(got), _fields(want), strict=True):
        assert np.asarray(g).dtype == np.asarray(w).dtype
        np.testing.assert_allclose(g, w, rtol=rtol, atol=0, equal_nan=True)


@pytest.mark.parametrize("alternative", ["two-sided", "less", "greater"])
@pytest.mark.parametrize("name", list(SAMPLES))
def test_match_scipy(name: str, alternative: str) -> None:
    x, y = SAMPLES[name]
    rtol = 1e-6 if x.dtype == np.float32 else 1e-12  # (float32 means summed otherwise)

    def lr(x, y):
        return st.linregress(x, y, alternative=alternative)

    def sp(x, y):
        return st.spearmanr(x, y, alternative=alternative)

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for f in (lr, sp):
            _same(fusejit.jit(f)(x, y), f(x, y), rtol)


def test_errors_and_refusals() -> None:
    lr = fusejit.jit(lambda x, y: st.linregress(x, y).slope)
    with pytest.raises(ValueError, match="all x values are identical"):
        lr(np.ones(4), X[:4])  # when the program runs
    assert lr(X[:4], Y[:4]) == pytest.approx(st.linregress(X[:4], Y[:4]).slope)
    with pytest.raises(ValueError, match="incompatible"):
        lr(X[:4], X[:5])
    with pytest.raises(ValueError, match="alternative"):
        fusejit.jit(lambda x, y: st.linregress(x, y, alternative="up"))(X, Y)
    with pytest.raises(UnsupportedError, match="nan_policy"):
        fusejit.jit(lambda x, y: st.linregress(x, y, nan_policy="omit"))(X, Y)
    with pytest.raises(UnsupportedError, match="2-d"):
        fusejit.jit(lambda x, y: st.linregress(x, y))(X.reshape(5, 6), Y.reshape(5, 6))
    with pytest.raises(UnsupportedError, match="b=None"):
        fusejit.jit(lambda a: st.spearmanr(a))(X.reshape(10, 3))
    with pytest.raises(ValueError, match="dimensions"):
        fusejit.jit(lambda a, b: st.spearmanr(a, b))(X[:4], X[:5])


def test_result_objects_keep_their_attributes() -> None:
    """SciPy's bunches hold attributes beside the tuple's fields (LinregressResult's
    intercept_stderr, PearsonRResult's samples, which its confidence_interval reads)."""
    res = fusejit.jit(lambda x, y: st.pearsonr(x, y))(X, Y)
    want = st.pearsonr(X, Y)
    assert type(res) is type(want)
    np.testing.assert_allclose(res.confidence_interval(), want.confidence_interval(),
                               rtol=1e-12)
    lr = fusejit.jit(lambda x, y: st.linregress(x, y))(X, Y)
    assert lr.intercept_stderr == pytest.approx(st.linregress(X, Y).intercept_stderr,
                                                rel=1e-12)


IQR = {
    "all": (lambda a: st.iqr(a), X.reshape(5, 6)),
    "axis 1": (lambda a: st.iqr(a, axis=1), X.reshape(5, 6)),
    "keepdims": (lambda a: st.iqr(a, axis=0, keepdims=True), X.reshape(5, 6)),
    "rng reversed, normal scale": (lambda a: st.iqr(a, rng=(90, 10), scale="normal"), X),
    "nearest": (lambda a: st.iqr(a, interpolation="nearest"), X),
    "hazen": (lambda a: st.iqr(a, interpolation="hazen"), X),
    "float32": (lambda a: st.iqr(a), X.astype(np.float32)),
    "integers": (lambda a: st.iqr(a, axis=1), np.arange(30).reshape(5, 6)),
    "a NaN": (lambda a: st.iqr(a, axis=1), np.where(X > 1.5, np.nan, X).reshape(5, 6)),
}


@pytest.mark.parametrize("name", list(IQR))
def test_iqr(name: str) -> None:
    f, x = IQR[name]
    want, got = f(x), fusejit.jit(f)(x)
    assert type(got) is type(want) and np.asarray(got).dtype == np.asarray(want).dtype
    assert np.shape(got) == np.shape(want)
    np.testing.assert_allclose(got, want, rtol=1e-6 if x.dtype == np.float32 else 1e-13)
    with pytest.raises(ValueError, match="range"):
        fusejit.jit(lambda a: st.iqr(a, rng=(-5, 50)))(x)


MAD = {
    "default": (lambda a: st.median_abs_deviation(a), X.reshape(5, 6)),
    "axis 1, normal scale": (lambda a: st.median_abs_deviation(a, axis=1, scale="normal"),
                             X.reshape(5, 6)),
    "axis None": (lambda a: st.median_abs_deviation(a, axis=None), X.reshape(5, 6)),
    "mean center": (lambda a: st.median_abs_deviation(a, center=np.mean, scale=2.0), X),
    "keepdims, float32": (lambda a: st.median_abs_deviation(a, axis=1, keepdims=True),
                          X.reshape(5, 6).astype(np.float32)),
    "a NaN": (lambda a: st.median_abs_deviation(a, axis=1),
              np.where(X > 1.5, np.nan, X).reshape(5, 6)),
}


@pytest.mark.parametrize("name", list(MAD))
def test_median_abs_deviation(name: str) -> None:
    f, x = MAD[name]
    want, got = f(x), fusejit.jit(f)(x)
    assert type(got) is type(want) and np.asarray(got).dtype == np.asarray(want).dtype
    assert np.shape(got) == np.shape(want)
    np.testing.assert_allclose(got, want, rtol=1e-6 if x.dtype == np.float32 else 1e-13)
    with pytest.raises(ValueError, match="scale"):
        fusejit.jit(lambda a: st.median_abs_deviation(a, scale="nope"))(x)


POS = np.abs(X.reshape(5, 6)) + 0.1
MEANS = {
    "hmean": (lambda a: st.hmean(a), POS),
    "hmean axis None": (lambda a: st.hmean(a, axis=None), POS),
    "hmean float32": (lambda a: st.hmean(a), POS.astype(np.float32)),
    "hmean integers": (lambda a: st.hmean(a), np.arange(1, 5)),
    "hmean of a negative value (NaN)": (lambda a: st.hmean(a), np.array([1.0, -1.0, 2.0])),
    "hmean with a zero": (lambda a: st.hmean(a), np.array([1.0, 0.0, 2.0])),
    "hmean keepdims": (lambda a: st.hmean(a, axis=1, keepdims=True), POS),
    "hmean weights": (lambda a: st.hmean(a, weights=a), POS),
    "hmean broadcast weights": (lambda a: st.hmean(a, weights=a[0]), POS),
    "pmean 2.5": (lambda a: st.pmean(a, 2.5, axis=1), POS),
    "pmean 0 (gmean)": (lambda a: st.pmean(a, 0), POS),
    "pmean -2 float32": (lambda a: st.pmean(a, -2, dtype=np.float32), POS),
}


@pytest.mark.parametrize("name", list(MEANS))
def test_power_means(name: str) -> None:
    f, x = MEANS[name]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        want = f(x)
        got = fusejit.jit(f)(x)
    assert type(got) is type(want) and np.asarray(got).dtype == np.asarray(want).dtype
    assert np.shape(got) == np.shape(want)
    np.testing.assert_allclose(got, want, rtol=1e-6 if np.asarray(want).dtype == np.float32
                               else 1e-13)
    with pytest.raises(NotImplementedError):
        fusejit.jit(lambda a: st.pmean(a, np.inf))(x)


MODE_DATA = {
    "floats with NaNs": np.array([3., 1, 3, 2, 2, np.nan, np.nan, np.nan]),
    "ints, a tie": np.array([3, 1, 3, 2, 2]),
    "columns": _rng.integers(0, 4, (6, 3)),
    "a NaN in a column": np.array([[3., 1], [3, np.nan], [2, 1]]),
    "all NaN": np.full(4, np.nan),
    "empty": np.zeros((0, 2)),
}


@pytest.mark.parametrize("name", list(MODE_DATA))
@pytest.mark.parametrize("kw", [{}, {"axis": None}, {"keepdims": True}, {"axis": -1}])
def test_mode(name: str, kw: dict) -> None:
    """scipy.stats.mode (frontend/scipy_rank.py): the smallest most frequent value and its
    count, NaNs counted as one value as SciPy's 'propagate' does, SciPy's result type."""
    a = MODE_DATA[name]
    f = lambda a: st.mode(a, **kw)  # noqa: E731
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        want = f(a)
        got = fusejit.jit(f)(a)
    assert type(got) is type(want)
    for g, w in zip(got, want):
        assert type(g) is type(w) and np.asarray(g).dtype == np.asarray(w).dtype
        np.testing.assert_array_equal(g, w)
    if a.dtype.kind == "f":
        with pytest.raises(UnsupportedError, match="nan_policy='omit'"):
            fusejit.jit(lambda a: st.mode(a, nan_policy="omit"))(a)
