"""What a traced function reads from outside its arguments: global (and closure) variables.

NumPy reads a global array's current contents at every call, and a global number's current
value. A trace runs the function once, so without care both would be frozen at trace time. So
`shadow(fn)` gives a copy of the function (same code) whose globals and closure cells hold, for
every name its code loads (and the code of the functions it calls, recursively):

* a NumPy array: a read-only Tracer for an implicit graph input, read again at every call by
  the prelude (`Read` of frontend.pyscalar: the current object under that name, so in-place
  changes and rebinding are both seen); a changed shape, dtype or layout traces again;
* a Python/NumPy scalar, str, None or a tuple of those: the value itself, baked into the trace
  with a guard that traces again when the name holds another value;
* an object reached through it (`mod.G`, `cfg.w`, `Config.lr`, `params["w"]`, `self.w` of
  a jitted bound method): followed along its path (frontend.reached), so an array there is
  an implicit input and a number a guarded value, both read along the same path at every call;
* a set, or a container too large to copy (frontend.reached.MAX_ITEMS), holding arrays or
  floats: the value itself, read once per trace, with a warning naming it;
* a random-number source (np.random's legacy functions, a Generator or RandomState that
  is not created inside the function, an unseeded default_rng()): refused with a TraceError
  naming the line, since its draws would be frozen at trace time;
* NumPy's functions (`np.eye` and `from numpy import eye` alike): versions whose arrays are
  frontend/made.py's MadeArray, which a traced index can index (`np.eye(k)[labels]`);
* NumPy's np.asarray, np.array and the other constructors of frontend/numpy_patch.py, or a
  traced NumPy function, bound to a name (`from numpy import asarray, sum`): the wrapper that
  accepts traced values (in lists: `sum([a, b])`); np.zeros, np.ones, np.empty and np.full
  (as `np.zeros` too: numpy itself is a proxy for the user's code) the allocators that give
  traced arrays (numpy's own attributes stay NumPy's, for library and C code);
* the builtins max and min (frontend/builtin_calls.py: they compare traced values);
* anything else (modules, functions, classes, other objects): the value itself. A called
  Python function is shadowed the same way.
"""

from __future__ import annotations

import builtins
import dis
import functools
import sys
import types
import warnings
from collections.abc import Iterator
from typing import Any

import numpy as np

from ..errors import TraceError
from . import ops as O
from .builtin_calls import BUILTIN_ORIGINALS, BUILTINS
from .ir import Node, TensorType
from .made import making
from .numpy_patch import ALLOCATING, enabled, replacement
from .pymath import replacement as math_replacement
from .pyscalar import Prelude, Read, show_path
from .reached import Path, Reached, copy_container, copyable, proxyable
from .scipy_api import replacement as scipy_replacement
from .tracer import TraceContext, Tracer, where_msg

_SCALARS = (bool, int, float, complex, str, bytes, type(None), np.generic)
_MAX_DEPTH = 8  # helper functions shadowed through at most this many calls
_OWN = (__package__ or "fusejit").split(".")[0]
_LIBRARY_CODE = ("site-packages", "dist-packages", "<frozen")


def _rng_types() -> tuple[type, ...]:
    """NumPy's random-number sources; none while numpy.random is not imported (it is lazy in
    NumPy 2, so then no value can be one, and fusejit does not import it either)."""
    r = sys.modules.get("numpy.random")
    return (r.Generator, r.RandomState, r.BitGenerator) if r is not None else ()


def _draw_error(what: str) -> TraceError:
    return TraceError(
        f"{what} draws random numbers{where_msg()}: in a compiled function they would be drawn "
        "once, when it is traced, and every call would return the same numbers. Draw them "
        "outside and pass them as an argument (or seed a Generator inside the function, "
        "np.random.default_rng(seed), whose numbers are the same on every call in NumPy too)")


class _RefusedDraw:
    """Stands for a random-number source while tracing: any use is a TraceError."""

    def __init__(self, what: str) -> None:
        self._what = what

    def __getattr__(self, name: str) -> Any:
        raise _draw_error(f"{self._what}.{name}")

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        raise _draw_error(f"{self._what}()")


class _RandomModule(types.ModuleType):
    """numpy.random while tracing: Generators and their seeds as in NumPy; the legacy
    functions, which draw from the global state, refused."""

    def __getattr__(self, name: str) -> Any:
        v = getattr(np.random, name)
        if getattr(v, "__self__", None) is np.random.mtrand._rand:
            return _RefusedDraw(f"np.random.{name}")
        if name == "default_rng":
            return _default_rng
        return v


def _default_rng(seed: Any = None) -> np.random.Generator:
    if seed is None:
        raise _draw_error("np.random.default_rng() (unseeded)")
    return np.random.default_rng(seed)


class _Numpy(types.ModuleType):
    """numpy as the user's traced code sees it: numpy itself, but for the allocators
    (np.zeros & co.: traced arrays, frontend/numpy_patch.py ALLOCATING), NumPy's other
    functions giving MadeArray (frontend/made.py) and, in a function that uses np.random,
    `random`."""

    def __init__(self, name: str, uses_random: bool) -> None:
        super().__init__(name)
        self.__dict__["_uses_random"] = uses_random

    def __getattr__(self, name: str) -> Any:
        if name == "random" and self.__dict__["_uses_random"]:
            return _RANDOM
        if not enabled():
            return getattr(np, name)
        allocator = ALLOCATING.get(name)
        return allocator if allocator is not None else making(getattr(np, name))


_RANDOM = _RandomModule("numpy.random")
_NUMPY = {flag: _Numpy("numpy", flag) for flag in (False, True)}


class CapturedWarning(UserWarning):
    """A traced function reads a mutable container whose later changes it will not see."""


@functools.lru_cache(maxsize=4096)
def _loaded_globals(code: types.CodeType) -> frozenset[str]:
    """Names `code` (and the code objects nested in it) loads as globals (once per code)."""
    return frozenset(_walk_globals(code))


def _walk_globals(code: types.CodeType) -> Iterator[str]:
    for ins in dis.get_instructions(code):
        if ins.opname in ("LOAD_GLOBAL", "LOAD_NAME"):
            yield ins.argval
    for const in code.co_consts:
        if isinstance(const, types.CodeType):
            yield from _walk_globals(const)


def _all_names(code: types.CodeType) -> set[str]:
    names = set(code.co_names)
    for const in code.co_consts:
        if isinstance(const, types.CodeType):
            names |= _all_names(const)
    return names


def _plain_value(v: Any) -> bool:
    if isinstance(v, _SCALARS):
        return True
    return isinstance(v, tuple) and len(v) <= 64 and all(_plain_value(e) for e in v)


def _mutable_numbers(v: Any) -> bool:
    """A dict/list/set holding arrays or floats, or a tuple holding arrays: contents that
    would change what the function computes (ints are more often counters, sizes or a log the
    function appends to)."""
    if isinstance(v, dict):
        items: Any = v.values()
    elif isinstance(v, (list, set)):
        items = v
    elif isinstance(v, tuple):  # a tuple's arrays can still change in place
        return any(type(e) is np.ndarray for e in v[:256])
    else:
        return False
    return any(isinstance(e, (np.ndarray, float, np.floating)) for e in list(items)[:256])


class Shadower:
    """Builds shadow copies of functions for one trace; records the reads in `prelude`."""

    def __init__(self, ctx: TraceContext, prelude: Prelude | None, fn_name: str,
                 frozen: bool | None = False) -> None:
        # True: arrays baked in, with a guard on their contents (see trace); None: names only
        # (a trace with no Python at call time: export, gradients): NumPy's functions and
        # module as the user's code sees them, max/min, and the functions called, shadowed
        # the same way; arrays and numbers are left as they are (constants of the trace)
        self.frozen = frozen
        self.ctx = ctx
        self.prelude = prelude
        self.fn_name = fn_name
        self.done: dict[int, Any] = {}  # id(function) -> its shadow
        # (id(namespace), name, path) -> the Tracer, guarded value or proxy read there
        self.arrays: dict[tuple[int, str, Path], Any] = {}

    def function(self, fn: Any, depth: int = 0) -> Any:
        """The shadow of `fn` (fn itself when it is no plain Python function)."""
        if isinstance(fn, types.MethodType):
            inner = self.function(fn.__func__, depth)
            owner = fn.__self__
            if depth == 0 and self.frozen is not None and proxyable(owner):
                # jit(obj.method): `self.w` is followed
                cell = types.CellType(owner)
                root = (cell, "self", "cell", depth, False, fn.__func__.__code__)
                return types.MethodType(inner, self._reach(owner, root, ()))
            return fn if inner is fn.__func__ else types.MethodType(inner, owner)
        if not isinstance(fn, types.FunctionType) or depth > _MAX_DEPTH:
            return fn
        module = (getattr(fn, "__module__", None) or "").split(".")[0]
        if module in ("numpy", "scipy", _OWN) or any(
                part in fn.__code__.co_filename for part in _LIBRARY_CODE):
            return fn  # library code: its globals are the library's own business
        key = id(fn)
        if key in self.done:
            return self.done[key]
        self.done[key] = fn  # a recursive function sees itself while it is being shadowed
        code = fn.__code__
        names = _loaded_globals(code)
        uses_random = "random" in _all_names(code)
        g = fn.__globals__
        new_globals: dict[str, Any] | None = None
        for name in sorted(names):
            if name not in g:
                if name in BUILTINS and getattr(builtins, name) is BUILTIN_ORIGINALS[name]:
                    if new_globals is None:
                        new_globals = dict(g)
                    new_globals[name] = BUILTINS[name]  # max()/min() of traced values
                continue
            v = self._value(g[name], g, name, "global", depth, uses_random, code)
            if v is not g[name]:
                if new_globals is None:
                    new_globals = dict(g)
                new_globals[name] = v
        cells = fn.__closure__
        new_cells = None
        if cells:
            new = []
            for name, cell in zip(code.co_freevars, cells):
                try:
                    content = cell.cell_contents
                except ValueError:  # an empty cell: a variable assigned later
                    new.append(cell)
                    continue
                v = self._value(content, cell, name, "cell", depth, uses_random, code)
                new.append(cell if v is content else types.CellType(v))
            if any(a is not b for a, b in zip(new, cells)):
                new_cells = tuple(new)
        if new_globals is None and new_cells is None:
            return fn
        shadow = types.FunctionType(code, new_globals if new_globals is not None else g,
                                    fn.__name__, fn.__defaults__,
                                    new_cells if new_cells is not None else cells)
        shadow.__kwdefaults__ = fn.__kwdefaults__
        shadow.__qualname__ = fn.__qualname__
        shadow.__dict__.update(fn.__dict__)
        self.done[key] = shadow
        return shadow

    def _value(self, v: Any, where: Any, name: str, kind: str, depth: int,
               uses_random: bool, code: types.CodeType, path: Path = ()) -> Any:
        """What the shadow holds for `name` (a global of namespace `where`, or a cell), or for
        the value reached from it along `path`."""
        shown = show_path(name, path)
        if enabled():
            wrapper = replacement(v)  # `from numpy import asarray` (frontend/numpy_patch.py)
            if wrapper is not None and wrapper in ALLOCATING.values():
                return wrapper  # (np.zeros & co. give traced arrays)
            made = making(v if wrapper is None else wrapper)  # `from numpy import eye`
            if made is not v:
                return made
        wrapper = scipy_replacement(v)  # `from scipy.ndimage import ...` before fusejit
        if wrapper is not None:
            return wrapper
        wrapper = math_replacement(v) if self.frozen is not None else None
        if wrapper is not None:  # math.sqrt of a Python-scalar argument (pymath.py)
            return wrapper
        rng = _rng_types() if self.frozen is not None else ()
        if isinstance(v, rng) or isinstance(getattr(v, "__self__", None), rng):
            return _RefusedDraw(shown)  # a random state outside the function: its draws
        if rng and v is sys.modules["numpy.random"]:
            return _RANDOM
        if v is np:
            return _NUMPY[uses_random and self.frozen is not None]
        if self.frozen is None:  # names only
            if isinstance(v, (types.FunctionType, types.MethodType)):
                return self.function(v, depth + 1)
            return v
        if type(v) is np.ndarray:
            return self._array(v, where, name, kind, path)
        if _plain_value(v):
            key = (id(where), name, path)
            if key not in self.arrays:
                self.prelude.add_read(Read(where, name, kind, "value", v, path=path))
                self.arrays[key] = v
            return v
        if isinstance(v, (types.FunctionType, types.MethodType)):
            return self.function(v, depth + 1)
        if hasattr(type(v), "__fusejit_inline__"):  # a @jit function: inlined anyway
            return v.__fusejit_inline__(self.function(v.fn, depth + 1))
        root = (where, name, kind, depth, uses_random, code)
        if depth <= _MAX_DEPTH and len(path) <= _MAX_DEPTH and (proxyable(v) or copyable(v)):
            return self._reach(v, root, path)
        if _mutable_numbers(v):
            warnings.warn_explicit(
                f"fusejit: {self.fn_name}() reads the {type(v).__name__} {shown!r} "
                f"({kind} variable); its contents are read once, when the function is traced, "
                "and later changes to them are not seen. Pass the arrays or numbers as "
                "arguments", CapturedWarning, code.co_filename, code.co_firstlineno)
        return v

    def _reach(self, v: Any, root: tuple, path: Path) -> Any:
        """A proxy (object) or a copy (container) of `v`, whose reads are followed."""
        where, name, kind, depth, uses_random, code = root
        key = (id(where), name, path)
        if key in self.arrays:
            return self.arrays[key]

        def at(e: Any, p: Path) -> Any:
            return self._value(e, where, name, kind, depth + 1, uses_random, code, p)

        def guard(e: Any, p: Path) -> None:
            self.prelude.add_read(Read(where, name, kind, "value", e, path=p))

        if copyable(v):
            out = copy_container(v, path, at, guard)
        else:
            out = Reached(v, at, lambda f: self.function(f, depth + 1), path)
        self.arrays[key] = out
        return out

    def _array(self, a: np.ndarray, where: Any, name: str, kind: str, path: Path) -> Any:
        key = (id(where), name, path)
        if key in self.arrays:
            return self.arrays[key]
        shown = show_path(name, path)
        if self.frozen:
            self.prelude.add_read(Read(where, name, kind, "contents", a, path=path))
            self.arrays[key] = a
            return a
        try:
            dtype = O.check_dtype(a.dtype, f"the global array {shown!r}")
        except Exception:  # noqa: BLE001 - an unsupported dtype: left to fail where it is used
            return a
        contiguous = bool(a.flags.c_contiguous)
        ref = self.prelude.add_read(Read(where, name, kind, "array", a, contiguous, path=path))
        node = Node("input", (), TensorType(a.shape, dtype),
                    {"index": len(self.ctx.inputs), "global": shown})
        self.ctx.inputs.append(node)
        self.ctx.sources.append(ref)
        t = Tracer(node)
        t.readonly = (f"writing into the {kind} array {shown!r}{{where}} is not supported: the "
                      "compiled function reads it at every call, as an implicit input. Pass it "
                      "as an argument to update it in place")
        self.arrays[key] = t
        return t


def names_only(fn: Any, ctx: TraceContext) -> Any:
    """`fn` as traced code calls it inside another trace (fusejit.grad's forward pass): NumPy's
    functions and module as the user's code sees them (Shadower with frozen=None)."""
    return Shadower(ctx, None, getattr(fn, "__name__", "fn"), None).function(fn)
