"""In-place updates at trace time: `x += y`, `x[1:3] = v`, `np.copyto`, `ufunc(..., out=x)`.

The graph stays functional: an update computes the array's new value as a node and rebinds the
Tracer to it (`assign`). Writing through a view becomes a `scatter` node (the parent's old value
with the view's region replaced) assigned to the parent, recursively up to the array the views
were taken from. When that array is an argument, its final value becomes an update edge of the
graph (frontend.trace.trace), which the lowering writes into the caller's buffer. NumPy's
checks come from NumPy itself, run on empty probes: same_kind casting for ufuncs and copyto,
broadcasting into the target's shape, read-only destinations.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ..errors import UnsupportedError
from . import ops as O
from . import tracer as T
from .ir import Node
from .ufuncs import apply_ufunc


def _probe(x: Any) -> Any:
    if isinstance(x, T.Tracer):
        return x.weak(0) if x.weak is not None else np.empty(0, x.dtype)
    if isinstance(x, np.ndarray):
        return np.empty(0, x.dtype)
    return x


def _broadcast_into(node: Node, shape: tuple[int, ...]) -> Node:
    if node.shape == shape:
        return node
    from .views import broadcast_to

    return broadcast_to(T.Tracer(node), shape).node


def check_writable(target: T.Tracer) -> None:
    """NumPy's error for a read-only view; fusejit's for a view it cannot write through."""
    if isinstance(target.readonly, str) and "{where}" in target.readonly:
        raise UnsupportedError(target.readonly.format(where=T.where_msg()))
    if isinstance(target.readonly, str):
        raise UnsupportedError(f"{target.readonly}{T.where_msg()}: write into the array "
                               "itself, e.g. with np.where(np.arange(n) == i, value, x)")
    if target.readonly:
        raise ValueError(f"assignment destination is read-only{T.where_msg()}")


def assign(target: T.Tracer, node: Node) -> None:
    """Make `node` (target's shape and dtype) the value of `target`, writing through views."""
    check_writable(target)
    t = target
    while True:
        parent = t.parent
        if parent is None:
            t._node = node
            t.version += 1
            return
        old = parent.node
        if t.vargs is None:
            new = node
        elif callable(t.vargs[0]):  # x[i] by a traced integer i (frontend.gather)
            new = t.vargs[1](old, node)
        elif t.vargs[0] is None:  # a merged reshape (frontend.reshape)
            raise UnsupportedError(
                f"writing into an array reshaped with merged axes is not supported by fusejit"
                f"{T.where_msg()}: whether NumPy's reshape returned a view or a copy depends "
                "on the memory layout. Write into the source array, or reshape a .copy()")
        else:
            start, dims, _ = t.vargs
            new = T.make_node("scatter", [old, node], old.shape, old.dtype, start=start,
                              dims=dims)
        t._node = node
        t.seen = parent.version + 1  # the parent's version once `new` is assigned to it
        t.version += 1
        t, node = parent, new


def _destination(out: Any, what: str) -> T.Tracer:
    if isinstance(out, tuple):
        if len(out) != 1:
            raise ValueError(f"{what}: out must have exactly one array")
        out = out[0]
    if not isinstance(out, T.Tracer):
        raise UnsupportedError(
            f"{what} writes into an array that is not an argument of the compiled function "
            f"(a global or a constant){T.where_msg()}; pass it as an argument")
    if out.scalar or out.weak is not None:
        raise TypeError(f"{what}: return arrays must be of ArrayType")
    return out


def ufunc_into(ufunc: np.ufunc, args: tuple, out: Any, result: Any = None) -> T.Tracer:
    """`ufunc(*args, out=out)` (and `out op= other`): NumPy's casting and shape checks, then
    the result is assigned to `out`. Returns `out`, as NumPy does."""
    dest = _destination(out, f"{ufunc.__name__}()")
    args = tuple(T.array_operand(a) for a in args)
    probes = [_probe(a) for a in args]
    with np.errstate(all="ignore"):
        ufunc(*probes, out=np.empty(0, dest.dtype))  # NumPy's exact casting error, if any
    if result is None:
        result = apply_ufunc(ufunc, *args)
    shape = np.broadcast_shapes(*(T.shape_of(a) for a in args))
    if np.broadcast_shapes(shape, dest.shape) != dest.shape:
        raise ValueError(f"non-broadcastable output operand with shape {dest.shape} doesn't "
                         f"match the broadcast shape {np.broadcast_shapes(shape, dest.shape)}")
    assign(dest, _broadcast_into(T.cast_node(result.node, dest.dtype), dest.shape))
    return dest


def gufunc_into(ufunc: np.ufunc, out: Any, result: T.Tracer) -> T.Tracer:
    """`ufunc(..., out=out)` of a generalized ufunc (np.matmul) whose `result` is computed:
    NumPy's casting error (same_kind), an output of exactly the result's shape, then the
    result assigned to `out`. Returns `out`, as NumPy does."""
    what = f"{ufunc.__name__}()"
    dest = _destination(out, what)
    probe = np.zeros((1, 1), result.dtype)
    with np.errstate(all="ignore"):
        ufunc(probe, probe, out=np.empty((1, 1), dest.dtype))  # NumPy's casting error, if any
    if dest.shape != result.shape:
        raise ValueError(f"{ufunc.__name__}: the output operand's shape {dest.shape} is not "
                         f"the result's {result.shape}")
    assign(dest, T.cast_node(result.node, dest.dtype))
    return dest


def value_node(value: Any, dtype: np.dtype) -> Node:
    """`value` as a node of `dtype`, converted as NumPy's item assignment converts it."""
    if isinstance(value, T.Tracer):
        return T.cast_node(value.node, dtype)
    if isinstance(value, (list, tuple)) and any(isinstance(v, T.Tracer) for v in value):
        raise UnsupportedError(f"assigning a list of traced values is not supported by fusejit"
                               f"{T.where_msg()}; build an array with np.stack first")
    arr = np.asarray(value)
    O.check_dtype(arr.dtype, "an assigned value")
    converted = np.empty(arr.shape, dtype)
    converted[...] = value  # NumPy's conversion and its errors (OverflowError, NaN to int)
    return T.const_node(converted)


def setitem(target: T.Tracer, index: Any, value: Any) -> None:
    """`target[index] = value` (basic indices here; index arrays: frontend.scatter)."""
    if target.scalar or target.weak is not None:
        kind = "int" if target.weak is int else ("float" if target.weak is float
                                                 else f"numpy.{target.dtype.name}")
        raise TypeError(f"'{kind}' object does not support item assignment")
    from .gather import has_index_array
    from .mask_index import expand_known_masks, traced_mask
    from .masked import refusal
    from .masked_index import has_positions, own_mask
    from .views import index_view, view_node

    if has_positions(index):  # x[np.nonzero(x > 0)] = v: x[x > 0] = v
        own = own_mask(target, index)
        if own is None:
            raise refusal("assigning through index arrays taken from a mask that are not the "
                          "positions of this array's own leading axes")
        index = own
    index = expand_known_masks(target.shape, index)
    if _is_full_mask(index, target) and not hasattr(value, "fusejit_selection") and \
            T.shape_of(value) == ():
        # x[mask] = v with a mask of x's shape and one value: np.copyto(x, v, where=mask)
        value_node(value, target.dtype)  # NumPy's conversion errors
        copyto(target, value, "unsafe", where=index[0] if isinstance(index, tuple) else index)
        return
    if traced_mask(index):  # x[mask] = v, x[:, mask] = x[:, mask] * 2 (frontend/masked.py)
        from .masked_calls import write

        write(target, index, value)
        return
    if has_index_array(index):  # through index arrays: a scatter (frontend.scatter)
        from .scatter import setitem_index

        setitem_index(target, index, value)
        return
    start, dims, shape, _ = index_view(target, index)
    node = value_node(value, target.dtype)
    try:
        shape_ok = np.broadcast_shapes(node.shape, shape) == shape
    except ValueError:
        shape_ok = False
    if not shape_ok:
        raise ValueError(f"could not broadcast input array from shape {node.shape} into shape "
                         f"{shape}")
    node = _broadcast_into(node, shape)
    check_writable(target)
    old = target.node
    region = view_node(old, start, dims, shape)
    if region is old:  # the whole array
        if node is not old:
            assign(target, node)
        return
    if node is region or (node.op == "view" and region.op == "view" and node.inputs[0] is old
                          and node.attrs == region.attrs) or (
            old.op == "scatter" and old.inputs[1] is node and old.attrs["start"] == start
            and old.attrs["dims"] == dims):
        # `x[i] op= y` ends with Python's `x[i] = <the updated view>`: already written.
        return
    assign(target, T.make_node("scatter", [old, node], old.shape, old.dtype, start=start,
                               dims=dims))


def _is_full_mask(index: Any, target: T.Tracer) -> bool:
    """A boolean array (traced or not) of exactly target's shape (0-d too: `r[flag] = v` of a
    0-d r sets it where the flag is true, as SciPy's pearsonr does)."""
    if isinstance(index, tuple) and len(index) == 1:
        index = index[0]
    return (isinstance(index, (T.Tracer, np.ndarray)) and index.dtype == np.bool_
            and index.shape == target.shape)


def copyto(dst: Any, src: Any, casting: str = "same_kind", where: Any = True) -> None:
    """np.copyto into a traced array."""
    dest = _destination(dst, "copyto()")
    np.copyto(np.empty(0, dest.dtype), _probe(src), casting=casting)  # NumPy's casting check
    node = value_node(src, dest.dtype) if not isinstance(src, T.Tracer) else T.cast_node(
        src.node, dest.dtype)
    shape = dest.shape
    try:
        ok = np.broadcast_shapes(node.shape, shape) == shape
    except ValueError:
        ok = False
    if not ok:
        raise ValueError(f"could not broadcast input array from shape {node.shape} into shape "
                         f"{shape}")
    value = T.Tracer(_broadcast_into(node, shape))
    if where is not True:
        value = np.where(where, value, dest)
    assign(dest, T.cast_node(value.node, dest.dtype))
