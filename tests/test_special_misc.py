"""scipy.special.spence and the Kolmogorov distribution (kolmogorov, kolmogi, SciPy's private
_kolmogc, _kolmogci, _kolmogp, and so scipy.stats.kstwobign) from
codegen/include/fj_special_misc.h, against SciPy: special values, the branches' joins,
random and wide arguments, float32 loops, gradients; where SciPy's _kolmogp loses digits
(up to 3e-8 near x = 0.87) fusejit's density is mpmath's."""

from __future__ import annotations

import numpy as np
import pytest
from conftest import assert_same
from gradcheck import check_grad

import fusejit

sp = pytest.importorskip("scipy.special")
st = pytest.importorskip("scipy.stats")
pytestmark = pytest.mark.filterwarnings("ignore::RuntimeWarning")

R = np.random.default_rng(29)


def _private(name: str):
    from scipy.special import _ufuncs

    return getattr(_ufuncs, name)


def test_spence() -> None:
    x = np.concatenate([[-1.0, -0.0, 0.0, 1e-300, 0.5, 0.5 - 1e-16, 1.0, 1 - 1e-16, 1 + 1e-15,
                         2.0, 2 - 1e-15, 1e300, np.inf, np.nan],
                        R.uniform(0, 3, 1000), np.exp(R.uniform(-40, 40, 1000))])
    assert_same(fusejit.jit(lambda x: sp.spence(x))(x), sp.spence(x), rtol=1e-14)
    x32 = x.astype(np.float32)
    assert_same(fusejit.jit(lambda x: sp.spence(x))(x32), sp.spence(x32), rtol=1e-6)
    with pytest.raises(fusejit.UnsupportedError):
        fusejit.jit(lambda z: sp.spence(z))(x[:4] + 1j)


KS = np.concatenate([[-1.0, -0.0, 0.0, 1e-300, 0.04, 0.2, 0.5, 0.82, 0.8199999, 1.0, 2.0, 5.0,
                      7.0, 10.0, 19.0, 27.0, 30.0, np.inf, np.nan], R.uniform(0, 3, 2000)])
# (probabilities: none subnormal, where the root of a flushed tail is not defined to 1e-13)
PS = np.concatenate([[-0.1, 0.0, 1e-300, 1e-20, 0.5, 0.9, 1 - 1e-16, 1.0, 1.1, np.nan],
                     R.random(2000), np.exp(-R.uniform(0, 700, 500))])


def test_kolmogorov_functions() -> None:
    def f(x):
        return sp.kolmogorov(x), _private("_kolmogc")(x)

    assert_same(fusejit.jit(f)(KS), f(KS), rtol=5e-14)

    def inverses(p):
        return sp.kolmogi(p), _private("_kolmogci")(p)

    assert_same(fusejit.jit(inverses)(PS), inverses(PS), rtol=1e-13)


def test_kolmogorov_density() -> None:
    """Against SciPy within its own error; against the derivative of the series to 1e-14
    (mpmath.diff of 2 sum (-1)^(k-1) exp(-2 k^2 x^2), 40 digits, rounded)."""
    kp = _private("_kolmogp")
    got = fusejit.jit(lambda x: kp(x))(KS)
    assert_same(got, kp(KS), rtol=5e-8)
    x = np.array([0.3, 0.8697023458772336, 1.0, 2.5])
    want = np.array([-0.0008193934196931296, -1.467289918837442, -1.0719485583569417,
                     -7.45330634415734e-05])
    np.testing.assert_allclose(fusejit.jit(lambda x: kp(x))(x), want, rtol=1e-14)


def test_kstwobign_distribution() -> None:
    def f(x, p):
        return (st.kstwobign.cdf(x), st.kstwobign.sf(x), st.kstwobign.ppf(p),
                st.kstwobign.isf(p))

    assert_same(fusejit.jit(f)(KS, PS[:KS.size]), f(KS, PS[:KS.size]), rtol=1e-13)


def test_gradients() -> None:
    x = np.array([0.3, 0.9, 1.0, 1.7, 3.0])

    def loss(x):
        return np.sum(sp.spence(x) + sp.kolmogorov(x) + sp.kolmogi(x / 4))

    check_grad(loss, [x], 0, fusejit.grad(loss)(x), rtol=1e-6)
