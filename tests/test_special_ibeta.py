"""scipy.special.betainc, betaincc and stdtr (codegen/include/fj_special_ibeta.h): special
values, reference values (a continued fraction summed by mpmath at 120 digits, written out
below) in each of the header's regimes, SciPy over moderate parameters, dtypes and shapes,
gradients, and scipy.stats' t and beta distributions through them.

Tolerance: relative 2e-12 plus 16 eps times the size of the exponent a ln x + b ln(1 - x) -
ln B(a, b) that x^a (1 - x)^b / B(a, b) is formed from (the error of every method's factor,
SciPy's included). SciPy's float32 loops compute in float32 (Boost's), fusejit's in double:
float32 results are compared with SciPy's double values, rounded.
"""

from __future__ import annotations

import numpy as np
import pytest
from conftest import assert_same
from gradcheck import check_grad

import fusejit
from fusejit.errors import UnsupportedError

sp = pytest.importorskip("scipy.special")
st = pytest.importorskip("scipy.stats")
pytestmark = pytest.mark.filterwarnings("ignore::RuntimeWarning")
EPS = np.finfo(np.float64).eps

# (a, b, x, I_x(a, b), 1 - I_x(a, b)): the fraction on either side, the expansion in 1/a (a
# large, b small: x near 1, where the fraction cancels), both large near the mean, tiny a or b
REFERENCE = [
    (0.5, 0.5, 0.3, 0.36901011956554536, 0.6309898804344546),
    (2.0, 3.0, 0.4, 0.5248, 0.47519999999999996),
    (0.001, 10.0, 0.01, 0.9981366242747504, 0.0018633757252496134),
    (19.36517308031291, 0.0014720680151594798, 0.9633106217837201, 0.000545290959402165,
     0.9994547090405979),
    (97.8, 0.0025, 0.999999999999, 0.05464537989417334, 0.9453546201058267),
    (0.0014, 3.2, 0.0487, 0.9978290654609192, 0.002170934539080825),
    (153921.15, 0.5, 0.9999682269612258, 0.0017630283174473588, 0.9982369716825527),
    (15000000.0, 0.5, 0.999999166666736, 5.733007892456721e-07, 0.9999994266992107),
    (1000000.0, 1000000.0, 0.5003, 0.8019280371578851, 0.19807196284211498),
    (1000000.0, 1000000.0, 0.499, 0.0023388494069315046, 0.9976611505930685),
    (1528.1777519077152, 17174.077278046, 0.0326226543188275, 1.7835796537820694e-223, 1.0),
    (50.0, 50.0, 0.1, 3.2321822349737532e-24, 1.0),
    (1e-200, 1e-200, 0.5, 0.5, 0.5),
    (3.0, 100000.0, 1e-05, 0.0803041561955605, 0.9196958438044395),
    (100000.0, 3.0, 0.99999, 0.9196958438052767, 0.08030415619472335),
    (7.5, 2.5, 0.999, 0.9999981633040146, 1.8366959854240133e-06),
    (0.1, 0.1, 1e-10, 0.05072372743937815, 0.9492762725606219),
    (400.0, 600.0, 0.41, 0.7414814534942454, 0.2585185465057546),
    # SciPy 1.17's betainc is 2.8e-9 off here (its betaincc is right); tiny b next to x = 1
    (0.5, 0.5, 1 - 2.0 ** -53, 0.9999999932921207, 6.707879276254073e-09),
    (0.5, 1e-300, 1 - 2.0 ** -53, 3.8123094930796995e-299, 1.0),
]
# (df, t, stdtr): large df is where the fraction cancels (x = df / (df + t^2) near 1)
STDTR = [(1.0, -3.0, 0.10241638234956672), (2.5, 0.7, 0.728297528405226),
         (30.0, -2.042, 0.02501433532809895),
         (342826.9144856242, -1.3773424802674539, 0.08420364326573633),
         (30000000.0, -5.0, 2.866531824956471e-07),
         (10000000000.0, -3.0, 0.0013498980349539809), (0.05, 1e+30, 0.9858151891449511),
         (4.0, -1e-08, 0.49999999625),
         # beyond |t| = 1e150 (t^2 overflows; SciPy gives 0 or 1 for the first two and last)
         (0.01, -1e159, 0.012473187032394504), (0.05, 1e160, 0.9999999955143689),
         (2.0, -2e151, 1.25e-303), (1e-300, -1e300, 0.5), (3e307, -2e280, 0.0),
         (3e307, 2e280, 1.0)]


def _both(a, b, x):
    return fusejit.jit(lambda a, b, x: (sp.betainc(a, b, x), sp.betaincc(a, b, x)))(a, b, x)


def _tolerance(a, b, x) -> np.ndarray:
    with np.errstate(all="ignore"):
        k = np.abs(a * np.log(x)) + np.abs(b * np.log1p(-x)) + np.abs(sp.betaln(a, b))
    return 2e-12 + 16 * EPS * np.nan_to_num(k)


def test_special_values_match_scipy() -> None:
    v = np.array([np.nan, -1.0, 0.0, 1e-300, 0.5, 2.0, 1e5, np.inf])
    x = np.array([np.nan, -0.1, 0.0, 1e-300, 0.3, 0.5, 0.999, 1.0, 1.1])
    a, b, x = (g.ravel() for g in np.meshgrid(v, v, x, indexing="ij"))
    p, q = _both(a, b, x)
    for got, want in ((p, sp.betainc(a, b, x)), (q, sp.betaincc(a, b, x))):
        np.testing.assert_array_equal(np.isnan(got), np.isnan(want))
        np.testing.assert_allclose(got, want, rtol=1e-11, atol=0)


def test_against_reference() -> None:
    a, b, x, p_want, q_want = (np.array(c) for c in zip(*REFERENCE))
    p, q = _both(a, b, x)
    tol = _tolerance(a, b, x)
    for got, want in ((p, p_want), (q, q_want)):
        assert (np.abs(got - want) <= tol * want).all(), np.abs(got - want) / want
    df, t, want = (np.array(c) for c in zip(*STDTR))
    got = fusejit.jit(lambda d, t: sp.stdtr(d, t))(df, t)
    np.testing.assert_allclose(got, want, rtol=1e-13, atol=0)


def test_against_scipy() -> None:
    rng = np.random.default_rng(5)
    n = 3000
    a = np.exp(rng.uniform(np.log(1e-3), np.log(1e3), n))
    b = np.exp(rng.uniform(np.log(1e-3), np.log(1e3), n))
    x = np.where(rng.random(n) < 0.5, rng.uniform(0, 1, n),
                 np.clip(a / (a + b) + rng.standard_normal(n) * 0.05, 1e-12, 1 - 1e-12))
    p, q = _both(a, b, x)
    tol = _tolerance(a, b, x)
    for got, want in ((p, sp.betainc(a, b, x)), (q, sp.betaincc(a, b, x))):
        keep = want > 1e-290
        err = np.abs(got - want)[keep] / want[keep]
        assert (err <= tol[keep]).all(), (a[keep][err > tol[keep]][:3],
                                          b[keep][err > tol[keep]][:3])


def test_dtypes_shapes_and_layouts() -> None:
    """float32 (SciPy's double values rounded), integers through float64, broadcasting,
    0-d and strided operands."""
    rng = np.random.default_rng(6)
    a = rng.uniform(0.5, 5, (3, 1)).astype(np.float32)
    b = rng.uniform(0.5, 5, 8)[::2].astype(np.float32)
    x = rng.uniform(0, 1, (3, 4)).astype(np.float32)
    got = fusejit.jit(lambda a, b, x: sp.betainc(a, b, x))(a, b, x)
    want = sp.betainc(a.astype(np.float64), b.astype(np.float64), x.astype(np.float64))
    assert got.dtype == np.float32 and got.shape == (3, 4)
    np.testing.assert_allclose(got, want.astype(np.float32), rtol=2e-7)
    k, n = np.arange(6), np.int64(10)
    f = fusejit.jit(lambda k, n: sp.betainc(n - k, k + 1, 0.7))
    assert_same(f(k, n), sp.betainc(n - k, k + 1, 0.7))
    assert_same(fusejit.jit(lambda d: sp.stdtr(d, 1.5))(np.float64(3.0)), sp.stdtr(3.0, 1.5))


def test_gradients_in_x_and_refused_in_the_shape() -> None:
    x = np.array([0.2, 0.5, 0.7])
    a = np.array([0.5, 2.0, 30.0])
    b = np.array([1.5, 0.5, 40.0])
    for f in (lambda x, a, b: np.sum(sp.betainc(a, b, x) * np.arange(1.0, 4.0)),
              lambda x, a, b: np.sum(sp.betaincc(a, b, x)),
              lambda x, a, b: np.sum(sp.stdtr(a * 3, x * 4 - 2))):
        check_grad(f, [x, a, b], 0, fusejit.grad(f)(x, a, b), rtol=1e-6, atol=1e-9)
    with pytest.raises(UnsupportedError, match=r"scipy\.special\.betainc .*shape parameters"):
        fusejit.grad(lambda a, x: np.sum(sp.betainc(a, 2.0, x)))(a, x)


def test_t_and_beta_distributions() -> None:
    """scipy.stats' t and beta through stdtr and betainc (frontend/scipy_stats.py)."""
    x = np.array([-np.inf, -3.0, -0.5, 0.0, 0.25, 0.6, 1.0, 4.0, np.nan])

    def f(x, df):
        return (st.t.cdf(x, df), st.t.sf(x, df, loc=0.5), st.t.logpdf(x, df, scale=2.0),
                st.beta.cdf(x, 2.0, 3.0), st.beta.sf(x, 0.5, 0.5), st.f.logpdf(x, 3.0, 4.0))

    assert_same(fusejit.jit(f)(x, 4.0), f(x, 4.0))


def test_beta_pdf_private_ufunc() -> None:
    """scipy.stats.beta's pdf (scipy.special._ufuncs._beta_pdf): SciPy's special values over a
    grid (inf for x <= 0 with a < 1 and x >= 1 with b < 1 whatever else is given, NaN for bad
    parameters, the ends at a = 1 or b = 1), its values to rounding elsewhere, except where a
    and b are both below ~1e-290 (Boost's underflows to 0), and the gradient in x."""
    from scipy.special import _ufuncs as u

    v = np.array([np.nan, -1.0, 0.0, 1e-300, 0.5, 1.0, 2.0, 1e5, np.inf])
    x = np.array([np.nan, -0.1, 0.0, 1e-300, 0.3, 1 - 1e-16, 1.0, 1.1])
    xs, a, b = (g.ravel() for g in np.meshgrid(x, v, v, indexing="ij"))
    with np.errstate(all="ignore"):
        want = u._beta_pdf(xs, a, b)
    got = fusejit.jit(lambda x, a, b: u._beta_pdf(x, a, b))(xs, a, b)
    tiny = (a < 1e-290) & (b < 1e-290) & (want == 0)
    with np.errstate(all="ignore"):
        tol = _tolerance(a, b, np.clip(xs, 1e-300, 1 - 1e-16))  # (relative: eps x exponent)
        ok = tiny | (np.isnan(got) & np.isnan(want)) | (got == want) | (
            np.abs(got - want) <= tol * np.abs(want))
    assert ok.all(), list(zip(xs[~ok], a[~ok], b[~ok], got[~ok], want[~ok]))
    rng = np.random.default_rng(8)
    x, a, b = rng.uniform(0.001, 0.999, 500), rng.uniform(0.2, 50, 500), rng.uniform(0.2, 50, 500)
    assert_same(fusejit.jit(lambda x, a, b: st.beta.pdf(x, a, b))(x, a, b), st.beta.pdf(x, a, b),
                rtol=1e-12)
    f = lambda x, a, b: np.sum(st.beta.pdf(x, a, b) * np.arange(1.0, 4.0))  # noqa: E731
    x, a, b = np.array([0.2, 0.5, 0.7]), np.array([0.5, 2.0, 30.0]), np.array([1.5, 0.5, 40.0])
    check_grad(f, [x, a, b], 0, fusejit.grad(f)(x, a, b), rtol=1e-6, atol=1e-9)


def test_binomial_private_ufuncs() -> None:
    """scipy.stats.binom's pmf, cdf and sf ufuncs (scipy.special._ufuncs._binom_*): SciPy's
    values over a grid of special values (NaN, infinities, k outside [0, n], p outside
    [0, 1], non-integer k and n) and over random k, n up to 1e7, p down to 1e-9."""
    from scipy.special import _ufuncs as u

    k = np.array([np.nan, -np.inf, -1, -0.0, 0, 0.5, 1, 2, 2.5, 5, 6, 1e6, np.inf])
    n = np.array([np.nan, -1, 0, 0.5, 2, 5, 5.5, 1e6, np.inf])
    p = np.array([np.nan, -0.1, 0, 1e-300, 0.3, 0.5, 1 - 1e-16, 1, 1.1])
    grid = [g.ravel() for g in np.meshgrid(k, n, p, indexing="ij")]
    rng = np.random.default_rng(8)
    nn = np.floor(np.exp(rng.uniform(0, np.log(1e7), 3000)))
    pp = np.where(rng.random(3000) < 0.7, rng.uniform(0, 1, 3000),
                  np.exp(rng.uniform(-20, 0, 3000)))
    kk = np.clip(np.round(nn * pp + rng.standard_normal(3000)
                          * np.sqrt(nn * pp * (1 - pp) + 1) * 3), 0, nn)
    f = fusejit.jit(lambda k, n, p: (u._binom_pmf(k, n, p), u._binom_cdf(k, n, p),
                                     u._binom_sf(k, n, p)))
    for args, rtol in ((grid, 1e-12), ((kk, nn, pp), 1e-9)):
        for got, ref in zip(f(*args), (u._binom_pmf, u._binom_cdf, u._binom_sf)):
            want = ref(*args)
            np.testing.assert_array_equal(np.isnan(got), np.isnan(want))
            keep = want > 1e-290  # (SciPy's Boost values: within 1e-9 of ours for n to 1e7,
            # where ours are the more accurate ones: cdf(16, 9320087, 2.08e-6) below)
            np.testing.assert_allclose(got[keep], want[keep], rtol=rtol)
    cdf = f(np.array([16.0]), np.array([9320087.0]), np.array([2.080220493926591e-06]))[1]
    np.testing.assert_allclose(cdf, 0.26300742820336287, rtol=1e-14)  # (mpmath; SciPy 4e-10)
