"""`@fusejit.jit`: the in-memory cache of compiled functions keyed by call signature, and the
plain call path (keywords, defaults, huge Python ints; the stubs, `out=`, in-place updates
and aliased arguments are runtime/callpaths.py's). A cache miss runs runtime/compiler.py,
which chains the stages."""

from __future__ import annotations

import functools
import inspect
import sys
from collections.abc import Callable, Hashable, Iterable
from typing import TYPE_CHECKING, Any

import numpy as np

from . import config
from .errors import RuntimeFailure, UnsupportedError
from .frontend.ops import check_dtype
from .frontend.pytree import unflatten
from .frontend.tracer import tracing
from .runtime import backends
from .runtime.callargs import arg_key, check_writeable, element_strides
from .runtime.callpaths import CallPaths
from .runtime.progress import Status

if TYPE_CHECKING:
    from .runtime.aot import ExportResult
    from .runtime.compiler import Compiled
    from .runtime.explain import Explanation


def _compiler() -> Any:
    """runtime/compiler.py (the stages: tracing, lowering, codegen), imported on the first
    compilation: `import fusejit` does not pay for it (~40-60 ms)."""
    from .runtime import compiler

    return compiler


def log(level: int, msg: Any) -> None:
    _compiler().log(level, msg)


def explain_module() -> Any:
    return _compiler().explain_module()

# Export, explain and the profiler are imported where they are used: `import fusejit` stays
# short (issue 2: <= 0.2 s) and a plain call never loads them.


class JitFunction(CallPaths):
    """A NumPy function compiled on first call for each new argument signature."""

    def __init__(self, fn: Callable[..., Any], static_argnums: Iterable[int] = (),
                 static_argnames: Iterable[str] = (), backend: str | None = None,
                 fastmath: bool = False, python_scalars: bool = True) -> None:
        if inspect.isgeneratorfunction(fn) or inspect.iscoroutinefunction(fn) or (
                inspect.isasyncgenfunction(fn)):
            raise UnsupportedError(f"{fn.__name__}() is a generator or coroutine function: "
                                   "fusejit compiles functions that return arrays")
        functools.update_wrapper(self, fn)
        self.fn = fn
        # Arithmetic among Python-scalar arguments is Python's (frontend.pyscalar); False for
        # export, whose C library computes it with NumPy's int64/float64 rules.
        self.python_scalars = python_scalars
        self.fastmath = bool(fastmath)  # inexact rewrites + FMA contraction (README)
        self.signature = inspect.signature(fn)
        params = list(self.signature.parameters.values())
        self._params = params
        self._nparams = len(params)
        self._simple = all(p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)
                           for p in params)
        names = [p.name for p in params]
        static = {i if i >= 0 else i + self._nparams for i in static_argnums}
        for name in static_argnames:
            if name not in names:
                raise ValueError(f"static_argnames: {fn.__name__}() has no parameter {name!r}")
            static.add(names.index(name))
        self.static = frozenset(static)
        self.backend = backend or config.current().backend
        self.target = backends.get(self.backend)  # UnsupportedError for an unknown name
        self.target.require()  # e.g. pycuda, a GPU and nvcc, or a clear error now
        self._cache: dict[Hashable, Compiled] = {}
        # Fast path: signature bytes computed in C -> specialised call stub.
        self._stubs: dict[bytes, Callable[..., Any]] = {}
        self._keyfn: Callable[[tuple], bytes | None] | None = None
        self._traces = 0
        self._compiles = 0
        self._out_kw = "out" not in names  # f(..., out=buf) is ours, like a ufunc's out=
        self._siblings: dict[frozenset[int], JitFunction] = {}  # see _huge_ints

    @property
    def trace_count(self) -> int:
        """Traces run for this function (its variants with static defaults included)."""
        return self._traces + sum(s.trace_count for s in self._siblings.values())

    @property
    def compile_count(self) -> int:
        """Programs compiled for this function (its variants included)."""
        return self._compiles + sum(s.compile_count for s in self._siblings.values())

    def __get__(self, obj: Any, objtype: Any = None) -> Any:
        return self if obj is None else functools.partial(self, obj)

    def _bind(self, args: tuple, kwargs: dict) -> tuple:
        if not kwargs and self._simple and len(args) == self._nparams:
            return args
        bound = self.signature.bind(*args, **kwargs)
        bound.apply_defaults()
        if not self._simple:
            raise UnsupportedError(f"{self.fn.__name__}(): functions with *args/**kwargs or "
                                   "keyword-only parameters are not supported yet")
        return bound.args

    def _key(self, args: tuple) -> Hashable:
        static = self.static
        if not static:
            return tuple([arg_key(a) for a in args])  # (a list is quicker than a generator)
        return tuple(("static", a) if i in static else arg_key(a) for i, a in enumerate(args))

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        try:
            if kwargs:
                return self._call_kw(args, kwargs)
            if len(args) != self._nparams:
                defaulted = self._defaulted(args, kwargs)
                if defaulted:
                    return self._sibling(defaulted)(*self._bind(args, kwargs))
                args = self._bind(args, kwargs)
            if self._keyfn is not None:
                stub = self._stubs.get(self._keyfn(args))
                if stub is not None:
                    return stub(*args)
            return self._call_slow(args)
        except OverflowError:
            sibling, bound = self._huge_ints(args, kwargs)
            if sibling is None:
                raise
        out = kwargs.get("out") if self._out_kw else None
        return sibling(*bound) if out is None else sibling(*bound, out=out)

    def _huge_ints(self, args: tuple, kwargs: dict) -> tuple[JitFunction | None, tuple]:
        """After an OverflowError: a Python int argument that no int64 holds (NumPy compares
        one with any integer array exactly: `x < 2**64` is all True) is taken as a static
        value, traced as the literal NumPy sees, by a sibling compiled per such value; its
        arithmetic then raises NumPy's own OverflowError at trace time. (None, ()) when no
        argument is such an int: the error stands."""
        if "device_output" in kwargs:
            return None, ()
        if self._out_kw:
            kwargs = {k: v for k, v in kwargs.items() if k != "out"}
        bound = self._bind(args, kwargs) if kwargs or len(args) != self._nparams else args
        huge = frozenset(i for i, a in enumerate(bound) if type(a) is int and i not in self.static
                         and not -(1 << 63) <= a < 1 << 63)
        if not huge:
            return None, ()
        return self._sibling(huge), bound

    def _sibling(self, extra: frozenset[int]) -> JitFunction:
        """This function compiled with the arguments at `extra` static as well (one cache
        per set of positions)."""
        sibling = self._siblings.get(extra)
        if sibling is None:
            sibling = self._siblings[extra] = JitFunction(
                self.fn, self.static | extra, (), self.backend, self.fastmath,
                self.python_scalars)
        return sibling

    def _defaulted(self, args: tuple, kwargs: dict) -> frozenset[int]:
        """Positions a call leaves to their defaults (hashable ones): those defaults are
        constants of the function's definition, not traced arguments, so `def f(x, axis=1)`
        and `def f(x, mode="same")` compile as their bodies read them (as JAX's jit does:
        only what the caller passes is traced). Passed explicitly, the argument is traced."""
        if not self._simple:
            return frozenset()
        out = []
        for i in range(len(args), self._nparams):
            p = self._params[i]
            if p.name in kwargs or p.default is p.empty or i in self.static:
                continue
            try:
                hash(p.default)
            except TypeError:  # an array default: traced, as before
                continue
            out.append(i)
        return frozenset(out)

    def _call_kw(self, args: tuple, kwargs: dict) -> Any:
        """A call with keywords: `out=` (ours unless the function has an `out` parameter),
        `device_output=` (CUDA), or the function's own parameters by name. `kwargs` is left as
        it was (__call__ reads `out=` from it again after an OverflowError)."""
        if tracing():
            return self._inline(args, kwargs)
        if self._out_kw and "out" in kwargs:
            out = kwargs["out"]
            kwargs = {k: v for k, v in kwargs.items() if k != "out"}
            if out is not None:
                defaulted = self._defaulted(args, kwargs)
                target = self._sibling(defaulted) if defaulted else self
                return target._call_out(self._bind(args, kwargs), out)
            if not kwargs:
                return self(*args)
        if self.target.device_output and "device_output" in kwargs:
            on_device = bool(kwargs["device_output"])  # results as GPUArrays
            kwargs = {k: v for k, v in kwargs.items() if k != "device_output"}
            return self._call_slow(self._bind(args, kwargs), on_device)
        defaulted = self._defaulted(args, kwargs)
        if defaulted:
            return self._sibling(defaulted)(*self._bind(args, kwargs))
        return self(*self._bind(args, kwargs))  # positional now: the fast path

    def __fusejit_inline__(self, fn: Callable[..., Any]) -> Callable[..., Any]:
        """This function as a traced one that reads it calls it: `fn` (the Python function,
        or its copy from frontend.captures) inlined, with `out=` handled as here."""
        return lambda *args, **kwargs: self._inline(args, kwargs, fn)

    def _inline(self, args: tuple, kwargs: dict, fn: Callable[..., Any] | None = None) -> Any:
        """A call from inside another jitted function's trace: the Python function runs on
        the outer trace's values, so its operations become part of the outer graph (one
        compiled program, as if its body were written there)."""
        kwargs = dict(kwargs)
        out = kwargs.pop("out", None) if self._out_kw else None
        kwargs.pop("device_output", None)
        result = (fn or self.fn)(*args, **kwargs)
        if out is None:
            return result
        if isinstance(out, tuple):
            for o, r in zip(out, result, strict=True):
                o[...] = r
            return out
        out[...] = result
        return out

    def _call_slow(self, args: tuple, on_device: bool | None = None) -> Any:
        if tracing():  # called by a function being traced: inline it
            return self._inline(args, {})
        if "dask.array" in sys.modules and any(  # Dask arrays in, Dask arrays out
                type(a).__module__.startswith("dask.array") for a in args):
            from .runtime import dask_array

            return dask_array.call(self, args)
        try:
            compiled = self._cache.get(self._key(args))
        except TypeError:  # an unhashable static argument: _normalise says which
            compiled = None
        if compiled is None:
            args = self._normalise(args)
            key = self._key(args)
            compiled = self._cache.get(key) or self._compile(args, key)
        if compiled.updated:
            return self._call_updating(compiled, args)
        if compiled.stub is None and self.target.fast_path:
            self._install_stub(compiled, args)
        if compiled.stub is not None and on_device is None:
            return compiled.stub(*args)
        return self._run(compiled, args, on_device)

    def _run(self, compiled: Compiled, args: tuple, on_device: bool | None = None) -> Any:
        """One call without a stub: the prelude, the native call, the user's structure."""
        if compiled.prelude is not None:
            compiled, args = self._values(compiled, args)
        run_args = [args[i] for i in compiled.positions]
        outs = (compiled.executable.run(run_args) if on_device is None
                else compiled.executable.run(run_args, on_device))
        if compiled.one_array:  # (one array result: _finish's answer, without its work)
            return outs[0]
        return self._finish(compiled, outs)

    def _values(self, compiled: Compiled, args: tuple, key: Hashable = None,
                same: dict[int, int] | None = None) -> tuple[Compiled, tuple]:
        """The values a call's graph inputs are drawn from: the arguments, then what the
        prelude computes from them (Python's own errors, like ZeroDivisionError, raise here).
        When a `**` step gives another type than traced (`n ** k` with k < 0 is a float),
        the variant traced for those types is used (compiled on first need)."""
        prelude = compiled.prelude
        if prelude is None:
            return compiled, args
        vals = prelude.evaluate(args)
        if vals is not None:
            return compiled, vals
        types = prelude.types(prelude.evaluate(args, guarded=False))
        key = (self._key(args) if key is None else key, ("python types", types))
        variant = self._cache.get(key) or self._compile(args, key, same, variant=True)
        vals = variant.prelude.evaluate(args) if variant.prelude is not None else args
        if vals is None:  # tracing is deterministic: the variant's types are these
            raise RuntimeFailure(f"{self.fn.__name__}: Python scalar types changed between "
                                 "two evaluations of the same arguments")
        return variant, vals

    def _finish(self, compiled: Compiled, outs: list[Any]) -> Any:
        g = compiled.optimised
        outs = [(o.item() if s == "python" else o[()]) if s and isinstance(o, np.ndarray)
                else o for o, s in zip(outs, g.out_scalar[:g.n_results])]
        return unflatten(g.out_tree, outs)

    def _normalise(self, args: tuple) -> tuple:
        """Copy arrays whose strides are not whole elements; reject unsupported arguments."""
        out = list(args)
        for i, a in enumerate(args):
            if i in self.static:
                try:
                    hash(a)
                except TypeError:
                    raise TypeError(f"static argument {i} of {self.fn.__name__}() must be "
                                    f"hashable, got {type(a).__name__}") from None
                continue
            if isinstance(a, np.ndarray):
                # (np.ma is imported on first use, 6 ms: only a subclass can be a MaskedArray)
                if type(a) is not np.ndarray and (isinstance(a, np.matrix)
                                                  or isinstance(a, np.ma.MaskedArray)):
                    raise UnsupportedError(f"argument {i} of {self.fn.__name__}() is a "
                                           f"{type(a).__name__}; pass np.asarray(x)")
                check_dtype(a.dtype, f"argument {i} of {self.fn.__name__}()")
                if not a.flags.c_contiguous and a.size and element_strides(a) is None:
                    out[i] = np.ascontiguousarray(a)
        return tuple(out)

    def lower_for(self, *args: Any, **kwargs: Any) -> Compiled:
        """Compile (or fetch) the version of this function for these arguments."""
        args = self._normalise(self._bind(args, kwargs))
        key = self._key(args)
        return self._values(self._cache.get(key) or self._compile(args, key), args, key)[0]

    def explain(self, *args: Any, **kwargs: Any) -> Explanation:
        """What compiling for these arguments did: graphs, kernels and the source lines they
        fuse, refused fusions, the memory plan and stage times (`print()` it; `.to_dot()`).
        Compiles only when this signature is new."""
        if "dask.array" in sys.modules and any(  # the chunk plan and per-chunk programs
                type(a).__module__.startswith("dask.array") for a in args):
            from .runtime import dask_explain

            return dask_explain.explain(self, self._bind(args, kwargs))
        c = self.lower_for(*args, **kwargs)
        report = getattr(c.executable, "transfer_report", None)  # host-device copies (CUDA)
        return explain_module().explain(c.graph, c.optimised, c.program, c.times,
                                         backend=self.backend,
                                         transfers=report() if report else None)

    def _compile(self, args: tuple, key: Hashable, same: dict[int, int] | None = None,
                 variant: bool = False) -> Compiled:
        """Trace and compile for `args`; cached under `key`. A `variant` (another trace of a
        signature for other Python scalar types, see _values) gets no fast-path stub: the
        signature's stub stays the first trace's."""
        with Status(f"compiling {self.fn.__name__}"):  # on a terminal, if it takes a while
            return self._compile_now(args, key, same, variant)

    def _compile_now(self, args: tuple, key: Hashable, same: dict[int, int] | None,
                     variant: bool) -> Compiled:
        def traced() -> None:
            self._traces += 1

        compiled = _compiler().compile_signature(self.fn, args, key, static=self.static, same=same,
                                     python_scalars=self.python_scalars,
                                     fastmath=self.fastmath, backend=self.backend,
                                     on_traced=traced)
        self._compiles += 1
        if compiled.updated:
            check_writeable(args, compiled.updated)
        self._cache[key] = compiled
        if not variant:
            self._install_stub(compiled, args)
        log(1, f"compiled {self.fn.__name__} for {key}: {len(compiled.program.kernels)} "
               "kernel(s), " + ", ".join(f"{k} {v * 1e3:.1f} ms"
                                         for k, v in compiled.times.items()))
        log(1, lambda: f"{self.fn.__name__}: {explain_module().plan_line(compiled.program)}")
        return compiled


def jit(fn: Callable[..., Any] | None = None, *, static_argnums: Iterable[int] | int = (),
        static_argnames: Iterable[str] | str = (), backend: str | None = None,
        fastmath: bool = False) -> Any:
    """Compile a NumPy function. Usable as `@jit` or `@jit(static_argnums=...)`.
    `fastmath=True` allows inexact float rewrites and FMA contraction (see the README)."""
    if isinstance(static_argnums, int):
        static_argnums = (static_argnums,)
    if isinstance(static_argnames, str):
        static_argnames = (static_argnames,)

    def wrap(f: Callable[..., Any]) -> JitFunction:
        return JitFunction(f, static_argnums, static_argnames, backend, fastmath)

    return wrap if fn is None else wrap(fn)


def export(fn: Callable[..., Any], *example_args: Any, path: str | None = None,
           name: str | None = None, workspace: str = "caller",
           target: str | None = None) -> ExportResult:
    """Compile `fn` for arguments like `example_args` into a shared library that needs no
    Python: `path` (default `build/lib<name>.so`; a directory gets `lib<name>.so` in it), a
    C header and JSON metadata beside it. `name` (default: from `path`, else the function's
    name) prefixes the C symbols.

    `workspace="caller"`: `<name>(..., void *workspace)` takes its scratch memory from the
    caller (`<name>_alloc(...)` allocates it per call); `"alloc"`: `<name>(...)` allocates it.
    `target`: the instruction set to compile for, "native" or an x86-64 level such as
    "x86-64-v3" (default: FUSEJIT_MARCH, else "native"); an unknown one is refused before
    anything is compiled or written.
    """
    from .runtime.aot import export_compiled, export_toolchain

    # An exported library is C, and has no Python to run Python-scalar arithmetic: its
    # scalar parameters follow NumPy's int64/float64 rules throughout (see the README).
    jf = fn if isinstance(fn, JitFunction) else JitFunction(fn, backend="c")
    jf = JitFunction(jf.fn, tuple(jf.static), backend="c", fastmath=jf.fastmath,
                     python_scalars=False)
    tc = export_toolchain(target or config.current().march, jf.fastmath)  # before compiling
    args = jf._normalise(jf._bind(example_args, {}))
    c = jf.lower_for(*args)
    return export_compiled(jf.fn, jf.signature, args, c.optimised, c.program, c.source,
                           c.positions, path, name, workspace, tc)
