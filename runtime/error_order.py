"""Which exception a failed compiled call raises: the one NumPy raises first, in statement order.

A compiled Program runs its kernels in the order scheduling chose (not the order of the
user's statements) and stops after the first kernel whose runtime checks failed; its status
is the OR of that kernel's flags (errors.Status). NumPy raises the error of the first
statement that fails. So on a non-zero status (only then: a call that succeeds never comes
here) the traced graph is replayed by the reference interpreter (frontend/interpret.py) in
trace order on the same inputs, and the exception it raises at a node that can fail is
raised. The replay is exact when the arguments are still what the caller passed: when no
kernel that can fail runs after a kernel that wrote an argument in place, or writes one
itself other than through a scatter's checks-first pass (`replay_safe`, decided once per
Program); the caller then also gets every argument back unmodified. A Program that writes
an argument before a check may fail (`x += 1` then `x[idx]`, or `x += y[idx]` in one kernel)
cannot be replayed, since the argument may already hold new values: it raises the status's
flag whose first check comes first in statement order.
Environment failures (no BLAS routines, no scratch memory) are not NumPy's errors and are
raised as they are, unless the status also holds one of NumPy's errors.
"""

from __future__ import annotations

import inspect
from collections.abc import Callable, Sequence
from typing import Any, NoReturn

import numpy as np

from ..errors import RuntimeFailure, Status, status_error
from ..frontend.interpret import first_error
from ..frontend.ir import Graph, Node, toposort
from ..frontend.ops import OPS
from ..lowering.loop_ir import Check, LapackKernel, Program

# Failures of the environment, not of the data: NumPy has no such error.
ENVIRONMENT = frozenset(s.code for s in (Status.NO_BLAS, Status.NO_SCRATCH, Status.NO_LAPACK))
LINALG = (Status.SINGULAR, Status.NOT_POSDEF, Status.EIG_NOCONV, Status.LSTSQ_NOCONV)
# What a node of each op can raise (op table entries with error checks, and more).
_EXTRA = {"scatter": (Status.INDEX_RANGE,), "lapack": LINALG,
          "lapack_solve": LINALG + (Status.INDEX_RANGE,)}  # (lu_solve's pivots)
# The exception types NumPy's flags stand for: a replay's exception of another type is an
# interpreter failure, not NumPy's error, and is not raised.
_NUMPY_EXC = tuple({s.exc for s in Status.flags() if s.code not in ENVIRONMENT})


def _can_fail(kernel: object) -> bool:
    """True when `kernel` can return one of NumPy's errors (a check, a LAPACK call)."""
    if isinstance(kernel, LapackKernel):
        return True
    return any(isinstance(s, Check) for s in getattr(kernel, "body", ()))


def exposed_inputs(program: Program) -> set[int]:
    """The graph inputs (their positions) that a failing call may already have written, in
    the Program's final order: those written by a kernel that runs before a kernel that can
    fail, or by a kernel that can fail itself, unless it is a scatter kernel
    (codegen/cscatter*.py run its checks in a pass before any store)."""
    ref = {b.index: b.ref for b in program.buffers if b.kind == "input"}
    written: set[int] = set()
    exposed: set[int] = set()
    for kern in program.kernels:
        writes = {ref[b] for b in {s.access.buf for s in kern.stores()} if b in ref}
        if _can_fail(kern):
            exposed |= written | (set() if getattr(kern, "serial", False) else writes)
        written |= writes
    return exposed


def replay_safe(program: Program) -> bool:
    """True when the arguments are as passed after any failure (nothing exposed)."""
    return not exposed_inputs(program)


def node_statuses(node: Node) -> tuple[Status, ...]:
    """The statuses a node's compiled code can set (its op's error checks and more)."""
    op = OPS.get(node.op)
    found = tuple(e.status for e in op.errors) if op is not None else ()
    return found + _EXTRA.get(node.op, ())


def first_sites(graph: Graph) -> dict[int, int]:
    """Status code -> the trace position (node id) of the first node that can set it."""
    sites: dict[int, int] = {}
    for node in toposort(graph.outputs, graph.inputs):
        for s in node_statuses(node):
            sites[s.code] = min(sites.get(s.code, node.id), node.id)
    return sites


def input_names(fn: Callable[..., Any], positions: Sequence[int], nargs: int) -> list[str]:
    """Per graph input, the name of the argument it is (`positions`: argument positions of
    a call with `nargs` arguments; values past them are what the prelude reads, such as a
    global array)."""
    try:
        params = [p for p in inspect.signature(fn).parameters.values()
                  if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)]
    except (TypeError, ValueError):
        params = []
    return [repr(params[p].name) if p < len(params) else f"argument {p}" if p < nargs else
            "a global array" for p in positions]


class ErrorReplay:
    """A compiled signature's error path: its traced graph and whether replays are exact.
    `names`: per graph input, what to call it in a note (the argument's name)."""

    def __init__(self, graph: Graph, program: Program, names: Sequence[str] = ()) -> None:
        self.graph = graph
        exposed = exposed_inputs(program)
        self.safe = not exposed
        self.sites = first_sites(graph)
        shown = [names[k] if k < len(names) else f"input {k}" for k in sorted(exposed)]
        self.note = "" if self.safe else (
            f"fusejit: {', '.join(shown)} may already hold values this call wrote before the "
            "error (the compiled program writes it in place before a check that can fail; "
            "README, 'Errors when the function runs')")

    def error(self, status: int, inputs: Sequence[object], unchanged: bool = False) -> Exception:
        """The exception a call on `inputs` (the graph's inputs, as passed) that returned
        `status` raises: NumPy's first, in statement order. `unchanged`: the backend knows
        the inputs are as passed whatever the program wrote (the CUDA backend's host inputs,
        which are copied back only after a call that succeeds)."""
        if status <= 0 or not status & ~sum(ENVIRONMENT):
            return status_error(status)
        if self.safe or unchanged:
            try:  # NumPy's warnings on the way (casts of NaN...) are not the call's own
                with np.errstate(all="ignore"):
                    found = first_error(self.graph, list(inputs))
            except Exception:  # noqa: BLE001 - inputs the interpreter cannot read: no replay
                found = None
            if found is not None:
                node, exc = found
                if node_statuses(node) and isinstance(exc, _NUMPY_EXC):
                    return exc
        flags = [s for s in Status.flags() if status & s.code and s.code not in ENVIRONMENT]
        if not flags:  # (unreachable: the test above saw a NumPy flag)
            return RuntimeFailure(f"compiled program failed with status {status}")
        first = min(flags, key=lambda s: (self.sites.get(s.code, 1 << 62), s.code))
        exc = first.exc(first.message)
        if self.note and not unchanged:
            exc.add_note(self.note)
        return exc


def raise_failure(replay: ErrorReplay | None, status: int, inputs: Sequence[object],
                  unchanged: bool = False) -> NoReturn:
    """Raise what a call on `inputs` that returned the non-zero `status` raises: NumPy's
    first error by `replay` (`unchanged`: as ErrorReplay.error), the status's own without."""
    if replay is None:
        raise status_error(status)
    raise replay.error(status, inputs, unchanged).with_traceback(None)
