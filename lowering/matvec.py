"""Matrix-vector products: which run as BLAS gemv, which as fused reductions.

A float matmul whose product has one column (`A @ v`) or one row (`v @ A`), batched or not,
lowered with BLAS, is a GemmKernel that codegen renders as gemv calls (`is_gemv`;
codegen/cgemv.py), split by rows of the gemv's matrix over the program's threads like a gemm,
with or without an epilogue. gemv reads the matrix once at memory speed (float32 on the 2-core
development machine, medians: x[4096, 4096] @ v 1.4 ms, as NumPy's, against 1.9 ms as a
fused reduction; x[1M, 16] @ w 1.3 against 5.4 ms).

`matvec_as_reduce` turns a 2-D float matrix-vector product into a multiply and a sum
(`(a * b.T).sum(axis=1, keepdims=True)` or `(a.T * b).sum(axis=0, keepdims=True)`) where
that reads less memory or needs no BLAS:
- without BLAS (AOT export, CUDA): the generated matmul loops would sum each dot product
  serially; the reduction is vectorised and sums pairwise in double;
- where BLAS could not read the matrix in place (a strided slice, negative strides) and it
  would be copied first, or where the matrix is computed by elementwise work that would be
  stored only for the product (`np.exp(x) @ v`): the reduction computes it on the fly in
  one pass over `x`, where gemv would need a write and two reads of the whole matrix.
Float sums of the reduction accumulate pairwise in double: at least as accurate as a float32
gemv, not bit-identical to any BLAS.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

from ..frontend.ir import Graph, Node, TensorType
from ..frontend.ops import OPS
from ..frontend.views import view_node
from .loop_ir import GemmKernel
from .passes import rewrite
from .stored import strip_views

MATVEC_DTYPES = frozenset({np.dtype(np.float32), np.dtype(np.float64)})
# Elements of the product per block of a gemv epilogue (each block's gemv reads its rows of
# the matrix, then the epilogue reads the block's product from L1/L2).
GEMV_BLOCK = 8192


def is_gemv(k: GemmKernel) -> bool:
    """True when BLAS GemmKernel `k` is rendered as gemv calls: its product has one column
    or one row (and it is not empty)."""
    return (k.blas and k.k > 0 and k.size > 0 and (k.n == 1 or k.m == 1)
            and k.dtype.kind == "f")  # complex products stay cgemm/zgemm calls


def gemv_length(k: GemmKernel) -> int:
    """Rows of the gemv's matrix per batch element: m (`A @ v`), or n when m = 1 (`v @ B`
    reads B's columns as rows)."""
    return k.n if k.m == 1 and k.n > 1 else k.m


def matvec_as_reduce(graph: Graph, blas: Callable[[Node], bool],
                     readable: Callable[[Node], bool]) -> Graph:
    """Rewrite the 2-D float matrix-vector products that are better as a fused multiply and
    sum (module docstring): all of them where `blas(node)` is False; otherwise those whose
    matrix (both operands of a dot product) `readable` says BLAS cannot read in place or
    that elementwise work computes for the product alone."""
    results = {n.id for n in graph.outputs}

    def stored_anyway(operand: Node) -> bool:
        base = strip_views(operand, reshapes=True)
        return (base.id in results or base.op not in OPS
                or OPS[base.op].kind != "elementwise")

    def rule(node: Node) -> Node:
        if (node.op != "matmul" or node.dtype not in MATVEC_DTYPES
                or any(i.dtype != node.dtype or len(i.shape) != 2 for i in node.inputs)):
            return node
        a, b = node.inputs
        (m, k), n = a.shape, b.shape[1]
        if n != 1 and m != 1:
            return node
        matrices = [a] if m > 1 else [b] if n > 1 else [a, b]
        if blas(node) and all(readable(x) and stored_anyway(x) for x in matrices):
            return node
        if n == 1:  # b[k, 1] seen as [1, k]
            a, b, axis = a, _view(b, ((-1, 0), (0, 1)), (1, k), node), 1
        else:  # a[1, k] seen as [k, 1]
            a, b, axis = _view(a, ((1, 1), (-1, 0)), (k, 1), node), b, 0
        prod = Node("multiply", (a, b), TensorType((k, n) if axis == 0 else (m, k), node.dtype),
                    {}, node.loc)
        return Node("reduce", (prod,), node.type, {"fn": "sum", "axes": (axis,),
                                                   "keepdims": True}, node.loc)

    return rewrite(graph, rule)


def _view(base: Node, dims: tuple[tuple[int, int], ...], shape: tuple[int, ...],
          like: Node) -> Node:
    """`base` seen through `dims` (composed with base's own view), at `like`'s location.
    view_node may hand back an existing node (an identity view): that one is not restamped."""
    v = view_node(base, (0,) * len(base.shape), dims, shape)
    if v.op != "view" or v is base:
        return v
    return Node(v.op, v.inputs, v.type, dict(v.attrs), like.loc)
