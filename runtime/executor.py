"""Run a compiled Program: bind inputs, constants, fresh outputs and the arena; one native call.

The per-call path is kept short: a precomputed recipe says where each pointer comes from, the
C dispatcher turns the tuple into raw pointers, and error codes from the kernels are mapped to
the exception NumPy would have raised.
"""

from __future__ import annotations

import sys
import threading
import weakref
from collections.abc import Callable, Sequence
from typing import Any, NoReturn

import numpy as np

from ..frontend.pyscalar import Prelude
from ..lowering.loop_ir import Program
from .backend_c import Library, call_with_cffi, ready_dispatcher
from .error_order import ErrorReplay, raise_failure

# Outputs at least this big are recycled once the caller has dropped them.
POOL_MIN_BYTES = 1 << 18


def _sole_owner_refcount() -> int:
    """What `sys.getrefcount` reports, in a stub's code shape, for an array that only a local
    variable holds (2 on CPython 3.11; measured, since interpreters differ in borrowed refs)."""
    env: dict[str, Any] = {"_empty": np.empty, "_refs": sys.getrefcount}
    exec("def probe():\n    o = _empty(1)\n    return _refs(o)", env)
    return int(env["probe"]())


SOLE_OWNER = _sole_owner_refcount()


class Executable:
    """A Program bound to its loaded library, ready to be called with the graph's inputs."""

    def __init__(self, program: Program, lib: Library,
                 input_ranges: list[tuple[int, tuple[int, int], np.dtype]],
                 idle: frozenset[int] = frozenset(),
                 converts: dict[int, Callable[[Any], Any]] | None = None) -> None:
        """`idle`: graph inputs no kernel reads (a Python int the function only returns,
        which may not fit the C type): a zero is passed in their place. `converts`: graph
        inputs given as Python ints but held in another C type (np.uint64, float), which
        the dispatcher (reading Python ints as int64) must be handed converted."""
        self.program = program
        self.lib = lib
        self.input_ranges = input_ranges
        self.address = lib.address
        self._local = threading.local()
        # Recipe for the io tuple: ("in", k) | ("const", array) | ("out", j).
        self.recipe: list[tuple[str, Any]] = []
        self.out_specs: list[tuple[tuple[int, ...], np.dtype]] = []
        out_slot: dict[int, int] = {}
        for b in program.buffers:
            if b.kind == "input" and b.ref in idle:
                self.recipe.append(("const", np.zeros((), b.dtype)))
            elif b.kind == "input":
                self.recipe.append(("in", b.ref))
            elif b.kind == "const":
                self.recipe.append(("const", program.consts[b.ref]))
            elif b.kind == "output":
                out_slot[b.index] = len(self.out_specs)
                self.recipe.append(("out", len(self.out_specs)))
                self.out_specs.append((b.shape, b.dtype))
        self.results: list[tuple[str, int]] = [
            ("out", out_slot[o.index]) if o.kind == "buffer" else ("in", o.index)
            for o in program.outputs]
        self.arena_bytes = program.arena_bytes
        self.converts = dict(converts or {})
        # The error path (runtime/error_order.py, set by the compiler): which exception a
        # non-zero status becomes, given the call's graph inputs. None: the status's own.
        self.replay: ErrorReplay | None = None

    def raise_error(self, status: int, inputs: Sequence[Any]) -> NoReturn:
        """Raise the exception NumPy raises first for a call on `inputs` (the graph's
        inputs, as the caller passed them) that returned the non-zero `status`."""
        raise_failure(self.replay, status, inputs)

    def arena(self) -> np.ndarray | None:
        """This thread's arena (calls from several threads never share temporaries)."""
        if not self.arena_bytes:
            return None
        arena = getattr(self._local, "arena", None)
        if arena is None:
            arena = self._local.arena = np.empty(self.arena_bytes, np.uint8)
        return arena

    def run(self, inputs: list[Any], outs: list[np.ndarray] | None = None) -> list[Any]:
        """Run on the graph inputs; return the flat list of outputs. `outs` (one C-contiguous
        array of the exact shape and dtype per output buffer, overlapping no input) receives
        the outputs instead of fresh arrays."""
        for k, (lo, hi), dtype in self.input_ranges:
            v = inputs[k]
            if not lo <= v <= hi:
                raise OverflowError(f"Python integer {v} out of bounds for {dtype}")
        passed = inputs
        if self.converts:  # what C reads; results that are inputs stay the caller's objects
            passed = list(inputs)
            for k, convert in self.converts.items():
                passed[k] = convert(passed[k])
        if outs is None:
            outs = [np.empty(shape, dtype) for shape, dtype in self.out_specs]
        objs = tuple(passed[v] if kind == "in" else (outs[v] if kind == "out" else v)
                     for kind, v in self.recipe)
        dispatch = ready_dispatcher()  # None until its one-time build has finished
        if dispatch is not None:
            status = dispatch.call(self.address, objs, self.arena())
        else:
            status = call_with_cffi(self.lib, objs, self.arena())
        if status:
            self.raise_error(status, inputs)
        return [outs[i] if kind == "out" else inputs[i] for kind, i in self.results]


def make_stub(exe: Executable, nargs: int, positions: list[int], out_tree: Any,
              out_scalar: list[bool | str], prelude: Prelude | None = None,
              retry: Callable[..., Any] | None = None) -> Callable[..., Any] | None:
    """A Python function specialised to one signature: the prelude's Python scalar arithmetic
    (`positions` index the arguments, then its values), allocate, one native call, rebuild.

    It takes the bound arguments of the user's function and returns exactly what the user's
    function returns. A prelude step whose type differs from the traced one hands the call to
    `retry`. None while the dispatcher is not built (the slow path is used then).
    """
    dispatch = ready_dispatcher()
    if dispatch is None:
        return None
    env: dict[str, Any] = {"_empty": np.empty, "_call": dispatch.call,
                           "_addr": exe.address, "_raise": exe.raise_error,
                           "_arena": exe.arena, "_refs": sys.getrefcount,
                           "_weak": weakref.getweakrefcount}
    params = [f"a{i}" for i in range(nargs)]
    lines = [f"def stub({', '.join(params)}):"]
    if prelude:
        env["_retry"] = retry
        call = ", ".join(params) + ("," if params else "")
        lines += prelude.lines(env, bail=f"return _retry(({call}))")
    for k, (lo, hi), dtype in exe.input_ranges:
        a = f"a{positions[k]}"
        lines.append(f"    if not {lo} <= {a} <= {hi}:")
        lines.append(f"        raise OverflowError(f'Python integer {{{a}}} out of bounds for "
                     f"{dtype}')")
    pooled = []
    for j, (shape, dtype) in enumerate(exe.out_specs):
        env[f"_s{j}"], env[f"_d{j}"] = shape, dtype
        if int(np.prod(shape)) * dtype.itemsize >= POOL_MIN_BYTES:
            # Reuse the previous output when nobody but this pool can see it any more (the
            # caller dropped it): no page faults on a fresh allocation, no visible aliasing.
            env[f"_pool{j}"] = []
            pooled.append(j)
            # pop() is atomic: two threads never get the same array.
            lines += ["    try:",
                      f"        o{j} = _pool{j}.pop()",
                      "    except IndexError:",
                      f"        o{j} = None",
                      f"    if o{j} is None or _refs(o{j}) != {SOLE_OWNER} or _weak(o{j}):",
                      f"        o{j} = _empty(_s{j}, _d{j})"]
        else:
            lines.append(f"    o{j} = _empty(_s{j}, _d{j})")
    items = []
    for i, (kind, v) in enumerate(exe.recipe):
        if kind == "in" and v in exe.converts:
            env[f"_cv{v}"] = exe.converts[v]
            items.append(f"_cv{v}(a{positions[v]})")
        elif kind == "in":
            items.append(f"a{positions[v]}")
        elif kind == "out":
            items.append(f"o{v}")
        else:
            env[f"_c{i}"] = v
            items.append(f"_c{i}")
    arena = "_arena()" if exe.arena_bytes else "None"
    lines.append(f"    st = _call(_addr, ({', '.join(items)}{',' if items else ''}), {arena})")
    lines.append("    if st:")  # the call's graph inputs, for the error path only
    ins = ", ".join(f"a{p}" for p in positions)
    lines.append(f"        _raise(st, ({ins}{',' if positions else ''}))")
    lines += [f"    _pool{j}.append(o{j})" for j in pooled]
    leaves = []
    for (kind, v), scalar in zip(exe.results, out_scalar, strict=True):
        if kind == "out":
            leaves.append(f"o{v}.item()" if scalar == "python" else
                          f"o{v}[()]" if scalar else f"o{v}")
        else:
            leaves.append(f"a{positions[v]}")
    lines.append(f"    return {_tree_expr(out_tree, iter(leaves), env)}")
    code = "\n".join(lines)
    exec(compile(code, f"<fusejit stub {exe.program.name}>", "exec"), env)
    stub = env["stub"]
    stub.source = code
    return stub


def _tree_expr(tree: Any, leaves: Any, env: dict[str, Any]) -> str:
    kind = tree[0]
    if kind == "leaf":
        return next(leaves)
    if kind in ("tuple", "list"):
        inner = ", ".join(_tree_expr(t, leaves, env) for t in tree[1])
        return f"({inner},)" if kind == "tuple" and inner else (
            "()" if kind == "tuple" else f"[{inner}]")
    if kind == "namedtuple":  # np.linalg's EighResult, SlogdetResult, ...
        name = f"_k{len(env)}"
        env[name] = tree[1]
        return f"{name}({', '.join(_tree_expr(t, leaves, env) for t in tree[2])})"
    if kind == "dict":
        parts = []
        for key, sub in zip(tree[1], tree[2], strict=True):
            name = f"_k{len(env)}"
            env[name] = key
            parts.append(f"{name}: {_tree_expr(sub, leaves, env)}")
        return "{" + ", ".join(parts) + "}"
    name = f"_k{len(env)}"
    env[name] = tree[1]
    return name

