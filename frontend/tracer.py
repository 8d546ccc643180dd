"""Tracing: run the user's unchanged NumPy code on Tracer objects and record a Graph.

A Tracer stands for an array (or NumPy scalar) whose value is not known at trace time. It goes
through NumPy via `__array_ufunc__` / `__array_function__`, Python operators and ndarray-like
attributes; every operation becomes a Node of the graph, with its dtype and shape asked of
NumPy itself (frontend.ops.resolve_ufunc). Using a traced value where Python needs a concrete
one (`if`, `int()`, `np.asarray`) raises a ConcretizationError naming the user's file:line.
"""

from __future__ import annotations

import os
import sys
import threading
from typing import Any

import numpy as np

from ..errors import ConcretizationError, TraceError, UnsupportedError
from . import ops as O
from .ir import Graph, Node, TensorType
from .pytree import flatten

_UMATH_CLIP = getattr(np._core.umath, "clip", None) if hasattr(np, "_core") else None
_PKG_DIR = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
_PKG_DIRS = frozenset({_PKG_DIR, os.path.realpath(_PKG_DIR)})
# fusejit's own sources: the modules at the package root and its sub-packages. Other files
# under the package directory (tests/, a user's scripts in a checkout) are user code.
_SKIP_DIRS = tuple(os.path.join(d, sub) + os.sep for d in _PKG_DIRS
                   for sub in ("frontend", "lowering", "codegen", "runtime", "kernels_cache")
                   ) + (os.path.dirname(np.__file__),)
_state = threading.local()


def _internal(fname: str) -> bool:
    return (fname.startswith(_SKIP_DIRS) or os.path.dirname(fname) in _PKG_DIRS
            or "scipy" in fname or "<frozen" in fname)


def user_location(skip: int = 1) -> str | None:
    """file:line of the innermost frame that is user code (not fusejit, NumPy or SciPy)."""
    frame = sys._getframe(skip)
    while frame is not None:
        fname = frame.f_code.co_filename
        if not _internal(fname):
            return f"{fname}:{frame.f_lineno}"
        frame = frame.f_back
    return None


class TraceContext:
    """The graph being built by one trace; entered with `with`."""

    def __init__(self, name: str) -> None:
        self.name = name
        self.inputs: list[Node] = []
        self.created: list[Node] = []

    def __enter__(self) -> TraceContext:
        self.prev = getattr(_state, "ctx", None)
        _state.ctx = self
        return self

    def __exit__(self, *exc: Any) -> None:
        _state.ctx = self.prev


def current() -> TraceContext:
    ctx = getattr(_state, "ctx", None)
    if ctx is None:
        raise TraceError("a fusejit Tracer was used outside of the function being traced")
    return ctx


def where_msg() -> str:
    loc = user_location(2)
    ctx = getattr(_state, "ctx", None)
    fn = f" in {ctx.name}()" if ctx is not None else ""
    return f"{fn} at {loc}" if loc else fn


def make_node(op: str, inputs: list[Node], shape: tuple[int, ...], out_dtype: np.dtype,
              **attrs: Any) -> Node:
    """Create a node, stamped with the user's source location."""
    node = Node(op, tuple(inputs), TensorType(tuple(int(s) for s in shape), np.dtype(out_dtype)),
                attrs, user_location(2))
    ctx = getattr(_state, "ctx", None)
    if ctx is not None:
        ctx.created.append(node)
    return node


def const_node(value: Any, dtype: np.dtype | None = None) -> Node:
    arr = np.asarray(value) if dtype is None else np.asarray(value).astype(dtype)
    O.check_dtype(arr.dtype, "a constant")
    arr = np.array(arr, copy=True)
    arr.setflags(write=False)
    return make_node("const", [], arr.shape, arr.dtype, value=arr)


def cast_node(node: Node, dtype: np.dtype) -> Node:
    if node.dtype == dtype:
        return node
    if node.op == "const":
        return const_node(node.attrs["value"], dtype)
    return make_node("cast", [node], node.shape, dtype, dtype=np.dtype(dtype))


class _UnsupportedAttribute(UnsupportedError, AttributeError):
    """An ndarray attribute that Tracer does not implement."""


class Tracer:
    """A traced array. `scalar` marks a NumPy scalar result; `weak` a Python-scalar argument.

    A view (`x[1:3]`, `x.T`...) keeps a link to the array it was taken from (`parent`, with
    the view's `vargs`), so that in-place updates flow both ways as in NumPy: writing through
    the view updates the parent (frontend.inplace), and a view read after its parent changed
    is re-derived from the parent's current value. `version` counts a value's changes."""

    __slots__ = ("_node", "scalar", "weak", "parent", "vargs", "seen", "version", "readonly")
    __array_priority__ = 1000

    def __init__(self, node: Node, scalar: bool = False, weak: type | None = None) -> None:
        self._node = node
        self.scalar = scalar
        self.weak = weak
        self.parent: Tracer | None = None
        self.vargs: tuple | None = None  # view_node arguments over the parent's value
        self.seen = 0  # the parent's version this view was derived from
        self.version = 0
        self.readonly = False

    @property
    def node(self) -> Node:
        """The graph node holding this array's current value."""
        parent = self.parent
        if parent is not None:
            base = parent.node
            if parent.version != self.seen:
                from .views import view_node

                self._node = base if self.vargs is None else view_node(base, *self.vargs)
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
        if method == "reduce":
            from .reductions import ufunc_reduce

            return ufunc_reduce(ufunc, *inputs, **kwargs)
        if method != "__call__":
            raise UnsupportedError(
                f"{ufunc.__name__}.{method} is not supported by fusejit yet{where_msg()}")
        if ufunc is np.matmul:
            from .linalg import matmul

            return matmul(*inputs, **kwargs)
        if ufunc is _UMATH_CLIP:  # ndarray.clip(tracer, ...) reaches NumPy's internal ufunc
            from .numpy_api import clip

            return clip(*inputs, **kwargs)
        return apply_ufunc(ufunc, *inputs, **kwargs)

    def __array_function__(self, func: Any, types: Any, args: Any, kwargs: Any) -> Any:
        from .numpy_api import HANDLERS

        handler = HANDLERS.get(func)
        if handler is None:
            from .reductions import HANDLERS as REDUCTIONS

            handler = REDUCTIONS.get(func)
        if handler is None:
            from .linalg import HANDLERS as LINALG

            handler = LINALG.get(func)
        if handler is None:
            name = getattr(func, "__name__", repr(func))
            raise UnsupportedError(f"np.{name} is not supported by fusejit{where_msg()}; "
                                   "compute it outside the compiled function or file an issue")
        return handler(*args, **kwargs)

    def _concrete(self, what: str) -> Any:
        raise ConcretizationError(
            f"{what} needs a concrete value, but this is a traced array ({self.node.type})"
            f"{where_msg()}. Python control flow and conversions cannot depend on array values "
            "inside @fusejit.jit: use np.where(cond, a, b) for data-dependent choices, or mark "
            "the argument static with static_argnums=/static_argnames=")

    def __bool__(self) -> bool:
        return self._concrete("`if`, `while`, `and`, `or`, `not` or bool()")

    def __int__(self) -> int:
        return self._concrete("int()")

    def __float__(self) -> float:
        return self._concrete("float()")

    def __complex__(self) -> complex:
        return self._concrete("complex()")

    def __index__(self) -> int:
        return self._concrete("using an array as an index or size")

    def __array__(self, *args: Any, **kwargs: Any) -> np.ndarray:
        return self._concrete("np.asarray()/np.array() (conversion to a real ndarray)")

    def item(self, *args: Any) -> Any:
        return self._concrete(".item()")

    def tolist(self) -> Any:
        return self._concrete(".tolist()")

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
        from .views import basic_index

        return basic_index(self, index)

    @property
    def T(self) -> Tracer:  # noqa: N802 - NumPy's name
        from .views import transpose

        return transpose(self, None)

    def transpose(self, *axes: Any) -> Tracer:
        from .views import transpose

        if len(axes) == 1 and (axes[0] is None or isinstance(axes[0], (tuple, list))):
            axes = axes[0]
        return transpose(self, axes or None)

    def reshape(self, *shape: Any, order: str = "C", copy: Any = None) -> Any:
        return np.reshape(self, shape[0] if len(shape) == 1 else shape, order=order)

    def ravel(self, order: str = "C") -> Any:
        return np.ravel(self, order)

    def flatten(self, order: str = "C") -> Any:
        return np.ravel(self, order).copy()

    def squeeze(self, axis: Any = None) -> Any:
        return np.squeeze(self, axis)

    def swapaxes(self, axis1: int, axis2: int) -> Any:
        return np.swapaxes(self, axis1, axis2)

    def clip(self, min: Any = None, max: Any = None, **kwargs: Any) -> Any:  # noqa: A002
        return np.clip(self, min, max, **kwargs)

    def round(self, decimals: int = 0) -> Any:
        return np.round(self, decimals)

    def __getattr__(self, name: str) -> Any:
        # Only reached for names Tracer lacks: an ndarray method fusejit does not trace yet
        # (x.sum(), x.reshape()...) gets a clear error; NumPy's protocol probes (dunders) and
        # hasattr() still see an AttributeError.
        if not name.startswith("_") and hasattr(np.ndarray, name):
            raise _UnsupportedAttribute(f"ndarray.{name} is not supported by fusejit yet"
                                        f"{where_msg()}")
        raise AttributeError(f"'Tracer' object has no attribute {name!r}")

    def sum(self, axis: Any = None, dtype: Any = None, out: Any = None, keepdims: bool = False,
            **kw: Any) -> Any:
        return np.sum(self, axis=axis, dtype=dtype, out=out, keepdims=keepdims, **kw)

    def prod(self, axis: Any = None, dtype: Any = None, out: Any = None, keepdims: bool = False,
             **kw: Any) -> Any:
        return np.prod(self, axis=axis, dtype=dtype, out=out, keepdims=keepdims, **kw)

    def max(self, axis: Any = None, out: Any = None, keepdims: bool = False, **kw: Any) -> Any:
        return np.max(self, axis=axis, out=out, keepdims=keepdims, **kw)

    def min(self, axis: Any = None, out: Any = None, keepdims: bool = False, **kw: Any) -> Any:
        return np.min(self, axis=axis, out=out, keepdims=keepdims, **kw)

    def mean(self, axis: Any = None, dtype: Any = None, out: Any = None,
             keepdims: bool = False, **kw: Any) -> Any:
        return np.mean(self, axis=axis, dtype=dtype, out=out, keepdims=keepdims, **kw)

    def var(self, axis: Any = None, dtype: Any = None, out: Any = None, ddof: Any = 0,
            keepdims: bool = False, **kw: Any) -> Any:
        return np.var(self, axis=axis, dtype=dtype, out=out, ddof=ddof, keepdims=keepdims, **kw)

    def std(self, axis: Any = None, dtype: Any = None, out: Any = None, ddof: Any = 0,
            keepdims: bool = False, **kw: Any) -> Any:
        return np.std(self, axis=axis, dtype=dtype, out=out, ddof=ddof, keepdims=keepdims, **kw)

    def any(self, axis: Any = None, out: Any = None, keepdims: bool = False, **kw: Any) -> Any:
        return np.any(self, axis=axis, out=out, keepdims=keepdims, **kw)

    def all(self, axis: Any = None, out: Any = None, keepdims: bool = False, **kw: Any) -> Any:
        return np.all(self, axis=axis, out=out, keepdims=keepdims, **kw)

    def argmax(self, axis: Any = None, out: Any = None, *, keepdims: bool = False) -> Any:
        return np.argmax(self, axis=axis, out=out, keepdims=keepdims)

    def argmin(self, axis: Any = None, out: Any = None, *, keepdims: bool = False) -> Any:
        return np.argmin(self, axis=axis, out=out, keepdims=keepdims)

    def ptp(self, axis: Any = None, out: Any = None, keepdims: bool = False) -> Any:
        return np.ptp(self, axis=axis, out=out, keepdims=keepdims)

    def dot(self, b: Any, out: Any = None) -> Any:
        return np.dot(self, b, out=out)

    def __matmul__(self, other: Any) -> Any:
        return np.matmul(self, other) if _is_operand(other) else NotImplemented

    def __rmatmul__(self, other: Any) -> Any:
        return np.matmul(other, self) if _is_operand(other) else NotImplemented

    def __setitem__(self, index: Any, value: Any) -> None:
        from .inplace import setitem

        setitem(self, index, value)


def _binary(ufunc: np.ufunc, reflected: bool = False):
    def method(self: Tracer, other: Any) -> Any:
        if not _is_operand(other):
            return NotImplemented
        if ufunc is np.power and not reflected and not self.scalar and self.weak is None and (
                type(other) is int and other == 2):
            # ndarray.__pow__'s fast path: `array ** 2` is np.square (bool ** 2 is int8).
            return apply_ufunc(np.square, self)
        a, b = (other, self) if reflected else (self, other)
        if _all_weak(a, b):
            return _weak_result(apply_ufunc(ufunc, a, b))
        return apply_ufunc(ufunc, a, b)

    return method


def _unary(ufunc: np.ufunc):
    def method(self: Tracer) -> Any:
        out = apply_ufunc(ufunc, self)
        return _weak_result(out) if self.weak is not None else out

    return method


for _name, _uf in [("add", np.add), ("sub", np.subtract), ("mul", np.multiply),
                   ("truediv", np.divide), ("floordiv", np.floor_divide), ("mod", np.remainder),
                   ("pow", np.power), ("and", np.bitwise_and), ("or", np.bitwise_or),
                   ("xor", np.bitwise_xor), ("lshift", np.left_shift),
                   ("rshift", np.right_shift)]:
    setattr(Tracer, f"__{_name}__", _binary(_uf))
    setattr(Tracer, f"__r{_name}__", _binary(_uf, reflected=True))
for _name, _uf in [("lt", np.less), ("le", np.less_equal), ("gt", np.greater),
                   ("ge", np.greater_equal), ("eq", np.equal), ("ne", np.not_equal)]:
    setattr(Tracer, f"__{_name}__", _binary(_uf))
for _name, _uf in [("neg", np.negative), ("pos", np.positive), ("abs", np.absolute),
                   ("invert", np.invert)]:
    setattr(Tracer, f"__{_name}__", _unary(_uf))


def _divmod(self: Tracer, other: Any) -> Any:
    return np.floor_divide(self, other), np.remainder(self, other)


def _rdivmod(self: Tracer, other: Any) -> Any:
    return np.floor_divide(other, self), np.remainder(other, self)


Tracer.__divmod__ = _divmod  # type: ignore[attr-defined]
Tracer.__rdivmod__ = _rdivmod  # type: ignore[attr-defined]

for _name, _uf in [("add", np.add), ("sub", np.subtract), ("mul", np.multiply),
                   ("truediv", np.divide), ("floordiv", np.floor_divide), ("mod", np.remainder),
                   ("pow", np.power), ("and", np.bitwise_and), ("or", np.bitwise_or),
                   ("xor", np.bitwise_xor), ("lshift", np.left_shift),
                   ("rshift", np.right_shift)]:
    def _iop(self: Tracer, other: Any, _uf: np.ufunc = _uf, _n: str = _name) -> Any:
        if self.scalar or self.weak is not None:  # scalars are immutable: Python rebinds
            return getattr(self, f"__{_n}__")(other)
        from .inplace import ufunc_into

        return ufunc_into(_uf, (self, other), self)

    setattr(Tracer, f"__i{_name}__", _iop)


def _imatmul(self: Tracer, other: Any) -> Any:
    raise UnsupportedError(f"in-place operator @= on a traced array is not supported by "
                           f"fusejit yet{where_msg()}; write `x = x @ y` instead")


Tracer.__imatmul__ = _imatmul  # type: ignore[attr-defined]


def _is_operand(x: Any) -> bool:
    # complex is accepted here so that operand_spec reports it as unsupported (with the
    # user's file:line) instead of Python's bare "unsupported operand type(s)".
    return isinstance(x, (Tracer, np.ndarray, np.generic, bool, int, float, complex))


def _is_weak(x: Any) -> bool:
    return (isinstance(x, Tracer) and x.weak is not None) or (
        type(x) in (int, float))


def _all_weak(a: Any, b: Any) -> bool:
    return _is_weak(a) and _is_weak(b)


def _weak_result(t: Any) -> Any:
    """Python scalar arithmetic stays a (weak) Python scalar, as it would without tracing."""
    if isinstance(t, Tracer) and t.dtype in (np.dtype(np.int64), np.dtype(np.float64)):
        t.weak = int if t.dtype.kind == "i" else float
    return t


def operand_spec(x: Any) -> Any:
    """What NumPy's dtype resolution sees: a dtype for strong values, a Python value for weak."""
    if isinstance(x, Tracer):
        if x.weak is not None:
            return x.weak(0)
        return x.dtype
    if isinstance(x, (np.ndarray, np.generic)):
        return O.check_dtype(x.dtype, "an operand")
    if isinstance(x, (bool, int, float)):
        return x
    if isinstance(x, complex):
        raise UnsupportedError(f"complex numbers are not supported by fusejit{where_msg()}")
    raise UnsupportedError(f"operand of type {type(x).__name__} is not supported by "
                           f"fusejit{where_msg()}")


def to_node(x: Any, dtype: np.dtype) -> Node:
    """The node for operand `x`, cast to `dtype` (the loop dtype NumPy chose)."""
    if isinstance(x, Tracer):
        node = x.node
        if x.weak is int and dtype.kind in "iu" and node.op == "input":
            info = np.iinfo(dtype)
            lo, hi = node.attrs.get("range", (info.min, info.max))
            node.attrs["range"] = (max(lo, int(info.min)), min(hi, int(info.max)))
        return cast_node(node, dtype)
    return const_node(x, dtype)


def shape_of(x: Any) -> tuple[int, ...]:
    return x.shape if isinstance(x, (Tracer, np.ndarray, np.generic)) else ()


def broadcast(*shapes: tuple[int, ...]) -> tuple[int, ...]:
    try:
        return np.broadcast_shapes(*shapes)
    except ValueError as e:
        raise ValueError(f"{e}{where_msg()}") from None


def _compute_dtype(d: np.dtype) -> np.dtype:
    """float16 is a storage type: NumPy's half loops compute in float32, and so do we."""
    return np.dtype(np.float32) if d == np.float16 else d


def apply_ufunc(ufunc: np.ufunc, *args: Any, **kwargs: Any) -> Any:
    """Record `ufunc(*args)`; dtypes, shapes and exceptions as NumPy gives them."""
    dtype_kw = kwargs.pop("dtype", None)
    if kwargs.pop("casting", "same_kind") != "same_kind" or kwargs.pop("where", True) is not True:
        raise UnsupportedError(f"casting=/where= on ufuncs is not supported yet{where_msg()}")
    out = kwargs.pop("out", None)
    if out is not None:
        from .inplace import ufunc_into

        if kwargs.pop("casting", "same_kind") != "same_kind" or (
                kwargs.pop("where", True) is not True):
            raise UnsupportedError(f"casting=/where= on ufuncs is not supported yet"
                                   f"{where_msg()}")
        result = apply_ufunc(ufunc, *args, **kwargs, **(
            {"dtype": dtype_kw} if dtype_kw is not None else {}))
        return ufunc_into(ufunc, args, out, result)
    if kwargs:
        raise UnsupportedError(f"{ufunc.__name__}() keyword arguments {sorted(kwargs)} are not "
                               f"supported by fusejit{where_msg()}")
    op = O.lookup_ufunc(ufunc)
    if op is None:
        raise UnsupportedError(f"ufunc {ufunc.__name__} is not supported by fusejit"
                               f"{where_msg()}")
    if len(args) != ufunc.nin:
        raise TypeError(f"{ufunc.__name__}() takes {ufunc.nin} positional arguments but "
                        f"{len(args)} were given")
    specs = [operand_spec(a) for a in args]
    if dtype_kw is not None:
        loop, out_dtype = _resolve_with_dtype(ufunc, specs, np.dtype(dtype_kw))
    else:
        loop, out_dtype = O.resolve_ufunc(ufunc, specs)
    O.check_dtype(out_dtype, f"the result of {ufunc.__name__}")
    for d in loop:
        O.check_dtype(d, f"an operand of {ufunc.__name__}")
    if op.name == "nextafter" and any(d == np.float16 for d in loop):
        raise UnsupportedError(f"np.nextafter with float16 operands is not supported by fusejit"
                               f"{where_msg()} (its step is a float16 ulp, which a float32 "
                               "computation would lose); cast the operands to float32 first")
    shape = broadcast(*(shape_of(a) for a in args))
    if op.name in _MIRRORED and dtype_kw is None and all(d.kind in "iu" for d in loop):
        exact = _integer_comparison(op.name, args, loop, shape)
        if exact is not None:
            return exact
    inputs = [to_node(a, _compute_dtype(d)) for a, d in zip(args, loop)]
    node = make_node(op.name, inputs, shape, _compute_dtype(out_dtype))
    node = cast_node(node, out_dtype)
    return Tracer(node, scalar=(shape == ()))


# Comparison -> the same comparison with its operands swapped.
_MIRRORED = {"equal": "equal", "not_equal": "not_equal", "less": "greater",
             "less_equal": "greater_equal", "greater": "less", "greater_equal": "less_equal"}


def _integer_comparison(name: str, args: tuple, loop: list[np.dtype],
                        shape: tuple[int, ...]) -> Tracer | None:
    """NumPy compares integers exactly: int64 with uint64 (mixed loops), and an integer array
    with any Python int, even one outside the array's dtype. None: the ordinary path is exact.
    """
    a, b = args
    if _is_weak(a) and not _is_weak(b):  # put the Python int second
        a, b, loop, name = b, a, loop[::-1], _MIRRORED[name]
    d = loop[0]
    if type(b) is int:  # a literal Python int
        info = np.iinfo(d)
        if info.min <= b <= info.max:
            return None
        # Out of the array's range: NumPy's answer is the same for every element.
        value = getattr(np, name)(np.array([info.min], d), b)[0]
        out = make_node("view", [const_node(np.bool_(value))], shape, np.dtype(bool),
                        start=(), dims=((-1, 0),) * len(shape))
        return Tracer(make_node("copy", [out], shape, np.dtype(bool)), scalar=shape == ())
    if isinstance(b, Tracer) and b.weak is int:
        # A Python-int argument (held as int64): compare in int64 (or int64 vs uint64), with
        # no range restriction on its value.
        nodes = [cast_node(a.node if isinstance(a, Tracer) else const_node(a), d), b.node]
        types = [d, np.dtype(np.int64)]
        if d != np.uint64:
            nodes[0] = cast_node(nodes[0], np.dtype(np.int64))
            types[0] = np.dtype(np.int64)
    elif {loop[0], loop[1]} == {np.dtype(np.int64), np.dtype(np.uint64)}:
        nodes = [to_node(x, t) for x, t in zip((a, b), loop)]
        types = list(loop)
    else:
        return None
    if types[0] == types[1]:
        node = make_node(name, nodes, shape, np.dtype(bool))
        return Tracer(node, scalar=shape == ())
    # int64 s vs uint64 u: s < 0 decides unless both are in the common range [0, 2**63).
    if types[0] == np.uint64:
        nodes, name = nodes[::-1], _MIRRORED[name]
    s, u = nodes
    zero = const_node(np.int64(0))
    common = make_node(name, [cast_node(s, np.dtype(np.uint64)), u], shape, np.dtype(bool))
    if name in ("equal", "greater", "greater_equal"):
        nonneg = make_node("greater_equal", [s, zero], s.shape, np.dtype(bool))
        node = make_node("logical_and", [nonneg, common], shape, np.dtype(bool))
    else:
        neg = make_node("less", [s, zero], s.shape, np.dtype(bool))
        node = make_node("logical_or", [neg, common], shape, np.dtype(bool))
    return Tracer(node, scalar=shape == ())


def _resolve_with_dtype(ufunc: np.ufunc, specs: list[Any], dtype: np.dtype):
    probes = [np.empty(0, d) if isinstance(d, np.dtype) else d for d in specs]
    with np.errstate(all="ignore"):
        out_dtype = np.asarray(ufunc(*probes, dtype=dtype)).dtype
    spec = tuple(d if isinstance(d, np.dtype) else type(d) for d in specs)
    loop = ufunc.resolve_dtypes(spec + (dtype,), signature=(None,) * ufunc.nin + (dtype,))
    return list(loop[: ufunc.nin]), out_dtype


def trace(fn: Any, args: list[Any], static: frozenset[int] = frozenset(),
          name: str | None = None, same: dict[int, int] | None = None
          ) -> tuple[Graph, list[int]]:
    """Trace `fn(*args)`; returns the Graph and the positions of its (non-static) inputs.

    `same` maps an argument position to an earlier one holding the very same array: both get
    one Tracer, so an in-place update through one is seen through the other, as in NumPy."""
    name = name or getattr(fn, "__name__", "fn")
    ctx = TraceContext(name)
    call_args: list[Any] = []
    positions: list[int] = []
    tracers: list[Tracer] = []
    kinds: dict[int, tuple[bool, Any]] = {}
    for i, a in enumerate(args):
        if i in static or a is None:  # None has one value: it is static by nature
            call_args.append(a)
            continue
        if same and i in same:
            call_args.append(call_args[same[i]])
            continue
        t = input_tracer(a, len(ctx.inputs), name, i)
        ctx.inputs.append(t.node)
        tracers.append(t)
        kinds[t.node.id] = (t.scalar, t.weak)
        positions.append(i)
        call_args.append(t)
    with ctx:
        result = fn(*call_args)
    leaves, tree = flatten(result, lambda o: isinstance(o, (Tracer, np.ndarray, np.generic)))
    outputs: list[Node] = []
    scalars: list[bool] = []
    arg_index = {id(t): k for k, t in enumerate(tracers)}
    returned: list[int] = []
    with ctx:
        for leaf in leaves:
            k = arg_index.get(id(leaf), -1) if isinstance(leaf, Tracer) else -1
            if k >= 0 and tracers[k].version:
                # An argument updated in place and returned: NumPy returns the caller's own
                # (now updated) array.
                outputs.append(ctx.inputs[k])
                scalars.append(False)
                returned.append(k)
                continue
            if isinstance(leaf, Tracer):
                node = leaf.node
                if node.op == "input" and kinds[node.id] != (leaf.scalar, leaf.weak):
                    # An argument returned as another kind of object (a 0-d array as a NumPy
                    # scalar, `a[()]`, or a scalar as a 0-d array, `s[...]`): a new value.
                    node = make_node("copy", [node], node.shape, node.dtype)
                outputs.append(node)
                scalars.append(leaf.scalar or leaf.weak is not None)
            else:
                outputs.append(const_node(leaf))
                scalars.append(isinstance(leaf, np.generic))
            index = {n.id: j for j, n in enumerate(ctx.inputs)}
            returned.append(index.get(outputs[-1].id, -1))
    updates = [k for k, t in enumerate(tracers)
               if t.version and not t.scalar and t.weak is None and t.node is not ctx.inputs[k]]
    body = list(ctx.inputs) + ctx.created
    first: dict[int, int] = {}
    alias = [first.setdefault(id(leaf), k) for k, leaf in enumerate(leaves)]
    alias = [a if a != k else -1 for k, a in enumerate(alias)]
    n = len(updates)
    outputs += [tracers[k].node for k in updates]
    return Graph(ctx.inputs, outputs, name, tree, scalars + [False] * n, body,
                 alias + [-1] * n, returned + [-1] * n, updates), positions


def input_tracer(a: Any, index: int, fn_name: str, position: int) -> Tracer:
    """The Tracer standing for argument `a` (an array, NumPy scalar or Python scalar)."""
    if isinstance(a, np.ndarray):
        dtype = O.check_dtype(a.dtype, f"argument {position} of {fn_name}()")
        return Tracer(Node("input", (), TensorType(a.shape, dtype), {"index": index}))
    if isinstance(a, np.generic):
        dtype = O.check_dtype(a.dtype, f"argument {position} of {fn_name}()")
        return Tracer(Node("input", (), TensorType((), dtype), {"index": index}), scalar=True)
    if isinstance(a, (bool, np.bool_)):
        return Tracer(Node("input", (), TensorType((), np.dtype(bool)), {"index": index}),
                      scalar=True)
    if isinstance(a, int):
        return Tracer(Node("input", (), TensorType((), np.dtype(np.int64)),
                           {"index": index, "weak": "int"}), scalar=True, weak=int)
    if isinstance(a, float):
        return Tracer(Node("input", (), TensorType((), np.dtype(np.float64)),
                           {"index": index, "weak": "float"}), scalar=True, weak=float)
    raise UnsupportedError(
        f"argument {position} of {fn_name}() has type {type(a).__name__}; fusejit traces "
        "NumPy arrays, NumPy scalars and Python bool/int/float. Convert it with np.asarray(), "
        "or mark it static with static_argnums=/static_argnames=")
