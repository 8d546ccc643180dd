"""CUDA backend: 0-d inputs the kernels only read (Python scalars, NumPy scalars and 0-d
arrays) are kernel parameters passed by value (codegen/cuda_base.by_value, the `fj_val<T>`
of program.cu.j2), so that a call with device arrays and a scalar that changes every call
copies nothing to the device. Checked over the fake pycuda, both interpreting the loop IR and
running the generated CUDA compiled for the CPU (tests/cuda_emu.py, which reads each kernel's
parameters from the launch's buffer at the CUDA ABI's offsets): values and dtypes as NumPy's
(NEP 50's weak Python scalars included), the transfers counted by the executable, a 0-d
device array in place of a scalar, and a 0-d input updated in place (still a pointer)."""

from __future__ import annotations

import os
import re
import shutil
import struct
import sys
from typing import Any

import cuda_fake
import numpy as np
import pytest

import fusejit
from fusejit.codegen.cuda_base import by_value
from fusejit.runtime.cuda_layout import arg_format, value_param

f32 = np.float32


@pytest.fixture(params=[False, True], ids=["interpret", "emulate"])
def fake(request: Any, monkeypatch: pytest.MonkeyPatch) -> tuple[Any, Any]:
    """(pycuda.driver, pycuda.gpuarray) of the fake, a user context current."""
    images, _ = cuda_fake.install(monkeypatch, emulate=request.param)
    driver, gpuarray = sys.modules["pycuda.driver"], sys.modules["pycuda.gpuarray"]
    driver.Device(0).retain_primary_context().push()
    driver.images = images
    return driver, gpuarray


def _exe(f: Any) -> Any:
    (entry,) = f._cache.values()
    return entry.executable


def test_changing_float_with_device_arrays_copies_nothing(fake: tuple[Any, Any]) -> None:
    driver, gpuarray = fake
    rng = np.random.default_rng(0)
    hx, hy = (rng.standard_normal(1000).astype(f32) for _ in range(2))
    x, y = gpuarray.to_gpu(hx), gpuarray.to_gpu(hy)
    axpy = fusejit.jit(lambda a, x, y: a * x + y, backend="cuda")
    for step in range(6):
        a = 0.5 + step / 7  # a new learning rate every call
        got = axpy(a, x, y)
        np.testing.assert_array_equal(got.get(), a * hx + hy)
        assert got.dtype == (a * hx + hy).dtype
    exe = _exe(axpy)
    assert exe.transfers["htod"] == 0  # nothing sent: `a` rides in the launch
    assert exe.layout.scalars == 0 and exe.values
    assert len(driver.packed) >= 6  # launched through _launch_kernel, parameters packed
    (program, module), = driver.images.values()
    assert re.search(r"fj_val<double> b\d+", module.source)  # (the float as NumPy holds it)
    text = str(axpy.explain(0.5, x, y))
    sec = text.split("== host-device copies per call ==\n")[1].split("\n== ")[0]
    assert re.search(r"input\d \(scalars, 0-d arrays\): kernel parameters, passed by value", sec)
    assert "first 0 B" not in text and "packed copy" not in text.split("device arrays as")[1]
    # host arrays: the packed copy holds x and y only; a new `a` alone sends nothing
    before = exe.transfers["htod"]
    for a in (0.25, 0.75):
        np.testing.assert_array_equal(axpy(a, hx, hy), a * hx + hy)
    assert exe.transfers["htod"] - before == 1


SCALARS = [
    1.5, -3, True, 2 - 0.5j, f32(0.3), np.float64(-1e300), np.int8(-7), np.uint16(9),
    np.float16(0.1), np.complex64(1 + 2j), np.bool_(False), np.array(2.5, f32),
    np.array(-4, np.int64), np.array(1 - 1j, np.complex128), np.array(True),
    np.array(7, np.uint8),
]


@pytest.mark.parametrize("x_dtype", [np.float32, np.int16, np.complex64, np.bool_])
def test_values_and_dtypes_as_numpy(fake: tuple[Any, Any], x_dtype: Any) -> None:
    """Every kind of scalar with arrays of several dtypes (NEP 50: a Python scalar is weak,
    a NumPy scalar or 0-d array is not), host and device arrays, two values per signature."""
    _, gpuarray = fake
    hx = (np.arange(12) % 5 - 2).astype(x_dtype).reshape(3, 4)
    dx = gpuarray.to_gpu(hx)

    def f(s, x):
        return x * s + s

    jf = fusejit.jit(f, backend="cuda")
    for s in SCALARS:
        if isinstance(s, int) and not isinstance(s, bool) and x_dtype == np.bool_:
            continue
        with np.errstate(all="ignore"):
            want = f(s, hx)
            second = f(s * 2 if not isinstance(s, (bool, np.bool_)) else s, hx)
        s2 = s * 2 if not isinstance(s, (bool, np.bool_)) else s
        if isinstance(s, np.ndarray) and s.dtype == np.bool_:
            s2 = ~s
            second = f(s2, hx)
        with np.errstate(all="ignore"):
            for arg, expect in ((s, want), (s2, second)):
                host = jf(arg, hx)
                dev = jf(arg, dx).get()
                for got in (host, dev):
                    assert got.dtype == expect.dtype and got.shape == expect.shape, (s, x_dtype)
                    np.testing.assert_allclose(got, expect, rtol=1e-6)


def test_zero_d_device_array_for_a_scalar(fake: tuple[Any, Any]) -> None:
    """A 0-d device array passed where the kernels take a value: its address goes in the
    parameter (nothing read back to the host), calls with Python values mixed in between."""
    _, gpuarray = fake
    hx = np.linspace(-1, 1, 37).astype(f32)
    x = gpuarray.to_gpu(hx)
    f = fusejit.jit(lambda s, x: s * x + 1, backend="cuda")
    for s in (f32(2), f32(-3), f32(0.5)):
        np.testing.assert_array_equal(f(gpuarray.to_gpu(np.array(s)), x).get(), s * hx + 1)
        np.testing.assert_array_equal(f(s, x).get(), s * hx + 1)
        np.testing.assert_array_equal(f(np.array(s * 2), x).get(), s * 2 * hx + 1)


def test_zero_d_input_updated_in_place_stays_a_pointer(fake: tuple[Any, Any]) -> None:
    """A 0-d input the program writes is no value parameter: a 0-d device array is updated
    in place, a host 0-d array is sent and copied back; the scalar beside it goes by value."""
    driver, gpuarray = fake
    hx = np.arange(8, dtype=f32)
    x = gpuarray.to_gpu(hx)

    def acc(total, lr, x):
        total += lr * x.sum()
        return x * lr

    f = fusejit.jit(acc, backend="cuda")
    t = gpuarray.to_gpu(np.array(1.0, f32))
    want = np.array(1.0, f32)
    for lr in (0.5, 0.25, 2.0):
        got = f(t, lr, x)
        w = acc(want, lr, hx)
        np.testing.assert_allclose(got.get(), w, rtol=1e-6)
        np.testing.assert_allclose(t.get(), want, rtol=1e-6)
    exe = _exe(f)
    program = exe.program
    (total,) = [b for b in program.by_kind("input") if b.ref in program.updates]
    (lr,) = [b for b in program.by_kind("input") if b.dtype == np.float64]
    assert not total.shape and total.index not in exe.values and lr.index in exe.values
    ht = np.array(3.0, f32)
    for lr in (1.0, 0.5):
        want_t = ht.copy()
        w = acc(want_t, lr, hx)
        np.testing.assert_allclose(f(ht, lr, hx), w, rtol=1e-6)
        np.testing.assert_allclose(ht, want_t, rtol=1e-6)


def test_gemm_alpha_by_value(fake: tuple[Any, Any]) -> None:
    """`w -= lr * (g.T @ h)` on device arrays: alpha is read from the parameter."""
    _, gpuarray = fake
    rng = np.random.default_rng(3)
    hg, hh, hw = (rng.standard_normal(s).astype(f32) for s in ((5, 6), (5, 4), (6, 4)))
    g, h, w = gpuarray.to_gpu(hg), gpuarray.to_gpu(hh), gpuarray.to_gpu(hw)

    def step(w, g, h, lr):
        w -= lr * (g.T @ h)

    f = fusejit.jit(step, backend="cuda")
    want = hw.copy()
    for lr in (0.5, 0.125):
        f(w, g, h, lr)
        step(want, hg, hh, lr)
        np.testing.assert_allclose(w.get(), want, rtol=1e-5, atol=1e-6)
    assert _exe(f).transfers["htod"] == 0


def test_parameter_layout() -> None:
    """fj_val<T>'s layout: the address, then the value at its alignment (fj_c128: 16)."""
    assert value_param(np.dtype(np.float64)) == (8, 16, 8)
    assert value_param(np.dtype(np.bool_)) == (8, 16, 8)
    assert value_param(np.dtype(np.complex64)) == (8, 16, 8)
    assert value_param(np.dtype(np.complex128)) == (16, 32, 16)
    fmt = arg_format([None, np.dtype(np.complex128), np.dtype(np.int8), None])
    assert fmt == "P8x32s16sP" and struct.calcsize(fmt) == 72  # c128's at 16, not 8


def test_by_value_rule() -> None:
    """Only 0-d inputs the program does not update in place."""
    from fusejit.lowering.loop_ir import Buffer, Program

    def buf(i: int, shape: tuple[int, ...], kind: str = "input") -> Buffer:
        return Buffer(i, kind, np.dtype(f32), shape, (1,) * len(shape), 4, ref=i)

    p = Program("p", [buf(0, ()), buf(1, ()), buf(2, (3,)), buf(3, (), "output")], [], [], [],
                updates=[1])
    assert by_value(p) == {0}


@pytest.mark.skipif(shutil.which("nvcc") is None and not os.path.exists(
    "/usr/local/cuda/bin/nvcc"), reason="nvcc (CUDA toolkit) is not installed")
def test_complex_values_compile() -> None:
    """fj_val<fj_c64> / fj_val<fj_c128> (16-byte aligned) through nvcc."""
    from test_cuda_codegen import program_of

    from fusejit.codegen.cuda import render_cuda
    from fusejit.runtime import backend_cuda

    def f(a, b, z):
        return z * a + b, (z * b).sum()

    m = render_cuda(program_of(f, np.complex64(1 + 2j), np.complex128(3j),
                               np.ones(40, np.complex64)))
    assert "fj_val<fj_c64>" in m.body and "fj_val<fj_c128>" in m.body
    assert backend_cuda.compile_cubin(m.source, "sm_90")[:4] == b"\x7fELF"


def test_emulator_reads_parameters_at_their_alignment() -> None:
    """The emulator's thunk lays a kernel's parameters out as the CUDA ABI does and refuses a
    buffer of another size: a fj_val<fj_c128> packed at offset 8 instead of 16 is caught."""
    import cuda_emu
    from test_cuda_codegen import program_of

    from fusejit.codegen.cuda import render_cuda

    m = render_cuda(program_of(lambda x, a: x * a, np.ones(4, np.complex128), np.complex128(2),
                               name="c128"))
    (k,) = m.kernels
    assert "(const fj_c128 *b0, fj_val<fj_c128> b1, fj_c128 *b2)" in m.body
    assert arg_format([None, np.dtype(np.complex128), None]) == "P8x32sP"  # 56 bytes
    lib = cuda_emu.build(m.source)
    with pytest.raises(RuntimeError, match="48 bytes of parameters, the kernel's take 56"):
        cuda_emu.launch(lib, k.name, 1, 32, struct.pack("=Q32sQ", 0, bytes(32), 0))
