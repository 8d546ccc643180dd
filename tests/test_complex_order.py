"""NumPy's complex ordering against NumPy, bit for bit (signs of zeros, which NaN): np.maximum,
np.minimum, np.fmax, np.fmin and np.clip on every pair (triple) of special values; max, min,
amax, amin, argmax, argmin, ptp, nanmax/nanmin/nanargmax/nanargmin and the maximum/fmin scans
over axes None/0/1, keepdims, views, ties and NaN in either part; zero-size arrays and NumPy's
ValueError for an empty reduction; gradients through complex values refused clearly."""

from __future__ import annotations

import warnings

import numpy as np
import pytest
from conftest import on_cuda

import fusejit
from fusejit.errors import UnsupportedError

_PARTS = [np.nan, -np.inf, -1.0, -0.0, 0.0, 1.0, np.inf]


def _grid(dtype: type) -> np.ndarray:
    """Every pair of the parts as one complex value, both parts kept exactly."""
    re, im = np.meshgrid(_PARTS, _PARTS, indexing="ij")
    z = np.empty(re.size, dtype)
    z.real, z.imag = re.ravel(), im.ravel()
    return z


def _few(rng: np.random.Generator, shape: tuple[int, ...], dtype: type) -> np.ndarray:
    """Values from few parts: ties, +-0, infinities and NaN in either part (not too many)."""
    parts = rng.choice(_PARTS[1:], (2, *shape))
    nan = rng.random((2, *shape)) < 0.06
    parts[nan] = np.nan
    z = np.empty(shape, dtype)
    z.real, z.imag = parts
    return z


def _elementwise(a: np.ndarray, b: np.ndarray) -> tuple:
    p, q = a[:, None], a[None, :]
    return (np.maximum(p, q), np.minimum(p, q), np.fmax(p, q), np.fmin(p, q),
            np.clip(a[:, None, None], a[None, :, None], a[None, None, ::2]),
            np.maximum(a, b), np.fmin(b, a), np.maximum(a, 0.5), np.clip(a, 0, 1),
            np.clip(a, -1j, None), np.clip(a, max=1 + 1j))


def _reductions(z: np.ndarray, e: np.ndarray) -> tuple:
    return (z.max(), z.min(axis=0), np.amax(z, axis=1), np.amin(z, axis=-1, keepdims=True),
            np.max(z, axis=(0, 1), keepdims=True), z[::-1, 1:].max(axis=0), z.T.min(axis=1),
            np.argmax(z), np.argmin(z), np.argmax(z, axis=0), np.argmin(z, axis=1),
            np.argmax(z.T, axis=1, keepdims=True), np.argmin(z[:, ::-2]),
            np.ptp(z, axis=1), np.nanmax(z, axis=0), np.nanmin(z), np.nanmax(z[:2], axis=1),
            np.nanargmax(np.where(np.isnan(z), 1j, z), axis=1), np.nanargmin(z[:, :1] + 2),
            np.maximum.accumulate(z, axis=1), np.fmin.accumulate(z, axis=0),
            np.minimum.reduce(z, axis=0), z.max(axis=1, initial=-1j, where=z.real > 0),
            e.max(axis=1), np.argmin(e, axis=1), e.min(axis=0, initial=2j))


def _program(a64: np.ndarray, a128: np.ndarray, z64: np.ndarray, z128: np.ndarray,
             e: np.ndarray) -> tuple:
    return (_elementwise(a64, a128[::-1].astype(np.complex64)), _elementwise(a128, a64[::-1]),
            _reductions(z64, e.astype(np.complex64)), _reductions(z128, e))


def _bits(x: np.ndarray) -> np.ndarray:
    x = np.atleast_1d(np.asarray(x))
    if x.dtype.kind != "c":
        return x
    return np.stack([x.real, x.imag])


# np.ptp's results: a NaN that arithmetic makes (inf - inf) has the sign bit set on x86 (its
# default NaN) and clear on a GPU; a NaN that ordering selects keeps its bits on both
_ARITHMETIC = {"[2][13]", "[3][13]"}


def _assert_identical(got: tuple, want: tuple, path: str = "") -> None:
    if isinstance(want, tuple):
        assert isinstance(got, tuple) and len(got) == len(want), path
        for i, (g, w) in enumerate(zip(got, want)):
            _assert_identical(g, w, f"{path}[{i}]")
        return
    assert type(got) is type(want), f"{path}: {type(got)} vs {type(want)}"
    g, w = np.asarray(got), np.asarray(want)
    assert g.dtype == w.dtype and g.shape == w.shape, f"{path}: {g.dtype}{g.shape} {w.shape}"
    gb, wb = _bits(g), _bits(w)
    same = (gb == wb) | (np.isnan(gb) & np.isnan(wb)) if gb.dtype.kind == "f" else gb == wb
    if gb.dtype.kind == "f":
        sign = np.signbit(gb) == np.signbit(wb)
        if on_cuda() and path in _ARITHMETIC:
            sign |= np.isnan(wb)
        same &= sign
    assert same.all(), f"{path}: {g} != NumPy's {w}"


def test_ordering_matches_numpy_bit_for_bit() -> None:
    jf = fusejit.jit(_program)
    rng = np.random.default_rng(11)
    e = np.empty((0, 3), np.complex128)
    for _ in range(3):  # one compiled program, several draws of tie-heavy data
        z = _few(rng, (6, 5), np.complex128)
        args = (_grid(np.complex64), _grid(np.complex128), z.astype(np.complex64), z, e)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", RuntimeWarning)  # nanmax of an all-NaN row
            want = _program(*args)
            got = jf(*args)
        _assert_identical(got, want)


@pytest.mark.parametrize("fn", [np.max, np.min, np.argmax, np.argmin, np.amax, np.ptp])
def test_empty_reductions_raise_numpys_value_error(fn) -> None:
    z = np.empty((2, 0), np.complex64)
    with pytest.raises(ValueError) as want:
        fn(z, axis=1)
    with pytest.raises(ValueError) as got:
        fusejit.jit(lambda z: fn(z, axis=1))(z)
    assert str(got.value) == str(want.value)


def test_gradient_through_complex_values_refused() -> None:
    # Silent zeros before: the backward pass stopped at the first complex node.
    def f(x):
        return np.abs(np.maximum(x + 0j, 0.5 + 1j)).sum() + np.abs(np.argmax(x * 1j))

    with pytest.raises(UnsupportedError, match="np.absolute at .*complex"):
        fusejit.grad(f)(np.arange(3.0))
    with pytest.raises(UnsupportedError, match="'real' at .*complex"):
        fusejit.grad(lambda x: np.clip(x * 1j, 0, 1j).real.sum())(np.arange(3.0))
