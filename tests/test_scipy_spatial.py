"""scipy.spatial.distance.cdist and pdist of traced arrays (frontend/scipy_spatial.py): SciPy's
values, dtype and shape for every supported metric (aliases, weights, p), NaN and zero rows,
SciPy's errors, and the refusals."""

from __future__ import annotations

import numpy as np
import pytest
from conftest import assert_same

import fusejit
from fusejit.errors import UnsupportedError

distance = pytest.importorskip("scipy.spatial.distance")

RNG = np.random.default_rng(17)
A = RNG.standard_normal((6, 4))
B = RNG.standard_normal((5, 4))
A[0, 1] = np.nan  # a NaN feature
A[1] = 0.0  # a zero row (cosine, correlation and braycurtis: 0/0)
B[2] = A[2]  # a repeated row (distance 0)
W = np.array([1.0, 0.0, 2.5, 0.5])
GLOBAL_W = W.copy()  # read by a traced function: a traced weight array

METRICS = ["euclidean", "sqeuclidean", "cityblock", "chebyshev", "minkowski", "cosine",
           "correlation", "braycurtis", "canberra", "cheb", "sqe", "cos"]


def _compare(f, *args) -> None:
    with np.errstate(all="ignore"):
        want = f(*args)
    got = fusejit.jit(f)(*args)
    assert_same(got, want, rtol=1e-13, atol=1e-15)


@pytest.mark.parametrize("metric", METRICS)
@pytest.mark.parametrize("options", [{}, {"w": W}], ids=["plain", "weighted"])
def test_cdist_and_pdist_match_scipy(metric: str, options: dict) -> None:
    _compare(lambda a, b: distance.cdist(a, b, metric, **options), A, B)
    _compare(lambda a: distance.pdist(a, metric, **options), A)


@pytest.mark.parametrize("p", [0.5, 1, 2, 3, np.inf, 0, -1])
def test_minkowski_p(p: float) -> None:
    _compare(lambda a, b: distance.cdist(a, b, "minkowski", p=p), A, B)
    _compare(lambda a: distance.pdist(a, "minkowski", p=p, w=W), A)


@pytest.mark.parametrize("dtype", [np.float32, np.int64, np.bool_], ids=str)
def test_inputs_are_computed_in_float64(dtype) -> None:
    a, b = (np.abs(x * 3).astype(dtype) for x in (A[1:], B))
    _compare(lambda a, b: distance.cdist(a, b, "cityblock"), a, b)
    _compare(lambda a: distance.pdist(a, "euclidean"), a)
    _compare(lambda a: distance.cdist(a, B, "cosine"), a)  # one traced argument, one not


@pytest.mark.parametrize("shapes", [((0, 4), (3, 4)), ((2, 0), (3, 0)), ((1, 4), (1, 4))])
def test_empty_and_single_rows(shapes) -> None:
    a, b = (RNG.standard_normal(s) for s in shapes)
    for metric in ("euclidean", "chebyshev", "canberra"):
        _compare(lambda a, b, m=metric: distance.cdist(a, b, m), a, b)
        _compare(lambda a, m=metric: distance.pdist(a, m), a)


def test_global_weights_are_checked_when_the_program_runs() -> None:
    f = fusejit.jit(lambda a: distance.pdist(a, "euclidean", w=GLOBAL_W))
    assert_same(f(A), distance.pdist(A, "euclidean", w=W), rtol=1e-13)
    GLOBAL_W[1] = -1.0
    try:
        with pytest.raises(ValueError, match="non-negative"):
            distance.pdist(A, "euclidean", w=GLOBAL_W)
        with pytest.raises(ValueError, match="non-negative"):
            f(A)
    finally:
        GLOBAL_W[1] = 0.0


@pytest.mark.parametrize("case", [
    lambda a: distance.cdist(a[0], a),  # 1-D
    lambda a: distance.cdist(a, a[:, :2]),  # columns differ
    lambda a: distance.cdist(a, a, "nosuchmetric"),
    lambda a: distance.cdist(a, a, "euclidean", p=3),  # a keyword the metric does not take
    lambda a: distance.pdist(a, "euclidean", w=[1.0, 2.0]),  # weights of the wrong size
    lambda a: distance.pdist(a, "euclidean", w=-W),  # negative weights
    lambda a: distance.cdist(a * 1j, a),  # complex
], ids=["1-D", "columns", "metric", "keyword", "weight size", "weight sign", "complex"])
def test_scipys_errors(case) -> None:
    with pytest.raises(Exception) as want:
        case(A)
    with pytest.raises(type(want.value)):
        fusejit.jit(case)(A)


@pytest.mark.parametrize("case,words", [
    (lambda a: distance.cdist(a, a, "hamming"), "metric 'hamming'"),
    (lambda a: distance.cdist(a, a, lambda u, v: 0.0), "Python function"),
    (lambda a: distance.cdist(a, a, out=np.empty((6, 6))), "out="),
    (lambda a: distance.cdist(a, a, "minkowski", p=a[0, 0]), "traced p="),
])
def test_refusals_name_what_is_missing(case, words: str) -> None:
    with pytest.raises(UnsupportedError, match=words) as info:
        fusejit.jit(case)(A)
    assert "test_scipy_spatial.py" in str(info.value)


def test_gradient_of_a_distance_sum() -> None:
    """d/dA sum_ij |a_i - b_j| = sum_j (a_i - b_j) / |a_i - b_j|, through the fused reduction."""
    a, b = RNG.standard_normal((4, 3)), RNG.standard_normal((5, 3))
    g = fusejit.grad(lambda a: distance.cdist(a, b).sum())(a)
    diff = a[:, None, :] - b[None, :, :]
    want = (diff / np.sqrt((diff ** 2).sum(-1, keepdims=True))).sum(1)
    np.testing.assert_allclose(g, want, rtol=1e-12)
