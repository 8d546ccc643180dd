"""Gemm epilogues: which elementwise work a matmul's gemm computes on its own product.

A float matmul lowered to BLAS whose product is read only by elementwise nodes of its own
shape, each reading it at the same index (through same-shaped elementwise ops only: no view,
reshape, broadcast into a bigger domain, reduction or other matmul in between), is not stored.
Its gemm computes the product one block of rows at a time and evaluates those readers, the
epilogue, on each block while it is in cache (codegen/cgemm_epilogue.py). The readers are the
epilogue's roots: the stored values the gemm kernel writes.

Before the readers are collected, the store sinks through a chain of single-use elementwise
ops of the same shape and no wider dtype (`z = h @ w2 + b2` read by reductions: `z` is stored
instead of `h @ w2`, by the gemm's epilogue). The roots' other stored inputs must all come
before the first root in the graph's order, so the gemm's kernel can run where that root's
kernel would have. Each refusal is kept in words for `explain`.
"""

from __future__ import annotations

from ..frontend.ir import Graph, Node
from ..frontend.ops import OPS
from .epilogue_plan import Epilogues
from .gemm_update import delays_operands
from .stored import materialised_deps

BLAS_DTYPES = frozenset({"float32", "float64", "complex64", "complex128"})  # gemv: reals
INT_MAX = (1 << 31) - 1


def blas_product(node: Node, blas: bool) -> bool:
    """True when matmul `node` becomes a BLAS gemm (lowering.matmul.uses_blas)."""
    return blas and node.dtype.name in BLAS_DTYPES and max(node.shape[-2:] + (
        node.inputs[0].shape[-1],)) <= INT_MAX


def _elementwise(node: Node) -> bool:
    return OPS[node.op].kind == "elementwise" if node.op in OPS else False


def same_index(node: Node, targets: set[int], materialised: set[int], shape: tuple[int, ...]
               ) -> bool:
    """True when `node`'s inlined computation reads the nodes in `targets` only at its own
    index: every path to one goes through elementwise ops of `shape` alone."""
    seen: set[int] = set()
    stack = [node]
    while stack:
        n = stack.pop()
        if n.op == "gather" and _reaches(n, targets, materialised):
            return False  # a gather reads its operands at other indices
        for i in n.inputs:
            if i.id in targets:
                if i.shape != shape:
                    return False
            elif (i.id not in materialised and i.id not in seen
                  and _reaches(i, targets, materialised)):
                if not _elementwise(i) or i.shape != shape:
                    return False
                seen.add(i.id)
                stack.append(i)
    return True


def _reaches(node: Node, targets: set[int], materialised: set[int]) -> bool:
    """True when `node`'s inlined computation reads a node in `targets`."""
    seen: set[int] = set()
    stack = list(node.inputs)
    while stack:
        n = stack.pop()
        if n.id in targets:
            return True
        if n.id in seen or n.id in materialised:
            continue
        seen.add(n.id)
        stack.extend(n.inputs)
    return False


def find_epilogues(graph: Graph, materialised: set[int], reasons: dict[int, str],
                   uses: dict[int, list[Node]], blas: bool, skip: set[int],
                   sink: bool = True) -> Epilogues:
    """Decide the epilogue of every matmul (ids in `skip`, argument-update gemms, have none).
    `materialised` still holds every matmul; with `sink`, stores sunk below a product are
    added to it (with `reasons`) and taken back when that product keeps no epilogue."""
    out = Epilogues()
    nodes = graph.nodes()
    pos = {n.id: i for i, n in enumerate(nodes)}
    outputs = {o.id for o in graph.outputs}
    for mm in nodes:
        if mm.op != "matmul" or mm.id in skip:
            continue
        why = _product_refusal(mm, blas, outputs)
        if why is None and sink:
            stored = _sink(mm, uses)
            if stored is not mm and stored.id not in materialised:
                materialised.add(stored.id)
                out.sunk[mm.id] = stored.id
                reasons[stored.id] = (f"%{stored.id} ({stored.op}) is stored instead of the "
                                      f"product of matmul %{mm.id}: the gemm's epilogue "
                                      "computes it")
        if why is None:
            readers = [n for n in nodes if n.id in materialised and n.id != mm.id
                       and mm.id in materialised_deps(n, materialised)]
            why = (_claimed(readers, out)
                   or _reader_refusal(mm, readers, materialised, pos)
                   or _update_refusal(graph, mm, readers, materialised, uses))
            if why is None:
                out.roots[mm.id] = readers
                out.matmul[mm.id] = mm
                continue
        out.refused[mm.id] = why
        if mm.id in out.sunk:  # the product is stored after all: store it, not its user
            undo = out.sunk.pop(mm.id)
            materialised.discard(undo)
            reasons.pop(undo, None)
    return out


def unsink_unread(epi: Epilogues, graph: Graph, materialised: set[int],
                  reasons: dict[int, str], uses: dict[int, list[Node]]) -> None:
    """Take back a store sunk below a product when every user of the sunk value is itself
    stored, elementwise and of the product's shape (after lowering.narrow stored `z == 0`
    for max(z, 0)'s backward, z's users are h and that mask): the epilogue computes them
    from the product directly and the sunk value needs no buffer."""
    by_id = {n.id: n for n in graph.nodes()}
    outputs = {o.id for o in graph.outputs}
    for mm, stored in list(epi.sunk.items()):
        users = uses.get(stored, [])
        if stored in outputs or not users or not all(
                u.id in materialised and _elementwise(u) and u.shape == by_id[mm].shape
                for u in users):
            continue
        del epi.sunk[mm]
        materialised.discard(stored)
        reasons.pop(stored, None)


def _product_refusal(mm: Node, blas: bool, outputs: set[int]) -> str | None:
    if not blas_product(mm, blas):
        if mm.dtype.name not in BLAS_DTYPES:
            return f"a {mm.dtype.name} product runs generated loops, which take no epilogue"
        return "lowered without BLAS: generated loops take no epilogue"
    if mm.type.size == 0 or mm.inputs[0].shape[-1] == 0:
        return "an empty product"
    if mm.id in outputs:
        return "the product itself is returned"
    return None


def _sink(mm: Node, uses: dict[int, list[Node]]) -> Node:
    """The node to store in place of `mm`: down single-use, same-shape elementwise ops that
    do not widen the dtype."""
    node = mm
    while True:
        users = {u.id: u for u in uses.get(node.id, [])}
        if len(users) != 1:
            return node
        (u,) = users.values()
        if (not _elementwise(u) or u.shape != mm.shape
                or u.dtype.itemsize > node.dtype.itemsize):
            return node
        node = u


def _reader_refusal(mm: Node, readers: list[Node], materialised: set[int],
                    pos: dict[int, int]) -> str | None:
    """Why `readers` (the stored nodes reading `mm`) cannot be `mm`'s epilogue, or None."""
    if not readers:
        return "nothing reads the product"
    ids = {r.id for r in readers}
    for r in readers:
        what = f"%{r.id} ({r.op})"
        if r.op == "reduce":
            return f"{what} reduces the product: a reduction is not an elementwise epilogue"
        if r.op == "matmul":
            return f"{what} reads the product from memory as a gemm operand"
        if not _elementwise(r):
            return f"{what} is not elementwise"
        if r.shape != mm.shape:
            return (f"{what} has shape {list(r.shape)}, the product {list(mm.shape)}: it "
                    "does not follow the product's rows")
        if not same_index(r, {mm.id} | ids, materialised, mm.shape):
            return (f"{what} reads the product (or another value of the epilogue) at "
                    "another index, through a view, reshape or broadcast")
    first = min(readers, key=lambda r: pos[r.id])
    for r in readers:
        for d in materialised_deps(r, materialised):
            if d != mm.id and d not in ids and pos[d] > pos[first.id]:
                return (f"%{r.id} ({r.op}) reads %{d}, which is computed after "
                        f"%{first.id}, the epilogue's first value")
    return None


def _claimed(readers: list[Node], out: Epilogues) -> str | None:
    """Why `readers` cannot be a second epilogue's values: one of them already is another
    gemm's (`x @ w1 + x @ w2`: the sum is computed by the first product's gemm, which reads
    the second product from memory)."""
    root_of = out.root_of()
    for r in readers:
        if r.id in root_of:
            return (f"%{r.id} ({r.op}) is computed by the epilogue of matmul %{root_of[r.id]}, "
                    "which reads this product from memory")
    return None


def _update_refusal(graph: Graph, mm: Node, roots: list[Node], materialised: set[int],
                    uses: dict[int, list[Node]]) -> str | None:
    """Why an epilogue that writes an argument in place would cost memory, or None: the gemm
    must then wait for the argument's other readers, holding its operands (`w2 -= lr * (h.T
    @ dz)` waits for `dz @ w2.T`, and `h` stays alive until then)."""
    n_res = graph.n_results
    computed = _computed(roots, materialised)
    for node, k in zip(graph.outputs[n_res:], graph.updates):
        w = graph.inputs[k]
        if node.id in computed and delays_operands(mm, w, computed, uses):
            return (f"it would write argument {k} (%{node.id}), which must wait for the "
                    f"argument's other readers, keeping the gemm's operands alive longer "
                    "than storing the product")
    return None


def _computed(roots: list[Node], materialised: set[int]) -> set[int]:
    """Ids of the roots and of the nodes inlined into them."""
    out: set[int] = set()
    stack = list(roots)
    while stack:
        n = stack.pop()
        if n.id in out:
            continue
        out.add(n.id)
        stack.extend(i for i in n.inputs if i.id not in materialised)
    return out
