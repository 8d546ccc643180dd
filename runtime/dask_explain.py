"""`f.explain(x)` with Dask arguments: the chunk plan (how each argument is cut, which axes
must stay whole, what Dask runs at boundaries) and the per-chunk program of every stage."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from .dask_array import Assembly, plan_and_values
from .dask_plan import describe_plan


@dataclass
class DaskExplanation:
    """The chunk plan and, per stage, the fusejit Explanation of its first chunk's program."""

    plan_lines: list[str]
    stages: list[tuple[str, Any]]

    def __str__(self) -> str:
        out = list(self.plan_lines)
        for title, explanation in self.stages:
            out += ["", f"== per-chunk program of {title}", str(explanation)]
        return "\n".join(out)


def _shape(chunks: tuple[tuple[int, ...], ...]) -> tuple[int, ...]:
    return tuple(c[0] if c else 0 for c in chunks)


def _count(c: int, chunks: tuple[int, ...], g: Any, plan: Any, assembly: Any) -> int:
    """How many chunks class `c` has as the stages see it: after any rechunk (which may cut
    the class finer than the arguments came), read off the first argument axis of the class."""
    for node in g.inputs:
        a = assembly.env.get(node.id)
        dims = plan.dims.get(node.id, ())
        if a is not None and hasattr(a, "chunks") and c in dims:
            return len(a.chunks[list(dims).index(c)])
    return len(chunks)


def _input_names(jf: Any, graph: Any, nargs: int) -> dict[int, str]:
    """Value position -> what the user calls it: a parameter, or a global the function reads."""
    names = dict(enumerate(list(jf.signature.parameters)[:nargs]))
    for step in getattr(graph.prelude, "steps", ()):
        if getattr(step, "result", -1) >= nargs:
            names[step.result] = f"global {step.name}"
    return names


def explain(jf: Any, args: tuple) -> DaskExplanation:
    """Build (not run) the Dask graph of `jf(*args)` and describe it; each stage's program
    is compiled for its first chunk's shapes (chunks of other shapes compile alike)."""
    call, vals = plan_and_values(jf, args)
    assembly = Assembly(call, vals)
    assembly.run()
    g = call.graph
    lines = [f"Dask plan for {g.name}():"]
    names = _input_names(jf, g, len(args))
    for pos in call.positions:
        a = vals[pos]
        if hasattr(a, "chunks") and hasattr(a, "dask"):
            lines.append(f"  {names[pos]}: {a.dtype}{list(a.shape)} in "
                         f"{'x'.join(str(len(c)) for c in a.chunks)} chunks of "
                         f"{list(_shape(a.chunks))}")
    plan = call.plan
    for node, pos in zip(g.inputs, call.positions):
        if node.id in plan.whole_axes:
            a = assembly.env[node.id]
            lines.append(f"  {names[pos]} after rechunking: "
                         f"{'x'.join(str(len(c)) for c in a.chunks)} chunks of "
                         f"{list(_shape(a.chunks))}")
    for c, chunks in plan.chunked.items():
        lines.append(f"  axis class c{c}: cut into {_count(c, chunks, g, plan, assembly)} chunks")
    lines += describe_plan(plan)
    stages = []
    for spec, fn, arrays, partial in assembly.made:
        shapes = [_shape(a.chunks) for a in arrays]
        nblocks = max(int(np.prod([len(c) for c in a.chunks])) for a in arrays)
        what = "per-chunk partial of " + partial[0] if partial else "blockwise"
        lines.append(f"  stage {spec.name}: {what}, {nblocks} chunk(s), leaves "
                     + ", ".join(f"{a.dtype}{list(s)}" for a, s in zip(arrays, shapes)))
        blocks = [np.zeros(s, a.dtype) for a, s in zip(arrays, shapes)]
        stages.append((f"{spec.name} for chunks {[list(s) for s in shapes]}",
                       fn.jit().explain(*blocks)))
    return DaskExplanation(lines, stages)
