"""scipy.ndimage's binary and grey morphology of traced arrays (frontend/scipy_morph.py), and
SciPy's own openings, closings, gradients and top-hats through them: SciPy's values exactly,
its errors, refusals by name."""

from __future__ import annotations

import warnings

import numpy as np
import pytest

import fusejit
from fusejit import UnsupportedError
from fusejit.errors import RuntimeFailure

nd = pytest.importorskip("scipy.ndimage")

RNG = np.random.default_rng(8)
MASK = RNG.random((9, 11)) > 0.45
GREY = RNG.integers(0, 200, (9, 11)).astype(np.uint8)
FLOAT = RNG.standard_normal((9, 11))
S = np.array([[0, 1, 1], [1, 1, 0], [0, 1, 0]], bool)
S2 = np.ones((2, 3), bool)
NONFLAT = np.array([[0, 1, 0], [2, 3, 1], [0, 1, 0]])

BINARY = [
    lambda a: nd.binary_erosion(a), lambda a: nd.binary_dilation(a),
    lambda a: nd.binary_erosion(a, S, border_value=1),
    lambda a: nd.binary_dilation(a, S, border_value=1, origin=(1, -1)),
    lambda a: nd.binary_erosion(a, S2, iterations=3),
    lambda a: nd.binary_dilation(a, S2, iterations=2, origin=(0, 1)),
    lambda a: nd.binary_opening(a), lambda a: nd.binary_closing(a, S, iterations=2),
    lambda a: nd.binary_dilation(a, iterations=2, mask=a[::-1]),
    lambda a: nd.binary_erosion(a, output=np.int32),
    lambda a: nd.binary_dilation(a, axes=(1,)),
    lambda a: nd.binary_erosion(a.astype(np.float64) * 2.5, np.ones((3, 3), bool)),
]
GREY_OPS = [
    lambda a: nd.grey_erosion(a, size=3), lambda a: nd.grey_dilation(a, size=(2, 3)),
    lambda a: nd.grey_dilation(a, footprint=S, mode="constant", cval=5),
    lambda a: nd.grey_erosion(a, structure=NONFLAT),
    lambda a: nd.grey_dilation(a, structure=np.arange(6.0).reshape(2, 3), origin=(0, 1)),
    lambda a: nd.grey_opening(a, size=(3, 3)), lambda a: nd.grey_closing(a, footprint=S),
    lambda a: nd.morphological_gradient(a, size=3),
    lambda a: nd.morphological_laplace(a, size=3),
    lambda a: nd.white_tophat(a, size=3),
    lambda a: nd.black_tophat(a, size=(3, 2), mode="nearest"),
]


def _same(got, want) -> None:
    assert got.dtype == want.dtype and got.shape == want.shape
    np.testing.assert_array_equal(got, want)


def test_binary_morphology_is_scipys() -> None:
    def f(a):
        return tuple(op(a) for op in BINARY)

    for got, want in zip(fusejit.jit(f)(MASK), f(MASK)):
        _same(got, want)


@pytest.mark.parametrize("image", [GREY, FLOAT, (FLOAT * 40).astype(np.int8),
                                   FLOAT.astype(np.float32)],
                         ids=["uint8", "float64", "int8", "float32"])
def test_grey_morphology_is_scipys(image) -> None:
    def f(a):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # (uint8's wrapping subtractions)
            return tuple(op(a) for op in GREY_OPS)

    for got, want in zip(fusejit.jit(f)(image), f(image)):
        _same(got, want)


def test_structures_made_inside_the_function_are_values() -> None:
    """np.ones(...) made while tracing is a traced array of known value: the structure a
    SciPy function receives is that value."""
    def f(a):
        return nd.binary_opening(a, np.ones((3, 3), bool)), nd.grey_erosion(
            a.astype(np.float64), footprint=np.ones((2, 2), bool))

    for got, want in zip(fusejit.jit(f)(MASK), f(MASK)):
        _same(got, want)


def test_errors_and_refusals() -> None:
    def until_stable(a):
        return nd.binary_erosion(a, iterations=0)

    def traced_structure(a, s):
        return nd.binary_dilation(a, s)

    def wrong_rank(a):
        return nd.binary_erosion(a, np.ones((3, 3, 3), bool))

    def no_size(a):
        return nd.grey_erosion(a)

    with pytest.raises(UnsupportedError, match="iterations < 1"):
        fusejit.jit(until_stable)(MASK)
    with pytest.raises(UnsupportedError, match="traced structure"):
        fusejit.jit(traced_structure)(MASK, S)
    for fn, exc in ((wrong_rank, RuntimeError), (no_size, ValueError)):
        with pytest.raises(exc):
            fn(MASK)
        with pytest.raises(exc):
            fusejit.jit(fn)(MASK)
    nan = FLOAT.copy()
    nan[2, 3] = np.nan
    with pytest.raises(RuntimeFailure):
        fusejit.jit(lambda a: nd.grey_erosion(a, structure=NONFLAT))(nan)
