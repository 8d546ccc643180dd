"""Lowering of `matmul` nodes: operand layouts, packing, and GemmKernels.

A matmul reads its operands from memory through their affine index maps. float32 and float64
products call BLAS gemm, which needs each operand to have a unit stride along one matrix dim
and a leading dimension that covers the other; an operand that is not laid out like that
(negative or broadcast strides, a strided slice) is first packed by an elementwise `copy`
(`pack_operands`). Other dtypes run generated loops that read any affine layout.
"""

from __future__ import annotations

from ..frontend.ir import Graph, Node
from .fusion import strip_views
from .loop_ir import Access, GemmKernel
from .lower import AffineMap, _Lowering, access, contiguous_strides, identity_map, view_map
from .passes import rewrite

BLAS_DTYPES = frozenset({"float32", "float64"})
INT_MAX = (1 << 31) - 1


def blas_layout(rows: int, cols: int, s_rows: int, s_cols: int) -> tuple[bool, int] | None:
    """How BLAS can read a rows x cols matrix with these element strides: (row_major, leading
    dimension), or None when it cannot (the operand must be packed first)."""
    if (cols == 1 or s_cols == 1) and (rows == 1 or s_rows >= max(cols, 1)):
        ld = s_rows if rows > 1 else max(cols, 1)
        return (True, ld) if ld <= INT_MAX else None
    if (rows == 1 or s_rows == 1) and (cols == 1 or s_cols >= max(rows, 1)):
        ld = s_cols if cols > 1 else max(rows, 1)
        return (False, ld) if ld <= INT_MAX else None
    return None


def _walk(node: Node, amap: AffineMap, ndom: int) -> tuple[Node, AffineMap]:
    """Follow views from `node` to the node that will be in memory, composing index maps."""
    while node.op == "view":
        amap = view_map(node, amap, ndom)
        node = node.inputs[0]
    return node, amap


def _strides(base_strides: tuple[int, ...], amap: AffineMap, ndom: int) -> tuple[int, ...]:
    return tuple(sum(s * row[1][d] for s, row in zip(base_strides, amap)) for d in range(ndom))


def uses_blas(node: Node, blas: bool) -> bool:
    return blas and node.dtype.name in BLAS_DTYPES and max(node.shape[-2:] + (
        node.inputs[0].shape[-1],)) <= INT_MAX


def pack_operands(graph: Graph, input_strides: list[tuple[int, ...]], blas: bool) -> Graph:
    """Insert a `copy` before every BLAS matmul operand whose layout BLAS cannot read."""
    where = {n.id: k for k, n in enumerate(graph.inputs)}

    def base_strides(node: Node) -> tuple[int, ...]:
        return (input_strides[where[node.id]] if node.op == "input"
                else contiguous_strides(node.shape))

    def readable(operand: Node) -> bool:
        if strip_views(operand).op == "const" and strip_views(operand).type.size <= 1:
            return True  # stored contiguously by fusion (a small constant is never in memory)
        ndom = operand.type.ndim
        base, amap = _walk(operand, identity_map(ndom), ndom)
        strides = _strides(base_strides(base), amap, ndom)
        rows, cols = operand.shape[-2:]
        return blas_layout(rows, cols, strides[-2], strides[-1]) is not None

    def rule(node: Node) -> Node:
        if node.op != "matmul" or not uses_blas(node, blas) or node.type.size == 0:
            return node
        ins = tuple(i if readable(i) else Node("copy", (i,), i.type, {}, node.loc)
                    for i in node.inputs)
        if all(a is b for a, b in zip(ins, node.inputs)):
            return node
        return Node(node.op, ins, node.type, dict(node.attrs), node.loc)

    return rewrite(graph, rule)


def build_gemm(low: _Lowering, name: str, node: Node, blas: bool) -> GemmKernel:
    """The GemmKernel computing matmul `node` into its buffer."""
    out = low.buffer_for(node)
    assert out is not None
    ndom = node.type.ndim
    accesses, bases = [], []
    for operand in node.inputs:
        base, amap = _walk(operand, identity_map(ndom), ndom)
        buf = low.buffer_for(base)
        assert buf is not None, f"matmul operand %{operand.id} is not in memory"
        accesses.append(access(buf, amap, ndom))
        bases.append(base.id)
    a, b = accesses
    m, n = node.shape[-2:]
    k = node.inputs[0].shape[-1]
    use = uses_blas(node, blas) and node.type.size > 0 and _blas_ok(a, b, m, n, k)
    return GemmKernel(name, node.shape[:-2], m, n, k, a, b,
                      access(out, identity_map(ndom), ndom), node.dtype, use, [node.id],
                      [node.loc] if node.loc else [], (bases[0], bases[1]))


def _blas_ok(a: Access, b: Access, m: int, n: int, k: int) -> bool:
    return (blas_layout(m, k, *a.strides[-2:]) is not None
            and blas_layout(k, n, *b.strides[-2:]) is not None)


