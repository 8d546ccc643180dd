"""Lowering of `matmul` nodes: operand layouts, packing, and GemmKernels.

A matmul reads its operands from memory through their views and merging reshapes
(`x.reshape(-1, k) @ w` reads `x` in place when its strides allow NumPy's no-copy reshape).
float32 and float64 products call BLAS gemm, which needs each operand to have a unit stride
along one matrix dim and a leading dimension that covers the other; an operand that is not
laid out like that (negative or broadcast strides, a strided slice) is first packed by an
elementwise `copy` (`pack_operands`). Other dtypes run generated loops that read any affine
layout. A matmul whose product only feeds an argument update (lowering.gemm_update) writes
that argument with alpha and beta = 1. A product with one column or one row is a gemv
(lowering.matvec), or, where that reads less memory, a fused reduction (`pack_operands`).

A matmul with an epilogue (lowering.epilogue) becomes one GemmKernel that also evaluates its
elementwise readers on each block of rows (`build_gemm_epilogue`). Where the product of a
block lies: in the rows of one of the epilogue's values, when one has the product's dtype
and a fresh buffer, and no temp the epilogue reads could take that buffer's block in place
(memplan; the gemm would overwrite it before the epilogue reads it); otherwise in a
per-thread scratch block (codegen/cgemm_epilogue.py). Blocks are SCRATCH_BYTES of product
(they stay in L2 for the epilogue), except where BLAS would re-pack a big B operand for each
of them (REPACK_BYTES, REPACK_ROWS); a gemv's blocks are GEMV_BLOCK elements of the product.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

from ..frontend.ir import Graph, Node
from ..frontend.reshape import reshape_strides
from .builder import (
    KernelBuilder,
    Lowering,
    access,
    broadcast_map,
    contiguous_strides,
    identity_map,
)
from .epilogue import BLAS_DTYPES, INT_MAX, blas_product
from .gemm_update import GemmUpdate, scale_source
from .loop_ir import SCRATCH, Access, Buffer, Compute, GemmKernel, Load, Stmt, Store
from .matvec import GEMV_BLOCK, matvec_as_reduce
from .passes import rewrite
from .stored import strip_views

__all__ = ["BLAS_DTYPES", "INT_MAX", "blas_layout", "build_gemm", "build_gemm_epilogue",
           "matvecs_as_reductions", "operand_strides", "pack_operands", "uses_blas"]

# Bytes of one block of an epilogue's product (per thread): it stays in L2 for the epilogue.
SCRATCH_BYTES = 256 * 1024
# BLAS packs the whole B operand again for every gemm call, that is once per block of rows.
# When B is bigger than this, a gemm that writes its product into C's own rows takes each
# thread's whole share in one call, and one that needs scratch takes blocks of at least
# REPACK_ROWS rows (repacking then costs a few per cent of the multiply-adds).
REPACK_BYTES = 512 * 1024
REPACK_ROWS = 256


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
    return blas_product(node, blas)


def matvecs_as_reductions(graph: Graph, input_strides: list[tuple[int, ...]], blas: bool
                          ) -> Graph:
    """The matrix-vector products that a fused reduction serves better than BLAS become one
    (lowering.matvec)."""
    return matvec_as_reduce(graph, lambda n: uses_blas(n, blas), _readable(graph, input_strides))


def _readable(graph: Graph, input_strides: list[tuple[int, ...]]) -> Callable[[Node], bool]:
    """Whether BLAS can read a matmul operand of `graph` in place (a stored value's layout)."""
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

    return readable


def pack_operands(graph: Graph, input_strides: list[tuple[int, ...]], blas: bool) -> Graph:
    """A `copy` before every BLAS matmul operand whose layout BLAS cannot read."""
    readable = _readable(graph, input_strides)

    def rule(node: Node) -> Node:
        if node.op != "matmul" or not uses_blas(node, blas) or node.type.size == 0:
            return node
        ins = tuple(i if readable(i) else Node("copy", (i,), i.type, {}, node.loc)
                    for i in node.inputs)
        if all(a is b for a, b in zip(ins, node.inputs)):
            return node
        return Node(node.op, ins, node.type, dict(node.attrs), node.loc)

    return rewrite(graph, rule)


def build_gemm(low: Lowering, name: str, node: Node, blas: bool,
               update: GemmUpdate | None = None) -> GemmKernel:
    """The GemmKernel computing matmul `node` into its buffer, or, with `update`, into the
    updated argument's buffer with alpha = ±factor and beta = 1."""
    out = low.buffer_for(update.update if update is not None else node)
    assert out is not None
    ndom = node.type.ndim
    a, b, bases = _operands(low, node)
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


def _with_alpha(low: Lowering, kern: GemmKernel, scale: Node | None, ndom: int) -> GemmKernel:
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




def _operands(low: Lowering, node: Node) -> tuple[Access, Access, tuple[int, int]]:
    """The accesses of matmul `node`'s operands A and B, and the stored nodes they read."""
    accesses, bases = [], []
    for operand in node.inputs:
        place = low.layout(operand)
        assert place is not None, f"matmul operand %{operand.id} is not in memory"
        buf, off, strides, held = place
        accesses.append(Access(buf.index, int(off), tuple(strides)))
        bases.append(held)
    return accesses[0], accesses[1], (bases[0], bases[1])


def build_gemm_epilogue(low: Lowering, name: str, node: Node, roots: list[Node]
                        ) -> GemmKernel:
    """The BLAS GemmKernel of matmul `node` whose epilogue computes `roots` (fusion's
    epilogue values) from the product, block by block of rows (lowering.epilogue)."""
    ndom = node.type.ndim
    ident = identity_map(ndom)
    a, b, bases = _operands(low, node)
    m, n = node.shape[-2:]
    k = node.inputs[0].shape[-1]
    assert node.type.size > 0 and k > 0 and _blas_ok(a, b, m, n, k), \
        f"matmul %{node.id} was given an epilogue but cannot be a BLAS gemm"
    builder = KernelBuilder(low, node.shape, roots)
    product = "acc"
    builder.memo[(node.id, ident)] = product
    # Read through a same-shaped elementwise op, size-1 dims map to 0: the same element.
    builder.memo[(node.id, broadcast_map(node.shape, node.shape, ident))] = product
    for root in roots:
        v = builder.value(root, ident)
        buf = low.buffer_for(root)
        assert buf is not None
        builder.body.append(Store(access(buf, ident, ndom), v, root.id))
    assert not any(isinstance(s, Compute) and s.op == "matmul" for s in builder.body), \
        f"the epilogue of matmul %{node.id} reads the product at another index"
    item = node.dtype.itemsize
    rows = min(m, max(1, SCRATCH_BYTES // max(n * item, 1)))
    body = [_unit_dims(s, node.shape) for s in builder.body]
    target = _direct_target(low, node, roots, body)
    gemv = n == 1 or m == 1  # gemv calls (lowering.matvec): blocks of the product's elements
    if gemv:
        rows = min(max(m, n), GEMV_BLOCK)
    if target is None:
        c = Access(SCRATCH, 0, (0,) * (ndom - 2) + (n, 1))
        if k * n * item > REPACK_BYTES and not gemv:
            rows = min(m, max(rows, REPACK_ROWS))
    else:
        c = _unit_access(access(target, ident, ndom), node.shape)
        if k * n * item > REPACK_BYTES and not gemv:
            rows = 0
    locs = [node.loc] if node.loc else []
    locs += [loc for loc in builder.locs if loc not in locs]
    return GemmKernel(name, node.shape[:-2], m, n, k, a, b, c, node.dtype, True,
                      [node.id, *builder.nodes], locs, bases, epilogue=body,
                      rows=rows, product=product, product_node=node.id)


def _unit_access(acc: Access, domain: tuple[int, ...]) -> Access:
    """`acc` with stride 0 along the size-1 dims of `domain` (the same elements): one index
    map per element, as memplan's in-place proofs compare them."""
    return Access(acc.buf, acc.offset, tuple(0 if n == 1 else s
                                             for s, n in zip(acc.strides, domain)))


def _unit_dims(s: Stmt, domain: tuple[int, ...]) -> Stmt:
    if isinstance(s, Load):
        return Load(s.var, _unit_access(s.access, domain), s.dtype, s.node, s.index)
    if isinstance(s, Store):
        return Store(_unit_access(s.access, domain), s.var, s.node)
    return s


def _direct_target(low: Lowering, node: Node, roots: list[Node], body: list[Stmt]
                   ) -> Buffer | None:
    """The buffer the gemm may write the product into before the epilogue overwrites it
    with a value of the same dtype (a fresh temp or output, laid out row-major), or None
    when the product needs scratch: no such value, or a temp the epilogue reads could take
    that value's block in place (memplan), which needs the block unwritten until the
    epilogue has read it."""
    read = [low.buffers[s.access.buf] for s in body if isinstance(s, Load)]
    for root in roots:
        buf = low.buffer_for(root)
        if (buf is None or root.dtype != node.dtype or buf.kind not in ("temp", "output")
                or buf.strides != contiguous_strides(root.shape)):
            continue
        if buf.kind == "temp" and any(r.kind == "temp" and r.dtype.itemsize == buf.dtype.itemsize
                                      and r.nbytes >= buf.nbytes for r in read):
            continue
        return buf
    return None
