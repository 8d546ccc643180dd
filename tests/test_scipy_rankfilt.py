"""scipy.ndimage's minimum, maximum, median, rank and percentile filters and
scipy.signal.medfilt of traced arrays (frontend/scipy_rankfilt.py): SciPy's values exactly
for data without NaN, a clear error when the program meets a NaN."""

from __future__ import annotations

import warnings

import numpy as np
import pytest
from conftest import examples
from hypothesis import given, settings
from hypothesis import strategies as st

import fusejit
from fusejit import UnsupportedError
from fusejit.errors import RuntimeFailure

nd = pytest.importorskip("scipy.ndimage")
sg = pytest.importorskip("scipy.signal")

RNG = np.random.default_rng(0)
IMG = RNG.standard_normal((20, 30))
INTS = RNG.integers(-50, 50, (20, 30)).astype(np.int16)
VEC = RNG.standard_normal(40)
CROSS = np.array([[0, 1, 0], [1, 1, 1], [0, 1, 0]], bool)
MODES = ["reflect", "mirror", "nearest", "wrap", "constant", "grid-wrap", "grid-mirror",
         "grid-constant"]

CASES = {
    "maximum 3": (lambda a: nd.maximum_filter(a, 3), IMG),
    "minimum (3, 5) wrap": (lambda a: nd.minimum_filter(a, (3, 5), mode="wrap"), IMG),
    "maximum float32, cval": (lambda a: nd.maximum_filter(a, 4, mode="constant", cval=0.3),
                              IMG.astype(np.float32)),
    "maximum footprint": (lambda a: nd.maximum_filter(a, footprint=CROSS, mode="mirror"), IMG),
    "minimum ints, origin": (lambda a: nd.minimum_filter(a, 3, origin=1), INTS),
    "maximum_filter1d": (lambda a: nd.maximum_filter1d(a, 5, axis=0, mode="nearest"), IMG),
    "minimum_filter1d": (lambda a: nd.minimum_filter1d(a, 4, origin=-1), VEC),
    "median 3": (lambda a: nd.median_filter(a, 3), IMG),
    "median 5 float32": (lambda a: nd.median_filter(a, 5, mode="nearest"),
                         IMG.astype(np.float32)),
    "median footprint": (lambda a: nd.median_filter(a, footprint=CROSS), IMG),
    "median 1-d": (lambda a: nd.median_filter(a, 5), VEC),
    "median 1-d, cval": (lambda a: nd.median_filter(a, 4, mode="constant", cval=0.5), VEC),
    "median ints": (lambda a: nd.median_filter(a, (3, 3), mode="wrap"), INTS),
    "median one axis": (lambda a: nd.median_filter(a, 3, axes=(1,)), IMG),
    "median 9 (sorted)": (lambda a: nd.median_filter(a, 9), IMG),
    "rank -2": (lambda a: nd.rank_filter(a, -2, 3), IMG),
    "rank 0 is the minimum": (lambda a: nd.rank_filter(a, 0, footprint=CROSS), IMG),
    "percentile 25": (lambda a: nd.percentile_filter(a, 25, size=(3, 4)), IMG),
    "output dtype": (lambda a: nd.median_filter(a, 3, output=np.float32), INTS),
    "medfilt": (lambda a: sg.medfilt(a, 5), VEC),
    "medfilt 2-d": (lambda a: sg.medfilt(a, [3, 5]), IMG),
    "medfilt ints": (lambda a: sg.medfilt(a), INTS),
}


def _same(got: np.ndarray, want: np.ndarray) -> None:
    assert got.dtype == want.dtype and got.shape == want.shape
    assert np.array_equal(got, want)


@pytest.mark.parametrize("name", list(CASES))
def test_scipys_values(name: str) -> None:
    f, x = CASES[name]
    _same(fusejit.jit(f)(x), f(x))


@settings(max_examples=examples(25), deadline=None)
@given(st.sampled_from(["median_filter", "maximum_filter", "minimum_filter", "rank_filter",
                        "percentile_filter"]),
       st.sampled_from(MODES), st.integers(1, 5), st.integers(1, 4), st.integers(-1, 1),
       st.sampled_from(["float64", "float32", "int32", "uint8"]), st.integers(1, 2),
       st.integers(0, 99))
def test_random_filters(name: str, mode: str, k0: int, k1: int, origin: int, dtype: str,
                        ndim: int, seed: int) -> None:
    rng = np.random.default_rng(seed)
    shape = (rng.integers(1, 9), rng.integers(1, 12))[:ndim]
    x = (rng.standard_normal(shape) * 20).astype(dtype)
    size = (k0, k1)[:ndim]
    if any(k // 2 + origin < 0 or k // 2 + origin >= k for k in size):
        origin = 0
    extra = {"rank_filter": (-1,), "percentile_filter": (60.0,)}.get(name, ())
    fn = getattr(nd, name)

    def f(a):
        return fn(a, *extra, size=size, mode=mode, cval=1.5, origin=origin)

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        _same(fusejit.jit(f)(x), f(x))


def test_nan_and_refusals() -> None:
    f = fusejit.jit(lambda a: nd.median_filter(a, 3))
    with pytest.raises(RuntimeFailure, match="NaN"):
        f(np.where(IMG > 1, np.nan, IMG))
    _same(f(IMG), nd.median_filter(IMG, 3))  # (and the next call is fine)
    with pytest.raises(TypeError, match="Complex"):
        fusejit.jit(lambda a: nd.maximum_filter(a, 3))(IMG + 1j)
    with pytest.raises(UnsupportedError, match="output="):
        fusejit.jit(lambda a, o: nd.maximum_filter(a, 3, output=o))(IMG, IMG.copy())
    with pytest.raises(ValueError, match="odd"):
        fusejit.jit(lambda a: sg.medfilt(a, 4))(VEC)
    with pytest.raises(RuntimeError, match="rank"):
        fusejit.jit(lambda a: nd.rank_filter(a, 9, 3))(VEC)


def test_cuda_emulated(monkeypatch: pytest.MonkeyPatch) -> None:
    """The CUDA kernels of a median (a sorting network), a maximum and a large window (the
    sort kernel), run on the CPU by the emulator: SciPy's values."""
    import cuda_fake

    cuda_fake.install(monkeypatch, emulate=True)
    for f, x in ((lambda a: nd.median_filter(a, 3), IMG), (lambda a: nd.maximum_filter(a, 4), IMG),
                 (lambda a: nd.median_filter(a, 9), IMG[:12, :12]),
                 (lambda a: sg.medfilt(a, 5), VEC)):
        _same(fusejit.jit(f, backend="cuda")(x), f(x))
