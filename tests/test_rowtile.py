"""Row tiles (codegen/c.py: row_tiled): kernels that read or write across rows (transposes) walk
their last two dims in tiles of ROW_TILE rows by COL_BLOCK points, and strides of a cache line
or more are opaque to gcc (opaque_strides) so such loops vectorise. Checked: which kernels are
tiled, that their loops vectorise, and NumPy's results for shapes that are not multiples of
the tile, 3-D, reversed, mixed layouts, in-place updates and `out=`."""

from __future__ import annotations

import re
import shutil
import subprocess
from pathlib import Path

import numpy as np
import pytest
from conftest import MARCH_FLAG, assert_same

import fusejit
from fusejit.codegen import c as cgen
from fusejit.codegen.c import COptions, render, row_tiled
from fusejit.frontend.trace import trace
from fusejit.lowering.lower import contiguous_strides, lower
from fusejit.lowering.memplan import plan
from fusejit.lowering.pipeline import optimise
from fusejit.runtime.toolchain import BASE_FLAGS


def _program(fn, args, strides=None):
    graph, _ = trace(fn, list(args))
    return plan(lower(optimise(graph), strides or [contiguous_strides(a.shape) for a in args]))


def test_which_kernels_are_tiled():
    x = np.zeros((64, 40), np.float32)
    assert all(row_tiled(k) for k in _program(lambda a: a.T + 1, [x]).kernels)
    assert not any(row_tiled(k) for k in _program(lambda a: a + 1, [x]).kernels)
    assert not any(row_tiled(k) for k in _program(lambda a: a[:, ::2] * 2, [x]).kernels)
    small = np.zeros((5, 3), np.float32)  # rows 5 apart: within a cache line
    assert not any(row_tiled(k) for k in _program(lambda a: a.T + 1, [small]).kernels)


def test_rendered_tile_and_opaque_stride():
    text = render(_program(lambda a: np.exp(a.T) + 1, [np.zeros((64, 40), np.float32)]),
                  COptions(vtile=True))
    assert f"for (int64_t fj_ir = 0; fj_ir < {cgen.ROW_TILE}; fj_ir++)" in text
    assert 'int64_t fj_s40 = 40; __asm__("" : "+r"(fj_s40));' in text
    assert "p0[j * fj_s40]" in text
    assert "call staging" not in text  # rows of COL_BLOCK points are not staged


@pytest.mark.skipif(shutil.which("gcc") is None, reason="gcc not found")
def test_tiled_loop_vectorises(tmp_path: Path):
    """exp(x.T): with the stride as a constant gcc 12 left the loop (and expf) scalar."""
    src = render(_program(lambda a: np.exp(a.T), [np.zeros((256, 256), np.float32)]),
                 COptions())
    path = tmp_path / "k.c"
    path.write_text(src)
    report = tmp_path / "vec.txt"
    flags = [f for f in BASE_FLAGS if f != "-shared"] + [MARCH_FLAG]
    subprocess.run(["gcc", *flags, "-fopenmp", "-c", str(path), "-o", str(tmp_path / "k.o"),
                    f"-fopt-info-vec-optimized={report}"], check=True)
    line = next(i for i, t in enumerate(src.splitlines(), 1) if "fj_exp_f32(v" in t)
    text = report.read_text()
    assert re.search(rf"k\.c:({line - 2}|{line - 1}|{line}):\d+: optimized: loop vectorized",
                     text), text


def _cases():
    rng = np.random.default_rng(11)
    f32 = lambda *s: rng.normal(size=s).astype(np.float32)  # noqa: E731
    return [
        ("T_plus_1", lambda a: a.T + 1, [f32(100, 37)]),
        ("T_exp_tanh", lambda a, b: np.exp(a.T) * np.tanh(b), [f32(70, 130), f32(130, 70)]),
        ("mixed", lambda a, b: a + b.T, [f32(129, 129), f32(129, 129)]),
        ("bcast_col", lambda a, b: a.T * b, [f32(65, 200), f32(200, 1)]),
        ("reversed", lambda a: a[::-1].T - a.T[:, ::-1], [f32(40, 33)]),
        ("3d", lambda a: np.transpose(a, (0, 2, 1)) * 2 + 1, [f32(3, 50, 20)]),
        ("f64", lambda a: np.sqrt(np.abs(a.T)) + a.T, [rng.normal(size=(90, 17))]),
        ("int8", lambda a: a.T // 3, [rng.integers(-100, 100, (20, 70), dtype=np.int8)]),
        ("one_row", lambda a: a.T + 1, [f32(1, 64)]),
        ("zero_size", lambda a: a.T + 1, [f32(0, 64)]),
        ("strided_view", lambda a: a[::2, 1::3].T * 3, [f32(90, 120)]),
    ]


@pytest.mark.parametrize("name,fn,args", _cases(), ids=[c[0] for c in _cases()])
def test_tiled_kernels_match_numpy(name, fn, args):
    with np.errstate(all="ignore"):
        want = fn(*args)
        got = fusejit.jit(fn)(*args)
    assert_same(got, want)


def test_in_place_through_a_transpose():
    def update(w, g):
        w[...] = w.T * 0.5 + g  # the right side is read before any of w is written
        return w

    def update_t(w, g):
        w.T[...] -= 0.1 * g.T
        return w

    rng = np.random.default_rng(3)
    for fn in (update, update_t):
        w, g = rng.normal(size=(96, 96)).astype(np.float32), rng.normal(size=(96, 96)).astype(
            np.float32)
        want = fn(w.copy(), g)
        got = fusejit.jit(fn)(w.copy(), g)
        assert_same(got, want)


def test_out_transposed_buffer():
    rng = np.random.default_rng(4)
    x = rng.normal(size=(80, 48)).astype(np.float32)
    buf = np.empty((80, 48), np.float32)
    f = fusejit.jit(lambda a: a.T * 2)
    got = f(x, out=buf.T)  # writes across rows of buf
    np.testing.assert_array_equal(buf.T, x.T * 2)
    assert got is buf.T or np.shares_memory(got, buf)
