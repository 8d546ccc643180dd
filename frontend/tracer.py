"""Tracing: run the user's unchanged NumPy code on Tracer objects and record a Graph.

A Tracer stands for an array (or NumPy scalar) whose value is not known at trace time. It goes
through NumPy via `__array_ufunc__` / `__array_function__`, Python operators and ndarray-like
attributes; every operation becomes a Node of the graph, with its dtype and shape asked of
NumPy itself (frontend.ops.resolve_ufunc). Using a traced value where Python needs a concrete
one (`if`, `int()`) raises a ConcretizationError naming the user's file:line (np.asarray and
the other array constructors trace: frontend/numpy_patch.py).
"""

from __future__ import annotations

import ast
import operator
from typing import Any

import numpy as np

from ..errors import ConcretizationError, UnsupportedError
from . import ops as O
from .apparent_class import apparent_class
from .context import TraceContext as TraceContext  # `X as X`: re-exported (frontend imports)
from .context import cast_node, const_node, make_node, user_expression, where_msg
from .context import current as current
from .context import tracing as tracing
from .context import user_location as user_location
from .ir import Node
from .numpy_patch import WRAPPERS


class _UnsupportedAttribute(UnsupportedError, AttributeError):
    """An ndarray attribute that Tracer does not implement."""


class Tracer:
    """A traced array. `scalar` marks a NumPy scalar result; `weak` a Python-scalar argument.

    A view (`x[1:3]`, `x.T`...) keeps a link to the array it was taken from (`parent`, with
    the view's `vargs`), so that in-place updates flow both ways as in NumPy: writing through
    the view updates the parent (frontend.inplace), and a view read after its parent changed
    is re-derived from the parent's current value. `version` counts a value's changes."""

    __fusejit_tracer__ = True  # recognised across copies of fusejit (frontend.scipy_api)

    __slots__ = ("_node", "scalar", "weak", "parent", "vargs", "seen", "version", "readonly")
    __array_priority__ = 1000

    def __init__(self, node: Node, scalar: bool = False, weak: type | None = None) -> None:
        self._node = node
        self.scalar = scalar
        self.weak = weak
        self.parent: Tracer | None = None
        # view_node arguments over the parent's value (or a function of it: frontend.gather)
        self.vargs: tuple | None = None
        self.seen = 0  # the parent's version this view was derived from
        self.version = 0
        self.readonly: bool | str = False  # a str says why writing through it is refused

    @property  # type: ignore[misc]
    def __class__(self) -> type:  # isinstance(x, np.ndarray) in the user's code: True
        return apparent_class(self)

    @property
    def node(self) -> Node:
        """The graph node holding this array's current value."""
        parent = self.parent
        if parent is not None:
            base = parent.node
            if parent.version != self.seen:
                from .views import view_node

                if self.vargs is None:
                    self._node = base
                elif callable(self.vargs[0]):  # x[i] by a traced integer (frontend.gather)
                    self._node = self.vargs[0](base)
                else:
                    self._node = view_node(base, *self.vargs)
                self.seen = parent.version
                self.version += 1
        return self._node

    # --- static attributes ------------------------------------------------------------------
    @property
    def shape(self) -> tuple[int, ...]:
        return self.node.shape

    @property
    def dtype(self) -> np.dtype:
        return self.node.dtype

    @property
    def ndim(self) -> int:
        return len(self.node.shape)

    @property
    def size(self) -> int:
        return self.node.type.size

    @property
    def itemsize(self) -> int:
        return self.node.dtype.itemsize

    @property
    def nbytes(self) -> int:
        return self.size * self.itemsize

    def __len__(self) -> int:
        if not self.shape:
            raise TypeError("len() of unsized object")
        return self.shape[0]

    def __repr__(self) -> str:
        return f"Tracer({self.node.type}, %{self.node.id})"

    __hash__ = object.__hash__

    # --- NumPy protocols --------------------------------------------------------------------
    def __array_ufunc__(self, ufunc: np.ufunc, method: str, *inputs: Any, **kwargs: Any) -> Any:
        from . import registry

        for x in inputs:  # x[mask] among them: frontend/masked.py answers
            if getattr(type(x), "fusejit_selection", False):
                return NotImplemented
        if method != "__call__":
            handler = registry.UFUNC_METHODS.get(method)
            if handler is None:
                raise UnsupportedError(
                    f"{ufunc.__name__}.{method} is not supported by fusejit yet{where_msg()}")
            return handler(ufunc, *inputs, **kwargs)
        handler = registry.UFUNCS.get(ufunc)
        if handler is not None:
            return handler(*inputs, **kwargs)
        from .ufuncs import apply_ufunc

        return apply_ufunc(ufunc, *inputs, **kwargs)

    def __array_function__(self, func: Any, types: Any, args: Any, kwargs: Any) -> Any:
        from . import registry

        if any(getattr(t, "fusejit_selection", False) for t in types):
            return NotImplemented  # x[mask] among the arguments: frontend/masked.py answers
        handler = registry.FUNCTIONS.get(func)
        if handler is None:
            name = getattr(func, "__name__", repr(func))
            module = getattr(func, "__module__", None) or "numpy"
            if module.startswith("numpy.") and not module.startswith("numpy._"):
                name = module[len("numpy."):] + "." + name  # np.linalg.solve, np.fft.fft
            raise UnsupportedError(f"np.{name} is not supported by fusejit{where_msg()}; " + (
                registry.REFUSED.get(func)
                or "compute it outside the compiled function or file an issue"))
        return handler(*args, **kwargs)

    def _concrete(self, what: str) -> Any:
        raise ConcretizationError(
            f"{what} needs a concrete value, but this is a traced array ({self.node.type})"
            f"{where_msg()}. Python control flow and conversions cannot depend on array values "
            "inside @fusejit.jit: use np.where(cond, a, b) for data-dependent choices, or mark "
            "the argument static with static_argnums=/static_argnames=")

    def _known(self, what: str) -> np.ndarray:
        """This array's value when it depends on no input (frontend/known.py), else the
        ConcretizationError for `what`."""
        from .known import known_value

        value = known_value(self.node)
        if value is None:
            self._concrete(what)
        return value

    def __bool__(self) -> bool:
        return bool(self._known("`if`, `while`, `and`, `or`, `not` or bool()"))

    def __int__(self) -> int:
        return int(self._known("int()"))

    def __float__(self) -> float:
        return float(self._known("float()"))

    def __complex__(self) -> complex:
        return complex(self._known("complex()"))

    def __index__(self) -> int:
        return operator.index(self._known("using an array as an index or size"))

    def __array__(self, dtype: Any = None, copy: Any = None) -> np.ndarray:
        # NumPy also lands here for `table[i]`: a NumPy array indexed by a traced array.
        try:
            value = self._concrete_array()
        except ConcretizationError:
            hint = _scalar_type_call()
            if hint is None:
                raise
            raise ConcretizationError(hint) from None
        return np.array(value, dtype=dtype, copy=True)  # (the trace's own stays unwritten)

    def _concrete_array(self) -> np.ndarray:
        return self._known(
            "conversion to a real ndarray (np.asarray/np.array/"
            "np.ascontiguousarray..., and NumPy functions given a list of "
            "traced values, np.sum([a, b]), trace only as fusejit's "
            "versions, which are not in place with FUSEJIT_PATCH_NUMPY=0, nor "
            "for a name bound to NumPy's function in code fusejit does not "
            "shadow: `from numpy import asarray` in an installed library; "
            "there write "
            "np.stack([a, b]) for np.array([a, b]) and x.astype(dtype) for "
            "np.asarray(x, dtype); a ufunc given a list or tuple that holds "
            "traced values converts it too: write np.abs(np.stack([a, b])) "
            "for np.abs([a, b]); np.vectorize, np.r_ and np.c_ convert "
            "too; also indexing a NumPy array with it, table[i] or "
            "np.take(table, i): pass the table as an argument of the "
            "compiled function)")

    def item(self, *args: Any) -> Any:
        return self._known(".item()").item(*args)

    def tolist(self) -> Any:
        return self._known(".tolist()").tolist()

    def __iter__(self):
        if not self.shape:
            raise TypeError("iteration over a 0-d array")
        return (self[i] for i in range(self.shape[0]))

    # --- methods ----------------------------------------------------------------------------
    def astype(self, dtype: Any, order: str = "K", casting: str = "unsafe", subok: bool = True,
               copy: bool = True) -> Tracer:
        dtype = O.check_dtype(np.dtype(dtype), f"astype(){where_msg()}")
        if not np.can_cast(self.dtype, dtype, casting=casting):
            raise TypeError(f"Cannot cast array data from {self.dtype!r} to {dtype!r} "
                            f"according to the rule {casting!r}")
        if self.dtype.kind == "c" and dtype.kind != "c":
            import warnings

            warnings.warn("Casting complex values to real discards the imaginary part",
                          np.exceptions.ComplexWarning, stacklevel=2)
        if dtype == self.dtype:
            if not copy:
                return self
            return Tracer(make_node("copy", [self.node], self.shape, dtype), scalar=self.scalar)
        return Tracer(make_node("cast", [self.node], self.shape, dtype, dtype=dtype),
                      scalar=self.scalar)

    def copy(self, order: str = "K") -> Tracer:
        # A NumPy scalar's .copy() is a scalar; an array's (0-d included) is an array.
        return Tracer(make_node("copy", [self.node], self.shape, self.dtype), scalar=self.scalar)

    def __getitem__(self, index: Any) -> Tracer:
        from .gather import getitem

        return getitem(self, index)

    @property
    def real(self) -> Tracer:
        from .realparts import real_of

        return real_of(self)

    @property
    def imag(self) -> Tracer:
        from .realparts import imag_of

        return imag_of(self)

    def conj(self) -> Tracer:
        # ndarray.conj() of a real array is the array itself; of a complex one, np.conjugate
        return np.conjugate(self) if self.dtype.kind == "c" else self

    conjugate = conj

    @property
    def T(self) -> Tracer:  # noqa: N802 - NumPy's name
        from .views import transpose

        return transpose(self, None)

    def transpose(self, *axes: Any) -> Tracer:
        from .views import transpose

        if len(axes) == 1 and isinstance(axes[0], np.ndarray) and axes[0].ndim == 1:
            axes = tuple(axes[0].tolist())  # x.transpose(np.argsort(axes)), as NumPy takes
        if len(axes) == 1 and (axes[0] is None or isinstance(axes[0], (tuple, list))):
            axes = axes[0]
        return transpose(self, axes or None)

    def reshape(self, *shape: Any, order: str = "C", copy: Any = None) -> Any:
        return np.reshape(self, shape[0] if len(shape) == 1 else shape, order=order)

    def flatten(self, order: str = "C") -> Any:
        return np.ravel(self, order).copy()

    def __getattr__(self, name: str) -> Any:
        # Only reached for names Tracer lacks: an ndarray method fusejit does not trace yet
        # (x.sum(), x.reshape()...) gets a clear error; NumPy's protocol probes (dunders) and
        # hasattr() still see an AttributeError.
        if not name.startswith("_") and hasattr(np.ndarray, name):
            raise _UnsupportedAttribute(f"ndarray.{name} is not supported by fusejit yet"
                                        f"{where_msg()}")
        if name == "__array_interface__":  # read directly by as_strided and ctypes code
            raise _UnsupportedAttribute(
                f"the memory of a traced array (__array_interface__, which "
                f"np.lib.stride_tricks.as_strided and ctypes read) is not available"
                f"{where_msg()}: use np.lib.stride_tricks.sliding_window_view, "
                "np.broadcast_to or indexing for the view, or call it outside the compiled "
                "function")
        raise AttributeError(f"'Tracer' object has no attribute {name!r}")

    def __matmul__(self, other: Any) -> Any:
        return np.matmul(self, other) if is_operand(other) else NotImplemented

    def __rmatmul__(self, other: Any) -> Any:
        return np.matmul(other, self) if is_operand(other) else NotImplemented

    def __setitem__(self, index: Any, value: Any) -> None:
        from .inplace import setitem

        setitem(self, index, value)


def is_operand(x: Any) -> bool:
    # complex is accepted here so that operand_spec reports it as unsupported (with the
    # user's file:line) instead of Python's bare "unsupported operand type(s)".
    return isinstance(x, (Tracer, np.ndarray, np.generic, bool, int, float, complex, list,
                          tuple))


def array_operand(x: Any) -> Any:
    """A list or tuple where NumPy takes an array (`x + [1, 2]`, `np.where(c, [a, b], 0)`):
    the array np.asarray makes of it, a traced one when it holds traced values
    (frontend/conversion.py), with NumPy's dtype (a list is never a weak scalar) and errors
    (ragged nesting). Anything else is returned as it is."""
    if isinstance(x, (list, tuple)):
        return WRAPPERS["asarray"](x)
    return x


def is_weak(x: Any) -> bool:
    return (isinstance(x, Tracer) and x.weak is not None) or (
        type(x) in (int, float, complex))


def all_weak(a: Any, b: Any) -> bool:
    return is_weak(a) and is_weak(b)


def weak_result(t: Any) -> Any:
    """Python scalar arithmetic stays a (weak) Python scalar, as it would without tracing."""
    if isinstance(t, Tracer) and t.dtype in (np.dtype(np.int64), np.dtype(np.float64),
                                             np.dtype(np.complex128)):
        t.weak = {"i": int, "f": float, "c": complex}[t.dtype.kind]
    return t


def operand_spec(x: Any) -> Any:
    """What NumPy's dtype resolution sees: a dtype for strong values, a Python value for weak."""
    x = array_operand(x)
    if isinstance(x, Tracer):
        if x.weak is not None:
            return x.weak(0)
        return x.dtype
    if isinstance(x, (np.ndarray, np.generic)):
        return O.check_dtype(x.dtype, "an operand")
    if isinstance(x, (bool, int, float, complex)):
        return x
    raise UnsupportedError(f"operand of type {type(x).__name__} is not supported by "
                           f"fusejit{where_msg()}")


def _scalar_type_call() -> str | None:
    """The clear error for `np.float32(v)` (any NumPy scalar type) of a traced v, where the
    user's line is that call; else None."""
    expr = user_expression()
    try:
        call = ast.parse(expr or "", mode="eval").body
    except SyntaxError:
        return None
    if not (isinstance(call, ast.Call) and len(call.args) == 1 and not call.keywords):
        return None
    f = call.func
    name = f.attr if isinstance(f, ast.Attribute) else getattr(f, "id", "")
    kind = getattr(np, name, None)
    if not (isinstance(kind, type) and issubclass(kind, np.generic)):
        return None
    arg = ast.get_source_segment(expr or "", call.args[0])
    return (f"np.{name}({arg}) of a traced value{where_msg()}: a NumPy scalar holds a number "
            "known now, and a traced value has none while tracing; write "
            f"np.asarray({arg}, dtype=np.{name}), which gives the same results in the "
            "compiled function (and arr.astype() for an array)")


def to_node(x: Any, dtype: np.dtype) -> Node:
    """The node for operand `x`, cast to `dtype` (the loop dtype NumPy chose)."""
    x = array_operand(x)
    if isinstance(x, Tracer):
        node = x.node
        if x.weak is int and dtype.kind in "iu" and node.op == "input":
            info = np.iinfo(dtype)
            lo, hi = node.attrs.get("range", (info.min, info.max))
            if "range" not in node.attrs or lo < info.min or hi > info.max:
                # (the error names the dtype that narrowed the range last, as NumPy's does)
                node.attrs["range_dtype"] = dtype.name
            node.attrs["range"] = (max(lo, int(info.min)), min(hi, int(info.max)))
        if x.weak is int and dtype.kind in "fc":
            # NumPy converts a Python int to a float through a double (then rounds again)
            node = cast_node(node, np.dtype(np.float64))
        return cast_node(node, dtype)
    return const_node(x, dtype)


def as_tracer(x: Any) -> Tracer:
    """`x` itself if it is traced, else its value as a constant of the graph (np.asarray's
    dtype and shape)."""
    return x if isinstance(x, Tracer) else Tracer(const_node(np.asarray(x)))


def shape_of(x: Any) -> tuple[int, ...]:
    x = array_operand(x)
    return x.shape if isinstance(x, (Tracer, np.ndarray, np.generic)) else ()


def broadcast(*shapes: tuple[int, ...]) -> tuple[int, ...]:
    try:
        return np.broadcast_shapes(*shapes)
    except ValueError as e:
        raise ValueError(f"{e}{where_msg()}") from None

