"""Lowering of `matmul` nodes: operand layouts, packing, and GemmKernels.

A matmul reads its operands from memory through their views and merging reshapes
(`x.reshape(-1, k) @ w` reads `x` in place when its strides allow NumPy's no-copy reshape).
float32 and float64 products call BLAS gemm, which needs each operand to have a unit stride
along one matrix dim and a leading dimension that covers the other; an operand that is not
laid out like that (negative or broadcast strides, a strided slice) is first packed by an
elementwise `copy` (`pack_operands`). Other dtypes run generated loops that read any affine
layout. A matmul whose product only feeds an argument update (lowering.gemm_update) writes
that argument with alpha and beta = 1.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

from ..frontend.ir import Graph, Node
from ..frontend.reshape import reshape_strides
from .fusion import strip_views
from .gemm_update import GemmUpdate, scale_source
from .loop_ir import Access, GemmKernel
from .lower import _Lowering, access, contiguous_strides, identity_map
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


def operand_strides(node: Node, base_strides: Callable[[Node], tuple[int, ...]]
                    ) -> tuple[int, ...] | None:
    """Element strides of `node` read in place through its views and reshapes, given the
    strides of the node below them; None when a reshape would need a copy."""
    if node.op == "view":
        inner = operand_strides(node.inputs[0], base_strides)
        if inner is None:
            return None
        return tuple(step * inner[axis] if axis >= 0 else 0 for axis, step in node.attrs["dims"])
    if node.op == "reshape":
        inner = operand_strides(node.inputs[0], base_strides)
        return None if inner is None else reshape_strides(node.inputs[0].shape, inner,
                                                          node.shape)
    return base_strides(node)


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
        strides = operand_strides(operand, base_strides)
        rows, cols = operand.shape[-2:]
        return strides is not None and blas_layout(rows, cols, *strides[-2:]) is not None

    def rule(node: Node) -> Node:
        if node.op != "matmul" or not uses_blas(node, blas) or node.type.size == 0:
            return node
        ins = tuple(i if readable(i) else Node("copy", (i,), i.type, {}, node.loc)
                    for i in node.inputs)
        if all(a is b for a, b in zip(ins, node.inputs)):
            return node
        return Node(node.op, ins, node.type, dict(node.attrs), node.loc)

    return rewrite(graph, rule)


def build_gemm(low: _Lowering, name: str, node: Node, blas: bool,
               update: GemmUpdate | None = None) -> GemmKernel:
    """The GemmKernel computing matmul `node` into its buffer, or, with `update`, into the
    updated argument's buffer with alpha = ±factor and beta = 1."""
    out = low.buffer_for(update.update if update is not None else node)
    assert out is not None
    ndom = node.type.ndim
    accesses, bases = [], []
    for operand in node.inputs:
        place = low.layout(operand)
        assert place is not None, f"matmul operand %{operand.id} is not in memory"
        buf, off, strides, held = place
        accesses.append(Access(buf.index, int(off), tuple(strides)))
        bases.append(held)
    a, b = accesses
    m, n = node.shape[-2:]
    k = node.inputs[0].shape[-1]
    use = uses_blas(node, blas) and node.type.size > 0 and _blas_ok(a, b, m, n, k)
    c = access(out, identity_map(ndom), ndom)
    locs = [node.loc] if node.loc else []
    if update is None:
        return GemmKernel(name, node.shape[:-2], m, n, k, a, b, c, node.dtype, use, [node.id],
                          locs, (bases[0], bases[1]))
    kern = GemmKernel(name, node.shape[:-2], m, n, k, a, b, c, node.dtype, use,
                      [node.id, *update.fused], locs, (bases[0], bases[1]), beta=1.0,
                      alpha=float(update.sign), c_node=low.graph.inputs[update.arg].id)
    if update.update.loc and update.update.loc not in locs:
        locs.append(update.update.loc)
    return _with_alpha(low, kern, update.scale, ndom)


def _with_alpha(low: _Lowering, kern: GemmKernel, scale: Node | None, ndom: int) -> GemmKernel:
    """`kern` with its alpha times `scale`: a literal for a constant, else a run-time read of
    the stored factor or of the argument it is cast from (scale_source)."""
    if scale is None:
        return kern
    src = scale if low.buffer_for(scale) is not None else scale_source(scale)
    assert src is not None, f"the gemm factor %{scale.id} is not in memory"
    if src.op == "const" and src.type.size <= 1:
        kern.alpha *= float(np.asarray(src.attrs["value"]).reshape(-1)[0])
        return kern
    place = low.layout(src)
    assert place is not None, f"the gemm factor %{src.id} is not in memory"
    buf, off, _, held = place
    kern.alpha_from = Access(buf.index, int(off), (0,) * ndom)
    kern.alpha_dtype, kern.alpha_node = src.dtype, held
    return kern


def _blas_ok(a: Access, b: Access, m: int, n: int, k: int) -> bool:
    return (blas_layout(m, k, *a.strides[-2:]) is not None
            and blas_layout(k, n, *b.strides[-2:]) is not None)


