"""fusejit: compile plain NumPy functions into fused native loop nests.

    import fusejit

    @fusejit.jit
    def gelu(x):
        return 0.5 * x * (1 + np.tanh(0.7978845608 * (x + 0.044715 * x * x * x)))
"""

from . import config  # noqa: F401  (fusejit.config: the environment knobs)
from .errors import (
    CompileError,
    CompilerNotFoundError,
    ConcretizationError,
    ExportError,
    FusejitError,
    TraceError,
    UnsupportedError,
)
from .jit import JitFunction, export, jit

__version__ = "0.1.0"


def __getattr__(name: str) -> object:
    """`fusejit.load` and `fusejit.ExportedFunction`, imported on first use."""
    if name in ("grad", "value_and_grad", "vjp"):  # (imports the gradient rules)
        from . import gradients

        return getattr(gradients, name)
    if name == "profile_workers":  # (Dask workers' profiler counters, merged)
        from .runtime import dask_profile

        return dask_profile.profile_workers
    if name in ("load", "ExportedFunction"):
        from .runtime import aot_load

        return getattr(aot_load, name)
    raise AttributeError(f"module 'fusejit' has no attribute {name!r}")
__all__ = [
    "jit",
    "JitFunction",
    "export",
    "grad",
    "value_and_grad",
    "vjp",
    "load",
    "ExportedFunction",
    "profile_workers",
    "FusejitError",
    "TraceError",
    "UnsupportedError",
    "ConcretizationError",
    "CompileError",
    "CompilerNotFoundError",
    "ExportError",
]
