"""scipy.special ufuncs traced as other special functions (frontend/special_composite.py):
bdtr, bdtrc, nbdtr, nbdtrc, gdtr, gdtrc, pdtri, ellipk, ellipkm1, ellipe, exp10 against SciPy, on
and off their domains, float32 loops, gradients."""

from __future__ import annotations

import warnings

import numpy as np
import pytest

import fusejit

sps = pytest.importorskip("scipy.special")

K = np.array([-1, 0, 1, 2.5, 3, 7, 10])
N = np.array([0, 1, 3, 3.7, 5, 2, 20])
P = np.array([-0.1, 0, 0.3, 0.5, 0.9, 1, np.nan])
M = np.array([-1e10, -1.0, 0, 0.5, 1 - 1e-12, 1, 1.5, -np.inf, np.nan, 0.999999])
PM1 = np.array([0, 1e-300, 1e-10, 0.5, 1, 2, np.inf, -0.5])

CASES = {
    "bdtr": (lambda k, n, p: (sps.bdtr(k, n, p), sps.bdtrc(k, n, p)),
             (np.array([-1, 0, 2, 2.5, 5, 6, 3, 3, 1]), np.array([5, 5, 5, 5.7, 5, 5, 5, 5, 1]),
              np.array([0.4, 0.4, 0.4, 0.4, 0.4, 0.4, 0.0, 1.0, 0.3]))),
    "nbdtr": (lambda k, n, p: sps.nbdtr(k, n, p), (K, N, P)),
    "nbdtrc": (lambda k, n, p: sps.nbdtrc(k, n, p), (K, N, P)),
    "gdtr": (lambda a, b, x: sps.gdtr(a, b, x), (np.abs(K) + 0.5, np.abs(N) + 0.5, P * 4)),
    "gdtrc": (lambda a, b, x: sps.gdtrc(a, b, x), (np.abs(K) + 0.5, np.abs(N) + 0.5, P * 4)),
    "pdtri": (lambda k, y: sps.pdtri(k, y), (K, P)),
    "ellipk": (lambda m: sps.ellipk(m), (M,)),
    "ellipk_random": (lambda m: (sps.ellipk(m), sps.ellipk(1 - m * 1e-8)),
                      (np.random.default_rng(3).random(2000),)),
    "ellipk_float32": (lambda m: sps.ellipk(m), (M.astype(np.float32),)),
    "ellipkm1": (lambda p: sps.ellipkm1(p), (PM1,)),
    "ellipe": (lambda m: (sps.ellipe(m), sps.ellipe(-np.exp(np.abs(m) * 690)),
                          sps.ellipe(1 - np.exp(-np.abs(m) * 36))),
               (np.concatenate([M, np.random.default_rng(4).uniform(-5, 1, 500)]),)),
    "ellipe_float32": (lambda m: sps.ellipe(m), (M.astype(np.float32),)),
    "exp10": (lambda x: sps.exp10(x), (np.array([-320.0, -310, -307.9, -300, 0.5, 300,
                                                  310, np.nan]),)),
    "scalar": (lambda m: sps.ellipk(m[0]), (M[3:],)),
}


@pytest.mark.parametrize("name", list(CASES))
def test_matches_scipy(name: str) -> None:
    f, args = CASES[name]
    with warnings.catch_warnings():  # (SciPy warns when it truncates k and n)
        warnings.simplefilter("ignore", RuntimeWarning)
        warnings.simplefilter("ignore", DeprecationWarning)
        want = f(*args)
        got = fusejit.jit(f)(*args)
    for g, w in zip(got if isinstance(got, tuple) else (got,),
                    want if isinstance(want, tuple) else (want,)):
        assert type(g) is type(w) and g.dtype == w.dtype
        np.testing.assert_allclose(g, w, rtol=1e-13 if w.dtype == np.float64 else 1e-6,
                                   atol=0, equal_nan=True)


def test_gradients_flow_through_the_parts() -> None:
    p = np.array([0.3, 0.6])
    eps = 1e-6
    fd = (sps.nbdtr(3, 5, p + eps) - sps.nbdtr(3, 5, p - eps)) / (2 * eps)
    np.testing.assert_allclose(fusejit.grad(lambda p: sps.nbdtr(3, 5, p).sum())(p), fd,
                               rtol=1e-6)


def test_a_constant_array_of_another_shape() -> None:
    """A NumPy array operand (not traced: fusejit.grad's trace leaves it one) of another
    shape than the traced one broadcasts against it (SciPy's loop is asked for the dtypes
    with zero-size stand-ins of both)."""
    k = np.array([1.0, 2.0, 4.0])

    def f(p):
        return np.sum(sps.gdtr(k, 2.0, p[:, None]) + sps.ellipj(p[:, None], k / 5)[0])

    p = np.linspace(0.1, 0.9, 4)
    h = 1e-6
    want = (f(p + h) - f(p - h)) / (2 * h)  # (an equal shift of every element)
    assert np.isclose(fusejit.grad(f)(p).sum(), want, rtol=1e-6)
