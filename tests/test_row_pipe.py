"""A streamed row kernel's last phase run one row late (codegen/crowpipe.py): the same bits as
running it in place, per row as in a small call that is not streamed, on every thread's range
(odd row counts), with NaN rows (the max phase's NaN rerun runs no deferred chunk twice),
float64 rows, several outer dims and a max phase before the last; not taken where the last
phase reads another row (layernorm, x / max) or reduces."""

from __future__ import annotations

import numpy as np
import pytest
from conftest import assert_same

import fusejit
from fusejit.codegen import crowpipe

pytestmark = pytest.mark.c_only  # the C source's row pipeline
RNG = np.random.default_rng(19)


def _softmax(x):
    e = np.exp(x - x.max(axis=-1, keepdims=True))
    return e / e.sum(axis=-1, keepdims=True)


def _spread(x):  # a max phase (NaN-aware rerun) before a last phase that reads no row
    return np.zeros_like(x) + x.max(axis=1, keepdims=True)


def _scaled(x):  # the last phase reads x: not deferred
    return x / x.max(axis=1, keepdims=True)


def _layernorm(x):
    m = x.mean(axis=-1, keepdims=True)
    v = ((x - m) ** 2).mean(axis=-1, keepdims=True)
    return (x - m) / np.sqrt(v + 1e-5)


def _kernel(jf, x) -> str:
    src = jf.lower_for(x).source
    return src[src.index("static int fj_k0"):]


def _unpiped(monkeypatch, f, x):
    """f(x) compiled with the last phase in place."""
    from fusejit.codegen import creduce
    from fusejit.runtime import source_cache
    monkeypatch.setattr(source_cache, "render_source", source_cache._render)  # render afresh
    monkeypatch.setattr(creduce, "row_pipe", lambda k, staged: None)
    jf = fusejit.jit(f)
    assert "fj_rows[2]" not in _kernel(jf, x)
    out = jf(x)
    monkeypatch.undo()
    return out


@pytest.mark.parametrize(("f", "shape", "dtype"), [
    (_softmax, (1031, 4096), np.float32),  # odd: the two threads' ranges differ in length
    (_softmax, (2, 517, 4096), np.float32),  # two outer dims carried
    (_softmax, (1031, 2100), np.float64),  # rows off the 64-byte lines
    (_spread, (1031, 4096), np.float32),  # the max phase is the one before the last
])
def test_deferred_last_phase_gives_the_same_bits(monkeypatch, f, shape, dtype) -> None:
    x = (RNG.standard_normal(shape) * 4).astype(dtype)
    flat = x.reshape(-1, shape[-1])
    flat[3, 7] = np.nan  # NaN rows: the max phase reruns them
    flat[-1, -1] = np.nan
    flat[500, :] = -np.inf
    flat[501, 9] = np.inf
    jf = fusejit.jit(f)
    kernel = _kernel(jf, x)
    assert f"fj_rows[2][{shape[-1]}]" in kernel and "if (fj_o > fj_lo) {" in kernel
    assert "const int64_t i0 = fj_p_i0;" in kernel and "if (fj_hi > fj_lo) {" in kernel
    got = jf(x)
    with np.errstate(invalid="ignore"):
        assert_same(got, f(x))
    np.testing.assert_array_equal(got, _unpiped(monkeypatch, f, x))  # bits, NaNs in place
    small = fusejit.jit(f)(x[..., :5, :] if len(shape) == 3 else x[:5])  # not streamed
    np.testing.assert_array_equal(got[..., :5, :] if len(shape) == 3 else got[:5], small)


@pytest.mark.parametrize("f", [_layernorm, _scaled])
def test_not_deferred_where_the_last_phase_reads_another_row(f) -> None:
    x = RNG.standard_normal((1031, 4096)).astype(np.float32)
    kernel = _kernel(fusejit.jit(f), x)
    assert "fj_stream_line(" in kernel and "fj_rows" not in kernel  # streamed, in place
    # layernorm's float32 means: ours summed in double, NumPy's pairwise in float32
    np.testing.assert_allclose(fusejit.jit(f)(x), f(x), rtol=1e-5, atol=1e-5)


def test_row_pipe_carries_the_row_indices_and_reduction_results() -> None:
    x = RNG.standard_normal((1031, 4096)).astype(np.float32)
    prog = fusejit.jit(_softmax).lower_for(x).program
    (k,) = prog.kernels
    pipe = crowpipe.row_pipe(k, 1)
    assert pipe is not None and pipe.carried[0] == ("i0", "int64_t")
    (last_reads,) = pipe.carried[1:]  # the row's sum, all the divide reads besides its row
    assert last_reads[1] == "float"
    assert crowpipe.row_pipe(k, 0) is None  # another row (the input's) in the last phase
    assert crowpipe.carry(pipe)[0] == "fj_p_i0 = i0;"
    assert crowpipe.declare(pipe)[0] == "int64_t fj_p_i0 = 0;"
    lines = crowpipe.deferred(pipe, "float", "fj_rows[0]", ["x();"], None)
    assert lines[0] == "{" and lines[-2:] == ["    x();", "}"]
    assert "    float *const fj_row = fj_rows[0];" in lines
