"""Scans (issue 20): np.cumsum, np.cumprod, np.nancumsum, np.nancumprod (functions and
methods) and ufunc.accumulate, against NumPy over shapes (0-d, zero-size), layouts, dtypes,
axes and `dtype=`; the scan kernel fuses the work that computes its input; rows run in
order (NumPy's sequential float sums, the same at every thread count).
"""

from __future__ import annotations

import numpy as np
import pytest
from conftest import assert_same, c_structure, examples, run_both
from hypothesis import given, note, settings
from hypothesis import strategies as st

import fusejit
from fusejit.codegen.c import COptions, render

# (test bodies read drawn constants from their closures)
pytestmark = pytest.mark.filterwarnings("ignore::fusejit.frontend.captures.CapturedWarning")
RNG = np.random.default_rng(21)


def _array(shape, dtype, layout):
    if np.dtype(dtype).kind == "f":
        x = RNG.standard_normal(shape).astype(dtype)
        if x.size > 2:
            x.reshape(-1)[::3] = np.nan if RNG.random() < 0.3 else x.reshape(-1)[::3]
    elif np.dtype(dtype).kind == "b":
        x = RNG.random(shape) < 0.5
    else:
        x = RNG.integers(-3 if np.dtype(dtype).kind == "i" else 0, 4, shape).astype(dtype)
    if layout == "transposed" and x.ndim > 1:
        return np.asfortranarray(x)
    if layout == "reversed" and x.ndim:
        return x[::-1]
    return x


FUNCS = {
    "cumsum": lambda x, axis, dtype: np.cumsum(x, axis=axis, dtype=dtype),
    "cumprod": lambda x, axis, dtype: np.cumprod(x, axis=axis, dtype=dtype),
    "nancumsum": lambda x, axis, dtype: np.nancumsum(x, axis=axis, dtype=dtype),
    "nancumprod": lambda x, axis, dtype: np.nancumprod(x, axis=axis, dtype=dtype),
    "method": lambda x, axis, dtype: x.cumsum(axis=axis, dtype=dtype),
    "add.acc": lambda x, axis, dtype: np.add.accumulate(x, axis=0 if axis is None else axis,
                                                        dtype=dtype),
    "max.acc": lambda x, axis, dtype: np.maximum.accumulate(x, axis=axis or 0),
    "min.acc": lambda x, axis, dtype: np.minimum.accumulate(x, axis=axis or 0),
    "mul.acc": lambda x, axis, dtype: np.multiply.accumulate(x, axis=axis or 0, dtype=dtype),
    "or.acc": lambda x, axis, dtype: np.logical_or.accumulate(x, axis=axis or 0),
    "and.acc": lambda x, axis, dtype: np.logical_and.accumulate(x, axis=axis or 0),
}


@pytest.mark.filterwarnings("ignore::RuntimeWarning")
@settings(max_examples=examples(80), deadline=None)
@given(st.integers(0, 3), st.data())
def test_scans_match_numpy(ndim, data) -> None:
    shape = tuple(data.draw(st.lists(st.integers(0, 5), min_size=ndim, max_size=ndim)))
    dtype = data.draw(st.sampled_from([np.float32, np.float64, np.int32, np.int8, np.uint8,
                                       np.bool_, np.float16]))
    x = _array(shape, dtype, data.draw(st.sampled_from(["contiguous", "transposed",
                                                        "reversed"])))
    name = data.draw(st.sampled_from(sorted(FUNCS)))
    axis = data.draw(st.sampled_from([None] + list(range(-ndim, ndim))))
    out_dtype = data.draw(st.sampled_from([None, None, np.float64, np.int64, np.float32]))
    fused = data.draw(st.booleans())
    note(f"{name} x {x.dtype}{x.shape} strides {x.strides} axis {axis} dtype {out_dtype}")
    f = FUNCS[name]
    if fused:
        run_both(lambda x: f(x * 2 if x.dtype.kind != "b" else ~x, axis, out_dtype), x)
    else:
        run_both(lambda x: f(x, axis, out_dtype), x)


def test_scan_order_and_values() -> None:
    x = np.array([1e8, 1.0, -1e8, 1.0], np.float32)  # sequential order matters
    jf = run_both(lambda x: np.cumsum(x), x)
    assert jf(x).tolist() == np.cumsum(x).tolist()
    run_both(lambda x: np.cumsum(x), np.array([-0.0, -0.0]))  # the first element as is
    run_both(lambda x: np.maximum.accumulate(x), np.array([1.0, np.nan, 3.0]))
    run_both(lambda x: np.cumprod(x, axis=1), RNG.integers(-9, 9, (3, 40)))  # wraps
    big = RNG.standard_normal((64, 1000)).astype(np.float32)
    jf = run_both(lambda x: np.cumsum(x, axis=1) * 0.5, big)  # rows split between threads
    assert np.array_equal(jf(big), np.cumsum(big, axis=1) * 0.5)
    run_both(lambda x: np.add.accumulate(x), np.float64(3.0))  # TypeError on a scalar
    run_both(lambda x: np.cumsum(x, axis=2), np.ones((2, 2)))  # AxisError


def test_explain_and_cuda_rendering() -> None:
    from fusejit.codegen.cuda import render_cuda
    from fusejit.errors import UnsupportedError

    def f(x):
        return np.cumsum(np.exp(x), axis=1)

    x = RNG.standard_normal((4, 6))
    text = str(fusejit.jit(f).explain(x))
    assert "scan along rows of 6" in text
    assert "exp" in text.split("k0:")[1].split("k1")[0]  # the input is fused into the scan
    program = fusejit.jit(f).lower_for(x).program
    assert "one thread per row, its points in order" in render_cuda(program).body
    with pytest.raises(UnsupportedError, match="out="):
        fusejit.jit(lambda x, o: np.cumsum(x, out=o))(x, x.copy())


def test_consumers_fuse_and_leading_axes() -> None:
    x = RNG.standard_normal((70, 130)).astype(np.float32)
    jf = run_both(lambda x: np.cumsum(x, axis=1) / 130, x)
    text = str(jf.explain(x))
    assert "1 kernel(s)" in text and "divide" in text  # the quotient only: no scan buffer
    run_both(lambda x: (np.cumsum(x, axis=0) * x, np.cumsum(x, axis=0)), x)  # column blocks
    run_both(lambda x: np.cumsum(x, axis=1) - np.cumsum(x, axis=1)[:, :1], x)  # not same index
    run_both(lambda x: np.maximum.accumulate(x.reshape(7, 10, 130), axis=1)[::2], x)
    run_both(lambda x: np.cumprod(x.T, axis=1), x)


@pytest.mark.skipif(not hasattr(np, "cumulative_sum"), reason="NumPy 2's cumulative_sum")
def test_cumulative_sum_and_prod() -> None:
    x = RNG.standard_normal((3, 4)).astype(np.float32)
    run_both(lambda x: np.cumulative_sum(x, axis=1, include_initial=True), x)
    run_both(lambda x: np.cumulative_prod(x, axis=0, dtype=np.float64), x)
    run_both(lambda x: np.cumulative_sum(x[0].astype(np.int8), include_initial=True), x)
    run_both(lambda x: np.cumulative_sum(x[0, 0]), x)  # 0-d
    run_both(lambda x: np.cumulative_prod(x[:0, 0], include_initial=True), x)
    run_both(lambda x: np.cumulative_sum(x), x)  # ValueError: axis required


# --- blocked parallel scans of few long rows (codegen/cscan_blocks.py) -----------------------

LONG = (1 << 15) + 7  # two blocks of at least BLOCK_MIN elements


def _scaled(f, axis):
    return lambda a: f(a * 3 if a.dtype.kind != "b" else ~a, axis, None)


@pytest.mark.filterwarnings("ignore::RuntimeWarning")
@pytest.mark.parametrize("dtype", [np.float32, np.float64, np.int32, np.int8, np.uint8, np.bool_])
def test_blocked_scans_match_numpy(dtype) -> None:
    """Integer, logical, max and min results are NumPy's exactly; float sums are within
    rounding of NumPy's sequential ones (compared to the exact sum), products close."""
    x = _array((2, LONG), dtype, "contiguous")
    if np.dtype(dtype).kind == "f":
        x = RNG.uniform(-1, 1, (2, LONG)).astype(dtype)
        x[1, LONG // 2 + 3] = np.nan  # in the second block of the second row
    for name, f in FUNCS.items():
        for arr, axis in ((x[0], None), (x[:, ::-1], 1)):
            g = _scaled(f, axis)
            want = g(arr)
            got = fusejit.jit(g)(arr)
            assert got.dtype == want.dtype and got.shape == want.shape, name
            if want.dtype.kind != "f" or "max" in name or "min" in name:
                assert np.array_equal(got, want, equal_nan=True), name
            elif "sum" in name or "add" in name or name == "method":
                exact = g(arr.astype(np.float64)) if want.dtype != np.float64 else want
                err = np.abs(got.astype(np.float64) - exact)
                bound = 4 * LONG * np.finfo(want.dtype).eps * np.nanmax(np.abs(arr) * 3)
                assert np.isnan(got).tolist() == np.isnan(want).tolist(), name
                assert np.nanmax(err) <= bound, (name, np.nanmax(err), bound)
            else:
                assert_same(got, want, rtol=1e-3 if want.dtype == np.float32 else 1e-9)


@pytest.mark.c_only  # the C backend's blocks
def test_blocked_scan_explain_and_fused_consumers() -> None:
    x = RNG.standard_normal(1 << 17)
    jf = fusejit.jit(lambda x: np.cumsum(np.exp(x)) / 3.0)
    assert "in 8 blocks per row" in str(jf.explain(x))
    np.testing.assert_allclose(jf(x), np.cumsum(np.exp(x)) / 3.0, rtol=1e-12)
    rows = RNG.standard_normal((64, 1 << 15))  # many rows: row by row, NumPy's exact order
    jr = fusejit.jit(lambda x: np.cumsum(x, axis=1))
    assert "blocks per row" not in str(jr.explain(rows))
    assert np.array_equal(jr(rows), np.cumsum(rows, axis=1))


@pytest.mark.c_only  # the C backend's OpenMP threads
def test_blocked_scan_does_not_depend_on_thread_count(tmp_path) -> None:
    import os
    import subprocess
    import sys

    script = ("import numpy as np, fusejit\n"
              "x = np.random.default_rng(5).standard_normal((1 << 20) + 3).astype(np.float32)\n"
              "f = fusejit.jit(lambda x: (np.cumsum(x), np.cumprod(x[:99999] * 0.1 + 1.0)))\n"
              "print(repr(tuple(v.tobytes() for v in f(x))))\n")
    outs = []
    for threads in ("1", "2", "3"):
        env = dict(os.environ, OMP_NUM_THREADS=threads, FUSEJIT_CACHE_DIR=str(tmp_path))
        proc = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True,
                              env=env, timeout=300)
        assert proc.returncode == 0, proc.stderr
        outs.append(proc.stdout)
    assert outs[0] == outs[1] == outs[2]


def test_tiled_row_scans_are_numpys_order() -> None:
    """Many rows advance R at a time (codegen/cscan_tiles.py): 8 float32/int32 rows or 4
    float64/int64 rows per vector; each row is still folded in NumPy's order, so results are
    bit-identical, with the leftover rows and a partial last block of columns, fused
    producers and consumers, 3-D and strided inputs."""
    x32 = RNG.standard_normal((2, 11, 37)).astype(np.float32)  # 22 rows: 2 groups + 6 left
    x64 = RNG.standard_normal((19, 45))[:, ::-1]  # strided rows, 4 groups + 3 left
    ints = RNG.integers(-9, 9, (21, 33)).astype(np.int32)  # cumsum in int64: 4 per vector

    def f(a, b, c):
        return (np.cumsum(a * 2.0, axis=2) + a, np.cumprod(b * 0.5 + 0.75, axis=1),
                np.cumsum(c, axis=1), np.cumprod(c.astype(np.float32), axis=1),
                np.cumsum(b.T, axis=0))

    jf = fusejit.jit(f)
    for got, want in zip(jf(x32, x64, ints), f(x32, x64, ints)):
        assert got.dtype == want.dtype and np.array_equal(got, want)
    if c_structure():
        text = str(jf.explain(x32, x64, ints))
        assert text.count("rows at a time") == 4  # not the last: a column-layout scan


@pytest.mark.c_only  # the C backend's stores
def test_tiled_scan_streams_large_outputs() -> None:
    """An output of 16 MiB or more is written with non-temporal stores from the line
    boundary its rows share (the columns before it stored as usual); rows whose starts sit
    at different offsets in their cache lines (2047 float32 columns) store as usual."""
    x = RNG.standard_normal((2048, 2049)).astype(np.float32)
    jf = fusejit.jit(lambda x: np.cumsum(x[:, 1:] * 2.0, axis=1))
    assert np.array_equal(jf(x), np.cumsum(x[:, 1:] * 2.0, axis=1))
    jg = fusejit.jit(lambda x: np.cumsum(x[:, :2048], axis=1) - 1.0)
    assert np.array_equal(jg(x), np.cumsum(x[:, :2048], axis=1) - 1.0)
    src = render(jg.lower_for(x).program, COptions())
    assert "fj_stream(p" in src and "__builtin_ia32_movntdq" in src


@pytest.mark.filterwarnings("ignore::RuntimeWarning")
def test_long_scans_of_folds_that_do_not_regroup() -> None:
    """subtract, divide and fmod accumulate in NumPy's order however long the row: a blocked
    scan (which folds block totals) gave subtract.accumulate of 2^16 integers off by 33198."""
    x = RNG.integers(-5, 5, 1 << 16)
    f = RNG.uniform(1.0, 3.0, 1 << 16)
    jf = fusejit.jit(lambda a, b: (np.subtract.accumulate(a), np.divide.accumulate(b),
                                   np.fmod.accumulate(b * 7), np.cumsum(a)))
    for got, want in zip(jf(x, f), (np.subtract.accumulate(x), np.divide.accumulate(f),
                                    np.fmod.accumulate(f * 7), np.cumsum(x))):
        assert got.dtype == want.dtype and np.array_equal(got, want, equal_nan=True)
    if c_structure():
        assert str(jf.explain(x, f)).count("blocks per row") == 1  # the cumsum only


# --- ufunc.reduce of ufuncs without a reduce node: a fold in order (frontend/scans.py) -------

@pytest.mark.filterwarnings("ignore::RuntimeWarning")
@pytest.mark.parametrize("ufunc", [np.logaddexp, np.logaddexp2, np.hypot, np.subtract,
                                   np.divide, np.fmax, np.arctan2, np.power])
def test_ufunc_reduce_folds_in_numpys_order(ufunc) -> None:
    """NumPy starts from `initial`, else the identity (hypot.reduce([-3.]) is 3.0), else the
    first element, and folds in order (C order over several axes); several axes of a
    non-reorderable ufunc, or an empty axis without identity, raise NumPy's ValueError."""
    x = RNG.standard_normal((3, 4, 5))
    if ufunc is np.power:
        x = np.abs(x) + 0.5

    def f(x):
        return (ufunc.reduce(x), ufunc.reduce(x, axis=1, keepdims=True),
                ufunc.reduce(x, axis=-1, initial=0.5), ufunc.reduce(x, axis=()),
                ufunc.reduce(x.astype(np.float32), axis=0), ufunc.reduce(x[:, :1], axis=1))

    run_both(f, x)
    run_both(lambda x: ufunc.reduce(x, axis=None), x)  # several axes: reorderable or not
    run_both(lambda x: ufunc.reduce(x, axis=(0, 2)), x)
    run_both(lambda x: ufunc.reduce(x[:, :0], axis=1), x)  # identity or ValueError
    run_both(lambda x: ufunc.reduce(x[0, 0, 0]), x)  # 0-d: a NumPy scalar


def test_ufunc_reduce_of_integers_and_bad_input() -> None:
    i = RNG.integers(1, 60, (4, 6))
    run_both(lambda i: (np.gcd.reduce(i), np.lcm.reduce(i, axis=1), np.bitwise_xor.reduce(i),
                        np.bitwise_and.reduce(i, axis=None), np.subtract.reduce(i, axis=0),
                        np.logaddexp.reduce(i.astype(np.int8), axis=1)), i)
    run_both(lambda i: np.logaddexp.reduce(i, axis=2), i)  # AxisError
    u = (i % 200).astype(np.uint8)  # the identity -1, cast: 255
    run_both(lambda u: (np.bitwise_and.reduce(u), np.bitwise_and.reduce(u[:, :0], axis=1),
                        np.gcd.reduce(u, axis=0)), u)
    with pytest.raises(fusejit.UnsupportedError, match=r"logaddexp\.reduce\(\.\.\., out="):
        fusejit.jit(lambda x: np.logaddexp.reduce(x, axis=0, out=np.zeros(6)))(i * 1.0)
    with pytest.raises(fusejit.UnsupportedError, match=r"logaddexp\.reduce\(\.\.\., where="):
        fusejit.jit(lambda x: np.logaddexp.reduce(x, axis=0, where=x > 9))(i * 1.0)
    text = str(fusejit.jit(lambda x: np.logaddexp.reduce(x, axis=1)).explain(i * 1.0))
    assert "scan" in text
