"""Prelowering: the graph rewrites that prepare an optimised graph for lowering, as named
passes in one list (`PRELOWER_PASSES`), run by `prelower` for `lower`, `explain` and the
export alike. Unlike the optimisation passes (lowering/pipeline.py) they depend on the
arguments' layouts and on what the backend asks of lowering (`LowerOptions`: BLAS or not).

- separate_outputs: outputs that were distinct objects get distinct buffers (`copy`);
- place_reshapes: every `reshape` becomes readable from memory (a `copy` before one that
  NumPy could not do without copying);
- matvecs_as_reductions: matrix-vector products that a fused reduction serves better than
  BLAS become one (lowering/matvec.py);
- pack_operands: a `copy` before every BLAS matmul operand whose layout BLAS cannot read.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from ..frontend.ir import Graph, Node
from ..frontend.reshape import reshape_strides
from .builder import contiguous_strides
from .passes import rewrite

Strides = list[tuple[int, ...]]


@dataclass(frozen=True)
class LowerOptions:
    """What a backend asks of lowering."""

    blas: bool = True  # float matmuls call BLAS (else generated loops)
    own_lapack: bool = False  # np.linalg kernels without BLAS: the backend renders them (CUDA)


PrePass = Callable[[Graph, Strides, LowerOptions], Graph]


def prelower(graph: Graph, input_strides: Strides, options: LowerOptions,
             log: Callable[[str, Graph], None] | None = None) -> Graph:
    """Run PRELOWER_PASSES on `graph`, given the element strides of each input."""
    for name, fn in PRELOWER_PASSES:
        graph = fn(graph, input_strides, options)
        if log is not None:
            log(name, graph)
    return graph


def place_reshapes(graph: Graph, input_strides: Strides, options: LowerOptions | None = None
                   ) -> Graph:
    """Make every `reshape` readable from memory (frontend.reshape): a copy goes before one
    whose input's layout (the argument's strides, or a contiguous stored value) does not
    allow NumPy's no-copy reshape; a reshape of a broadcast scalar constant is a view."""
    where = {n.id: k for k, n in enumerate(graph.inputs)}
    in_place = {o.id for o in graph.outputs[graph.n_results:]}

    def strides_of(node: Node) -> tuple[int, ...] | None:
        if node.op == "view":
            inner = strides_of(node.inputs[0])
            if inner is None:
                return None
            return tuple(step * inner[axis] if axis >= 0 else 0
                         for axis, step in node.attrs["dims"])
        if node.op == "reshape":
            inner = strides_of(node.inputs[0])
            return None if inner is None else reshape_strides(node.inputs[0].shape, inner,
                                                              node.shape)
        if node.op == "input":
            return input_strides[where[node.id]]
        if node.op == "scatter" or node.id in in_place:
            return None  # may live in an argument's buffer, whatever its layout
        return contiguous_strides(node.shape)  # stored by fusion, contiguously

    def rule(node: Node) -> Node:
        if node.op != "reshape":
            return node
        src = node.inputs[0]
        base = src
        while base.op in ("view", "reshape"):
            base = base.inputs[0]
        if base.op == "const" and base.type.size <= 1:
            attrs = {"start": (0,) * base.type.ndim, "dims": ((-1, 0),) * node.type.ndim}
            return Node("view", (base,), node.type, attrs, node.loc)
        if strides_of(node) is not None:
            return node
        return Node("reshape", (Node("copy", (src,), src.type, {}, node.loc),), node.type,
                    {}, node.loc)

    if not any(n.op == "reshape" for n in graph.nodes()):
        return graph
    return rewrite(graph, rule)


def separate_outputs(graph: Graph) -> Graph:
    """Give outputs that were distinct objects in the user's return value distinct buffers.

    CSE may merge `return x * 2, x * 2` into one node; NumPy returns two independent arrays,
    so the second position gets its own `copy` (stored by the same kernel). Positions that
    were one object (`y = x * 2; return y, y`) and returned inputs keep sharing. An output
    that the passes reduced to an input (`-(-x)`) is a new array in NumPy: it is copied.
    """
    alias = graph.out_alias or [-1] * len(graph.outputs)
    returned = graph.out_input
    inputs = {n.id: k for k, n in enumerate(graph.inputs)}
    outputs = list(graph.outputs)
    owner: dict[int, int] = {}
    changed = False
    for k, node in enumerate(graph.outputs):
        first = owner.setdefault(node.id, k)
        if node.op == "input":
            # Only an argument the user returned unchanged is handed back as itself.
            if returned is None or returned[k] == inputs[node.id]:
                continue
        elif first == k or alias[k] == first:
            continue
        outputs[k] = Node("copy", (node,), node.type, {}, node.loc)
        changed = True
    return graph.with_outputs(outputs) if changed else graph


def _matmul_pass(name: str) -> PrePass:
    """A pass of lowering.matmul, run (and that module imported) only on a graph with a
    matmul (elsewhere it has nothing to do)."""
    def run(g: Graph, strides: list[tuple[int, ...]], options: LowerOptions) -> Graph:
        if not any(n.op == "matmul" for n in g.nodes()):
            return g
        from . import matmul

        return getattr(matmul, name)(g, strides, options.blas)

    return run


PRELOWER_PASSES: list[tuple[str, PrePass]] = [
    ("separate_outputs", lambda g, strides, options: separate_outputs(g)),
    ("place_reshapes", place_reshapes),
    ("matvecs_as_reductions", _matmul_pass("matvecs_as_reductions")),
    ("pack_operands", _matmul_pass("pack_operands")),
]
