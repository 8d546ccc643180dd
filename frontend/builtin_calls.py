"""Python's builtin max() and min() of traced values (frontend/captures.py gives a traced
function these in place of the builtins).

`max(a, b, ...)` returns the first argument unless a later one compares greater (`b > a`),
then that one, and so on: with traced values, `where(b > a, b, a)` folded over the arguments,
which keeps the builtin's answers where np.maximum's differ (a NaN wins only as the first
argument, a later one is passed over; of equal values, -0.0 and 0.0 included, the first
stays). The builtin returns one of its arguments, so its result's type is the winner's: a
traced call is compiled when every argument has one type (the same dtype, all NumPy values
or all Python scalars of one type), and refused by name otherwise (`max(x.max(), 1e-8)` of a
float32 x is a NumPy float32 or a Python float, which NumPy promotes differently), as is a
traced array of more than one element (the builtin's comparison raises NumPy's ValueError) or
a traced iterable (`max(x)` compares its elements one by one).
"""

from __future__ import annotations

import builtins
from typing import Any

import numpy as np

from ..errors import UnsupportedError
from . import tracer as T

_MISSING = object()


def _kind(v: Any) -> Any:
    """What decides the type of a result that is `v`: its dtype and weakness."""
    if isinstance(v, T.Tracer):
        return (v.dtype, v.weak)
    if type(v) in (int, float, complex):
        return (np.dtype({int: np.int64, float: np.float64, complex: np.complex128}[type(v)]),
                type(v))
    if isinstance(v, (np.generic, np.ndarray)):
        return (v.dtype, None)
    return (type(v), "other")


def _show(kind: Any) -> str:
    what, weak = kind
    if weak == "other":
        return getattr(what, "__name__", str(what))
    return f"a Python {weak.__name__}" if isinstance(weak, type) else str(what)


def _fold(name: str, greater: bool, args: tuple[Any, ...], key: Any, default: Any) -> Any:
    builtin = getattr(builtins, name)
    items = args[0] if len(args) == 1 else args
    if len(args) == 1 and isinstance(items, T.Tracer):
        raise UnsupportedError(
            f"builtin {name}() of a traced array is not supported by fusejit{T.where_msg()}: "
            f"it compares the elements one by one (a NaN counts only as the first); use "
            f"np.{name}(x) or np.nan{name}(x)")
    if len(args) == 1 and isinstance(items, (list, tuple)):
        items = tuple(items)
    if not isinstance(items, tuple) or not any(isinstance(v, T.Tracer) for v in items):
        kwargs = {} if key is None else {"key": key}
        if default is not _MISSING:
            kwargs["default"] = default
        return builtin(*args, **kwargs)
    if key is not None:
        raise UnsupportedError(f"builtin {name}(..., key=) of traced values is not supported "
                               f"by fusejit{T.where_msg()}")
    for v in items:
        if np.ndim(v) and np.size(v) != 1:
            raise ValueError("The truth value of an array with more than one element is "
                             "ambiguous. Use a.any() or a.all()")
        if np.ndim(v):
            raise UnsupportedError(f"builtin {name}() of a one-element array of shape "
                                   f"{np.shape(v)} is not supported by fusejit{T.where_msg()}")
    kinds = {_kind(v) for v in items}
    if len(kinds) > 1:
        shown = ", ".join(sorted(_show(k) for k in kinds))
        raise UnsupportedError(
            f"builtin {name}() of values of different types ({shown}) is not supported by "
            f"fusejit{T.where_msg()}: it returns one of them, so the result's type (and how "
            f"NumPy promotes it later) would depend on the values; use np.{name}imum(a, b), "
            f"or give every argument one dtype (np.float32(1e-8))")
    best = items[0]
    for v in items[1:]:
        wins = (v > best) if greater else (v < best)
        best = T.Tracer(np.where(wins, v, best).node, scalar=all(
            getattr(x, "scalar", True) for x in (v, best)), weak=next(iter(kinds))[1])
    return best


def traced_max(*args: Any, key: Any = None, default: Any = _MISSING) -> Any:
    """builtins.max, with traced arguments (see the module)."""
    return _fold("max", True, args, key, default)


def traced_min(*args: Any, key: Any = None, default: Any = _MISSING) -> Any:
    """builtins.min, with traced arguments (see the module)."""
    return _fold("min", False, args, key, default)


BUILTINS = {"max": traced_max, "min": traced_min}
BUILTIN_ORIGINALS = {name: getattr(builtins, name) for name in BUILTINS}
