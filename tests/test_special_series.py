"""scipy.special's zeta (Hurwitz and Riemann: the private ufuncs _zeta and _riemann_zeta),
erfi and dawsn (codegen/include/fj_special_series.h), and the Python functions polygamma and
factorial over them (frontend/scipy_special_fns.py), against SciPy over wide ranges and
special values, against 120-digit mpmath values written here, with their gradients.

Tolerances: float64 relative 1e-12, float32 2e-6. Where SciPy's value is NaN for x beyond
~1e13 with 1 < q <= 1e8 (its correction terms overflow where the sum underflows) fusejit's
is 0: `test_documented_differences`.
"""

from __future__ import annotations

import numpy as np
import pytest
from conftest import match_mask, run_both

import fusejit

sp = pytest.importorskip("scipy.special")
pytestmark = pytest.mark.filterwarnings("ignore::RuntimeWarning")
RNG = np.random.default_rng(41)


def _check(got: np.ndarray, want: np.ndarray, what: str) -> None:
    assert got.dtype == want.dtype and got.shape == want.shape, what
    rtol = 1e-12 if want.dtype == np.float64 else 2e-6
    ok = match_mask(got, want, rtol, 1e-300 if want.dtype == np.float64 else 1e-37)
    assert ok.all(), f"{what}: got {got[~ok][:4]} want {want[~ok][:4]}"


def _hurwitz_args() -> tuple[np.ndarray, np.ndarray]:
    x = np.concatenate([1 + np.exp(RNG.uniform(-25, 2, 300)), RNG.uniform(1, 200, 200),
                        RNG.integers(2, 90, 200).astype(float), [1.0, 0.5, -3.0, np.inf, 1e5]])
    q = np.concatenate([np.exp(RNG.uniform(-20, 40, 500)), -RNG.uniform(0, 30, 200),
                        RNG.integers(-5, 5, 5).astype(float)])
    x, q = np.broadcast_arrays(x[:, None], RNG.permutation(q)[None, :40])
    return x.ravel(), q.ravel()


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_against_scipy_wide_ranges(dtype) -> None:
    x, q = (a.astype(dtype) for a in _hurwitz_args())
    with np.errstate(all="ignore"):
        _check(fusejit.jit(lambda x, q: sp.zeta(x, q))(x, q), sp.zeta(x, q), "zeta(x, q)")
        r = np.concatenate([RNG.uniform(-170, 60, 400), RNG.uniform(-1, 1.5, 200),
                            -np.exp(RNG.uniform(-30, 5.5, 100)), [1.0, 0.0, -0.0, -2.0, -200.0,
                                                                   np.inf, -np.inf, np.nan]])
        r = r.astype(dtype)
        _check(fusejit.jit(lambda x: sp.zeta(x))(r), sp.zeta(r), "zeta(x)")
        e = np.concatenate([RNG.uniform(-30, 30, 400), np.exp(RNG.uniform(-700, 700, 200)),
                            [0.0, -0.0, 6.0, -6.0, 26.6, 27.5, np.inf, -np.inf, np.nan]])
        e = np.concatenate([e, -e]).astype(dtype)
        got = fusejit.jit(lambda x: (sp.erfi(x), sp.dawsn(x)))(e)
        _check(got[0], sp.erfi(e), "erfi")
        _check(got[1], sp.dawsn(e), "dawsn")


HURWITZ_REF = [  # (x, q, zeta(x, q)): mpmath at 120 digits
    (2, 1, 1.6449340668482264), (1.0001, 1, 10000.577222947539),
    (3.5, 0.25, 128.54695896428436), (30, 1000, 3.498525857935742e-89),
    (7, 0.001, 9.999999999999999e+20), (64.5, 0.75, 114432269.49506982),
    (100, 2, 7.888609052210118e-31), (2, -1.5, 9.379246644989124),
    (5, -7.25, -1020.0655475934245), (1.5, 1000000.0, 0.002000000500000125),
]
RIEMANN_REF = [
    (-0.05, -0.45644187238633066), (-0.5, -0.20788622497735457), (-3.3, 0.006208678127736984),
    (-20.5, -108.21747505877606), (-101.5, -2.0661953698944637e+79),
    (-180.5, -5.1567927348837e+185), (0.3, -0.904559257253984), (0.999, -999.4228571557879),
    (1.5, 2.612375348685488), (12.0, 1.000246086553308),
]
ERFI_REF = [  # (x, erfi(x), dawsn(x))
    (1e-08, 1.1283791670955126e-08, 1e-08), (0.3, 0.3489493387589362, 0.28263166502131193),
    (2.0, 18.564802414575553, 0.30134038892379195),
    (5.99, 365432114113739.75, 0.08468806519284362),
    (6.01, 462963122582807.94, 0.08439781894130285),
    (12.0, 1.6299357995243493e+61, 0.04181287645398826),
    (26.0, 8.314637164730988e+291, 0.019245024851840636),
    (-4.5, -80197458.90121748, -0.11408861022682498),
]


def test_against_mpmath() -> None:
    h = np.array(HURWITZ_REF)
    np.testing.assert_allclose(fusejit.jit(lambda x, q: sp.zeta(x, q))(h[:, 0], h[:, 1]),
                               h[:, 2], rtol=2e-15, atol=0)
    r = np.array(RIEMANN_REF)  # (the reflection's (2 pi)^x and exp lose ~|x| eps)
    got = fusejit.jit(lambda x: sp.zeta(x))(r[:, 0])
    rtol = np.maximum(2e-15, 1e-15 * np.abs(r[:, 0]))
    assert np.all(np.abs(got - r[:, 1]) <= rtol * np.abs(r[:, 1])), got
    e = np.array(ERFI_REF)
    got = fusejit.jit(lambda x: (sp.erfi(x), sp.dawsn(x)))(e[:, 0])
    np.testing.assert_allclose(got[0], e[:, 1], rtol=4e-15, atol=0)
    np.testing.assert_allclose(got[1], e[:, 2], rtol=4e-15, atol=0)


def test_documented_differences() -> None:
    x = np.array([1e300])
    assert np.isnan(sp.zeta(x, 2.0)[0])  # SciPy's correction terms overflow: inf * 0
    assert fusejit.jit(lambda x: sp.zeta(x, 2.0))(x)[0] == 0.0  # 2^-1e300 underflows


def test_polygamma_and_factorial() -> None:
    x = np.array([0.5, 1.25, 3.0, 10.0, 25.5, -1.5, 1e-3])
    n = np.array([0, 1, 2, 3, 5, 1, 2])
    run_both(lambda x: (sp.polygamma(0, x), sp.polygamma(1, x), sp.polygamma(4, x)), x)
    run_both(lambda n, x: sp.polygamma(n, x), n, x)
    for v in (np.array([3, -1, 0, 5, 170, 171]), np.array([2.5, np.nan, -0.5, -1.0, 172.0]),
              np.array(4), np.array([3.0], np.float32), np.array([127, 5], np.int8)):
        run_both(lambda n: sp.factorial(n), v)
    run_both(lambda n: sp.factorial(n[:0]), np.arange(3, dtype=np.int8))  # as it is
    run_both(lambda n: sp.factorial(n > 1), np.arange(3))  # SciPy's ValueError for bools
    with pytest.raises(fusejit.UnsupportedError, match="exact=True"):
        fusejit.jit(lambda n: sp.factorial(n, exact=True))(np.arange(3))


def test_gradients() -> None:
    x, q = np.array([1.5, 2.0, 4.5]), np.array([0.5, 2.0, 7.0])
    g = fusejit.grad(lambda q: np.sum(sp.zeta(x, q)))(q)
    np.testing.assert_allclose(g, -x * sp.zeta(x + 1, q), rtol=1e-13)
    e = np.array([-3.0, 0.0, 0.4, 7.0])
    np.testing.assert_allclose(fusejit.grad(lambda e: np.sum(sp.erfi(e)))(e),
                               2 / np.sqrt(np.pi) * np.exp(e * e), rtol=1e-13)
    np.testing.assert_allclose(fusejit.grad(lambda e: np.sum(sp.dawsn(e)))(e),
                               1 - 2 * e * sp.dawsn(e), rtol=1e-13, atol=1e-16)
    np.testing.assert_allclose(fusejit.grad(lambda x: np.sum(sp.polygamma(1, x)))(q),
                               sp.polygamma(2, q), rtol=1e-12)
    d = np.array([0.3, 2.5, -1.5, 40.0])  # digamma' = polygamma(1, x); gammaln'' too
    np.testing.assert_allclose(fusejit.grad(lambda x: np.sum(sp.digamma(x)))(d),
                               sp.polygamma(1, d), rtol=1e-12)
    with pytest.raises(fusejit.UnsupportedError, match="derivative in x"):
        fusejit.grad(lambda x: np.sum(sp.zeta(x, q)))(x)
