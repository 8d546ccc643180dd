"""The Backend protocol: what jit.py, runtime/compiler.py and runtime/explain.py ask of a
backend, so that C and CUDA (and a test's fake) are peers behind one small interface.

A backend says what it needs from lowering (`lower_options`: BLAS or not, LAPACK kernels of
its own or not), turns tracing arguments into what the tracer may see (`trace_args`),
renders and builds a planned Program into an executable (`build`), and answers explain
(`describe_kernel`) and the profiler (`register`). Its flags tell the call paths what its
executables support. Backends are found by name in the registry
(runtime/backends/__init__.py); no other module compares names.
"""

from __future__ import annotations

from collections.abc import Callable, Hashable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Protocol

import numpy as np

if TYPE_CHECKING:  # `import fusejit` imports the registry: it stays light
    from ...frontend.ir import Graph
    from ...lowering.loop_ir import AnyKernel, Program
    from ...lowering.prelower import LowerOptions

# Python int arguments whose values the compiled code range-checks: (graph input, (lo, hi),
# dtype).
Ranges = list[tuple[int, tuple[int, int], np.dtype]]


class Runnable(Protocol):
    """What a backend's build returns and the call paths run."""

    def run(self, inputs: list[Any]) -> list[Any]:
        """Run the Program on its graph inputs (arrays and scalars, in graph order); its
        results, in order, with updated arguments written in place."""


@dataclass
class Built:
    """A rendered and built Program: its source, the executable that runs it, the seconds
    spent rendering (the rest of the build is compiling), and the loaded library, where the
    backend has one that the profiler reads."""

    source: str
    executable: Runnable  # runtime.executor.Executable, backend_cuda.CudaExecutable, ...
    render_s: float
    library: Any = None


class Backend(Protocol):
    """One target fusejit compiles for."""

    name: str  # as the user selects it: jit(backend=...), FUSEJIT_BACKEND
    language: str  # what its source is, for logs ("C", "CUDA")
    fast_path: bool  # its executables take the C dispatcher's call stubs and direct out=
    device_output: bool  # calls accept device_output= (results left on the device)

    @property
    def lower_options(self) -> LowerOptions:
        """What it needs from lowering."""

    def require(self) -> None:
        """Raise a clear error (naming the cause and the fix) unless it can run here."""

    def trace_args(self, args: tuple) -> tuple:
        """The arguments the tracer sees for `args` (device arrays become host stand-ins)."""

    def build(self, program: Program, optimised: Graph, ranges: Ranges, name: str,
              fastmath: bool) -> Built:
        """Render and build the planned `program` (lowered from `optimised`)."""

    def register(self, fn: Callable[..., Any], key: Hashable, program: Program, built: Built,
                 times: dict[str, float]) -> None:
        """Hand a fresh build to the profiler (FUSEJIT_PROFILE)."""

    def describe_kernel(self, kernel: AnyKernel) -> list[str]:
        """Lines explain adds about how this backend runs `kernel` (often none)."""
