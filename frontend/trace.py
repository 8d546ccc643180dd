"""`trace(fn, args)`: run the user's function on Tracers for its arguments and return the
Graph (inputs, outputs, the result's structure, updates of arguments written in place)."""

from __future__ import annotations

import inspect
import re
import traceback
from typing import Any

import numpy as np

from ..errors import ArgumentTypeError, TraceError, UnsupportedError
from . import ops as O
from .captures import Shadower
from .context import is_user_file
from .conversion import converting
from .ir import Graph, Node, TensorType, toposort
from .masked import Selection
from .pyscalar import PY_NUMBER, Prelude, PyScalar
from .pytree import flatten
from .tracer import TraceContext, Tracer, const_node, make_node


def trace(fn: Any, args: list[Any], static: frozenset[int] = frozenset(),
          name: str | None = None, same: dict[int, int] | None = None,
          python_scalars: bool = False) -> tuple[Graph, list[int]]:
    """Trace `fn(*args)`; returns the Graph and, for each graph input, the index of the value
    it is: an argument's position or, past the arguments, a prelude step's value.

    `same` maps an argument position to an earlier one holding the very same array: both get
    one Tracer, so an in-place update through one is seen through the other, as in NumPy.
    `python_scalars`: Python bool/int/float arguments are PyScalars and arithmetic among them
    is Python's, run by `ctx.prelude` at call time (see frontend.pyscalar; what `jit` does);
    otherwise they are NumPy's weak scalars throughout (an exported C library has no Python).
    The graph's `prelude` holds that arithmetic (None when there is none)."""
    name = name or getattr(fn, "__name__", "fn")
    if not python_scalars:  # export: a C library has no Python globals to read
        return _trace(fn, args, static, name, same, python_scalars, None)
    try:
        return _trace(fn, args, static, name, same, python_scalars, False)
    except TraceError as first:
        # A function that needs a global array's values while tracing (`if G.any():`,
        # `float(G[0])`, `x[G > 0]`) gets them baked in, guarded on their contents.
        if not getattr(first, "fusejit_captured", False):
            raise
        try:
            return _trace(fn, args, static, name, same, python_scalars, True)
        except TraceError:
            raise first from None


def _tracer_type_error(e: TypeError, name: str) -> UnsupportedError | None:
    """The clear error for a TypeError that a library's compiled code (Cython, C) raised on
    being handed a Tracer (`a bytes-like object is required, not 'Tracer'`: it wanted the
    array's memory; `expected numpy.ndarray, got Tracer`), naming the function that failed and
    the user's line; None for others."""
    if not re.search(r"\bTracer\b", str(e)):
        return None
    frames = [f for f in traceback.extract_tb(e.__traceback__)
              if not f.filename.startswith("<stringsource")]  # (Cython's own helpers)
    inner = frames[-1]
    user = [f for f in frames if is_user_file(f.filename)]
    at = f" at {user[-1].filename}:{user[-1].lineno}" if user else ""
    return UnsupportedError(
        f"{inner.name} ({inner.filename}:{inner.lineno}) was given a traced array in "
        f"{name}(){at} and cannot use it ({e}): it needs the array's memory or a real "
        "ndarray, which a traced array does not have; compute it outside the compiled "
        "function or file an issue")


def _trace(fn: Any, args: list[Any], static: frozenset[int], name: str,
           same: dict[int, int] | None, python_scalars: bool,
           frozen: bool | None) -> tuple[Graph, list[int]]:
    """One trace; `frozen` None reads no globals (only NumPy's names are shadowed), False
    makes their arrays implicit inputs, True bakes them in with a guard on their contents
    (frontend.captures)."""
    ctx = TraceContext(name)
    ctx.prelude = Prelude(len(args))
    call_args: list[Any] = []
    tracers: list[Tracer] = []
    kinds: dict[int, tuple[bool, Any]] = {}
    for i, a in enumerate(args):
        if i in static or a is None:  # None has one value: it is static by nature
            call_args.append(a)
            continue
        if same and i in same:
            call_args.append(call_args[same[i]])
            continue
        if python_scalars and type(a) in PY_NUMBER:
            call_args.append(PyScalar(i, a))
            continue
        t = input_tracer(a, len(ctx.inputs), name, i)
        ctx.inputs.append(t.node)
        ctx.sources.append(i)
        tracers.append(t)
        kinds[t.node.id] = (t.scalar, t.weak)
        call_args.append(t)
    arrays = [(t, args[i]) for t, i in zip(tracers, ctx.sources)]
    shadower = Shadower(ctx, ctx.prelude, name, frozen)
    fn = shadower.function(fn)
    with ctx, converting(arrays):  # np.asarray & co accept Tracers (frontend.conversion)
        try:
            result = fn(*call_args)
        except TraceError as e:
            if any(isinstance(v, Tracer) for v in shadower.arrays.values()):
                e.fusejit_captured = True  # type: ignore[attr-defined]
            raise
        except TypeError as e:
            unusable = _tracer_type_error(e, name)
            if unusable is None:
                raise
            raise unusable from e
    if inspect.isgenerator(result) or inspect.isawaitable(result) or inspect.isasyncgen(result):
        raise UnsupportedError(f"{name}() returned a {type(result).__name__}: fusejit compiles "
                               "functions that return arrays, not generators or coroutines")
    leaves, tree = flatten(result, lambda o: isinstance(o, (Tracer, np.ndarray, np.generic,
                                                             Selection)))
    for leaf in leaves:
        if isinstance(leaf, Selection):
            raise UnsupportedError(
                f"{name}() returns {leaf.label} (made at {leaf.loc or '?'}), whose length "
                "depends on "
                "the data: a compiled function's results have shapes fixed when compiling. "
                "Return a reduction of it, np.where(mask, x, fill), or the mask and x")
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
            if isinstance(leaf, PyScalar):  # returned as the Python object itself
                outputs.append(leaf.node)
                scalars.append(True)
            elif isinstance(leaf, Tracer):
                node = leaf.node
                if node.op == "input" and kinds[node.id] != (leaf.scalar, leaf.weak):
                    # An argument returned as another kind of object (a 0-d array as a NumPy
                    # scalar, `a[()]`, or a scalar as a 0-d array, `s[...]`): a new value.
                    node = make_node("copy", [node], node.shape, node.dtype)
                outputs.append(node)
                # a computed Python scalar (a selection's count: weak) is returned as the
                # Python int/float NumPy's would be
                scalars.append("python" if python_scalars and leaf.weak is not None
                               else leaf.scalar or leaf.weak is not None)
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
    _refuse_foreign_values(name, body, outputs)
    _refuse_unused_checks(name, outputs, ctx.created)
    _retype_int_leaves(ctx.inputs, body, floats=python_scalars)
    return Graph(ctx.inputs, outputs, name, tree, scalars + [False] * n, body,
                 alias + [-1] * n, returned + [-1] * n, updates,
                 ctx.prelude if ctx.prelude else None), ctx.sources


def _refuse_foreign_values(name: str, body: list[Node], outputs: list[Node]) -> None:
    """A value traced by another call (a Tracer kept from an earlier trace in a global, a
    closure or an attribute) is not one of this trace's: refused by name, since its node
    would otherwise stand for something this call does not compute (and, as each compile
    numbers its nodes from 0, could share an id with one of this trace's)."""
    own = {id(n) for n in body}
    for n in body:
        for i in n.inputs:
            if id(i) not in own:
                raise TraceError(
                    f"{name}(): the operation at {n.loc or '?'} uses a value traced in another "
                    f"call (made at {i.loc or '?'}): a traced value kept from an earlier trace "
                    "(in a global, a closure or an attribute) cannot be used in a later one; "
                    "pass the array as an argument instead")
    for o in outputs:
        if id(o) not in own:
            raise TraceError(
                f"{name}() returned a value traced in another call (made at {o.loc or '?'}): "
                "a traced value kept from an earlier trace cannot be returned by a later one")


def _refuse_unused_checks(name: str, outputs: list[Node], created: list[Node]) -> None:
    """np.asarray_chkfinite whose result nothing returned depends on: NumPy checks it, a
    compiled function computes only what its results need, so it is refused here."""
    checks = [n for n in created if n.op == "check_finite"]
    if not checks:
        return
    live = {n.id for n in toposort(outputs)}
    for n in checks:
        if n.id not in live:
            raise UnsupportedError(
                f"{name}(): the result of np.asarray_chkfinite at {n.loc or '?'} is not used, "
                "so the compiled function would not check it (it computes only what its "
                "results depend on): use the result (x = np.asarray_chkfinite(x)) or check "
                "outside the compiled function")


def _retype_int_leaves(inputs: list[Node], body: list[Node], floats: bool) -> None:
    """The C type of each Python-int input, once every use is known (int64 by default).

    Only ever converted to uint64 (and to floats or narrower types): uint64, so values in
    [2**63, 2**64) work, as NumPy allows; its "range" (frontend.tracer.to_node) lies in
    [0, 2**64) and is checked per call. With `floats`, only ever converted to float64 (how
    NumPy meets a Python int with float arrays): float64, so any int a double holds works;
    the caller passes float(value)."""
    i64 = int(np.iinfo(np.int64).max)
    for node in inputs:
        if node.attrs.get("weak") != "int":
            continue
        users = [n for n in body if any(i is node for i in n.inputs)]
        if not users or any(u.op != "cast" for u in users):
            continue
        if node.attrs.get("range", (0, 0))[1] > i64:
            node.type = TensorType((), np.dtype(np.uint64))
        elif floats and "range" not in node.attrs and all(u.dtype == np.float64 for u in users):
            node.type = TensorType((), np.dtype(np.float64))


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
    if isinstance(a, complex):
        return Tracer(Node("input", (), TensorType((), np.dtype(np.complex128)),
                           {"index": index, "weak": "complex"}), scalar=True, weak=complex)
    raise ArgumentTypeError(
        f"argument {position} of {fn_name}() has type {type(a).__name__}; fusejit traces "
        "NumPy arrays, NumPy scalars and Python bool/int/float (NumPy itself treats a list "
        "or str as an operand differently from an array). Pass np.asarray(...) of it, or "
        "mark it static with static_argnums=/static_argnames=")
