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

from collections.abc import Sequence

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
_EXTRA = {"scatter": (Status.INDEX_RANGE,), "lapack": LINALG, "lapack_solve": LINALG}
# The exception types NumPy's flags stand for: a replay's exception of another type is an
# interpreter failure, not NumPy's error, and is not raised.
_NUMPY_EXC = tuple({s.exc for s in Status.flags() if s.code not in ENVIRONMENT})


def _can_fail(kernel: object) -> bool:
    """True when `kernel` can return one of NumPy's errors (a check, a LAPACK call)."""
    if isinstance(kernel, LapackKernel):
        return True
    return any(isinstance(s, Check) for s in getattr(kernel, "body", ()))


def replay_safe(program: Program) -> bool:
    """True when, after any failure, the arguments are as passed, in the Program's final
    order: no kernel that can fail runs after one that wrote an argument, and one that can
    fail and writes an argument itself is a scatter kernel (codegen/cscatter*.py run its
    checks in a pass before any store)."""
    inputs = {b.index for b in program.buffers if b.kind == "input"}
    written = False
    for kern in program.kernels:
        fails = _can_fail(kern)
        writes = bool({s.access.buf for s in kern.stores()} & inputs)
        if fails and (written or (writes and not getattr(kern, "serial", False))):
            return False
        written = written or writes
    return True


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


class ErrorReplay:
    """A compiled signature's error path: its traced graph and whether replays are exact."""

    def __init__(self, graph: Graph, program: Program) -> None:
        self.graph = graph
        self.safe = replay_safe(program)
        self.sites = first_sites(graph)

    def error(self, status: int, inputs: Sequence[object]) -> Exception:
        """The exception a call on `inputs` (the graph's inputs, as passed) that returned
        `status` raises: NumPy's first, in statement order."""
        if status <= 0 or not status & ~sum(ENVIRONMENT):
            return status_error(status)
        if self.safe:
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
        return first.exc(first.message)

    def raise_error(self, status: int, inputs: Sequence[object]) -> None:
        """Raise `error(status, inputs)` (the stubs' and Executable.run's error path)."""
        raise self.error(status, inputs)
