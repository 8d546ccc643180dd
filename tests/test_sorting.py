"""Sorting (issue 20): np.sort, np.argsort, np.partition, np.argpartition, np.searchsorted
(functions and methods), against NumPy over shapes (0-d, zero-size), layouts, dtypes, axes,
NaNs and ties. argsort is compared with NumPy's stable order (the default kind's order of
ties is unspecified: compared on distinct values); partitions by NumPy's guarantees (the kth
values exactly, smaller before and larger after)."""

from __future__ import annotations

import numpy as np
import pytest
from conftest import assert_same, examples, run_both
from hypothesis import given, note, settings
from hypothesis import strategies as st

import fusejit
from fusejit.errors import UnsupportedError

# (test bodies read drawn constants from their closures)
pytestmark = pytest.mark.filterwarnings("ignore::fusejit.frontend.captures.CapturedWarning")
RNG = np.random.default_rng(20)
DTYPES = [np.float32, np.float64, np.float16, np.int8, np.int16, np.int32, np.int64,
          np.uint8, np.uint16, np.uint32, np.uint64, np.bool_]


def _array(shape, dtype, layout, ties: bool = True):
    dtype = np.dtype(dtype)
    if dtype.kind == "f":
        x = RNG.standard_normal(shape).astype(dtype)
        if ties and x.size > 2:
            x.reshape(-1)[::4] = x.reshape(-1)[0]
        if ties and x.size > 3 and RNG.random() < 0.5:
            x.reshape(-1)[1::3] = [np.nan, np.inf, -np.inf][RNG.integers(3)]
    elif dtype.kind == "b":
        x = RNG.random(shape) < 0.5
    else:
        info = np.iinfo(dtype)
        lo, hi = (info.min, info.max) if RNG.random() < 0.5 else (max(info.min, -3), 4)
        x = RNG.integers(lo, hi, shape, dtype=dtype, endpoint=True)
    if layout == "transposed" and x.ndim > 1:
        return np.asfortranarray(x)
    if layout == "reversed" and x.ndim:
        return x[::-1]
    return x


def _producer(x):
    return ~x if x.dtype.kind == "b" else x * 3


FUNCS = {
    "sort": lambda x, axis: np.sort(x, axis=axis),
    "sort-stable": lambda x, axis: np.sort(x, axis=axis, kind="stable"),
    "argsort-stable": lambda x, axis: np.argsort(x, axis=axis, kind="stable"),
    "argsort-merge": lambda x, axis: np.argsort(x, axis=axis, kind="mergesort"),
    "method": lambda x, axis: x.argsort(axis=axis, kind="stable"),
    "fused": lambda x, axis: np.sort(_producer(x), axis=axis, kind="stable") + 1,
    "fused-arg": lambda x, axis: np.argsort(_producer(x), axis=axis, kind="stable"),
}


@pytest.mark.filterwarnings("ignore::RuntimeWarning")
@settings(max_examples=examples(90), deadline=None)
@given(st.integers(0, 3), st.data())
def test_sort_argsort_match_numpy(ndim, data) -> None:
    shape = tuple(data.draw(st.lists(st.integers(0, 6), min_size=ndim, max_size=ndim)))
    if data.draw(st.booleans()) and ndim:
        shape = shape[:-1] + (data.draw(st.sampled_from([33, 70, 300])),)  # radix-sorted rows
    dtype = data.draw(st.sampled_from(DTYPES))
    x = _array(shape, dtype, data.draw(st.sampled_from(["contiguous", "transposed",
                                                        "reversed"])))
    name = data.draw(st.sampled_from(sorted(FUNCS)))
    axis = data.draw(st.sampled_from([None] + list(range(-ndim, ndim)) + [-1]))
    note(f"{name} x {x.dtype}{x.shape} strides {x.strides} axis {axis}")
    f = FUNCS[name]
    run_both(lambda x: f(x, axis), x)


@pytest.mark.parametrize("dtype", [np.float32, np.float64, np.int32, np.uint8])
def test_default_argsort_of_distinct_values(dtype) -> None:
    x = RNG.permutation(200).astype(dtype).reshape(4, 50)
    run_both(lambda x: np.argsort(x), x)
    run_both(lambda x: np.argsort(x, axis=0), x)
    run_both(lambda x: np.argsort(-x if x.dtype.kind == "f" else x, axis=None), x)


def test_nan_and_signed_zero_order() -> None:
    x = np.array([np.nan, -0.0, 1.0, 0.0, -np.nan, -np.inf, -0.0, np.inf, 0.0, np.nan] * 4)
    jf = run_both(lambda x: np.argsort(x, kind="stable"), x)
    assert jf(x).tolist() == np.argsort(x, kind="stable").tolist()
    run_both(lambda x: np.sort(x, kind="stable"), x)  # -0.0 / 0.0 in their order
    got = fusejit.jit(lambda x: np.sort(x))(x)  # default kind: NaN last, zeros in any order
    want = np.sort(x)
    assert np.array_equal(got, want, equal_nan=True)
    run_both(lambda x: np.sort(x.astype(np.float32)), x[x != 0])


def _check_partition(x, kth, axis, part, idx) -> None:
    """NumPy's guarantees: each kth element is the sorted one; smaller before, larger after."""
    full = np.sort(x, axis=axis)
    n = x.shape[axis]
    for k in np.atleast_1d(kth):
        k = int(k) % n
        got = np.take(part, [k], axis=axis)
        assert_same(got, np.take(full, [k], axis=axis))
        with np.errstate(invalid="ignore"):
            before = np.take(part, range(k), axis=axis)
            after = np.take(part, range(k + 1, n), axis=axis)
            assert not np.any(before > got)
            assert not np.any((after < got) | (np.isnan(got) & ~np.isnan(after)))
    if idx is not None:
        assert np.array_equal(np.sort(idx, axis=axis),
                              np.broadcast_to(np.arange(n).reshape(
                                  [-1 if d == axis % x.ndim else 1 for d in range(x.ndim)]),
                                  x.shape))
        assert_same(np.take_along_axis(x, idx, axis=axis), part)


@settings(max_examples=examples(40), deadline=None)
@given(st.data())
def test_partition_properties(data) -> None:
    shape = tuple(data.draw(st.lists(st.integers(1, 9), min_size=1, max_size=3)))
    axis = data.draw(st.integers(-len(shape), len(shape) - 1))
    n = shape[axis]
    dtype = data.draw(st.sampled_from([np.float32, np.float64, np.int16, np.uint8]))
    x = _array(shape, dtype, data.draw(st.sampled_from(["contiguous", "transposed"])))
    kth = data.draw(st.one_of(st.integers(-n, n - 1),
                              st.lists(st.integers(-n, n - 1), min_size=1, max_size=3)))
    note(f"x {x.dtype}{x.shape} axis {axis} kth {kth}")
    part = fusejit.jit(lambda x: np.partition(x, kth, axis=axis))(x)
    assert part.dtype == x.dtype and part.shape == x.shape
    idx = fusejit.jit(lambda x: np.argpartition(x, kth, axis=axis))(x)
    assert idx.dtype == np.intp
    _check_partition(x, kth, axis, part, idx)


def test_partition_errors_and_flat() -> None:
    x = RNG.standard_normal((4, 5))
    run_both(lambda x: np.partition(x, 5), x)  # ValueError: kth out of bounds
    run_both(lambda x: np.argpartition(x, -6), x)
    flat = fusejit.jit(lambda x: np.partition(x, 7, axis=None))(x)
    _check_partition(x.ravel(), 7, 0, flat, None)


SEARCH_DTYPES = [np.float32, np.float64, np.int32, np.int64, np.uint8, np.int8]


@pytest.mark.filterwarnings("ignore::RuntimeWarning")
@settings(max_examples=examples(60), deadline=None)
@given(st.data())
def test_searchsorted_matches_numpy(data) -> None:
    n = data.draw(st.integers(0, 40))
    da = data.draw(st.sampled_from(SEARCH_DTYPES))
    dv = data.draw(st.sampled_from(SEARCH_DTYPES))
    a = np.sort(_array((n,), da, "contiguous"))
    vshape = tuple(data.draw(st.lists(st.integers(0, 5), min_size=0, max_size=3)))
    v = _array(vshape, dv, data.draw(st.sampled_from(["contiguous", "transposed"])))
    side = data.draw(st.sampled_from(["left", "right"]))
    sorter = data.draw(st.booleans())
    note(f"a {a.dtype}{a.shape} v {v.dtype}{v.shape} side {side} sorter {sorter}")
    if sorter:
        perm = RNG.permutation(n)
        shuffled = np.empty_like(a)
        shuffled[perm] = a
        run_both(lambda a, v, s: np.searchsorted(a, v, side=side, sorter=s), shuffled, v,
                 perm)
    else:
        run_both(lambda a, v: np.searchsorted(a + 0, v, side=side), a, v)
        run_both(lambda a, v: a.searchsorted(v, side), a, v)


def test_searchsorted_big_and_scalar() -> None:
    a = np.sort(RNG.standard_normal(5000)).astype(np.float32)
    v = RNG.standard_normal(20000).astype(np.float32)
    jf = run_both(lambda a, v: np.searchsorted(a, v * 2), a, v)  # blocks between threads
    assert jf is not None
    run_both(lambda a: np.searchsorted(a, 0.5, side="right"), a)  # 0-d result
    run_both(lambda a, v: np.searchsorted(a.reshape(50, 100), v), a, v)  # ValueError: 1-d
    run_both(lambda a, v: np.searchsorted(a, v, side="middle"), a, v)  # NumPy's ValueError


def test_methods_in_place_and_errors() -> None:
    x = RNG.standard_normal((3, 40))

    def f(x):
        y = x * 1.0
        y.sort(axis=0)
        return y

    run_both(f, x)

    def g(x):
        x.sort()  # the argument itself, in place, as NumPy does

    jx, nx = x.copy(), x.copy()
    fusejit.jit(g)(jx)
    g(nx)
    assert_same(jx, nx)
    def h(x):
        y = x + 0.0
        y.partition(5, axis=1)
        return y[:, 5]

    run_both(h, x)
    run_both(lambda x: np.sort(x.sum()), x)  # AxisError on 0-d
    run_both(lambda x: np.sort(x.sum(), axis=None), x)
    run_both(lambda x: np.sort(x, kind="bogus"), x)  # ValueError
    run_both(lambda x: np.argsort(x, axis=2), x)  # AxisError
    with pytest.raises(UnsupportedError, match="order="):
        fusejit.jit(lambda x: np.sort(x, order="a"))(x)


def test_rows_in_parallel_and_fused_consumer() -> None:
    x = RNG.standard_normal((300, 1024)).astype(np.float32)
    jf = run_both(lambda x: np.argsort(x, axis=1, kind="stable"), x)
    assert np.array_equal(fusejit.jit(lambda x: np.argsort(x, axis=1))(x), jf(x))
    run_both(lambda x: np.take_along_axis(x, np.argsort(x, axis=0, kind="stable"), 0) * 2, x)
    run_both(lambda x: np.sort(np.exp(x), axis=1)[:, ::100] * 2, x)


def test_radix_digit_widths_of_short_rows() -> None:
    """Rows under 512 (keys of 32 bits) or 2048 (wider keys) take 8-bit digits, longer ones
    11-bit (fj_sort.h FJ_LSD_M8, FJ_LSD_M8W; the count tables scanned by fj_exscan_u32):
    32- and 64-bit keys, packed positions, across each threshold, with ties, NaN and signed
    zeros; NumPy's stable order exactly."""
    def f(a0, a1, a2, a3, b0, b1, b2, b3):
        return ([np.argsort(x, axis=1, kind="stable") for x in (a0, a1, a2, a3, b0, b1, b2, b3)]
                + [np.sort(x, axis=1) for x in (a0, a1, a2, a3)])

    a, b = [], []
    for n in (511, 512, 2047, 2048):
        x = RNG.standard_normal((3, n))
        x[:, ::7] = x[0, 0]
        x[0, ::5], x[1, ::9], x[2, ::11] = np.nan, -0.0, 0.0
        a.append(x)
        y = RNG.integers(-(1 << 62), 1 << 62, (2, n)).astype(np.int64)
        y[:, ::3] = -5
        b.append(y)
    run_both(f, *[x.astype(np.float32) for x in a], *b)
    run_both(f, *a, *[y.astype(np.uint32) for y in b])


def test_explain_and_cuda_rendering() -> None:
    from fusejit.codegen.cuda import render_cuda

    def f(x):
        return np.argsort(np.exp(x), axis=0)

    x = RNG.standard_normal((4, 6))
    text = str(fusejit.jit(f).explain(x))
    assert "sort (arg) of rows of 4, for each of [6]" in text
    assert "exp" in text.split("k0:")[1]  # the input is fused into the sort
    program = fusejit.jit(f).lower_for(x).program
    assert "a block per row, a bitonic sort of 4 keys" in render_cuda(program).body
    text = str(fusejit.jit(lambda a, v: np.searchsorted(a, v)).explain(x[0], x))
    assert "searchsorted (side=left)" in text


def test_array_api_namespace_sorting() -> None:
    def f(x):
        xp = x.__array_namespace__()
        return (xp.sort(x, axis=1, stable=True), xp.argsort(x, axis=0, stable=True),
                xp.searchsorted(xp.sort(x[0]), x[1]))

    run_both(f, RNG.standard_normal((3, 5)))


def _table():
    """A constant sorted table (built inside the traced function: not a captured array)."""
    return np.concatenate([np.linspace(-3.0, 3.0, 97), [np.nan] * 3])


@pytest.mark.filterwarnings("ignore::RuntimeWarning")
def test_searchsorted_into_large_constant_tables() -> None:
    v = RNG.standard_normal((7, 30))
    v[0, :5] = [np.nan, np.inf, -np.inf, _table()[10], -3.0]
    jf = run_both(lambda v: np.searchsorted(_table(), v * 1.5), v)
    assert "searchsorted (side=left)" in str(jf.explain(v))  # the binary-search kernel
    run_both(lambda v: np.searchsorted(_table(), v * 1.5, side="right"), v)
    run_both(lambda v: np.searchsorted(_table()[::-1], v, sorter=np.arange(99, -1, -1)), v)
    run_both(lambda v: np.searchsorted(np.arange(40), v * 10), v)  # int table, float values
    run_both(lambda v: np.digitize(v, np.linspace(-2, 2, 50)), v)
    run_both(lambda v: np.digitize(v, np.linspace(2, -2, 50), right=True), v)  # decreasing
    with pytest.raises(UnsupportedError, match="unsorted"):
        fusejit.jit(lambda v: np.searchsorted(_table()[::-1], v))(v)


def test_complex_sorts_follow_numpys_order() -> None:
    # NumPy orders complex values by real then imaginary part (tests/test_complex_sort.py
    # checks NaN classes, axes and layouts)
    z = np.array([1 + 2j, 0.5 - 1j, 1 - 3j])
    for f in (lambda z: np.sort(z), lambda z: np.argsort(z), lambda z: np.median(z),
              lambda z: np.searchsorted(z[[1, 2, 0]], z), lambda z: np.partition(z, 1)):
        run_both(f, z)


_RNG = np.random.default_rng(21)
_KEY_F = _RNG.integers(0, 3, (4, 7)).astype(float)
_KEY_F[0, 2], _KEY_F[1, 3], _KEY_F[2, 4] = np.nan, -0.0, 0.0
_KEY_I = _RNG.integers(0, 2, (4, 7)).astype(np.int8)
_KEY_C = _RNG.integers(0, 2, 7) + 1j * _RNG.integers(0, 2, 7)
LEXSORT = {
    "two keys": (lambda x, y: np.lexsort((x, y)), (_KEY_F, _KEY_I)),
    "axis 0": (lambda x, y: np.lexsort((x, y), axis=0), (_KEY_F, _KEY_I)),
    "rows of one array": (lambda x: np.lexsort(x), (_KEY_F,)),
    "one key": (lambda x: np.lexsort([x[0]]), (_KEY_F,)),
    "complex key": (lambda z: np.lexsort((z.real, z)), (_KEY_C,)),
    "0-d keys": (lambda x: np.lexsort((x[0, 0],)), (_KEY_F,)),
    "elements of a vector": (lambda x: np.lexsort(x[0]), (_KEY_F,)),
    "zero size": (lambda x: np.lexsort((x[:, :0], x[:, :0])), (_KEY_F,)),
    "shapes differ": (lambda x: np.lexsort((x, x[0])), (_KEY_F,)),
    "bad axis": (lambda x: np.lexsort((x,), axis=3), (_KEY_F,)),
    "no keys": (lambda x: np.lexsort(()) + x, (_KEY_F,)),
}


@pytest.mark.parametrize("name", list(LEXSORT))
def test_lexsort_matches_numpy(name: str) -> None:
    """np.lexsort: the last key first, ties by the ones before, NaN last, -0.0 and 0.0 tied
    in their order (stable argsorts, one a key); NumPy's errors."""
    f, args = LEXSORT[name]
    run_both(f, *args)
