"""scipy.special ufuncs in the op table (frontend/ops_more.py SPECIAL_UFUNCS, C in
codegen/include/fj_special.h) against SciPy: wide ranges (many orders of magnitude, both
signs), special values (NaN, +-inf, +-0, poles, the domain's ends and beyond), every dtype
SciPy has a loop for (ints and bool go through its float loops), and, by hypothesis, 0-d,
zero-size, broadcast and non-contiguous operands.

Tolerances: float64 relative 1e-12 (the functions are within a few hundred ulp of SciPy;
fj_special.h says where each one's error comes from) plus an absolute 1e-15 where a function
crosses zero (gammaln, digamma); float32 relative 2e-6. Where SciPy loses accuracy itself
(digamma next to its negative poles, i0 and i1 just below overflow, kl_div when x/y under- or
overflows) fusejit's value is the accurate one: `test_documented_differences`. kl_div's
x log(x/y) - x + y cancels where x ~ y: there the tolerance is 8 eps times its terms' sizes.
"""

from __future__ import annotations

import numpy as np
import pytest
from conftest import assert_same, examples, match_mask
from hypothesis import given, settings
from hypothesis import strategies as st

import fusejit
from fusejit.frontend.ops_more import SCIPY_ALIASES
from fusejit.frontend.ops_more import SPECIAL_UFUNCS as _ALL_SPECIAL

# (the three-operand ones, betainc and betaincc, are tests/test_special_ibeta.py's; the
# inverses, whose wide ranges SciPy's own iterations do not solve, tests/test_special_inv.py's
# and, for pdtrik, tests/test_special_dquant.py's; the incomplete elliptic integrals, whose
# phi beyond 1e16 SciPy does not reduce, tests/test_special_ellip.py's; owens_t, which SciPy
# gets wrong where a is tiny and h large, tests/test_special_owens.py's)
INVERSES = ("gammaincinv", "gammainccinv", "chdtri", "stdtrit", "pdtrik", "ellipkinc",
            "ellipeinc", "owens_t")
# (fj_special_kv.h's, whose ranges and SciPy's differences there, are tests/test_special_kv.py's)
KV_HEADER = ("exprel", "sindg", "cosdg", "tandg", "cotdg", "kv", "kve", "k0", "k0e", "k1",
             "k1e", "erfi", "dawsn")  # (and fj_special_series.h's: test_special_series.py)
# (the orthogonal polynomials, whose first operand is an integer degree: test_special_poly.py;
# the Bessel functions of real order: test_special_jy.py; expn: test_special_trigint.py)
JY_HEADER = ("jv", "yv", "jve", "yve", "iv", "ive", "yn", "kn", "expn")
SPECIAL_UFUNCS = {n: k for n, k in _ALL_SPECIAL.items()
                  if k <= 2 and n not in INVERSES + KV_HEADER + JY_HEADER
                  and not n.startswith("eval_")}

sp = pytest.importorskip("scipy.special")
pytestmark = pytest.mark.filterwarnings("ignore::RuntimeWarning")

RNG = np.random.default_rng(7)
SPECIALS = np.array([np.nan, np.inf, -np.inf, 0.0, -0.0, 1.0, -1.0, 2.0, -2.0, -2.5, 0.5,
                     1e-300, -1e-300, 1e300, -1e300, 26.0, -26.0, 30.0, 31.0, 709.0,
                     3e307, -1.7e308])  # (beyond 2.8e307, 2 pi x overflows: i0e/i1e's fix)
UNIT = np.array([0.0, 1.0, 0.5, 0.25, 0.75, 0.3, 0.65, 0.02425, 1e-300, 1 - 1e-16, -0.1, 1.1,
                 np.nan, np.inf, -np.inf])


def _wide(n: int) -> np.ndarray:
    mags = np.exp(RNG.uniform(-690, 690, n))
    return np.concatenate([RNG.standard_normal(n) * 10, RNG.uniform(-3, 3, n),
                           mags, -mags, SPECIALS])


def _unit(n: int) -> np.ndarray:
    return np.concatenate([RNG.uniform(0, 1, n), np.exp(RNG.uniform(-740, 0, n)),
                           1 - np.exp(RNG.uniform(-36, 0, n)), UNIT])


def _args(name: str, n: int = 400) -> tuple[np.ndarray, ...]:
    if name in ("ndtri", "logit"):
        return (_unit(n),)
    if name == "erfinv":
        u = _unit(n)
        return (np.concatenate([2 * u - 1, -u]),)
    if name == "erfcinv":  # [0, 2], both ends dense, and beyond
        u = _unit(n)
        return (np.concatenate([2 * u, 2 - u, u, -u]),)
    if name in ("i0", "i1"):  # SciPy overflows to inf from about 709.8 (see below)
        w = _wide(n)
        return (w[~(np.abs(w) > 709.7)],)
    if SPECIAL_UFUNCS[name] == 2:
        x, y = _wide(n), RNG.permutation(_wide(n))
        if name == "kl_div":  # SciPy's x*log(x/y) where x/y leaves the range: see below
            with np.errstate(all="ignore"):
                r = np.abs(x / y)
            keep = ~((r < 1e-300) | (r > 1e300))
            x, y = x[keep], y[keep]
        return x, y
    return (_wide(n),)


def _atol(name: str) -> float:
    return 1e-15 if name in ("gammaln", "loggamma", "digamma") else 0.0


def _check(name: str, got: np.ndarray, want: np.ndarray, args: tuple) -> None:
    assert got.dtype == want.dtype and got.shape == want.shape
    rtol = 1e-12 if want.dtype == np.float64 else 2e-6
    # SciPy may round a subnormal result one step the other way (float32's loops, and
    # float64 erfinv of subnormals, which fusejit rounds correctly)
    ok = match_mask(got, want, rtol, max(_atol(name), 1e-323) if want.dtype == np.float64
                    else 3e-45)
    if name == "digamma":  # SciPy's psi next to a negative pole: see the differences test
        x = np.broadcast_to(args[0], want.shape).astype(np.float64)
        ok |= (x < 0) & (np.abs(x - np.round(x)) < 1e-6)
    if name == "kl_div":  # x log(x/y) - x + y cancels for x ~ y: a vectorised log's ulps
        x, y = (np.broadcast_to(a, want.shape).astype(np.float64) for a in args)
        with np.errstate(all="ignore"):
            terms = np.abs(x * np.log(x / y)) + np.abs(x) + np.abs(y)
            ok |= np.abs(got.astype(np.float64) - want) <= 8 * np.finfo(want.dtype).eps * terms
    if name == "rgamma":  # SciPy's reflection loses 1/gamma's sign near the poles beyond
        # x ~ -2e9 (its sin(pi x)); fusejit's is gamma's, (-1)^(floor(-x) + 1)
        x = np.broadcast_to(args[0], want.shape).astype(np.float64)
        ok |= (x < -1e9) & np.isinf(got) & np.isinf(want)
    if name == "gamma":  # SciPy: +-0 for most x < -170.5 (|gamma| < 2.3e-308 there)
        x = np.broadcast_to(args[0], want.shape).astype(np.float64)
        ok |= (x < -170.5) & (want == 0) & (np.abs(got) < 2.3e-308)
    if name in ("j0", "j1", "y0", "y1"):  # SciPy reduces the argument in double: its error
        # grows to ~eps sqrt(|x|) absolute (no correct digit beyond ~1e13), and its j1 rounds
        # subnormal x badly; fusejit's (libm's) values: test_bessel_against_mpmath
        x = np.abs(np.broadcast_to(args[0], want.shape).astype(np.float64))
        with np.errstate(all="ignore"):
            diff = np.abs(got.astype(np.float64) - want)
        ok |= (diff <= 8 * np.finfo(np.float64).eps * np.sqrt(np.maximum(x, 1.0))) | (
            x < 2.3e-308)
    if name in ("beta", "betaln", "binom", "poch"):
        ok |= _beta_family_ok(name, got, want, args)
    if name == "gammasgn":  # SciPy's (int)floor(x) overflows below -2^31: its sign is 1
        x = np.broadcast_to(args[0], want.shape).astype(np.float64)
        ok |= (x < -2.0 ** 31) & (want == 1) & (np.abs(got) == 1)
    if name in ("gammainc", "gammaincc", "chdtr", "chdtrc", "pdtr", "pdtrc"):  # SciPy: NaN
        # for a (gammainc's; chdtr's v/2, pdtr's k + 1) >= ~1e307 away from x ~ a (an
        # overflow), where P and Q are 0 or 1, and 0 where the value is subnormal;
        # test_special_igam.py compares the rest
        a = np.broadcast_to(args[0], want.shape).astype(np.float64)
        ok |= (a > 1e306) & np.isnan(want) & ((got == 0) | (got == 1))
        ok |= (want == 0) & (np.abs(got) < 2.3e-308)
    if name == "stdtr" and want.dtype == np.float32:  # SciPy's float loop computes in
        # float32 (Boost's), losing digits; fusejit's is the double loop's value, rounded
        with np.errstate(all="ignore"):
            exact = sp.stdtr(*(np.asarray(a, np.float64) for a in args)).astype(np.float32)
        ok |= match_mask(got, np.broadcast_to(exact, want.shape), 2e-6, 3e-45)
    if name == "stdtr":  # SciPy: 0 or 1 beyond |t| = 1e150 (its t^2 overflows) where a small
        # df's heavy tail is not (test_special_ibeta.py compares those with mpmath's values)
        t = np.abs(np.broadcast_to(args[1], want.shape).astype(np.float64))
        ok |= (t > 1e150) & ((want == 0) | (want == 1)) & (got >= 0) & (got <= 1)
        ok |= (want == 0) & (np.abs(got) < 2.3e-308)  # (SciPy's underflows a subnormal tail)
    if name == "expi":  # SciPy overflows to inf from x ~ 709.78 (its e^x); Ei is finite to 716.4
        x = np.broadcast_to(args[0], want.shape).astype(np.float64)
        ok |= (x > 709.7) & np.isposinf(want) & (got > 1e305)
    if name in ("gammaln", "loggamma"):  # SciPy: inf for subnormal x (its 1/x overflows)
        x = np.broadcast_to(args[0], want.shape).astype(np.float64)
        ok |= np.abs(x) < 2.3e-308
    bad = ~ok
    assert ok.all(), (f"{name}: {int(bad.sum())} mismatches, e.g. args "
                      f"{[np.broadcast_to(a, want.shape)[bad][:4] for a in args]} got "
                      f"{got[bad][:4]} want {want[bad][:4]}")


def _gamma_args(name: str, args: tuple, shape: tuple) -> tuple[np.ndarray, ...]:
    """The arguments of the gammas behind beta/betaln(a, b), binom(n, k) and poch(a, m)."""
    a, b = (np.broadcast_to(v, shape).astype(np.float64) for v in args)
    if name == "poch":  # Gamma(a + m) / Gamma(a)
        return (a + b, a)
    return (a, b, a + b) if name != "binom" else (1 + a - b, 1 + b, 2 + a)


def _beta_family_ok(name: str, got: np.ndarray, want: np.ndarray, args: tuple) -> np.ndarray:
    """Where beta, betaln, binom or poch may differ from SciPy: beyond 171.6, both compute
    lgamma(a) + lgamma(b) - lgamma(a + b) (poch: lgamma(a + m) - lgamma(a)), whose error is
    absolute, ~eps times the terms (relative in beta, binom and poch, which exponentiate it);
    and SciPy's sign of gamma is
    (-1)^(int)floor(-x), which for x < -2^31 (an int overflow) is -1 whatever the parity
    (fusejit's is the parity's: test_documented_differences)."""
    gam = _gamma_args(name, args, want.shape)
    with np.errstate(all="ignore"):
        terms = sum(np.abs(sp.gammaln(x)) for x in gam)
        g, w = got.astype(np.float64), want.astype(np.float64)
        slack = 16 * np.finfo(np.float64).eps * terms
        if name == "betaln":
            ok = np.abs(g - w) <= slack
        else:
            ok = np.abs(g - w) <= slack * np.abs(w)
        past_int = np.zeros(want.shape, bool)
        for x in gam:
            past_int |= (x < -2.0 ** 31) & (x != np.floor(x))
        flipped = np.abs(np.abs(g) - np.abs(w)) <= (slack + 1e-12) * np.abs(w)
        return ok | (past_int & flipped)


@pytest.mark.parametrize("name", sorted(SPECIAL_UFUNCS))
@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_against_scipy_wide_ranges(name: str, dtype) -> None:
    f = getattr(sp, name)
    args = tuple(a.astype(dtype) for a in _args(name))
    if len(args) == 1:
        got = fusejit.jit(lambda x: f(x))(*args)
    else:
        got = fusejit.jit(lambda x, y: f(x, y))(*args)
    with np.errstate(all="ignore"):
        want = f(*args)
    _check(name, got, want, args)


@pytest.mark.parametrize("name", sorted(SPECIAL_UFUNCS))
def test_integer_bool_and_float16_operands(name: str) -> None:
    f = getattr(sp, name)
    for dtype in (np.int8, np.int32, np.int64, np.uint16, np.bool_, np.float16):
        base = np.arange(-4, 5) if np.dtype(dtype).kind != "u" else np.arange(9)
        x = base.astype(dtype) if dtype != np.float16 else (base / 4).astype(dtype)
        args = (x,) * SPECIAL_UFUNCS[name]
        jf = (fusejit.jit(lambda u: f(u)) if len(args) == 1 else
              fusejit.jit(lambda u, v: f(u, v)))
        try:
            with np.errstate(all="ignore"):
                want = f(*args)
        except TypeError:
            with pytest.raises(TypeError):
                jf(*args)
            continue
        _check(name, jf(*args), want, args)


@settings(max_examples=examples(15))
@given(st.data())
def test_shapes_layouts_and_fusion(data) -> None:
    name = data.draw(st.sampled_from(sorted(SPECIAL_UFUNCS)))
    dtype = data.draw(st.sampled_from([np.float32, np.float64]))
    f = getattr(sp, name)
    shape = data.draw(st.lists(st.integers(0, 4), max_size=3).map(tuple))
    pool = _args(name, 50)[0].astype(dtype)
    x = RNG.choice(pool, size=shape) if shape else dtype(RNG.choice(pool))
    if data.draw(st.booleans()) and x.ndim:
        x = np.repeat(x, 2, axis=-1)[..., ::2]  # a strided view
    # (the function's value and arithmetic on it, fused: SciPy's value is compared with its
    # allowances, the arithmetic with fusejit's own value)
    if SPECIAL_UFUNCS[name] == 1:
        def g(a):
            v = f(a)
            return v, v * 2 + 1
        args = (x,)
    else:
        y = RNG.choice(_args(name, 50)[1].astype(dtype), size=shape[-1:] or ())
        y = np.asarray(y, dtype)

        def g(a, b):
            v = f(a, b)
            return v, v + 1
        args = (x, y)
    with np.errstate(all="ignore"):
        want = g(*args)
    got = fusejit.jit(g)(*args)
    assert type(got[0]) is type(want[0]) and type(got[1]) is type(want[1])
    _check(name, np.asarray(got[0]), np.asarray(want[0]), args)
    with np.errstate(all="ignore"):
        again = got[0] * 2 + 1 if len(args) == 1 else got[0] + 1
    assert_same(got[1], again)


def test_documented_differences() -> None:
    """Where fusejit is more accurate than SciPy (both are shown; fusejit's is exact)."""
    with np.errstate(all="ignore"):
        x, y = np.array([1e-224]), np.array([6e254])
        assert sp.kl_div(x, y)[0] == -np.inf  # SciPy: x*log(x/y) with x/y == 0
        assert_same(fusejit.jit(lambda a, b: sp.kl_div(a, b))(x, y), y)
        big = np.array([713.0])
        assert sp.i0(big)[0] == np.inf
        got = fusejit.jit(lambda a: sp.i0(a))(big)
        assert np.isclose(got[0], np.exp(713.0 - 0.5 * np.log(2 * np.pi * 713.0)) * (
            1 + 1 / (8 * 713.0)), rtol=1e-6)
        assert sp.i1(-big)[0] == -np.inf  # exp(713) overflows in SciPy's i1 too
        got = fusejit.jit(lambda a: sp.i1(a))(-big)
        assert np.isclose(got[0], -np.exp(713.0 - 0.5 * np.log(2 * np.pi * 713.0)) * (
            1 - 3 / (8 * 713.0)), rtol=1e-6)
        near = np.array([-1 + 2.0 ** -52])
        got = fusejit.jit(lambda a: sp.digamma(a))(near)
        assert np.isclose(got[0], -1 / 2.0 ** -52, rtol=1e-12)
        # 1/gamma far left: gamma's sign there is (-1)^(floor(-x) + 1); SciPy's reflection
        # through sin(pi x) loses it near the poles (here floor(-x) is odd: gamma > 0)
        far = np.array([-2522279677.99312])
        assert sp.rgamma(far)[0] == -np.inf
        assert fusejit.jit(lambda a: sp.rgamma(a))(far)[0] == np.inf
        # beta's sign with a gamma argument below -2^31: SciPy's (-1)^(int)floor(-x) overflows
        # int (always -1 there); fusejit's is the parity of floor(x): Gamma(x) < 0 where
        # floor(x) is odd
        a, b = np.array([6.733127001624148]), np.array([-2043812236721.6577])
        parity = [np.floor(v) % 2 for v in (a, b, a + b)]  # 0, 0, 1: B < 0
        assert [float(v[0]) for v in parity] == [0.0, 0.0, 1.0]
        got = fusejit.jit(lambda u, v: sp.beta(u, v))(a, b)
        assert got[0] < 0 < sp.beta(a, b)[0]
        assert np.isclose(got[0], -sp.beta(a, b)[0], rtol=1e-2)  # lgamma cancellation: ~1e-3
        x = np.array([-2147483648.5, -2147483647.5])  # floor(x): odd, even
        assert_same(fusejit.jit(lambda u: sp.gammasgn(u))(x), np.array([-1.0, 1.0]))
        assert (sp.gammasgn(x) == 1.0).all()


# x, J0(x), J1(x), Y0(x), Y1(x) to 17 digits (mpmath, 50 digits): where SciPy 1.17's values
# have few or no correct digits (another SciPy's, on the GPU machine, had them)
BESSEL_REF = [
    (123.456, -0.07103006241837069, -0.010839584856520649, -0.010551829449805762,
     0.07098791041947367),
    (98765.4321, 0.0018694734249184702, -0.001717792709691443, -0.0017178021738786437,
     -0.0018694821213159315),
    (3.0e8, 1.4940326958348494e-05, -4.357582513389115e-05, -4.357582515879169e-05,
     -1.4940327030974869e-05),
    (7.5e12, 2.4597385440835567e-07, 1.5613935846922035e-07, 1.5613935846920394e-07,
     -2.4597385440834524e-07),
    (1e16, 8.661427680921677e-10, 7.931694266803265e-09, 7.931694266803265e-09,
     -8.661427680921673e-10),
    (2e20, -3.2657583148697135e-11, -4.600631613945893e-11, -4.600631613945893e-11,
     3.2657583148697135e-11),
    (1e300, -7.860673062724093e-151, -1.3681360450342481e-151, -1.3681360450342481e-151,
     7.860673062724093e-151),
]


def test_bessel_against_mpmath() -> None:
    """j0, j1, y0, y1 at large x, where SciPy 1.17's argument reduction loses the digits: to
    a few ulp of the true values (and j1 of a subnormal x is x/2, correctly rounded). On
    CUDA these are fj_special_bessel.h's (the device's own were off by 1e-9 at 3e8)."""
    ref = np.array(BESSEL_REF)
    x = ref[:, 0]
    got = fusejit.jit(lambda a: (sp.j0(a), sp.j1(a), sp.y0(a), sp.y1(a)))(x)
    for k, g in enumerate(got):
        np.testing.assert_allclose(g, ref[:, k + 1], rtol=4e-15, atol=0)
    tiny = np.array([1e-310, -3e-320])
    assert_same(fusejit.jit(lambda a: sp.j1(a))(tiny), tiny / 2)


def test_erf_family_roundtrips() -> None:
    """ndtri inverts ndtr and erfinv inverts erf to a few ulp across the range."""
    p = np.concatenate([np.exp(-np.linspace(0, 700, 200)), np.linspace(0.01, 0.99, 99)])
    x = fusejit.jit(lambda a: sp.ndtri(a))(p)
    # ndtr's own relative error grows like x^2 eps in the tail
    assert (np.abs(sp.ndtr(x) - p) <= 4e-16 * (8 + x * x) * p).all()
    y = np.linspace(-0.999, 0.999, 201)
    z = fusejit.jit(lambda a: sp.erfinv(a))(y)
    assert np.allclose(sp.erf(z), y, rtol=1e-14, atol=1e-16)


@pytest.mark.parametrize("name", SCIPY_ALIASES)
@pytest.mark.parametrize("dtype", [np.float64, np.float32, np.int8, np.int64, np.bool_])
def test_numpy_named_scipy_ufuncs(name: str, dtype) -> None:
    """scipy.special.expm1/log1p/cbrt/exp2 run NumPy's op with SciPy's dtypes (ints and bool
    through float64): a few ulp from SciPy's own loops."""
    f = getattr(sp, name)
    x = _wide(200) if np.dtype(dtype).kind == "f" else np.arange(-100, 100)
    x = x.astype(dtype)
    with np.errstate(all="ignore"):
        want = f(x)
    got = fusejit.jit(lambda a: f(a))(x)
    assert got.dtype == want.dtype
    ok = match_mask(got, want, 1e-14 if want.dtype == np.float64 else 2e-6, 0.0)
    if name == "exp2":  # SciPy's exp2 flushes subnormal results (x < -1022) to 0; NumPy's
        ok |= (want == 0) & (np.abs(got) < 2.3e-308)  # op (fusejit's) gives them (README)
    assert ok.all()


def test_boxcox_branches() -> None:
    """The Box-Cox transforms at the edges of SciPy's branches: lambda around 1e-19 (log),
    lambda log(x) around 709.78 (the overflow-safe form), lambda x around 1.79e308 and
    1e-154, log1p(x) below 1e-289; signed zeros, infinities and NaN."""
    lam = np.array([0.0, -0.0, 9.9e-20, 1e-19, 1.01e-19, -9.9e-20, -1e-19, 1e-300, 0.5, -0.5,
                    2.0, -2.0, 100.0, 700.0, 710.0, -710.0, 1e273, 1.1e273, 1e300, np.inf,
                    -np.inf, np.nan])
    xs = np.array([0.0, -0.0, 1e-300, 1e-290, -1e-290, 1e-155, 0.5, 1.0, 2.0, np.e, 3.0, 1e3,
                   1e10, 1e154, 1e300, 1.7e308, -0.5, -1.0, -2.0, np.inf, -np.inf, np.nan])
    x, lm = np.meshgrid(xs, lam)
    for name in ("boxcox", "boxcox1p", "inv_boxcox", "inv_boxcox1p"):
        f = getattr(sp, name)
        got = fusejit.jit(lambda a, b, f=f: f(a, b))(x, lm)
        _check(name, got, f(x, lm), (x, lm))
        got32 = fusejit.jit(lambda a, b, f=f: f(a, b))(x.astype(np.float32), lm.astype(np.float32))
        _check(name, got32, f(x.astype(np.float32), lm.astype(np.float32)), (x, lm))


@pytest.mark.filterwarnings("ignore::RuntimeWarning")
def test_comb_of_traced_values() -> None:
    """scipy.special.comb(N, k) (exact=False; Python code, wrapped: frontend/scipy_api.py) of
    traced N and/or k: binom, 0 outside 0 <= k <= N (with repetition: binom(N + k - 1, k), 1
    for k == 0 <= N), SciPy's dtypes, broadcasting, strided views, a NumPy scalar for 0-d."""
    n = np.array([10.0, 5.0, 3.0, -1.0, 0.0, 4.5, 30.0, 2.5, np.nan])
    k = np.array([3.0, 6.0, -1.0, 2.0, 0.0, 2.0, 15.0, 0.5, 1.0])
    cases = [
        (lambda a, b: sp.comb(a, b), (n, k)),
        (lambda a, b: sp.comb(a, b, repetition=True), (n, k)),
        (lambda a, b: sp.comb(a, b), (n.astype(np.float32), k.astype(np.float32))),
        (lambda a, b: sp.comb(a[:, None], b[::2]), (n, k)),  # broadcast, strided
        (lambda a, b: sp.comb(a, 3) + sp.comb(7, b, repetition=True), (n, k)),
        (lambda a, b: sp.comb(a, b), (np.arange(-2, 12), np.arange(14)[::-1] - 1)),
        (lambda a, b: sp.comb(a, b), (np.float64(8.0), np.float64(3.0))),
        (lambda a, b: sp.comb(a, b), (np.int64(2), np.int64(3))),
    ]
    for f, args in cases:
        assert_same(fusejit.jit(f)(*args), f(*args))
    with pytest.raises(fusejit.UnsupportedError, match=r"exact=True.*test_special.py:\d+"):
        fusejit.jit(lambda a: sp.comb(a, 3, exact=True))(n)
    with pytest.raises(fusejit.UnsupportedError, match="0-d float32"):
        fusejit.jit(lambda a: sp.comb(a, a))(np.float32(5.0))
    assert sp.comb(10, 3, exact=True) == 120 and sp.comb(10, 3) == 120.0  # SciPy's own path


def test_rel_entr_where_the_arguments_are_close() -> None:
    """x log(x/y) keeps only the rounding of x/y when x ~ y (10 against the float below it:
    25% off); SciPy 1.17, and fusejit, take x log1p((x - y)/y) for 1/2 < x/y < 2."""
    x, y = np.array([10.0, 3.0, 1e-300]), np.nextafter(np.array([10.0, 3.0, 1e-300]), 0)
    got = fusejit.jit(lambda a, b: sp.rel_entr(a, b))(x, y)
    exact = x * ((x - y) / y)  # log1p(t) = t to double precision at these t
    np.testing.assert_allclose(got, exact, rtol=1e-15)
    np.testing.assert_allclose(sp.rel_entr(x, y), exact, rtol=1e-15)
