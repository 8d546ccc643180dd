"""Values a traced function reaches *through* a global: `mod.G`, `cfg.w`, `Config.lr`,
`params["w"]`, `self.w` of a jitted bound method.

NumPy reads `cfg.w` at every call, so fusejit must too (frontend.captures reads plain global
variables). While tracing, such an object is seen through a `Reached` proxy: each attribute read
goes back to frontend.captures with its *path* from the global variable (("attr", "w"), ...),
which makes an array an implicit input and a number a guarded value, both read again along the
same path at every call (frontend.pyscalar.Read). A dict, list or tuple holding numbers or
arrays is replaced by a copy whose elements are read the same way, with a guard on its keys or
length. Methods of a proxied object run (shadowed) with the proxy as `self`, so `self.w` inside
them is followed too.

`proxyable` says which objects get a proxy: modules, classes and instances defined in the
user's code, and SimpleNamespace; not library objects, enums or array-likes.
"""

from __future__ import annotations

import copy
import enum
import sys
import types
from collections.abc import Callable
from typing import Any

import numpy as np

Path = tuple[tuple[str, Any], ...]
# (value, path) -> what the trace sees for it; (function) -> its shadow
At = Callable[[Any, Path], Any]
Shadow = Callable[[Any], Any]

_LIBRARY = ("site-packages", "dist-packages", "<frozen")
_LIBRARY_TOP = ("numpy", "scipy", "fusejit", (__package__ or "fusejit").split(".")[0])
_ARRAY_LIKE = ("__array__", "__array_ufunc__", "__array_function__", "__array_interface__",
               "__cuda_array_interface__", "__dlpack__")
_STDLIB = sys.base_prefix + "/lib/"
MAX_ITEMS = 64  # containers larger than this are not copied (frontend.captures warns)


def _user_module(module: Any) -> bool:
    if not isinstance(module, types.ModuleType):
        return False
    name = getattr(module, "__name__", "") or ""
    if name == "__main__":
        return True
    file = getattr(module, "__file__", None)
    if not file or name.split(".")[0] in _LIBRARY_TOP:
        return False
    return not (any(p in file for p in _LIBRARY) or file.startswith(_STDLIB))


def _user_type(t: type) -> bool:
    return _user_module(sys.modules.get(getattr(t, "__module__", "") or ""))


def _numeric(v: Any) -> bool:
    return type(v) is np.ndarray or isinstance(v, (int, float, complex, np.generic))


def proxyable(v: Any) -> bool:
    """Whether the trace sees `v` through a Reached proxy."""
    if isinstance(v, types.SimpleNamespace):
        return True
    if isinstance(v, types.ModuleType):
        return _user_module(v)
    if isinstance(v, (enum.Enum, dict, list, tuple, set)) or (
            isinstance(v, type) and issubclass(v, enum.Enum)):
        return False  # containers are copied (copyable) or warned about
    t = v if isinstance(v, type) else type(v)
    if not _user_type(t) or any(hasattr(t, a) for a in _ARRAY_LIKE):
        return False
    if isinstance(v, type):  # a class: only one holding numbers or arrays of its own
        return any(_numeric(x) for k, x in vars(v).items() if not k.startswith("__"))
    return hasattr(v, "__dict__") or hasattr(t, "__slots__")


def copyable(v: Any) -> bool:
    """A dict (or OrderedDict, defaultdict...) holding numbers or arrays, or a list, tuple or
    namedtuple holding floats or arrays (ints alone are more often a log or counter the
    function appends to), small enough to copy."""
    if isinstance(v, dict):
        items: Any = v.values()
    elif isinstance(v, (list, tuple)):
        items = v
    else:
        return False
    if not (type(v) in (list, tuple) or isinstance(v, dict) or _namedtuple(v)):
        return False
    if len(v) > MAX_ITEMS:
        return False
    items = list(items)
    if isinstance(v, dict):
        return any(_numeric(e) or proxyable(e) or isinstance(e, (dict, list, tuple))
                   for e in items)
    return any(type(e) is np.ndarray or isinstance(e, (float, np.floating)) for e in items)


def copy_container(v: Any, path: Path, at: At, guard: Callable[[Any, Path], None]) -> Any:
    """A copy of dict/list/tuple `v` whose elements are what the trace sees for them (read
    along `path` + item at every call), with a guard on its keys or length."""
    if isinstance(v, dict):
        guard(tuple(v), path + (("keys", None),))
        try:
            out = copy.copy(v)  # the same kind of dict (an OrderedDict's order, a default)
        except Exception:  # noqa: BLE001 - a dict subclass that cannot be copied: a dict
            out = {}
        for k, e in v.items():
            dict.__setitem__(out, k, at(e, path + (("item", k),)))
        return out
    guard(len(v), path + (("len", None),))
    items = [at(e, path + (("item", i),)) for i, e in enumerate(v)]
    if isinstance(v, list):
        return items
    return type(v)._make(items) if _namedtuple(v) else tuple(items)


def _namedtuple(v: Any) -> bool:
    return isinstance(v, tuple) and hasattr(type(v), "_make") and hasattr(type(v), "_fields")


def _dunder(name: str) -> bool:
    return name.startswith("__") and name.endswith("__") and name != "__dict__"


class Reached:
    """An object reached from a global while tracing: attribute and item reads of it are
    followed (see the module docstring); anything else goes to the object itself."""

    __slots__ = ("_fj_obj", "_fj_at", "_fj_shadow", "_fj_path")

    def __init__(self, obj: Any, at: At, shadow: Shadow, path: Path) -> None:
        object.__setattr__(self, "_fj_obj", obj)
        object.__setattr__(self, "_fj_at", at)
        object.__setattr__(self, "_fj_shadow", shadow)
        object.__setattr__(self, "_fj_path", path)

    def _fj_bind(self, v: Any) -> Any:
        """A method bound to the real object runs with the proxy as `self`."""
        if isinstance(v, types.MethodType) and v.__self__ is self._fj_obj:
            return types.MethodType(self._fj_shadow(v.__func__), self)
        return None

    def __getattr__(self, name: str) -> Any:
        obj = self._fj_obj
        v = getattr(obj, name)
        if _dunder(name):
            return v
        bound = self._fj_bind(v)
        if bound is not None:
            return bound
        return self._fj_at(v, self._fj_path + (("attr", name),))

    def __getitem__(self, key: Any) -> Any:
        v = self._fj_obj[key]
        try:
            hash(key)
        except TypeError:
            return v
        return self._fj_at(v, self._fj_path + (("item", key),))

    def __setattr__(self, name: str, value: Any) -> None:
        setattr(self._fj_obj, name, value)

    def __delattr__(self, name: str) -> None:
        delattr(self._fj_obj, name)

    def __setitem__(self, key: Any, value: Any) -> None:
        self._fj_obj[key] = value

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        obj = self._fj_obj
        call = next((vars(k)["__call__"] for k in type(obj).__mro__ if "__call__" in vars(k)),
                    None)
        if isinstance(obj, type) or not isinstance(call, types.FunctionType):
            return obj(*args, **kwargs)
        return self._fj_shadow(call)(self, *args, **kwargs)

    @property  # type: ignore[misc]
    def __class__(self) -> type:  # isinstance(proxy, Config) is True
        return type(self._fj_obj)

    def __instancecheck__(self, other: Any) -> bool:  # isinstance(x, proxy of a class)
        return isinstance(other, self._fj_obj)

    def __subclasscheck__(self, other: Any) -> bool:
        return issubclass(other, self._fj_obj)

    def __repr__(self) -> str:
        return repr(self._fj_obj)

    def __str__(self) -> str:
        return str(self._fj_obj)

    def __eq__(self, other: Any) -> bool:
        return bool(self._fj_obj == (other._fj_obj if type(other) is Reached else other))

    def __hash__(self) -> int:
        return hash(self._fj_obj)

    def __bool__(self) -> bool:
        return bool(self._fj_obj)

    def __dir__(self) -> list[str]:
        return dir(self._fj_obj)


# The other special methods Python looks up on the type: each goes to the object itself (what
# they return is not followed: values reached through `for w in obj`, `obj + 1` or `len(obj)`
# of a user class are read once per trace).
_FORWARDED = (
    "len", "iter", "reversed", "contains", "delitem", "enter", "exit", "int", "float",
    "complex", "index", "round", "lt", "le", "gt", "ge", "ne", "neg", "pos", "abs", "invert",
    *(f"{p}{op}" for op in ("add", "sub", "mul", "truediv", "floordiv", "mod", "pow",
                            "matmul", "and", "or", "xor", "lshift", "rshift")
      for p in ("", "r", "i")),
)


def _forward(name: str) -> Callable[..., Any]:
    def method(self: Reached, *args: Any) -> Any:
        return getattr(self._fj_obj, name)(*args)

    method.__name__ = name
    return method


for _op in _FORWARDED:
    setattr(Reached, f"__{_op}__", _forward(f"__{_op}__"))

