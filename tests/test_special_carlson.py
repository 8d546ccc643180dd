"""scipy.special.ellipj (codegen/include/fj_special_ellip.h: the AGM with Landen's
transformations, the series in m and in 1 - m where they hold) and Carlson's symmetric
integrals elliprf, elliprd, elliprc, elliprg, elliprj (fj_special_carlson.h: the duplication
theorem, principal values for a negative y or p) against SciPy: random arguments over ten
decades, every special value (zeros, infinities, NaN, negatives), float32 loops,
broadcasting, the documented differences (against reference values from mpmath, written
here), and the gradients."""

from __future__ import annotations

import numpy as np
import pytest
from conftest import assert_same
from gradcheck import check_grad

import fusejit

sp = pytest.importorskip("scipy.special")
pytestmark = pytest.mark.filterwarnings("ignore::RuntimeWarning")

R = np.random.default_rng(31)
SPECIAL = np.array([0.0, -0.0, 1.0, 2.5, -1.0, np.inf, -np.inf, np.nan, 1e-30, 1e30])


def _ellipj_grid() -> tuple[np.ndarray, np.ndarray]:
    """u and m where SciPy is right: random, near 0 and 1 in m (the series), and the special
    values (the series in 1 - m only where (1 - m) cosh(u)^2 is small, see below)."""
    u = np.concatenate([R.uniform(-20, 20, 400), R.uniform(-3, 3, 200),
                        [0.0, -0.0, 1e-300, 1.0, -2.0, np.inf, -np.inf, np.nan, 300.0]])
    m = np.concatenate([R.uniform(0, 1, 400), 1 - 10 ** R.uniform(-16, -10, 100),
                        10 ** R.uniform(-14, -8, 100), [0.0, 1.0, 0.5, 0.5, 0.3, 0.5, 1.0,
                                                        0.5, 1.0]])
    spec = np.array([0.0, -0.0, 1.0, 0.5, 1e-12, 1 - 1e-12, -0.1, 1.1, np.inf, np.nan])
    uu, mm = np.meshgrid(np.array([0.0, -0.0, 0.7, -3.0, np.inf, np.nan, 1e-300]), spec)
    return np.concatenate([u, uu.ravel()]), np.concatenate([m, mm.ravel()])


def test_ellipj_against_scipy() -> None:
    """sn, cn, dn, ph: 1e-13 of SciPy's Cephes (ph at m = 1 is gd(u) = atan(sinh u) here,
    SciPy's 2 atan(e^u) - pi/2 loses digits at small u: an absolute 1e-16)."""
    u, m = _ellipj_grid()
    got = fusejit.jit(lambda u, m: sp.ellipj(u, m))(u, m)
    for g, want in zip(got, sp.ellipj(u, m)):
        assert_same(g, want, rtol=1e-13, atol=1e-15)
    u32, m32 = u.astype(np.float32), m.astype(np.float32)
    got32 = fusejit.jit(lambda u, m: sp.ellipj(u, m))(u32, m32)
    for g, want in zip(got32, sp.ellipj(u32, m32)):
        assert_same(g, want, rtol=1e-6, atol=1e-7)


def test_ellipj_broadcasts_and_fuses() -> None:
    u, m = R.uniform(-4, 4, (5, 1)), R.uniform(0, 1, 6)

    def f(u, m):
        sn, cn, dn, _ = sp.ellipj(u, m)
        return sn * sn + cn * cn, dn * dn + m * sn * sn

    one, also = fusejit.jit(f)(u, m)
    np.testing.assert_allclose(one, np.ones((5, 6)), rtol=1e-15)
    np.testing.assert_allclose(also, np.ones((5, 6)), rtol=1e-15)
    assert_same(fusejit.jit(lambda u: sp.ellipj(u, 0.3)[2])(np.float64(1.25)),
                sp.ellipj(1.25, 0.3)[2], rtol=1e-15)


def test_ellipj_where_scipy_is_wrong() -> None:
    """Documented differences: SciPy applies the series in 1 - m (m >= 1 - 1e-10) at every
    u, and its cn, dn leave [-1, 1] once (1 - m) cosh(u)^2 nears 1; fusejit uses the AGM
    there (mpmath's values, 40 digits, written here). At m = 1 SciPy is NaN past |u| ~ 355
    (cosh u sinh u overflows); fusejit gives tanh, sech, sech, gd."""
    got = fusejit.jit(lambda u, m: sp.ellipj(u, m))(np.array([30.0, 20.0, 800.0, -800.0]),
                                                    np.array([0.9999999999, 1 - 1e-12, 1, 1]))
    ref = [(-0.9995517672263414, -0.029937679180219296, 0.029937680848858644),
           (0.999999998161384, -6.064018547687579e-05, 6.064843009134284e-05)]
    for i, (sn, cn, dn) in enumerate(ref):
        np.testing.assert_allclose([got[0][i], got[1][i], got[2][i]], [sn, cn, dn], rtol=1e-9)
    np.testing.assert_array_equal(got[0][2:], [1.0, -1.0])
    np.testing.assert_array_equal(got[1][2:], [0.0, 0.0])
    np.testing.assert_array_equal(got[3][2:], [np.pi / 2, -np.pi / 2])
    assert abs(sp.ellipj(30.0, 0.9999999999)[1]) > 1 and np.isnan(sp.ellipj(800.0, 1.0)[0])


def _carlson_args(n: int, k: int) -> list[np.ndarray]:
    """k arguments: random over ten decades, with zeros and a grid of special values."""
    out = []
    for j in range(k):
        a = 10 ** R.uniform(-5, 5, n)
        a[j * 20:(j + 1) * 20] = 0.0
        out.append(a)
    grid = np.meshgrid(*([SPECIAL] * min(k, 3)), indexing="ij")
    cols = [g.ravel() for g in grid] + [np.full(grid[0].size, 0.75)] * (k - len(grid))
    return [np.concatenate([a, c]) for a, c in zip(out, cols)]


CARLSON = {"elliprf": 3, "elliprd": 3, "elliprg": 3, "elliprc": 2, "elliprj": 4}


@pytest.mark.parametrize("name", sorted(CARLSON))
def test_carlson_against_scipy(name: str) -> None:
    """1e-13 of SciPy's (Zhou's ellint_carlson); R_C and R_J also with y, p negated (their
    principal values: 1e-11 where the three terms of Carlson's transformation cancel)."""
    f, k = getattr(sp, name), CARLSON[name]
    args = _carlson_args(300, k)
    jf = fusejit.jit({2: lambda a, b: f(a, b), 3: lambda a, b, c: f(a, b, c),
                      4: lambda a, b, c, d: f(a, b, c, d)}[k])
    assert_same(jf(*args), f(*args), rtol=1e-13, atol=0)
    if name in ("elliprc", "elliprj"):
        neg = args[:-1] + [-args[-1]]
        with np.errstate(all="ignore"):
            want = f(*neg)
        assert_same(jf(*neg), want, rtol=1e-11, atol=1e-300)
    small = [a[300:310].astype(np.float32) for a in _carlson_args(300, k)]
    assert_same(jf(*small), f(*small), rtol=1e-6)


def test_carlson_values_and_relations() -> None:
    """Closed forms: R_F(0, 1, 1) = pi/2, R_C(x, y) = R_F(x, y, y), R_D(x, y, z) =
    R_J(x, y, z, z), and Legendre's K(m) = R_F(0, 1 - m, 1) against ellipk."""
    m = R.uniform(0, 0.99, 50)
    x, y, z = R.uniform(0.1, 3, (3, 50))

    def f(x, y, z, m):
        return (sp.elliprf(0.0, 1 - m, 1.0), sp.elliprc(x, y) - sp.elliprf(x, y, y),
                sp.elliprd(x, y, z) - sp.elliprj(x, y, z, z))

    k, rc, rd = fusejit.jit(f)(x, y, z, m)
    np.testing.assert_allclose(k, sp.ellipk(m), rtol=1e-14)
    np.testing.assert_allclose(rc, 0.0, atol=1e-14)
    np.testing.assert_allclose(rd, 0.0, atol=1e-13)


def test_carlson_extremes() -> None:
    """Arguments hundreds of decades apart: R_F(0, y, y) = pi / (2 sqrt y) and R_G(0, y, y)
    = pi sqrt(y) / 4 at y = 1e-300 (SciPy's R_F is NaN there), and R_J where p is far below
    x, y and z (1 + e of the duplication step would cancel: see fj_sp_carlson_one_e) or
    near 0, against SciPy."""
    def f(a, b, c, d):
        return sp.elliprf(a, b, c), sp.elliprg(a, b, c), sp.elliprj(a, b, c, d)

    rf, rg, _ = fusejit.jit(f)(np.zeros(1), np.full(1, 1e-300), np.full(1, 1e-300),
                               np.ones(1))
    np.testing.assert_allclose([rf[0], rg[0]], [np.pi / 2 * 1e150, np.pi / 4 * 1e-150],
                               rtol=1e-15)
    cases = [(1e100, 1e100, 1e100, 0.75), (2e80, 3e80, 1e80, 1e-60), (1, 2, 3, 1e-200),
             (1e-20, 1, 2, 1e30)]
    args = [np.array(c, float) for c in zip(*cases)]
    assert_same(fusejit.jit(f)(*args)[2], sp.elliprj(*args), rtol=1e-13)


def test_gradients() -> None:
    u, m = np.array([0.3, 1.7, -2.2, 5.0]), np.array([0.2, 0.7, 0.95, 0.5])
    x, y, z = np.array([0.5, 2.0, 1.2]), np.array([1.5, 0.3, 2.0]), np.array([0.7, 0.7, 3.0])

    def ej(u):
        sn, cn, dn, ph = sp.ellipj(u, m)
        return np.sum(sn + 2 * cn + 3 * dn + 0.5 * ph)

    check_grad(ej, [u], 0, fusejit.grad(ej)(u))

    def carl(x, y, z):
        return np.sum(sp.elliprf(x, y, z) + 2 * sp.elliprg(x, y, z) + sp.elliprc(x, y) +
                      sp.elliprc(x, -y) + sp.elliprc(y, y))

    for i in range(3):
        check_grad(carl, [x, y, z], i, fusejit.grad(carl, argnums=i)(x, y, z))
    with pytest.raises(fusejit.UnsupportedError, match="in m"):
        fusejit.grad(lambda m: sp.ellipj(0.5, m)[0])(0.3)
    with pytest.raises(fusejit.UnsupportedError, match="elliprd and elliprj"):
        fusejit.grad(lambda x: sp.elliprd(x, 1.0, 2.0))(0.3)
