"""Prefetch hints (codegen/cprefetch.py, codegen/cscatter_par.py): a row kernel of 2+
phases fetches the next row while it computes from cache, the pieces of a parallel
accumulating scatter fetch their input streams ahead; the hints never change a result
(the last row's and the last piece's hints reach past the arrays, which prefetches may)."""

from __future__ import annotations

import numpy as np
import pytest
from conftest import run_both

import fusejit
from fusejit.codegen import cscatter_lanes
from fusejit.codegen.c import COptions, render

pytestmark = pytest.mark.c_only  # the C source's prefetches
RNG = np.random.default_rng(12)


def _source(f, *args) -> str:
    return render(fusejit.jit(f).lower_for(*args).program, COptions())


def test_multi_phase_rows_prefetch_the_next_row() -> None:
    def softmax(x):
        e = np.exp(x - x.max(axis=1, keepdims=True))
        return e / e.sum(axis=1, keepdims=True)

    x = RNG.standard_normal((37, 600)).astype(np.float32)
    src = _source(softmax, x)
    kernel = src[src.index("static int fj_k0"):]
    # A later phase calls exp: the row after the next of the input during the exp phase,
    # spread over the vector exp's steps where the build has one (a burst of a chunk's lines
    # stalls the core), the next row of the output (for writing) during the divide, a chunk
    # at a time; the last rows' next rows are themselves. Nothing during the max phase.
    assert "fj_o + 1 < fj_hi ? fj_o + 1 : fj_o" in kernel
    assert "fj_o + 2 < fj_hi ? fj_o + 2 : fj_o" in kernel
    end_max = kernel.index("const float v1 = (float)fj_a_v1;")
    assert "__builtin_prefetch(" not in kernel[:end_max]
    tile = kernel.index("fj_row_exp_pf_f32(&b1[0 + i0 * 600 + (fj_c + j) * 1], fj_ta_v4, fj_cn, "
                        "(const char *)&b0[0 + fj_m0 * 600 + fj_c], (int64_t)sizeof b0[0]);")
    # builds without the vector exp: the chunk's lines at its start
    later = kernel.index("#if !FJ_VTILE\n            for (int64_t fj_p = 0; fj_p < fj_cn; "
                         "fj_p += (int64_t)(64 / sizeof b0[0])) "
                         "__builtin_prefetch(&b0[0 + fj_m0 * 600 + fj_c + fj_p], 0, 3);")
    stores = kernel.index("__builtin_prefetch(&b1[0 + fj_n0 * 600 + fj_c + fj_p], 1, 3)")
    assert end_max < later < tile < kernel.index("fj_exp_f32(v3)") < stores
    # no vector math in the later phases (a centred sum of squares): one row ahead, there
    plain = _source(lambda x: ((x - x.mean(axis=1, keepdims=True)) ** 2).sum(axis=1), x)
    assert "fj_m0" not in plain and "__builtin_prefetch(&b0[0 + fj_n0 * 600" in plain
    run_both(softmax, x)
    run_both(softmax, x[:1])  # one row: its prefetches are of itself
    def kernels(src: str) -> str:
        return src[src.index("static int fj_k0"):]

    assert "prefetch" not in kernels(_source(lambda x: x.sum(axis=1), x))  # one phase
    short = kernels(_source(softmax, x[:, :300]))  # short rows
    assert "prefetch" not in short and "fj_row_exp_f32(" in short
    wide = RNG.standard_normal((3, 20000))  # 2 x 160 KB rows: more than PF_MAX_ROW_BYTES
    assert "prefetch" not in kernels(_source(softmax, wide))


def test_scatter_pieces_prefetch_their_streams() -> None:
    def hist(i, w):
        return np.bincount(i, weights=w * 2.0, minlength=64)

    i = RNG.integers(0, 64, (1 << 18) + 5)
    w = RNG.standard_normal((1 << 18) + 5).astype(np.float32)
    src = _source(hist, i, w)
    # per block of the pieces' lanes (codegen/cscatter_lanes.py): the lines of w and of i
    assert src.count("__builtin_prefetch(p") == cscatter_lanes.BLOCK * (4 + 8) // 64
    assert "fj_sv_t" in src  # the values a block ahead, read from vector lanes
    jf = fusejit.jit(hist)
    np.testing.assert_allclose(jf(i, w), hist(i, w), rtol=1e-12, atol=1e-9)


def test_row_max_min_fast_fold_keeps_nan_aware_results() -> None:
    """A phase of float max/min alone folds with plain selects and reruns a row that held a
    NaN with the NaN-aware fold (codegen/creduce.py): NaN rows, signed zeros and infinities
    give NumPy's extremes exactly, a fused softmax NumPy's values."""
    x = RNG.standard_normal((9, 70)).astype(np.float32)
    x[1, 3] = np.nan
    x[2, 69] = np.nan  # in the rest after the last whole lane group
    x[3] = 0.0
    x[3, ::2] = -0.0
    x[4, 5] = np.inf
    x[5, :] = -np.inf
    x[6, 10] = np.nan
    x[6, 11] = np.inf

    def f(x):
        e = np.exp(x - x.max(axis=1, keepdims=True))
        return x.max(axis=1), x.min(axis=1), np.maximum.reduce(x * 2, axis=1), e / e.sum(
            axis=1, keepdims=True)

    with np.errstate(invalid="ignore"):
        want = f(x)
        got = fusejit.jit(f)(x)
    for g, w in zip(got[:3], want[:3]):  # the extremes exactly, the sign of zero too
        assert g.dtype == w.dtype and np.array_equal(g, w, equal_nan=True)
        assert np.array_equal(np.signbit(g), np.signbit(w))
    np.testing.assert_allclose(got[3], want[3], rtol=1e-5, atol=1e-7)  # NaN rows: NaN
    run_both(lambda a: a.max(axis=1), x.astype(np.float64))
