"""The README's table of what compiles (by family) and what raises, tried as a new user would:
each call below is compiled on ordinary arguments and compared with NumPy/SciPy, or must raise
a clear UnsupportedError naming the user's line. The table in README.md between the markers is
this test's output; `python tests/test_coverage.py` rewrites it.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Callable
from typing import Any

import numpy as np
import scipy.fft
import scipy.spatial.distance as distance
import scipy.special as sp
import scipy.stats as st
from scipy import interpolate, linalg, ndimage, signal

sys.path.insert(0, os.path.dirname(__file__))
from conftest import assert_same  # noqa: E402

import fusejit  # noqa: E402
from fusejit.errors import UnsupportedError  # noqa: E402

RNG = np.random.default_rng(3)
X = RNG.standard_normal((6, 8))
V = RNG.standard_normal(16)
P = RNG.uniform(0.01, 0.99, 16)
K = np.array([0.25, 0.5, 0.25])
B = np.array([-1.0, 0.0, 0.5, 2.0])
Z = X + 1j * X[::-1]  # complex, no structural zeros in its transforms
SPLINE = interpolate.CubicSpline(np.linspace(-3, 3, 9), np.sin(np.linspace(-3, 3, 9)))
LINEAR = interpolate.interp1d(np.linspace(0, 1, 9), np.cos(np.linspace(0, 1, 9)))

# family -> [(call as written, function of the arguments, arguments)]
CALLS: dict[str, list[tuple[str, Callable[..., Any], tuple]]] = {
    "NumPy functions in Python (traced through NumPy's code)": [
        ("np.cov(x)", lambda x: np.cov(x), (X,)),
        ("np.corrcoef(x)", lambda x: np.corrcoef(x), (X,)),
        ("np.polyval(p, v)", lambda v: np.polyval(K, v), (V,)),
        ("np.nan_to_num(x)", lambda x: np.nan_to_num(x), (X,)),
        ("np.trapezoid(x, axis=1)", lambda x: np.trapezoid(x, axis=1), (X,)),
        ("np.sinc(x)", lambda x: np.sinc(x), (X,)),
        ("np.gradient(x)", lambda x: np.gradient(x), (X,)),
        ("np.tensordot(x, x, 2)", lambda x: np.tensordot(x, x, 2), (X,)),
        ("np.linalg.multi_dot([x, x.T, x])", lambda x: np.linalg.multi_dot([x, x.T, x]), (X,)),
        ("np.rot90(x)", lambda x: np.rot90(x), (X,)),
        ("np.nanprod(x, axis=0)", lambda x: np.nanprod(x, axis=0), (X,)),
        ("np.select([x > 0, x < -1], [x, -x], 0)",
         lambda x: np.select([x > 0, x < -1], [x, -x], 0), (X,)),
        ("np.digitize(v, bins)", lambda v: np.digitize(v, B), (V,)),
        ("np.unwrap(v)", lambda v: np.unwrap(v), (V,)),
        ("np.fix(x)", lambda x: np.fix(x), (X,)),
    ],
    "NumPy functions in C (written from traced operations)": [
        ("np.convolve(v, k, 'same')", lambda v: np.convolve(v, K, "same"), (V,)),
        ("np.correlate(v, k)", lambda v: np.correlate(v, K), (V,)),
        ("np.inner(x, x)", lambda x: np.inner(x, x), (X,)),
        ("np.kron(x, k)", lambda x: np.kron(x, K), (X,)),
        ("np.vander(v, 4)", lambda v: np.vander(v, 4), (V,)),
        ("np.count_nonzero(x > 0)", lambda x: np.count_nonzero(x > 0), (X,)),
        ("np.nanstd(x, axis=1)", lambda x: np.nanstd(x, axis=1), (X,)),
        ("np.nanvar(x)", lambda x: np.nanvar(x), (X,)),
        ("np.nanargmax(x, axis=1)", lambda x: np.nanargmax(x, axis=1), (X,)),
        ("np.choose(i, [v, -v])", lambda v: np.choose((v > 0).astype(int), [v, -v]), (V,)),
        ("np.diag(x)", lambda x: np.diag(x), (X,)),
        ("np.heaviside(x, 0.5)", lambda x: np.heaviside(x, 0.5), (X,)),
    ],
    "scipy.special ufuncs": [
        (f"scipy.special.{n}(...)", (lambda f: (lambda p: f(p)))(getattr(sp, n)), (P,))
        for n in ("erf", "erfc", "expit", "entr", "log_expit", "logit", "ndtr", "log_ndtr",
                  "ndtri", "gamma", "rgamma", "gammaln", "digamma", "erfinv", "erfcinv", "erfcx",
                  "i0", "j0", "y1")
    ] + [
        (f"scipy.special.{n}(p, p[::-1])", (lambda f: (lambda p: f(p, p[::-1])))(getattr(sp, n)),
         (P,)) for n in ("xlogy", "xlog1py", "rel_entr", "kl_div", "boxcox", "boxcox1p",
                         "inv_boxcox", "inv_boxcox1p")
    ],
    "SciPy functions taking arrays": [
        ("scipy.special.softmax(x, axis=1)", lambda x: sp.softmax(x, axis=1), (X,)),
        ("scipy.special.log_softmax(x, axis=1)", lambda x: sp.log_softmax(x, axis=1), (X,)),
        ("scipy.special.logsumexp(x, axis=1)", lambda x: sp.logsumexp(x, axis=1), (X,)),
        ("scipy.stats.zscore(x, axis=1)", lambda x: st.zscore(x, axis=1), (X,)),
        ("scipy.special.comb(x * 9, 3)", lambda x: sp.comb(x * 9, 3), (X,)),
        ("scipy.spatial.distance.cdist(x, x[:3], 'cosine')",
         lambda x: distance.cdist(x, x[:3], "cosine"), (X,)),
        ("scipy.spatial.distance.pdist(x)", lambda x: distance.pdist(x), (X,)),
        ("scipy.ndimage.gaussian_filter(x, 1.5)", lambda x: ndimage.gaussian_filter(x, 1.5),
         (X,)),
        ("scipy.ndimage.uniform_filter(x, 3)", lambda x: ndimage.uniform_filter(x, 3), (X,)),
        ("scipy.ndimage.sobel(x, axis=0)", lambda x: ndimage.sobel(x, axis=0), (X,)),
        ("scipy.linalg.solve(x.T @ x, v[:8], assume_a='pos')",
         lambda x, v: linalg.solve(x.T @ x + np.eye(8), v[:8], assume_a="pos"), (X, V)),
        ("scipy.signal.convolve(x, x[:2, :3])", lambda x: signal.convolve(x, x[:2, :3]), (X,)),
        ("scipy.signal.savgol_filter(v, 5, 2)", lambda v: signal.savgol_filter(v, 5, 2), (V,)),
        ("scipy.linalg.cholesky(x.T @ x)", lambda x: linalg.cholesky(x.T @ x + np.eye(8)), (X,)),
        ("scipy.linalg.expm(x.T @ x / 9)", lambda x: linalg.expm(x.T @ x / 9), (X,)),
        ("scipy.linalg.lu(x)[2]", lambda x: linalg.lu(x)[2], (X,)),
        ("scipy.linalg.lu_solve(lu_factor(a), v)",
         lambda x: linalg.lu_solve(linalg.lu_factor(x[:, :6]), x[0, :6]), (X,)),
        ("scipy.signal.lfilter(b, a, x)", lambda x: signal.lfilter(K, [1.0, -0.5], x), (X,)),
        ("scipy.signal.filtfilt(b, a, v)", lambda v: signal.filtfilt(K, [1.0, -0.5], v,
                                                                     padlen=5), (V,)),
        ("scipy.signal.sosfilt(sos, x)", lambda x: signal.sosfilt(
            np.array([[0.2, 0.4, 0.2, 1.0, -0.3, 0.1]]), x), (X,)),
        ("scipy.ndimage.median_filter(x, 3)", lambda x: ndimage.median_filter(x, 3), (X,)),
        ("scipy.ndimage.maximum_filter(x, 3)", lambda x: ndimage.maximum_filter(x, 3), (X,)),
        ("scipy.stats.linregress(v, v[::-1] ** 2)",
         lambda v: st.linregress(v, v[::-1] ** 2).slope, (V,)),
        ("scipy.stats.spearmanr(v, v ** 3)", lambda v: st.spearmanr(v, v ** 3).statistic,
         (V,)),
        ("scipy.stats.iqr(x, axis=1)", lambda x: st.iqr(x, axis=1), (X,)),
        ("scipy.signal.welch(v, nperseg=8)", lambda v: signal.welch(v, nperseg=8)[1], (V,)),
        ("scipy.fft.dct(x, norm='ortho')", lambda x: scipy.fft.dct(x, norm="ortho"), (X,)),
        ("scipy.signal.resample_poly(v, 3, 2)", lambda v: signal.resample_poly(v, 3, 2), (V,)),
        ("CubicSpline(xs, ys)(v) (built outside)", lambda v: SPLINE(v), (V,)),
        ("interp1d(xs, ys)(p) (built outside)", lambda p: LINEAR(p), (P,)),
        ("scipy.stats.gaussian_kde(v)(p)", lambda v, p: st.gaussian_kde(v)(p), (V, P)),
        ("scipy.ndimage.binary_opening(x > 0)", lambda x: ndimage.binary_opening(x > 0), (X,)),
        ("scipy.ndimage.white_tophat(x, size=3)",
         lambda x: ndimage.white_tophat(x, size=3), (X,)),
        ("scipy.ndimage.rotate(x, 30)", lambda x: ndimage.rotate(x, 30.0), (X,)),
        ("scipy.ndimage.zoom(x, 1.5)", lambda x: ndimage.zoom(x, 1.5), (X,)),
        ("scipy.ndimage.map_coordinates(x, [y, x])",
         lambda x: ndimage.map_coordinates(x, [x[:, 0] * 2 + 3, x[:, 1] + 4]), (X,)),
        ("scipy.signal.sawtooth(x * 4, 0.3)", lambda x: signal.sawtooth(x * 4, 0.3), (X,)),
        ("scipy.signal.square(x * 4)", lambda x: signal.square(x * 4), (X,)),
        ("scipy.signal.chirp(p, 1.0, 1.0, 5.0)", lambda p: signal.chirp(p, 1.0, 1.0, 5.0), (P,)),
        ("scipy.ndimage.mean(x, labels, [1, 2])",
         lambda x: ndimage.mean(x, (x > 0).astype(int) + (x > 1), [1, 2]), (X,)),
        ("scipy.ndimage.center_of_mass(x ** 2)", lambda x: ndimage.center_of_mass(x ** 2),
         (X,)),
    ],
    "scipy.stats distributions (frontend/scipy_stats.py)": [
        ("scipy.stats.norm.cdf(x, 0.5, 2.0)", lambda x: st.norm.cdf(x, 0.5, 2.0), (X,)),
        ("scipy.stats.norm(v[0], 2.0).logpdf(x)", lambda x, v: st.norm(v[0], 2.0).logpdf(x),
         (X, V)),
        ("scipy.stats.t.sf(x, 4)", lambda x: st.t.sf(x, 4), (X,)),
        ("scipy.stats.gamma.logpdf(p, 2.5, scale=3.0)",
         lambda p: st.gamma.logpdf(p, 2.5, scale=3.0), (P,)),
        ("scipy.stats.geom.ppf(p, 0.3)", lambda p: st.geom.ppf(p, 0.3), (P,)),
        ("scipy.stats.poisson.ppf(p, 4.0)", lambda p: st.poisson.ppf(p, 4.0), (P,)),
        ("scipy.stats.nbinom.cdf(np.floor(p * 9), 3, 0.4)",
         lambda p: st.nbinom.cdf(np.floor(p * 9), 3, 0.4), (P,)),
        ("scipy.stats.beta.cdf(p, 2.0, 3.0)", lambda p: st.beta.cdf(p, 2.0, 3.0), (P,)),
        ("scipy.stats.hypergeom.sf(np.floor(p * 9), 40, 12, 15)",
         lambda p: st.hypergeom.sf(np.floor(p * 9), 40, 12, 15), (P,)),
        ("scipy.stats.truncnorm.ppf(p, -1.0, 2.5)",
         lambda p: st.truncnorm.ppf(p, -1.0, 2.5), (P,)),
        ("scipy.stats.ncx2.pdf(p * 9, 3.5, 2.0)", lambda p: st.ncx2.pdf(p * 9, 3.5, 2.0), (P,)),
        ("scipy.stats.poisson.pmf(np.floor(p * 6), 2.0)",
         lambda p: st.poisson.pmf(np.floor(p * 6), 2.0), (P,)),
    ],
    "More NumPy calls (static indices and counts; traced values)": [
        ("np.insert(v, [1, 3], 0.5)", lambda v: np.insert(v, [1, 3], 0.5), (V,)),
        ("np.delete(x, 2, axis=1)", lambda x: np.delete(x, 2, axis=1), (X,)),
        ("np.piecewise(v, [v < 0, v > 1], [f, g, 0])",
         lambda v: np.piecewise(v, [v < 0, v > 1], [np.negative, np.sqrt, 0.0]), (V,)),
        ("np.linspace(v[0], v[1], 7)", lambda v: np.linspace(v[0], v[1], 7), (V,)),
        ("np.logspace(v[0], v[1], 5)", lambda v: np.logspace(v[0], v[1], 5), (V,)),
        ("np.geomspace(p[0], p[1], 5)", lambda p: np.geomspace(p[0], p[1], 5), (P,)),
        ("np.vecdot(x, x)", lambda x: np.vecdot(x, x), (X,)),
        ("np.matvec(x, x[0])", lambda x: np.matvec(x, x[0]), (X,)),
        ("np.vecmat(x[:, 0], x)", lambda x: np.vecmat(x[:, 0], x), (X,)),
        ("np.ediff1d(x, to_begin=0)", lambda x: np.ediff1d(x, to_begin=0), (X,)),
        ("np.round(i, -1) (integers)", lambda x: np.round((x * 100).astype(np.int64), -1), (X,)),
        ("np.isin(v, [1, 2])", lambda v: np.isin(np.floor(v), [1.0, 2.0]), (V,)),
        ("np.clip(x, min=0)", lambda x: np.clip(x, min=0), (X,)),
        ("np.linalg.cross(a, b)", lambda x: np.linalg.cross(x[:, :3], x[:, 3:6]), (X,)),
        ("np.linalg.matrix_power(x[:, :6], 3)",
         lambda x: np.linalg.matrix_power(x[:, :6], 3), (X,)),
        ("np.diff(x, n=2)", lambda x: np.diff(x, n=2), (X,)),
        ("np.atleast_3d(x)", lambda x: np.atleast_3d(x), (X,)),
        ("np.around(x, 2)", lambda x: np.around(x, 2), (X,)),
        ("np.isclose(x, 0.1)", lambda x: np.isclose(x, 0.1), (X,)),
        ("np.nanargmin(x, axis=0)", lambda x: np.nanargmin(x, axis=0), (X,)),
        ("np.spacing(x)", lambda x: np.spacing(x), (X,)),
        ("max(x.max(), v.max()) (Python's max)", lambda x, v: max(x.max(), v.max()), (X, V)),
        ("np.logaddexp.reduce(x, axis=1)", lambda x: np.logaddexp.reduce(x, axis=1), (X,)),
        ("np.subtract.outer(v, p)", lambda v, p: np.subtract.outer(v, p), (V, P)),
        ("x[True]", lambda x: x[True], (X,)),
        ("np.bitwise_count(i)", lambda x: np.bitwise_count((x * 100).astype(np.int64)), (X,)),
        ("np.packbits(x > 0, axis=1)", lambda x: np.packbits(x > 0, axis=1), (X,)),
        ("np.unpackbits(u)", lambda x: np.unpackbits((x * 9).astype(np.uint8)), (X,)),
        ("np.sort_complex(v)", lambda v: np.sort_complex(v), (V,)),
        ("np.polyadd(p, v)", lambda v: np.polyadd(K, v), (V,)),
        ("np.apply_along_axis(f, 1, x)",
         lambda x: np.apply_along_axis(lambda r: np.sort(r)[-3:], 1, x), (X,)),
    ],
    "More scipy.special ufuncs": [
        (f"scipy.special.{n}(...)", (lambda f: (lambda p: f(p)))(getattr(sp, n)), (P,))
        for n in ("i0e", "i1", "i1e", "expm1", "log1p", "cbrt", "exp2", "exp1", "expi",
                  "exprel", "k0", "k1e", "sindg", "cotdg", "erfi", "dawsn", "ellipe")
    ] + [("scipy.special.kv(2.5, p)", lambda p: sp.kv(2.5, p), (P,)),
         ("scipy.special.zeta(p + 1, 2.5)", lambda p: sp.zeta(p + 1, 2.5), (P,)),
         ("scipy.special.polygamma(2, p)", lambda p: sp.polygamma(2, p), (P,)),
         ("scipy.special.factorial(v * 3)", lambda v: sp.factorial(v * 3), (V,)),
         ("scipy.special.kve(p * 9, p[::-1])", lambda p: sp.kve(p * 9, p[::-1]), (P,)),
         ("scipy.special.powm1(p, v)", lambda p, v: sp.powm1(p, v), (P, V)),
         ("scipy.special.agm(p, p[::-1])", lambda p: sp.agm(p, p[::-1]), (P,)),
         ("scipy.special.cosm1(v)", lambda v: sp.cosm1(v), (V,)),
         ("scipy.special.zetac(v * 3)", lambda v: sp.zetac(v * 3), (V,)),
         ("scipy.special.ellipkinc(v, p)", lambda v, p: sp.ellipkinc(v, p), (V, P)),
         ("scipy.special.ellipeinc(v, p)", lambda v, p: sp.ellipeinc(v, p), (V, P)),
         ("scipy.special.spence(p * 3)", lambda p: sp.spence(p * 3), (P,)),
         ("scipy.special.ellipj(v, p)", lambda v, p: sp.ellipj(v, p), (V, P)),
         ("scipy.special.airy(v * 3)", lambda v: sp.airy(v * 3), (V,)),
         ("scipy.special.bdtri(3, 10, p)", lambda p: sp.bdtri(3, 10, p), (P,)),
         ("scipy.special.ndtri_exp(-v ** 2)", lambda v: sp.ndtri_exp(-v ** 2), (V,)),
         ("scipy.special.owens_t(v, p * 3)", lambda v, p: sp.owens_t(v, p * 3), (V, P)),
         ("scipy.special.lambertw(v, -1)", lambda v: sp.lambertw(v, -1), (V,)),
         ("scipy.special.wrightomega(v * 9)", lambda v: sp.wrightomega(v * 9), (V,)),
         ("scipy.special.chndtr(p * 9, 3.0, 2.5)", lambda p: sp.chndtr(p * 9, 3.0, 2.5), (P,)),
         ("scipy.special.elliprj(p, 2 * p, 3.0, v)",
          lambda v, p: sp.elliprj(p, 2 * p, 3.0, v), (V, P)),
         ("scipy.special.kolmogorov(p * 2)", lambda p: sp.kolmogorov(p * 2), (P,)),
         ("scipy.special.kolmogi(p)", lambda p: sp.kolmogi(p), (P,))] + [
        (f"scipy.special.{n}(p + 1, p[::-1] * 3)",
         (lambda f: (lambda p: f(p + 1, p[::-1] * 3)))(getattr(sp, n)), (P,))
        for n in ("beta", "betaln", "binom", "poch", "gammainc", "gammaincc", "chdtr",
                  "chdtrc", "pdtr", "pdtrc", "stdtr")
    ] + [("scipy.special.betainc(p + 1, 2.5, p[::-1])",
          lambda p: sp.betainc(p + 1, 2.5, p[::-1]), (P,)),
         ("scipy.special.betaincc(p + 1, 2.5, p[::-1])",
          lambda p: sp.betaincc(p + 1, 2.5, p[::-1]), (P,)),
         ("scipy.special.gammasgn(x)", lambda x: sp.gammasgn(x), (X,)),
         ("scipy.special.loggamma(p)", lambda p: sp.loggamma(p), (P,)),
         ("scipy.special.gammaincinv(p + 1, p[::-1])",
          lambda p: sp.gammaincinv(p + 1, p[::-1]), (P,)),
         ("scipy.special.betaincinv(p + 1, 2.5, p[::-1])",
          lambda p: sp.betaincinv(p + 1, 2.5, p[::-1]), (P,)),
         ("scipy.special.jv(2.5, p * 9)", lambda p: sp.jv(2.5, p * 9), (P,)),
         ("scipy.special.yv(v, p)", lambda p: sp.yv(np.arange(p.size) - 3.5, p), (P,)),
         ("scipy.special.iv(0.5, x)", lambda x: sp.iv(0.5, x), (X,)),
         ("scipy.special.jn(3, x)", lambda x: sp.jn(3, x), (X,)),
         ("scipy.special.spherical_jn(2, x)", lambda x: sp.spherical_jn(2, x), (X,)),
         ("scipy.special.spherical_kn(1, p, derivative=True)",
          lambda p: sp.spherical_kn(1, p, derivative=True), (P,)),
         ("scipy.special.sici(x)", lambda x: sp.sici(x), (X,)),
         ("scipy.special.fresnel(x)", lambda x: sp.fresnel(x), (X,)),
         ("scipy.special.expn(2, p)", lambda p: sp.expn(2, p), (P,)),
         ("scipy.special.eval_legendre(3, x)", lambda x: sp.eval_legendre(3, x), (X,)),
         ("scipy.special.eval_chebyt(np.arange(5)[:, None, None], x)",
          lambda x: sp.eval_chebyt(np.arange(5)[:, None, None], x), (X,)),
         ("scipy.special.eval_hermite(4, x)", lambda x: sp.eval_hermite(4, x), (X,)),
         ("scipy.special.eval_genlaguerre(3, 1.5, p)",
          lambda p: sp.eval_genlaguerre(3, 1.5, p), (P,)),
         ("scipy.special.eval_gegenbauer(4, 0.75, x)",
          lambda x: sp.eval_gegenbauer(4, 0.75, x), (X,)),
         ("scipy.stats.t.ppf(p, 4.5)", lambda p: st.t.ppf(p, 4.5), (P,)),
         ("scipy.stats.chi2.isf(p, 3)", lambda p: st.chi2.isf(p, 3), (P,))],
    "Everyday calls added from benchmarks/survey_calls.py (frontend/everyday.py, np.pad)": [
        ("np.vectorize(f)(x)", lambda x: np.vectorize(lambda t: t * 2 + 1)(x), (X,)),
        ("np.hsplit(x, 2)", lambda x: np.hsplit(x, 2), (X,)),
        ("np.block([[x, x], [x, x]])", lambda x: np.block([[x, x], [x, x]]), (X,)),
        ("np.pad(x, 2, 'mean')", lambda x: np.pad(x, 2, "mean"), (X,)),
        ("np.float_power(x, 2)", lambda x: np.float_power(x, 2), (X,)),
        ("np.modf(x)", lambda x: np.modf(x), (X,)),
        ("np.unravel_index(np.argmax(x), x.shape)",
         lambda x: np.unravel_index(np.argmax(x), x.shape), (X,)),
        ("np.ravel_multi_index((i, j), x.shape, mode='clip')",
         lambda x: np.ravel_multi_index((np.argmax(x, 1), np.argmin(x, 1)), x.shape,
                                        mode="clip"), (X,)),
        ("sliding_window_view(v, 4).mean(-1)",
         lambda v: np.lib.stride_tricks.sliding_window_view(v, 4).mean(-1), (V,)),
        ("np.average(v, weights=p)", lambda v, p: np.average(v, weights=p), (V, P)),
    ],
    "FFT (frontend/fft.py)": [
        ("np.fft.fft(z)", lambda z: np.fft.fft(z), (Z,)),
        ("np.fft.irfft(np.fft.rfft(v) * k, 16)",
         lambda v: np.fft.irfft(np.fft.rfft(v) * np.arange(9.0), 16), (V,)),
        ("np.fft.fft2(z, norm='ortho')", lambda z: np.fft.fft2(z, norm="ortho"), (Z,)),
        ("np.fft.ifftn(z, s=(6, 5), axes=(0, 1))",
         lambda z: np.fft.ifftn(z, s=(6, 5), axes=(0, 1)), (Z,)),
        ("np.fft.hfft(v[:9])", lambda v: np.fft.hfft(v[:9]), (V,)),
    ],
    "Lists and tuples as arrays (frontend/tracer.py array_operand, numpy_patch.py)": [
        ("x + [1, 2, ..., 8]", lambda x: x + [1, 2, 3, 4, 5, 6, 7, 8], (X,)),
        ("np.where(x > 0, [[1.0], [2.0], ...], 0)",
         lambda x: np.where(x > 0, [[1.0], [2.0], [3.0], [4.0], [5.0], [6.0]], 0), (X,)),
        ("np.sum([x.sum(), (x ** 2).sum()])",
         lambda x: np.sum([x.sum(), (x ** 2).sum()]), (X,)),
        ("np.max((x[0], x[1]), axis=0)", lambda x: np.max((x[0], x[1]), axis=0), (X,)),
        ("np.linalg.norm([v[0], v[1]])", lambda v: np.linalg.norm([v[0], v[1]]), (V,)),
    ],
    "Raise: a data-dependent shape or a Python bool": [
        ("np.allclose(x, 0)", lambda x: np.allclose(x, 0), (X,)),
        ("np.apply_along_axis(f, 1, x) (120 rows: a trace per row)",
         lambda x: np.apply_along_axis(np.sum, 1, np.tile(x, (20, 1))), (X,)),
        ("np.unique(v)", lambda v: np.unique(v), (V,)),
        ("np.nonzero(v)", lambda v: np.nonzero(v), (V,)),
    ],
    "Sorting and order statistics (on the sort kernel)": [
        ("np.sort(v)", lambda v: np.sort(v), (V,)),
        ("np.argsort(x, axis=1)", lambda x: np.argsort(x, axis=1, kind="stable"), (X,)),
        ("np.lexsort((v, np.round(v)))", lambda v: np.lexsort((v, np.round(v))), (V,)),
        ("np.partition(v, 3)", lambda v: np.partition(v, 3)[3], (V,)),
        ("np.searchsorted(np.sort(v), x)", lambda v, x: np.searchsorted(np.sort(v), x), (V, X)),
        ("np.median(x, axis=1)", lambda x: np.median(x, axis=1), (X,)),
        ("np.percentile(x, 90, axis=1)", lambda x: np.percentile(x, 90, axis=1), (X,)),
        ("np.quantile(x, 0.5)", lambda x: np.quantile(x, 0.5), (X,)),
        ("np.nanmedian(x, axis=0)", lambda x: np.nanmedian(x, axis=0), (X,)),
        ("np.histogram(v)", lambda v: np.histogram(v)[0], (V,)),
        ("np.histogram(v, 8, range=(-2, 2))", lambda v: np.histogram(v, 8, range=(-2, 2))[0], (V,)),
        ("np.histogram2d(v, p, bins=4)", lambda v, p: np.histogram2d(v, p, bins=4)[0], (V, P)),
        ("np.digitize(v, [-1, 0, 1])", lambda v: np.digitize(v, [-1.0, 0.0, 1.0]), (V,)),
    ],
}


# The sample of 20 everyday calls: the first 20 it names, in its order (np.heaviside
# and scipy.special.logsumexp, the two that compiled then, first).
EVERYDAY_20 = [
    "np.heaviside(x, 0.5)", "scipy.special.logsumexp(x, axis=1)", "np.median(x, axis=1)",
    "np.percentile(x, 90, axis=1)", "np.quantile(x, 0.5)", "np.histogram(v)", "np.cov(x)",
    "np.corrcoef(x)", "np.polyval(p, v)", "np.nan_to_num(x)", "np.trapezoid(x, axis=1)",
    "np.convolve(v, k, 'same')", "np.correlate(v, k)", "np.kron(x, k)", "np.sinc(x)",
    "np.gradient(x)", "np.unwrap(v)", "np.digitize(v, bins)", "np.select([x > 0, x < -1], "
    "[x, -x], 0)", "np.vander(v, 4)"]


def status(f: Callable[..., Any], args: tuple) -> str:
    """'compiles' (and matches NumPy) or 'raises' (a clear UnsupportedError)."""
    want = f(*args)
    try:
        got = fusejit.jit(f)(*args)
    except UnsupportedError as e:
        assert "test_coverage.py" in str(e), f"the error does not name the line: {e}"
        return "raises"
    assert_same(got, want, rtol=1e-10 if np.asarray(want).dtype == np.float64 else None)
    return "compiles"


def table() -> tuple[str, list[str]]:
    """The README table, and the calls outside the 'Raise' family that did not compile."""
    lines = ["| family | compiles and matches | raises a clear error |", "|---|---|---|"]
    total = ok = 0
    unexpected = []
    compiled = set()
    for family, calls in CALLS.items():
        done = [c for c, f, a in calls if status(f, a) == "compiles"]
        compiled.update(done)
        refused = [c for c, f, a in calls if c not in done]
        if not family.startswith("Raise"):
            unexpected += refused
        total += len(calls)
        ok += len(done)
        lines.append(f"| {family} | {', '.join(f'`{c}`' for c in done) or '-'} | "
                     f"{', '.join(f'`{c}`' for c in refused) or '-'} |")
    lines.append("")
    lines.append(f"{ok} of {total} calls compile and match NumPy/SciPy; the other {total - ok} "
                 "raise an UnsupportedError naming the line and what is missing.")
    known = {c for calls in CALLS.values() for c, _, _ in calls}
    assert len(EVERYDAY_20) == 20 and set(EVERYDAY_20) <= known
    every = [c for c in EVERYDAY_20 if c in compiled]
    lines.append("")
    lines.append(f"The issue's sample of 20 everyday calls (the first 20 it names): "
                 f"{len(every)} of 20 compile and match; "
                 f"{', '.join(f'`{c}`' for c in EVERYDAY_20 if c not in compiled) or 'none'} "
                 "raise.")
    return "\n".join(lines), unexpected


BEGIN, END = "<!-- coverage table: tests/test_coverage.py -->", "<!-- end coverage table -->"
README = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "README.md")


def readme_section() -> str:
    with open(README, encoding="utf-8") as f:
        text = f.read()
    return text[text.index(BEGIN) + len(BEGIN):text.index(END)].strip()


def test_readme_table_is_current() -> None:
    import warnings

    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        text, unexpected = table()
    assert not unexpected, f"these should compile: {unexpected}"
    assert text == readme_section(), "README coverage table is stale: run " \
        "python tests/test_coverage.py"


if __name__ == "__main__":
    with open(README, encoding="utf-8") as fh:
        text = fh.read()
    start, end = text.index(BEGIN) + len(BEGIN), text.index(END)
    new_table = table()[0]  # (built before the file is opened: a failing call leaves it whole)
    with open(README, "w", encoding="utf-8") as fh:
        fh.write(text[:start] + "\n" + new_table + "\n" + text[end:])
