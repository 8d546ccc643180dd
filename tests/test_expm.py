"""scipy.linalg.expm of traced matrices (codegen/clapack_expm.py) against SciPy: every Pade
degree and scaling (norms from 1e-3 to 100), batches, layouts, dtypes, SciPy's special cases
(0-d and 1 x 1 inputs, empty ones, diagonal and triangular matrices, inf/NaN), its errors,
the gradient (the adjoint Frechet derivative, against central differences) and explain.

Values: normwise within 1e-12 of SciPy's (the two choose degree and scaling by different
rules: Higham 2005 here, Al-Mohy and Higham 2009 in SciPy), float32 results within float32
rounding.
"""

from __future__ import annotations

import numpy as np
import pytest
from conftest import run_both

import fusejit

sl = pytest.importorskip("scipy.linalg")
RNG = np.random.default_rng(31)


def _close(got: np.ndarray, want: np.ndarray, rtol: float = 1e-12) -> None:
    assert got.dtype == want.dtype and got.shape == want.shape
    scale = np.max(np.abs(want), axis=(-2, -1), keepdims=True) if want.size else 1.0
    err = np.abs(got.astype(np.float64) - want) / np.maximum(scale, 1e-300)
    assert np.all(err <= rtol), f"normwise error {np.max(err):.3g}"


@pytest.mark.parametrize("n", [2, 3, 7, 24])
def test_expm_matches_scipy_over_degrees_and_scalings(n: int) -> None:
    f = fusejit.jit(lambda a: sl.expm(a))
    for scale in (1e-3, 0.05, 0.3, 1.0, 2.0, 5.0, 30.0, 100.0 / n):
        a = RNG.standard_normal((n, n)) * scale / np.sqrt(n)
        _close(f(a), sl.expm(a))
    b = RNG.standard_normal((3, 2, n, n))  # a batch, and a transposed (strided) operand
    _close(f(b), sl.expm(b))
    _close(f(b.swapaxes(-1, -2)), sl.expm(b.swapaxes(-1, -2)))


def test_special_cases_dtypes_and_errors() -> None:
    f = fusejit.jit(lambda a: sl.expm(a))
    up = np.triu(RNG.standard_normal((6, 6))) * 6  # scaled: the exact diagonals apply
    low = up.T.copy()
    for a in (up, low, np.diag(RNG.standard_normal(5) * 20)):
        got, want = f(a), sl.expm(a)
        _close(got, want)
        assert np.array_equal(got == 0, want == 0)  # the zero triangle stays exactly zero
    nan = np.triu(np.ones((3, 3)))
    nan[0, 2] = np.nan
    run_both(lambda a: sl.expm(a), nan)  # NaN, its zero triangle kept
    run_both(lambda a: sl.expm(a), np.diag([np.inf, -np.inf, np.nan, 1.0]))  # exp of each
    a = RNG.standard_normal((4, 4)).astype(np.float32)
    got = f(a)
    assert got.dtype == np.float32
    _close(got, sl.expm(a), 2e-6)
    h = a[:3, :3].astype(np.float16)  # float16: float32 (SciPy computes in float32 there)
    _close(fusejit.jit(lambda a: sl.expm(a))(h), sl.expm(h), 2e-5)
    run_both(lambda a: sl.expm((a > 0).astype(np.int64)), a)  # integers: float64
    run_both(lambda a: sl.expm(a[0, 0]), a)  # 0-d: a (1, 1) float64 array
    run_both(lambda a: sl.expm(a[:1, :1]), a)  # 1 x 1: exp
    run_both(lambda a: sl.expm(a[:0, :0]), a)  # empty
    run_both(lambda a: sl.expm(np.zeros((2, 0, 0))) + a[0, 0], a)
    run_both(lambda a: sl.expm(a[0]), a)  # LinAlgError: not 2-d
    run_both(lambda a: sl.expm(a[:3]), a)  # LinAlgError: not square
    with pytest.raises(fusejit.UnsupportedError, match="expm of complex"):
        fusejit.jit(lambda a: sl.expm(a * 1j))(a)


def test_expm_in_a_larger_function_and_explain() -> None:
    def propagate(h, psi, t):  # e^{-Ht} psi for a real symmetric generator
        return sl.expm(-t * (h + h.T)) @ psi

    h, psi = RNG.standard_normal((5, 5)), RNG.standard_normal((5, 2))
    got = fusejit.jit(propagate)(h, psi, 0.3)
    np.testing.assert_allclose(got, propagate(h, psi, 0.3), rtol=1e-12, atol=1e-14)
    text = str(fusejit.jit(propagate).explain(h, psi, 0.3))
    assert "scipy.linalg.expm [5x5] float64: scaling and squaring" in text


def test_gradient_is_the_adjoint_frechet_derivative() -> None:
    a = RNG.standard_normal((4, 4)) * 0.8
    w = RNG.standard_normal((4, 4))

    def loss(a):
        return np.sum(sl.expm(a) * w)

    got = fusejit.grad(loss)(a)
    eps, num = 1e-6, np.zeros_like(a)
    for i in range(4):
        for j in range(4):
            d = np.zeros_like(a)
            d[i, j] = eps
            num[i, j] = (loss(a + d) - loss(a - d)) / (2 * eps)
    np.testing.assert_allclose(got, num, rtol=1e-7, atol=1e-8)
    b = RNG.standard_normal((2, 3, 3))
    assert fusejit.grad(lambda b: np.sum(sl.expm(b) ** 2))(b).shape == (2, 3, 3)


def test_cuda_backend_refuses_expm_by_name(monkeypatch: pytest.MonkeyPatch) -> None:
    import cuda_fake

    cuda_fake.install(monkeypatch)
    with pytest.raises(fusejit.UnsupportedError, match="expm.*CUDA backend"):
        fusejit.jit(lambda a: sl.expm(a), backend="cuda")(np.eye(3))
