"""Python scalars in a trace: arithmetic that only involves Python-scalar arguments and Python
numbers runs as Python, at call time, in a short *prelude* before the native call.

Without fusejit, `a * b + 1` on two Python floats never reaches NumPy: it gives a Python float,
`7 ** -2` gives 0.0204..., integers never overflow and `1 / 0` raises ZeroDivisionError. A
PyScalar stands for such a value while tracing: Python operators between PyScalars (or with a
Python bool/int/float) record a `Step` of the prelude; the value enters the graph, as the weak
scalar NumPy would see, only where it meets NumPy (an array, a NumPy scalar, a ufunc, a NumPy
function). A PyScalar returned by the function is returned as the Python object itself.

Values are numbered like the call's arguments: 0..nargs-1 are the arguments, then one value per
step. Tracing runs every step on the call's own values (`example`), so a step that raises in
Python raises here too, and each step's result type is known. Only `**` has a result type that
depends on the values (`2 ** -1` is a float, `(-8.0) ** 0.5` a complex); those steps carry a
guard, and a call whose types differ is traced again (`Prelude.evaluate` returns None).
"""

from __future__ import annotations

import math
import operator
from collections.abc import Callable
from dataclasses import dataclass, field
from keyword import iskeyword
from typing import Any

import numpy as np

from ..errors import ConcretizationError, UnsupportedError
from .ir import Node, TensorType
from .tracer import Tracer, current, where_msg

PY_NUMBER = (bool, int, float, complex)

# Python source of each prelude operation ({0}, {1}: the operands).
PY_OPS: dict[str, str] = {
    "add": "{0} + {1}", "sub": "{0} - {1}", "mul": "{0} * {1}", "truediv": "{0} / {1}",
    "floordiv": "{0} // {1}", "mod": "{0} % {1}", "pow": "{0} ** {1}", "and": "{0} & {1}",
    "or": "{0} | {1}", "xor": "{0} ^ {1}", "lshift": "{0} << {1}", "rshift": "{0} >> {1}",
    "lt": "{0} < {1}", "le": "{0} <= {1}", "gt": "{0} > {1}", "ge": "{0} >= {1}",
    "eq": "{0} == {1}", "ne": "{0} != {1}", "neg": "-{0}", "pos": "+{0}", "abs": "abs({0})",
    "invert": "~{0}",
}
_PY_FNS: dict[str, Callable[..., Any]] = {
    "add": operator.add, "sub": operator.sub, "mul": operator.mul,
    "truediv": operator.truediv, "floordiv": operator.floordiv, "mod": operator.mod,
    "pow": operator.pow, "and": operator.and_, "or": operator.or_, "xor": operator.xor,
    "lshift": operator.lshift, "rshift": operator.rshift, "lt": operator.lt,
    "le": operator.le, "gt": operator.gt, "ge": operator.ge, "eq": operator.eq,
    "ne": operator.ne, "neg": operator.neg, "pos": operator.pos, "abs": operator.abs,
    "invert": operator.invert,
}


def py_source(op: str, names: list[str], shown: bool = False) -> str:
    """Python source of prelude operation `op` on operands `names` (`math.<name>`: a call of
    the math function, through `_math` in the prelude's namespace, or as `math.` `shown` in
    the IR; frontend/pymath.py)."""
    if op.startswith("math."):
        return f"{'math' if shown else '_math'}.{op[5:]}({', '.join(names)})"
    return PY_OPS[op].format(*names)


def py_function(op: str) -> Callable[..., Any]:
    return getattr(math, op[5:]) if op.startswith("math.") else _PY_FNS[op]


def _guarded(op: str, operands: list[Any]) -> bool:
    """Whether the result type of `op` on values of these types depends on the values: `**`
    (int ** negative int is a float, negative float ** float a complex), except a float
    raised to an integer power, which is always a float."""
    if op != "pow":
        return False
    base, exponent = (type(v) for v in operands)
    return not (base is float and exponent in (int, bool))


@dataclass(frozen=True)
class Step:
    """value[result] = op(operands): an operand is ("v", value index) or ("c", a constant)."""

    op: str
    operands: tuple[tuple[str, Any], ...]
    result: int
    kind: type  # the Python type traced
    guard: bool = False  # the type depends on the values: checked at every call


@dataclass(eq=False)
class Read:
    """value[result] = the current value of a global or closure variable the function reads
    (frontend.captures): `where` a globals dict (`kind` "global") or a cell ("cell").
    `what`: "array" (an implicit input; guarded on shape, dtype and layout), "value" (baked
    into the trace; guarded on its value) or "contents" (an array baked in; guarded on its
    contents, for a function that needs its values at trace time). `path`: the steps from the
    variable to the value read, taken again at every call: ("attr", name) `v.name`, ("item",
    key) `v[key]`, ("len", None) `len(v)`, ("keys", None) `tuple(v)` (frontend.reached)."""

    where: Any
    name: str
    kind: str
    what: str
    example: Any
    contiguous: bool = True
    result: int = -1
    path: tuple[tuple[str, Any], ...] = ()

    def __post_init__(self) -> None:
        if self.what == "contents":
            self.example = np.array(self.example, copy=True)

    def key(self, value: Any) -> Any:
        """What a retrace for `value` is cached under (frontend.pyscalar.Prelude.types)."""
        if self.what == "value" and _hashable(value):
            return (type(value), value)
        if isinstance(value, np.ndarray):
            if self.what == "contents":
                return (value.shape, value.dtype.str, value.tobytes())
            return (value.shape, value.dtype.str, value.strides)
        return ("id", id(value))

    def lines(self, env: dict[str, Any], indent: str, bail: str) -> list[str]:
        r = self.result  # env names: _g* (the stub's own are _s<j>, _d<j>, _c<i>...)
        env[f"_gw{r}"], env[f"_gn{r}"] = self.where, self.name
        env["_nd"], env["_miss"] = np.ndarray, _MISSING
        read = (f"_gw{r}.get(_gn{r}, _miss)" if self.kind == "global"
                else f"_gw{r}.cell_contents")
        v = f"a{r}"
        head = [f"{indent}{v} = {read}"]
        if self.path:  # a failed step reads as missing: traced again, raising Python's error
            expr = read
            for j, (step, k) in enumerate(self.path):
                if step == "attr" and k.isidentifier() and not iskeyword(k):
                    expr = f"{expr}.{k}"
                elif step in ("attr", "item"):
                    env[f"_gk{r}_{j}"] = k
                    expr = (f"getattr({expr}, _gk{r}_{j})" if step == "attr"
                            else f"{expr}[_gk{r}_{j}]")
                else:
                    expr = f"{step if step == 'len' else 'tuple'}({expr})"
            head = [f"{indent}try:", f"{indent}    {v} = {expr}",
                    f"{indent}except Exception:", f"{indent}    {v} = _miss"]
        if self.what == "value":
            env[f"_gv{r}"], env[f"_gt{r}"] = self.example, type(self.example)
            same = (f"{v} is _gv{r} or ({v}.__class__ is _gt{r} and {v} == _gv{r})"
                    if isinstance(self.example, (int, float, str, bytes, tuple, np.generic))
                    else f"{v} is _gv{r}")
            return head + [f"{indent}if not ({same}):", f"{indent}    {bail}"]
        a = self.example
        if self.what == "contents":
            env["_same"], env[f"_gv{r}"] = _same_contents, a
            return head + [f"{indent}if not _same({v}, _gv{r}):", f"{indent}    {bail}"]
        env[f"_gs{r}"], env[f"_gd{r}"] = a.shape, a.dtype
        check = (f"{v}.__class__ is not _nd or {v}.shape != _gs{r} or "
                 f"({v}.dtype is not _gd{r} and {v}.dtype != _gd{r})")
        if self.contiguous:
            env[f"_gst{r}"] = a.strides
            check += f" or {v}.strides != _gst{r}"
        lines = head + [f"{indent}if {check}:", f"{indent}    {bail}"]
        if not self.contiguous:
            env["_asc"] = np.ascontiguousarray
            lines.append(f"{indent}{v} = _asc({v})")
        return lines


_MISSING = object()


def show_path(name: str, path: tuple[tuple[str, Any], ...]) -> str:
    """`cfg.w`, `params['w']`, `len(xs)`: how the user wrote the read."""
    for step, k in path:
        if step == "attr":
            name = f"{name}.{k}"
        elif step == "item":
            name = f"{name}[{k!r}]"
        else:
            name = f"{step}({name})"
    return name


def _hashable(v: Any) -> bool:
    try:
        hash(v)
    except TypeError:
        return False
    return True


def _same_contents(a: Any, snapshot: np.ndarray) -> bool:
    return (isinstance(a, np.ndarray) and a.shape == snapshot.shape
            and a.dtype == snapshot.dtype and np.array_equal(a, snapshot, equal_nan=True))


@dataclass
class Prelude:
    """The Python scalar arithmetic of one trace, run before each native call."""

    nargs: int
    steps: list[Step] = field(default_factory=list)
    _fns: dict[bool, Callable[..., Any]] = field(default_factory=dict, repr=False,
                                                 compare=False)

    def __bool__(self) -> bool:
        return bool(self.steps)

    def add_read(self, read: Read) -> int:
        """Record a read of a global/closure variable; its value's index."""
        read.result = self.nargs + len(self.steps)
        self.steps.append(read)  # type: ignore[arg-type]
        return read.result

    def lines(self, env: dict[str, Any], indent: str = "    ", bail: str = "return None",
              guards: bool = True) -> list[str]:
        """Python statements computing the steps into `a<index>` variables (arguments are
        `a0..`); a guard whose type differs from the traced one runs `bail`. Constants are
        put in `env`."""
        out = []
        for s in self.steps:
            if isinstance(s, Read):
                out += (s.lines(env, indent, bail) if guards else
                        s.lines(env, indent, "pass"))
                continue
            names = []
            for kind, v in s.operands:
                if kind == "v":
                    names.append(f"a{v}")
                else:
                    name = f"_pc{len(env)}"
                    env[name] = v
                    names.append(name)
            if s.op.startswith("math."):
                env["_math"] = math
            out.append(f"{indent}a{s.result} = {py_source(s.op, names)}")
            if guards and s.guard:
                env[f"_pt{s.result}"] = s.kind
                out.append(f"{indent}if type(a{s.result}) is not _pt{s.result}:")
                out.append(f"{indent}    {bail}")
        return out

    def evaluate(self, args: tuple, guarded: bool = True) -> tuple | None:
        """The arguments followed by every step's value; None when a guarded step's type
        differs from the traced one (the caller traces again for these values). Unguarded,
        it is exactly Python on these values."""
        fn = self._fns.get(guarded)
        if fn is None:
            env: dict[str, Any] = {}
            params = ", ".join(f"a{i}" for i in range(self.nargs))
            names = ", ".join(f"a{i}" for i in range(self.nargs + len(self.steps)))
            body = self.lines(env, guards=guarded) + [f"    return ({names},)"]
            src = f"def prelude({params}):\n" + "\n".join(body)
            exec(compile(src, "<fusejit prelude>", "exec"), env)
            fn = self._fns[guarded] = env["prelude"]
        return fn(*args)

    def types(self, values: tuple) -> tuple[type, ...]:
        """The types of the guarded steps' values (part of a retrace's cache key)."""
        return tuple(s.key(values[s.result]) if isinstance(s, Read) else type(values[s.result])
                     for s in self.steps if isinstance(s, Read) or s.guard)

    def format(self, names: list[str] | None = None) -> str:
        """One line per step, `%pN = a1 * 2` (arguments by parameter name when given)."""
        def show(kind: str, v: Any) -> str:
            if kind == "c":
                return repr(v)
            return names[v] if names and v < len(names) else f"%p{v}"

        return "\n".join(
            f"%p{s.result} = {s.kind} {show_path(s.name, s.path)} ({s.what})"
            if isinstance(s, Read) else
            f"%p{s.result} = " + py_source(s.op, [show(k, v) for k, v in s.operands], True)
            + f"  ({s.kind.__name__})" for s in self.steps)


class PyScalar(Tracer):
    """A Python bool/int/float/complex of the call (an argument or Python arithmetic on
    arguments)."""

    __slots__ = ("ref", "example")

    def __init__(self, ref: int, example: Any) -> None:
        kind = type(example)
        super().__init__(None, scalar=True,  # type: ignore[arg-type]
                         weak=None if kind is bool else kind)
        self.ref = ref
        self.example = example

    @property
    def node(self) -> Node:
        """The graph input this value becomes where it meets NumPy (created on first use)."""
        if self._node is None:
            ctx = current()
            attrs: dict[str, Any] = {"index": len(ctx.inputs)}
            if self.weak is not None:
                attrs["weak"] = self.weak.__name__
            if self.ref >= ctx.prelude.nargs:
                attrs["python"] = f"%p{self.ref}"  # computed by the prelude
            self._node = Node("input", (), TensorType((), _dtype(self.example)), attrs)
            ctx.inputs.append(self._node)
            ctx.sources.append(self.ref)
        return self._node

    @property
    def shape(self) -> tuple[int, ...]:
        return ()

    @property
    def dtype(self) -> np.dtype:
        return _dtype(self.example)

    @property
    def ndim(self) -> int:
        return 0

    @property
    def size(self) -> int:
        return 1

    def _known(self, what: str) -> Any:
        return self._concrete(what)  # (a call's value: never known while tracing)

    def _concrete(self, what: str) -> Any:
        kind = type(self.example).__name__
        raise ConcretizationError(
            f"{what} needs a concrete value, but this Python {kind} is an argument of the "
            f"compiled function (or computed from one){where_msg()}: its value changes from "
            "call to call without a new trace. Mark the argument static with "
            "static_argnums=/static_argnames= (one compile per value), or use np.where(cond, "
            "a, b) for a choice between values")

    def __repr__(self) -> str:
        return f"PyScalar({type(self.example).__name__}, value {self.ref})"


def _dtype(example: Any) -> np.dtype:
    kind = type(example)
    return np.dtype({bool: bool, int: np.int64, float: np.float64}.get(kind, np.complex128))


def _operand(x: Any) -> tuple[str, Any] | None:
    if isinstance(x, PyScalar):
        return ("v", x.ref)
    if type(x) in PY_NUMBER:
        return ("c", x)
    return None


def record(op: str, *xs: Any) -> Any:
    """`op` on Python values: a new PyScalar (the step is run on the examples now, so Python's
    own errors, like ZeroDivisionError, surface at the user's line), or NotImplemented when an
    operand is not a Python value (NumPy's rules apply then)."""
    operands = [_operand(x) for x in xs]
    if any(o is None for o in operands):
        return NotImplemented
    examples = [x.example if isinstance(x, PyScalar) else x for x in xs]
    value = py_function(op)(*examples)
    if type(value) not in PY_NUMBER:  # (-8.0) ** 0.5 is complex in Python
        raise UnsupportedError(f"this Python arithmetic gives a {type(value).__name__} "
                               f"({value!r}), which fusejit does not support{where_msg()}")
    prelude = current().prelude
    ref = prelude.nargs + len(prelude.steps)
    prelude.steps.append(Step(op, tuple(operands), ref, type(value),  # type: ignore[arg-type]
                              _guarded(op, examples)))
    return PyScalar(ref, value)


def _install() -> None:
    """Python operators on PyScalar: recorded when every operand is a Python value, else
    the Tracer's (NumPy) operator."""
    binary = ["add", "sub", "mul", "truediv", "floordiv", "mod", "pow", "and", "or", "xor",
              "lshift", "rshift"]

    def make(op: str, reflected: bool, fallback: Callable[..., Any]) -> Callable[..., Any]:
        def method(self: PyScalar, other: Any) -> Any:
            out = record(op, other, self) if reflected else record(op, self, other)
            return fallback(self, other) if out is NotImplemented else out

        return method

    for op in binary:
        setattr(PyScalar, f"__{op}__", make(op, False, getattr(Tracer, f"__{op}__")))
        setattr(PyScalar, f"__r{op}__", make(op, True, getattr(Tracer, f"__r{op}__")))
        # scalars are immutable: `a += 1` rebinds, as in Python
        setattr(PyScalar, f"__i{op}__", getattr(PyScalar, f"__{op}__"))
    for op in ["lt", "le", "gt", "ge", "eq", "ne"]:
        setattr(PyScalar, f"__{op}__", make(op, False, getattr(Tracer, f"__{op}__")))
    for op in ["neg", "pos", "abs", "invert"]:
        def unary(self: PyScalar, _op: str = op) -> Any:
            return record(_op, self)

        setattr(PyScalar, f"__{op}__", unary)

    def _divmod(self: PyScalar, other: Any) -> Any:
        if _operand(other) is None:
            return Tracer.__divmod__(self, other)  # type: ignore[attr-defined]
        return self // other, self % other

    def _rdivmod(self: PyScalar, other: Any) -> Any:
        if _operand(other) is None:
            return Tracer.__rdivmod__(self, other)  # type: ignore[attr-defined]
        return other // self, other % self

    PyScalar.__divmod__ = _divmod  # type: ignore[attr-defined]
    PyScalar.__rdivmod__ = _rdivmod  # type: ignore[attr-defined]
    PyScalar.__hash__ = Tracer.__hash__  # type: ignore[method-assign]


_install()
