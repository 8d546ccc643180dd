"""CUDA backend without a GPU: render traced programs, compile them with nvcc (cubin for sm_90,
several programs per nvcc call), golden files, the launch plan and device layout, the clear
errors when pycuda/a GPU is missing, and the whole host path of CudaExecutable against a fake
pycuda whose "kernels" run the loop IR with NumPy (tests/cuda_fake.py)."""

from __future__ import annotations

import dataclasses
import importlib.util
import json
import os
import re
import shutil
import sys
from typing import Any

import cuda_fake
import numpy as np
import pytest
import scipy.special

from fusejit.codegen.cuda import CudaModule, render_cuda
from fusejit.codegen.cuda_complex import header as complex_header
from fusejit.errors import FusejitError, RuntimeFailure
from fusejit.frontend.ops import OPS, ctype
from fusejit.frontend.ops_complex import PART_OPS
from fusejit.frontend.trace import trace
from fusejit.lowering.loop_ir import Program
from fusejit.lowering.lower import contiguous_strides, lower
from fusejit.lowering.memplan import plan
from fusejit.lowering.pipeline import optimise
from fusejit.runtime import backend_cuda, cuda_layout

GOLDEN = os.path.join(os.path.dirname(__file__), "golden")
needs_nvcc = pytest.mark.skipif(shutil.which("nvcc") is None and not os.path.exists(
    "/usr/local/cuda/bin/nvcc"), reason="nvcc (CUDA toolkit) is not installed")


def program_of(fn: Any, *args: Any, name: str | None = None) -> Program:
    """trace -> optimise -> lower -> memory plan, as jit.py does (no C compilation)."""
    graph, positions = trace(fn, list(args), frozenset(), name or fn.__name__)
    strides = []
    for node, pos in zip(graph.inputs, positions):
        a = args[pos]
        if isinstance(a, np.ndarray) and not a.flags.c_contiguous and a.size:
            strides.append(tuple(0 if n == 1 else s // a.itemsize
                                 for s, n in zip(a.strides, a.shape)))
        else:
            strides.append(contiguous_strides(node.shape))
    return plan(lower(optimise(graph), strides, blas=False, own_lapack=True))  # as jit.py


def gelu(x):
    return 0.5 * x * (1 + np.tanh(0.7978845608 * (x + 0.044715 * x * x * x)))


def lstm_cell(concat, c):
    i, j, f, o = np.split(concat, 4, axis=1)
    sig = lambda z: 1 / (1 + np.exp(-z))
    new_c = c * sig(f + 1.0) + sig(i) * np.tanh(j)
    return new_c, np.tanh(new_c) * sig(o)


def int_division(x, y):
    return x // y, x % y, np.fmod(x, y), x ** 2, np.right_shift(x, 3), np.abs(x)


def gemm_update(w, a, b, lr):
    w -= lr * (a @ b)
    return w


f32 = np.float32
CASES: dict[str, tuple[Any, tuple[Any, ...]]] = {
    "gelu": (gelu, (np.ones(1 << 15, f32),)),
    "lstm_cell": (lstm_cell, (np.ones((64, 256), f32), np.ones((64, 64), f32))),
    "broadcast": (lambda x, y, s: x * y + s, (np.ones((4, 1, 8)), np.ones((3, 1), f32), 2.5)),
    "transpose": (lambda x, y: x.T * 2 + y, (np.ones((16, 24), f32), np.ones(16, f32))),
    "int_div32": (int_division, (np.ones(100, np.int32), np.int32(3))),
    "int_div64": (int_division, (np.ones((5, 7), np.int64), np.ones((5, 1), np.int64))),
    "uint8": (lambda x, y: (x // y, x % y, x << y, np.minimum(x, y)),
              (np.ones(64, np.uint8), np.ones(64, np.uint8))),
    "float16": (lambda h, g: (np.sin(h) * g + h, (h * 2).astype(f32), np.exp(h)),
                (np.ones((4, 8), np.float16), np.ones(8, np.float16))),
    "specials": (lambda x: (np.where(x > 0, x, np.nan), x + np.inf, -np.inf * x,
                            x.astype(np.int32), x.astype(np.uint64),
                            np.int64(-2**63) + x.astype(np.int64), scipy.special.erf(x),
                            np.logaddexp(x, x)),
                 (np.ones(33),)),
    "strided": (lambda x, y: np.sqrt(x) + y[::-1], (np.ones(40, f32)[::-2], np.ones(20, f32))),
    "power_check": (lambda x, y: x ** y, (np.ones(8, np.int64), np.ones(8, np.int64))),
    "empty": (lambda x: x + 1, (np.ones((0, 3), f32),)),
    "gemm_update": (gemm_update, (np.ones((12, 7), f32), np.ones((12, 5), f32),
                                  np.ones((5, 7), f32), 0.5)),
    "gemm_update_f64": (gemm_update, (np.ones((3, 9, 4)), np.ones((3, 9, 6)), np.ones((6, 4)),
                                      np.float32(0.25))),
    "zero_size_std": (lambda x: (np.std(x, 1), np.var(x, 1, keepdims=True), np.std(x, 0)),
                      (np.ones((4, 0), f32),)),
    "complex": (lambda z, w: (np.exp(z) * w / (z + 1j), np.abs(z).astype(f32), z.sum(),
                              (z * w).prod()),
                (np.ones(40, np.complex64), np.ones(40, np.complex64))),
    "gather": (lambda e, t: (e[t] * 2, np.take(e, t, axis=1, mode="clip"),
                             np.take(e, t[0], axis=0, mode="wrap"), e[t].sum(axis=-1),
                             np.exp(e[t] - e[t].max(axis=1, keepdims=True))),
               (np.ones((10, 8), f32), np.ones((3, 4), np.int32))),
    # 0-d inputs the kernels take by value (fj_val<T>): bool, int8, float16, uint64, float
    "by_value": (lambda b, i, h, u, s, x: (np.where(b, x * i, h), x + u, (x * s).sum()),
                 (np.True_, np.int8(3), np.float16(0.5), np.uint64(7), 2.5,
                  np.ones((6, 40), f32))),
}


def render_case(name: str) -> CudaModule:
    fn, args = CASES[name]
    return render_cuda(program_of(fn, *args, name=name))


def test_render_plan() -> None:
    gelu_m = render_case("gelu")
    assert gelu_m.kernel_names == ["fj_gelu_k0"] and gelu_m.kernels[0].vector == 4
    assert "fj_vec<float, 4>" in gelu_m.body and "fj_sin" not in gelu_m.body
    assert gelu_m.kernels[0].grid == (1 << 15) // (256 * 4)
    json.dumps(gelu_m.plan())
    lstm = render_case("lstm_cell")
    assert len(lstm.kernels) == 1 and len(lstm.kernels[0].buffers) == 4  # ONE kernel, 2 outputs
    assert render_case("transpose").kernels[0].vector == 1  # strided load: scalar path only
    assert render_case("broadcast").kernels[0].vector == 2  # float64 -> double2
    assert render_case("float16").kernels[0].vector == 4  # float32 output limits the width
    assert render_case("power_check").kernels[0].checks
    assert "atomicOr(fj_errp" in render_case("power_check").body
    empty = render_case("empty")
    assert empty.kernels[0].size == 0 and empty.kernels[0].grid == 0
    small = program_of(lambda x: x + 1, np.ones(3, f32))
    assert "typedef int fj_idx" in render_cuda(small).body
    huge = program_of(lambda x: x + 1, np.broadcast_to(np.ones(1, f32), (1 << 31,)))
    assert "typedef long long fj_idx" in render_cuda(huge).body


def test_gemm_update_applies_alpha_and_beta() -> None:
    """`w -= lr * (a @ b)` is one gemm with alpha = -lr read at run time and beta = 1: the
    tiled kernel must scale the product and add it to C's old value, in NumPy's order (the
    product rounded to the dtype, times -lr, plus w), not store the bare product."""
    for name in ("gemm_update", "gemm_update_f64"):
        program = program_of(CASES[name][0], *CASES[name][1], name=name)
        (k,) = program.kernels
        assert k.beta == 1 and k.alpha == -1 and k.alpha_from is not None
        body = render_case(name).body
        t = "double" if name.endswith("f64") else "float"
        # (lr, a 0-d input the program only reads: a kernel parameter, by value)
        assert f"fj_val<{ctype(k.alpha_dtype)}> b{k.alpha_from.buf}" in body
        src = f"(({ctype(k.alpha_dtype)})(b{k.alpha_from.buf}[0]))"
        assert f"const {t} fj_alpha = ({t})-1.0 * ({t}){src};" in body
        c = f"b{k.c.buf}[fj_oc + fj_gm * "
        assert re.search(rf"{re.escape(c)}[^\n]*\] = \({t}\)\(\({t}\)\({re.escape(c)}"
                         rf"[^\n]*\) \+ fj_alpha \* \({t}\)fj_acc\[i\]\[j\]\);", body)
    plain = render_cuda(program_of(lambda a, b: a @ b, np.ones((4, 3), f32), np.ones((3, 2), f32)))
    assert "fj_alpha" not in plain.body  # a plain product stores the sum as it is


def test_zero_size_rows_hold_nothing() -> None:
    """A multi-phase reduction over rows of length 0 keeps no elements in registers (it once
    rendered `float fj_h0[0]` and an undeclared loop index)."""
    body = render_case("zero_size_std").body
    assert "[0];" not in body and "fj_u" not in body


def _check_golden(name: str) -> None:
    program = program_of(CASES[name][0], *CASES[name][1], name=name)
    for k in program.kernels:  # node ids and source lines depend on what ran before
        k.nodes, k.locs = [], []
    body = render_cuda(program).body.split(complex_header(), 1)[-1]  # (complex: the kernels)
    path = os.path.join(GOLDEN, f"cuda_{name}.cu")
    if os.environ.get("FUSEJIT_UPDATE_GOLDEN") == "1" or not os.path.exists(path):
        os.makedirs(GOLDEN, exist_ok=True)
        with open(path, "w", encoding="utf-8") as f:
            f.write(body)
    with open(path, encoding="utf-8") as f:
        assert body == f.read(), f"{path} differs (FUSEJIT_UPDATE_GOLDEN=1 regenerates it)"


@pytest.mark.parametrize("name", ["gelu", "lstm_cell", "complex"])
def test_golden(name: str) -> None:
    _check_golden(name)


@needs_nvcc
def test_cases_compile_to_cubin() -> None:
    modules = [render_case(n) for n in CASES]
    # (the prelude of a program calling scipy.special's functions has their headers too)
    prelude = next((m.prelude for m in modules if "fj_sp_" in m.body), modules[0].prelude)
    source = prelude + "".join(m.body for m in modules)
    cubin = backend_cuda.compile_cubin(source, "sm_90")
    assert cubin[:4] == b"\x7fELF"
    for m in modules:
        for name in m.kernel_names:
            assert name.encode() in cubin


@needs_nvcc
def test_wide_loads_in_ptx() -> None:
    ptx = backend_cuda.compile_ptx(render_case("gelu").source + render_case("broadcast").body)
    text = ptx.decode()
    assert "ld.global.v4" in text and "st.global.v4" in text  # float4
    assert "ld.global.nc.v2.f64" in text or "ld.global.v2.f64" in text  # double2


def _op_programs() -> list[Program]:
    dtypes = [np.bool_, np.int8, np.int32, np.int64, np.uint32, np.uint64, np.float16,
              np.float32, np.float64]
    programs = []
    for s in dtypes:
        for d in dtypes:
            programs.append(program_of(lambda x, d=d: x.astype(d), np.ones(32, s)[::2]))
    for name, op in OPS.items():
        if (op.kind != "elementwise" or name == "cast" or name.startswith("check_")
                or name in PART_OPS):
            continue  # check_* ops: NumPy functions' run-time errors (test_numpy_lib.py);
            # complex parts: test_complex_programs_compile_to_cubin
        fn = getattr(scipy.special, name, None) if op.ref is None else \
            getattr(np, op.ufunc_name or name, op.ref)  # (frexp's parts: their references)
        for dt in dtypes:
            if name == f"bitcast_{np.dtype(dt).name}":
                continue  # x.view(its own dtype) is x: no kernel
            args = [np.ones(32, dt)[::2]] * op.nin  # strided: scalar path only, faster nvcc
            if name == "where":
                args[0] = args[0].astype(bool)
            if name == "ldexp":  # an integer exponent, of both kinds
                args[1] = args[1].astype(np.int64 if dt == np.float64 else np.int32)
            try:
                programs.append(program_of(fn, *args, name=name))
            except (TypeError, FusejitError):
                continue  # NumPy has no loop for this dtype
    return programs


def _complex_programs() -> list[Program]:
    """Complex programs of every kind the CUDA backend renders for them: every complex op of
    the op table, casts to and from every dtype, constants, parts,
    sum/prod/mean reductions (a team per row, and split), cumsum/cumprod (a thread per row,
    and blocked), ufunc.at, gathers, matmuls (one updating its output in place), sorts and
    searches, in both precisions."""
    from fusejit.frontend.ops_complex import COMPLEX_C

    unary = [n for n, op in OPS.items() if n in COMPLEX_C and op.nin == 1
             and n not in PART_OPS and op.ref is not None]
    binary = [n for n, op in OPS.items() if n in COMPLEX_C and op.nin == 2
              and n not in PART_OPS and op.ref is not None]
    reals = [np.bool_, np.int8, np.int64, np.uint64, np.float16, np.float32, np.float64]

    def ops(z, w, x, i):
        out = [getattr(np, OPS[n].ufunc_name or n)(z) for n in unary]
        out += [getattr(np, OPS[n].ufunc_name or n)(z, w) for n in binary]
        out += [z.astype(d) for d in reals] + [x.astype(z.dtype), z * 1j - 2.5, z.real, z.imag,
                                                np.clip(z, w, z), np.where(x > 0, z, w), z[i]]
        return out

    def rows(z, big, w):
        np.multiply.at(z, [0, 2, 2], 1 + 1j)
        w -= 0.5 * (z[:4] @ z[:4].T.conj())
        s = np.sort(z, axis=0)
        return (z.sum(axis=1), z.prod(axis=1), big.sum(), big.mean(), np.cumsum(z, axis=1),
                np.cumprod(z, axis=0), np.cumsum(big), np.maximum.accumulate(big), z @ z.T,
                s, np.argsort(z, kind="stable"), np.searchsorted(s[:, 0], z[0], side="right"))

    progs = []
    for dt in (np.complex64, np.complex128):
        z = np.ones(16, dt)
        progs.append(program_of(ops, z, z, np.ones(16), np.ones(3, np.int32),
                                name=f"ops_{dt.__name__}"))
        progs.append(program_of(rows, np.ones((8, 6), dt), np.ones(70_000, dt),
                                np.ones((4, 4), dt), name=f"rows_{dt.__name__}"))
    return progs


def test_complex_renders_on_the_device_type() -> None:
    """Complex buffers are fj_c64 / fj_c128 (fj_complex_cuda.h after the prelude), no C99
    complex spelling reaches the kernels, elementwise kernels stay on the scalar path, and a
    real program's source does not change."""
    from fusejit.codegen.cuda_complex import header

    for m in (render_cuda(p) for p in _complex_programs()):
        kernels = m.body.split(header(), 1)[1]  # the device header, then the kernels
        assert "_Complex" not in kernels and "__real__" not in kernels
        assert re.search(r"fj_c(64|128) \*b\d", kernels)
        assert all(k.vector == 1 for k in m.kernels)
        # complex team accumulators (16 bytes) need an aligned team buffer
        assert "fj_sh[64] __attribute__((aligned(16)));" in kernels or "fj_op_mul()(fj_a" \
            not in kernels
    assert "fj_c64" not in render_case("gelu").source


@needs_nvcc
def test_complex_programs_compile_to_cubin() -> None:
    modules = [render_cuda(p) for p in _complex_programs()]
    source = modules[0].source + "".join(m.body for m in modules[1:])
    cubin = backend_cuda.compile_cubin(source, "sm_90")
    assert cubin[:4] == b"\x7fELF"
    for m in modules:
        for name in m.kernel_names:
            assert name.encode() in cubin


@needs_nvcc
def test_every_op_and_cast_compiles() -> None:
    programs = _op_programs()
    assert len(programs) > 500
    modules = [render_cuda(dataclasses.replace(p, name=f"p{i}")) for i, p in enumerate(programs)]
    rendered = {m.body.count("__global__") for m in modules}
    assert rendered == {1}
    # (the prelude of a program calling scipy.special's functions has their headers too)
    prelude = next((m.prelude for m in modules if "fj_sp_" in m.body), modules[0].prelude)
    source = prelude + "".join(m.body for m in modules)
    # to PTX: nvcc's front end and NVVM check every op's code; ptxas on these 500+ kernels
    # would add ~50 s (the cubin tests above and below run it on smaller sources)
    assert b".entry" in backend_cuda.compile_ptx(source, "compute_90")


@pytest.mark.skipif(importlib.util.find_spec("pycuda") is not None,
                    reason="pycuda is installed")
def test_unavailable_without_pycuda() -> None:
    ok, reason = backend_cuda.available()
    assert not ok and "pycuda is not installed" in reason
    module = render_case("gelu")
    with pytest.raises(RuntimeFailure, match=r"pycuda is not installed \(pip install"):
        backend_cuda.CudaExecutable(program_of(gelu, *CASES["gelu"][1]), module)


def test_device_layout_and_host_bytes() -> None:
    p = program_of(lambda x, y, s: (np.exp(x) + y) * s, np.ones(40, f32)[::-2],
                   np.ones((1 << 15, 20), f32), 3.0)
    lay = cuda_layout.device_layout(p)
    regions = sorted((lay.slots[b.index], lay.slots[b.index] + b.nbytes) for b in p.buffers)
    assert all(a[1] <= b[0] for a, b in zip(regions, regions[1:]))
    assert all(lay.slots[b.index] % 16 == 0 for b in p.buffers)
    assert lay.small[0] <= lay.slots[p.by_kind("input")[2].index] < lay.small[1]
    assert lay.out[0] == lay.err and lay.out[1] <= lay.total
    a = np.arange(40, dtype=f32)[::-2]
    b = p.by_kind("input")[0]
    raw = cuda_layout.host_bytes(a, b).view(f32)
    shift = lay.shift[b.index] // 4
    assert raw[shift] == a[0] and raw[shift - 19 * 2] == a[-1]
    with pytest.raises(RuntimeFailure, match="strides"):
        cuda_layout.host_bytes(np.ascontiguousarray(a), b)


# --- the host path against a fake pycuda (tests/cuda_fake.py) --------------------------------


def _fake_executable(monkeypatch: pytest.MonkeyPatch, fn: Any, *args: Any):
    images, _ = cuda_fake.install(monkeypatch)
    program = program_of(fn, *args)
    module = render_cuda(program)
    images[module.source.encode()] = (program, module)
    return backend_cuda.CudaExecutable(program, module), sys.modules["pycuda.gpuarray"]


def test_host_path_with_fake_pycuda(monkeypatch: pytest.MonkeyPatch) -> None:
    fn = lambda x, y, s: (np.exp(x) * y + s, (x[:, None] > y).astype(np.int8))
    x = np.linspace(-1, 1, 40, dtype=f32)[::-2]
    y = np.linspace(0, 3, 1 << 15, dtype=f32).reshape(-1, 1, 1)[:, :, [0]]
    exe, gpuarray = _fake_executable(monkeypatch, fn, x, y, 1.5)
    assert exe.transfers == {"htod": 0, "dtoh": 0}
    ok, reason = backend_cuda.available()
    assert ok and "Fake" in reason
    for _ in range(2):
        got = exe.run([x, y, 1.5])
        for g, e in zip(got, fn(x, y, 1.5)):
            assert g.dtype == e.dtype and g.shape == e.shape
            np.testing.assert_allclose(g, e, rtol=1e-6)
    # per call: big y, the packed x only when its bytes changed; outputs (s: by value)
    assert exe.transfers == {"htod": 3, "dtoh": 2}
    for s in (2.5, 2.5, 1.5):
        np.testing.assert_allclose(exe.run([x, y, s])[0], fn(x, y, s)[0], rtol=1e-6)
    assert exe.transfers == {"htod": 6, "dtoh": 5}
    dx = gpuarray.empty(x.shape, f32)  # contiguous: not the layout x was compiled for
    with pytest.raises(RuntimeFailure, match="strides"):
        exe.run([dx, gpuarray.empty(y.shape, f32), 1.5])


def test_device_outputs_and_errors_with_fake_pycuda(monkeypatch: pytest.MonkeyPatch) -> None:
    exe, gpuarray = _fake_executable(monkeypatch, lambda x, y: x ** y, np.ones(8, np.int64),
                                     np.ones(8, np.int64))
    x, y = np.arange(8, dtype=np.int64), np.arange(8, dtype=np.int64) % 3
    dx, dy = gpuarray.empty(x.shape, x.dtype), gpuarray.empty(y.shape, y.dtype)
    exe._cuda.memcpy_htod(dx.ptr, x)
    exe._cuda.memcpy_htod(dy.ptr, y)
    before = dict(exe.transfers)
    (out,) = exe.run([dx, dy])
    assert isinstance(out, gpuarray.GPUArray)
    np.testing.assert_array_equal(out.get(), x ** y)
    assert exe.transfers == {"htod": before["htod"], "dtoh": before["dtoh"] + 1}  # error word
    with pytest.raises(ValueError, match="negative integer powers"):
        exe.run([x, -y])
    np.testing.assert_array_equal(exe.run([x, y])[0], x ** y)  # the error word was cleared


def test_sort_scratch_arrays_are_aligned() -> None:
    """Each array of a sort block's scratch starts where its type may be read (the H100
    reported a misaligned address for float64 values after a row of one 64-bit key and its
    uint32 position), for rows of every length up to 2^12."""
    from fusejit.codegen.cuda_sort import SortLayout
    from fusejit.lowering.loop_ir import Sort

    for dt in (np.float64, np.int64, np.float32, np.int8, np.float16):
        for mode in ("sort", "stable", "arg"):
            for n in range(1, 1 << 12, 37):
                lay = SortLayout(Sort("v", mode, "x", np.dtype(dt)), n)
                assert lay.x_at % 4 == 0 and lay.v_at % 16 == 0 and lay.block_bytes % 256 == 0
                assert lay.v_at >= lay.x_at + (4 * lay.p if lay.carry and not lay.packed else 0)
