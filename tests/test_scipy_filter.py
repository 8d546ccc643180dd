"""scipy.signal.lfilter and sosfilt of traced signals (frontend/scipy_filter.py; scan kernels
codegen/cfilter.py), and SciPy's filtfilt and sosfiltfilt through them: SciPy's bits."""

from __future__ import annotations

import numpy as np
import pytest
from conftest import examples
from hypothesis import given, settings
from hypothesis import strategies as st

import fusejit
from fusejit import UnsupportedError

sg = pytest.importorskip("scipy.signal")

RNG = np.random.default_rng(0)
B3, A3 = sg.butter(3, 0.2)
SOS = sg.butter(6, 0.2, output="sos")
F32 = np.float32


def _x(*shape, dtype=np.float64):
    return RNG.standard_normal(shape).astype(dtype)


CASES = {
    "iir": (lambda x: sg.lfilter(B3, A3, x), (_x(300),)),
    "iir float32": (lambda x: sg.lfilter(B3.astype(F32), A3.astype(F32), x), (_x(300, dtype=F32),)),
    "float32 signal, float64 filter": (lambda x: sg.lfilter(B3, A3, x), (_x(300, dtype=F32),)),
    "integers, a[0] != 1": (lambda x: sg.lfilter([1.0, 2.0], [2.0, -0.5], x), (np.arange(20),)),
    "b longer than a": (lambda x: sg.lfilter([0.1, 0.2, 0.3, 0.4], [1.5, -0.2], x), (_x(60),)),
    "axis 0": (lambda x: sg.lfilter(B3, A3, x, axis=0), (_x(50, 7),)),
    "3-d, axis 1": (lambda x: sg.lfilter(B3, A3, x, axis=1), (_x(3, 40, 5),)),
    "zi": (lambda x, zi: sg.lfilter(B3, A3, x, zi=zi), (_x(40), _x(3))),
    "zi, signal shorter than the state": (lambda x, zi: sg.lfilter(B3, A3, x, zi=zi),
                                          (_x(2), _x(3))),
    "zi broadcast": (lambda x, zi: sg.lfilter(B3, A3, x, axis=1, zi=zi), (_x(4, 30), _x(1, 3))),
    "inf in the signal": (lambda x: sg.lfilter(B3, A3, x),
                          (np.where(np.arange(50) == 10, np.inf, _x(50)),)),
    "filtfilt": (lambda x: sg.filtfilt(B3, A3, x), (_x(300),)),
    "filtfilt axis 0": (lambda x: sg.filtfilt(B3, A3, x, axis=0), (_x(100, 3),)),
    "sosfilt": (lambda x: sg.sosfilt(SOS, x), (_x(300),)),
    "sosfilt float32": (lambda x: sg.sosfilt(SOS.astype(F32), x), (_x(300, dtype=F32),)),
    "sosfilt zi axis 0": (lambda x, zi: sg.sosfilt(SOS, x, axis=0, zi=zi),
                          (_x(40, 3), _x(3, 2, 3))),
    "sosfilt zi, one point": (lambda x, zi: sg.sosfilt(SOS, x, zi=zi), (_x(1), _x(3, 2))),
    "sosfiltfilt": (lambda x: sg.sosfiltfilt(SOS, x), (_x(300),)),
    "int16 columns, axis 0": (lambda x: sg.lfilter([0.1257302], [1.8, 0.03, -0.28], x,
                                                   axis=0),
                              ((_x(3, 2, 2) * 10).astype(np.int16),)),
}
# to rounding: SciPy's np.convolve path (the same products, added perhaps in another order),
# and a filter of np.sin (fusejit's sin is within an ulp of NumPy's)
NEAR = {
    "fused producer": (lambda x: sg.lfilter(B3, A3, np.sin(x) * 2.0 + 1.0), (_x(64, 8),)),
    "fir": (lambda x: sg.lfilter([0.25, 0.5, 0.25], [1.0], x), (_x(60),)),
    "fir 2-d, zi": (lambda x, zi: sg.lfilter([0.25, 0.5, 0.25], [2.0], x, axis=0, zi=zi),
                    (_x(30, 3), _x(2, 3))),
}


def _parts(r):
    return r if isinstance(r, tuple) else (r,)


def _check(got, want, exact: bool = True) -> None:
    for g, w in zip(_parts(got), _parts(want), strict=True):
        assert g.dtype == w.dtype and g.shape == w.shape
        if exact:
            assert np.array_equal(g, w, equal_nan=True), np.nanmax(np.abs(g - w))
        else:
            np.testing.assert_allclose(g, w, rtol=1e-13, atol=1e-15)


@pytest.mark.parametrize("name", list(CASES))
def test_scipys_bits(name: str) -> None:
    f, args = CASES[name]
    _check(fusejit.jit(f)(*args), f(*args))


@pytest.mark.parametrize("name", list(NEAR))
def test_to_rounding(name: str) -> None:
    f, args = NEAR[name]
    _check(fusejit.jit(f)(*args), f(*args), exact=False)


@settings(max_examples=examples(25), deadline=None)
@given(st.integers(1, 4), st.integers(1, 4), st.integers(0, 2), st.sampled_from([0, 1, 2]),
       st.sampled_from(["float64", "float32", "int16"]), st.booleans(), st.integers(0, 99))
def test_random_filters(nb: int, na: int, n_outer: int, axis: int, dtype: str, with_zi: bool,
                        seed: int) -> None:
    """Random coefficient counts, shapes (signals shorter than the state included), axes,
    dtypes and initial states: SciPy's bits (its FIR path when a has one coefficient)."""
    rng = np.random.default_rng(seed)
    b = rng.standard_normal(nb)
    a = np.concatenate([[rng.uniform(0.5, 2.0)], 0.3 * rng.standard_normal(na - 1)])
    shape = [3, 2 + seed % 7, 2][: n_outer + 1]
    axis = min(axis, len(shape) - 1)
    x = (rng.standard_normal(shape) * 10).astype(dtype)
    zshape = list(shape)
    zshape[axis] = max(na, nb) - 1
    zi = rng.standard_normal(zshape)

    def f(x, zi):
        return sg.lfilter(b, a, x, axis=axis, zi=zi if with_zi else None)

    _check(fusejit.jit(f)(x, zi), f(x, zi), exact=na > 1)


def test_errors_and_refusals() -> None:
    x = _x(20)
    with pytest.raises(UnsupportedError, match="complex"):
        fusejit.jit(lambda x: sg.lfilter(B3 + 0j, A3, x))(x)
    with pytest.raises(UnsupportedError, match="undefined"):
        fusejit.jit(lambda x, zi: sg.lfilter(B3, A3, x, zi=zi))(x[:0], _x(3))
    with pytest.raises(ValueError):  # SciPy's: zi of the wrong shape
        fusejit.jit(lambda x, zi: sg.lfilter(B3, A3, x, zi=zi))(x, _x(5))
    with pytest.raises(ValueError, match="all ones"):  # SciPy's
        fusejit.jit(lambda x: sg.sosfilt(SOS * 2, x))(x)
    # traced coefficients: SciPy's checks when the program runs
    lf = fusejit.jit(lambda b, a, x: sg.lfilter(b, a, x))
    _check(lf(B3, A3, x), sg.lfilter(B3, A3, x))
    with pytest.raises(ValueError, match="a\\[0\\] == 0"):
        lf(B3, A3 * np.array([0.0, 1, 1, 1]), x)
    sf = fusejit.jit(lambda s, x: sg.sosfilt(s, x))
    _check(sf(SOS, x), sg.sosfilt(SOS, x))
    with pytest.raises(ValueError, match="all ones"):
        sf(SOS * 2, x)
    with pytest.raises(UnsupportedError, match="coefficients b and a"):
        fusejit.grad(lambda b, x: sg.lfilter(b, A3, x).sum())(B3, x)


def test_global_coefficients() -> None:
    """Coefficients in global arrays (read by a jitted function at every call): new values
    after the first call are used."""
    global GB, GA
    GB, GA = sg.butter(2, 0.1)
    f = fusejit.jit(lambda x: sg.filtfilt(GB, GA, x))
    x = _x(80)
    _check(f(x), sg.filtfilt(GB, GA, x))
    GB, GA = sg.butter(2, 0.3)
    _check(f(x), sg.filtfilt(GB, GA, x))


def _numeric_grad(f, x: np.ndarray, eps: float = 1e-6) -> np.ndarray:
    g = np.zeros_like(x)
    for i in range(x.size):
        e = np.zeros_like(x)
        e.flat[i] = eps
        g.flat[i] = (f(x + e) - f(x - e)) / (2 * eps)
    return g


@pytest.mark.parametrize("name", ["lfilter", "zi and zf", "short zi", "filtfilt",
                                  "sosfiltfilt"])
def test_gradients(name: str) -> None:
    x, w = _x(40), _x(40)
    sos = sg.butter(4, 0.3, output="sos")
    f = {"lfilter": lambda x: (sg.lfilter(B3, A3, x) * w).sum(),
         "zi and zf": lambda x: sum((r * w[:r.size]).sum()
                                    for r in sg.lfilter(B3, A3, x, zi=x[:3] * 2)),
         "short zi": lambda x: (sg.lfilter(B3, A3, x[:2], zi=x[2:5])[0] * w[:2]).sum(),
         "filtfilt": lambda x: (sg.filtfilt(B3, A3, x) * w).sum(),
         "sosfiltfilt": lambda x: (sg.sosfiltfilt(sos, x) * w).sum()}[name]
    np.testing.assert_allclose(fusejit.grad(f)(x), _numeric_grad(f, x), atol=1e-7)


def test_one_kernel_with_its_producers() -> None:
    f = fusejit.jit(lambda x: sg.lfilter(B3, A3, np.sin(x) * 2.0 + 1.0))
    x = _x(64)
    f(x)
    text = str(f.explain(x)).split("== kernels")[1].split("== memory")[0]
    (scan,) = [k for k in text.split("\nk")[1:] if "scan along rows of 64" in k]
    assert "%" in scan and " sin," in scan  # the producers computed in the filter's kernel


def test_cuda_emulated(monkeypatch: pytest.MonkeyPatch) -> None:
    """The CUDA scan kernels (run on the CPU by the emulator): SciPy's bits."""
    import cuda_fake

    cuda_fake.install(monkeypatch, emulate=True)
    for name in ("iir", "iir float32", "axis 0", "zi", "zi broadcast", "sosfilt",
                 "sosfilt zi axis 0", "filtfilt"):
        f, args = CASES[name]
        _check(fusejit.jit(f, backend="cuda")(*args), f(*args))
