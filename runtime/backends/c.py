"""The C backend: lowered with BLAS, rendered by codegen/c.py, built with the system C
compiler (runtime/backend_c.py, runtime/toolchain.py, the source cache and the kernel store)
and run by runtime/executor.Executable, through the C dispatcher's call stubs."""

from __future__ import annotations

from collections.abc import Callable, Hashable
from typing import TYPE_CHECKING, Any

from ... import config
from ..backend_c import build_program
from ..callargs import idle_python_ints, python_int_conversions
from ..executor import Executable
from .base import Built, Ranges

if TYPE_CHECKING:
    from ...frontend.ir import Graph
    from ...lowering.loop_ir import AnyKernel, Program
    from ...lowering.prelower import LowerOptions


class CBackend:
    """Native code for this CPU (OpenMP, SciPy's BLAS for float matmuls)."""

    name = "c"
    language = "C"
    fast_path = True
    device_output = False

    @property
    def lower_options(self) -> LowerOptions:
        from ...lowering.prelower import LowerOptions

        return LowerOptions(blas=True)

    def require(self) -> None:
        """A C compiler is looked for when the first function compiles."""

    def trace_args(self, args: tuple) -> tuple:
        return args

    def build(self, program: Program, optimised: Graph, ranges: Ranges, name: str,
              fastmath: bool) -> Built:
        source, lib, render_s = build_program(program, fastmath, name)
        executable = Executable(program, lib, ranges, idle_python_ints(optimised),
                                python_int_conversions(optimised))
        return Built(source, executable, render_s, lib)

    def register(self, fn: Callable[..., Any], key: Hashable, program: Program, built: Built,
                 times: dict[str, float]) -> None:
        if config.current().profile:
            from ..profiler import on_compile

            on_compile(fn, key, program, built.library, times)

    def describe_kernel(self, kernel: AnyKernel) -> list[str]:
        """A BLAS kernel: which BLAS runs it and with which CPU kernels (runtime/blas.py)."""
        from ...lowering.loop_ir import GemmKernel

        if isinstance(kernel, GemmKernel) and kernel.blas:
            from ..blas import blas_report

            return [f"runs {blas_report()}"]
        return []
