"""The one way NumPy reaches the frontend: which handler answers a NumPy function, a ufunc (or
one of its methods) and an ndarray method or operator called on a traced array.

A handler module declares, at module level, any of these tables, and is listed in MODULES:

- `HANDLERS`: {NumPy function: handler}, reached through `__array_function__` (`np.where`);
- `UFUNCS`: {ufunc: handler} for a ufunc whose call is not plain elementwise (`np.matmul`);
- `UFUNC_METHODS`: {"reduce" | "at" | "accumulate" ...: handler(ufunc, *inputs, **kwargs)};
- `METHODS`: {attribute name: function or property} that Tracer gets (`x + y`, `x.mT`);
- `REFUSED`: {NumPy function: why fusejit refuses it}, shown in the error.

`ARRAY_METHODS` below names the ndarray methods that are their NumPy function with the array
first (`x.sum(axis=0)` is `np.sum(x, axis=0)`), so a method and its function cannot disagree.
`install()` builds the tables once, at `fusejit.frontend` import; a function claimed by two
modules, or a method that would replace one of Tracer's own, is an error there, not a silent
override. Nothing else patches Tracer or merges handler tables.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable
from typing import Any

import numpy as np

from . import tracer as T
from .numpy_patch import retry_lists

# The frontend modules that declare handler tables (frontend/<name>.py).
MODULES: tuple[str, ...] = (
    "numpy_api", "composite", "concat", "reductions", "linalg", "lapack",
    "gridops", "realparts", "numpy_lib", "numpy_more", "rearrange", "scans", "scatter",
    "numpy_tail", "spaces", "sorting", "order_stats", "array_api", "operators", "complex_lib",
    "everyday", "conversion", "covariance", "fft", "masked_calls",
    "masked_index", "masked_unique", "histdd", "linalg_more", "ravel_index", "bits",
)

# ndarray methods that are the NumPy function of the same meaning with the array first.
ARRAY_METHODS: dict[str, Callable[..., Any]] = {
    "ravel": np.ravel, "squeeze": np.squeeze, "swapaxes": np.swapaxes, "repeat": np.repeat,
    "cumsum": np.cumsum, "cumprod": np.cumprod, "take": np.take,
    "round": np.round, "sum": np.sum, "prod": np.prod, "max": np.max, "min": np.min,
    "mean": np.mean, "var": np.var, "std": np.std, "any": np.any, "all": np.all,
    "argmax": np.argmax, "argmin": np.argmin, "dot": np.dot, "diagonal": np.diagonal,
    "trace": np.trace, "nonzero": np.nonzero, "ptp": np.ptp,
}

FUNCTIONS: dict[Any, Callable[..., Any]] = {}
UFUNCS: dict[np.ufunc, Callable[..., Any]] = {}
UFUNC_METHODS: dict[str, Callable[..., Any]] = {}
REFUSED: dict[Any, str] = {}
_OWNER: dict[tuple[str, Any], str] = {}  # (table, key) -> module that registered it
_INSTALLED: list[bool] = []


def _merge(table: str, into: dict, entries: dict, module: str) -> None:
    for key, value in entries.items():
        owner = _OWNER.get((table, key))
        if owner is not None and into[key] is not value:
            name = getattr(key, "__name__", key)
            raise RuntimeError(f"fusejit.frontend: {table} entry {name!r} is registered by both "
                               f"frontend/{owner}.py and frontend/{module}.py")
        _OWNER[(table, key)] = module
        into[key] = value


def _array_method(name: str, func: Callable[..., Any]) -> Callable[..., Any]:
    def method(self: T.Tracer, *args: Any, **kwargs: Any) -> Any:
        return func(self, *args, **kwargs)

    method.__name__ = method.__qualname__ = name
    method.__doc__ = f"ndarray.{name}(...) is np.{func.__name__}(self, ...)."
    return method


def _install_method(name: str, value: Any, module: str) -> None:
    owner = _OWNER.get(("METHODS", name))
    if owner is None and name in vars(T.Tracer):
        raise RuntimeError(f"fusejit.frontend: frontend/{module}.py would replace Tracer.{name}, "
                           "which frontend/tracer.py defines")
    if owner is not None and vars(T.Tracer)[name] is not value:
        raise RuntimeError(f"fusejit.frontend: Tracer.{name} is installed by both "
                           f"frontend/{owner}.py and frontend/{module}.py")
    _OWNER[("METHODS", name)] = module
    setattr(T.Tracer, name, value)


def install() -> None:
    """Build the tables from MODULES and give Tracer its methods (once; idempotent)."""
    if _INSTALLED:
        return
    _INSTALLED.append(True)
    for name in MODULES:
        module = importlib.import_module(f"{__package__}.{name}")
        _merge("HANDLERS", FUNCTIONS, getattr(module, "HANDLERS", {}), name)
        _merge("UFUNCS", UFUNCS, getattr(module, "UFUNCS", {}), name)
        _merge("UFUNC_METHODS", UFUNC_METHODS, getattr(module, "UFUNC_METHODS", {}), name)
        _merge("REFUSED", REFUSED, getattr(module, "REFUSED", {}), name)
        for attr, value in getattr(module, "METHODS", {}).items():
            _install_method(attr, value, name)
    for attr, func in ARRAY_METHODS.items():
        if hasattr(np.ndarray, attr):  # NumPy 2 has no ndarray.ptp: neither does a Tracer
            _install_method(attr, _array_method(attr, func), "registry")
    retry_lists(FUNCTIONS)  # np.sum([a, b]): frontend/numpy_patch.py


def handler_for(func: Any) -> Callable[..., Any] | None:
    """The handler for a NumPy function, or None."""
    return FUNCTIONS.get(func)


def refusal(func: Any) -> str | None:
    """Why fusejit refuses `func`, where a module says so."""
    return REFUSED.get(func)
