"""Recording a ufunc call on traced values: `apply_ufunc` asks NumPy for the loop (dtype
resolution with weak Python scalars, NEP 50), the result shape and NumPy's exceptions, and
adds the node; integer comparisons with out-of-range Python ints are resolved exactly."""

from __future__ import annotations

from typing import Any

import numpy as np

from ..errors import UnsupportedError
from . import ops as O
from .ir import Node
from .ops_complex import check_complex
from .ops_more import INTEGER_DEGREE
from .tracer import (
    Tracer,
    array_operand,
    broadcast,
    cast_node,
    const_node,
    is_weak,
    make_node,
    operand_spec,
    shape_of,
    to_node,
    where_msg,
)


def compute_dtype(d: np.dtype) -> np.dtype:
    """float16 is a storage type: NumPy's half loops compute in float32, and so do we."""
    return np.dtype(np.float32) if d == np.float16 else d


def apply_ufunc(ufunc: np.ufunc, *args: Any, **kwargs: Any) -> Any:
    """Record `ufunc(*args)`; dtypes, shapes and exceptions as NumPy gives them."""
    args = tuple(array_operand(a) for a in args)  # lists and tuples: converted once
    dtype_kw = kwargs.pop("dtype", None)
    if isinstance(dtype_kw, type) and issubclass(dtype_kw, np.dtype):
        dtype_kw = dtype_kw()  # a DType class (np.linspace passes type(dt)): its instance
    kwargs.pop("subok", None)  # no subclasses of traced arrays: subok changes nothing
    if kwargs.pop("casting", "same_kind") != "same_kind" or kwargs.pop("where", True) is not True:
        raise UnsupportedError(f"casting=/where= on ufuncs is not supported yet{where_msg()}")
    out = kwargs.pop("out", None)
    if out is not None:
        from .inplace import ufunc_into

        if kwargs.pop("casting", "same_kind") != "same_kind" or (
                kwargs.pop("where", True) is not True):
            raise UnsupportedError(f"casting=/where= on ufuncs is not supported yet"
                                   f"{where_msg()}")
        result = apply_ufunc(ufunc, *args, **kwargs, **(
            {"dtype": dtype_kw} if dtype_kw is not None else {}))
        return ufunc_into(ufunc, args, out, result)
    if kwargs:
        raise UnsupportedError(f"{ufunc.__name__}() keyword arguments {sorted(kwargs)} are not "
                               f"supported by fusejit{where_msg()}")
    op = O.lookup_ufunc(ufunc)
    if op is None:
        from .special_composite import composite

        made = composite(ufunc)  # scipy.special's that are other functions (nbdtr, ellipk)
        if made is not None:
            return made(*args)
        raise UnsupportedError(f"ufunc {ufunc.__name__} is not supported by fusejit"
                               f"{where_msg()}")
    if len(args) != ufunc.nin:
        raise TypeError(f"{ufunc.__name__}() takes {ufunc.nin} positional arguments but "
                        f"{len(args)} were given")
    specs = [operand_spec(a) for a in args]
    if dtype_kw is not None:
        loop, out_dtype = _resolve_with_dtype(ufunc, specs, np.dtype(dtype_kw))
    else:
        loop, out_dtype = O.resolve_ufunc(ufunc, specs)
    O.check_dtype(out_dtype, f"the result of {ufunc.__name__}")
    for d in loop:
        O.check_dtype(d, f"an operand of {ufunc.__name__}")
    check_complex(op.name, loop, where_msg())
    if op.name in INTEGER_DEGREE and loop[0].kind != "i":
        raise UnsupportedError(
            f"scipy.special.{op.name} of a {loop[0]} degree or order n is not supported by "
            f"fusejit{where_msg()}: SciPy evaluates a non-integer degree through its "
            "hypergeometric functions (and truncates yn's, kn's and expn's order), which "
            "fusejit does not; pass n as integers (n.astype(np.int64), or a Python int)")
    if op.name in ("nextafter", "spacing") and any(d == np.float16 for d in loop):
        raise UnsupportedError(f"np.{op.name} with float16 operands is not supported by "
                               f"fusejit{where_msg()} (its step is a float16 ulp, which a "
                               "float32 computation would lose); cast the operands to float32 "
                               "first")
    shape = broadcast(*(shape_of(a) for a in args))
    if op.name in _MIRRORED and dtype_kw is None and all(d.kind in "iu" for d in loop):
        exact = _integer_comparison(op.name, args, loop, shape)
        if exact is not None:
            return exact
    inputs = [to_node(a, compute_dtype(d)) for a, d in zip(args, loop)]
    if op.name in HALF_PICK and out_dtype == np.float16:
        node = half_pick(op.name, inputs[0], inputs[1], shape)
    else:
        node = make_node(op.name, inputs, shape, compute_dtype(out_dtype))
    node = cast_node(node, out_dtype)
    return Tracer(node, scalar=(shape == ()))


# NumPy's float16 loops of these pick an operand with a plain comparison (ties, +0 against -0,
# keep the first; its float32/float64 SIMD loops do not): op -> (comparison, NaN-tested side)
HALF_PICK = {"minimum": ("less_equal", 0), "maximum": ("greater_equal", 0),
             "fmin": ("less_equal", 1), "fmax": ("greater_equal", 1)}


def half_pick(name: str, x: Node, y: Node, shape: tuple[int, ...]) -> Node:
    """`name` of float16 values (computed in float32) as NumPy's half loop: x where
    `x cmp y` or the tested operand is NaN, else y."""
    cmp, side = HALF_PICK[name]
    b = np.dtype(bool)
    nan = make_node("isnan", [(x, y)[side]], (x, y)[side].shape, b)
    keep = make_node("logical_or", [make_node(cmp, [x, y], shape, b), nan], shape, b)
    return make_node("where", [keep, x, y], shape, x.dtype)


# Comparison -> the same comparison with its operands swapped.
_MIRRORED = {"equal": "equal", "not_equal": "not_equal", "less": "greater",
             "less_equal": "greater_equal", "greater": "less", "greater_equal": "less_equal"}


def _integer_comparison(name: str, args: tuple, loop: list[np.dtype],
                        shape: tuple[int, ...]) -> Tracer | None:
    """NumPy compares integers exactly: int64 with uint64 (mixed loops), and an integer array
    with any Python int, even one outside the array's dtype. None: the ordinary path is exact.
    """
    a, b = args
    if is_weak(a) and not is_weak(b):  # put the Python int second
        a, b, loop, name = b, a, loop[::-1], _MIRRORED[name]
    d = loop[0]
    if type(b) is int:  # a literal Python int
        info = np.iinfo(d)
        if info.min <= b <= info.max:
            return None
        # Out of the array's range: NumPy's answer is the same for every element.
        value = getattr(np, name)(np.array([info.min], d), b)[0]
        out = make_node("view", [const_node(np.bool_(value))], shape, np.dtype(bool),
                        start=(), dims=((-1, 0),) * len(shape))
        return Tracer(make_node("copy", [out], shape, np.dtype(bool)), scalar=shape == ())
    if isinstance(b, Tracer) and b.weak is int:
        # A Python-int argument (held as int64): compare in int64 (or int64 vs uint64), with
        # no range restriction on its value.
        nodes = [cast_node(a.node if isinstance(a, Tracer) else const_node(a), d), b.node]
        types = [d, np.dtype(np.int64)]
        if d != np.uint64:
            nodes[0] = cast_node(nodes[0], np.dtype(np.int64))
            types[0] = np.dtype(np.int64)
    elif {loop[0], loop[1]} == {np.dtype(np.int64), np.dtype(np.uint64)}:
        nodes = [to_node(x, t) for x, t in zip((a, b), loop)]
        types = list(loop)
    else:
        return None
    if types[0] == types[1]:
        node = make_node(name, nodes, shape, np.dtype(bool))
        return Tracer(node, scalar=shape == ())
    # int64 s vs uint64 u: s < 0 decides unless both are in the common range [0, 2**63).
    if types[0] == np.uint64:
        nodes, name = nodes[::-1], _MIRRORED[name]
    s, u = nodes
    zero = const_node(np.int64(0))
    common = make_node(name, [cast_node(s, np.dtype(np.uint64)), u], shape, np.dtype(bool))
    if name in ("equal", "greater", "greater_equal"):
        nonneg = make_node("greater_equal", [s, zero], s.shape, np.dtype(bool))
        node = make_node("logical_and", [nonneg, common], shape, np.dtype(bool))
    else:
        neg = make_node("less", [s, zero], s.shape, np.dtype(bool))
        node = make_node("logical_or", [neg, common], shape, np.dtype(bool))
    return Tracer(node, scalar=shape == ())


def _resolve_with_dtype(ufunc: np.ufunc, specs: list[Any], dtype: np.dtype):
    probes = [np.empty(0, d) if isinstance(d, np.dtype) else d for d in specs]
    with np.errstate(all="ignore"):
        out_dtype = np.asarray(ufunc(*probes, dtype=dtype)).dtype
    spec = tuple(d if isinstance(d, np.dtype) else type(d) for d in specs)
    loop = ufunc.resolve_dtypes(spec + (dtype,), signature=(None,) * ufunc.nin + (dtype,))
    return list(loop[: ufunc.nin]), out_dtype
