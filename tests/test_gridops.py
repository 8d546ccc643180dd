"""np.conj / real / imag on real arrays, np.meshgrid, np.cross and np.interp against NumPy over
shapes (0-d, zero-size, non-contiguous, broadcast), dtypes and arguments, with NumPy's
exceptions for bad input."""

from __future__ import annotations

import warnings
from typing import Any

import numpy as np
import pytest
from conftest import assert_same, examples, run_both
from hypothesis import given, settings
from hypothesis import strategies as st

import fusejit
from fusejit.errors import UnsupportedError

DTYPES = [np.bool_, np.int8, np.int32, np.uint16, np.float16, np.float32, np.float64]
SHAPES = [(), (0,), (3,), (2, 3), (4, 1, 2)]


def _array(rng: np.random.Generator, shape: tuple[int, ...], dtype: Any, how: str) -> np.ndarray:
    x = (rng.standard_normal(shape) * 4).astype(dtype)
    if how == "strided" and x.ndim:
        big = np.repeat(x, 2, axis=-1)
        return big[..., ::2]
    if how == "reversed" and x.ndim:
        return np.ascontiguousarray(x[..., ::-1])[..., ::-1]
    return x


@settings(max_examples=examples(15))
@given(st.sampled_from(SHAPES), st.sampled_from(DTYPES), st.sampled_from(["c", "strided",
                                                                           "reversed"]),
       st.integers(0, 2 ** 31))
def test_real_parts(shape: tuple, dtype: Any, how: str, seed: int) -> None:
    x = _array(np.random.default_rng(seed), shape, dtype, how)
    run_both(lambda x: (np.conj(x), np.conjugate(x), x.conj()), x)
    run_both(lambda x: (x.real, x.imag, np.real(x), np.imag(x)), x)
    run_both(lambda x: (np.real(x) + np.imag(x), x.imag.sum()), x)
    if x.ndim:
        run_both(lambda x: (x[0].real, x[0].imag, np.conj(x[0])), x)  # NumPy scalars


@settings(max_examples=examples(15))
@given(st.lists(st.sampled_from([0, 1, 3]), min_size=1, max_size=3),
       st.sampled_from(["xy", "ij"]), st.booleans(), st.booleans(),
       st.sampled_from([np.int32, np.float32, np.float64]))
def test_meshgrid(sizes: list, indexing: str, sparse: bool, copy: bool, dtype: Any) -> None:
    xs = [np.arange(n, dtype=dtype) * (k + 1) for k, n in enumerate(sizes)]
    kw = {"indexing": indexing, "sparse": sparse, "copy": copy}
    f = [lambda a: np.meshgrid(a, **kw), lambda a, b: np.meshgrid(a, b, **kw),
         lambda a, b, c: np.meshgrid(a, b, c, **kw)][len(xs) - 1]
    run_both(f, *xs)
    # a 2-D input is flattened, as NumPy does
    run_both(lambda a: np.meshgrid(a.reshape(1, -1), a[::-1], indexing=indexing), xs[0])


@settings(max_examples=examples(15))
@given(st.sampled_from([2, 3]), st.sampled_from([2, 3]),
       st.sampled_from([(), (0,), (4,), (2, 1)]), st.sampled_from([(), (1,), (3, 1)]),
       st.sampled_from([np.int8, np.int64, np.uint8, np.float32, np.float64, np.bool_]),
       st.sampled_from([None, 0, -1]), st.integers(0, 2 ** 31))
def test_cross(na: int, nb: int, ba: tuple, bb: tuple, dtype: Any, axis: Any,
               seed: int) -> None:
    rng = np.random.default_rng(seed)
    a = (rng.standard_normal(ba + (na,)) * 5).astype(dtype)
    b = (rng.standard_normal(bb + (nb,)) * 5).astype(np.float32 if dtype == np.int64 else dtype)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DeprecationWarning)
        run_both(lambda a, b: np.cross(a, b), a, b)
        run_both(lambda a, b: np.cross(np.moveaxis(a, -1, 0), b, axisa=0,
                                       axisc=0 if axis is None else axis), a, b)
        if axis is not None and a.ndim == b.ndim:
            run_both(lambda a, b: np.cross(a.swapaxes(0, -1), b.swapaxes(0, -1), axis=0),
                     a, b)


def test_cross_errors() -> None:
    run_both(lambda a, b: np.cross(a, b), np.ones(4), np.ones(3))
    run_both(lambda a, b: np.cross(a, b), np.ones(()), np.ones(3))
    run_both(lambda a, b: np.cross(a, b, axisa=2), np.ones(3), np.ones(3))
    run_both(lambda a, b: np.cross(a, b), np.ones((2, 3)), np.ones((3, 3)))
    # 2-vectors: deprecated up to NumPy 2.4, a ValueError from 2.5 on: as the running NumPy
    with warnings.catch_warnings():
        warnings.simplefilter("error", DeprecationWarning)
        try:
            np.cross(np.ones(2), np.ones(2) * 3)
            expired = False
        except DeprecationWarning:
            expired = False
        except ValueError:
            expired = True
    if expired:
        run_both(lambda a, b: np.cross(a, b), np.ones(2), np.ones(2) * 3)
    else:
        with pytest.warns(DeprecationWarning):
            fusejit.jit(lambda a, b: np.cross(a, b))(np.ones(2), np.ones(2) * 3)


XP = np.array([-2.0, -0.5, 0.0, 1.0, 4.0])


@settings(max_examples=examples(15))
@given(st.sampled_from([(), (0,), (7,), (3, 4)]), st.sampled_from([np.float32, np.float64,
                                                                   np.int32]),
       st.sampled_from([None, -7.5]), st.sampled_from([None, 9.0]), st.booleans(),
       st.integers(0, 2 ** 31))
def test_interp(shape: tuple, dtype: Any, left: Any, right: Any, traced: bool,
                seed: int) -> None:
    rng = np.random.default_rng(seed)
    x = (rng.standard_normal(shape) * 3).astype(dtype)
    if x.size and dtype != np.int32:
        x.flat[0] = np.nan
        x.flat[-1] = XP[rng.integers(len(XP))]  # exactly on a sample point
    fp = rng.standard_normal(len(XP))
    if traced:
        run_both(lambda x, xp, fp: np.interp(x, xp, fp, left=left, right=right), x, XP, fp)
        run_both(lambda x, xp: np.interp(x, xp[:1], xp[1:2], left=left, right=right), x, XP)
    else:
        run_both(lambda x: np.interp(x, XP, fp, left=left, right=right), x)
        run_both(lambda x: np.interp(x * 2, XP, fp, period=3.0), x)


def test_interp_special_values_and_errors() -> None:
    fp = np.array([1.0, np.inf, 2.0, np.inf, np.inf])
    x = np.array([-3.0, -2.0, -1.0, -0.25, 0.5, 1.0, 2.5, 4.0, 5.0, np.nan, np.inf, -np.inf])
    run_both(lambda x, fp: np.interp(x, XP, fp), x, fp)
    run_both(lambda x: np.interp(x, [], []), x)
    run_both(lambda x: np.interp(x, [1.0, 2.0], [1.0]), x)
    run_both(lambda x: np.interp(x, [1.0, 2.0], [1.0, 2.0], period=0), x)
    assert_same(fusejit.jit(lambda x: np.interp(x[0], XP, XP))(x), np.interp(x[0], XP, XP))
    with pytest.raises(UnsupportedError, match="period"):
        fusejit.jit(lambda x, xp: np.interp(x, xp, xp, period=1.0))(x, XP)
