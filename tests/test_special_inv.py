"""The inverses of the incomplete gamma and beta functions (codegen/include/fj_special_inv.h):
scipy.special gammaincinv, gammainccinv, chdtri, betaincinv, betainccinv, stdtrit, fdtri,
fdtr, fdtrc; special values as SciPy's, reference roots (found by mpmath at 60 digits around
fusejit's value, written out below), SciPy over moderate parameters, float32, gradients, and
the scipy.stats ppf/isf methods that run on them (t, chi2, gamma, erlang, beta, f, cauchy).
"""

from __future__ import annotations

import numpy as np
import pytest
from gradcheck import check_grad

import fusejit

sp = pytest.importorskip("scipy.special")
st = pytest.importorskip("scipy.stats")
pytestmark = pytest.mark.filterwarnings("ignore::RuntimeWarning")
nan, inf = np.nan, np.inf

# (function, arguments..., the root): mpmath's bisection on its regularized incomplete
# functions at 60 digits, bracketed within 1e-7 of fusejit's value
REFERENCE = [
    ("gammaincinv", 2.5, 0.3, 1.499954066379953),
    ("gammaincinv", 0.001, 0.9, 9.821659644066881e-47),
    ("gammaincinv", 5.0, 1e-200, 2.605171084697352e-40),
    ("gammaincinv", 50.0, 0.999, 74.72462638951936),
    ("gammaincinv", 10000.0, 0.01, 9768.836856696591),
    ("gammaincinv", 0.5, 1e-150, 7.853981633974484e-301),
    ("gammaincinv", 3.0, 0.9999999999990905, 34.15296700091932),
    ("gammainccinv", 2.5, 0.3, 3.0322149920774524),
    ("gammainccinv", 0.001, 0.4, 7.960233816826859e-223),
    ("gammainccinv", 3.0, 1e-250, 587.7089929369832),
    ("gammainccinv", 10000.0, 0.01, 10234.104379158054),
    ("gammainccinv", 0.5, 0.999999, 7.853981634430288e-13),
    ("betaincinv", 2.0, 3.0, 0.3, 0.27238394207510536),
    ("betaincinv", 0.01, 5.0, 0.5, 9.89224042411254e-32),
    ("betaincinv", 200.0, 0.5, 0.01, 0.9835291921131988),
    ("betaincinv", 2.0, 3.0, 1e-300, 4.08248290463863e-151),
    ("betaincinv", 1000.0, 1000.0, 0.7, 0.5058635072720185),
    ("betaincinv", 0.5, 0.5, 0.999, 0.999997532600929),
    ("betaincinv", 3.0, 0.02, 1e-50, 1.1334174755376813e-16),
    # SciPy 1.17's stdtrit gives +inf for the first and -1.41e94 for the second
    ("stdtrit", 3.0, 1e-300, -1.033110836044653e+100),
    ("stdtrit", 2.12, 1.2115477115342477e-201, -4.431414027327488e+94),
    ("stdtrit", 10.0, 0.975, 2.2281388519862744),
    ("stdtrit", 100000.0, 0.3, -0.5244021842335458),
    ("stdtrit", 0.5, 1e-10, -1.02849115631634e+19),
    ("stdtrit", 4.5, 0.3, -0.5635058039393779),
]


def _jit(name: str, n: int):
    fn = getattr(sp, name)
    if n == 2:
        return fusejit.jit(lambda a, b: fn(a, b))
    return fusejit.jit(lambda a, b, c: fn(a, b, c))


@pytest.mark.parametrize("name", ["gammaincinv", "gammainccinv", "betaincinv", "stdtrit"])
def test_reference_roots(name: str) -> None:
    rows = [r for r in REFERENCE if r[0] == name]
    args = [np.array([r[k] for r in rows]) for k in range(1, len(rows[0]) - 1)]
    want = np.array([r[-1] for r in rows])
    np.testing.assert_allclose(_jit(name, len(args))(*args), want, rtol=1e-13)


SPECIAL = {
    "gammaincinv": [(2, 0), (2, 1), (0, 0.5), (-1, 0.5), (2, -0.1), (2, 1.1), (inf, 0.5),
                    (2, nan), (nan, 0.5), (0, 0), (0, 1)],
    "gammainccinv": [(2, 0), (2, 1), (0, 0.5), (-1, 0.5), (2, 1.1), (inf, 0.5), (0, 0),
                     (0, 1)],
    "chdtri": [(2, 0), (2, 1), (0, 0.5), (-1, 0.5), (2, -0.1), (inf, 0.5)],
    "betaincinv": [(2, 3, 0), (2, 3, 1), (0, 3, 0.5), (2, 0, 0.5), (-1, 3, 0.5), (2, 3, 1.1),
                   (inf, 3, 0.5), (2, inf, 0.5), (0, 0, 0.5), (2, 3, nan)],
    "betainccinv": [(2, 3, 0), (2, 3, 1), (0, 3, 0.5), (2, 0, 0.5), (-1, 3, 0.5)],
    "stdtrit": [(3, 0), (3, 1), (3, 0.5), (0, 0.5), (-1, 0.5), (inf, 0.3), (3, 1.1),
                (3, nan)],
    "fdtri": [(3, 7, 0), (3, 7, 1), (0, 7, 0.5), (3, 0, 0.5), (inf, 7, 0.5), (3, inf, 0.5),
              (3, 7, -0.1), (3, 7, nan)],
    "fdtr": [(3, 7, 0), (3, 7, inf), (0, 7, 0.5), (3, 0, 0.5), (inf, 7, 0.5), (3, inf, 0.5),
             (3, 7, -0.1), (3, 7, nan)],
    "fdtrc": [(3, 7, 0), (3, 7, inf), (0, 7, 0.5), (3, 0, 0.5), (inf, 7, 0.5), (3, 7, -0.1)],
}


@pytest.mark.parametrize("name", sorted(SPECIAL))
def test_special_values_are_scipys(name: str) -> None:
    rows = SPECIAL[name]
    args = [np.array([r[k] for r in rows], np.float64) for k in range(len(rows[0]))]
    # (stdtrit(inf, p) is the normal quantile: an ulp apart from SciPy's ndtri)
    np.testing.assert_allclose(_jit(name, len(args))(*args), getattr(sp, name)(*args),
                               rtol=5e-16, atol=0)


def _moderate(n: int, seed: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Shapes log-uniform in [0.05, 2000], probabilities down to 1e-100 and up to 1 - 1e-12."""
    rng = np.random.default_rng(seed)
    a, b = (np.exp(rng.uniform(np.log(0.05), np.log(2000.0), n)) for _ in range(2))
    p = np.concatenate([rng.uniform(1e-12, 1 - 1e-12, n - n // 3),
                        np.exp(rng.uniform(np.log(1e-100), 0, n // 3))])
    return a, b, p


# name -> the forward function of the shapes and the result giving the probability back, and
# its complement (1 minus it, computed as such)
FORWARD = {"gammaincinv": (sp.gammainc, sp.gammaincc),
           "gammainccinv": (sp.gammaincc, sp.gammainc),
           "chdtri": (sp.chdtrc, sp.chdtr),
           "betaincinv": (sp.betainc, sp.betaincc),
           "betainccinv": (sp.betaincc, sp.betainc),
           # (fusejit's stdtr: SciPy's squares t, which overflows beyond 1e150)
           "stdtrit": (lambda df, t: _STDTR(df, t), lambda df, t: _STDTR(df, -t)),
           "fdtri": (sp.fdtr, sp.fdtrc)}


_STDTR = fusejit.jit(lambda df, t: sp.stdtr(df, t))


def _solved(name: str, args: tuple, x: np.ndarray, ulps: int = 8) -> np.ndarray:
    """Whether SciPy's forward function crosses the probability within `ulps` of x (on the
    smaller tail, with the complement function where p > 1/2), or is that close to it."""
    p = args[-1]
    fwd, comp = FORWARD[name]
    upper = p > 0.5
    target = np.where(upper, 1 - p, p)

    def tail(v: np.ndarray) -> np.ndarray:
        return np.where(upper, comp(*args[:-1], v), fwd(*args[:-1], v))

    step = ulps * np.spacing(np.abs(x))
    lo, hi = tail(x - step) - target, tail(x + step) - target
    near = np.abs(tail(x) - target) <= 1e-11 * target
    return (np.sign(lo) != np.sign(hi)) | (lo == 0) | (hi == 0) | near | ~np.isfinite(x)


@pytest.mark.parametrize("name", sorted(FORWARD))
def test_against_scipy_over_moderate_parameters(name: str) -> None:
    """Each result is SciPy's to 2e-10, or, where they differ, SciPy's own forward function
    crosses the probability within 8 ulp of it (SciPy's inverses lose digits in some far
    tails, e.g. betaincinv(2.68, 0.076, 1e-46) = 1.39e-17, whose betainc is 1.9e-47)."""
    a, b, p = _moderate(600, 7)
    fn = getattr(sp, name)
    args = (a, p) if fn.nin == 2 else (a, b, p)
    got, want = _jit(name, len(args))(*args), fn(*args)
    assert got.dtype == want.dtype and got.shape == want.shape
    close = np.isclose(got, want, rtol=2e-10, atol=1e-300)
    solved = _solved(name, args, got)
    assert (close | solved).all(), [(a_[~close & ~solved][:3]) for a_ in (*args, got, want)]
    assert close.mean() > 0.95


def test_forward_f_distribution() -> None:
    a, b, p = _moderate(600, 9)
    x = p * 10.0
    for name in ("fdtr", "fdtrc"):
        got, want = _jit(name, 3)(a, b, x), getattr(sp, name)(a, b, x)
        np.testing.assert_allclose(got, want, rtol=1e-11, atol=1e-300)


def test_float32_and_broadcasting() -> None:
    a = np.array([[0.5], [3.0], [40.0]], np.float32)
    p = np.array([0.01, 0.5, 0.975], np.float32)

    def f(a, p):
        return sp.gammaincinv(a, p), sp.stdtrit(a, p), sp.betaincinv(a, a[::-1], p)

    # (SciPy's float32 loops solve in float32; fusejit's in double, rounded once)
    wide = f(a.astype(np.float64), p.astype(np.float64))
    for got, want, exact in zip(fusejit.jit(f)(a, p), f(a, p), wide):
        assert got.dtype == np.float32 and got.shape == want.shape
        np.testing.assert_allclose(got, exact.astype(np.float32), rtol=1e-7)


def test_integer_operands_take_the_double_loop() -> None:
    df, p = np.array([1, 2, 5, 30]), np.array([0, 1, 1, 0], bool)

    def f(df, p):
        return sp.stdtrit(df, p), sp.gammaincinv(df, p), sp.chdtri(df, p)

    for got, want in zip(fusejit.jit(f)(df, p), f(df, p)):
        assert got.dtype == want.dtype == np.float64
        np.testing.assert_array_equal(got, want)


def test_stats_quantiles_run_on_them() -> None:
    q = np.array([1e-8, 0.025, 0.3, 0.5, 0.8, 0.975, 1 - 1e-9])

    def f(q):
        return (st.t.ppf(q, 4.5), st.t.isf(q, 10), st.chi2.ppf(q, 3), st.chi2.isf(q, 7.5),
                st.gamma.ppf(q, 2.5, scale=3.0), st.erlang.ppf(q, 3), st.beta.ppf(q, 2, 3),
                st.f.ppf(q, 3, 7), st.f.cdf(q * 5, 3, 7), st.f.sf(q * 5, 3, 7),
                st.cauchy.ppf(q), st.cauchy.isf(q, 1.0, 2.0),
                st.t.interval(0.95, 5, q.mean(), q.std()))

    for got, want in zip(fusejit.jit(f)(q), f(q)):
        np.testing.assert_allclose(got, want, rtol=1e-10)


def test_gradients_in_the_probability() -> None:
    p = np.array([0.01, 0.3, 0.8, 0.999])

    def loss(p):
        return (sp.gammaincinv(2.5, p) + sp.gammainccinv(0.7, p) + sp.chdtri(3.0, p)
                + sp.betaincinv(2.0, 3.0, p) + sp.betainccinv(0.5, 4.0, p)
                + sp.stdtrit(4.5, p) + sp.fdtri(3.0, 7.0, p) + st.cauchy.ppf(p, 1.0, 2.0)
                + sp.fdtr(3.0, 7.0, 4 * p) + st.beta.ppf(p, 2.0, 3.0)).sum()

    check_grad(loss, [p], 0, fusejit.grad(loss)(p), rtol=1e-5)


def test_speed_is_reasonable_against_scipy() -> None:
    """A smoke test of the iteration's cost (asserting nothing about time: only that a
    large array is solved and agrees)."""
    a, b, p = _moderate(20000, 3)

    @fusejit.jit
    def f(a, b, p):
        return sp.betaincinv(a, b, p), sp.gammaincinv(a, p)

    for got, name, args in zip(f(a, b, p), ("betaincinv", "gammaincinv"), ((a, b, p), (a, p))):
        assert _solved(name, args, got).mean() > 0.999
