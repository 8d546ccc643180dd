"""The fusejit error hierarchy (every error fusejit raises on purpose derives from FusejitError)
and the one table of status codes that compiled code returns (`Status`)."""

from __future__ import annotations

from enum import Enum

from numpy.linalg import LinAlgError


class FusejitError(Exception):
    """Base class of all fusejit errors."""


class TraceError(FusejitError):
    """The function could not be traced (control flow on a traced value, unsupported call...)."""


class UnsupportedError(TraceError, NotImplementedError):
    """The function uses a NumPy feature or dtype that fusejit does not compile."""


class ConcretizationError(TraceError, TypeError):
    """A traced value was used where a concrete Python value is needed (if, int(), float())."""


class ArgumentTypeError(TraceError, TypeError):
    """An argument of a type fusejit does not trace (str, list, dict...): a TypeError, as
    NumPy's own error for such an operand is."""


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


class ExportTargetError(ExportError, TargetError):
    """An exported library was compiled for CPU features the running CPU lacks (named)."""


class Status(Enum):
    """The status codes compiled code returns: each code, its C macro (`FJ_<macro>` in the
    generated C and CUDA, `<LIB>_<macro>` in an exported header) and the exception it becomes.

    Positive codes are kernel flags, bitwise ORed into the entry function's return value (the
    errors NumPy raises, and the library failures of BLAS-backed kernels); negative codes are
    the interface errors an exported library's wrapper returns before running anything."""

    INT_NEG_POWER = (1, ValueError, "Integers to negative integer powers are not allowed.")
    INDEX_RANGE = (2, IndexError, "index out of bounds: an index array holds a value outside "
                                  "the axis it indexes.")
    ALL_NAN = (4, ValueError, "All-NaN slice encountered")
    CHOICE = (8, ValueError, "invalid entry in choice array")
    BINCOUNT_RANGE = (16, ValueError, "np.bincount: an input value is negative (NumPy's "
                                      "ValueError) or not below minlength, which fusejit "
                                      "takes as the output's length (NumPy would return a "
                                      "longer array)")
    GEOM_ZERO = (32, ValueError, "Geometric sequence cannot include zero")
    NO_BLAS = (64, RuntimeFailure, "a matmul calls BLAS, but the library was loaded without "
                                   "its BLAS routines (fj_set_blas was not given them)")
    NO_SCRATCH = (128, MemoryError, "out of memory: a matmul epilogue's per-thread scratch "
                                    "block could not be allocated")
    SINGULAR = (256, LinAlgError, "Singular matrix")
    NOT_POSDEF = (512, LinAlgError, "Matrix is not positive definite")
    EIG_NOCONV = (1024, LinAlgError, "Eigenvalues did not converge")
    HIST_RANGE = (4096, ValueError, "autodetected range of the histogram's data is not finite "
                                    "(np.histogram without range=)")
    NO_LAPACK = (2048, RuntimeFailure, "a np.linalg kernel calls LAPACK, but the library was "
                                       "loaded without its LAPACK routines (fj_set_lapack)")
    LSTSQ_NOCONV = (8192, LinAlgError, "SVD did not converge in Linear Least Squares")
    LSTSQ_RANK = (16384, LinAlgError, "np.linalg.lstsq: the matrix is rank-deficient (rank < "
                                      "N, M > N), for which NumPy returns empty residuals; "
                                      "fusejit compiled them with shape (K,) (the full-rank "
                                      "case): leave the residuals unused (then they are not "
                                      "checked) or compute ((b - a @ x) ** 2).sum(0) yourself")
    REAL_IF_CLOSE = (32768, RuntimeFailure, "np.real_if_close: an imaginary part is not "
                                            "below tol, so NumPy would return the complex "
                                            "array; fusejit compiled the real part (the dtype "
                                            "is fixed when compiling): take np.real or keep "
                                            "the complex values yourself")
    WEIGHTS_ZERO = (65536, ZeroDivisionError, "Weights sum to zero, can't be normalized")
    UNRAVEL_RANGE = (131072, ValueError, "np.unravel_index / np.ravel_multi_index: an index "
                                         "is out of bounds for an array of the given shape "
                                         "(negative, or not below its size), an invalid "
                                         "entry in coordinates array")
    NOT_FINITE = (262144, ValueError, "array must not contain infs or NaNs")
    SVD_NOCONV = (524288, LinAlgError, "SVD did not converge")
    FWEIGHTS_INT = (1048576, TypeError, "fweights must be integer")
    FWEIGHTS_NEG = (2097152, ValueError, "fweights cannot be negative")
    AWEIGHTS_NEG = (4194304, ValueError, "aweights cannot be negative")
    DIST_WEIGHTS_NEG = (8388608, ValueError, "Input weights should be all non-negative")
    LINREGRESS_X_SAME = (16777216, ValueError, "Cannot calculate a linear regression if all "
                                               "x values are identical")
    LFILTER_A0 = (33554432, ValueError, "BUG: filter coefficient a[0] == 0 not supported yet")
    SOS_A0 = (67108864, ValueError, "sos[:, 3] should be all ones")
    INTERP1D_BOUNDS = (268435456, ValueError, "A value in x_new is outside the interpolation "
                                              "range (scipy.interpolate.interp1d with "
                                              "bounds_error)")
    RANK_FILTER_NAN = (134217728, RuntimeFailure, "a scipy.ndimage minimum, maximum, median, "
                                                  "rank or percentile filter (or "
                                                  "scipy.signal.medfilt) of data holding a "
                                                  "NaN: SciPy's answer then depends on the "
                                                  "order its algorithm compares values in, "
                                                  "which fusejit does not reproduce; replace "
                                                  "the NaNs first (np.nan_to_num, np.where)")
    EMPTY_REDUCTION = (536870912, ValueError, "zero-size array to reduction operation maximum "
                                              "(or minimum) which has no identity: x[mask] "
                                              "selected no element")
    NOMEM = (-1, MemoryError, "out of memory: the workspace could not be allocated")
    NO_WORKSPACE = (-2, RuntimeFailure, "workspace is NULL but the function needs a workspace")
    RANGE = (-3, OverflowError, "an integer argument is outside the range the function was "
                                "compiled for")

    def __init__(self, code: int, exc: type[Exception], message: str) -> None:
        self.code = code
        self.exc = exc
        self.message = message

    @property
    def macro(self) -> str:
        """The C macro's name after its prefix: ERR_<NAME>."""
        return f"ERR_{self.name}"

    @classmethod
    def flags(cls) -> list[Status]:
        """The kernel flags (positive codes), lowest first."""
        return sorted((s for s in cls if s.code > 0), key=lambda s: s.code)

    @classmethod
    def interface(cls) -> list[Status]:
        """The exported wrapper's interface errors (negative codes), -1 first."""
        return sorted((s for s in cls if s.code < 0), key=lambda s: -s.code)

    @classmethod
    def of(cls, code: int) -> Status | None:
        """The status with exactly this code, or None."""
        return next((s for s in cls if s.code == code), None)


def status_error(status: int) -> Exception:
    """The exception a non-zero status stands for: the lowest kernel flag set in a positive
    status, the interface error a negative one names, else a RuntimeFailure naming it."""
    if status > 0:
        for s in Status.flags():
            if status & s.code:
                return s.exc(s.message)
    else:
        s = Status.of(status)
        if s is not None:
            return s.exc(s.message)
    return RuntimeFailure(f"compiled program failed with status {status}")


def raise_status(status: int) -> None:
    """Raise the exception a compiled program's non-zero status stands for."""
    raise status_error(status)


def status_defines(prefix: str = "FJ_", statuses: list[Status] | None = None) -> str:
    """`#define <prefix>ERR_<NAME> <code>` for `statuses` (default: the kernel flags), as C."""
    return "\n".join(f"#define {prefix}{s.macro} {s.code if s.code > 0 else f'({s.code})'} "
                     f"/* {s.exc.__name__} */" for s in (statuses or Status.flags()))
