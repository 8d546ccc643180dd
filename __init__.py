"""fusejit: compile plain NumPy functions into fused native loop nests.

    import fusejit

    @fusejit.jit
    def gelu(x):
        return 0.5 * x * (1 + np.tanh(0.7978845608 * (x + 0.044715 * x * x * x)))
"""

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
from .runtime.aot_load import ExportedFunction, load

__version__ = "0.1.0"
__all__ = [
    "jit",
    "JitFunction",
    "export",
    "load",
    "ExportedFunction",
    "FusejitError",
    "TraceError",
    "UnsupportedError",
    "ConcretizationError",
    "CompileError",
    "CompilerNotFoundError",
    "ExportError",
]
