"""The CUDA backend: nvcc -> cubin/PTX (cached in the kernel store) and running a CudaModule.

This module owns everything on the host side of CUDA: finding nvcc and compiling with flags
that keep NumPy's float semantics, and `CudaExecutable`, which runs a Program through pycuda
(an optional dependency, imported lazily): one device arena per compiled function (its layout
in runtime/cuda_layout.py: temporaries, constants, inputs, outputs, allocated once), small host
inputs packed and copied in with one transfer, every launch in order with its arguments
prepared once per signature, outputs (and the error word) copied back with one transfer.
Device arrays (GPUArrays, `__cuda_array_interface__`; runtime/cuda_interop.py) are read and
updated in place, and when any input is one (or when asked) outputs stay on the device, taken
from a per-output pool (runtime/cuda_pool.py). Float matmuls run through cuBLAS where it is
found (runtime/cuda_blas.py). Inputs the program updates in place are copied back into the host
arrays they came from; driver errors (out of memory, launch failures) become RuntimeFailure
and leave the executable usable.
"""

from __future__ import annotations

import atexit
import functools
import importlib.util
import os
import re
import shutil
import subprocess
import tempfile
import threading
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np

from .. import config
from ..codegen.cuda import CudaModule
from ..errors import CompileError, CompilerNotFoundError, RuntimeFailure
from ..kernels_cache.store import default_store, key_of
from ..lowering.loop_ir import Buffer, Program
from . import cuda_blas, cuda_interop
from .backend_c import VERSION
from .cuda_layout import device_layout, host_bytes, span
from .cuda_pool import OutputPool
from .executor import raise_status

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


def _driver() -> tuple[Any, Any]:
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
        cuda, _ = _driver()
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


class CudaExecutable:
    """A CudaModule loaded on a GPU, with its arena; `run` has Executable.run's contract."""

    def __init__(self, program: Program, module: CudaModule,
                 input_ranges: list[tuple[int, tuple[int, int], np.dtype]] | None = None,
                 device: int = 0, idle: frozenset[int] = frozenset(),
                 converts: dict[int, Callable[[Any], Any]] | None = None) -> None:
        """`idle` and `converts`: as for executor.Executable (Python ints no kernel reads,
        which may not fit int64, are not copied; ints held as uint64/float are converted)."""
        cuda, self._gpuarray = _driver()
        self._cuda = cuda
        self.program, self.module = program, module
        self.input_ranges = input_ranges or []
        self.idle, self.converts = idle, dict(converts or {})
        self.layout = device_layout(program, module.scratch_bytes)
        self.transfers = {"htod": 0, "dtoh": 0}
        self._lock = threading.Lock()
        self.device = device
        dev = cuda.Device(device)
        self._ctx = dev.retain_primary_context()
        self._adopt_context()
        self._ctx.push()
        try:
            self.sms = dev.get_attribute(cuda.device_attribute.MULTIPROCESSOR_COUNT)
            self._mod = cuda.module_from_buffer(self._image(dev.compute_capability()))
            self._fns = [self._mod.get_function(k.name).prepare(
                "P" * (len(k.buffers) + k.scratch + k.checks)) for k in module.kernels]
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
        self._prepare_launches()
        self.pools = {b.index: OutputPool(functools.partial(self._gpuarray.empty, b.shape,
                                                            b.dtype))
                      for b in program.by_kind("output") if b.nbytes}

    def _prepare_launches(self) -> None:
        """Each launch as a callable and its argument tuple, computed once: arena pointers
        are fixed; the positions of inputs and outputs that may be device arrays are patched
        per call (`_launches`: (call, args, [(position, buffer index)])). Float matmuls that
        cuBLAS can run call it (runtime/cuda_blas.py) instead of the tiled kernel."""
        lay, base = self.layout, self.base
        self.fixed = {i: base + off + lay.shift.get(i, 0) for i, off in lay.slots.items()}
        movable = {b.index for b in self.program.buffers if b.kind in ("input", "output")}
        self._launches = []
        for k, fn in zip(self.module.kernels, self._fns):
            if not k.size:
                continue
            args = tuple([self.fixed.get(i, 0) for i in k.buffers]
                         + [base + lay.scratch] * k.scratch + [base + lay.err] * k.checks)
            patch = [(p, i) for p, i in enumerate(k.buffers) if i in movable]
            call = self.gemm_calls.get(k.name) or functools.partial(
                fn.prepared_call, (k.grid_for(self.sms), 1), (k.block, 1, 1))
            self._launches.append((call, args, patch))

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
                fn = self._mod.get_function(e.name).prepare("P" * (1 + len(e.buffers)))
                epi = (fn, (e.grid_for(self.sms), 1), (e.block, 1, 1), e.buffers)
            self.gemm_calls[launch.name] = cuda_blas.GemmCall(
                blas, k, p, launch.buffers, epi, int(self._gemm_scratch or 0))

    def _adopt_context(self) -> None:
        """Leave the device's primary context current in this thread when none is (as
        `import pycuda.autoprimaryctx` would): the GPUArrays fusejit returns, and pycuda calls
        on them (`.get()`), need a current context after fusejit has popped its own."""
        if self._cuda.Context.get_current() is None:
            self._ctx.push()
            if threading.current_thread() is threading.main_thread():
                atexit.register(_pop_at_exit, self._cuda)  # as autoprimaryctx does

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

    def run(self, inputs: list[Any], device_outputs: bool | None = None) -> list[Any]:
        """Run on the graph inputs (NumPy arrays, scalars or GPUArrays); return the outputs,
        as GPUArrays when `device_outputs` (default: when any input is a GPUArray)."""
        for k, (lo, hi), dtype in self.input_ranges:
            if not lo <= inputs[k] <= hi:
                raise OverflowError(f"Python integer {inputs[k]} out of bounds for {dtype}")
        on_device = cuda_interop.check_mixed(inputs)  # TypeError: host arrays mixed in
        if device_outputs is None:
            device_outputs = on_device
        with self._lock:
            self._adopt_context()  # (each thread has its own current context)
            self._ctx.push()
            try:
                return self._run(inputs, device_outputs)
            except self._cuda.Error as e:
                raise RuntimeFailure(f"CUDA error while running {self.program.name}() "
                                     f"({type(e).__name__}: {e})") from e
            finally:
                self._cuda.Context.pop()

    def _run(self, inputs: list[Any], device_outputs: bool | None) -> list[Any]:
        lay, base = self.layout, self.base
        ptr: dict[int, int] = {}  # device arrays in place of arena slots
        staged = False
        for b in self.program.by_kind("input"):
            if b.ref in self.idle:
                continue
            v = inputs[b.ref]
            if b.ref in self.converts:
                v = self.converts[b.ref](v)
            if cuda_interop.is_device_array(v):
                ptr[b.index] = self._device_input(v, b)
                continue
            data = host_bytes(np.asarray(v, b.dtype) if np.ndim(v) == 0 else v, b)
            start = lay.slots[b.index]
            if lay.small[0] <= start < lay.small[1]:
                self._stage[start - lay.small[0]:start - lay.small[0] + data.size] = data
                staged = staged or data.size > 0
            else:
                self._htod(base + start, data)
        if staged:
            self._htod(base + lay.small[0], self._stage)
        outs: dict[int, Any] = {}
        if device_outputs:
            for b in self.program.by_kind("output"):
                pool = self.pools.get(b.index)
                outs[b.index] = pool.take() if pool else self._gpuarray.empty(b.shape, b.dtype)
                ptr[b.index] = outs[b.index].ptr if pool else 0
        for call, args, patch in self._launches:
            if ptr and patch:
                args = list(args)
                for p, i in patch:
                    if i in ptr:
                        args[p] = ptr[i]
            call(*args)
        checks = any(k.checks for k in self.module.kernels)
        status = 0
        if not device_outputs and (self.program.by_kind("output") or checks):
            host = np.empty(lay.out[1] - lay.out[0], np.uint8)
            self._cuda.memcpy_dtoh(host, base + lay.out[0])
            self.transfers["dtoh"] += 1
            status = int(host[:4].view(np.uint32)[0])
            for b in self.program.by_kind("output"):
                o = lay.slots[b.index] - lay.out[0]
                outs[b.index] = host[o:o + b.nbytes].view(b.dtype).reshape(b.shape)
        elif checks:
            word = np.zeros(1, np.uint32)
            self._cuda.memcpy_dtoh(word, base + lay.err)
            self.transfers["dtoh"] += 1
            status = int(word[0])
        if status:
            self._cuda.memset_d32(base + lay.err, 0, 1)
            raise_status(status)
        self._copy_back(inputs)
        return [outs[o.index] if o.kind == "buffer" else inputs[o.index]
                for o in self.program.outputs]

    def _device_input(self, a: Any, b: Buffer) -> int:
        """The address of device array `a` (read and written in place) for input `b`."""
        v = cuda_interop.describe(a)
        item = v.dtype.itemsize
        if v.dtype != b.dtype or v.shape != b.shape or any(
                s != e * item for s, e, n in zip(v.strides, b.strides, b.shape) if n > 1):
            raise RuntimeFailure(f"device array for {b.name} is {v.dtype}{list(v.shape)} "
                                 f"strides {v.strides}; expected {b.dtype}{list(b.shape)} "
                                 f"element strides {b.strides}")
        cuda_interop.check_view(v, self.device, b.ref in self.program.updates,
                                f"argument {b.name}")
        return v.ptr if b.nbytes else 0

    def _copy_back(self, inputs: list[Any]) -> None:
        """Write the device copies of host inputs the program updated back into them."""
        for b in self.program.by_kind("input"):
            v = inputs[b.ref]
            if b.ref not in self.program.updates or not isinstance(v, np.ndarray) or not b.nbytes:
                continue
            nbytes, lo = span(b)
            raw = np.empty(nbytes, np.uint8)
            self._cuda.memcpy_dtoh(raw, self.base + self.layout.slots[b.index])
            self.transfers["dtoh"] += 1
            item = b.dtype.itemsize
            elems = raw.view(b.dtype)[lo // item:]
            v[...] = np.lib.stride_tricks.as_strided(
                elems, b.shape, tuple(s * item for s in b.strides), writeable=False)
