"""scipy.special.lambertw (frontend/special_lambertw.py: Halley's iteration from fusejit's own
first guesses) against SciPy over the complex plane and its branch cuts for branches -3..3,
at magnitudes from 1e-300 to 1e300, with large k, SciPy's special values and dtypes; near the
branch point -1/e against mpmath (written in: SciPy loses digits there); its tol (refused
outside [1e-13, 1e-6]) and fusejit.grad's refusal of a complex value."""

from __future__ import annotations

import numpy as np
import pytest

import fusejit
from fusejit import UnsupportedError

sp = pytest.importorskip("scipy.special")
pytestmark = pytest.mark.filterwarnings("ignore::RuntimeWarning")

R = np.random.default_rng(41)


def _plane() -> np.ndarray:
    wide = 10.0 ** R.uniform(-300, 300, 300) * np.exp(1j * R.uniform(-np.pi, np.pi, 300))
    box = R.uniform(-3, 3, 300) + 1j * R.uniform(-3, 3, 300)
    real = np.concatenate([-(10.0 ** R.uniform(-5, 3, 80)), 10.0 ** R.uniform(-300, 300, 40),
                           R.uniform(-1, 1, 80), [-0.5, -0.3, -1 / np.e, -0.36]])
    below = real.astype(np.complex128)
    below.imag = -0.0  # the lower side of the branch cuts
    return np.concatenate([wide, box, real.astype(np.complex128), below])


Z = _plane()


def _close(got: np.ndarray, want: np.ndarray, rtol: float) -> np.ndarray:
    both_nan = np.isnan(got) & np.isnan(want)
    return both_nan | (np.abs(got - want) <= rtol * np.abs(want))


def test_branches_match_scipy_over_the_plane() -> None:
    """Branches -3..3 (k traced) off and on the cuts (both signs of a zero imaginary part),
    one compile: 1e-14 of SciPy's value, the same branch everywhere."""
    k = np.arange(-3, 4)
    f = fusejit.jit(lambda z, k: sp.lambertw(z[:, None], k[None, :]))
    got, want = f(Z, k), sp.lambertw(Z[:, None], k[None, :])
    assert got.dtype == want.dtype == np.complex128
    ok = _close(got, want, 1e-14) | (np.abs(Z[:, None] + 1 / np.e) < 1e-3)  # (mpmath's test)
    assert ok.all(), (Z[np.nonzero(~ok)[0]], k[np.nonzero(~ok)[1]], got[~ok], want[~ok])


@pytest.mark.parametrize("k", [-1000000, 10, 10**10])
def test_far_branches(k: int) -> None:
    got = fusejit.jit(lambda z: sp.lambertw(z, k))(Z)
    assert _close(got, sp.lambertw(Z, k), 1e-14).all()


def test_special_values_dtypes_and_shapes() -> None:
    """SciPy's special values (signed zeros kept; -1/e itself: mpmath's, where SciPy gives
    NaN), complex128 from every input dtype, 0-d and zero-size operands."""
    special = np.array([0.0, -0.0, np.inf, -np.inf, np.nan, complex(np.inf, 1.0),
                        complex(-np.inf, -2.0), complex(1.0, np.inf), complex(np.nan, 1.0),
                        complex(0.0, -0.0), 1.0])
    f = fusejit.jit(lambda z, k: sp.lambertw(z, k))
    for k in (-1, 0, 1, 2):
        got, want = f(special, np.int64(k)), sp.lambertw(special, k)
        np.testing.assert_array_equal(got, want)
        np.testing.assert_array_equal(np.signbit(got.real), np.signbit(want.real))
        np.testing.assert_array_equal(np.signbit(got.imag), np.signbit(want.imag))
    for x in (np.array([0.5, 2.0, -0.2], np.float32), np.array([1, 2, 30]),
              np.array([True, False]), np.array([0.5 + 1j], np.complex64),
              np.array([-0.3, 4.0], np.float16)):
        got, want = fusejit.jit(lambda z: sp.lambertw(z))(x), sp.lambertw(x)
        assert got.dtype == want.dtype
        assert _close(got, want, 1e-14).all(), (x, got, want)
    scalar = fusejit.jit(lambda z: sp.lambertw(z, -1))(np.float64(-0.2))
    assert np.ndim(scalar) == 0 and _close(scalar, sp.lambertw(-0.2, -1), 1e-14)
    assert fusejit.jit(lambda z: sp.lambertw(z))(np.zeros((0, 3))).shape == (0, 3)


# mpmath.lambertw at x = -1/e + d (the double nearest; mp.dps = 40): (d, k, W)
NEAR_BRANCH_POINT = [
    (0.0, 0, -1 + 8.220079714836618e-09j), (0.0, -1, -1 - 8.220079714836618e-09j),
    (1e-16, 0, -0.9999999768481082 + 0j), (1e-16, -1, -1.0000000231518922 + 0j),
    (-1e-16, 0, -0.9999999999999998 + 2.5906553711239724e-08j),
    (-1e-16, -1, -0.9999999999999998 - 2.5906553711239724e-08j),
    (1e-12, 0, -0.9999976683981106 + 0j), (1e-12, -1, -1.0000023316055138 + 0j),
    (-1e-12, 0, -0.9999999999981878 + 2.3316326812943623e-06j),
    (-1e-12, -1, -0.9999999999981878 - 2.3316326812943623e-06j),
    (1e-10, 0, -0.9999766837418852 + 0j), (1e-10, -1, -1.0000233166205523 + 0j),
    (-1e-10, 0, -0.9999999998187812 + 2.331644222761136e-05j),
    (-1e-10, -1, -0.9999999998187812 - 2.331644222761136e-05j),
    (1e-08, 0, -0.9997668537219889 + 0j), (1e-08, -1, -1.0002331825217692 + 0j),
    (1e-06, 0, -0.9976701662720535 + 0j), (1e-06, -1, -1.0023334581084247 + 0j),
    (-1e-06, 0, -0.9999981878144679 + 0.0023316420449523744j),
    (-1e-06, -1, -0.9999981878144679 - 0.0023316420449523744j),
    (0.003, 0, -0.8774287170665479 + 0j), (0.003, -1, -1.1334870010068685 + 0j),
]


def test_near_the_branch_point_against_mpmath() -> None:
    """2e-16 of mpmath's W next to -1/e, where SciPy's iteration cancels (its k = -1 at
    -1/e + 1e-10 is off by 2e-5 relative, and it returns NaN at the double nearest -1/e)."""
    d = np.array([c[0] for c in NEAR_BRANCH_POINT])
    k = np.array([c[1] for c in NEAR_BRANCH_POINT])
    want = np.array([c[2] for c in NEAR_BRANCH_POINT])
    x = -np.exp(-1) + d
    got = fusejit.jit(lambda x, k: sp.lambertw(x, k))(x, k)
    assert (np.abs(got - want) <= 2.5e-16 * np.abs(want)).all(), (got - want)
    scipy_k1 = sp.lambertw(-np.exp(-1) + 1e-10, -1)
    assert abs(scipy_k1 - (-1.0000233166205523)) > 1e-6  # (the documented difference)
    assert np.isnan(sp.lambertw(-np.exp(-1)))


def test_tol_in_and_out_of_range() -> None:
    x = R.uniform(-0.3, 20, 50)
    for tol in (1e-13, 1e-10, 1e-6):
        got = fusejit.jit(lambda x, tol=tol: sp.lambertw(x, 0, tol))(x)
        assert _close(got, sp.lambertw(x, 0, tol), 1e-14).all()
    for tol in (1e-3, 0.0, 1e-16):
        with pytest.raises(UnsupportedError, match=r"tol=.*test_special_lambertw\.py"):
            fusejit.jit(lambda x, tol=tol: sp.lambertw(x, 0, tol))(x)
    with pytest.raises(UnsupportedError, match="tol="):
        fusejit.jit(lambda x, t: sp.lambertw(x, 0, t))(x, 1e-8)


def test_fused_into_real_code_and_gradient_refused() -> None:
    """Wien's displacement constant, 5 + W(-5 e^-5), from traced values; a gradient through
    the complex value is refused with a clear error."""
    def wien(a: np.ndarray) -> np.ndarray:
        return a + sp.lambertw(-a * np.exp(-a)).real

    a = np.array([5.0, 3.0, 2.0])
    np.testing.assert_allclose(fusejit.jit(wien)(a), wien(a), rtol=1e-15)
    with pytest.raises(UnsupportedError, match="complex"):
        fusejit.grad(lambda a: np.sum(wien(a)))(a)


def test_wrightomega_of_real_x() -> None:
    """w + log w = x: 2e-15 of SciPy from -800 to 1.7e308, plus the conditioning of w in x
    (|x| / (1 + w) half-ulps of x: both round log w next to x for negative x; SciPy returns
    e^x itself below x ~ -33.27, and drops a part of -e^2x just above: fusejit keeps it, as
    mpmath), its special values, float32's loop, a gradient (w / (1 + w)); complex z
    refused by name."""
    x = np.concatenate([R.uniform(-800, 800, 400), R.uniform(-35, 5, 400),
                        10.0 ** np.linspace(-300, 308, 60), -(10.0 ** np.linspace(-300, 308, 60)),
                        [0.0, -0.0, np.inf, -np.inf, np.nan, -10.0, 1.0, 1e20, 1.7e308]])
    got, want = fusejit.jit(lambda x: sp.wrightomega(x))(x), sp.wrightomega(x)
    rtol = 2e-15 + 1.2e-16 * np.abs(x) / (1 + np.abs(want)) + np.where(
        x < -30, 1.2 * np.exp(np.minimum(x, 0.0)), 0.0)
    ok = (got == want) | (np.abs(got - want) <= rtol * np.abs(want)) | (
        np.isnan(got) & np.isnan(want))
    assert ok.all(), (x[~ok], got[~ok], want[~ok])
    assert got.dtype == want.dtype == np.float64
    assert fusejit.jit(lambda x: sp.wrightomega(x))(np.float64(-33.27153402925887)) == (
        3.5510465599194737e-15)  # (mpmath; SciPy: e^x = 3.5510465599194863e-15)
    x32 = np.array([-3.0, 0.5, 40.0], np.float32)
    got32 = fusejit.jit(lambda x: sp.wrightomega(x))(x32)
    assert got32.dtype == np.float32
    np.testing.assert_allclose(got32, sp.wrightomega(x32), rtol=1e-7)
    g = fusejit.grad(lambda x: np.sum(sp.wrightomega(x)))(np.array([-12.0, -1.0, 0.5, 30.0]))
    w = sp.wrightomega(np.array([-12.0, -1.0, 0.5, 30.0]))
    np.testing.assert_allclose(g, w / (1 + w), rtol=1e-13)
    with pytest.raises(UnsupportedError, match="wrightomega of complex"):
        fusejit.jit(lambda z: sp.wrightomega(z))(np.array([1 + 1j]))
