"""The optimisation pipeline: run the graph passes in order, verifying after each one.

`DEFAULT_PASSES` are exact (they never change a result); `FASTMATH_PASSES` (see
`lowering/fastmath.py`) run only when `optimise(..., fastmath=True)` asks for them. (Which
matrix-vector products become fused reductions depends on the target, whether it has BLAS:
`lower` decides, lowering/matvec.py.)
"""

from __future__ import annotations

from collections.abc import Callable

from ..frontend.ir import Graph
from . import fastmath, passes, patterns, simplify

Pass = Callable[[Graph], Graph]


def select_rows(graph: Graph) -> Graph:
    """lowering.scatter_rows.select_rows, imported only for a graph with a scatter (the only
    op it rewrites)."""
    if not any(n.op == "scatter" for n in graph.nodes()):
        return graph
    from . import scatter_rows

    return scatter_rows.select_rows(graph)


DEFAULT_PASSES: list[tuple[str, Pass]] = [
    ("dce", passes.dce),
    ("constant_fold", passes.constant_fold),
    ("select_rows", select_rows),
    ("simplify", simplify.simplify),
    ("hoist_negation", patterns.hoist_negation),
    ("cse", passes.cse),
    ("simplify", simplify.simplify),
    ("dce", passes.dce),
]

FASTMATH_PASSES: list[tuple[str, Pass]] = [
    ("dce", passes.dce),
    ("constant_fold", passes.constant_fold),
    ("select_rows", select_rows),
    ("simplify", simplify.simplify),
    ("fastmath_arith", fastmath.fastmath_arith),
    ("fuse_sigmoid", patterns.fuse_sigmoid),
    ("hoist_negation", patterns.hoist_negation),
    ("cse", passes.cse),
    ("simplify", simplify.simplify),
    ("fastmath_arith", fastmath.fastmath_arith),
    ("dce", passes.dce),
]


def passes_for(fastmath: bool = False) -> list[tuple[str, Pass]]:
    """The default pipeline: exact passes only, or with the fastmath rewrites."""
    return FASTMATH_PASSES if fastmath else DEFAULT_PASSES


def optimise(graph: Graph, pipeline: list[tuple[str, Pass]] | None = None,
             log: Callable[[str, Graph], None] | None = None,
             fastmath: bool = False) -> Graph:
    """Run `pipeline` (default: `passes_for(fastmath)`) on `graph`, verifying after every
    pass."""
    passes.verify(graph)
    for name, fn in pipeline or passes_for(fastmath):
        graph = passes.verify(fn(graph))
        if log is not None:
            log(name, graph)
    return graph
