"""Row kernels' speed paths (codegen/creduce.py, creread.py, cstream.py): float max/min over
long rows (NaN anywhere in a row, both signs, infinities, rows of -inf and of NaN, the lanes'
tail), softmax- and layernorm-like rows of several chunks, a sum of stored values taken from
the stored chunk, per-row values with no buffer, large outputs streamed from a staged row;
results as NumPy's. The next-row prefetch: tests/test_prefetch.py."""

from __future__ import annotations

import re

import numpy as np
import pytest
from conftest import assert_same

import fusejit

RNG = np.random.default_rng(16)


def _rows(x, y):
    e = np.exp(x - x.max(axis=1, keepdims=True))
    m = y.mean(axis=-1, keepdims=True)
    v = ((y - m) ** 2).mean(axis=-1, keepdims=True)
    return (x.max(axis=1), np.min(x, axis=1), y.max(axis=1), np.min(y, axis=-1),
            e / e.sum(axis=1, keepdims=True), (y - m) / np.sqrt(v + 1e-5))


def _long_rows(dtype, n: int = 2100) -> np.ndarray:
    """Rows of n points (two whole chunks of whole lane groups and a tail) with NaN at the
    first point, in the tail, in the middle (two NaNs of either sign), rows of -inf and of
    NaN, and infinities beside finite values."""
    x = (RNG.standard_normal((10, n)) * 3).astype(dtype)
    x[1, 0] = np.nan
    x[2, n - 1] = np.nan
    x[3, 700], x[3, 1500] = -np.nan, np.nan
    x[4] = -np.inf
    x[5, 5], x[5, 2000] = np.inf, -np.inf
    x[6] = np.nan
    x[7, 1030] = 1e30 if dtype == np.float32 else 1e300  # the extreme in the second chunk
    x[8, n - 2] = -1e30 if dtype == np.float32 else -1e300  # ... in the tail
    return x


ROWS = fusejit.jit(_rows)


@pytest.mark.filterwarnings("ignore::RuntimeWarning")
def test_long_rows_extremes_softmax_and_layernorm_match_numpy() -> None:
    x, y = _long_rows(np.float32), _long_rows(np.float64)
    with np.errstate(all="ignore"):
        want = _rows(x, y)
    assert_same(ROWS(x, y), want)
    assert_same(ROWS(x[:, :2048], y[:, :2048]), _rows(x[:, :2048], y[:, :2048]))


@pytest.mark.c_only  # the C source's sums
@pytest.mark.filterwarnings("ignore::RuntimeWarning")
def test_softmax_sum_rereads_the_stored_exp() -> None:
    jf = fusejit.jit(lambda a: _rows(a, a)[4])  # softmax alone
    for x in (_long_rows(np.float32), RNG.standard_normal((40, 64)).astype(np.float32)):
        with np.errstate(all="ignore"):
            assert_same(jf(x), _rows(x, x)[4])
        source = jf.lower_for(x).source
        kernels = source[source.index("static int fj_k0"):]
        # the sum re-reads the stored e (fj_reduce.h's fj_row_sum_f32)
        assert re.search(r"fj_a_\w+ \+= fj_row_sum_f32\(&b\d+\[", kernels)


def test_per_row_values_only_the_row_kernel_uses_are_not_stored() -> None:
    """layernorm's mean and sqrt(var + eps), broadcast along the row, are computed once a row
    in its kernel and used there alone: no buffer (session 12 stored both in the arena); a
    per-row value that another kernel reads is still stored."""

    def norm(x, g):
        m = x.mean(axis=-1, keepdims=True)
        v = ((x - m) ** 2).mean(axis=-1, keepdims=True)
        r = np.sqrt(v + 1e-5)
        return (x - m) / r * g, r[:, 0].sum()

    x = RNG.standard_normal((24, 700)).astype(np.float32)
    g = RNG.standard_normal(700).astype(np.float32)
    jf = fusejit.jit(lambda x, g: norm(x, g)[0])
    # (x - m cancels near the mean, where our double-accumulated mean differs from NumPy's)
    assert_same(jf(x, g), norm(x, g)[0], rtol=1e-5, atol=1e-5)
    assert jf.lower_for(x, g).program.arena_bytes == 0
    both = fusejit.jit(norm)
    assert_same(both(x, g), norm(x, g), rtol=1e-5, atol=1e-5)
    temps = [b.shape for b in both.lower_for(x, g).program.buffers if b.kind == "temp"]
    assert temps == [(24, 1)]  # r alone, read by the sum's kernel


def _softmax(x):
    e = np.exp(x - x.max(axis=1, keepdims=True))
    return e / e.sum(axis=1, keepdims=True)


def _softmax_into(x):
    x[...] = _softmax(x)


@pytest.mark.c_only  # the C source's streamed rows
def test_large_softmax_rows_stream_out_from_a_staged_row(monkeypatch) -> None:
    """An output of STREAM_BYTES or more whose rows the last phase writes is kept a row at a
    time on the stack and streamed out (codegen/cstream.py), the last phase's loop a cache
    line at a time straight to the output (stream_direct): rows of 2100 float32 (8400 bytes,
    so most rows start off a 64-byte line: partial lines at both ends), softmax's exp stashed
    in the staged row and read back; the same values as NumPy, in place too, and the same
    bits as streaming the staged row after the loop; rows of 1024 points are not staged."""
    x = RNG.standard_normal((2000, 2100)).astype(np.float32)  # 16.8 MB out
    jf = fusejit.jit(_softmax)
    source = jf.lower_for(x).source
    kernel = source[source.index("static int fj_k0"):]
    assert "fj_row[fj_c + j] = " in kernel and "fj_stream_line(fj_d + fj_q, fj_s);" in kernel
    assert "fj_sfence_rows();" in kernel and "b1[0 + i0" not in kernel.split("fj_d = ")[0]
    got = jf(x)
    assert_same(got, _softmax(x))
    from fusejit.codegen import creduce
    from fusejit.runtime import source_cache
    monkeypatch.setattr(source_cache, "render_source", source_cache._render)  # render afresh
    monkeypatch.setattr(creduce, "stream_direct", lambda lines, dst, ctype: lines)
    plain = fusejit.jit(_softmax)
    assert "fj_stream_row(&b1[" in plain.lower_for(x).source
    np.testing.assert_array_equal(got, plain(x))
    monkeypatch.undo()
    inplace, want = x.copy(), x.copy()
    _softmax_into(want)
    fusejit.jit(_softmax_into)(inplace)
    assert_same(inplace, want)
    short = jf.lower_for(x.reshape(-1)[:4100 * 1024].reshape(4100, 1024)).source
    assert "fj_stream_row(" not in short[short.index("static int fj_k0"):]


def _lane_fold_max(row: np.ndarray, lanes: int = 32, chunk: int = 1024) -> np.float32:
    """The C row max's order: lane l folds points q + l of each group of `lanes` of a chunk
    (the chunk's tail: lanes 0..), `a > v ? a : v`; then the lanes in order from -inf."""
    lm = [np.float32(-np.inf)] * lanes
    for c in range(0, len(row), chunk):
        part = row[c:c + chunk]
        for p, v in enumerate(part):
            lm[p % lanes] = lm[p % lanes] if lm[p % lanes] > v else v
    a = np.float32(-np.inf)
    for v in lm:
        a = a if a > v else v
    return a


@pytest.mark.c_only  # (the C backend's lane order; NumPy leaves the zero's sign open)
def test_row_max_zero_ties_keep_the_lane_fold_order() -> None:
    """Rows whose maximum is a zero held by lanes of both signs: the vectorised lane combine
    (codegen/clanes.py) returns the zero the sequential fold returns (the last lane's)."""
    rows = []
    for _ in range(24):
        r = -np.abs(RNG.standard_normal(1100)).astype(np.float32) - 1
        at = RNG.choice(1100, size=int(RNG.integers(1, 6)), replace=False)
        r[at] = np.where(RNG.random(len(at)) < 0.5, np.float32(-0.0), np.float32(0.0))
        rows.append(r)
    x = np.array(rows)
    got = fusejit.jit(lambda x: x.max(axis=1))(x)
    want = np.array([_lane_fold_max(r) for r in x])
    assert np.array_equal(np.signbit(got), np.signbit(want)) and np.array_equal(got, want)
