"""scipy.stats distributions on traced values: `norm.cdf(x)`, `t(df).logpdf(x, loc, scale)`...

SciPy's public methods of rv_continuous (pdf, logpdf, cdf, logcdf, sf, logsf, ppf, isf) and
rv_discrete (pmf, logpmf, cdf, logcdf, sf, logsf, ppf, isf) check the arguments, evaluate the
distribution's private method (`_pdf`, `_cdf`...) only where they are valid (`argsreduce`
compresses the arrays by a mask, `place` writes the values back) and fill the rest with NaN, 0
or 1. Compressing by a mask has a data-dependent shape, which a compiled function cannot have,
and the module converts with its own `asarray`. So while a method gets traced values, fusejit
runs SciPy's own code (the public method and the distribution's private ones) in a copy of
their modules' globals where `asarray` keeps Tracers, `argsreduce` broadcasts instead of
compressing, `place`/`putmask` become selects (`np.where`), `np.any(mask)` is true and a
distribution's pieces (`_lazyselect`) are all computed and selected: the private method is
evaluated everywhere and its values kept only where SciPy would have computed them, so the
results (values, NaN/0/1 fills, float64 dtype, a NumPy scalar for 0-d) are SciPy's. The
distribution object itself is unchanged: the methods run on a copy of its instance whose class
is a subclass with the copied functions (`_traced_class`), so `super()`, `isinstance` and the
distribution's attributes behave as in SciPy. truncnorm's methods that assign through masks
under `if` are frontend/scipy_truncnorm.py's selects, hypergeom's logcdf and logsf (a Python
loop over the elements) frontend/scipy_hypergeom.py's.

The wrappers are installed on rv_continuous and rv_discrete when scipy.stats is imported
(frontend/scipy_api.py's post-import hook); without a traced argument they call SciPy's method
unchanged. A distribution whose private method cannot be traced (a root search per element
through np.vectorize, Python control flow on values) raises UnsupportedError naming it.
"""

from __future__ import annotations

import functools
import types
from typing import Any

import numpy as np

from ..errors import TraceError, UnsupportedError
from . import numpy_lib as NL
from . import scipy_hypergeom as HG
from . import scipy_truncnorm as TN
from . import tracer as T

MODULE = "scipy.stats._distn_infrastructure"
CONTINUOUS = ("pdf", "logpdf", "cdf", "logcdf", "sf", "logsf", "ppf", "isf")
DISCRETE = ("pmf", "logpmf", "cdf", "logcdf", "sf", "logsf", "ppf", "isf")
_ORIGINALS: dict[tuple[str, str], Any] = {}  # (class name, method) -> SciPy's function


def _holds_tracer(x: Any) -> bool:
    return isinstance(x, T.Tracer) or NL.holds_tracer(x)


def _as_tracer(a: Any) -> T.Tracer:
    a = NL.asarray(a)
    if isinstance(a, T.Tracer):
        return a
    a = np.asarray(a)
    return T.Tracer(T.to_node(a, a.dtype))


def _fresh(shape: Any, dtype: Any, value: float) -> T.Tracer:
    """A traced array of `shape` filled with `value` (SciPy's zeros/empty/full output), which
    the stand-ins below then write into."""
    dtype = np.dtype(float if dtype is None else dtype)
    shape = (shape,) if isinstance(shape, int) else tuple(int(s) for s in shape)
    fill = T.Tracer(T.to_node(np.asarray(value, dtype), dtype))
    return NL.full(shape, fill, dtype)


def zeros(shape: Any, dtype: Any = float, order: str = "C", **kwargs: Any) -> T.Tracer:
    return _fresh(shape, dtype, 0)


empty = zeros  # (its values are written over: SciPy fills or places every one)


def full(shape: Any, fill_value: Any, dtype: Any = None, order: str = "C",
         **kwargs: Any) -> Any:
    if isinstance(fill_value, T.Tracer):
        return NL.full(shape, fill_value, dtype, order, **kwargs)
    dtype = np.asarray(fill_value).dtype if dtype is None else dtype
    return _fresh(shape, dtype, fill_value)


def place(arr: Any, mask: Any, vals: Any) -> None:
    """np.place as argsreduce's full-shape values make it: arr = where(mask, vals, arr)."""
    if not isinstance(arr, T.Tracer):
        raise UnsupportedError("scipy.stats: an output SciPy's method builds is not traced "
                               "(fusejit cannot write traced values into it)")
    mask = np.not_equal(_as_tracer(mask), 0)
    arr[...] = np.where(mask, vals, arr)


putmask = place


def argsreduce(cond: Any, *args: Any) -> list[Any]:
    """SciPy's argsreduce keeps the elements where `cond` holds (a data-dependent shape);
    here every argument is broadcast to `cond`'s shape and `place` selects by `cond`."""
    shape = np.broadcast_shapes(np.shape(cond), *(np.shape(a) for a in args))
    return [np.broadcast_to(_as_tracer(a), shape) for a in args]


def _any(a: Any, *args: Any, **kwargs: Any) -> Any:
    """`if np.any(cond):` guards the private method's call: true for a traced mask (the
    method is then evaluated everywhere and `place` keeps its values where cond holds)."""
    if _holds_tracer(a):
        return True
    return np.any(a, *args, **kwargs)


class _StatsNumpy(NL.TracingModule):
    """numpy as SciPy's distribution code sees it while tracing."""

    def __getattr__(self, name: str) -> Any:
        special = _NUMPY_SPECIAL.get(name)
        return special if special is not None else super().__getattr__(name)


def lazyselect(condlist: Any, choicelist: Any, arrays: Any, default: Any = 0) -> Any:
    """scipy._lib._util._lazyselect (a distribution's pieces, each computed on the elements
    its condition selects) as selects: every piece on every element (flattened, as the 1-d
    selections SciPy passes), the last true condition's piece kept, in the arrays' common
    type as SciPy's output."""
    arrays = np.broadcast_arrays(*(_as_tracer(a) for a in arrays))
    code = np.mintypecode([a.dtype.char for a in arrays])
    shape = np.shape(arrays[0])
    flat = [np.reshape(a, (-1,)) for a in arrays]
    out = _fresh(shape, code, default)
    for func, cond in zip(choicelist, condlist):
        if cond is False:
            continue
        values = np.reshape(_as_tracer(func(*flat)).astype(out.dtype), shape)
        out = np.where(np.broadcast_to(_as_tracer(cond), shape), values, out)
    return out


_NUMPY_SPECIAL = {"any": _any, "place": place, "putmask": putmask, "zeros": zeros,
                  "empty": empty, "full": full}
_STANDINS = {"place": place, "putmask": putmask, "zeros": zeros, "empty": empty,
             "argsreduce": argsreduce, "asarray": NL.asarray, "asanyarray": NL.asanyarray,
             "any": _any, "full": full}
_NUMPY = _StatsNumpy(np)
_GLOBALS: dict[int, dict[str, Any]] = {}


def _traced_globals(module_dict: dict[str, Any]) -> dict[str, Any]:
    """A copy of a SciPy module's globals where NumPy's conversions keep Tracers
    (frontend/numpy_lib.py) and, in the module of the public methods only, the stand-ins
    above (a private method's own `np.any(...)` stays a question about values). Built once
    per module."""
    g = _GLOBALS.get(id(module_dict))
    if g is None:
        g = _GLOBALS[id(module_dict)] = {k: NL.replacement(v) for k, v in module_dict.items()}
        if "_lazyselect" in g:  # (the distributions' modules)
            g["_lazyselect"] = lazyselect
        for k, v in TN.GLOBALS.items():  # (truncnorm's masked assignments as selects)
            if k in g:
                g[k] = v
        if module_dict.get("__name__") == MODULE:
            for k, v in module_dict.items():
                if v is np:
                    g[k] = _NUMPY
                elif k in _STANDINS and callable(v):
                    g[k] = _STANDINS[k]
    return g


@functools.cache
def _traced_method(fn: types.FunctionType) -> types.FunctionType:
    """SciPy's function `fn` running on its module's traced globals (made once)."""
    return NL.copy_function(fn, _traced_globals(fn.__globals__))


@functools.cache
def _traced_class(cls: type) -> type:
    """A subclass of `cls` whose SciPy-defined methods run on traced globals."""
    ns: dict[str, Any] = {}
    for klass in reversed(cls.__mro__):
        if not klass.__module__.startswith("scipy."):
            continue
        for name, v in vars(klass).items():
            v = _ORIGINALS.get((klass.__name__, name), v)
            if isinstance(v, types.FunctionType) and v.__module__.startswith("scipy."):
                ns[name] = _traced_method(v)
        for standins in (TN.CLASS_METHODS, HG.CLASS_METHODS):
            ns.update(standins.get(klass.__name__, {}))
    ns["_fusejit_traced"] = True
    return type(cls.__name__, (cls,), ns)


def _traced_call(dist: Any, name: str, args: tuple, kwds: dict) -> Any:
    proxy = object.__new__(_traced_class(type(dist)))
    proxy.__dict__.update(dist.__dict__)
    label = f"scipy.stats.{getattr(dist, 'name', type(dist).__name__)}.{name}"
    try:
        return getattr(proxy, name)(*args, **kwds)
    except TraceError as e:
        raise UnsupportedError(f"{label} of traced values is not supported by fusejit"
                               f"{T.where_msg()}: SciPy's code for this distribution cannot "
                               f"be compiled ({e})") from e


def _wrapper(name: str, original: Any) -> Any:
    @functools.wraps(original)
    def method(self: Any, *args: Any, **kwds: Any) -> Any:
        if getattr(self, "_fusejit_traced", False):
            # a traced method's `super().pdf(...)` (levy_stable's): SciPy's public method,
            # on the traced globals, of this proxy (not a new proxy of it: that would recurse)
            return _traced_method(original)(self, *args, **kwds)
        if _holds_tracer(args) or _holds_tracer(tuple(kwds.values())):
            return _traced_call(self, name, args, kwds)
        return original(self, *args, **kwds)

    method.__fusejit_original__ = original  # type: ignore[attr-defined]
    return method


def patch(module: Any) -> None:
    """Install the wrappers on scipy.stats' rv_continuous and rv_discrete (idempotent)."""
    for cls_name, names in (("rv_continuous", CONTINUOUS), ("rv_discrete", DISCRETE)):
        cls = getattr(module, cls_name, None)
        if cls is None:
            continue
        for name in names:
            current = vars(cls).get(name)
            if current is None or getattr(current, "__fusejit_original__", None) is not None:
                continue
            _ORIGINALS[(cls_name, name)] = current
            setattr(cls, name, _wrapper(name, current))

