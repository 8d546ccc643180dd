"""scipy.stats.ncx2's density, distribution function and survival function
(codegen/include/fj_special_ncx2.h: SciPy's private ufuncs _ncx2_pdf and _ncx2_sf and
scipy.special.chndtr) against SciPy over many decades of x, k and nc, Boost's domain and
special values, the distribution's methods (nc = 0 through chi2 as SciPy), and mpmath's values
(written in) where Boost loses digits or returns 0: its density's sum started from a
subnormal term, its distribution functions' far tails."""

from __future__ import annotations

import numpy as np
import pytest

import fusejit
from fusejit import UnsupportedError

sp = pytest.importorskip("scipy.special")
st = pytest.importorskip("scipy.stats")
u = pytest.importorskip("scipy.special._ufuncs")
pytestmark = pytest.mark.filterwarnings("ignore::RuntimeWarning")

R = np.random.default_rng(43)


def test_private_pdf_against_scipy() -> None:
    """3e-13 of SciPy's where Boost's own sum keeps its digits (its first term, at the Poisson
    weights' mode, not subnormal; or the Bessel form), 1e-10 more in the Bessel form of
    k > 100 (both Bessel functions of large order and small argument lose ~4e-11 there)."""
    n = 3000
    x, k, nc = (10.0 ** R.uniform(-5, 3.5, n), 10.0 ** R.uniform(-1, 3, n),
                10.0 ** R.uniform(-3, 3.5, n))
    got, want = fusejit.jit(lambda x, k, nc: u._ncx2_pdf(x, k, nc))(x, k, nc), u._ncx2_pdf(x, k, nc)
    mode = np.floor(nc / 2)
    with np.errstate(all="ignore"):
        first = st.poisson.pmf(mode, nc / 2) * st.gamma.pdf(x / 2, k / 2 + mode)
        r = np.log(x / nc) * (k / 4 - 0.5) - (x + nc) / 2
    bessel = (nc <= 50) & (np.abs(r) < np.log(np.finfo(float).max) / 4)
    kept = (bessel | (first > 1e-280)) & (want > 1e-280)
    assert kept.sum() > n / 2
    rtol = 3e-13 + np.where(bessel & (k > 100), 1e-10, 0.0)
    ok = ~kept | (np.abs(got - want) <= rtol * want)
    assert ok.all(), (x[~ok], k[~ok], nc[~ok], got[~ok], want[~ok])
    assert got.dtype == np.float64


# mpmath's sum of the mixture (60 digits) where Boost's loses digits or underflows:
# (x, k, nc, pdf)
EXACT = [
    (9.169993536703645e-05, 19.386776085910512, 97.84661265383188, 2.9660263491447107e-65),
    (0.09111984601557623, 131.50289182381795, 89.0428209305805, 1.0799004527967602e-197),
    (1.0550602266662005e-05, 45.486103992275396, 87.08625372857414, 2.138078820357308e-155),
    (3.3798999777266974, 40.740543396284856, 669.4018893475646, 1.1892940801478316e-151),
    (65.46134421929307, 16.22865729529582, 909.0845194180744, 2.0965308270440785e-112),
    (3.269753625359592e-05, 3.3117599439029664, 104.4059836360513, 8.58226223403914e-27),
    (1.4, 278.0, 0.002, 1.506933643013713e-259),
]


def test_where_boost_loses_digits_mpmath() -> None:
    """5e-14 of mpmath's sums: SciPy's values there are off by up to 11%, or 0 (its first
    term underflowed), except the last (Boost's series where the Bessel form underflows)."""
    x, k, nc, want = (np.array(c) for c in zip(*EXACT))
    got = fusejit.jit(lambda x, k, nc: u._ncx2_pdf(x, k, nc))(x, k, nc)
    assert (np.abs(got - want) <= 5e-14 * want).all(), (got - want) / want
    scipy = u._ncx2_pdf(x, k, nc)
    assert (scipy[2:5] == 0).all() and abs(scipy[1] / want[1] - 1) > 0.1


def test_cdf_and_sf_against_scipy() -> None:
    """scipy.special.chndtr and _ncx2_sf: 3e-13 of SciPy's (and 3e-14 absolute, the side
    computed as 1 minus the other) where its value is above 1e-40; float32's loop."""
    n = 3000
    x, k, nc = (10.0 ** R.uniform(-3, 3.5, n), 10.0 ** R.uniform(-1, 3, n),
                10.0 ** R.uniform(-3, 3.5, n))
    f = fusejit.jit(lambda x, k, nc: (sp.chndtr(x, k, nc), u._ncx2_sf(x, k, nc)))
    for got, want in zip(f(x, k, nc), (sp.chndtr(x, k, nc), u._ncx2_sf(x, k, nc))):
        ok = (want < 1e-40) | (np.abs(got - want) <= 3e-13 * want + 3e-14)
        assert ok.all(), (x[~ok], k[~ok], nc[~ok], got[~ok], want[~ok])
    x32 = x[:50].astype(np.float32)
    got32 = fusejit.jit(lambda x: sp.chndtr(x, 3, 2))(x32)
    assert got32.dtype == sp.chndtr(x32, 3, 2).dtype == np.float32
    np.testing.assert_allclose(got32, sp.chndtr(x32, 3, 2), rtol=1e-6, atol=1e-7)


# mpmath's sums of the mixture (60 digits) in the far tails, where SciPy's Boost is off by
# up to 8%: (x, k, nc, upper, value)
TAILS = [
    (95.54092417109169, 2.5445179968309035, 1005.759655063926, 0, 2.204748542903626e-107),
    (0.21686222811628997, 1.3605866882567166, 241.17117312874268, 0, 7.299876409620312e-52),
    (0.4481204081123539, 2.5537353041764703, 270.2171257829019, 0, 1.979094626423334e-57),
    (1738.5714465014714, 0.5373532351595666, 69.21856502889472, 1, 1.037968387228581e-244),
    (1644.08094995104, 2.3055352156740776, 34.92403016951156, 1, 1.2075298014230854e-262),
    (2989.4764694490605, 234.21566943515018, 347.11199059393647, 1, 3.9069050838943366e-233),
]


def test_quantiles_against_scipy_and_round_trips() -> None:
    """scipy.special.chndtrix and _ncx2_isf: 1e-12 of SciPy's (both solve to full precision)
    for p above 1e-30 (below, SciPy's own distribution functions lose digits: its
    isf(1.2e-287, 9.28, 388) is 2623, whose sf is 1.4e-216); from 1e-300 up, fusejit's own
    distribution functions give back p and q to 1e-13 plus the conditioning, 4e-16 (x + k)
    (d log G / d log x), and the granularity of x^(k/2) as exp(k/2 log x) for a tiny x,
    4e-16 k |log x|; SciPy's values at the ends and outside [0, 1], and its floor
    DBL_MIN / 4 for a root below it."""
    n = 600
    p = np.concatenate([10.0 ** R.uniform(-300, -1, n // 2), R.uniform(0, 1, n // 2)])
    k, nc = 10.0 ** R.uniform(-1, 3, n), 10.0 ** R.uniform(-3, 3, n)
    f = fusejit.jit(lambda p, k, nc: (sp.chndtrix(p, k, nc), u._ncx2_isf(p, k, nc),
                                      sp.chndtr(sp.chndtrix(p, k, nc), k, nc),
                                      u._ncx2_sf(u._ncx2_isf(p, k, nc), k, nc)))
    ppf, isf, p_back, q_back = f(p, k, nc)
    floor = np.finfo(float).tiny / 4
    for got, want, back in ((ppf, sp.chndtrix(p, k, nc), p_back),
                            (isf, u._ncx2_isf(p, k, nc), q_back)):
        ok = (p < 1e-30) | (np.abs(got - want) <= 1e-12 * want)
        assert ok.all(), (p[~ok], k[~ok], nc[~ok], got[~ok], want[~ok])
        cond = 1e-13 + 4e-16 * (got + k) + 4e-16 * k * np.abs(np.log(got))
        ok = (got == floor) | (np.abs(back - p) <= cond * p)
        assert ok.all(), (p[~ok], k[~ok], nc[~ok], got[~ok], back[~ok])
    at_floor = sp.chndtrix(p, k, nc) == floor
    assert at_floor.any() and (ppf[at_floor] == floor).all()
    ends = np.array([0.0, 1.0, -0.1, 1.1, np.nan, 0.5, 0.5, 1 - 1e-16])
    kk, ll = np.array([3, 3, 3, 3, 3, 0, 3, 3.0]), np.array([2, 2, 2, 2, 2, 2, 0, 2.0])
    got = fusejit.jit(lambda p, k, nc: (sp.chndtrix(p, k, nc), u._ncx2_isf(p, k, nc)))(
        ends, kk, ll)
    np.testing.assert_allclose(got[0][:7], sp.chndtrix(ends, kk, ll)[:7], rtol=1e-12)
    np.testing.assert_allclose(got[1][1:7], u._ncx2_isf(ends[1:7], kk[1:7], ll[1:7]), rtol=1e-12)
    assert got[1][0] == np.inf  # (SciPy's private ufunc raises OverflowError at q = 0)
    # p = 1 - 2^-53: fusejit solves sf = 2^-53 (mpmath: sf(97.12293003489425) = 1.1102e-16);
    # SciPy's 95.0622 solves the cdf, which cannot tell (mpmath: its sf is 2.69e-16); the
    # isf alike (mpmath: cdf(1.0879040744759506e-10) = 1.11022302462516e-16, SciPy's root
    # 1.087904074468059e-10 gives 1.11022302461308e-16)
    assert abs(got[0][7] / 97.12293003489425 - 1) < 1e-13
    assert abs(got[1][7] / 1.0879040744759506e-10 - 1) < 1e-13


def test_far_tails_mpmath() -> None:
    x, k, nc, upper, want = (np.array(c) for c in zip(*TAILS))
    cdf, sf = fusejit.jit(lambda x, k, nc: (sp.chndtr(x, k, nc), u._ncx2_sf(x, k, nc)))(x, k,
                                                                                        nc)
    got = np.where(upper == 1, sf, cdf)
    assert (np.abs(got - want) <= 1e-13 * want).all(), (got - want) / want
    scipy = np.where(upper == 1, u._ncx2_sf(x, k, nc), sp.chndtr(x, k, nc))
    assert np.max(np.abs(scipy / want - 1)) > 0.05


def test_domain_and_special_values() -> None:
    x = np.array([np.inf, -1, 0, 1, np.nan, 2, 2, 2, 1e-300, 1e-300, 5e-324, 3.0, 0.0])
    k = np.array([3, 3, 3, -1, 3, 0, 3, 3.0, 1, 2, 0.5, np.inf, 1.0])
    nc = np.array([2, 2, 2, 2, 2, 2, -1, 0.0, 1, 1, 3, 2, 0.0])
    f = fusejit.jit(lambda x, k, nc: (u._ncx2_pdf(x, k, nc), sp.chndtr(x, k, nc),
                                      u._ncx2_sf(x, k, nc)))
    for got, want in zip(f(x, k, nc), (u._ncx2_pdf(x, k, nc), sp.chndtr(x, k, nc),
                                       u._ncx2_sf(x, k, nc))):
        np.testing.assert_allclose(got, want, rtol=1e-14)
        np.testing.assert_array_equal(np.signbit(got), np.signbit(want))  # (sf(0) = -0)


def test_distribution_methods() -> None:
    """ncx2's pdf, logpdf, cdf, sf, logcdf, logsf (SciPy's choose by the median: the
    quantile) ppf and isf with nc = 0 mixed in (SciPy's chi2 there), x outside the support,
    invalid shapes (NaN), broadcasting, float32 and a 0-d call; the gradient is refused."""
    x = np.concatenate([np.linspace(-1, 40, 60), [0.0, 1e-3]])
    nc = np.where(np.arange(x.size) % 3 == 0, 0.0, 4.5)
    q = np.concatenate([np.linspace(0, 1, x.size - 2), [1e-200, -0.5]])
    for method in ("pdf", "logpdf", "cdf", "sf", "logcdf", "logsf", "ppf", "isf"):
        fn = getattr(st.ncx2, method)
        f = fusejit.jit(lambda x, nc, fn=fn: fn(x, 3.5, nc))
        arg = q if method in ("ppf", "isf") else x
        np.testing.assert_allclose(f(arg, nc), fn(arg, 3.5, nc), rtol=1e-12, atol=1e-300)
    k = np.array([[2.0], [7.0], [-1.0]])
    g = fusejit.jit(lambda x, k: st.ncx2.pdf(x, k, 1.5))
    np.testing.assert_allclose(g(x, k), st.ncx2.pdf(x, k, 1.5), rtol=1e-12)
    x32 = x.astype(np.float32)
    np.testing.assert_allclose(fusejit.jit(lambda x: st.ncx2.pdf(x, 3, 2))(x32),
                               st.ncx2.pdf(x32, 3, 2), rtol=1e-12)
    assert np.ndim(fusejit.jit(lambda x: st.ncx2.pdf(x, 3, 2))(np.float64(2.0))) == 0
    for method in ("pdf", "sf"):
        with pytest.raises(UnsupportedError, match="ncx2's functions"):
            fusejit.grad(lambda x, m=method: np.sum(getattr(st.ncx2, m)(x, 3, 2)))(
                np.array([1.0, 2.0]))


def test_skellam_through_ncx2() -> None:
    """scipy.stats.skellam's pmf, logpmf, cdf and sf are SciPy's formulas over _ncx2_pdf,
    chndtr and _ncx2_sf: they compile and match (to 3e-16 absolute: SciPy's sf(15; 5, 0.4)
    is 5.188578335535432e-05 where fusejit's and mpmath's are 5.1885783355465e-05 and
    5.1885783355479e-05)."""
    k = np.arange(-15, 16).astype(float)
    for method in ("pmf", "logpmf", "cdf", "sf"):
        fn = getattr(st.skellam, method)
        got = fusejit.jit(lambda k, fn=fn: fn(k, 5.0, 0.4))(k)
        np.testing.assert_allclose(got, fn(k, 5.0, 0.4), rtol=2e-13, atol=3e-16)
