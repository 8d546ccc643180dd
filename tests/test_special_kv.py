"""scipy.special's exprel, sindg, cosdg, tandg, cotdg, kv, kve, k0, k0e, k1 and k1e
(codegen/include/fj_special_kv.h) against SciPy over wide ranges and special values, against
mpmath's values (50 digits, written here) where SciPy's own lose digits, on integer, bool
and float16 operands (SciPy's float loops), and their gradients against SciPy's derivatives.

Tolerances: float64 relative 1e-12, float32 2e-6. Where SciPy is the less accurate one
(tandg and cotdg near their poles, where its tan(x pi/180) loses ~eps/distance: long double's
values decide; Amos's kv near overflow and underflow; kve beyond x ~ 1.07e9 where Amos returns
NaN), `test_documented_differences` shows both.
"""

from __future__ import annotations

import numpy as np
import pytest
from conftest import match_mask, run_both

import fusejit

sp = pytest.importorskip("scipy.special")
pytestmark = pytest.mark.filterwarnings("ignore::RuntimeWarning")
RNG = np.random.default_rng(29)

UNARY = ("exprel", "sindg", "cosdg", "tandg", "cotdg", "k0", "k0e", "k1", "k1e")
DEGREES = np.array([0.0, -0.0, 30, 45, 60, 90, 135, 180, 270, 360, -90, -180, -45, 225, -135,
                    720.5, 1e14, -1e14, 1.1e14, np.inf, -np.inf, np.nan, 1e-300, 12.3])


def _unary_args(name: str) -> np.ndarray:
    mags = np.exp(RNG.uniform(-690, 690, 300))
    wide = np.concatenate([RNG.standard_normal(300) * 10, RNG.uniform(-400, 400, 300), mags,
                           -mags, DEGREES, [709.0, 710.0, 717.5, -745.0, 1e-17, -2e-16]])
    if name.startswith("k"):  # (x > 1e9: SciPy's k0e/k1e are cephes', finite; so are these)
        return np.concatenate([wide, np.exp(RNG.uniform(-700, 7, 300))])
    return wide


def _kv_args() -> tuple[np.ndarray, np.ndarray]:
    """Orders to +-150 (integers, halves, any) and x from 1e-300 to 1e9 (Amos's range)."""
    v = np.concatenate([RNG.uniform(-150, 150, 200), RNG.integers(-30, 30, 200),
                        RNG.integers(-60, 60, 200) / 2, RNG.uniform(-3, 3, 200)])
    x = np.concatenate([np.exp(RNG.uniform(-690, 20.7, 600)), RNG.uniform(0, 50, 200)])
    x = RNG.permutation(x)
    special_v = np.array([0.5, 0.5, 0.5, 0.5, np.nan, np.inf, 2.0, -0.0, 1.0])
    special_x = np.array([0.0, -0.0, -1.0, np.inf, 0.0, 1.0, np.nan, 1e-320, 700.0])
    return np.concatenate([v, special_v]), np.concatenate([x, special_x])


def _tancot_ld(name: str, x: np.ndarray) -> np.ndarray:
    """tandg / cotdg in long double (x86's 64-bit significand) after an exact reduction."""
    r = np.fmod(np.abs(x), 180.0).astype(np.longdouble)
    t = np.tan(r * (np.longdouble(np.pi) / 180))
    with np.errstate(all="ignore"):
        t = 1 / t if name == "cotdg" else t
    return (np.sign(x) * t).astype(np.float64)


def _check(name: str, got: np.ndarray, want: np.ndarray, args: tuple) -> None:
    assert got.dtype == want.dtype and got.shape == want.shape
    rtol = 1e-12 if want.dtype == np.float64 else 2e-6
    ok = match_mask(got, want, rtol, 1e-323 if want.dtype == np.float64 else 3e-45)
    x = args[-1].astype(np.float64)
    if name in ("tandg", "cotdg"):  # SciPy's tan(r pi/180) loses digits near the poles
        # (cotdg's 90 - x rounds to 90 for |x| < ~1e-14: inf): against long double there
        ok |= match_mask(got, _tancot_ld(name, x).astype(want.dtype), rtol, 0.0) & (
            np.abs(want.astype(np.float64)) > 1e2)
    if name in ("kv", "kve"):  # Amos overflows to inf a little before the double range
        # ends, takes a subnormal x for 0, and flushes results below ~1e-300 to 0: the
        # values there are test_kv_against_mpmath's
        ok |= np.isinf(want) & ((np.abs(got) > 1e300) | (np.abs(x) < 2.3e-308))
        ok |= (want == 0) & (np.abs(got) < 1e-300)
    bad = ~ok
    assert ok.all(), (f"{name}: {int(bad.sum())} mismatches, e.g. args "
                      f"{[a[bad][:4] for a in args]} got {got[bad][:4]} want {want[bad][:4]}")


@pytest.mark.parametrize("name", UNARY + ("kv", "kve"))
@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_against_scipy_wide_ranges(name: str, dtype) -> None:
    f = getattr(sp, name)
    if name in ("kv", "kve"):
        args = tuple(a.astype(dtype) for a in _kv_args())
        got = fusejit.jit(lambda v, x: f(v, x))(*args)
    else:
        args = (_unary_args(name).astype(dtype),)
        got = fusejit.jit(lambda x: f(x))(*args)
    with np.errstate(all="ignore"):
        want = f(*args)
    _check(name, got, want, args)


# (v, x, K_v(x), K_v(x) e^x): mpmath, 40 digits
KV_REF = [
    (0, 1e-300, 690.8914594138721, 690.8914594138721),
    (0, 1e-05, 11.628856980944363, 11.628973270095617),
    (0, 0.7, 0.6605198599151016, 1.3301236562420558),
    (1, 3.5, 0.022239392925923834, 0.7364675480289125),
    (1, 1e-250, 1e+250, 1e+250),
    (0.5, 40.0, 8.418809194948906e-19, 0.19816636488030054),
    (2.5, 0.001, 118899799.11154878, 119018758.38038148),
    (7.25, 2.0, 493.42139872861, 3645.9183956185275),
    (-3.3, 12.0, 3.3971760428807245e-06, 0.5529066782726895),
    (20, 0.5, 6.665549874417156e+28, 1.0989633858864133e+29),
    (60, 75.0, 3.059307001795095e-24, 1142113338.0202687),
    (130.5, 4.0, 1.4270742528861482e+179, 7.7915614167515145e+180),
    (0, 700.0, 4.669776431685377e-306, 0.04736236945461357),
    (3, 100000.0, 0.0, 0.003963500696101345),
]


def test_kv_against_mpmath() -> None:
    """Within 1e-13 of the true values (orders to 130, x from 1e-300 to 1e5)."""
    ref = np.array(KV_REF)
    v, x = ref[:, 0], ref[:, 1]
    kv, kve = fusejit.jit(lambda v, x: (sp.kv(v, x), sp.kve(v, x)))(v, x)
    np.testing.assert_allclose(kv, ref[:, 2], rtol=1e-13, atol=0)
    np.testing.assert_allclose(kve, ref[:, 3], rtol=1e-13, atol=0)
    k = fusejit.jit(lambda x: (sp.k0(x), sp.k0e(x), sp.k1(x), sp.k1e(x)))(x)
    for got, nu, col in ((k[0], 0, 2), (k[1], 0, 3), (k[2], 1, 2), (k[3], 1, 3)):
        sel = v == nu
        np.testing.assert_allclose(got[sel], ref[sel, col], rtol=1e-13, atol=0)


def test_documented_differences() -> None:
    """Where SciPy is the less accurate (true values from mpmath)."""
    near_pole = np.array([90.00000000000001])
    assert abs(sp.tandg(near_pole)[0] / -4031832051015932.0 - 1) > 0.1  # SciPy: -3.5e15
    got = fusejit.jit(lambda x: sp.tandg(x))(near_pole)
    np.testing.assert_allclose(got, [-4031832051015932.0], rtol=1e-13)
    tiny = np.array([1e-300])
    assert sp.cotdg(tiny)[0] == np.inf  # SciPy: 90 - 1e-300 is 90, its pole
    np.testing.assert_allclose(fusejit.jit(lambda x: sp.cotdg(x))(tiny), [5.729577951308232e301],
                               rtol=1e-13)
    far = np.array([1.1e9])
    assert np.isnan(sp.kve(5.0, far)[0])  # Amos gives up beyond ~1.07e9
    np.testing.assert_allclose(fusejit.jit(lambda x: sp.kve(5.0, x))(far),
                               [3.778884349715612e-05], rtol=1e-13)


def test_integer_bool_float16_and_broadcast_operands() -> None:
    """SciPy's float loops decide the dtypes (ints through float64, float16 through float32)."""
    for dtype in (np.int8, np.int32, np.uint16, np.bool_, np.float16):
        base = np.arange(-4, 5) if np.dtype(dtype).kind != "u" else np.arange(9)
        x = base.astype(dtype) if dtype != np.float16 else (base / 4).astype(dtype)
        run_both(lambda x: (sp.exprel(x), sp.sindg(x), sp.cosdg(x), sp.tandg(x), sp.cotdg(x),
                            sp.k0(x), sp.k0e(x), sp.k1(x), sp.k1e(x), sp.kv(x, 1.5),
                            sp.kve(2, x)), x)
    v = RNG.uniform(-5, 5, (3, 1)).astype(np.float32)
    x = RNG.uniform(0, 9, (4, 5)).T[None]  # non-contiguous, broadcast against v
    run_both(lambda v, x: (sp.kv(v, x), sp.kve(v[::-1], x * 2) + 1), v, x)
    run_both(lambda x: sp.kv(x[:0], x[:0]), x)  # zero-size
    run_both(lambda x: sp.k1e(x[0, 0, 0]), x)  # 0-d: a NumPy scalar


def test_gradients_match_scipy_derivatives() -> None:
    x = np.array([0.3, 1.7, 6.0, 25.0])
    v = np.array([0.0, 1.5, -2.0, 7.0])
    deg = np.array([-100.0, 12.0, 44.0, 300.0])
    grads = {
        "kv": (lambda x: np.sum(sp.kv(v, x)), sp.kvp(v, x)),
        "kve": (lambda x: np.sum(sp.kve(v, x)), (sp.kvp(v, x) + sp.kv(v, x)) * np.exp(x)),
        "k0": (lambda x: np.sum(sp.k0(x)), sp.kvp(0, x)),
        "k1": (lambda x: np.sum(sp.k1(x)), sp.kvp(1, x)),
        "k0e": (lambda x: np.sum(sp.k0e(x)), (sp.kvp(0, x) + sp.k0(x)) * np.exp(x)),
        "k1e": (lambda x: np.sum(sp.k1e(x)), (sp.kvp(1, x) + sp.k1(x)) * np.exp(x)),
    }
    for name, (f, want) in grads.items():
        np.testing.assert_allclose(fusejit.grad(f)(x), want, rtol=1e-11, err_msg=name)
    e = np.array([-3.0, -1e-4, 0.0, 2e-4, 1e-3, 0.5, 20.0])
    want = np.where(e == 0, 0.5, (np.exp(e) * e - np.expm1(e)) / np.where(e == 0, 1, e) ** 2)
    np.testing.assert_allclose(fusejit.grad(lambda e: np.sum(sp.exprel(e)))(e), want,
                               rtol=1e-9)
    r = np.pi / 180
    for name, want in (("sindg", r * np.cos(deg * r)), ("cosdg", -r * np.sin(deg * r)),
                       ("tandg", r / np.cos(deg * r) ** 2),
                       ("cotdg", -r / np.sin(deg * r) ** 2)):
        f = getattr(sp, name)
        np.testing.assert_allclose(fusejit.grad(lambda d, f=f: np.sum(f(d)))(deg), want,
                                   rtol=1e-12, err_msg=name)
    with pytest.raises(fusejit.UnsupportedError, match="order v"):
        fusejit.grad(lambda v: np.sum(sp.kv(v, x)))(v)
