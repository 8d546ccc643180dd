"""`fusejit.grad`, `fusejit.value_and_grad` and `fusejit.vjp`: compiled gradients of plain
NumPy functions.

A gradient function is a jitted function whose trace runs the user's function forward on
Tracers and then its backward pass (frontend/autodiff.py) in the same trace: one graph,
optimised, fused and memory-planned as one program, compiled and cached per signature like
any `@jit` function. Arguments may be arrays or tuples/lists/dicts of them (flattened to
leaves before the jitted call; the gradient has the argument's structure). Called inside
another traced function (`jit(step)` calling `value_and_grad(loss)`), it traces inline into
that graph. In-place updates inside the function are taken functionally: the caller's arrays
are never written by a gradient function.
"""

from __future__ import annotations

import functools
import inspect
from collections.abc import Callable, Hashable, Sequence
from typing import Any

import numpy as np

from .frontend.autodiff import backward
from .frontend.captures import names_only
from .frontend.context import const_node, current, make_node, tracing
from .frontend.pytree import flatten, unflatten
from .frontend.tracer import Tracer
from .jit import JitFunction

_LEAF = (np.ndarray, np.generic, bool, int, float, Tracer)


def is_leaf(x: Any) -> bool:
    return isinstance(x, _LEAF)


def frozen(tree: Any) -> Hashable:
    """A hashable key for a pytree structure (its static leaves included)."""
    if isinstance(tree, (tuple, list)):
        return tuple(frozen(t) for t in tree)
    if isinstance(tree, type):
        return tree
    hash(tree)
    return tree


def float_leaf(x: Any, fname: str, pos: int) -> None:
    """Refuse a differentiated leaf that is not float32/float64 (JAX's rule: no integers)."""
    dtype = np.asarray(x).dtype if not isinstance(x, Tracer) else x.dtype
    if isinstance(x, bool) or dtype not in (np.float32, np.float64):
        raise TypeError(f"fusejit.grad of {fname}(): argument {pos} holds a {dtype} value; "
                        "gradients are taken with respect to float32 or float64 arrays only "
                        "(leave integer and bool arguments out of argnums)")


class Gradient:
    """The compiled gradient of `fn` with respect to the arguments `argnums`."""

    def __init__(self, fn: Callable[..., Any], argnums: int | Sequence[int], has_aux: bool,
                 mode: str) -> None:
        jf = fn if isinstance(fn, JitFunction) else None
        self.fn = jf.fn if jf is not None else fn
        self.static = jf.static if jf is not None else frozenset()
        self.backend = jf.backend if jf is not None else None
        self.fastmath = jf.fastmath if jf is not None else False
        self.single = isinstance(argnums, int)
        self.argnums = (argnums,) if self.single else tuple(argnums)
        if not self.argnums and mode != "forward":
            raise ValueError("argnums must name at least one argument")
        self.has_aux, self.mode = has_aux, mode  # grad | value_and_grad | vjp | forward
        self.name = getattr(self.fn, "__name__", "fn")
        self.signature = inspect.signature(self.fn)
        self._compiled: dict[Hashable, JitFunction] = {}
        functools.update_wrapper(self, self.fn)

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        if kwargs:
            bound = self.signature.bind(*args, **kwargs)
            bound.apply_defaults()
            args = bound.args
        argnums = tuple(a % len(args) if -len(args) <= a < len(args) else a
                        for a in self.argnums)
        n_args = len(args) - (self.mode == "vjp")  # vjp: the cotangent comes last
        for a in argnums:
            if not 0 <= a < n_args or a in self.static:
                raise ValueError(f"argnums {a} is not a (non-static) argument of "
                                 f"{self.name}() called with {len(args)} arguments")
        if tracing():
            return self.trace(args, argnums)
        return self.jitted(args, argnums)(*self.leaves(args, argnums))

    def leaves(self, args: tuple, argnums: tuple[int, ...]) -> list[Any]:
        out: list[Any] = []
        for i, a in enumerate(args):
            if i in self.static:
                continue
            for leaf in flatten(a, is_leaf)[0]:
                if i in argnums:
                    float_leaf(leaf, self.name, i)
                elif type(leaf) in (bool, int):  # baked in (shapes, counts, flags)
                    continue
                out.append(leaf)
        return out

    def jitted(self, args: tuple, argnums: tuple[int, ...]) -> JitFunction:
        """The jitted function of the flat leaves for this structure of the arguments."""
        trees = []
        for i, a in enumerate(args):
            if i in self.static:
                trees.append(("static", a))
                continue
            leaves, tree = flatten(a, is_leaf)
            baked = tuple((k, v) for k, v in enumerate(leaves)
                          if type(v) in (bool, int) and i not in argnums)
            trees.append((tree, len(leaves), baked))
        try:
            key = (frozen(trees), argnums)
        except TypeError:
            raise TypeError(f"a static argument of {self.name}() must be hashable") from None
        jf = self._compiled.get(key)
        if jf is None:
            def flat(*leaves: Any) -> Any:
                it = iter(leaves)
                rebuilt = []
                for i, t in enumerate(trees):
                    if i in self.static:
                        rebuilt.append(t[1])
                        continue
                    tree, n, baked = t
                    fixed = dict(baked)
                    parts = [fixed[k] if k in fixed else next(it) for k in range(n)]
                    rebuilt.append(unflatten(tree, parts))
                return self.trace(tuple(rebuilt), argnums)

            flat.__name__ = f"grad_{self.name}"
            n_flat = sum(n - len(baked) for t in trees if t[0] != "static"
                         for _, n, baked in (t,))
            flat.__signature__ = inspect.Signature(  # type: ignore[attr-defined]
                [inspect.Parameter(f"leaf{k}", inspect.Parameter.POSITIONAL_ONLY)
                 for k in range(n_flat)])
            jf = JitFunction(flat, backend=self.backend, fastmath=self.fastmath,
                             python_scalars=False)
            self._compiled[key] = jf
        return jf

    def trace(self, args: tuple, argnums: tuple[int, ...]) -> Any:
        """Forward and backward on the current trace; the user's structure of results."""
        ctx = current()
        wrt_trees, wrt_nodes, call = [], [], list(args)
        seen: set[int] = set()
        for i, a in enumerate(args):
            if i in self.static:
                continue
            leaves, tree = flatten(a, is_leaf)
            fresh = []
            for leaf in leaves:
                if i in argnums:
                    float_leaf(leaf, self.name, i)
                if isinstance(leaf, Tracer) or i in argnums:
                    t = leaf if isinstance(leaf, Tracer) else Tracer(const_node(leaf))
                    node = t.node
                    if i in argnums:
                        if node.id in seen:  # the same value twice: two variables
                            node = make_node("copy", [node], node.shape, node.dtype)
                        seen.add(node.id)
                        wrt_nodes.append(node)
                    # a new Tracer: writes into it inside fn stay inside fn
                    leaf = Tracer(node, scalar=t.scalar, weak=t.weak)
                fresh.append(leaf)
            call[i] = unflatten(tree, fresh)
            if i in argnums:
                wrt_trees.append((tree, len(wrt_nodes) - len(leaves), len(leaves)))
        mark = len(ctx.created)
        fn = names_only(self.fn, ctx)  # np.eye(k)[labels], np.zeros(n)[i] = x as in jit
        if self.mode == "vjp":
            result = fn(*call[:-1])
            outs, seeds = _seeds(result, call[-1], self.name)
        else:
            result = fn(*call)
        if self.mode == "forward":
            return result
        if self.has_aux and not (isinstance(result, tuple) and len(result) == 2):
            raise TypeError(f"{self.name}() with has_aux=True must return a pair "
                            "(output, auxiliary data)")
        out, aux = result if self.has_aux else (result, None)
        if self.mode != "vjp":
            outs = [_scalar_output(out, self.name)]
            seeds = [const_node(np.ones((), outs[0].dtype))]
        grads = backward(ctx.created[mark:], outs, seeds, wrt_nodes)
        per_arg = []
        for tree, first, n in wrt_trees:
            leaves = [gradient(g, w) for g, w in zip(grads[first:first + n],
                                                      wrt_nodes[first:first + n])]
            per_arg.append(unflatten(tree, leaves))
        g = per_arg[0] if self.single else tuple(per_arg)
        if self.mode == "vjp":
            return g
        value = (out, aux) if self.has_aux else out
        if self.mode == "value_and_grad":
            return value, g
        return (g, aux) if self.has_aux else g


def _seeds(result: Any, cotangent: Any, name: str) -> tuple[list[Any], list[Any]]:
    """vjp: the float output leaves of `result` and their cotangents (same structure)."""
    outs, tree = flatten(result, is_leaf)
    cts, ct_tree = flatten(cotangent, is_leaf)
    if frozen(tree) != frozen(ct_tree):
        raise TypeError(f"fusejit.vjp: the cotangent's structure does not match what {name}() "
                        "returns")
    nodes, seeds = [], []
    for o, c in zip(outs, cts):
        node = o.node if isinstance(o, Tracer) else const_node(np.asarray(o))
        if node.dtype.kind != "f":
            continue
        cnode = c.node if isinstance(c, Tracer) else const_node(np.asarray(c, node.dtype))
        if cnode.shape != node.shape:
            raise ValueError(f"fusejit.vjp: a cotangent of shape {cnode.shape} was given for "
                             f"an output of shape {node.shape} of {name}()")
        nodes.append(node)
        seeds.append(cnode)
    return nodes, seeds


def _scalar_output(out: Any, name: str) -> Any:
    t = out if isinstance(out, Tracer) else None
    if t is None:
        arr = np.asarray(out)
        if arr.dtype.kind != "f" or arr.shape != ():
            raise TypeError(f"fusejit.grad: {name}() must return a float scalar, got {arr!r}")
        return const_node(arr)
    if t.shape != ():
        raise TypeError(f"fusejit.grad: gradients are defined for functions with a scalar "
                        f"output; {name}() returned shape {t.shape} (use fusejit.vjp, or "
                        "sum it)")
    if t.dtype.kind != "f":
        raise TypeError(f"fusejit.grad: {name}() returned a {t.dtype} value; its output must "
                        "be float32 or float64")
    return t.node


def gradient(g: Any, wrt: Any) -> Tracer:
    """The gradient leaf for variable `wrt` (zeros when the output does not depend on it)."""
    if g is None:
        zero = const_node(np.zeros((), wrt.dtype))
        g = make_node("view", [zero], wrt.shape, wrt.dtype, start=(),
                      dims=((-1, 0),) * len(wrt.shape)) if wrt.shape else zero
    if g.op in ("input", "const", "view", "reshape") or g is wrt:
        g = make_node("copy", [g], g.shape, g.dtype)  # a new array, never an argument
    return Tracer(g)


def value_and_grad(fn: Callable[..., Any], argnums: int | Sequence[int] = 0,
                   has_aux: bool = False) -> Callable[..., Any]:
    """`fn`'s value and its gradient with respect to argument(s) `argnums` (each gradient has
    its argument's structure), compiled as one program. `has_aux=True`: fn returns
    (output, aux) and the result is ((output, aux), gradient)."""
    return Gradient(fn, argnums, has_aux, "value_and_grad")


def grad(fn: Callable[..., Any], argnums: int | Sequence[int] = 0,
         has_aux: bool = False) -> Callable[..., Any]:
    """The gradient of scalar-valued `fn` with respect to argument(s) `argnums`, compiled;
    `has_aux=True`: fn returns (output, aux) and the result is (gradient, aux)."""
    return Gradient(fn, argnums, has_aux, "grad")


def vjp(fn: Callable[..., Any], *primals: Any) -> tuple[Any, Callable[[Any], tuple]]:
    """`(fn(*primals), vjp_fn)`: `vjp_fn(cotangent)` (the structure of fn's result) gives
    the cotangent of every primal, a tuple. The forward program keeps the values the
    backward pass reads and `vjp_fn` runs the backward pass alone over them (pullback.py)."""
    from .pullback import vjp as _vjp

    return _vjp(fn, *primals)
