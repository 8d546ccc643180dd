"""Lowering of `gather` nodes: the Load of a source at data-dependent positions.

A gather reads its source from memory through the source's view chain (fusion stores the
source first, in an earlier kernel), at the element its index values name along the
gathered axes: each index becomes an IndexTerm of the Load (codegen renders fj_ix_<mode>),
and in mode "raise" a Check reports an index outside its axis as NumPy's IndexError.
"""

from __future__ import annotations

import numpy as np

from ..frontend.ir import Node
from ..frontend.ops import ERR_INDEX_RANGE, gather_dims
from .loop_ir import Access, Check, Const, IndexTerm, Load
from .lower import AffineMap, _KernelBuilder, broadcast_map


def gather_load(kb: _KernelBuilder, node: Node, amap: AffineMap) -> str:
    """A gather's value: its source read from memory through its view chain, at the
    positions its index values name along the gathered axes (Load.index), each index
    checked against its axis unless the mode wraps or clips."""
    src, *index = node.inputs
    axes, mode = node.attrs["axes"], node.attrs["mode"]
    b_shape = np.broadcast_shapes(*(i.shape for i in index))
    first, rest = gather_dims(src.type.ndim, axes, len(b_shape))
    place = kb.low.layout(src)
    assert place is not None, f"gather %{node.id} cannot read its source from memory"
    buf, offset, strides, held = place
    coef = [0] * kb.ndom
    out_dims = list(range(first)) + list(range(first + len(b_shape), len(node.shape)))
    for d, a in zip(out_dims, rest, strict=True):
        off, row = amap[d]
        offset += strides[a] * off
        coef = [c + strides[a] * x for c, x in zip(coef, row)]
    b_map = amap[first:first + len(b_shape)]
    terms = []
    for a, ix in zip(axes, index):
        var = kb.value(ix, broadcast_map(ix.shape, b_shape, b_map))
        if mode == "raise":
            extent = kb.fresh()
            kb.body.append(Const(extent, src.shape[a], np.dtype(np.int64)))
            kb.body.append(Check(ERR_INDEX_RANGE.code, "gather", (var, extent),
                                 (ix.dtype, np.dtype(np.int64))))
        terms.append(IndexTerm(var, ix.dtype, strides[a], src.shape[a], mode))
    name = kb.var()
    kb.body.append(Load(name, Access(buf.index, int(offset), tuple(coef)), node.dtype,
                        held, tuple(terms)))
    kb.record(node)
    return name
