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

_PKG_DIR = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
_SKIP_DIRS = (_PKG_DIR, os.path.dirname(np.__file__))
_state = threading.local()


def user_location(skip: int = 1) -> str | None:
    """file:line of the innermost frame that is user code (not fusejit, NumPy or SciPy)."""
    frame = sys._getframe(skip)
    while frame is not None:
        fname = frame.f_code.co_filename
        if not fname.startswith(_SKIP_DIRS) and "scipy" not in fname and "<frozen" not in fname:
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


class Tracer:
    """A traced array. `scalar` marks a NumPy scalar result; `weak` a Python-scalar argument."""

    __slots__ = ("node", "scalar", "weak")
    __array_priority__ = 1000

    def __init__(self, node: Node, scalar: bool = False, weak: type | None = None) -> None:
        self.node = node
        self.scalar = scalar
        self.weak = weak

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
        if method != "__call__":
            raise UnsupportedError(
                f"{ufunc.__name__}.{method} is not supported by fusejit yet{where_msg()}")
        return apply_ufunc(ufunc, *inputs, **kwargs)

    def __array_function__(self, func: Any, types: Any, args: Any, kwargs: Any) -> Any:
        from .numpy_api import HANDLERS

        handler = HANDLERS.get(func)
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
        dtype = O.check_dtype(np.dtype(dtype), "astype()")
        if not np.can_cast(self.dtype, dtype, casting=casting):
            raise TypeError(f"Cannot cast array data from {self.dtype!r} to {dtype!r} "
                            f"according to the rule {casting!r}")
        if dtype == self.dtype:
            return Tracer(make_node("copy", [self.node], self.shape, dtype)) if copy else self
        return Tracer(make_node("cast", [self.node], self.shape, dtype, dtype=dtype),
                      scalar=self.scalar)

    def copy(self, order: str = "K") -> Tracer:
        return Tracer(make_node("copy", [self.node], self.shape, self.dtype))

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

    def clip(self, min: Any = None, max: Any = None, **kwargs: Any) -> Any:  # noqa: A002
        return np.clip(self, min, max, **kwargs)

    def round(self, decimals: int = 0) -> Any:
        return np.round(self, decimals)

    def __setitem__(self, index: Any, value: Any) -> None:
        raise UnsupportedError(f"in-place assignment is not supported by fusejit yet{where_msg()}")


def _binary(ufunc: np.ufunc, reflected: bool = False):
    def method(self: Tracer, other: Any) -> Any:
        if not _is_operand(other):
            return NotImplemented
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
                   ("rshift", np.right_shift), ("matmul", None)]:
    def _iop(self: Tracer, other: Any, _n: str = _name) -> Any:
        raise UnsupportedError(f"in-place operator {_n}= on a traced array is not supported by "
                               f"fusejit yet{where_msg()}; write `x = x {_n} y` instead")

    setattr(Tracer, f"__i{_name}__", _iop)


def _is_operand(x: Any) -> bool:
    return isinstance(x, (Tracer, np.ndarray, np.generic, bool, int, float))


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
    if kwargs.get("out") is not None:
        raise UnsupportedError(f"{ufunc.__name__}(..., out=) is not supported yet{where_msg()}")
    kwargs.pop("out", None)
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
    shape = broadcast(*(shape_of(a) for a in args))
    inputs = [to_node(a, _compute_dtype(d)) for a, d in zip(args, loop)]
    node = make_node(op.name, inputs, shape, _compute_dtype(out_dtype))
    node = cast_node(node, out_dtype)
    return Tracer(node, scalar=(shape == ()))


def _resolve_with_dtype(ufunc: np.ufunc, specs: list[Any], dtype: np.dtype):
    probes = [np.empty(0, d) if isinstance(d, np.dtype) else d for d in specs]
    with np.errstate(all="ignore"):
        out_dtype = np.asarray(ufunc(*probes, dtype=dtype)).dtype
    spec = tuple(d if isinstance(d, np.dtype) else type(d) for d in specs)
    loop = ufunc.resolve_dtypes(spec + (dtype,), signature=(None,) * ufunc.nin + (dtype,))
    return list(loop[: ufunc.nin]), out_dtype


def trace(fn: Any, args: list[Any], static: frozenset[int] = frozenset(),
          name: str | None = None) -> tuple[Graph, list[int]]:
    """Trace `fn(*args)`; returns the Graph and the positions of its (non-static) inputs."""
    name = name or getattr(fn, "__name__", "fn")
    ctx = TraceContext(name)
    call_args: list[Any] = []
    positions: list[int] = []
    for i, a in enumerate(args):
        if i in static:
            call_args.append(a)
            continue
        t = input_tracer(a, len(ctx.inputs), name, i)
        ctx.inputs.append(t.node)
        positions.append(i)
        call_args.append(t)
    with ctx:
        result = fn(*call_args)
    leaves, tree = flatten(result, lambda o: isinstance(o, (Tracer, np.ndarray, np.generic)))
    outputs: list[Node] = []
    scalars: list[bool] = []
    with ctx:
        for leaf in leaves:
            if isinstance(leaf, Tracer):
                outputs.append(leaf.node)
                scalars.append(leaf.scalar or leaf.weak is not None)
            else:
                outputs.append(const_node(leaf))
                scalars.append(isinstance(leaf, np.generic))
    body = list(ctx.inputs) + ctx.created
    return Graph(ctx.inputs, outputs, name, tree, scalars, body), positions


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
