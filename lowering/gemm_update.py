"""GEMM into an in-place update: recognising `w -= lr * (a @ b)` and its relatives.

An argument updated in place whose new value is `w ± s * (a @ b)` (also `(a @ b) * s`,
`w + a @ b`, `w - a @ b`, `-(a @ b)`, and the same with the float widening casts NumPy inserts
when `s` is a float64 scalar and `w` float32) is computed by ONE gemm: C = w's own memory,
alpha = ±s, beta = 1. The product never exists as a temporary and no update kernel runs.

`s` is a size-1 value: a constant (alpha is folded), an argument (alpha is read from its
buffer at run time, through at most one cast, in C exactly as NumPy casts), or any other
scalar expression, which fusion then stores in a 0-d buffer for the gemm to read.

Rounding: NumPy rounds the product, then `lr * product`, then the difference; gemm computes
`alpha * sum + beta * c` with its own order of operations. The results agree to float
tolerance, not bit for bit. (With a float64 `s` and float32 `w` NumPy computes the update in
float64 and rounds once; the gemm works in float32.)

`find_gemm_updates` is a pure graph-level match (dtypes, shapes, single uses, no operand that
is `w` itself); the layout of `w` and the hazards of writing it early are checked when the
kernel is lowered (`lowering.update.buffer_hazards`), and `lower` re-lowers without the fusion
(`exclude`) when they fail.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ..frontend.ir import Graph, Node, users

GEMM_UPDATE_DTYPES = frozenset({"float32", "float64"})


@dataclass(frozen=True)
class GemmUpdate:
    """`update` (the new value of argument `arg`) = w + sign * scale * matmul, as one gemm."""

    update: Node
    matmul: Node
    arg: int  # position of the updated argument among the graph inputs
    sign: int  # +1 or -1
    scale: Node | None  # the size-1 factor (None: 1)
    fused: tuple[int, ...]  # ids of the elementwise nodes the gemm computes (update last)

    def scale_store(self) -> Node | None:
        """The node fusion must store so the gemm can read the factor, or None."""
        if self.scale is None or scale_source(self.scale) is not None:
            return None
        return self.scale


def _base(node: Node) -> Node:
    while node.op in ("view", "reshape"):
        node = node.inputs[0]
    return node


def scale_source(scale: Node) -> Node | None:
    """The node alpha is read from without storing anything: a size-1 constant, or an
    argument (through views and at most one cast); None when `scale` must be stored."""
    node = _base(scale)
    if node.op == "const":
        return node
    if node.op == "cast":
        node = _base(node.inputs[0])
    readable = node.dtype.name in ("float32", "float64") or node.dtype.kind in "iu"
    return node if node.op == "input" and readable else None  # C casts it like NumPy


def _widened(node: Node, fused: list[int], uses: dict[int, list[Node]]) -> Node:
    """`node` without float-to-float widening casts that only it uses."""
    while (node.op == "cast" and node.dtype.kind == "f" and node.inputs[0].dtype.kind == "f"
           and node.dtype.itemsize >= node.inputs[0].dtype.itemsize
           and len(uses.get(node.id, [])) == 1):
        fused.append(node.id)
        node = node.inputs[0]
    return node


def _strip_w_casts(node: Node) -> Node:
    """Widening float casts of `w` may be shared (they only read the old value)."""
    while (node.op == "cast" and node.dtype.kind == "f" and node.inputs[0].dtype.kind == "f"
           and node.dtype.itemsize >= node.inputs[0].dtype.itemsize):
        node = node.inputs[0]
    return node


def match_update(update: Node, w: Node, uses: dict[int, list[Node]]) -> GemmUpdate | None:
    """The gemm form of `update` (the new value of input `w`), or None."""
    if (w.dtype.name not in GEMM_UPDATE_DTYPES or update.dtype != w.dtype
            or update.shape != w.shape or w.type.ndim < 2):
        return None
    fused = [update.id]
    node = update
    if node.op == "cast":  # NumPy computed in a wider float and casts back into w
        if node.inputs[0].dtype.kind != "f" or len(uses.get(node.inputs[0].id, [])) != 1:
            return None
        node = node.inputs[0]
        fused.append(node.id)
    if node.op not in ("add", "subtract") or node.dtype.kind != "f" or node.shape != w.shape:
        return None
    x, y = node.inputs
    if _strip_w_casts(x) is w:
        term, sign = y, (1 if node.op == "add" else -1)
    elif node.op == "add" and _strip_w_casts(y) is w:
        term, sign = x, 1
    else:
        return None
    found = _term(term, fused, uses)
    if found is None:
        return None
    mm, scale, flip = found
    if (mm.op != "matmul" or mm.dtype != w.dtype or mm.shape != w.shape
            or len(uses.get(mm.id, [])) != 1 or mm.inputs[0].shape[-1] == 0
            or any(_base(operand) is w for operand in mm.inputs)):
        return None
    return GemmUpdate(update, mm, -1, sign * flip, scale, tuple(reversed(fused)))


def _term(term: Node, fused: list[int], uses: dict[int, list[Node]]
          ) -> tuple[Node, Node | None, int] | None:
    """(matmul, size-1 factor or None, ±1) when `term` is ±[factor *] matmul, single-use."""
    flip = 1
    if len(uses.get(term.id, [])) != 1:
        return None
    if term.op == "negative":
        fused.append(term.id)
        term, flip = term.inputs[0], -1
        if len(uses.get(term.id, [])) != 1:
            return None
    scale = None
    if term.op == "multiply":
        p, q = term.inputs
        for s, m in ((p, q), (q, p)):
            if s.type.size == 1 and s.dtype.kind in "fiu" and s.type.ndim <= term.type.ndim:
                inner: list[int] = []
                mm = _widened(m, inner, uses)
                if mm.op == "matmul" and m.shape == term.shape:
                    fused.append(term.id)
                    fused.extend(inner)
                    return mm, s, flip
        return None
    inner = []
    mm = _widened(term, inner, uses)
    fused.extend(inner)
    return (mm, scale, flip) if mm.op == "matmul" else None


def find_gemm_updates(graph: Graph, exclude: frozenset[int] = frozenset()
                      ) -> dict[int, GemmUpdate]:
    """Update id -> GemmUpdate for every argument update that one gemm can compute in place
    (updates whose id is in `exclude` are left alone)."""
    n_res = graph.n_results
    results = {n.id for n in graph.outputs[:n_res]}
    outputs = {n.id for n in graph.outputs}
    uses = users(graph.nodes())
    found: dict[int, GemmUpdate] = {}
    for update, k in zip(graph.outputs[n_res:], graph.updates):
        if update.id in exclude or update.id in results or update.id in found:
            continue
        match = match_update(update, graph.inputs[k], uses)
        if match is None or any(i in outputs for i in (match.matmul.id, *match.fused)
                                if i != update.id):
            continue  # the product (or a step to the update) is itself returned: stored
        if _scale_ok(match.scale) and not _delays(match, graph.inputs[k], uses):
            found[update.id] = GemmUpdate(match.update, match.matmul, k, match.sign,
                                          match.scale, match.fused)
    return found


def _delays(match: GemmUpdate, w: Node, uses: dict[int, list[Node]]) -> bool:
    """True when the fused gemm would keep big temporaries alive longer than the product it
    saves: writing `w` must wait for every other reader of `w`, so a reader that does not
    precede the matmul anyway (`dz @ w2.T` after `dw2 = h.T @ dz`) holds the operands (`h`)
    until then. Fused only when no reader is held back or the operands are not bigger."""
    return delays_operands(match.matmul, w, set(match.fused), uses)


def delays_operands(mm: Node, w: Node, fused: set[int], uses: dict[int, list[Node]]) -> bool:
    """True when a gemm of matmul `mm` that also writes argument `w` (computing the nodes in
    `fused`) must wait for a reader of `w` that does not precede `mm` anyway, holding `mm`'s
    stored operands alive until then, and those are bigger than the product."""
    before = ancestors(mm)
    if all(r.id in before or r.id in fused for r in uses.get(w.id, [])):
        return False
    temps = sum(_base(o).type.size for o in mm.inputs if _base(o).op not in ("input", "const"))
    return temps > mm.type.size


def ancestors(node: Node) -> set[int]:
    seen: set[int] = set()
    stack = list(node.inputs)
    while stack:
        n = stack.pop()
        if n.id not in seen:
            seen.add(n.id)
            stack.extend(n.inputs)
    return seen


def _scale_ok(scale: Node | None) -> bool:
    """A constant factor must be finite (it is written into the C source as a literal)."""
    src = None if scale is None else scale_source(scale)
    if src is None or src.op != "const":
        return True
    value = np.asarray(src.attrs["value"]).reshape(-1)
    return value.size == 1 and bool(np.isfinite(value[0]))
