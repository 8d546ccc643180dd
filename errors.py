"""The fusejit error hierarchy: every error fusejit raises on purpose derives from FusejitError."""

from __future__ import annotations


class FusejitError(Exception):
    """Base class of all fusejit errors."""


class TraceError(FusejitError):
    """The function could not be traced (control flow on a traced value, unsupported call...)."""


class UnsupportedError(TraceError, NotImplementedError):
    """The function uses a NumPy feature or dtype that fusejit does not compile."""


class ConcretizationError(TraceError, TypeError):
    """A traced value was used where a concrete Python value is needed (if, int(), float())."""


class IRError(FusejitError):
    """The graph IR violates an invariant (raised by the verifier)."""


class CompileError(FusejitError):
    """The generated source could not be compiled."""


class CompilerNotFoundError(CompileError):
    """No working C compiler was found."""


class TargetError(CompileError, ValueError):
    """An instruction-set target that is unknown, that the C compiler does not know, or that the
    running CPU cannot execute (a missing feature is named)."""


class RuntimeFailure(FusejitError):
    """A compiled program failed while running."""


class ExportError(FusejitError):
    """An exported library could not be written or loaded (missing files, metadata that does
    not match the library, an incompatible format version)."""
