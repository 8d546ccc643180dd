"""reshape, ravel, flatten and atleast_Nd at trace time: affine views where NumPy's C-order
reshape only splits axes or adds/drops size-1 axes, a `reshape` node where it merges axes.

Splitting an axis (n -> a x b) is affine in index space: the new dims read the same input axis
with steps b and 1, so it is an ordinary `view` (several output dims on one input axis; the
index maps sum their contributions). Merging axes (a x b -> n) is not affine in index space,
only in memory: out[i] lives at offset + i * s when the merged axes are laid out contiguously
relative to each other (s1 == n1 * s2...). A `reshape` node therefore means "the same memory,
read with the strides NumPy's no-copy reshape rule gives" (`reshape_strides`). Fusion stores
the node below a reshape's chain of views (its base) in a buffer, and lowering reads through
the strides; where the rule fails for the actual layout (a transposed or strided input, known
only when lowering sees the argument strides) lowering inserts a `copy` first, exactly where
NumPy's reshape would have copied.

Write-through semantics follow NumPy where they do not depend on the memory layout: a split
reshape is a view linked to its source (writes go both ways); writing into a merged reshape,
or reading one after its source was modified in place, raises UnsupportedError, because
whether NumPy returned a view or a copy there depends on the argument's strides.
"""

from __future__ import annotations

import operator
from typing import Any

import numpy as np

from . import tracer as T
from . import views as V


def target_shape(shape: tuple[int, ...], newshape: Any) -> tuple[int, ...]:
    """NumPy's reading of `newshape` (with -1) for an array of `shape`, with its errors."""
    try:
        dims = (operator.index(newshape),)
    except TypeError:
        dims = tuple(operator.index(d) for d in newshape)
    try:
        return np.empty(shape, dtype=[]).reshape(dims).shape
    except ValueError as e:
        raise ValueError(f"{e}{T.where_msg()}") from None


def groups(old: tuple[int, ...], new: tuple[int, ...]) -> list[tuple[list[int], list[int]]] | None:
    """Pair runs of non-unit input axes with runs of non-unit output axes of equal product
    (NumPy's no-copy reshape walk). None for a zero-size array."""
    if 0 in old:
        return None
    oa = [d for d, n in enumerate(old) if n != 1]
    na = [d for d, n in enumerate(new) if n != 1]
    out: list[tuple[list[int], list[int]]] = []
    i = j = 0
    while i < len(oa) and j < len(na):
        go, gn = [oa[i]], [na[j]]
        po, pn = old[oa[i]], new[na[j]]
        i, j = i + 1, j + 1
        while po != pn:
            if po < pn:
                go.append(oa[i])
                po *= old[oa[i]]
                i += 1
            else:
                gn.append(na[j])
                pn *= new[na[j]]
                j += 1
        out.append((go, gn))
    return out


def split_dims(old: tuple[int, ...], new: tuple[int, ...]
               ) -> tuple[tuple[int, int], ...] | None:
    """The view dims of reshaping `old` to `new` when that only splits axes or adds/drops
    size-1 axes (each output dim reads one input axis with the step of its sub-index);
    None when it merges axes."""
    pairs = groups(old, new)
    dims = [(-1, 0)] * len(new)
    if pairs is None:  # zero-size: nothing is ever read
        return tuple(dims)
    for go, gn in pairs:
        if len(go) != 1:
            return None
        step = 1
        for d in reversed(gn):
            dims[d] = (go[0], step)
            step *= new[d]
    return tuple(dims)


def reshape_strides(old: tuple[int, ...], strides: tuple[int, ...],
                    new: tuple[int, ...]) -> tuple[int, ...] | None:
    """Element strides of `new` over memory laid out as `old` with `strides`, or None when
    NumPy's reshape would have to copy (the merged axes are not contiguous to each other)."""
    pairs = groups(old, new)
    out = [0] * len(new)
    if pairs is None:
        return tuple(out)
    for go, gn in pairs:
        for a, b in zip(go[:-1], go[1:]):
            if strides[a] != old[b] * strides[b]:
                return None
        acc = strides[go[-1]]
        for d in reversed(gn):
            out[d] = acc
            acc *= new[d]
    return tuple(out)


def reshape_node(base: Any, shape: tuple[int, ...]) -> Any:
    """The node for `base` reshaped (C order) to `shape`: a view when it only splits axes or
    changes size-1 axes, else a `reshape` node (a reshape of a reshape is one reshape)."""
    if base.op == "reshape":
        base = base.inputs[0]
    dims = split_dims(base.shape, shape)
    if dims is not None:
        return V.view_node(base, (0,) * len(base.shape), dims, shape)
    return T.make_node("reshape", [base], shape, base.dtype)


def reshape(t: T.Tracer, newshape: Any, order: str = "C") -> T.Tracer:
    """x.reshape(newshape) / np.reshape(x, newshape); order='F' is the C-order reshape of the
    reversed axes, reversed back (a view wherever NumPy's is one)."""
    if order == "F":
        shape = target_shape(t.shape, newshape)
        return V.transpose(reshape(V.transpose(t, None), shape[::-1]), None)
    if order != "C":
        raise T.UnsupportedError(f"reshape with order={order!r} is not supported by fusejit"
                                 f"{T.where_msg()}; only order='C' (the default) and 'F' are: "
                                 "'A' depends on the argument's memory layout")
    shape = target_shape(t.shape, newshape)
    dims = split_dims(t.shape, shape)
    if dims is not None:  # a view, linked to t so that writes go both ways
        return V.make_view(t, (0,) * t.ndim, dims, shape)
    out = T.Tracer(reshape_node(t.node, shape))
    if not t.scalar and t.weak is None:
        # linked to t like a view, with no index map: writes into it, and reads after t
        # changes, are refused (see the module docstring and frontend.inplace.assign)
        out.parent, out.vargs, out.seen = t, (None, None, shape), t.version
        out.readonly = t.readonly
    return out


def rederive(base: Any, shape: tuple[int, ...]) -> Any:
    """A merged reshape whose source was modified in place afterwards: NumPy's answer
    depends on whether its reshape copied, so fusejit refuses."""
    raise T.UnsupportedError(
        f"an array reshaped with merged axes was read after its source was modified in place"
        f"{T.where_msg()}; whether NumPy's reshape returned a view or a copy depends on the "
        "memory layout. Reshape after the update, or use .copy() to make it explicit")


def ravel(t: T.Tracer, order: str = "C") -> T.Tracer:
    """np.ravel / x.ravel(): a view where NumPy's is one (split-only), else a reshape."""
    if order not in ("C", "F"):
        raise T.UnsupportedError(f"ravel with order={order!r} is not supported by fusejit"
                                 f"{T.where_msg()}; only order='C' (the default) and 'F' are: "
                                 f"{order!r} depends on the argument's memory layout")
    return reshape(t, (-1,), order)


def atleast(t: T.Tracer, n: int) -> T.Tracer:
    """np.atleast_1d/2d/3d of one array: NumPy's placement of the new size-1 axes."""
    if t.ndim >= n:
        return t if not t.scalar else V.basic_index(t, ...)
    if n == 3 and t.ndim == 2:
        index: tuple = (slice(None), slice(None), None)
    elif n == 3 and t.ndim == 1:
        index = (None, slice(None), None)
    else:
        index = (None,) * (n - t.ndim) + (Ellipsis,)
    return V.basic_index(t, index)
