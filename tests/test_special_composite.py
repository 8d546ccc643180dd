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



def _inverse_grid() -> tuple[np.ndarray, ...]:
    """k, n, y for bdtri and nbdtri: every k, n pair of a small grid (negative, fractional,
    k = 0 and k >= n) against y's special values, random y to 1e-300 and to 1 - 1e-16."""
    rng = np.random.default_rng(5)
    k, n, y = np.meshgrid([-1, -0.3, 0, 0.5, 2, 3.7, 9], [-1, 0, 0.5, 1, 4, 10.2, 30],
                          [-0.1, 0, 1e-300, 0.3, 0.8, 0.80000001, 1, 1.1, np.nan])
    ks = np.floor(rng.uniform(0, 30, 400))
    ns = ks + np.floor(rng.uniform(1, 30, 400))
    ns = np.where(ns - ks == ks + 1, ns + 1, ns)  # (not the tie: see test_bdtri_at_the_tie)
    ys = np.concatenate([10 ** rng.uniform(-300, -1, 200), 1 - 10 ** rng.uniform(-16, -1, 200)])
    return (np.concatenate([k.ravel(), ks]), np.concatenate([n.ravel(), ns]),
            np.concatenate([y.ravel(), ys]))


def _gamma_grid() -> tuple[np.ndarray, ...]:
    """a (or x), b, p for gdtrix and gdtria: zeros, negative and random values."""
    rng = np.random.default_rng(6)
    a = np.concatenate([[0, -1, 2, 2, 2, 2, 2], rng.uniform(0.01, 5, 300)])
    b = np.concatenate([[3, 3, -3, 0, 3, 3, 3], rng.uniform(0.1, 20, 300)])
    p = np.concatenate([[0.5, 0.5, 0.5, 0.5, 0, 1, np.nan], rng.uniform(0, 1, 300)])
    return a, b, p


CASES = {
    "bdtr": (lambda k, n, p: (sps.bdtr(k, n, p), sps.bdtrc(k, n, p)),
             (np.array([-1, 0, 2, 2.5, 5, 6, 3, 3, 1]), np.array([5, 5, 5, 5.7, 5, 5, 5, 5, 1]),
              np.array([0.4, 0.4, 0.4, 0.4, 0.4, 0.4, 0.0, 1.0, 0.3]))),
    "nbdtr": (lambda k, n, p: sps.nbdtr(k, n, p), (K, N, P)),
    "nbdtrc": (lambda k, n, p: sps.nbdtrc(k, n, p), (K, N, P)),
    "gdtr": (lambda a, b, x: sps.gdtr(a, b, x), (np.abs(K) + 0.5, np.abs(N) + 0.5, P * 4)),
    "gdtrc": (lambda a, b, x: sps.gdtrc(a, b, x), (np.abs(K) + 0.5, np.abs(N) + 0.5, P * 4)),
    "pdtri": (lambda k, y: sps.pdtri(k, y), (K, P)),
    "bdtri": (lambda k, n, y: sps.bdtri(k, n, y), _inverse_grid()),
    "nbdtri": (lambda k, n, y: sps.nbdtri(k, n, y), _inverse_grid()),
    "bdtri_float32": (lambda k, n, y: sps.bdtri(k, n, y),
                      tuple(a.astype(np.float32) for a in _inverse_grid())),
    "gdtrix": (lambda a, b, p: sps.gdtrix(a, b, p), _gamma_grid()),
    "gdtria": (lambda p, b, x: sps.gdtria(p, b, x), _gamma_grid()[::-1]),
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


def test_bdtri_at_the_tie() -> None:
    """A documented difference: where n - k = k + 1, betainc(n - k, k + 1, 1/2) is 1/2
    exactly, and SciPy's Cephes takes the side its rounding of it gives: from 1 - y, which
    loses a y below 1e-16 (bdtri(24, 49, 3e-162) = 1.0 there). fusejit takes 1 -
    betaincinv(n - k, k + 1, y) at the tie, which keeps y's digits: SciPy's own betaincinv
    gives the same value."""
    k, n, y = np.array([24.0, 2.0]), np.array([49.0, 5.0]), np.array([3.077148507421598e-162,
                                                                      0.25])
    got = fusejit.jit(lambda k, n, y: sps.bdtri(k, n, y))(k, n, y)
    want = 1 - sps.betaincinv(n - k, k + 1, y)
    np.testing.assert_allclose(got, want, rtol=1e-13)
    assert sps.bdtri(24.0, 49.0, 3.077148507421598e-162) == 1.0 and got[0] < 1.0
