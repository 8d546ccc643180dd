"""`out=` on compiled calls: check the caller's arrays like a NumPy ufunc, and decide whether
the kernels can write into them directly.

Rules (NumPy's ufunc `out=` with `casting="same_kind"`): `out` is one array for a function
returning one array (or a 1-tuple), or a tuple with one array per result for a function
returning a tuple; each must have exactly the result's shape (no broadcasting), be writeable,
and the result's dtype must cast to it under `same_kind` (float64 -> float32 is fine,
float -> int raises TypeError). The kernels write straight into `out` when it has exactly the
result dtype, is C-contiguous and aligned, and shares no memory with an argument or another
`out`; otherwise the result is computed into fresh memory and copied, so an `out` aliasing an
input still gets NumPy's answer.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from .executor import Executable


def leaf_count(tree: Any) -> int | None:
    """Number of results of a function returning one array (0: a bare leaf) or a flat tuple
    of arrays; None for any other structure, which `out=` does not support."""
    if tree == ("leaf",):
        return 0
    if tree[0] == "tuple" and tree[1] and all(t == ("leaf",) for t in tree[1]):
        return len(tree[1])
    return None


def check_out(out: Any, tree: Any, specs: list[tuple[tuple[int, ...], np.dtype]],
              name: str) -> list[np.ndarray]:
    """The caller's `out` as one array per result; NumPy's exception when it does not fit."""
    n = leaf_count(tree)
    if n is None:
        raise TypeError(f"{name}(): out= needs a function that returns an array or a tuple "
                        "of arrays")
    if n and not isinstance(out, tuple):
        raise TypeError(f"{name}(): returns {n} results, so out= must be a tuple of {n} arrays")
    outs = list(out) if isinstance(out, tuple) else [out]
    if len(outs) != max(n, 1):
        raise ValueError(f"{name}(): out= must have exactly one entry per result "
                         f"({max(n, 1)}), got {len(outs)}")
    for k, (o, (shape, dtype)) in enumerate(zip(outs, specs, strict=True)):
        if not isinstance(o, np.ndarray):
            raise TypeError(f"{name}(): out[{k}] must be a numpy.ndarray, not "
                            f"{type(o).__name__}")
        if o.shape != tuple(shape):
            raise ValueError(f"{name}(): out[{k}] has shape {o.shape}, the result has "
                             f"{tuple(shape)}")
        if not np.can_cast(dtype, o.dtype, casting="same_kind"):
            raise TypeError(f"{name}(): cannot cast the result from dtype('{dtype}') to "
                            f"out[{k}]'s dtype('{o.dtype}') with casting rule 'same_kind'")
        if not o.flags.writeable:
            raise ValueError(f"{name}(): out[{k}] is read-only")
    return outs


def direct_outs(exe: Executable, outs: list[np.ndarray], args: tuple) -> list[np.ndarray] | None:
    """`outs` arranged as the executable's output buffers when the kernels may write into them
    directly (each result its own output buffer, exact dtype, C-contiguous and aligned, no
    memory shared with an argument or another `out`); else None."""
    if len(exe.results) != len(outs) or len(exe.out_specs) != len(outs):
        return None
    slots: list[np.ndarray | None] = [None] * len(exe.out_specs)
    for (kind, slot), o in zip(exe.results, outs, strict=True):
        shape, dtype = exe.out_specs[slot] if kind == "out" else ((), None)
        if (kind != "out" or slots[slot] is not None or o.dtype != dtype
                or not (o.flags.c_contiguous and o.flags.aligned)):
            return None
        slots[slot] = o
    for i, o in enumerate(outs):
        if any(isinstance(a, np.ndarray) and np.may_share_memory(o, a) for a in args):
            return None
        if any(np.may_share_memory(o, p) for p in outs[:i]):
            return None
    return slots  # type: ignore[return-value]


def copy_into(outs: list[np.ndarray], result: Any, tree: Any) -> None:
    """Copy a computed result (one array or a flat tuple) into the caller's arrays."""
    values = [result] if leaf_count(tree) == 0 else list(result)
    for o, v in zip(outs, values, strict=True):
        np.copyto(o, v, casting="same_kind")
