"""Column reductions (issue 3): reductions whose kept axis is the contiguous one (`x.sum(axis=0)`
of a C-contiguous x) take the column layout of ReduceKernel. Results against NumPy (hypothesis
over shapes with size-0 and size-1 axes, keepdims, dtypes, layouts, NaNs), fused producers and
consumers, the layout choice, accuracy against NumPy's row-by-row sums, and determinism across
calls and thread counts.
"""

from __future__ import annotations

import contextlib
import math
import os
import subprocess
import sys
import warnings

import numpy as np
import pytest
from conftest import c_structure, match_mask
from hypothesis import given, note
from hypothesis import strategies as st

import fusejit
from fusejit.lowering.loop_ir import ReduceKernel
from fusejit.lowering.memplan import check_plan

REDUCTIONS = {
    "sum": lambda x, ax, kd: x.sum(axis=ax, keepdims=kd),
    "mean": lambda x, ax, kd: x.mean(axis=ax, keepdims=kd),
    "prod": lambda x, ax, kd: np.prod(x, axis=ax, keepdims=kd),
    "max": lambda x, ax, kd: x.max(axis=ax, keepdims=kd),
    "min": lambda x, ax, kd: np.min(x, axis=ax, keepdims=kd),
    "any": lambda x, ax, kd: np.any(x, axis=ax, keepdims=kd),
    "all": lambda x, ax, kd: np.all(x, axis=ax, keepdims=kd),
    "argmax": lambda x, ax, kd: np.argmax(x, axis=ax, keepdims=kd),
    "argmin": lambda x, ax, kd: np.argmin(x, axis=ax, keepdims=kd),
    "var": lambda x, ax, kd: x.var(axis=ax, keepdims=kd),
    "std": lambda x, ax, kd: np.std(x, axis=ax, keepdims=kd, ddof=1),
    "nansum": lambda x, ax, kd: np.nansum(x, axis=ax, keepdims=kd),
    "nanmax": lambda x, ax, kd: np.nanmax(x, axis=ax, keepdims=kd),
    "nanmean": lambda x, ax, kd: np.nanmean(x, axis=ax, keepdims=kd),
    "ptp": lambda x, ax, kd: np.ptp(x, axis=ax, keepdims=kd),
}
ARG = ("argmax", "argmin")  # one axis only
DTYPES = [np.float32, np.float64, np.float16, np.int32, np.uint8, np.int64, np.bool_]
ROWS = [0, 1, 2, 5, 33, 70]  # 33 and 70 rows: several chunks of rows, one partial
COLS = [1, 2, 3, 17, 130]  # 130 columns: more than one block of columns
LAYOUTS = ["c", "rowstep", "colstep", "reversed", "fortran", "offset"]


def _layout(x: np.ndarray, layout: str) -> np.ndarray:
    """The same values as `x` in another memory layout (a view where it can be one)."""
    if layout == "rowstep":
        big = np.repeat(x, 2, axis=0)
        return big[::2]
    if layout == "colstep":
        big = np.repeat(x, 2, axis=-1)
        return big[..., ::2]
    if layout == "reversed":
        return np.ascontiguousarray(x[::-1])[::-1]
    if layout == "fortran":
        return np.asfortranarray(x)
    if layout == "offset":
        big = np.zeros((x.shape[0] + 1,) + x.shape[1:], x.dtype)
        big[1:] = x
        return big[1:]
    return np.ascontiguousarray(x)


def _data(rng: np.random.Generator, shape: tuple[int, ...], dtype: type, nans: bool
          ) -> np.ndarray:
    dtype = np.dtype(dtype)
    if dtype == np.bool_:
        return rng.integers(0, 2, shape).astype(bool)
    if dtype.kind in "iu":
        return rng.integers(0, 4 if dtype == np.uint8 else 9, shape).astype(dtype) - (
            0 if dtype.kind == "u" else 4)
    x = (rng.standard_normal(shape) * 3).astype(dtype)
    if nans and x.size:
        x.flat[rng.integers(0, x.size, max(1, x.size // 7))] = np.nan
    return x


def _tolerance(x: np.ndarray, rows: int, dtype: np.dtype) -> tuple[float, float]:
    """(rtol, atol) for a reduction of `rows` rows of `x` into `dtype`: NumPy adds rows one by
    one for these axes, so its own error grows like rows * eps * max|x|."""
    if dtype.kind != "f":
        return 0.0, 0.0
    eps = float(np.finfo(dtype).eps)
    finite = np.asarray(x, dtype=np.float64)
    scale = float(np.max(np.abs(finite[np.isfinite(finite)]), initial=1.0))
    return 8 * eps, 4 * eps * max(rows, 1) * scale * scale


def check_like_numpy(f, *xs: np.ndarray, rows: int = 1) -> None:
    """jit(f)(*xs) against f(*xs): exception type, dtype, shape, values within tolerance."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        with np.errstate(all="ignore"):
            try:
                exp = f(*xs)
            except Exception as e:  # noqa: BLE001 - the compiled function must raise the same
                with pytest.raises(type(e)):
                    fusejit.jit(f)(*xs)
                return
            got = fusejit.jit(f)(*xs)
    outs = exp if isinstance(exp, tuple) else (exp,)
    gots = got if isinstance(got, tuple) else (got,)
    for g, e in zip(gots, outs):
        g, e = np.asarray(g), np.asarray(e)
        assert g.dtype == e.dtype and g.shape == e.shape, (g.dtype, g.shape, e.dtype, e.shape)
        rtol, atol = _tolerance(xs[0], rows, e.dtype)
        ok = match_mask(g, e, rtol, atol)
        if e.dtype == np.float16:  # NumPy rounds each partial float16 sum; we round once
            with np.errstate(all="ignore"):
                ref = np.asarray(f(*(x.astype(np.float32) for x in xs))).astype(np.float16)
            ok |= match_mask(g, ref, rtol, atol)
        assert ok.all(), f"got {g!r}\nexpected {e!r}"


def _bind(name: str, axis, keepdims: bool):
    fn = REDUCTIONS[name]
    return lambda x: fn(x, axis, keepdims)


@st.composite
def cases(draw: st.DrawFn):
    kind = draw(st.sampled_from(["2d", "3d01", "3d1"]))
    rows, cols = draw(st.sampled_from(ROWS)), draw(st.sampled_from(COLS))
    if kind == "2d":
        shape, axis, nrows = (rows, cols), 0, rows
    elif kind == "3d01":
        lead = draw(st.sampled_from([1, 2, 3]))
        shape, axis, nrows = (lead, rows, cols), (0, 1), lead * rows
    else:
        lead = draw(st.sampled_from([1, 2, 4]))
        shape, axis, nrows = (lead, rows, cols), 1, rows
    name = draw(st.sampled_from(sorted(REDUCTIONS)))
    if name in ARG and isinstance(axis, tuple):
        axis = 1
    return (shape, axis, nrows, name, draw(st.booleans()), draw(st.sampled_from(DTYPES)),
            draw(st.sampled_from(LAYOUTS)), draw(st.integers(0, 5)) == 0,
            draw(st.integers(0, 2**32 - 1)))


@given(cases())
def test_column_reductions_match_numpy(case) -> None:
    shape, axis, rows, name, keepdims, dtype, layout, nans, seed = case
    x = _layout(_data(np.random.default_rng(seed), shape, dtype, nans), layout)
    note(f"{name} axis={axis} keepdims={keepdims} {np.dtype(dtype)}{list(shape)} {layout}")
    check_like_numpy(_bind(name, axis, keepdims), x, rows=rows)


# --- fused producers and consumers ------------------------------------------------------------

def _softmax0(x):
    e = np.exp(x - x.max(axis=0, keepdims=True))
    return e / e.sum(axis=0, keepdims=True)


FUSED = {
    "sqdiff": lambda x, y: ((x - y) ** 2).sum(axis=0),
    "center": lambda x, y: x - x.mean(axis=0),
    "batchnorm": lambda x, y: (x - x.mean(axis=0)) / np.sqrt(x.var(axis=0) + 1e-5) * y[0],
    "softmax0": lambda x, y: _softmax0(x),
    "relu_grad": lambda x, y: (x * (y > 0)).sum(axis=0),
    "keepdims_consumer": lambda x, y: x.sum(axis=0, keepdims=True) * 2 + y[:1],
    "several": lambda x, y: (x.sum(axis=0), y.max(axis=0), (x * y).mean(axis=0),
                             np.argmin(x, axis=0)),
    "mean_axis1_3d": lambda x, y: (x.reshape(2, -1, x.shape[1]).mean(axis=1)),
}


@pytest.mark.parametrize("name", sorted(FUSED))
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("shape", [(70, 130), (2, 9), (40, 1)])
def test_fused_column_reductions(name, dtype, shape) -> None:
    rng = np.random.default_rng(1)
    x = rng.standard_normal(shape).astype(dtype)
    y = rng.standard_normal(shape).astype(dtype)
    check_like_numpy(lambda a, b: FUSED[name](a, b), x, y, rows=shape[0])


# --- the layout is chosen ---------------------------------------------------------------------

def _reduce_kernels(f, *args) -> list[ReduceKernel]:
    return [k for k in fusejit.jit(f).lower_for(*args).program.kernels
            if isinstance(k, ReduceKernel)]


@pytest.mark.parametrize("f", [lambda x: x.sum(axis=0), lambda x: x.mean(axis=0),
                               lambda x: x - x.mean(axis=0), lambda x: x[::3].max(axis=0),
                               lambda x: x.reshape(4, 16, 64).sum(axis=(0, 1)),
                               lambda x: x.reshape(4, 16, 64).argmax(axis=1)])
def test_axis0_takes_the_column_layout(f) -> None:
    x = np.ones((64, 64), np.float32)
    ks = _reduce_kernels(f, x)
    assert ks and all(k.layout == "columns" for k in ks)
    if c_structure():  # the C source's comment (the CUDA kernels read any layout)
        assert "column reduction" in fusejit.jit(f).lower_for(x).source


@pytest.mark.parametrize("f", [lambda x: x.sum(axis=1), lambda x: x.sum(),
                               lambda x: x.T.sum(axis=0), lambda x: x[:, :1].sum(axis=0)])
def test_row_reductions_keep_the_row_layout(f) -> None:
    x = np.ones((64, 64), np.float32)
    ks = _reduce_kernels(f, x)
    assert ks and all(k.layout == "rows" for k in ks)


# --- accuracy ---------------------------------------------------------------------------------

@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_column_sum_at_least_as_accurate_as_numpy(dtype) -> None:
    rng = np.random.default_rng(7)
    x = (rng.random((20000, 5)) + np.array([0.1, 1.0, 1e3, -1e-3, 0.5])).astype(dtype)
    exact = np.array([math.fsum(col) for col in x.astype(np.float64).T])
    got = fusejit.jit(lambda a: a.sum(axis=0))(x).astype(np.float64)
    ours = np.abs(got - exact) / np.abs(exact)
    theirs = np.abs(x.sum(axis=0).astype(np.float64) - exact) / np.abs(exact)
    eps = np.finfo(dtype).eps
    assert np.all(ours <= np.maximum(theirs, eps)), (ours, theirs)
    assert np.all(ours <= 4 * eps)  # a pairwise sum: NumPy's row-by-row sum is far off here


# --- determinism ------------------------------------------------------------------------------

def test_same_bits_across_calls() -> None:
    x = np.random.default_rng(5).standard_normal((3001, 700)).astype(np.float32) * 100
    f = fusejit.jit(lambda a: (a.sum(axis=0), a.var(axis=0), a - a.mean(axis=0)))
    first = [r.tobytes() for r in f(x)]
    for _ in range(3):
        assert [r.tobytes() for r in f(x)] == first


@pytest.mark.c_only  # the CPU's threads (OMP_NUM_THREADS), in a subprocess
def test_same_bits_on_one_and_two_threads(tmp_path) -> None:
    script = (
        "import numpy as np, fusejit\n"
        "x = np.random.default_rng(3).standard_normal((3001, 1500)).astype(np.float32) * 100\n"
        "f = fusejit.jit(lambda x: (x.sum(axis=0), x.mean(axis=0), x.var(axis=0),\n"
        "                           x.max(axis=0), (x * x).astype(np.float64).sum(axis=0),\n"
        "                           x - x.mean(axis=0)))\n"
        "print(repr(tuple(v.tobytes() for v in f(x))))\n")
    outs = []
    for threads in ("1", "2"):
        env = dict(os.environ, OMP_NUM_THREADS=threads,
                   FUSEJIT_CACHE_DIR=str(tmp_path))
        proc = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True,
                              env=env, timeout=300)
        assert proc.returncode == 0, proc.stderr
        outs.append(proc.stdout)
    assert outs[0] == outs[1]


# --- row split: short rows read whole by parts of rows (ccolumns.column_split) ----------------

SPLIT = ("sum", "mean", "max", "min", "any", "all", "nansum", "nanmax")


@contextlib.contextmanager
def _small_parts():
    """Split column reductions at test sizes: parts of 64 elements, no size threshold."""
    from fusejit.codegen import ccolumns

    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(ccolumns, "SPLIT_MIN_ELEMS", 64)
        mp.setattr(ccolumns, "SPLIT_MIN_BYTES", 0)
        yield


@pytest.mark.parametrize("shape, dtype, f, parts", [
    ((131072, 256), np.float32, lambda x: x.sum(axis=0), True),
    ((1 << 20, 16), np.float64, lambda x: x.max(axis=0, keepdims=True), True),
    ((300000, 3), np.float32, lambda x: (x > 0).any(axis=0), True),
    ((2048, 1024), np.float32, lambda x: x.sum(axis=0), False),  # in cache, 4 column blocks
    ((4096, 4096), np.float32, lambda x: x.sum(axis=0), False),  # long rows: column blocks
    ((131072, 256), np.int32, lambda x: x.sum(axis=0), False),  # int64 sums: not in a double
    ((131072, 256), np.float32, lambda x: np.argmax(x, axis=0), False),
    ((131072, 256), np.float64, lambda x: np.prod(x, axis=0), False),  # stays in row order
    ((64, 64), np.float32, lambda x: x.sum(axis=0), False),
])
def test_column_split_plan(shape, dtype, f, parts) -> None:
    from fusejit.codegen.ccolumns import CHUNK_ROWS, column_split

    x = np.empty(shape, dtype)  # never touched: only lowered
    (k,) = _reduce_kernels(f, x)
    nparts, per = column_split(k)
    assert (nparts > 0) == parts
    if parts:
        rows = shape[0]
        assert nparts >= 4 and per % CHUNK_ROWS == 0
        assert (nparts - 1) * per < rows <= nparts * per
        assert nparts * shape[1] <= 1 << 14  # the parts' results fit the entry's stack


def test_tall_variance_runs_as_two_split_passes() -> None:
    """x.var(axis=0) of tall data: the mean, then the squared deviations, each a kernel of
    its own split among the threads (fusion.spills: 131072-row column blocks do not stay in
    cache between the passes); in cache it stays one two-phase kernel."""
    from fusejit.codegen.ccolumns import column_split

    tall = _reduce_kernels(lambda x: x.var(axis=0), np.empty((131072, 256), np.float32))
    assert len(tall) == 2 and all(column_split(k)[0] > 0 for k in tall)
    (small,) = _reduce_kernels(lambda x: x.var(axis=0), np.empty((2048, 64), np.float32))
    assert len(small.phases) == 2


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_passes_over_tall_columns_match_numpy(dtype) -> None:
    """Kernels split by fusion.spills (8192 rows x 64 columns x 4 bytes > 1 MiB) still give
    NumPy's results: centring, variance, a batch norm, and an independent sum joined with the
    mean in one pass."""
    rng = np.random.default_rng(11)
    x = (rng.standard_normal((8192, 200)) * 3 + 1).astype(dtype)
    g, b = rng.standard_normal(200).astype(dtype), rng.standard_normal(200).astype(dtype)
    fns = [lambda x, g, b: x - x.mean(axis=0),
           lambda x, g, b: x.var(axis=0) * g,
           lambda x, g, b: (x - x.mean(axis=0)) / np.sqrt(x.var(axis=0) + 1e-5) * g + b,
           lambda x, g, b: (x.sum(axis=0), x.max(axis=0) - x.mean(axis=0), x * b)]
    for f in fns:
        c = fusejit.jit(f).lower_for(x, g, b)
        check_plan(c.program)
        got, want = fusejit.jit(f)(x, g, b), f(x, g, b)
        # NumPy sums axis 0 row by row in the array's dtype, fusejit in double (float32) or
        # pairwise: norm-wise, fusejit's error against a float64 (longdouble) reference must
        # be no larger than NumPy's, up to a few ULP (x - mean cancels).
        wide = np.longdouble
        ref = f(x.astype(wide), g.astype(wide), b.astype(wide))
        ulp = float(np.finfo(dtype).eps)
        for gv, wv, rv in zip(*(r if isinstance(r, tuple) else (r,) for r in (got, want, ref))):
            assert gv.dtype == wv.dtype and gv.shape == wv.shape
            e_fj, e_np = (float(np.linalg.norm((v - rv).astype(np.float64))) for v in (gv, wv))
            assert e_fj <= e_np * 1.01 + 4 * ulp * float(np.linalg.norm(rv.astype(np.float64)))


@st.composite
def split_cases(draw: st.DrawFn):
    rows = draw(st.sampled_from([257, 1000, 2049]))  # at least 4 parts of 64 rows
    cols = draw(st.sampled_from([1, 3, 17, 130]))
    name = draw(st.sampled_from(SPLIT))
    dtype = draw(st.sampled_from([np.float32, np.float64, np.float16] if name not in
                                 ("any", "all") else [np.bool_, np.float32, np.int32]))
    return ((rows, cols), name, draw(st.booleans()), dtype,
            draw(st.sampled_from(["c", "rowstep", "colstep", "offset"])),
            draw(st.integers(0, 3)) == 0, draw(st.integers(0, 2**32 - 1)))


@given(split_cases())
def test_row_split_matches_numpy(case) -> None:
    shape, name, keepdims, dtype, layout, nans, seed = case
    x = _layout(_data(np.random.default_rng(seed), shape, dtype, nans), layout)
    note(f"{name} keepdims={keepdims} {np.dtype(dtype)}{list(shape)} {layout}")
    f = _bind(name, 0, keepdims)
    with _small_parts():
        # (colstep: not columns; float16 extremes are composed with the first zero's sign,
        # frontend/half_ties.py)
        half_extreme = np.dtype(dtype) == np.float16 and name in ("max", "min", "nanmax", "nanmin")
        if layout != "colstep" and shape[1] > 1 and c_structure() and not half_extreme:
            assert "parts of" in fusejit.jit(f).lower_for(x).source
        check_like_numpy(f, x, rows=shape[0])


def test_row_split_fused_and_several() -> None:
    rng = np.random.default_rng(11)
    x = rng.standard_normal((999, 40)).astype(np.float32)
    y = rng.standard_normal((999, 40)).astype(np.float32)
    x[5, 3] = np.nan

    def f(a, b):
        return (((a - b) ** 2).sum(axis=0), b.max(axis=0), (a * b).mean(axis=0, keepdims=True),
                np.min(b, axis=0) * 2 + 1)

    with _small_parts():
        if c_structure():
            assert fusejit.jit(f).lower_for(x, y).source.count("parts of") >= 1
        check_like_numpy(f, x, y, rows=999)


# --- short rows: reductions of at most a cache line per point take the column layout ----------

@pytest.mark.parametrize("shape, dtype, columns", [
    ((4096, 3), np.float32, True), ((4096, 16), np.float32, True),
    ((4096, 17), np.float32, False), ((4096, 8), np.float64, True),
    ((4096, 9), np.float64, False), ((32, 3), np.float32, False),  # too few points
    ((64, 4, 4), np.float32, True),  # two reduced dims of one line together
])
def test_short_rows_take_the_column_layout(shape, dtype, columns) -> None:
    x = np.empty(shape, dtype)
    axes = tuple(range(1, len(shape)))
    (k,) = _reduce_kernels(lambda a: np.sqrt((a * a).sum(axis=axes)), x)
    assert (k.layout == "columns") == columns


@st.composite
def short_cases(draw: st.DrawFn):
    shape = (draw(st.sampled_from([64, 65, 300])), draw(st.integers(1, 16)))
    name = draw(st.sampled_from(sorted(REDUCTIONS)))
    return (shape, name, draw(st.booleans()), draw(st.sampled_from(DTYPES)),
            draw(st.sampled_from(LAYOUTS)), draw(st.integers(0, 5)) == 0,
            draw(st.integers(0, 2**32 - 1)))


@given(short_cases())
def test_short_row_reductions_match_numpy(case) -> None:
    shape, name, keepdims, dtype, layout, nans, seed = case
    x = _layout(_data(np.random.default_rng(seed), shape, dtype, nans), layout)
    note(f"{name} keepdims={keepdims} {np.dtype(dtype)}{list(shape)} {layout}")
    check_like_numpy(_bind(name, 1, keepdims), x, rows=shape[1])


def test_short_row_sums_at_least_as_accurate_as_numpy() -> None:
    rng = np.random.default_rng(9)
    x = (rng.random((5000, 16)) * np.array([1e4, 1.0, -1e-3, 3.0] * 4)).astype(np.float32)
    exact = np.array([math.fsum(row) for row in x.astype(np.float64)])
    got = fusejit.jit(lambda a: a.sum(axis=1))(x).astype(np.float64)
    ours, theirs = np.abs(got - exact), np.abs(x.sum(axis=1).astype(np.float64) - exact)
    assert np.all(ours <= theirs)
    assert np.all(ours <= np.spacing(np.abs(exact).astype(np.float32)))  # within one ulp
