"""np.vectorize called with traced values (frontend/numpy_patch.py puts `call` in the class's
`__call__` while a trace runs).

NumPy's vectorize finds the output dtypes (without `otypes=`) by calling the Python function on
the first elements as NumPy scalars, then calls it on every element as Python objects (float,
complex: double-precision arithmetic, weak in NumPy's promotion) and converts the results to
those dtypes. A compiled function has no elements to hand it, so here the function runs once on
traced arrays: on the arguments broadcast together with their own dtypes (its result dtypes
are the output dtypes), and again on them as float64 (complex128) arrays marked as Python
values, whose results, cast to the output dtypes, are the values. That computes NumPy's values
only when everything the function does is elementwise, so every node the second call creates
is checked: elementwise operations, constants of one element and views of one-element values
pass; anything else (a reduction, a matrix product, indexing, a reshape, a constant array) is
refused with the operation's name, as is a function whose Python code needs the values (an
`if` on an element raises fusejit's ConcretizationError). Integer and bool arrays are refused:
NumPy computes their elements as Python ints, which never overflow, and raises OverflowError
where a result does not fit its dtype. Arguments that are not traced and have one element
(Python numbers, NumPy scalars) are passed as the Python values NumPy would pass. The results
are arrays, also for 0-d arguments (a tuple of them for a function that returns a tuple).
`signature=` (generalized ufuncs) is refused.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ..errors import UnsupportedError
from . import tracer as T
from .context import current
from .numpy_patch import WRAPPERS
from .ops import OPS
from .views import broadcast_to


def _name(vec: Any) -> str:
    return getattr(vec.pyfunc, "__name__", type(vec.pyfunc).__name__)


def _argument(vec: Any, x: Any) -> tuple[Any, Any]:
    """A vectorized argument as (what the first element's call sees, what the others see): a
    traced float or complex array as itself and as float64 (complex128) marked as Python
    values; an untraced one of one element as its first element (a NumPy scalar) and as the
    object NumPy passes (a NumPy scalar or Python number as it is, an array's element as a
    Python number)."""
    out = WRAPPERS["asarray"](x)  # (a list holding traced values: a traced array)
    if not isinstance(out, T.Tracer) and out.size == 1:
        return out.reshape(())[()], np.asanyarray(x, dtype=object).reshape(())[()]
    if not isinstance(out, T.Tracer):
        out = T.Tracer(T.to_node(out, out.dtype))
    if out.dtype.kind not in "fc":
        raise UnsupportedError(
            f"np.vectorize({_name(vec)}) of a traced {out.dtype} array is not supported by "
            f"fusejit{T.where_msg()}: NumPy computes each element as a Python "
            f"{'bool' if out.dtype.kind == 'b' else 'int'}, which never overflows, and raises "
            "OverflowError where a result does not fit its dtype. Write the function with "
            "ufuncs on the array (or vectorize over a float array)")
    kind = float if out.dtype.kind == "f" else complex
    wide = T.to_node(out, np.dtype(np.float64 if kind is float else np.complex128))
    return out, T.Tracer(wide, weak=kind)


def _check_elementwise(vec: Any, nodes: list[Any]) -> None:
    for n in nodes:
        kind = OPS[n.op].kind if n.op in OPS else "other"
        if kind == "elementwise" or (n.op == "const" and n.attrs["value"].size <= 1):
            continue
        if kind == "view" and all(int(np.prod(i.shape)) <= 1 for i in n.inputs):
            continue  # (a scalar broadcast against the arguments)
        what = ("a constant array" if n.op == "const" else f"`{n.op}`")
        raise UnsupportedError(
            f"np.vectorize({_name(vec)}) with traced arguments{T.where_msg()}: fusejit runs the "
            f"function once on the whole (broadcast) arrays, which gives NumPy's per-element "
            f"results only when all it does is elementwise, and it does {what} "
            f"({n.loc or 'no location'}). Write the function with ufuncs (np.where for "
            "branches) and call it on the arrays")


def _finish(r: Any, dtype: np.dtype, shape: tuple[int, ...]) -> Any:
    """One result as NumPy's vectorize returns it: an array of `dtype` and `shape`."""
    if not isinstance(r, T.Tracer):  # a value that does not depend on traced arguments
        return np.array(np.broadcast_to(np.asarray(r, dtype), shape))
    if r.shape != shape:
        r = broadcast_to(r, shape)
    r = r.astype(dtype)  # (a copy)
    return T.Tracer(r.node) if r.scalar or r.weak is not None else r


def _call_with(vec: Any, args: tuple, kwargs: dict, spots: list[int], names: list[str],
               values: list[Any]) -> Any:
    new_args, new_kwargs = list(args), dict(kwargs)
    for i, v in zip(spots, values):
        new_args[i] = v
    for k, v in zip(names, values[len(spots):]):
        new_kwargs[k] = v
    try:
        return vec.pyfunc(*new_args, **new_kwargs)
    except ValueError as e:
        # `if a == b:` on a whole array the trace knows (NumPy would pass one element):
        # an artefact of running the function once, so fusejit cannot follow it
        if "truth value of an array" not in str(e):
            raise
        raise UnsupportedError(
            f"np.vectorize({_name(vec)}) with traced arguments{T.where_msg()}: fusejit runs the "
            "function once on the whole (broadcast) arrays, and it branches on their values "
            f"({e}). Write the function with ufuncs (np.where for branches) and call it on "
            "the arrays") from e


def call(vec: Any, args: tuple, kwargs: dict) -> Any:
    """`vec(*args, **kwargs)` for an np.vectorize `vec` given traced arguments."""
    if vec.signature is not None:
        raise UnsupportedError(
            f"np.vectorize with signature= is not supported by fusejit{T.where_msg()}: its "
            "function works on core dimensions one call at a time; write it on whole arrays")
    excluded = vec.excluded
    spots = [i for i in range(len(args)) if i not in excluded]
    names = [k for k in kwargs if k not in excluded]
    pairs = [_argument(vec, args[i]) for i in spots] + [_argument(vec, kwargs[k])
                                                        for k in names]
    shape = T.broadcast(*(np.shape(p[0]) for p in pairs))
    if 0 in shape and not vec.otypes:
        raise ValueError("cannot call `vectorize` on size 0 inputs unless `otypes` is set")
    strong, python = ([broadcast_to(v, shape) if isinstance(v, T.Tracer) and v.shape != shape
                       else v for v in side] for side in zip(*pairs))
    if vec.otypes:
        dtypes = [np.dtype(c) for c in vec.otypes]
    else:  # the first element's call, on NumPy scalars: here on the arrays as they are
        first = _call_with(vec, args, kwargs, spots, names, strong)
        dtypes = [np.asarray(r).dtype if not isinstance(r, T.Tracer) else r.dtype
                  for r in (first if isinstance(first, tuple) else (first,))]
    ctx = current()
    mark = len(ctx.created)
    out = _call_with(vec, args, kwargs, spots, names, python)
    _check_elementwise(vec, ctx.created[mark:])
    results = out if isinstance(out, tuple) else (out,)
    if len(results) != len(dtypes):
        raise ValueError(f"Invalid otype specified: {''.join(d.char for d in dtypes)}")
    done = tuple(_finish(r, d, shape) for r, d in zip(results, dtypes))
    return done if isinstance(out, tuple) else done[0]
