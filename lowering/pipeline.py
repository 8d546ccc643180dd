"""The optimisation pipeline: run the graph passes in order, verifying after each one."""

from __future__ import annotations

from collections.abc import Callable

from ..frontend.ir import Graph
from . import passes, patterns

Pass = Callable[[Graph], Graph]

DEFAULT_PASSES: list[tuple[str, Pass]] = [
    ("dce", passes.dce),
    ("constant_fold", passes.constant_fold),
    ("hoist_negation", patterns.hoist_negation),
    ("cse", passes.cse),
    ("dce", passes.dce),
]


def optimise(graph: Graph, pipeline: list[tuple[str, Pass]] | None = None,
             log: Callable[[str, Graph], None] | None = None) -> Graph:
    """Run `pipeline` (default: DEFAULT_PASSES) on `graph`, verifying after every pass."""
    passes.verify(graph)
    for name, fn in pipeline or DEFAULT_PASSES:
        graph = passes.verify(fn(graph))
        if log is not None:
            log(name, graph)
    return graph
