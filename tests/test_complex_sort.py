"""Complex sorting against NumPy: np.sort (every kind), np.argsort (stable), ndarray.sort,
np.partition/argpartition, np.searchsorted (traced and constant tables, both sides),
np.median/nanmedian, in NumPy's order: lexicographic by real then imaginary part, then
R + NaNj, NaN + Rj and NaN + NaNj, each class by its non-NaN part. Over shapes (0-d,
zero-size), axes, layouts, ties and the grid of special values."""

from __future__ import annotations

import warnings

import numpy as np
import pytest
from conftest import assert_same, assert_unmodified, examples, snapshot
from hypothesis import given, settings
from hypothesis import strategies as st
from test_complex import CDTYPES, special_grid

import fusejit

_PARTS = [0.0, 1.0, -1.0, 2.5, np.inf, -np.inf, np.nan]


def _values(rng: np.random.Generator, shape: tuple[int, ...], dtype: np.dtype) -> np.ndarray:
    """Values from few parts (ties, every NaN class, infinities) or random ones."""
    if rng.random() < 0.5:
        parts = rng.choice(_PARTS, (2,) + shape)
        z = parts[0] + 0j
        z.imag = parts[1]
        return z.astype(dtype)
    return (rng.standard_normal(shape) + 1j * rng.standard_normal(shape)).astype(dtype)


def _same_values(got: np.ndarray, want: np.ndarray) -> None:
    """Equal complex values (NaN parts where NumPy has them; -0.0 == 0.0, which an unstable
    sort may order either way)."""
    assert got.dtype == want.dtype and got.shape == want.shape
    for g, w in ((got.real, want.real), (got.imag, want.imag)):
        assert ((g == w) | (np.isnan(g) & np.isnan(w))).all(), (got, want)


shapes = st.sampled_from([(7,), (0,), (1,), (3, 5), (4, 0), (2, 3, 17), (40,)])


@settings(max_examples=examples(20), deadline=None)
@given(shapes, st.sampled_from(CDTYPES), st.booleans(), st.data())
def test_sorts_match_numpy(shape: tuple[int, ...], dtype: np.dtype, reverse: bool,
                           data: st.DataObject) -> None:
    rng = np.random.default_rng(data.draw(st.integers(0, 2 ** 31)))
    z = _values(rng, shape, dtype)
    if reverse:
        z = z[::-1]
    axis = data.draw(st.sampled_from([None, -1] + list(range(z.ndim))))

    def f(z):
        return (np.sort(z, axis=axis, kind="stable"), np.argsort(z, axis=axis, kind="stable"),
                np.sort(z, axis=axis))

    snap = snapshot((z,))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        got, want = fusejit.jit(f)(z), f(z)
    assert_same(got[:2], want[:2], rtol=0.0)
    _same_values(got[2], want[2])
    assert_unmodified(snap)


@pytest.mark.parametrize("dtype", CDTYPES, ids=str)
def test_special_grid_order_and_searches(dtype: np.dtype) -> None:
    g = special_grid(dtype)
    g = g[np.random.default_rng(1).permutation(len(g))]
    table = np.sort(g[::3])  # a constant table (the kernel, not comparisons)
    small = np.sort(g[:9])  # short constant tables are searched by the kernel too

    def f(g):
        s = np.sort(g, kind="stable")
        return (s, np.argsort(g, kind="stable"), np.searchsorted(s, g),
                np.searchsorted(s, g, side="right"), np.searchsorted(table, g),
                np.searchsorted(small, g, side="right"), np.searchsorted(small, g[5]))

    assert_same(fusejit.jit(f)(g), f(g), rtol=0.0)


def test_method_sort_partition_and_medians() -> None:
    rng = np.random.default_rng(2)
    z = (rng.standard_normal((4, 9)) + 1j * rng.standard_normal((4, 9))).astype(np.complex64)
    z[1, 2] = complex(np.nan, 1)
    z[2, :] = complex(1, np.nan)
    z[3, 3] = complex(np.nan, np.nan)

    def f(z):
        w = z * 1
        w.sort(axis=0)
        return (w, np.partition(z, 3, axis=1), np.argpartition(z[0], 2), np.median(z),
                np.median(z, axis=1), np.nanmedian(z, axis=1), np.nanmedian(z[:, :8], axis=0))

    with warnings.catch_warnings(), np.errstate(all="ignore"):
        warnings.simplefilter("ignore")
        got, want = fusejit.jit(f)(z), f(z)
    _same_values(got[0], want[0])
    # a partition is any order with the kth value in place: fusejit's is the sorted one
    _same_values(got[1][:, 3], want[1][:, 3])
    _same_values(np.sort(got[1], axis=1), np.sort(want[1], axis=1))
    _same_values(z[0][got[2]][2:3], z[0][want[2]][2:3])
    assert_same(got[3:], want[3:], rtol=2e-6)


def test_zero_d_and_long_rows() -> None:
    z = np.complex128(1 - 1j)
    assert_same(fusejit.jit(lambda z: np.argsort(z))(z), np.argsort(z))
    rng = np.random.default_rng(3)
    v = rng.integers(-5, 5, 5000) + 1j * rng.integers(-5, 5, 5000)  # many ties
    f = lambda v: (np.sort(v, kind="stable"), np.argsort(v, kind="stable"))  # noqa: E731
    assert_same(fusejit.jit(f)(v), f(v), rtol=0.0)
