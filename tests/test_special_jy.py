"""scipy.special's Bessel functions of real order, jv (= jn), yv, jve, yve, iv, ive, and the
integer orders' yn and kn (codegen/include/fj_special_jy.h), against SciPy over orders to
+-1000 and x from 1e-9 to 1e8 (the asymptotic, Steed's and Temme's regimes and their
borders), negative x, the special values, float32 and integer operands; against mpmath's
values (40 digits, written here) where SciPy's lose digits or overflow early; and their
gradients in x against SciPy's derivatives.

Tolerance: relative 1e-12, and 5e-14 absolute for J and Y (both SciPy's and these are
accurate absolutely next to the zeros: ~1e-16 of the oscillation's scale).
`test_documented_differences` shows where SciPy's value is not the function's.
"""

from __future__ import annotations

import numpy as np
import pytest
from conftest import match_mask

import fusejit

sp = pytest.importorskip("scipy.special")
pytestmark = pytest.mark.filterwarnings("ignore::RuntimeWarning")
RNG = np.random.default_rng(30)
REAL_ORDER = ("jv", "yv", "iv", "ive", "jve", "yve")


def _regimes() -> tuple[np.ndarray, np.ndarray]:
    """Orders and points of every regime, broadcast to one flat pair."""
    parts = [  # (orders, x)
        (RNG.uniform(-60, 60, 300), np.exp(RNG.uniform(-20, 12, 300))),
        (RNG.uniform(-3, 3, 300), RNG.uniform(0, 60, 300)),
        (RNG.uniform(-20, 20, 200), np.exp(RNG.uniform(np.log(30), np.log(1e8), 200))),
        (RNG.uniform(50, 1000, 200) * RNG.choice([-1, 1], 200),
         np.exp(RNG.uniform(-3, np.log(3000), 200))),
        (RNG.integers(-40, 40, 200).astype(float), np.exp(RNG.uniform(-10, 6, 200))),
        (RNG.integers(-60, 60, 200) / 2, np.exp(RNG.uniform(-10, 6, 200))),
    ]
    t = RNG.uniform(5, 200, 200)  # the transition, x ~ v
    parts.append((t, t * RNG.uniform(0.8, 1.2, 200)))
    parts.append((RNG.integers(-20, 20, 200).astype(float), -np.exp(RNG.uniform(-5, 5, 200))))
    return np.concatenate([p[0] for p in parts]), np.concatenate([p[1] for p in parts])


def _check(name: str, got: np.ndarray, want: np.ndarray, x: np.ndarray) -> None:
    assert got.dtype == want.dtype and got.shape == want.shape
    rtol = 1e-12 if want.dtype == np.float64 else 2e-6
    ok = match_mask(got + 0.0, want + 0.0, rtol, 1e-300)  # (zeros of either sign)
    if name in ("jv", "yv", "jve", "yve", "yn"):
        ok |= np.abs(got - want) <= 5e-14
    # where SciPy overflows (to either sign: its reflections' signs at tiny x are not the
    # function's) or gives NaN for a value beyond the double range, or flushes a subnormal
    info = np.finfo(want.dtype)
    ok |= (np.isinf(want) | np.isnan(want)) & (np.abs(got) > info.max / 1e8)
    ok |= (want == 0) & (np.abs(got) < info.tiny * 1e8)
    bad = ~ok
    assert ok.all(), (f"{name}: {int(bad.sum())} mismatches, e.g. x {x[bad][:4]} got "
                      f"{got[bad][:4]} want {want[bad][:4]}")


@pytest.mark.parametrize("name", REAL_ORDER)
def test_against_scipy_wide_ranges(name: str) -> None:
    v, x = _regimes()
    f = getattr(sp, name)
    _check(name, fusejit.jit(lambda v, x: f(v, x))(v, x), f(v, x), x)
    v32, x32 = v[:400].astype(np.float32), np.abs(x[:400]).astype(np.float32)
    _check(name, fusejit.jit(lambda v, x: f(v, x))(v32, x32), f(v32, x32), x32)


def test_special_values() -> None:
    """x = +-0 (SciPy's 1, 0 and infinities), +-inf and NaN (NaN), negative x (integer orders
    only), infinite and NaN orders, exactly as SciPy 1.17."""
    x = np.array([0.0, -0.0, -1.0, -2.5, 1.0, 3.7, 45.0, 1e5, np.inf, -np.inf, np.nan])
    v = np.array([0.0, 1.0, 2.0, -1.0, -2.0, 0.5, -0.5, 1.5, -1.5, 2.3, -2.3, np.inf,
                  -np.inf, np.nan, 60.5, -60.5])[:, None]
    for name in REAL_ORDER:
        f = getattr(sp, name)
        got, want = fusejit.jit(lambda v, x, f=f: f(v, x))(v, x), f(v, x)
        if name == "jv":  # SciPy: NaN for an infinite order beyond x ~ 3 (the
            want = np.where(np.isinf(v) & (x > 2) & np.isfinite(x), 0.0, want)  # limit is 0)
        _check(name, got, want, np.broadcast_to(x, got.shape))


def test_integer_orders_yn_kn() -> None:
    """yn: SciPy's forward recurrence from y0, y1 (whose values beyond x ~ 1e3 are
    test_special.py's: SciPy's lose digits there); kn through kv."""
    n = np.array([-3, -2, -1, 0, 1, 2, 5, 30])[:, None]
    x = np.concatenate([[0.0, -1.0, np.nan, np.inf], np.exp(RNG.uniform(-8, 7, 60))])
    for name in ("yn", "kn"):
        f = getattr(sp, name)
        _check(name, fusejit.jit(lambda n, x, f=f: f(n, x))(n, x), f(n, x),
               np.broadcast_to(x, (8, x.size)))
    x32 = np.linspace(0.1, 20, 7).astype(np.float32)  # (the 'ld->d' loop: float64)
    got = fusejit.jit(lambda x: (sp.yn(2, x), sp.jn(2, x), sp.kn(np.int8(1), x)))(x32)
    for g, w in zip(got, (sp.yn(2, x32), sp.jn(2, x32), sp.kn(np.int8(1), x32))):
        assert g.dtype == w.dtype
        np.testing.assert_allclose(g, w, rtol=2e-6)
    for f in (lambda x: sp.yn(2.0, x), lambda x: sp.kn(x, x)):
        with pytest.raises(fusejit.UnsupportedError, match="degree or order n"):
            fusejit.jit(f)(x32.astype(np.float64))
    with pytest.raises(fusejit.UnsupportedError, match="jv of complex"):
        fusejit.jit(lambda x: sp.jv(1.0, x + 1j))(x32)


def test_orders_and_points_not_computed() -> None:
    """Beyond order 1e4 (where SciPy's uniform asymptotic expansions take over) and where a
    continued fraction would need more than 3e6 terms: NaN (no result), J's underflowed 0
    aside; I_v is computed (its fraction converges fast where its value is finite)."""
    v = np.array([2e4, 2e4, 1e10, 5e3])
    x = np.array([3e4, 1.0, 5e9, 3e6 + 1e5])
    j, y, i = fusejit.jit(lambda v, x: (sp.jv(v, x), sp.yv(v, x), sp.iv(v, x)))(v, x)
    assert np.isnan(j[[0, 3]]).all() and j[1] == j[2] == 0.0 and np.isnan(y).all()
    assert np.array_equal(i, sp.iv(v, x))


def test_documented_differences() -> None:
    """Where SciPy's value is not the function's (mpmath's, 40 digits): its early overflow,
    its overflow's sign for a negative order at tiny x, its flushed subnormals, its lost
    digits at large orders."""
    cases = [  # (name, v, x, mpmath's value, SciPy 1.17's)
        ("yv", 53.65687957988126, 7.5535796034355e-05, -7.227800129033458e+305, -np.inf),
        ("jv", -59.82118997893966, 9.150416661573591e-06, -np.inf, np.inf),
        ("jv", -116.76588397750969, 2608.291630379865, -0.012349956181389095,
         -0.012349956181410838),
        ("yv", -116.76588397750969, 2608.291630379865, -0.009581174378175432,
         -0.009581174378157248),
        ("jv", 326.5674307585313, 1983.8413975564406, -0.0010102921233739275,
         -0.0010102921233582115),
        ("iv", 0.5, 1e-300, 7.978845608028654e-151, 0.0),
        ("ive", 917.4543172799545, 501.769262433574, 5.9135004976535e-310, 0.0),
        ("jv", -572.4121122243934, 108.37490309744939, np.inf, np.nan),
    ]
    for name, v, x, exact, scipy_value in cases:
        f = getattr(sp, name)
        got = fusejit.jit(lambda v, x, f=f: f(v, x))(np.array([v]), np.array([x]))[0]
        want = f(v, x)
        assert np.array_equal(want, scipy_value, equal_nan=True), (name, v, x, want)
        if np.isinf(exact):
            assert got == exact, (name, v, x, got)
        else:
            scale = max(abs(exact), np.sqrt(2 / (np.pi * x)))  # (the oscillation's amplitude)
            assert abs(got - exact) <= 2e-13 * scale, (name, v, x, got, exact)


def test_gradients_match_scipy_derivatives() -> None:
    x = np.array([0.3, 1.7, 6.0, 25.0, 60.0])
    v = np.array([0.0, 1.5, -2.0, 7.0, -0.3])
    n = np.array([0, 1, 2, -3, 5])
    grads = {
        "jv": (lambda x: np.sum(sp.jv(v, x)), sp.jvp(v, x)),
        "yv": (lambda x: np.sum(sp.yv(v, x)), sp.yvp(v, x)),
        "iv": (lambda x: np.sum(sp.iv(v, x)), sp.ivp(v, x)),
        "ive": (lambda x: np.sum(sp.ive(v, x)), (sp.ivp(v, x) - sp.iv(v, x)) * np.exp(-x)),
        "jve": (lambda x: np.sum(sp.jve(v, x)), sp.jvp(v, x)),
        "yve": (lambda x: np.sum(sp.yve(v, x)), sp.yvp(v, x)),
        "yn": (lambda x: np.sum(sp.yn(n, x)), sp.yvp(n, x)),
        "kn": (lambda x: np.sum(sp.kn(n, x)), sp.kvp(n, x)),
    }
    for name, (f, want) in grads.items():
        np.testing.assert_allclose(fusejit.grad(f)(x), want, rtol=1e-12, atol=1e-14,
                                   err_msg=name)
    with pytest.raises(fusejit.UnsupportedError, match="order v"):
        fusejit.grad(lambda v: np.sum(sp.jv(v, x)))(v)


@pytest.mark.parametrize("kind", "jyik")
def test_spherical_against_scipy(kind: str) -> None:
    """spherical_jn & co. and their derivative=True over orders -1 to 80, negative x (SciPy's
    reflections; spherical_kn's continuation, which SciPy takes from its complex function),
    the special values; float32 (SciPy's 'lf->f' loop) too."""
    f = getattr(sp, f"spherical_{kind}n")
    x = np.concatenate([[-np.inf, -3.0, -1.0, -0.0, 0.0, 1e-9, 0.5, 3.0, 50.0, np.inf, np.nan],
                        RNG.uniform(-30, 30, 80), np.exp(RNG.uniform(-10, 7, 80))])
    n = np.array([-1, 0, 1, 2, 4, 10, 33, 80])[:, None]
    for derivative in (False, True):
        got = fusejit.jit(lambda n, x, d=derivative: f(n, x, derivative=d))(n, x)
        want = f(n, x, derivative=derivative)
        assert got.dtype == want.dtype and got.shape == want.shape
        ok = match_mask(got + 0.0, want + 0.0, 1e-12, 1e-300) | (np.abs(got - want) <= 1e-14)
        ok |= np.isinf(want) & (np.abs(got) > 1e300)  # (SciPy's Amos overflows early)
        assert ok.all(), (kind, derivative, got[~ok][:4], want[~ok][:4])
    # float32 x: SciPy's 'lf->f' loop computes in float32 (fusejit's in double, rounded), and
    # its wrapper's sign for negative x makes the result float64
    x32 = np.abs(x[11:60]).astype(np.float32)
    got, want = fusejit.jit(lambda x: f(3, x))(x32), f(3, x32)
    assert got.dtype == want.dtype
    np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-7)


def test_spherical_gradients() -> None:
    """d/dx of spherical_Xn is its derivative=True; of that, the spherical Bessel equation."""
    x = np.array([0.3, 1.7, 6.0, 25.0, -2.5])
    n = np.array([0, 1, 2, 5, 3])
    for kind in "jyik":
        f = getattr(sp, f"spherical_{kind}n")
        np.testing.assert_allclose(fusejit.grad(lambda x, f=f: np.sum(f(n, x)))(x),
                                   f(n, x, derivative=True), rtol=1e-12, err_msg=kind)
        h = 1e-5
        want = (f(n, x + h, derivative=True) - f(n, x - h, derivative=True)) / (2 * h)
        got = fusejit.grad(lambda x, f=f: np.sum(f(n, x, derivative=True)))(x)
        np.testing.assert_allclose(got, want, rtol=1e-7, err_msg=kind)
