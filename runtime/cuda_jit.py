"""What jit.py needs for `backend="cuda"`: the availability check with errors that name the
cause and the fix, signatures and tracing stand-ins for device arrays (pycuda GPUArrays), and
building a CudaExecutable for a Program (render with codegen/cuda.py, compile with nvcc, load
with pycuda; see runtime/backend_cuda.py)."""

from __future__ import annotations

import time
from collections.abc import Callable, Hashable
from typing import TYPE_CHECKING, Any

import numpy as np

from .. import config
from ..errors import CompilerNotFoundError, RuntimeFailure
from ..lowering.loop_ir import Program

if TYPE_CHECKING:
    from ..codegen.cuda import CudaModule
    from .backend_cuda import CudaExecutable

# The CUDA code generator and backend are imported on first use: `import fusejit` stays fast.

_FALLBACK = "; use backend='c' (the default) to run on the CPU"


def require() -> None:
    """Raise unless CUDA programs can run here: RuntimeFailure without pycuda (`pip install
    -e '.[cuda]'`) or without a CUDA driver and GPU, CompilerNotFoundError when nvcc is
    missing or too old. Never a raw ImportError or pycuda traceback."""
    from . import backend_cuda

    try:
        backend_cuda.driver()
    except RuntimeFailure as e:
        raise RuntimeFailure(f"backend='cuda': {e}{_FALLBACK}") from None
    try:
        backend_cuda.find_nvcc()
    except CompilerNotFoundError as e:
        raise CompilerNotFoundError(f"backend='cuda': {e}; install the CUDA toolkit (>= "
                                    f"11.8) or put its bin/ on PATH{_FALLBACK}") from None


def _bind_interop() -> None:
    """Replace the two functions below by runtime/cuda_interop.py's own (imported on first
    use): signatures are computed on every call, and a function-level import costs each."""
    global is_device_array, device_arg_key, device_type_keyer
    from .cuda_interop import arg_key, type_keyer
    from .cuda_interop import is_device_array as check

    is_device_array, device_arg_key, device_type_keyer = check, arg_key, type_keyer


def _is_device_array(a: Any) -> bool:
    """True for a pycuda GPUArray or an object with `__cuda_array_interface__`."""
    _bind_interop()
    return is_device_array(a)


def _device_arg_key(a: Any) -> Hashable:
    """A device array's part of the call signature (runtime/cuda_interop.py)."""
    _bind_interop()
    return device_arg_key(a)


def _device_type_keyer(t: type) -> Callable[[Any], Hashable] | None:
    """The signature function for every instance of `t`, when its type alone makes it a
    device array (runtime/cuda_interop.type_keyer), else None."""
    _bind_interop()
    return device_type_keyer(t)


is_device_array: Callable[[Any], bool] = _is_device_array
device_arg_key: Callable[[Any], Hashable] = _device_arg_key
device_type_keyer: Callable[[type], Callable[[Any], Hashable] | None] = _device_type_keyer


def stand_ins(args: tuple) -> tuple:
    """`args` with device arrays replaced by host arrays of their shape, dtype and strides,
    for tracing (np.empty: the pages are never touched, so no host memory is used)."""
    from .cuda_interop import is_device_array as check
    from .cuda_interop import stand_in

    return tuple(stand_in(a) if check(a) else a for a in args)


def build(program: Program, ranges: list[tuple[int, tuple[int, int], np.dtype]],
          idle: frozenset[int] = frozenset(),
          converts: dict[int, Callable[[Any], Any]] | None = None
          ) -> tuple[str, CudaExecutable, float]:
    """Render `program` as CUDA and load it on the GPU: (source, executable, render seconds).
    `idle`, `converts`: the Python-int inputs never passed / converted (callargs.py)."""
    t0 = time.perf_counter()
    module = render_cuda(program)
    render_s = time.perf_counter() - t0
    from .backend_cuda import CudaExecutable

    return module.source, CudaExecutable(program, module, ranges, idle=idle,
                                         converts=converts,
                                         profile=config.current().profile), render_s


def render_cuda(program: Program) -> CudaModule:
    """codegen.cuda.render_cuda, imported on first use."""
    from ..codegen.cuda import render_cuda as render

    return render(program)
