"""Algebraic simplification that is exact under IEEE 754 and NumPy's dtype rules.

Every rewrite here returns, for every input (signed zeros, infinities and NaN positions
included), the very bits the original node computes (NaNs compare by position: see
`same_bits`), and keeps the node's exact type
(shape and dtype): where the simpler form has a smaller shape it becomes a broadcast `view`.

- arithmetic identities: `x*1`, `1*x`, `x/1`, `x-0.0`, `x+(-0.0)` (not `x+0.0`: `-0.0+0.0`
  is `+0.0`), `-(-x)`, `+x`; for integers and bools also `x+0`, `0+x`,
  `x//1`, `0-x -> -x`, `x*0 -> 0`, `x-x -> 0` and reassociation of `+`/`*` chains with
  constants (wrap-around arithmetic is associative); a float division by a power of two
  becomes a multiplication by its (exact) reciprocal.
- float powers with a scalar exponent: `x**1 -> x`, `x**2 -> x*x`, `x**0.5 -> sqrt(x)`, each
  only where NumPy itself computes exactly that (asked of NumPy: `numpy_power_is_exact`).
  NumPy 2.x has these fast paths for a scalar exponent; C's `pow` differs from `sqrt` at -0.0
  and -inf, and NumPy's loop for an array of exponents is a few ulp off both, so an array
  exponent is left alone.
- casts: a cast to the same dtype, and a chain whose first cast is exact (value-preserving:
  int8->int32->int64, float32->float64->float32) becomes one cast.
- views: see `simplify_views.py` (`simplify` runs its rule too).

Constants are recognised whatever their shape: a `const` node whose every element is the
identity value (int 1, 1.0 or True, with the sign of zero respected).
"""

from __future__ import annotations

import functools
import math
from collections.abc import Callable

import numpy as np

from ..frontend.ir import Graph, Node
from .rewriting import (
    const_value,
    filled,
    is_filled,
    make_const,
    reassociate,
    run_to_fixpoint,
    same_type_as,
)
from .simplify_views import views_rule

# --- arithmetic -------------------------------------------------------------------------------


def _is_pow2(v: np.ndarray) -> bool:
    """Every element a finite nonzero power of two whose reciprocal is exact in v's dtype."""
    if v.dtype.kind != "f" or v.size == 0:
        return False
    if v.size == 1:
        item = v.reshape(-1)[0].item()
        if not math.isfinite(item) or abs(math.frexp(item)[0]) != 0.5:
            return False
        with np.errstate(all="ignore"):
            r = float(v.dtype.type(1.0 / item))  # 1/item is exact in float64 (and finite)
        return math.isfinite(r) and r != 0 and abs(math.frexp(r)[0]) == 0.5
    with np.errstate(all="ignore"):
        r = np.asarray(1 / v).astype(v.dtype)
    if not (np.all(np.isfinite(v)) and np.all(np.isfinite(r)) and np.all(v != 0)
            and np.all(r != 0)):
        return False
    return bool(np.all(np.abs(np.frexp(v)[0]) == 0.5) and np.all(np.abs(np.frexp(r)[0]) == 0.5))


_POWER_FORMS: dict[float, Callable[[np.ndarray], np.ndarray]] = {
    1.0: lambda x: x, 2.0: lambda x: x * x, 0.5: np.sqrt}


@functools.cache
def numpy_power_is_exact(exponent: float, dtype: np.dtype) -> bool:
    """Whether NumPy computes `x ** exponent` (a scalar exponent of `dtype`) exactly as x, x*x
    or sqrt(x): asked of NumPy itself, on special values (-0.0 and -inf tell sqrt from pow)
    and random bit patterns (every float16). NumPy's loop for an array of exponents is
    another matter (its SIMD pow is a few ulp off), so only scalar exponents are rewritten."""
    uint = np.dtype(f"u{dtype.itemsize}")
    if dtype.itemsize == 2:
        x = np.arange(1 << 16, dtype=uint).view(dtype)
    else:
        rng = np.random.default_rng(0)
        bits = rng.integers(0, np.iinfo(uint).max, 1 << 14, dtype=uint, endpoint=True)
        with np.errstate(all="ignore"):
            special = np.array([0.0, -0.0, np.inf, -np.inf, np.nan, -np.nan, 1.0, -1.0, 0.5,
                                2.5, 1e-40, -1e-310, 3e38, -1.7e308]).astype(dtype)
        x = np.concatenate([special, bits.view(dtype)])
    with np.errstate(all="ignore"):
        got = np.power(x, dtype.type(exponent))
        want = np.asarray(_POWER_FORMS[exponent](x)).astype(dtype)
    return same_bits(got, want)


def same_bits(a: np.ndarray, b: np.ndarray) -> bool:
    """Bit-for-bit equality, except that NaNs compare by position: IEEE 754 leaves the sign and
    payload of a NaN that an operation produces unspecified (x86 gives -nan for 0*inf, ARM
    +nan), and NumPy's own loops do not agree on them either."""
    if a.dtype != b.dtype or a.shape != b.shape:
        return False
    if a.dtype.kind != "f":
        return bool(np.array_equal(a, b))
    nan = np.isnan(a)
    if not np.array_equal(nan, np.isnan(b)):
        return False
    uint = np.dtype(f"u{a.dtype.itemsize}")
    return bool(np.array_equal(a.view(uint)[~nan], b.view(uint)[~nan]))


def _power(node: Node, a: Node, b: Node) -> Node:
    """x**1 -> x, x**2 -> x*x, x**0.5 -> sqrt(x): for integers always (exact arithmetic), for
    floats when the exponent is a scalar and NumPy itself computes that form exactly."""
    v = const_value(b)
    if v is None or v.size == 0 or not np.all(v == v.flat[0]):
        return node
    e = float(v.flat[0])
    if e not in _POWER_FORMS:
        return node
    if node.dtype.kind == "f":
        if v.size != 1 or not numpy_power_is_exact(e, node.dtype):
            return node
    elif node.dtype.kind not in "iu" or e == 0.5:
        return node
    if e == 1.0:
        return same_type_as(a, node)
    if a.type != node.type:
        return node
    op = "multiply" if e == 2.0 else "sqrt"
    return Node(op, (a, a) if e == 2.0 else (a,), node.type, {}, node.loc)


def _arith(node: Node) -> Node:
    """One exact arithmetic identity, or `node` unchanged."""
    op, ins = node.op, node.inputs
    if len(ins) == 1:
        if op == "positive" and ins[0].type == node.type:
            return ins[0]
        if op == "negative" and ins[0].op == "negative" and ins[0].inputs[0].type == node.type:
            return ins[0].inputs[0]
        return node
    if len(ins) != 2 or any(i.dtype != node.dtype for i in ins) or node.dtype.kind == "c":
        return node  # complex: x*1, x/1, x+0 change Inf/NaN parts and signed zeros
    a, b = ins
    exact_int = node.dtype.kind in "iub"
    if op == "multiply":
        if is_filled(b, 1):
            return same_type_as(a, node)
        if is_filled(a, 1):
            return same_type_as(b, node)
        if exact_int and (is_filled(a, 0) or is_filled(b, 0)):
            return filled(0, node)
    elif op == "add":
        zero_sign = None if exact_int else 1  # floats: only -0.0 is an identity of +
        if is_filled(b, 0, zero_sign):
            return same_type_as(a, node)
        if is_filled(a, 0, zero_sign):
            return same_type_as(b, node)
    elif op == "subtract":
        if is_filled(b, 0, None if exact_int else 0):
            return same_type_as(a, node)
        if exact_int and is_filled(a, 0):
            return same_type_as(Node("negative", (b,), b.type, {}, node.loc), node)
        if exact_int and a is b:
            return filled(0, node)
    elif op == "divide":
        if is_filled(b, 1):
            return same_type_as(a, node)
        v = const_value(b)
        if v is not None and _is_pow2(v):
            with np.errstate(all="ignore"):
                r = make_const(np.asarray(1 / v).astype(v.dtype), b)
            return Node("multiply", (a, r), node.type, {}, node.loc)
    elif op == "floor_divide" and node.dtype.kind in "iu":
        if is_filled(b, 1):
            return same_type_as(a, node)
    elif op == "power":
        return _power(node, a, b)
    if exact_int and op in ("add", "multiply"):
        return reassociate(node)
    return node


def simplify_arith(graph: Graph) -> Graph:
    """Exact arithmetic identities (see the module docstring)."""
    return run_to_fixpoint(graph, _arith)


# --- casts ------------------------------------------------------------------------------------


def _holds_exactly(a: np.dtype, b: np.dtype) -> bool:
    """Every value of dtype a is a value of dtype b. NumPy's "safe" casts include int64 ->
    float64, which rounds integers beyond 2**53: integers need as many bits of mantissa."""
    if not np.can_cast(a, b, "safe"):
        return False
    if a.kind in "iu" and b.kind == "f":
        return np.finfo(b).nmant + 1 >= a.itemsize * 8 - (a.kind == "i")
    return True


def _exact_chain(a: np.dtype, b: np.dtype, c: np.dtype) -> bool:
    """True when casting a->b->c gives what a->c gives, for every value of dtype a."""
    if not _holds_exactly(a, b):
        return False
    # b holds every value of a exactly; b->c then only depends on the value, except for a
    # float->integer conversion of a value outside c's range (undefined in C).
    return not (b.kind == "f" and c.kind in "iu" and not np.can_cast(a, c, "safe"))


def _casts(node: Node) -> Node:
    if node.op != "cast":
        return node
    x = node.inputs[0]
    if x.type == node.type:
        return x
    if x.op == "cast" and _exact_chain(x.inputs[0].dtype, x.dtype, node.dtype):
        src = x.inputs[0]
        if src.type == node.type:
            return src
        return Node("cast", (src,), node.type, {"dtype": node.dtype}, node.loc)
    return node


def simplify_casts(graph: Graph) -> Graph:
    """Drop casts to the same dtype; merge a cast chain whose first step is exact."""
    return run_to_fixpoint(graph, _casts)


# --- all of them ------------------------------------------------------------------------------


def _all(node: Node) -> Node:
    for rule in (_casts, views_rule, _arith):
        new = rule(node)
        if new is not node:
            return new
    return node


def simplify(graph: Graph) -> Graph:
    """Every exact simplification of this module, to a fixed point."""
    return run_to_fixpoint(graph, _all)
