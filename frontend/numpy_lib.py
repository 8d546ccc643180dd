"""Running NumPy's own Python implementations on Tracers.

Many NumPy functions (np.cov, np.kron, np.tensordot, np.gradient...) are Python code composed
of operations fusejit already traces; their only obstacle is `np.asarray(x)` (and `asanyarray`,
`array`, `np.full(shape, x)`), which asks a traced array for a concrete value. `numpy_code(f)`
gives a handler that runs `f`'s implementation with those few functions replaced by versions
that leave a Tracer a Tracer (a no-op, a copy, a cast or a reshape, as NumPy would do to an
array), so the graph is exactly what NumPy's code computes: same dtypes, shapes and errors,
fused like hand-written code. The replacement is made in a copy of the function's globals
(`_traced_globals`), never in NumPy's modules, so untraced calls are untouched. Helper
functions of the same NumPy module are copied the same way; public NumPy functions called
inside dispatch through `__array_function__` as usual. Nodes created this way say so in their
source location (`explain` shows "(np.cov, NumPy's own code)").
"""

from __future__ import annotations

import sys
import types
import warnings
from collections.abc import Callable
from typing import Any

import numpy as np
from numpy._core._multiarray_umath import _array_converter

from . import tracer as T
from .views import broadcast_to


def _strong(t: T.Tracer) -> T.Tracer:
    """A Python-scalar argument becomes a strong 0-d array, as np.asarray(3.0) is."""
    return T.Tracer(t.node) if t.weak is not None else t


def quietly(call: Callable[..., Any], *args: Any, **kwargs: Any) -> Any:
    """NumPy's or SciPy's own function on stand-ins, for its errors and result type, with its
    warnings and floating-point notices silenced (0/0 in a stand-in is no news)."""
    with warnings.catch_warnings(), np.errstate(all="ignore"):
        warnings.simplefilter("ignore")
        return call(*args, **kwargs)


def value_or_traced(x: Any) -> Any:
    """A traced array as it is, anything else as np.asarray makes it (a wrapper's argument)."""
    return x if isinstance(x, T.Tracer) else np.asarray(x)


def guarded(value: Any, flag: Any, check: str, fill: Any = 0) -> Any:
    """`value`, with the program failing (op `check`, a check_* op of the op table: its
    status and exception) when it runs where the 0-d traced bool `flag` is true; every
    result computed from the returned value waits for the check (`fill` stands in where it
    fails, so nothing divides by a zero or reads out of range first)."""
    bad = T.Tracer(T.make_node(check, [T.to_node(flag, np.dtype(bool))], (), np.dtype(bool)))
    return np.where(bad, np.full((), fill, value.dtype), value)


def holds_tracer(x: Any) -> bool:
    """Whether a list or tuple holds a Tracer (at any depth)."""
    return isinstance(x, (list, tuple)) and any(
        isinstance(e, T.Tracer) or holds_tracer(e) for e in x)


def _from_sequence(a: Any) -> T.Tracer:
    """np.asarray([t0, t1, ...]) of traced values: a stack of equally shaped elements."""
    parts = [_from_sequence(e) if isinstance(e, (list, tuple)) else asarray(e) for e in a]
    shapes = {p.shape for p in parts}
    if len(shapes) > 1:
        raise ValueError("setting an array element with a sequence. The requested array has "
                         "an inhomogeneous shape after 1 dimensions.")
    dtype = np.result_type(*(np.empty(0, p.dtype) for p in parts))
    return np.stack([p.astype(dtype, copy=False) for p in parts])


def asarray(a: Any, dtype: Any = None, order: Any = None, **kwargs: Any) -> Any:
    """np.asarray that returns a Tracer as itself (cast to `dtype` if given)."""
    if isinstance(a, T.Tracer) or holds_tracer(a):
        t = _strong(a) if isinstance(a, T.Tracer) else _from_sequence(a)
        copy = kwargs.get("copy")
        if dtype is not None and np.dtype(dtype) != t.dtype:
            return t.astype(dtype)
        if copy:
            return T.Tracer(T.make_node("copy", [t.node], t.shape, t.dtype))
        return t
    if order is not None:
        kwargs["order"] = order
    return np.asarray(a, dtype, **kwargs)


def asanyarray(a: Any, dtype: Any = None, order: Any = None, **kwargs: Any) -> Any:
    if isinstance(a, T.Tracer) or holds_tracer(a):
        return asarray(a, dtype, order, **kwargs)
    if order is not None:
        kwargs["order"] = order
    return np.asanyarray(a, dtype, **kwargs)


def array(obj: Any, dtype: Any = None, *, copy: Any = True, order: str = "K",
          subok: bool = False, ndmin: int = 0, **kwargs: Any) -> Any:
    """np.array: a copy of a Tracer (unless copy=None/False), with `ndmin` leading axes."""
    if not (isinstance(obj, T.Tracer) or holds_tracer(obj)):
        return np.array(obj, dtype, copy=copy, order=order, subok=subok, ndmin=ndmin,
                        **kwargs)
    t = asarray(obj, dtype, copy=bool(copy))
    if t.ndim < ndmin:
        t = t.reshape((1,) * (ndmin - t.ndim) + t.shape)
    return t


def ascontiguousarray(a: Any, dtype: Any = None, **kwargs: Any) -> Any:
    if isinstance(a, T.Tracer) or holds_tracer(a):
        t = asarray(a, dtype)
        return t.reshape(1) if t.ndim == 0 else t
    return np.ascontiguousarray(a, dtype, **kwargs)


def full(shape: Any, fill_value: Any, dtype: Any = None, order: str = "C",
         **kwargs: Any) -> Any:
    """np.full with a traced fill value: the value broadcast to `shape`, then copied."""
    if not isinstance(fill_value, T.Tracer):
        return np.full(shape, fill_value, dtype, order, **kwargs)
    value = _strong(fill_value)
    dtype = value.dtype if dtype is None else np.dtype(dtype)
    shape = (shape,) if isinstance(shape, int) else tuple(int(s) for s in shape)
    value = T.Tracer(T.cast_node(value.node, dtype))
    out = broadcast_to(value, shape)
    return T.Tracer(T.make_node("copy", [out.node], shape, dtype))


_PYSCALARS = (bool, int, float, complex)


class ArrayConverter:
    """NumPy's `_array_converter(*array_likes)` (np.linspace, np.insert, np.ediff1d... start
    with it) over arguments that hold Tracers: the same `as_arrays`, `result_type`, `wrap` and
    `scalar_input`, leaving Tracers traced."""

    def __init__(self, *objs: Any) -> None:
        self._objs = objs
        self._arrays = tuple(o if isinstance(o, T.Tracer) else
                             o if type(o) in _PYSCALARS else asarray(o) for o in objs)
        self.scalar_input = tuple(
            (o.scalar or o.weak is not None) if isinstance(o, T.Tracer)
            else isinstance(o, (np.generic, *_PYSCALARS)) for o in objs)

    def __len__(self) -> int:
        return len(self._arrays)

    def __getitem__(self, i: int) -> Any:
        return self.as_arrays()[i]

    def as_arrays(self, subok: bool = True, pyscalars: str = "convert_if_no_array") -> tuple:
        if pyscalars == "preserve" or (pyscalars == "convert_if_no_array" and not all(
                type(a) in _PYSCALARS for a in self._arrays)):
            return self._arrays
        return tuple(_strong(a) if isinstance(a, T.Tracer) else
                     np.asarray(a) if type(a) in _PYSCALARS else a for a in self._arrays)

    def result_type(self, extra_dtype: Any = None, ensure_inexact: bool = False) -> np.dtype:
        specs = [T.operand_spec(a) if isinstance(a, T.Tracer) else
                 a if type(a) in _PYSCALARS else a.dtype for a in self._arrays]
        if extra_dtype is not None:
            specs.append(np.dtype(extra_dtype))
        dt = np.result_type(*specs)
        if ensure_inexact and dt.kind not in "fc":
            dt = np.result_type(dt, 0.0)
        return dt

    def wrap(self, arr: Any, /, to_scalar: bool | None = None) -> Any:
        if to_scalar is None:
            to_scalar = all(self.scalar_input)
        if isinstance(arr, T.Tracer):
            return T.Tracer(arr.node, scalar=True) if to_scalar and arr.ndim == 0 else arr
        return arr[()] if to_scalar and np.ndim(arr) == 0 else arr


def array_converter(*objs: Any) -> Any:
    if any(isinstance(o, T.Tracer) or holds_tracer(o) for o in objs):
        return ArrayConverter(*objs)
    return _array_converter(*objs)


# NumPy objects (found by identity) and what NumPy's code sees in their place.
_REPLACED: dict[int, Callable[..., Any]] = {
    id(np.asarray): asarray, id(np.asanyarray): asanyarray, id(np.array): array,
    id(np.ascontiguousarray): ascontiguousarray, id(np.full): full,
    id(_array_converter): array_converter,
}
# NumPy's undispatched concatenate (np.block calls it): the dispatching one, which traces.
_RAW_CONCATENATE = getattr(np.concatenate, "__wrapped__", None)
if _RAW_CONCATENATE is not None:
    _REPLACED[id(_RAW_CONCATENATE)] = np.concatenate


class TracingModule(types.ModuleType):
    """A NumPy module as NumPy's code sees it while tracing: the same attributes, with the
    conversions replaced (`np.asarray`, `_nx.asanyarray`, `NX.array`...)."""

    def __init__(self, module: types.ModuleType) -> None:
        super().__init__(module.__name__)
        self.__dict__["_module"] = module

    def __getattr__(self, name: str) -> Any:
        value = getattr(self.__dict__["_module"], name)
        return replacement(value)


_PROXIES: dict[str, TracingModule] = {}
_GLOBALS: dict[int, dict[str, Any]] = {}


def _is_numpy_module(v: Any) -> bool:
    return isinstance(v, types.ModuleType) and (v.__name__ == "numpy"
                                                or v.__name__.startswith("numpy."))


def replacement(value: Any) -> Any:
    """What NumPy's code sees in place of `value` while tracing."""
    sub = _REPLACED.get(id(value))
    if sub is not None:
        return sub
    if _is_numpy_module(value):
        proxy = _PROXIES.get(value.__name__)
        if proxy is None:
            proxy = _PROXIES[value.__name__] = TracingModule(value)
        return proxy
    if isinstance(value, types.FunctionType) and _is_numpy_module(
            sys.modules.get(value.__module__ or "")):
        return traced_function(value)
    return value


def _traced_globals(module_dict: dict[str, Any]) -> dict[str, Any]:
    """A copy of a NumPy module's globals in which conversions leave Tracers alone and the
    module's Python helpers are such copies too (built once per module)."""
    g = _GLOBALS.get(id(module_dict))
    if g is not None:
        return g
    g = _GLOBALS[id(module_dict)] = {}
    for k, v in module_dict.items():
        if isinstance(v, types.FunctionType) and v.__globals__ is module_dict:
            g[k] = copy_function(v, g)
        else:
            g[k] = v
    for k, v in module_dict.items():
        if not (isinstance(v, types.FunctionType) and v.__globals__ is module_dict):
            g[k] = replacement(v)
    return g


def copy_function(fn: types.FunctionType, g: dict[str, Any]) -> types.FunctionType:
    """`fn` running on the globals `g` (its code, defaults, closure and attributes)."""
    new = types.FunctionType(fn.__code__, g, fn.__name__, fn.__defaults__, fn.__closure__)
    new.__kwdefaults__ = fn.__kwdefaults__
    new.__qualname__ = fn.__qualname__
    new.__dict__.update(fn.__dict__)
    return new


def traced_function(fn: types.FunctionType) -> types.FunctionType:
    """`fn` (a Python function of NumPy) running on globals where conversions keep Tracers."""
    g = _traced_globals(fn.__globals__)
    copied = g.get(fn.__name__)
    if isinstance(copied, types.FunctionType) and copied.__code__ is fn.__code__:
        return copied
    return copy_function(fn, g)


def _public_name(func: Any) -> str:
    module = getattr(func, "__module__", "numpy") or "numpy"
    prefix = "np.linalg." if "linalg" in module else "np.fft." if "fft" in module else "np."
    return prefix + func.__name__


def numpy_code(func: Any) -> Callable[..., Any]:
    """A handler that traces `func` (a NumPy function) by running NumPy's own implementation;
    the nodes it creates are marked in their source location for `explain`."""
    name = _public_name(func)
    impl: list[Callable[..., Any]] = []  # built on first use: keeps `import fusejit` short

    def handler(*args: Any, **kwargs: Any) -> Any:
        if not impl:
            impl.append(traced_function(getattr(func, "_implementation", func)))
        ctx = T.current()
        start = len(ctx.created)
        try:
            return impl[0](*args, **kwargs)
        finally:
            note = f" ({name}, NumPy's own code)"
            for node in ctx.created[start:]:
                if node.loc and "NumPy's own code" not in node.loc:
                    node.loc += note

    handler.__name__ = func.__name__
    handler.__wrapped__ = func  # type: ignore[attr-defined]
    return handler


# The NumPy functions traced through their own implementation (each tested against NumPy in
# tests/test_numpy_lib.py; np.cov without weights through frontend/covariance.py;
# np.nan_to_num and np.real_if_close too, through frontend/complex_lib.py, which handles
# complex arrays itself).
_THROUGH_NUMPY = [
    np.corrcoef, np.polyval, np.isposinf, np.isneginf, np.trapezoid,
    np.sinc, np.gradient, np.tensordot, np.linalg.multi_dot, np.rot90, np.nanprod,
    np.select, np.digitize, np.fix, np.iscomplexobj,
    np.isrealobj, np.iscomplex, np.isreal, np.angle, np.real, np.imag, np.append, np.resize,
    np.triu_indices_from, np.tril_indices_from, np.linalg.trace,
    np.linalg.vector_norm, np.linalg.matrix_norm, np.linalg.outer, np.linalg.diagonal,
    np.linalg.matmul, np.matrix_transpose, np.unstack, np.unwrap,
    np.logspace, np.ediff1d, np.linalg.matrix_transpose, np.linalg.tensordot, np.linalg.vecdot,
    np.linalg.cross, np.linalg.matrix_power, np.fft.fftshift, np.fft.ifftshift,
    np.linalg.matrix_rank, np.linalg.svdvals, np.rollaxis, np.apply_over_axes, np.polyder,
    np.polyint, np.linalg.tensorinv, np.polyadd, np.polysub, np.sort_complex,
]
if hasattr(np, "trapz"):
    _THROUGH_NUMPY.append(np.trapz)

HANDLERS: dict[Callable[..., Any], Callable[..., Any]] = {f: numpy_code(f)
                                                          for f in _THROUGH_NUMPY}
