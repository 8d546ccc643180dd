"""Arrays the traced function makes itself with NumPy (`np.eye(k)`, `np.array([1., 2.])`,
`np.arange(n)`), indexed by traced values.

Such an array is a real NumPy array (its value is known while tracing), and indexing it with a
traced index, `np.eye(k)[labels]` or `table[codes]`, is a C call of ndarray's own indexing,
which asks the index for a real array: a traced value cannot give one. So the NumPy functions
the user's code calls (`np.<name>` through frontend/captures.py's numpy proxy, and NumPy
functions bound to names, `from numpy import eye`) return their arrays as `MadeArray`: an
ndarray subclass whose indexing with a traced index (or a selection of positions) is the
traced gather of the array as a constant. Everything else is ndarray's own: ufuncs and methods
keep the subclass, NumPy's conversions in library code (np.asarray) give the plain array
back, and the trace stores its constants as plain arrays (frontend/context.py const_node).

Writing a traced value into such an array (`a = np.zeros_like(c); a[i] = x`), or writing at a
traced index, would need the user's variable to become traced: refused, naming the line and
the allocators that do trace (np.zeros, np.empty, np.full, np.ones)."""

from __future__ import annotations

import functools
import types
from typing import Any

import numpy as np

from ..errors import UnsupportedError
from .context import const_node, where_msg


def _traced(key: Any) -> bool:
    """Whether an index holds a traced value (at any depth of tuples and lists)."""
    cls = type(key)
    if getattr(cls, "__fusejit_tracer__", False) or getattr(cls, "fusejit_selection", False):
        return True
    if isinstance(key, (tuple, list)):
        return any(_traced(k) for k in key)
    return False


class MadeArray(np.ndarray):
    """A NumPy array made inside the traced function (the module docstring)."""

    def __getitem__(self, key: Any) -> Any:
        if _traced(key):
            from .tracer import Tracer

            return Tracer(const_node(self.view(np.ndarray)))[key]
        return super().__getitem__(key)

    def __setitem__(self, key: Any, value: Any) -> None:
        if _traced(key) or _traced(value):
            raise UnsupportedError(
                f"writing {'at a traced index' if _traced(key) else 'a traced value'} into an "
                f"array that NumPy made while tracing (a real array, not a traced one){where_msg()}"
                " is not supported: make the array with np.zeros, np.ones, np.empty or np.full "
                "(which give a traced array in a compiled function), or build it with "
                "np.where / np.stack from traced values")
        super().__setitem__(key, value)

    def __array_wrap__(self, arr: np.ndarray, context: Any = None,
                       return_scalar: bool = False) -> Any:
        if return_scalar:  # a reduction or a 0-d ufunc result: NumPy's scalar, as for ndarray
            return arr.view(np.ndarray)[()]
        return super().__array_wrap__(arr, context, return_scalar)

    def __repr__(self) -> str:
        return repr(self.view(np.ndarray))

    def __str__(self) -> str:
        return str(self.view(np.ndarray))

    def __reduce__(self) -> Any:  # pickles (and deep-copies) as the plain array
        return self.view(np.ndarray).__reduce__()


def made(value: Any) -> Any:
    """`value` with its plain NumPy arrays (also those of a returned tuple or list) as
    MadeArray; 0-d arrays, which no index array can index, stay NumPy's."""
    if type(value) is np.ndarray and value.ndim:
        return value.view(MadeArray)
    if type(value) in (tuple, list) and any(type(v) is np.ndarray and v.ndim for v in value):
        return type(value)(made(v) for v in value)
    return value


def _is_numpy_function(f: Any) -> bool:
    """NumPy's functions (not its classes, ufuncs, modules, or methods of an object such as
    np.random's legacy draws, bound to the global RandomState)."""
    if isinstance(f, (type, np.ufunc, types.ModuleType)) or not callable(f):
        return False
    owner = getattr(f, "__self__", None)
    if owner is not None and not isinstance(owner, types.ModuleType):
        return False
    module = getattr(f, "__module__", None) or ""
    return (module == "numpy" or module.startswith("numpy.")) and not module.startswith(
        "numpy.random")


@functools.lru_cache(maxsize=2048)
def _wrapper(f: Any) -> Any:
    @functools.wraps(f)
    def making(*args: Any, **kwargs: Any) -> Any:
        return made(f(*args, **kwargs))

    making.__fusejit_made__ = f  # type: ignore[attr-defined]
    return making


def making(f: Any) -> Any:
    """The version of NumPy function `f` that the user's traced code calls: its arrays are
    MadeArray. Anything else (ufuncs, classes, modules, other callables) is `f` itself."""
    if getattr(f, "__fusejit_made__", None) is not None or not _is_numpy_function(f):
        return f
    try:
        return _wrapper(f)
    except TypeError:  # an unhashable callable
        return f
