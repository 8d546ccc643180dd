"""The CUDA backend: lowered without BLAS, rendered by codegen/cuda.py, compiled with nvcc
and run through pycuda (runtime/cuda_jit.py, runtime/backend_cuda.py). Device arrays are
traced through host stand-ins; results may stay on the device (device_output=)."""

from __future__ import annotations

from collections.abc import Callable, Hashable
from typing import TYPE_CHECKING, Any

from .. import cuda_jit
from ..callargs import idle_python_ints, python_int_conversions
from .base import Built, Ranges

if TYPE_CHECKING:
    from ...frontend.ir import Graph
    from ...lowering.loop_ir import AnyKernel, Program
    from ...lowering.prelower import LowerOptions


class CudaBackend:
    """NVIDIA GPUs (pycuda and nvcc, both checked by `require`)."""

    name = "cuda"
    language = "CUDA"
    fast_path = False
    device_output = True

    @property
    def lower_options(self) -> LowerOptions:
        from ...lowering.prelower import LowerOptions

        return LowerOptions(blas=False, own_lapack=True)  # (codegen/cuda_lapack.py)

    def require(self) -> None:
        cuda_jit.require()  # pycuda, a GPU and nvcc, or a clear error now

    def trace_args(self, args: tuple) -> tuple:
        return cuda_jit.stand_ins(args)  # device arrays: trace their shapes and dtypes

    def build(self, program: Program, optimised: Graph, ranges: Ranges, name: str,
              fastmath: bool) -> Built:
        source, executable, render_s = cuda_jit.build(program, ranges, idle_python_ints(
            optimised), python_int_conversions(optimised))
        return Built(source, executable, render_s)

    def register(self, fn: Callable[..., Any], key: Hashable, program: Program, built: Built,
                 times: dict[str, float]) -> None:
        """With FUSEJIT_PROFILE on, the executable times its kernels with CUDA events
        (runtime/cuda_timer.py): registered with the profiler like a C library."""
        timer = getattr(built.executable, "timer", None)
        if timer is not None:
            from ..profiler import on_compile

            on_compile(fn, key, program, timer, times)

    def describe_kernel(self, kernel: AnyKernel) -> list[str]:
        from ...lowering.loop_ir import GemmKernel, LapackKernel
        from ..cuda_blas import describe

        if isinstance(kernel, GemmKernel):
            return [describe(kernel)]
        if isinstance(kernel, LapackKernel):
            from ...codegen.cuda_lapack import describe as lapack_describe

            return [lapack_describe(kernel)]
        return []
