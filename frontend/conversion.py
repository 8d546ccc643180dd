"""np.array, np.asarray, np.asanyarray, np.ascontiguousarray, np.asfortranarray and
np.asarray_chkfinite of traced values (a Tracer, or lists/tuples holding Tracers), with
NumPy's semantics; frontend/numpy_patch.py routes the calls here while a trace runs.

NumPy answers first: each call is made on a stand-in for the traced value (an empty array
of its dtype and ndim, or a NumPy/Python scalar of its type), so dtype=, order=, ndmin=,
copy=, subok=, device= and like= get NumPy's own checks, errors and warnings, and the stand-in's
result gives the dtype, the number of dimensions and whether NumPy copies or returns the array
itself (or a view with leading axes, ndmin=). Lists are discovered the same way: a regular
nesting takes its dtype from a flat list of one stand-in per element; a ragged one is given,
as zero-strided stand-ins, to NumPy, which raises its ValueError.

What "needs a copy" means for a traced value (copy=False raises NumPy's ValueError then):
a change of dtype, a NumPy or Python scalar becoming an array, a list, and an order= ('C',
'F', np.ascontiguousarray, np.asfortranarray) that the array is not in. Layout is known for
a size <= 1 array (both orders) and for an argument of the compiled function as passed
(the call signature includes its layout); any other array's layout depends on NumPy's rules
for the operations that made it, which fusejit does not track: there the result shares the
value, and writing through it, or reading it after the array was written, is refused
(NumPy would differ between the copy and the shared array), and copy=False is refused.
"""

from __future__ import annotations

import contextlib
import inspect
import threading
from collections.abc import Iterator
from typing import Any

import numpy as np

from ..errors import UnsupportedError
from . import ops as O
from . import tracer as T
from . import vectorize
from .numpy_patch import NAMES, ORIGINALS, WRAPPERS, patched
from .views import basic_index

_SCALARS = (bool, int, float, complex, str, bytes, np.generic, type(None))
_local = threading.local()  # .layouts: a stack of {id(argument Tracer): (Tracer, orders)}
_SIGNATURES: dict[Any, inspect.Signature] = {}


def _copy_message() -> str:
    try:
        np.asarray(np.zeros(1, np.int8), dtype=np.int16, copy=False)
    except ValueError as e:
        return str(e)
    return "Unable to avoid copy while creating an array as requested."


COPY_MESSAGE = _copy_message()


@contextlib.contextmanager
def converting(pairs: list[tuple[T.Tracer, Any]]) -> Iterator[None]:
    """Around one trace: NumPy's constructors accept traced values (frontend/numpy_patch.py),
    knowing the layout of each argument (its Tracer, the array passed)."""
    table = {id(t): (t, frozenset(o for o, flag in (("C", a.flags.c_contiguous),
                                                     ("F", a.flags.f_contiguous)) if flag))
             for t, a in pairs if isinstance(a, np.ndarray)}
    stack = getattr(_local, "layouts", None)
    if stack is None:
        stack = _local.layouts = []
    stack.append(table)
    try:
        with patched():
            yield
    finally:
        stack.pop()


def _orders(t: T.Tracer) -> frozenset[str] | None:
    """The orders ('C', 'F') whose layout `t` has in NumPy; None where fusejit cannot know."""
    if t.size <= 1:
        return frozenset("CF")
    stack = getattr(_local, "layouts", None)
    if stack and t.parent is None:
        entry = stack[-1].get(id(t))
        if entry is not None and entry[0] is t:
            return entry[1]
    return None


def refuse_nditer() -> None:
    """np.nditer over a traced operand (frontend/numpy_patch.py): refused by name."""
    raise T.UnsupportedError(
        f"np.nditer over a traced array is not supported by fusejit{T.where_msg()}: it hands "
        "Python the values one at a time, which a compiled function does not have. Write the "
        "loop as array operations, or iterate over x.ravel() (each item a traced 0-d value; "
        "the loop is unrolled when tracing) or np.ndindex(x.shape)")


def vectorize_call(vec: Any, args: tuple, kwargs: dict) -> Any:
    """np.vectorize's call with traced arguments (frontend/numpy_patch.py): see
    frontend/vectorize.py."""
    return vectorize.call(vec, args, kwargs)


def holds_tracer(x: Any) -> bool:
    """Whether `x` is a Tracer or a list/tuple holding one (at any depth)."""
    if isinstance(x, T.Tracer):
        return True
    return isinstance(x, (list, tuple)) and any(holds_tracer(e) for e in x)


def _stand_in(t: T.Tracer) -> Any:
    """What NumPy sees in place of `t`: an empty array of its dtype and ndim (0-d: one
    element), a NumPy scalar, or a Python scalar of the argument's type."""
    if t.weak is not None:
        return t.weak(0)
    if t.scalar:
        return t.dtype.type(0)
    if t.ndim == 0:
        return np.zeros((), t.dtype)
    return np.empty((0,) + t.shape[1:], t.dtype)


def _derived(out: Any, base: Any) -> bool:
    b = getattr(out, "base", None)
    while b is not None:
        if b is base:
            return True
        b = getattr(b, "base", None)
    return False


def _requested_order(name: str, order: Any) -> str | None:
    if name == "ascontiguousarray":
        return "C"
    if name == "asfortranarray":
        return "F"
    return order.upper() if isinstance(order, str) and order.upper() in ("C", "F") else None


def _ambiguous(what: str) -> str:
    return (f"{what}{{where}} is not supported: this array is the result of "
            "np.asarray/np.array with order= (or np.ascontiguousarray/np.asfortranarray) of "
            "a computed array, which NumPy copies or not depending on its memory layout, "
            "and fusejit does not know that layout. Use np.array(x) (always a copy) or "
            "np.asarray(x) (never a copy) when the array is written")


def _guarded(t: T.Tracer) -> T.Tracer:
    """`t`'s value, refusing what would differ between NumPy's copy and `t` itself."""
    out = T.Tracer(t.node)

    def reread(base: Any) -> Any:
        raise UnsupportedError(_ambiguous("reading it after the source array was written")
                               .format(where=T.where_msg()))

    def write(old: Any, new: Any) -> Any:  # (never reached: `readonly` refuses first)
        raise UnsupportedError(_ambiguous("writing into it").format(where=T.where_msg()))

    out.parent, out.vargs, out.seen = t, (reread, write), t.version
    out.readonly = _ambiguous("writing into it")
    return out


def _lead(t: T.Tracer, ndim: int) -> T.Tracer:
    """`t` with leading length-1 axes up to `ndim` (a view, as NumPy's ndmin)."""
    k = ndim - t.ndim
    return basic_index(t, (None,) * k + (Ellipsis,)) if k > 0 else t


def _node(t: T.Tracer, dtype: np.dtype) -> Any:
    """`t` converted to `dtype` as NumPy converts it. A Python int is int64 to NumPy only
    while an int64 holds it (uint64 or an error beyond): the compiled function accepts only
    those, and jit compiles a larger one as the literal (jit.JitFunction._huge_ints)."""
    if t.weak is int:
        T.to_node(t, np.dtype(np.int64))  # (records the int64 range the call checks)
    return T.to_node(t, dtype)


def _fresh(node: Any, t: T.Tracer) -> T.Tracer:
    """A new array holding `node` (a copy node when `node` is `t`'s own value)."""
    if node is t.node or node.op == "input":
        node = T.make_node("copy", [node], node.shape, node.dtype)
    return T.Tracer(node)


def _from_tracer(name: str, t: T.Tracer, call: Any, params: dict) -> T.Tracer:
    dummy = _stand_in(t)
    out = call(dummy)
    dtype = O.check_dtype(out.dtype, f"np.{name}(){T.where_msg()}")
    kind = "same" if out is dummy else "view" if _derived(out, dummy) else "copy"
    order = _requested_order(name, params.get("order"))
    guard = False
    if kind != "copy" and order is not None and t.size > 1:
        orders = _orders(t)
        copy = params.get("copy")
        if orders is None:
            if copy is False:
                raise UnsupportedError(
                    f"np.{name}(copy=False, order={order!r}) of a computed array is not "
                    f"supported by fusejit{T.where_msg()}: NumPy raises or not depending on "
                    "its memory layout, which fusejit does not track")
            guard = True
        elif order not in orders:
            if copy is False:
                raise ValueError(COPY_MESSAGE)
            kind = "copy"
    if kind == "copy":
        res = _fresh(_node(t, dtype), t)
    else:
        res = _guarded(t) if guard else t
    return _lead(res, out.ndim)


def _shape(x: Any) -> tuple[int, ...] | None:
    """The shape NumPy discovers for a nesting of lists/tuples, Tracers, arrays and scalars;
    None when it is ragged or holds another kind of object (NumPy decides then)."""
    if isinstance(x, (T.Tracer, np.ndarray)):
        return tuple(x.shape)
    if isinstance(x, _SCALARS):
        return ()
    if not isinstance(x, (list, tuple)):
        return None
    shapes = {_shape(e) for e in x}
    if None in shapes or len(shapes) > 1:
        return None
    return (len(x),) + (shapes.pop() if shapes else ())


def _leaves(x: Any, into: list) -> list:
    if isinstance(x, (list, tuple)):
        for e in x:
            _leaves(e, into)
    else:
        into.append(x)
    return into


def _full_stand_in(x: Any) -> Any:
    """`x` with each Tracer replaced by a zero-strided array of its shape and dtype."""
    if isinstance(x, T.Tracer):
        return _point(x) if x.scalar or x.weak is not None else np.broadcast_to(
            np.zeros((), x.dtype), x.shape)
    if isinstance(x, (list, tuple)):
        return [_full_stand_in(e) for e in x]
    return x


def _build(x: Any, dtype: np.dtype) -> T.Tracer:
    """The traced array for a regular nesting `x` (NumPy's conversion of each element)."""
    if isinstance(x, T.Tracer):
        return T.Tracer(_node(x, dtype))
    if not holds_tracer(x):
        return T.Tracer(T.const_node(ORIGINALS["array"](x, dtype=dtype)))
    parts = [_build(e, dtype) for e in x]
    return np.stack(parts)


def _from_sequence(name: str, seq: Any, call: Any, params: dict) -> T.Tracer:
    shape = _shape(seq)
    ndmax = params.get("ndmax") or 0
    if shape is None or (ndmax and len(shape) > ndmax):
        out = call(_full_stand_in(seq))  # NumPy's error (ragged), or an object array
        O.check_dtype(out.dtype, f"np.{name}() of this list{T.where_msg()}")
        raise UnsupportedError(f"np.{name}() of this list is not supported by fusejit"
                               f"{T.where_msg()}")
    # one 0-d stand-in per element: the dtype NumPy discovers depends on the elements' dtypes
    # (and a Python scalar's value), not on their shapes
    leaves = [_point(e) for e in _leaves(seq, [])]
    out = call(leaves)  # NumPy's dtype for these elements; its errors for the keywords
    dtype = O.check_dtype(out.dtype, f"np.{name}() of this list{T.where_msg()}")
    res = _build(seq, dtype)
    if res.parent is not None or res.node.op in ("input", "view"):
        res = T.Tracer(T.make_node("copy", [res.node], res.shape, res.dtype))
    return _lead(res, max(len(shape), params.get("ndmin") or 0))


def _point(e: Any) -> Any:
    if isinstance(e, T.Tracer):
        z = _stand_in(e)
        return np.zeros((), z.dtype) if isinstance(z, np.ndarray) else z
    if isinstance(e, np.ndarray):
        return np.zeros((), e.dtype)
    return e


def convert(name: str, original: Any, args: tuple, kwargs: dict) -> Any:
    """np.<name>(*args, **kwargs) where the array argument holds a Tracer (or, from like=,
    where `like` is one); `original` is NumPy's function."""
    params = _bind(original, args, kwargs)
    if name == "full":
        return _full(original, params)
    first = "object" if "object" in params else "a"
    obj = params[first]
    rest = dict(kwargs)
    rest.pop(first, None)
    rest_args = args[1:]
    if isinstance(rest.get("like"), T.Tracer):
        rest["like"] = None  # (any array-like: NumPy only checks that it has the protocol)

    def call(stand_in: Any) -> Any:
        return original(stand_in, *rest_args, **rest)

    if name == "asarray_chkfinite":
        return _chkfinite(obj, call, params)
    if not holds_tracer(obj):  # np.<name>(values, like=<traced>): NumPy's array, traced
        return T.Tracer(T.const_node(call(obj)))
    if isinstance(obj, T.Tracer):
        return _from_tracer(name, obj, call, params)
    return _from_sequence(name, obj, call, params)


def tracing_here() -> bool:
    """Whether a trace runs in this thread (the allocators' question)."""
    return T.tracing()


def _zeros_signature(shape: Any, dtype: Any = float, order: str = "C", *, device: Any = None,
                     like: Any = None) -> None:
    """The parameters of np.zeros, np.ones and np.empty (NumPy's are C functions)."""


_ZEROS_SIGNATURE = inspect.signature(_zeros_signature)
_FILLS = {"zeros": 0, "ones": 1, "empty": 0}  # (np.empty's values are any: zeros here)


def allocate(name: str, original: Any, args: tuple, kwargs: dict) -> T.Tracer | None:
    """np.zeros/ones/empty/full(...) as a traced array of NumPy's shape and dtype (NumPy's
    errors for bad arguments), None for like= and for dtypes fusejit has not (NumPy's own
    array then)."""
    if name == "full":
        params = _bind(original, args, kwargs)
    else:
        try:
            bound = _ZEROS_SIGNATURE.bind(*args, **kwargs)
        except TypeError:
            return None  # (NumPy's own call gives its TypeError)
        bound.apply_defaults()
        params = dict(bound.arguments)
        dtype = np.dtype(float if params["dtype"] is None else params["dtype"])  # (NumPy's)
        params["fill_value"], params["dtype"] = np.asarray(_FILLS[name], dtype), dtype
    if params.get("like") is not None:
        return None
    try:
        return _full(ORIGINALS["full"], params)
    except UnsupportedError:
        return None


def _full(original: Any, params: dict) -> T.Tracer:
    """np.full(shape, fill_value, dtype, order) with a traced fill: NumPy's dtype (the fill's
    own unless given) and its errors for the shape, dtype and order (from np.empty, which
    touches no memory) and for a fill that does not broadcast to the shape (ValueError).
    order='F' gives the values in C order, as every compiled result."""
    fill = params["fill_value"]
    value = convert("asarray", ORIGINALS["asarray"], (fill,), {})
    dtype = value.dtype if params["dtype"] is None else np.dtype(params["dtype"])
    rest = {k: v for k, v in params.items() if k not in ("fill_value", "dtype", "like")}
    empty = np.empty(rest.pop("shape"), dtype, **rest)
    O.check_dtype(empty.dtype, f"np.full(){T.where_msg()}")
    return np.broadcast_to(value.astype(dtype), empty.shape).copy()  # (NumPy's ValueError)


def _bind(original: Any, args: tuple, kwargs: dict) -> dict[str, Any]:
    """The arguments by parameter name (defaults included); NumPy's TypeError when they
    do not fit its signature."""
    sig = _SIGNATURES.get(original)
    if sig is None:
        sig = _SIGNATURES[original] = inspect.signature(original)
    try:
        bound = sig.bind(*args, **kwargs)
    except TypeError:
        original(*((0,) + args[1:] if args else ()),
                 **{k: v for k, v in kwargs.items() if k not in ("a", "object")})
        raise
    bound.apply_defaults()
    return dict(bound.arguments)


def _chkfinite(obj: Any, call: Any, params: dict) -> Any:
    """np.asarray_chkfinite: np.asarray, whose float or complex result NumPy checks for inf
    and NaN: the compiled function raises NumPy's ValueError when the program runs on one
    (a `check_finite` op, fused with the consumers of the result). Where NumPy's result is
    the array itself (no conversion), fusejit's is the checked value: writing into it, or
    reading it after the array was written, is refused (the write would not reach the
    array), and the function returns a new array where NumPy returns the argument."""
    if isinstance(obj, T.Tracer):
        res = _from_tracer("asarray_chkfinite", obj, call, params)
    else:
        res = _from_sequence("asarray_chkfinite", obj, call, params)
    if res.dtype.kind not in "fc":
        return res
    bad = np.logical_not(np.isfinite(res))
    flag = T.Tracer(T.make_node("check_finite", [bad.node], res.shape, np.dtype(bool)))
    checked = np.where(flag, np.zeros((), res.dtype), res)
    if res is obj or res.parent is not None:  # NumPy's result is the array (or a view)
        return _checked_alias(res, checked)
    return checked


def _checked_alias(t: T.Tracer, checked: T.Tracer) -> T.Tracer:
    """`checked` (t's value through the finiteness check) standing for `t` itself, as
    NumPy's result is: writes into it and reads after `t` was written are refused."""
    what = ("np.asarray_chkfinite of a traced array returns the array itself in NumPy; "
            "fusejit's result is the checked value, so {what} is not supported{where}: use "
            "x = np.asarray_chkfinite(x) before writing x, or np.array(x) to copy")

    def reread(base: Any) -> Any:
        raise UnsupportedError(what.format(what="reading it after the array was written",
                                           where=T.where_msg()))

    def write(old: Any, new: Any) -> Any:  # (never reached: `readonly` refuses first)
        raise UnsupportedError(what.format(what="writing into it", where=T.where_msg()))

    checked.parent, checked.vargs, checked.seen = t, (reread, write), t.version
    checked.readonly = what.format(what="writing into it", where="{where}")
    return checked


def _like(name: str) -> Any:
    def handler(*args: Any, **kwargs: Any) -> Any:
        return convert(name, ORIGINALS[name], args, kwargs)

    handler.__name__ = name
    handler.__doc__ = f"np.{name}(..., like=<traced array>): a traced array, as NumPy hands over."
    return handler


# np.asarray(x, like=t) and friends dispatch through `__array_function__`, naming the
# function that numpy's module holds then: NumPy's own, or frontend/numpy_patch.py's wrapper.
HANDLERS = {f[n]: _like(n) for n in NAMES if n != "asarray_chkfinite"
            for f in (ORIGINALS, WRAPPERS)}
