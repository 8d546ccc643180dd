"""The call paths of a `@jit` function besides the plain one (jit.py's signature lookup):
the fast stubs (the C dispatcher's, or a plain one for backends without it), `out=`, calls
that update arguments in place, and arguments that alias one another.

`CallPaths` is JitFunction's base class: its methods read the function's cache, compiled
programs and helpers (`_values`, `_normalise`, `_compile`, `_finish`, `_key`, `_run`).
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Hashable
from typing import TYPE_CHECKING, Any

import numpy as np

from .backend_c import ready_dispatcher
from .callargs import check_writeable, same_view, updates_need_slow_path
from .executor import make_stub
from .outarg import check_out, copy_into, direct_outs

if TYPE_CHECKING:
    from .backends import Backend
    from .compiler import Compiled


def _log(level: int, msg: Any) -> None:
    from . import compiler

    compiler.log(level, msg)


class CallPaths:
    """Methods of JitFunction (jit.py) for the call paths this module owns."""

    fn: Callable[..., Any]
    target: Backend
    static: frozenset[int]
    _cache: dict[Hashable, Compiled]
    _stubs: dict[Any, Callable[..., Any]]
    _keyfn: Callable[[tuple], Any] | None

    def _call_out(self, args: tuple, out: Any) -> Any:
        """`f(..., out=buf)`: the result written into `buf` (see runtime.outarg), `buf`
        returned; a tuple of arrays for a function returning a tuple."""
        compiled = self.lower_for(*args)
        norm = self._normalise(args)
        compiled, vals = self._values(compiled, norm)
        g = compiled.optimised
        specs = [(n.shape, n.dtype) for n in g.outputs[:g.n_results]]
        outs = check_out(out, g.out_tree, specs, self.fn.__name__)
        direct = None if compiled.updated or not self.target.fast_path else direct_outs(
            compiled.executable, outs, args)
        if direct is None:
            copy_into(outs, self(*args), g.out_tree)
        else:
            compiled.executable.run([vals[i] for i in compiled.positions], direct)
        return tuple(outs) if isinstance(out, tuple) and g.out_tree[0] == "tuple" else outs[0]

    def _call_updating(self, compiled: Compiled, args: tuple) -> Any:
        """A call of a function that writes some arguments in place: NumPy's read-only
        error before anything is written; arguments that overlap an updated one get a
        trace that sees the aliasing (the same array twice) or, for partial overlaps, run
        as plain NumPy; arrays the kernels cannot address are updated through a copy."""
        if updates_need_slow_path(args, compiled.updated):
            return self._call_aliased(args)
        compiled, vals = self._values(compiled, self._normalise(args))
        outs = compiled.executable.run([vals[i] for i in compiled.positions])
        norm = vals[:len(args)]
        for p in compiled.updated:
            if norm[p] is not args[p]:
                args[p][...] = norm[p]
        return self._finish(compiled, outs)

    def _call_aliased(self, args: tuple) -> Any:
        same: dict[int, int] = {}
        arrays = [i for i, a in enumerate(args) if isinstance(a, np.ndarray)
                  and i not in self.static]
        for j in arrays:
            for i in arrays:
                if i >= j or not np.may_share_memory(args[i], args[j]):
                    continue
                if same_view(args[i], args[j]):
                    same.setdefault(j, same.get(i, i))
                elif np.shares_memory(args[i], args[j]):
                    _log(1, f"{self.fn.__name__}: arguments {i} and {j} partly overlap and "
                            "one is updated in place: running it as plain NumPy")
                    return self.fn(*args)
        norm = self._normalise(args)
        key = (self._key(norm), ("same", tuple(sorted(same.items()))))
        compiled = self._cache.get(key) or self._compile(norm, key, same)
        compiled, vals = self._values(compiled, norm, key, same)
        check_writeable(args, compiled.updated)
        outs = compiled.executable.run([vals[i] for i in compiled.positions])
        for p in compiled.updated:
            if norm[p] is not args[p]:
                args[p][...] = norm[p]
        return self._finish(compiled, outs)

    def _install_stub(self, compiled: Compiled, args: tuple) -> None:
        """Give `compiled` its fast call stub once the dispatcher is built (the first calls of
        a fresh machine run through cffi while it builds in the background)."""
        if compiled.updated:
            return  # calls that write arguments go through _call_updating's checks
        if not self.target.fast_path:
            self._install_plain_stub(compiled, args)
            return
        dispatch = ready_dispatcher()
        if dispatch is None:
            return
        g = compiled.optimised
        compiled.stub = make_stub(compiled.executable, len(args), compiled.positions,
                                  g.out_tree, g.out_scalar[:g.n_results], compiled.prelude,
                                  functools.partial(self._run, compiled))
        if compiled.stub is not None and not self.static:
            self._keyfn = dispatch.key
            fast_key = dispatch.key(args)
            if fast_key is not None:
                self._stubs[fast_key] = compiled.stub

    def _install_plain_stub(self, compiled: Compiled, args: tuple) -> None:
        """A backend without the C dispatcher (CUDA): the stub skips the slow path's checks
        (the signature, computed in Python by `_key`, finds it), and runs the executable."""
        if compiled.prelude is not None or self.static:
            return
        run, positions = compiled.executable.run, compiled.positions
        if compiled.one_array:
            def stub(*args: Any) -> Any:
                return run([args[i] for i in positions])[0]
        else:
            def stub(*args: Any) -> Any:
                return self._finish(compiled, run([args[i] for i in positions]))
        compiled.stub = stub
        self._keyfn = self._key
        self._stubs[self._key(args)] = stub
