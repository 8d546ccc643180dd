"""Which float sums of a row kernel's phase (codegen/creduce.py) are taken by a second loop
over the chunk just stored, from L1, instead of in the loop that computes the value: softmax's
exp + sum (rows of 4096 float32 in L1, one Zen 5 core: 0.292 -> 0.243 ns a point native,
0.485 -> 0.412 x86-64-v3); the fused loop is slower than its two halves.
"""

from __future__ import annotations

import numpy as np

from ..frontend.ops import ctype
from ..lowering.loop_ir import Access, Reduce, Stmt, Store


def reread_sums(reduces: list[Reduce], body: list[Stmt],
                buf_types: dict[int, tuple[str, bool]]) -> dict[str, Access]:
    """Float sums accumulated in double (not float64's compensated ones) of a value the phase
    also stores, unconverted and contiguously along the row, where no other store of the
    phase writes that buffer: reduction var -> the store's access (the re-read loop adds
    the very values stored, each converted to double as the fused loop does)."""
    stores = [s for s in body if isinstance(s, Store)]
    out: dict[str, Access] = {}
    for r in reduces:
        if r.fn != "sum" or r.in_dtype.kind != "f" or r.in_dtype == np.float64:
            continue
        for s in stores:
            if (s.var == r.value and not s.index and s.fn is None
                    and s.access.strides[-1] == 1
                    and buf_types[s.access.buf][0] == ctype(r.in_dtype)
                    and sum(t.access.buf == s.access.buf for t in stores) == 1):
                out[r.var] = s.access
                break
    return out
