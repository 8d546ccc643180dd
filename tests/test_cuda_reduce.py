"""CUDA reductions and matmul without a GPU: launch plans (team per row, split full sums,
registers holding rows), golden files, every reduce fn and dtype and every matmul dtype
compiled to cubin with nvcc (sm_90 and sm_80), no float atomics in the PTX, and the host path
(device layout with scratch, launches, transfers) end to end against NumPy through the fake
pycuda of tests/cuda_fake.py, whose launches run the loop IR with NumPy."""

from __future__ import annotations

import os
import sys
from typing import Any

import cuda_fake
import numpy as np
import pytest
from test_cuda_codegen import GOLDEN, needs_nvcc, program_of

from fusejit.codegen.cuda import render_cuda
from fusejit.codegen.cuda_reduce_plan import plan_reduce
from fusejit.errors import UnsupportedError
from fusejit.lowering.loop_ir import Program, ReduceKernel
from fusejit.runtime import backend_cuda

f32, f64 = np.float32, np.float64
DTYPES = [np.bool_, np.int8, np.int32, np.int64, np.uint8, np.uint64, np.float16, f32, f64]
FNS = ["sum", "prod", "max", "min", "any", "all", "argmax", "argmin"]


def softmax(x):
    e = np.exp(x - x.max(axis=-1, keepdims=True))
    return e / e.sum(axis=-1, keepdims=True)


def layernorm(x, g, b):
    mu = x.mean(axis=-1, keepdims=True)
    var = ((x - mu) ** 2).mean(axis=-1, keepdims=True)
    return (x - mu) / np.sqrt(var + 1e-5) * g + b


def l2_sum(x):
    return np.sqrt(np.sum(x * x))


def _values(shape: tuple[int, ...], dtype: Any, seed: int = 0) -> np.ndarray:
    rng = np.random.default_rng(seed)
    dt = np.dtype(dtype)
    if dt == np.bool_:
        return rng.random(shape) < 0.5
    if dt.kind in "iu":
        lo = 0 if dt.kind == "u" else -3
        return rng.integers(lo, 4, shape).astype(dt)
    return rng.standard_normal(shape).astype(dt)


def _cases() -> dict[str, tuple[Any, tuple[Any, ...]]]:
    """name -> (function, example arguments) covering the reduction kernel shapes."""
    c: dict[str, tuple[Any, tuple[Any, ...]]] = {
        "softmax": (softmax, (_values((64, 1000), f32),)),
        "softmax_f64": (softmax, (_values((8, 300), f64),)),
        "softmax_long": (softmax, (_values((3, 40000), f32),)),  # split, 3 phases
        "softmax_1d": (softmax, (_values(1 << 14, f32),)),
        "layernorm": (layernorm, (_values((32, 768), f32), _values(768, f32),
                                  _values(768, f32))),
        "l2_sum": (l2_sum, (_values(1 << 15, f32),)),
        "small_rows": (lambda x: x.sum(axis=1), (_values((300, 5), f32),)),
        "mid_rows": (lambda x: x.max(axis=1), (_values((10, 100), f64),)),
        "many_long_rows": (lambda x: x.min(axis=1), (_values((1100, 5000), np.int32),)),
        "columns": (lambda x: x.sum(axis=0), (_values((50, 7), f32),)),
        "axes_02": (lambda x: x.sum(axis=(0, 2), keepdims=True), (_values((4, 3, 5), f64),)),
        "empty_rows": (lambda x: x.sum(axis=1), (np.ones((3, 0), f32),)),
        "nan_family": (lambda x: (np.nansum(x, axis=1), np.nanmax(x, axis=1),
                                  np.nanmin(x), np.nanmean(x, axis=0)),
                       (np.where(_values((20, 30), f32) > 1, np.nan, 1.0).astype(f32),)),
        "mean_var_std": (lambda x: (x.mean(), x.var(axis=1), x.std(axis=0)),
                         (_values((40, 60), f64),)),
        "argmax_split": (lambda x: (np.argmax(x), np.argmin(x)), (_values(1 << 13, f32),)),
        "power_check": (lambda x, y: (x ** y).sum(axis=1),
                        (np.ones((4, 8), np.int64), np.ones((4, 8), np.int64))),
        "f16_sum": (lambda h: (h.sum(axis=1), h.max(), h.astype(f32).mean()),
                    (_values((16, 64), np.float16),)),
    }
    for dt in DTYPES:
        for fn in FNS:
            if fn in ("sum", "prod") or dt != np.bool_ or fn in ("any", "all", "max", "min"):
                f = getattr(np, fn)
                c[f"{fn}_{np.dtype(dt).name}_rows"] = (lambda x, f=f: f(x, axis=1),
                                                       (_values((6, 50), dt),))
                c[f"{fn}_{np.dtype(dt).name}_full"] = (lambda x, f=f: f(x),
                                                       (_values(1 << 13, dt),))
    return c


CASES = _cases()


def _program(name: str) -> Program:
    fn, args = CASES[name]
    return program_of(fn, *args, name=name)


def test_launch_plans() -> None:
    sm = render_cuda(_program("softmax"))
    assert [k.role for k in sm.kernels] == ["rows"]  # one kernel: max, sum, store
    assert sm.kernels[0].block == 256 and sm.kernels[0].units == 64 and not sm.scratch_bytes
    k = _program("softmax").kernels[0]
    assert isinstance(k, ReduceKernel)
    pl = plan_reduce(k, _program("softmax"), sm.options)
    assert pl.parts == 1 and pl.hold == 4 and len(pl.held) == 2  # x and the stashed exp
    # 32 bytes held a thread: compiled for a full SM (8 blocks of 256, 32 registers)
    assert pl.min_blocks == 8 and "__launch_bounds__(256, 8)" in sm.body
    big = program_of(softmax, np.empty((4096, 4096), f32), name="big")
    pl = plan_reduce(big.kernels[0], big, sm.options)
    # rows held and read 16 bytes at a time: 16 elements a thread, 128 bytes held (no
    # register limit asked)
    assert (pl.team, pl.hold, pl.min_blocks, pl.vec) == (256, 16, 0, 4)
    with pytest.MonkeyPatch.context() as mp:  # 8 a thread: 64 bytes held, still a full SM
        mp.setattr("fusejit.codegen.cuda_reduce_plan.VEC_PER_THREAD", 8)
        mp.setattr("fusejit.codegen.cuda_reduce_plan.VEC_MIN_TEAM", 256)
        pl = plan_reduce(big.kernels[0], big, sm.options)
        assert (pl.team, pl.hold, pl.min_blocks, pl.vec) == (512, 8, 4, 4)
    short = program_of(softmax, np.empty((64, 1024), f32), name="short")
    pl = plan_reduce(short.kernels[0], short, sm.options)  # teams of 128 at least
    assert (pl.team, pl.hold, pl.vec) == (128, 8, 4)
    out = f"b{_program('softmax').outputs[0].index}["
    assert sm.body.count("fj_exp_f32(") == 1 and sm.body.count(out) == 1  # one store per element
    assert "__shfl_down_sync" in sm.prelude and "fj_team_reduce<256>" in sm.body

    l2 = render_cuda(program_of(l2_sum, np.empty(1 << 24, f32), name="l2"))
    assert [k.role for k in l2.kernels] == ["partial", "finish"]
    assert l2.kernels[0].units == 1024 and l2.kernels[0].scratch and l2.scratch_bytes >= 8192
    assert "atomicAdd" not in l2.body

    long = render_cuda(_program("softmax_long"))
    assert [k.role for k in long.kernels] == ["partial", "finish"] * 3
    small = render_cuda(_program("small_rows"))
    assert "fj_team_reduce<8>" in small.body and small.kernels[0].units == 300 * 8 // 256 + 1
    many = plan_reduce(_program("many_long_rows").kernels[0], _program("many_long_rows"),
                       small.options)
    assert many.parts == 1 and many.team == 1024 and many.hold == 0  # rows re-read in a loop
    empty = render_cuda(_program("empty_rows"))
    assert empty.kernels[0].units == 1  # the epilogue still stores the identity


def _check_golden(name: str, program: Program) -> None:
    for k in program.kernels:  # node ids depend on what was traced before
        k.nodes, k.locs = [], []
    body = render_cuda(program).body
    path = os.path.join(GOLDEN, f"cuda_{name}.cu")
    if os.environ.get("FUSEJIT_UPDATE_GOLDEN") == "1" or not os.path.exists(path):
        with open(path, "w", encoding="utf-8") as f:
            f.write(body)
    with open(path, encoding="utf-8") as f:
        assert body == f.read(), f"{path} differs (FUSEJIT_UPDATE_GOLDEN=1 regenerates it)"


def test_golden_softmax() -> None:
    _check_golden("softmax", program_of(softmax, np.ones((64, 1000), f32), name="softmax"))


def test_golden_l2_full_sum() -> None:
    _check_golden("l2_sum", program_of(l2_sum, np.empty(1 << 24, f32), name="l2_sum"))


def _gemm_cases() -> dict[str, tuple[Any, tuple[Any, ...]]]:
    mm = lambda a, b: a @ b  # noqa: E731
    c: dict[str, tuple[Any, tuple[Any, ...]]] = {}
    for dt in [f32, f64, np.float16, np.int8, np.int32, np.int64, np.uint64, np.bool_]:
        c[f"mm_{np.dtype(dt).name}"] = (mm, (_values((70, 33), dt), _values((33, 130), dt, 1)))
    c["mm_batched"] = (mm, (_values((3, 20, 17), f32), _values((17, 9), f32, 1)))
    c["mm_broadcast_batch"] = (mm, (_values((2, 1, 5, 6), f64), _values((4, 6, 3), f64, 1)))
    c["mm_transposed"] = (lambda a, b: a.T @ b.T, (_values((33, 70), f32),
                                                   _values((130, 33), f32, 1)))
    c["mm_vec"] = (lambda a, v: a @ v, (_values((40, 30), f64), _values(30, f64, 1)))
    c["mm_k0"] = (mm, (np.ones((4, 0), f32), np.ones((0, 5), f32)))
    c["mlp"] = (lambda x, w, b: np.maximum(x @ w + b, 0),
                (_values((64, 100), f32), _values((100, 50), f32, 1), _values(50, f32, 2)))
    return c


GEMM_CASES = _gemm_cases()


@needs_nvcc
@pytest.mark.parametrize("arch", ["sm_90", "sm_80"])
def test_reductions_and_matmuls_compile_to_cubin(arch: str) -> None:
    programs = [_program(n) for n in CASES]
    programs += [program_of(f, *a, name=n) for n, (f, a) in GEMM_CASES.items()]
    programs.append(program_of(l2_sum, np.empty(1 << 24, f32), name="l2_big"))
    modules = [render_cuda(p) for p in programs]
    source = modules[0].prelude + "".join(m.body for m in modules)
    cubin = backend_cuda.compile_cubin(source, arch)
    assert cubin[:4] == b"\x7fELF"
    names = [n for m in modules for n in m.kernel_names]
    assert len(names) > len(CASES) + len(GEMM_CASES)
    for name in names:
        assert name.encode() in cubin


@needs_nvcc
def test_ptx_uses_shuffles_and_no_float_atomics() -> None:
    src = render_cuda(_program("softmax"))
    ptx = backend_cuda.compile_ptx(src.source + render_cuda(_program("l2_sum")).body
                                   + render_cuda(_program("argmax_split")).body
                                   + render_cuda(_program("small_rows")).body).decode()
    assert "shfl.sync.down" in ptx and "shfl.sync.idx" in ptx and "bar.sync" in ptx
    assert not any(f"{op}.f32" in ptx or f"{op}.f64" in ptx
                   for op in ("atom.global.add", "red.global.add", "atom.add", "red.add"))


def test_unknown_kernel_kind_is_unsupported() -> None:
    class ColumnKernel:  # a kernel kind this renderer does not know
        name = "k0"

    p = _program("small_rows")
    p.kernels = [ColumnKernel()]  # type: ignore[list-item]
    with pytest.raises(UnsupportedError, match="ColumnKernel kernels .* not supported by "
                                               "the CUDA backend"):
        render_cuda(p)


def _run_fake(monkeypatch: pytest.MonkeyPatch, fn: Any, args: tuple[Any, ...]
              ) -> tuple[list[Any], Any]:
    images, driver = cuda_fake.install(monkeypatch)
    program = program_of(fn, *args)
    module = render_cuda(program)
    images[module.source.encode()] = (program, module)
    exe = backend_cuda.CudaExecutable(program, module)
    return exe.run(list(args)), exe


def _same(got: Any, expected: Any) -> None:
    got, expected = np.asarray(got), np.asarray(expected)
    assert got.shape == expected.shape and got.dtype == expected.dtype
    if expected.dtype.kind == "f":
        tol = 2e-3 if expected.dtype == np.float16 else 1e-5
        np.testing.assert_allclose(got, expected, rtol=tol, atol=tol)
    else:
        np.testing.assert_array_equal(got, expected)


@pytest.mark.parametrize("name", sorted(n for n in CASES if n != "power_check"))
def test_host_path_reductions(monkeypatch: pytest.MonkeyPatch, name: str) -> None:
    fn, args = CASES[name]
    got, exe = _run_fake(monkeypatch, fn, args)
    expected = fn(*args)
    expected = list(expected) if isinstance(expected, tuple) else [expected]
    assert len(got) == len(expected)
    for g, e in zip(got, expected):
        _same(g, e)
    assert exe.transfers["dtoh"] == 1  # the outputs and the error word in one transfer


@pytest.mark.parametrize("name", sorted(GEMM_CASES))
def test_host_path_matmuls(monkeypatch: pytest.MonkeyPatch, name: str) -> None:
    fn, args = GEMM_CASES[name]
    (got,), _ = _run_fake(monkeypatch, fn, args)
    _same(got, fn(*args))


def test_split_reduction_launches_and_scratch(monkeypatch: pytest.MonkeyPatch) -> None:
    x = _values(1 << 14, f32)
    (got,), exe = _run_fake(monkeypatch, softmax, (x,))
    _same(got, softmax(x))
    launches = sys.modules["pycuda.driver"].launches
    assert [n.rsplit("_", 1)[1] for n in launches] == ["p0", "f0", "p1", "f1", "p2", "f2"]
    lay = exe.layout
    assert lay.scratch >= exe.program.arena_bytes and lay.scratch % 256 == 0
    assert all(not lay.scratch <= off < lay.scratch + exe.module.scratch_bytes
               for off in lay.slots.values())


def test_reduction_error_word(monkeypatch: pytest.MonkeyPatch) -> None:
    x, y = np.arange(32, dtype=np.int64).reshape(4, 8), np.arange(32).reshape(4, 8) % 3
    images, _ = cuda_fake.install(monkeypatch)
    fn = CASES["power_check"][0]
    program = program_of(fn, x, y)
    module = render_cuda(program)
    assert module.kernels[0].checks and "atomicOr(fj_errp" in module.body
    images[module.source.encode()] = (program, module)
    exe = backend_cuda.CudaExecutable(program, module)
    _same(exe.run([x, y])[0], fn(x, y))
    with pytest.raises(ValueError, match="negative integer powers"):
        exe.run([x, -y])
    _same(exe.run([x, y])[0], fn(x, y))
