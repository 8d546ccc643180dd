"""A fake pycuda for tests on machines without a GPU: device memory is a bytearray, and a
kernel launch runs the launched loop-IR kernel with NumPy (tests/cuda_fake_kernels.py).

It checks the host side of the CUDA backend (device layout, transfers, argument lists, the
scratch area, the error word, GPUArray in/out, fusejit.jit wiring) end to end. By default it
does NOT check the generated CUDA itself: the kernels of a reduction split into parts run as
one NumPy reduction at the launch that finishes it (the partial launches only check their
arguments). `install(..., emulate=True)` (FUSEJIT_TEST_FAKE_CUDA=emulate) runs the generated
CUDA instead, compiled for the CPU by tests/cuda_emu.py.
"""

from __future__ import annotations

import importlib.machinery
import mmap
import struct
import sys
import threading
import types
from typing import Any

import cuda_emu
import numpy as np
import pytest
from cuda_fake_kernels import interpret, store_gemm

from fusejit.codegen.cuda import CudaModule
from fusejit.codegen.cuda_base import by_value
from fusejit.lowering.loop_ir import Program
from fusejit.lowering.lower import contiguous_strides
from fusejit.runtime import backend_cuda, cuda_blas, cuda_interop, cuda_jit
from fusejit.runtime.cuda_layout import arg_format, value_param

OTHER_GPU = 1 << 40  # addresses the fake's cuPointerGetAttribute places on GPU 1


class Memory:
    """Device memory: `size` bytes of anonymous mmap (pages are only committed when written,
    so a Memory that outlives its test, held by a cached executable, costs what it used) with
    a bump allocator."""

    def __init__(self, size: int = 1 << 32) -> None:
        self.buf = mmap.mmap(-1, size)
        self.top = 4096
        self.allocs = 0  # cuMemAlloc calls (mem_alloc and every new GPUArray)

    def alloc(self, n: int) -> int:
        self.allocs += 1
        addr, self.top = self.top, (self.top + n + 255) // 256 * 256
        if self.top > len(self.buf):
            raise FakeError("out of memory")
        return addr

    def read(self, addr: np.ndarray, dtype: np.dtype) -> np.ndarray:
        raw = np.frombuffer(self.buf, np.uint8)
        return raw[addr[:, None] + np.arange(dtype.itemsize)].reshape(-1).view(dtype)

    def write(self, addr: np.ndarray, values: np.ndarray) -> None:
        if not len(addr):
            return
        raw = np.frombuffer(self.buf, np.uint8)
        raw[addr[:, None] + np.arange(values.itemsize)] = values.view(np.uint8).reshape(
            len(addr), -1)


class Allocation:
    """pycuda.driver.DeviceAllocation: what a GPUArray's `gpudata` holds (int() = address)."""

    def __init__(self, addr: int) -> None:
        self.addr = addr

    def __int__(self) -> int:
        return self.addr


class FakeError(Exception):
    """pycuda.driver.Error"""


def fake_pycuda(mem: Memory, images: dict[bytes, tuple[Program, CudaModule]],
                emulate: bool = False) -> dict[str, Any]:
    """sys.modules entries for pycuda, pycuda.driver and pycuda.gpuarray; `images` maps the
    bytes a module is loaded from to the Program and CudaModule they were compiled from.
    `emulate`: launches run the generated CUDA itself on the CPU (tests/cuda_emu.py) instead
    of interpreting the loop IR."""
    launches: list[str] = []
    packed: list[str] = []  # the launches made through _launch_kernel
    launch_contexts: list[Any] = []  # the context current at each kernel launch
    pointers: dict[tuple[int, int], dict[int, int]] = {}
    local = threading.local()  # each thread's context stack, as the CUDA driver keeps it

    def stack() -> list[Any]:
        if not hasattr(local, "stack"):
            local.stack = []
        return local.stack

    def current() -> None:
        """Like every driver call: a context must be current in this thread (on pycuda's
        stack, or made current below it with cuCtxSetCurrent: `bare`)."""
        if not stack() and getattr(local, "bare", None) is None:
            raise FakeError("invalid device context")

    def launching() -> None:
        current()
        launch_contexts.append(stack()[-1] if stack() else local.bare)

    def set_current(c: Any) -> None:
        """cuCtxSetCurrent where no context is current (backend_cuda._set_driver_current):
        current for the driver, not on pycuda's stack (which must be empty when a thread
        ends: real pycuda aborts the process otherwise)."""
        if not stack() and getattr(local, "bare", None) is None:
            local.bare = c

    def params_of(program: Program, ln: Any, first: int = 0) -> str:
        """The launch's parameter format (runtime/cuda_layout.arg_format), from its own
        reading of which buffers are passed by value."""
        values = by_value(program)
        return arg_format([None] * first + [program.buffers[b].dtype if b in values else None
                                            for b in ln.buffers]
                          + [None] * (ln.scratch + ln.checks))

    values_at: dict[tuple[int, int], int] = {}  # (launch, parameter) -> where its value is

    def addresses(program: Program, ln: Any, args: tuple, first: int = 0) -> list[int]:
        """The launch's arguments as device addresses: a by-value parameter's (bytes: the
        fj_val) is the 0-d device array's it holds, or a place in device memory its value
        is written to for this launch."""
        out = []
        for i, a in enumerate(args):
            if isinstance(a, bytes):
                dt = program.buffers[ln.buffers[i - first]].dtype
                at, size, _ = value_param(dt)
                assert len(a) == size and not any(a[at + dt.itemsize:]) and not any(a[8:at])
                p = int.from_bytes(a[:8], "little")
                if not p:
                    key = (id(ln), i)
                    if key not in values_at:
                        values_at[key] = mem.alloc(64)
                    p = values_at[key]
                    mem.buf[p:p + dt.itemsize] = a[at:at + dt.itemsize]
                a = p
            out.append(a)
        return out

    class EpilogueFn:
        """A cuBLAS gemm's epilogue kernel: C = beta * C + alpha * P, P contiguous."""

        def __init__(self, program: Program, launch: Any) -> None:
            self.program, self.launch = program, launch

        def prepare(self, fmt: str) -> EpilogueFn:
            assert fmt == params_of(self.program, self.launch, 1)
            self.arg_format = fmt
            return self

        def prepared_call(self, grid: tuple, block: tuple, p: int, *args: Any) -> None:
            current()
            ln = self.launch
            assert 1 <= grid[0] and block == (ln.block, 1, 1) and len(args) == len(ln.buffers)
            struct.pack(self.arg_format, p, *args)  # (as pycuda packs them: types and sizes)
            launches.append(ln.name)
            k = self.program.kernels[ln.kernel]
            count = int(np.prod(k.batch, dtype=np.int64)) * k.m * k.n
            product = mem.read(p + np.arange(count) * k.dtype.itemsize, k.dtype)
            ptr = dict(zip(ln.buffers, addresses(self.program, ln, args)))
            store_gemm(k, self.program, ptr, mem, product)

    class Fn:
        def __new__(cls, program: Program, module: CudaModule, name: str) -> Any:
            epi = [e for e in module.epilogues if e.name == name]
            return EpilogueFn(program, epi[0]) if epi else super().__new__(cls)

        def __init__(self, program: Program, module: CudaModule, name: str) -> None:
            self.program, self.module = program, module
            self.launch = next(k for k in module.kernels if k.name == name)
            same = [k.name for k in module.kernels if k.kernel == self.launch.kernel]
            self.last = same[-1] == name  # the launch that completes its loop-IR kernel

        def prepare(self, fmt: str) -> Fn:
            assert fmt == params_of(self.program, self.launch)
            self.arg_format, self.texrefs = fmt, []  # as pycuda's prepare sets them
            return self

        def _launch_kernel(self, grid: tuple, block: tuple, buf: bytes, shared: int,
                           stream: Any) -> None:
            """What pycuda's prepared_call ends with: the arguments packed in `buf`."""
            assert shared == 0 and stream is None and isinstance(buf, bytes)
            packed.append(self.launch.name)
            self.prepared_call(grid, block, *struct.unpack(self.arg_format, buf))

        def prepared_call(self, grid: tuple, block: tuple, *args: Any) -> None:
            launching()
            ln = self.launch
            assert 1 <= grid[0] and block == (ln.block, 1, 1) and ln.block <= 1024
            assert len(args) == len(ln.buffers) + ln.scratch + ln.checks
            if ln.scratch:
                scratch = args[len(ln.buffers)]
                assert scratch % 256 == 0 and scratch + self.module.scratch_bytes <= mem.top
            launches.append(ln.name)
            if emulate:  # the parameter buffer, with host addresses for device ones
                base = cuda_emu.host_address(mem.buf)
                host = [base + a if isinstance(a, int) else a if not any(a[:8]) else
                        (base + int.from_bytes(a[:8], "little")).to_bytes(8, "little") + a[8:]
                        for a in args]
                cuda_emu.launch(cuda_emu.build(self.module.source), ln.name, grid[0],
                                ln.block, struct.pack(self.arg_format, *host),
                                threaded=ln.role != "elementwise")
                return
            args = tuple(addresses(self.program, ln, args))
            # a split reduction's launches each get the buffers of their own phase
            ptr = pointers.setdefault((id(self.program), ln.kernel), {})
            ptr.update(zip(ln.buffers, args))
            if self.last:
                interpret(self.program.kernels[ln.kernel], self.program, ptr, mem,
                          args[-1] if ln.checks else None)

    class GPUArray:
        def __init__(self, shape: Any, dtype: Any) -> None:
            current()
            self.shape = tuple(shape) if isinstance(shape, (tuple, list)) else (shape,)
            self.dtype = np.dtype(dtype)
            self.size = int(np.prod(self.shape))
            self.strides = tuple(s * self.dtype.itemsize for s in contiguous_strides(self.shape))
            self.gpudata = Allocation(mem.alloc(self.size * self.dtype.itemsize))

        @property
        def ptr(self) -> int:
            return int(self.gpudata)

        @property
        def __cuda_array_interface__(self) -> dict[str, Any]:
            return {"shape": self.shape, "strides": self.strides, "data": (self.ptr, False),
                    "typestr": self.dtype.str, "stream": None, "version": 3}

        def get(self) -> np.ndarray:
            current()
            n = self.size * self.dtype.itemsize
            return np.frombuffer(bytes(mem.buf[self.ptr:self.ptr + n]), self.dtype).reshape(
                self.shape)

    def to_gpu(a: np.ndarray) -> GPUArray:
        g = GPUArray(a.shape, a.dtype)
        htod(g.ptr, a)
        return g

    def htod(dst: int, src: np.ndarray) -> None:
        current()
        data = np.ascontiguousarray(src).view(np.uint8).reshape(-1)
        mem.buf[dst:dst + data.size] = data.tobytes()

    def dtoh(dst: np.ndarray, src: int) -> None:
        current()
        dst.view(np.uint8).reshape(-1)[:] = np.frombuffer(bytes(mem.buf[src:src + dst.nbytes]),
                                                          np.uint8)

    def load(image: bytes) -> Any:
        program, module = images[image]
        return types.SimpleNamespace(get_function=lambda name: Fn(program, module, name))

    def mem_alloc(n: int) -> int:
        current()
        return mem.alloc(n)

    ctx = types.SimpleNamespace()
    ctx.push = lambda: stack().append(ctx)
    context = types.SimpleNamespace(pop=lambda: stack().pop(),
                                     get_current=lambda: stack()[-1] if stack() else None)
    def make_context() -> Any:
        """Device.make_context: a new (non-primary) context, made current."""
        own = types.SimpleNamespace()
        own.push = lambda: stack().append(own)
        own.push()
        return own

    dev = types.SimpleNamespace(retain_primary_context=lambda: ctx, name=lambda: "Fake",
                                make_context=make_context,
                                compute_capability=lambda: (9, 0),
                                get_attribute=lambda attr: 132)
    device = lambda i: dev  # noqa: E731
    device.count = lambda: 1  # type: ignore[attr-defined]
    driver = types.SimpleNamespace(
        init=lambda: None, Device=device, Error=FakeError,
        device_attribute=types.SimpleNamespace(MULTIPROCESSOR_COUNT=0),
        Context=context, mem_alloc=mem_alloc,
        module_from_buffer=load, memcpy_htod=htod, memcpy_dtoh=dtoh,
        memset_d32=lambda dst, v, n: htod(dst, np.full(n, v, np.uint32)), launches=launches,
        packed=packed, launch_contexts=launch_contexts, memory=mem,
        set_current=set_current, stack_depth=lambda: len(stack()))
    gpuarray = types.SimpleNamespace(GPUArray=GPUArray, empty=GPUArray, to_gpu=to_gpu)
    pkg = types.ModuleType("pycuda")
    pkg.__spec__ = importlib.machinery.ModuleSpec("pycuda", None)
    pkg.driver, pkg.gpuarray = driver, gpuarray  # type: ignore[attr-defined]
    return {"pycuda": pkg, "pycuda.driver": driver, "pycuda.gpuarray": gpuarray}


def install(monkeypatch: pytest.MonkeyPatch, mem: Memory | None = None,
            emulate: bool = False) -> tuple[dict[bytes, tuple[Program, CudaModule]], Any]:
    """Put the fake pycuda in sys.modules, a fake nvcc in backend_cuda (a 'cubin' is the
    source text), and record every module cuda_jit renders. Returns (images, pycuda.driver).
    `emulate`: kernels run as generated CUDA on the CPU (tests/cuda_emu.py)."""
    images: dict[bytes, tuple[Program, CudaModule]] = {}
    mods = fake_pycuda(mem or Memory(), images, emulate)
    for name, mod in mods.items():
        monkeypatch.setitem(sys.modules, name, mod)
    monkeypatch.setattr(backend_cuda, "find_nvcc", lambda: backend_cuda.Nvcc(
        "nvcc", (13, 0), "", (75, 90)))
    monkeypatch.setattr(backend_cuda, "compile_cubin", lambda src, arch: src.encode())
    driver = mods["pycuda.driver"]
    monkeypatch.setattr(backend_cuda, "_set_driver_current", driver.set_current)
    driver.synced = []  # streams cuda_interop.sync_stream waited for

    def pointer_device(ptr: int) -> int:
        """cuPointerGetAttribute(DEVICE_ORDINAL): the fake's memory is GPU 0's; addresses
        from OTHER_GPU on are GPU 1's; anything else is not device memory."""
        if 0 < ptr < len(driver.memory.buf):
            return 0
        if OTHER_GPU <= ptr < 2 * OTHER_GPU:
            return 1
        raise ValueError(f"address {ptr:#x} of a device array is not CUDA device memory "
                         "(cuPointerGetAttribute returned 1)")

    monkeypatch.setattr(cuda_interop, "pointer_device", pointer_device)
    monkeypatch.setattr(cuda_interop, "sync_stream", driver.synced.append)
    # no cuBLAS unless a test asks for the fake one (enable_cublas): the tiled kernel runs
    monkeypatch.setattr(cuda_blas, "library", lambda: "the fake pycuda has no cuBLAS")
    real_render = cuda_jit.render_cuda

    def render(program: Program) -> CudaModule:
        module = real_render(program)
        images[module.source.encode()] = (program, module)
        return module

    monkeypatch.setattr(cuda_jit, "render_cuda", render)
    return images, mods["pycuda.driver"]
