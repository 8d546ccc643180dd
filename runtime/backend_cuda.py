"""The CUDA backend: nvcc -> cubin/PTX (cached in the kernel store) and running a CudaModule.

This module owns everything on the host side of CUDA: finding nvcc and compiling with flags
that keep NumPy's float semantics, and `CudaExecutable`, which runs a Program through pycuda
(an optional dependency, imported lazily): one device arena per compiled function (its layout
in runtime/cuda_layout.py: temporaries, constants, inputs, outputs, allocated once), small host
inputs packed and copied in with one transfer, the 0-d inputs the kernels only read passed
by value in the launches' parameters (no transfer), every launch in order with its arguments
prepared once per signature, outputs (and the error word) copied back with one transfer; what
one call does is planned once per executable (runtime/cuda_call.py).
Device arrays (GPUArrays, `__cuda_array_interface__`; runtime/cuda_interop.py) are read and
updated in place, and when any input is one (or when asked) outputs stay on the device, taken
from a per-output pool (runtime/cuda_pool.py). Float matmuls run through cuBLAS where it is
found (runtime/cuda_blas.py). Inputs the program updates in place are copied back into the host
arrays they came from; driver errors (out of memory, launch failures) become RuntimeFailure
and leave the executable usable.
"""

from __future__ import annotations

import atexit
import ctypes
import functools
import importlib.util
import os
import re
import shutil
import struct
import subprocess
import tempfile
import threading
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, NoReturn

import numpy as np

from .. import config
from ..codegen.cuda import CudaModule
from ..codegen.cuda_base import by_value
from ..errors import CompileError, CompilerNotFoundError, RuntimeFailure
from ..kernels_cache.store import default_store, key_of
from ..lowering.loop_ir import Program
from . import cuda_blas, cuda_interop
from .backend_c import VERSION
from .cuda_call import CallPlan
from .cuda_layout import arg_format, device_layout
from .cuda_pool import OutputPool
from .cuda_timer import KernelTimer
from .error_order import ErrorReplay, raise_failure

# No --use_fast_math: IEEE division and square root, no FMA contraction (NumPy computes a*b+c
# with two roundings), denormals kept (no flush to zero).
NVCC_FLAGS = ("-O3", "-std=c++17", "-prec-div=true", "-prec-sqrt=true", "-fmad=false",
              "-ftz=false")
MIN_NVCC = (11, 8)  # the first nvcc that targets sm_90
_NO_PYCUDA = "pycuda is not installed (pip install -e '.[cuda]')"


@dataclass(frozen=True)
class Nvcc:
    path: str
    version: tuple[int, int]
    banner: str  # `nvcc --version` output (part of the cache key)
    archs: tuple[int, ...]  # virtual architectures it targets: 75, 80, 90, ...


@functools.lru_cache(maxsize=1)
def find_nvcc() -> Nvcc:
    """The nvcc on PATH (or in /usr/local/cuda/bin); CompilerNotFoundError when none is usable."""
    path = shutil.which("nvcc") or next(
        (p for p in ("/usr/local/cuda/bin/nvcc",) if os.access(p, os.X_OK)), None)
    if path is None:
        raise CompilerNotFoundError("nvcc not found or too old: no nvcc on PATH or in "
                                    "/usr/local/cuda/bin (install the CUDA toolkit >= 11.8)")
    try:
        banner = subprocess.run([path, "--version"], capture_output=True, text=True,
                                timeout=60).stdout
        archs_out = subprocess.run([path, "--list-gpu-arch"], capture_output=True, text=True,
                                   timeout=60).stdout
    except (OSError, subprocess.SubprocessError) as e:
        raise CompilerNotFoundError(f"nvcc not found or too old: could not run {path}: {e}") from e
    m = re.search(r"release (\d+)\.(\d+)", banner)
    version = (int(m.group(1)), int(m.group(2))) if m else (0, 0)
    if version < MIN_NVCC:
        raise CompilerNotFoundError(f"nvcc not found or too old: {path} is release "
                                    f"{version[0]}.{version[1]}, fusejit needs >= 11.8")
    archs = tuple(sorted({int(a) for a in re.findall(r"compute_(\d+)", archs_out)}))
    return Nvcc(path, version, banner, archs)


def _compile(source: str, kind: str, arch: str) -> bytes:
    nvcc = find_nvcc()
    flags = (f"-{kind}", f"-arch={arch}", *NVCC_FLAGS)
    store = default_store(config.current().cache_dir)
    key = key_of(f"cuda-{kind}", VERSION, nvcc.path, nvcc.banner, " ".join(flags), source)

    def build(out: str) -> None:
        with tempfile.TemporaryDirectory(prefix="fusejit-nvcc-") as d:
            src, tmp = os.path.join(d, "program.cu"), os.path.join(d, f"program.{kind}")
            with open(src, "w", encoding="utf-8") as f:
                f.write(source)
            args = [nvcc.path, *flags, src, "-o", tmp]
            proc = subprocess.run(args, capture_output=True, text=True, timeout=600)
            if proc.returncode != 0:
                raise CompileError(f"CUDA compilation failed ({' '.join(args)}):\n"
                                   f"{proc.stderr[-4000:]}")
            shutil.copyfile(tmp, out)

    with open(store.get_or_build(key, f".{kind}", build), "rb") as f:
        return f.read()


def compile_cubin(source: str, arch: str = "sm_90") -> bytes:
    """Compile CUDA source to a cubin for `arch` (e.g. "sm_90"), through the kernel store."""
    return _compile(source, "cubin", arch)


def compile_ptx(source: str, arch: str = "compute_90") -> bytes:
    """Compile CUDA source to PTX (the driver JIT-compiles it for newer GPUs)."""
    return _compile(source, "ptx", arch)


def driver() -> tuple[Any, Any]:
    """(pycuda.driver, pycuda.gpuarray) with an initialised driver, or RuntimeFailure."""
    if importlib.util.find_spec("pycuda") is None:
        raise RuntimeFailure(f"CUDA backend unavailable: {_NO_PYCUDA}")
    try:
        import pycuda.driver as cuda
        import pycuda.gpuarray as gpuarray

        cuda.init()
        count = cuda.Device.count()
    except Exception as e:  # noqa: BLE001 - ImportError (no libcuda), cuda.Error, ...
        raise RuntimeFailure(f"CUDA backend unavailable: no CUDA driver/GPU found ({e})") from e
    if count == 0:
        raise RuntimeFailure("CUDA backend unavailable: no CUDA driver/GPU found (0 devices)")
    return cuda, gpuarray


def available() -> tuple[bool, str]:
    """Whether CUDA programs can run here, and why (not)."""
    try:
        cuda, _ = driver()
        nvcc = find_nvcc()
    except (RuntimeFailure, CompileError) as e:
        return False, str(e)
    dev = cuda.Device(0)
    major, minor = dev.compute_capability()
    return True, f"{dev.name()} (sm_{major}{minor}), nvcc {nvcc.version[0]}.{nvcc.version[1]}"


def _pop_at_exit(cuda: Any) -> None:
    """Pop the primary context CudaExecutable left current in the main thread."""
    try:
        cuda.Context.pop()
    except Exception:  # noqa: BLE001 - the driver may already be shut down
        pass


def _set_driver_current(ctx: Any) -> None:
    """Leave `ctx` current in this thread when none is, through the driver's cuCtxSetCurrent
    and not pycuda's per-thread stack (a thread may end with it current), so that the
    GPUArrays a call in a worker thread returns can be read there (`.get()`)."""
    handle = getattr(ctx, "handle", None)
    lib = _libcuda()
    if not isinstance(handle, int) or lib is None:
        return  # (not pycuda's own contexts, or no libcuda: leave the thread as it is)
    now = ctypes.c_void_p()
    if lib.cuCtxGetCurrent(ctypes.byref(now)) == 0 and not now.value:
        lib.cuCtxSetCurrent(ctypes.c_void_p(handle))


@functools.cache
def _libcuda() -> Any:
    try:
        return ctypes.CDLL("libcuda.so.1")
    except OSError:
        return None


class CudaExecutable:
    """A CudaModule loaded on a GPU, with its arena; `run` has Executable.run's contract."""

    def __init__(self, program: Program, module: CudaModule,
                 input_ranges: list[tuple[int, tuple[int, int], np.dtype]] | None = None,
                 device: int = 0, idle: frozenset[int] = frozenset(),
                 converts: dict[int, Callable[[Any], Any]] | None = None,
                 profile: bool = False) -> None:
        """`idle` and `converts`: as for executor.Executable (Python ints no kernel reads,
        which may not fit int64, are not copied; ints held as uint64/float are converted).
        `profile`: time each kernel with CUDA events for the profiler (`self.timer`)."""
        cuda, self._gpuarray = driver()
        self._cuda = cuda
        self.program, self.module = program, module
        self.input_ranges = input_ranges or []
        self.idle, self.converts = idle, dict(converts or {})
        # 0-d inputs the kernels take by value (a fj_val parameter), not in the arena
        self.values = by_value(program)
        self.layout = device_layout(program, module.scratch_bytes, self.values)
        self.transfers = {"htod": 0, "dtoh": 0}
        self._lock = threading.Lock()
        self.device = device
        # The error path (runtime/error_order.py, set by the compiler), as for Executable.
        self.replay: ErrorReplay | None = None
        dev = cuda.Device(device)
        self._ctx = dev.retain_primary_context()
        self._adopt_context()
        self._ctx.push()
        try:
            self.sms = dev.get_attribute(cuda.device_attribute.MULTIPROCESSOR_COUNT)
            self.gpus = cuda.Device.count()
            self._mod = cuda.module_from_buffer(self._image(dev.compute_capability()))
            self._fns = [self._mod.get_function(k.name).prepare(self.arg_format(k))
                         for k in module.kernels]
            try:
                self._arena = cuda.mem_alloc(self.layout.total)
            except cuda.Error as e:
                raise RuntimeFailure(f"out of device memory: {program.name}() needs "
                                     f"{self.layout.total} bytes on the GPU ({e})") from e
            self.base = int(self._arena)
            cuda.memset_d32(self.base + self.layout.err, 0, 1)
            for b in program.by_kind("const"):
                self._htod(self.base + self.layout.slots[b.index],
                           np.ascontiguousarray(program.consts[b.ref]).reshape(-1))
            self._stage = np.empty(self.layout.small[1] - self.layout.small[0], np.uint8)
            self._plan_gemms()
        finally:
            cuda.Context.pop()
        self.pools = {b.index: OutputPool(functools.partial(self._gpuarray.empty, b.shape,
                                                            b.dtype))
                      for b in program.by_kind("output") if b.nbytes}
        self.timer = KernelTimer(cuda.Event, len(program.kernels), self._ctx.push,
                                 cuda.Context.pop) if profile else None
        self.plan = CallPlan(self)  # what every call does, prepared once

    def launcher(self, k: Any, args: tuple[int, ...]
                 ) -> tuple[Callable[[], Any], Callable[[tuple[int, ...]], Any]]:
        """Launch `k` as (a call with the argument addresses `args`, a call given others):
        its kernel, or the cuBLAS call for a float matmul cuBLAS runs (runtime/cuda_blas.py).
        A pycuda kernel is launched as its prepared_call does (pack the pointers, then
        `_launch_kernel`) without redoing the per-call work that call repeats, with `args`
        packed once; a Function without that shape takes prepared_call."""
        gemm = self.gemm_calls.get(k.name)
        if gemm is not None:
            return functools.partial(gemm, *args), lambda a: gemm(*a)
        fn = next(f for launch, f in zip(self.module.kernels, self._fns) if launch is k)
        grid, block = (k.grid_for(self.sms), 1), (k.block, 1, 1)
        fmt = self.arg_format(k)
        launch = getattr(fn, "_launch_kernel", None)
        if callable(launch) and getattr(fn, "arg_format", None) == fmt and not getattr(
                fn, "texrefs", True):
            pack = struct.Struct(fmt).pack
            return (functools.partial(launch, grid, block, pack(*args), 0, None),
                    lambda a: launch(grid, block, pack(*a), 0, None))
        call = functools.partial(fn.prepared_call, grid, block)
        return functools.partial(call, *args), lambda a: call(*a)

    def arg_format(self, k: Any, first: int = 0) -> str:
        """The parameters of launch `k` as pycuda's prepare takes them (cuda_layout.arg_format):
        `first` pointers (a cuBLAS epilogue's product), its buffers' (pointers, or the fj_val
        of a 0-d input taken by value), the scratch area's and the error word's."""
        dtypes = [self.program.buffers[b].dtype if b in self.values else None
                  for b in k.buffers]
        return arg_format([None] * first + dtypes + [None] * (k.scratch + k.checks))

    def _plan_gemms(self) -> None:
        """`gemm_calls`: launch name -> cuda_blas.GemmCall, for the gemms cuBLAS runs (the
        others launch the tiled kernel); the products' scratch is allocated here, once."""
        self.gemm_calls: dict[str, Any] = {}
        epis = {e.kernel: e for e in self.module.epilogues}
        wanted = []
        for launch in self.module.kernels:
            if launch.role != "gemm" or not launch.size:
                continue
            k = self.program.kernels[launch.kernel]
            blas, p = cuda_blas.choose(k)
            if blas is not None:
                wanted.append((launch, k, blas, p))
        need = max([0] + [int(np.prod(k.batch, dtype=np.int64)) * k.m * k.n * k.dtype.itemsize
                          for _, k, _, p in wanted if not p.direct])
        self._gemm_scratch = self._cuda.mem_alloc(need) if need else None
        for launch, k, blas, p in wanted:
            epi = None
            if not p.direct:
                e = epis[launch.kernel]
                fn = self._mod.get_function(e.name).prepare(self.arg_format(e, 1))
                epi = (fn, (e.grid_for(self.sms), 1), (e.block, 1, 1), e.buffers)
            self.gemm_calls[launch.name] = cuda_blas.GemmCall(
                blas, k, p, launch.buffers, epi, int(self._gemm_scratch or 0))

    def _adopt_context(self) -> bool:
        """Leave the device's primary context current in this thread when none is (as
        `import pycuda.autoprimaryctx` would): the GPUArrays fusejit returns, and pycuda calls
        on them (`.get()`), need a current context after fusejit has popped its own. True
        when the current context is that primary context (then nothing need be pushed)."""
        current = self._cuda.Context.get_current()
        if current is None:
            if threading.current_thread() is not threading.main_thread():
                # pycuda aborts the process when a thread ends with a context left on its
                # stack: here ours is pushed and popped around each call, and made current
                # below pycuda's stack instead (_set_driver_current).
                return False
            self._ctx.push()
            atexit.register(_pop_at_exit, self._cuda)  # as autoprimaryctx does
            return True
        return bool(current == self._ctx)  # (pycuda compares contexts by handle)

    def _image(self, cc: tuple[int, int]) -> bytes:
        """A cubin for this GPU, or PTX for the newest older architecture nvcc knows."""
        nvcc, want = find_nvcc(), cc[0] * 10 + cc[1]
        if want in nvcc.archs:
            return compile_cubin(self.module.source, f"sm_{want}")
        older = [a for a in nvcc.archs if a <= want]
        if not older:
            raise CompilerNotFoundError(f"nvcc not found or too old: {nvcc.path} cannot target "
                                        f"sm_{want} (it knows {list(nvcc.archs)})")
        return compile_ptx(self.module.source, f"compute_{older[-1]}") + b"\0"

    def _htod(self, dst: int, src: np.ndarray) -> None:
        if src.nbytes:
            self._cuda.memcpy_htod(dst, src)
            self.transfers["htod"] += 1

    def transfer_report(self) -> list[str]:
        """The host-device copies of one call, for `explain` (runtime/cuda_call.py)."""
        return self.plan.transfer_report()

    def raise_error(self, status: int, inputs: list[Any], host_only: bool) -> NoReturn:
        """Raise NumPy's first error, in statement order, for a call that returned `status`.
        With host inputs only (`host_only`) they are as passed (copied back only after a
        call that succeeds), so the trace is replayed on them; device inputs: the status's."""
        raise_failure(self.replay if host_only else None, status, inputs, unchanged=True)

    def run(self, inputs: list[Any], device_outputs: bool | None = None) -> list[Any]:
        """Run on the graph inputs (NumPy arrays, scalars or GPUArrays); return the outputs,
        as GPUArrays when `device_outputs` (default: when any input is a GPUArray)."""
        try:
            for k, (lo, hi), dtype in self.input_ranges:
                if not lo <= inputs[k] <= hi:
                    raise OverflowError(f"Python integer {inputs[k]} out of bounds for {dtype}")
            device = cuda_interop.device_flags(inputs)  # TypeError: host arrays mixed in
            if device_outputs is None:
                device_outputs = device is not None
            with self._lock:
                # (each thread has its own current context; ours is pushed unless current)
                pushed = not self._adopt_context()
                if pushed:
                    self._ctx.push()
                try:
                    return self.plan.run(inputs, device, device_outputs)
                except self._cuda.Error as e:
                    self.plan.forget()  # (what the device holds is not known now)
                    raise RuntimeFailure(f"CUDA error while running {self.program.name}() "
                                         f"({type(e).__name__}: {e})") from e
                finally:
                    if pushed:
                        self._cuda.Context.pop()
                        _set_driver_current(self._ctx)
        finally:
            cuda_interop.release()  # this call's readings of device arrays
