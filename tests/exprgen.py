"""Random typed NumPy expression DAGs, shared by the property tests and the fuzzer.

A generator builds, top-down for a target shape, a DAG of `Expr` nodes over the elementwise
operations fusejit supports (ufuncs in operator or function form, where, clip, casts, round,
*_like, copy, views: transposes, slices with steps, integer indexing, np.split; structurally
also reductions, reshapes, joins, matmuls, scans, scatters and sorts). Leaves are
function arguments (arrays of any layout, 0-d arrays, NumPy scalars, Python scalars) or
literals captured in the function. Every node's dtype is asked of NumPy (the op is applied to
0-d probes), so only valid programs are built; float -> int casts go through a clip so they are
defined; integer powers get non-negative exponents.

`build(expr)` turns a DAG into an ordinary Python function of the arguments. The same function
runs under NumPy (the spec) and under fusejit.

Comparing with NumPy uses perturbation: libm-style functions (exp, sin, erf, float power...)
differ by a few ulp between NumPy's SIMD loops and the C library, and a later discontinuous op
(floor, a comparison, a cast) or a cancellation can magnify that. `compare` re-evaluates the
NumPy function with every approximate op's result nudged up, down, and randomly by a few ulp;
elements whose value moves beyond the tolerance are ill-conditioned in the spec itself and are
not compared (everything else, and the dtype/shape/type of every output, always is).
"""

from __future__ import annotations

import operator
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import scipy.special as sp
from conftest import match_mask, rtol_for

from fusejit.frontend.ops_complex import COMPLEX_C

BOOL = np.dtype(bool)
INT_DTYPES = [np.dtype(n) for n in ("int8", "int16", "int32", "int64",
                                     "uint8", "uint16", "uint32", "uint64")]
FLOAT_DTYPES = [np.dtype(np.float32), np.dtype(np.float64)]
DTYPES = [BOOL, *INT_DTYPES, *FLOAT_DTYPES]
COMPLEX_DTYPES = [np.dtype(np.complex64), np.dtype(np.complex128)]
# What fusejit computes on complex values (frontend/ops_complex.py); the generator steers
# around the rest, which fusejit refuses at trace time (tests/test_complex.py checks that).
# matmul: Inf/NaN follow the BLAS's own formulas.
_COMPLEX_UFUNCS = frozenset(COMPLEX_C) | {"nan_to_num"}
_COMPLEX_REDUCE = ("sum", "mean", "prod", "any", "all", "max", "min", "argmax")


def complex_refused(kind: str, param: Any, dtypes: list[np.dtype]) -> bool:
    """Whether a node with these operand/result dtypes is one fusejit refuses for complex."""
    if not any(d.kind == "c" for d in dtypes):
        return False
    if kind == "ufunc":
        return param[0] not in _COMPLEX_UFUNCS
    if kind == "reduce":
        return param[0] not in _COMPLEX_REDUCE
    if kind == "scan":  # cumprod: NumPy rounds some products with fma (layout-dependent)
        return param[0] == "cumprod"
    return kind in ("round", "safecast", "matmul", "linalg")


@dataclass(frozen=True)
class OpSpec:
    name: str
    nin: int
    fn: Callable[..., Any]
    approx: bool = False  # a libm-style function: NumPy and C may differ by a few ulp
    operator: Callable[..., Any] | None = None  # the Python operator form, if any


def _spec(name: str, approx: bool = False, op: Callable[..., Any] | None = None,
          fn: Callable[..., Any] | None = None) -> OpSpec:
    f = fn or getattr(np, name)
    return OpSpec(name, f.nin, f, approx, op)


UNARY = {s.name: s for s in [
    _spec("negative", op=operator.neg), _spec("positive", op=operator.pos),
    _spec("absolute", op=abs), _spec("fabs"), _spec("sign"), _spec("square"),
    _spec("reciprocal"), _spec("sqrt"), _spec("floor"), _spec("ceil"), _spec("trunc"),
    _spec("rint"), _spec("spacing"), _spec("isnan"), _spec("isinf"), _spec("isfinite"),
    _spec("signbit"),
    _spec("logical_not"), _spec("invert", op=operator.invert),
    _spec("cbrt", True), _spec("exp", True), _spec("exp2", True), _spec("expm1", True),
    _spec("log", True), _spec("log2", True), _spec("log10", True), _spec("log1p", True),
    _spec("sin", True), _spec("cos", True), _spec("tan", True), _spec("arcsin", True),
    _spec("arccos", True), _spec("arctan", True), _spec("sinh", True), _spec("cosh", True),
    _spec("tanh", True), _spec("arcsinh", True), _spec("arccosh", True),
    _spec("arctanh", True), _spec("deg2rad", True), _spec("rad2deg", True),
    _spec("erf", True, fn=sp.erf), _spec("erfc", True, fn=sp.erfc),
    _spec("expit", True, fn=sp.expit),
    OpSpec("nan_to_num", 1, np.nan_to_num),  # a NumPy function (frontend/complex_lib.py)
    # scipy.special ufuncs in fusejit's own C (codegen/include/fj_special.h)
    *(_spec(n, True, fn=getattr(sp, n)) for n in (
        "entr", "log_expit", "logit", "ndtr", "log_ndtr", "ndtri", "gamma", "rgamma",
        "gammaln", "digamma",
        "erfinv", "erfcinv", "erfcx", "i0", "i0e", "i1", "i1e")),
    # (not j0, j1, y0, y1: SciPy's, the reference, lose digits as the argument grows, beyond
    # what a nudge of the result models; tests/test_special.py checks them with SciPy's error)
]}
BINARY = {s.name: s for s in [
    _spec("add", op=operator.add), _spec("subtract", op=operator.sub),
    _spec("multiply", op=operator.mul), _spec("divide", op=operator.truediv),
    _spec("floor_divide", op=operator.floordiv), _spec("remainder", op=operator.mod),
    _spec("fmod"), _spec("power", op=operator.pow),  # approx for floats only (see is_approx)
    _spec("maximum"), _spec("minimum"), _spec("fmax"), _spec("fmin"),
    _spec("copysign"), _spec("nextafter"), _spec("heaviside"),
    _spec("arctan2", True), _spec("hypot", True), _spec("logaddexp", True),
    _spec("logaddexp2", True),
    # (not beta, betaln, binom: beyond 171.6 they lose ~eps * |lgamma| of absolute accuracy
    # in log space, in SciPy's value as in fusejit's; tests/test_special.py)
    *(_spec(n, True, fn=getattr(sp, n)) for n in ("xlogy", "xlog1py", "rel_entr", "kl_div")),
    _spec("equal", op=operator.eq), _spec("not_equal", op=operator.ne),
    _spec("less", op=operator.lt), _spec("less_equal", op=operator.le),
    _spec("greater", op=operator.gt), _spec("greater_equal", op=operator.ge),
    _spec("logical_and"), _spec("logical_or"), _spec("logical_xor"),
    _spec("bitwise_and", op=operator.and_), _spec("bitwise_or", op=operator.or_),
    _spec("bitwise_xor", op=operator.xor),
    _spec("left_shift", op=operator.lshift), _spec("right_shift", op=operator.rshift),
]}


STRUCTURAL = ("reduce", "concat", "stack", "matmul", "scan", "scatter", "sort", "linalg")
LINALG = ("solve", "inv", "det", "slogdet", "cholesky", "eigvalsh", "lstsq")
# A program with a linalg node compares every float output to this relative tolerance (at
# least): NumPy's single-precision LAPACK and fusejit's may differ by cond * n * eps; the
# operands are built with a condition number below ~15 and n <= 8.
LINALG_RTOL = {np.dtype(np.float32): 1e-3, np.dtype(np.float64): 1e-10}


def known_bug(kind: str, param: Any, dtype: np.dtype,
              children: tuple[Expr, ...] = ()) -> str | None:
    """Programs the generators steer around because fusejit knowingly differs from NumPy on
    them; each case is pinned by a test in test_elementwise_props.py::test_known_bug_* (a strict
    xfail for a bug, so fixing it turns the test into an XPASS failure and this entry must then
    be removed; or a check of the clear error fusejit gives instead)."""
    if kind == "ufunc" and param[0] in ("nextafter", "spacing") and dtype == np.float16:
        return f"{param[0]} in float16 is refused (UnsupportedError): no float16 step in C"
    return None


def linalg_approx(e: Expr) -> bool:
    """Whether a linalg node's result is rounded (all but slogdet's sign, exactly +-1)."""
    return e.kind == "linalg" and e.param != ("slogdet", 0)


# NumPy's own bits of these depend on the operands' layout: its SIMD loop (contiguous and
# positive strides) contracts complex64 products into FMAs and computes |z| another way than
# its loop for other strides (negative ones), which the generated layouts include. fusejit's
# are the SIMD loop's.
LAYOUT_DEPENDENT = {"square": ("c8",), "multiply": ("c8",), "absolute": ("c8", "c16")}


def is_approx(name: str, dtype: np.dtype, operand: np.dtype | None = None) -> bool:
    """Whether NumPy's result of ufunc `name` (giving `dtype`, of an `operand` dtype) is only
    known to a few ulp."""
    if name == "power":  # (complex: nudged on a CUDA run only, see make_hook)
        return dtype.kind in "fc"
    if any(d is not None and d.str[1:] in LAYOUT_DEPENDENT.get(name, ())
           for d in (dtype, operand)):
        return True
    spec = UNARY.get(name) or BINARY.get(name)
    return bool(spec and spec.approx)


def _approx(e: Expr) -> bool:
    return is_approx(e.param[0], e.dtype, e.children[0].dtype if e.children else None)


def _float_sum(e: Expr) -> bool:
    """A float or complex sum or mean: its rounding depends on the order of the additions."""
    return e.kind == "reduce" and e.param[0] in ("sum", "mean") and e.dtype.kind in "fc"


def clip_tie_unspecified(e: Expr) -> bool:
    """Whether NumPy leaves the zero sign of a float clip's tie (+0 against -0 with a bound)
    to its strides: one element, a bound with dimensions. NumPy's loop for bounds of stride 0
    keeps the value, its general loop gives the bound; on one element which one runs depends
    on the operands' dimensions and strides (also of intermediate arrays, which fusejit does
    not have). fusejit's rule: frontend/numpy_api.py _clip_keeps_ties."""
    return (e.kind == "clip" and e.dtype.kind == "f" and int(np.prod(e.shape)) == 1
            and any(len(c.shape) > 0 for c in e.children[1:]))


@dataclass(eq=False)
class Expr:
    """One node. kind: arg | lit | ufunc | where | clip | astype | safecast | round | like |
    copy | view. `shape` is the node's NumPy shape; `weak` marks a Python scalar (NEP 50)."""

    kind: str
    children: tuple[Expr, ...] = ()
    param: Any = None
    dtype: np.dtype = BOOL
    shape: tuple[int, ...] = ()
    weak: bool = False
    probe: Any = None

    def __repr__(self) -> str:
        return show(self)


def show(e: Any) -> str:
    """A readable Python-like rendering of an expression (for failure messages)."""
    if isinstance(e, (tuple, list)):
        inner = ", ".join(show(x) for x in e)
        return f"({inner},)" if isinstance(e, tuple) else f"[{inner}]"
    if isinstance(e, dict):
        return "{" + ", ".join(f"{k!r}: {show(v)}" for k, v in e.items()) + "}"
    if e.kind == "arg":
        return f"a{e.param}"
    if e.kind == "lit":
        v = e.param
        return repr(v) if not isinstance(v, np.ndarray) else f"const{v.dtype}{list(v.shape)}"
    args = ", ".join(show(c) for c in e.children)
    if e.kind == "ufunc":
        name, form = e.param
        return f"{name}[{form}]({args})"
    return f"{e.kind}{{{e.param!r}}}({args})"


# --- evaluation -------------------------------------------------------------------------------

Hook = Callable[..., Any]  # hook(value, name[, scale]): see make_hook


def _sum_error(x: Any, axis: Any, keepdims: bool, fn: str, out: np.ndarray) -> np.ndarray:
    """A bound of the rounding error of a sum (or mean) of `x` in another order or precision
    (fusejit adds float32 in float64, NumPy pairwise in float32): n eps sum |x_i| per part,
    which a cancelling sum turns into many ulp of its result."""
    x = np.asarray(x)
    n = x.size // max(out.size, 1) if x.size else 0
    eps = float(np.finfo(out.dtype).eps)

    def part(v: np.ndarray) -> np.ndarray:
        total = np.sum(np.abs(v.astype(np.float64)), axis=axis, keepdims=keepdims)
        return n * eps * (total / n if fn == "mean" and n else total)

    if out.dtype.kind == "c":
        return part(x.real) + 1j * part(x.imag)
    return part(x)


def _eval(e: Expr, args: tuple, ev: Callable[[Expr], Any], hook: Hook | None) -> Any:
    k = e.kind
    if k == "arg":
        return args[e.param]
    if k == "lit":
        return e.param
    vals = [ev(c) for c in e.children]
    if k == "ufunc":
        name, form = e.param
        spec = UNARY.get(name) or BINARY[name]
        out = (spec.operator if form == "op" else spec.fn)(*vals)
        if hook is not None and (_approx(e) or name in ZERO_SIGN_UNSPECIFIED):
            out = hook(out, name)
        return out
    if k == "where":
        return np.where(*vals)
    if k == "clip":
        out = np.clip(*vals) if e.param == "fn" else vals[0].clip(vals[1], vals[2])
        if hook is not None and clip_tie_unspecified(e):
            out = hook(out, "clip")
        return out
    if k == "astype":
        return vals[0].astype(e.param)
    if k == "safecast":
        lo, hi, dtype = e.param
        x = vals[0]
        return np.clip(np.where(np.isnan(x), 0, x), lo, hi).astype(dtype)
    if k == "round":
        return np.round(vals[0], e.param)
    if k == "like":
        which, value, dtype = e.param
        if which == "ones":
            return np.ones_like(vals[0], dtype=dtype)
        if which == "zeros":
            return np.zeros_like(vals[0], dtype=dtype)
        return np.full_like(vals[0], value, dtype=dtype)
    if k == "copy":
        return np.copy(vals[0]) if e.param == "fn" else vals[0].copy()
    if k == "view":
        how = e.param
        x = vals[0]
        if how[0] == "index":
            return x[how[1]]
        if how[0] == "transpose":
            return x.T if how[1] is None else np.transpose(x, how[1])
        if how[0] == "split":
            _, sections, axis, piece = how
            return np.split(x, sections, axis=axis)[piece]
        if how[0] == "broadcast_to":
            return np.broadcast_to(x, how[1])
        if how[0] == "reshape":
            return x.reshape(how[1]) if how[2] == "method" else np.reshape(x, how[1])
    if k == "reduce":
        fn, axis, keepdims = e.param
        out = getattr(np, fn)(vals[0], axis=axis, keepdims=keepdims)
        if hook is not None and fn in ("sum", "mean") and np.asarray(out).dtype.kind in "fc":
            out = hook(out, "sum", _sum_error(vals[0], axis, keepdims, fn, np.asarray(out)))
        return out
    if k == "concat":
        return np.concatenate(vals, axis=e.param)
    if k == "scan":
        fn, axis = e.param
        if fn in ("cumsum", "cumprod"):
            return getattr(np, fn)(vals[0], axis=axis)
        return getattr(np, fn).accumulate(vals[0], axis=axis)
    if k == "scatter":
        return _scatter(e.param, vals)
    if k == "sort":  # stable: NumPy's order of ties is then fixed
        fn, axis = e.param
        return getattr(np, fn)(vals[0], axis=axis, kind="stable")
    if k == "stack":
        return np.stack(vals, axis=e.param)
    if k == "matmul":
        return vals[0] @ vals[1]
    if k == "linalg":
        fn, which = e.param
        out = getattr(np.linalg, fn)(*vals)
        out = out[which] if fn in ("slogdet", "lstsq") else out
        if hook is not None and linalg_approx(e):
            out = hook(out, "linalg")
        return out
    raise AssertionError(f"unknown expression kind {k}")


def _traced(e: Expr) -> bool:
    """Whether `e` depends on an argument (is traced, not computed while tracing)."""
    return e.kind == "arg" or any(_traced(c) for c in e.children)


def _scatter(param: tuple[str, Any], vals: list[Any]) -> Any:
    """A copy of vals[0] with a scatter applied: `x[i] = v`, `x[i] += v`, np.add.at(x, i, v)
    or `x[np.arange(n), i] -= v`; i is a constant (repeated and negative values) or, as
    vals[2] % the axis length, computed from the program's values."""
    form, const = param
    x = vals[0].copy()
    v = vals[1]
    axis = 1 if form == "rows" else 0
    index = const if const is not None else vals[2] % x.shape[axis]
    if form == "set":
        x[index] = v
    elif form == "iadd":
        x[index] += v
    elif form == "addat":
        np.add.at(x, index, v)
    else:
        x[np.arange(x.shape[0]), index] -= v
    return x


def map_structure(fn: Callable[[Any], Any], s: Any) -> Any:
    if isinstance(s, tuple):
        return tuple(map_structure(fn, x) for x in s)
    if isinstance(s, list):
        return [map_structure(fn, x) for x in s]
    if isinstance(s, dict):
        return {k: map_structure(fn, v) for k, v in s.items()}
    return fn(s)


def leaves(s: Any) -> list[Any]:
    out: list[Any] = []
    map_structure(out.append, s)
    return out


def nonfinite_inside(result: Any, args: list[Any]) -> bool:
    """Whether evaluating `result` on `args` (as NumPy, shared subexpressions once) makes a
    NaN or an infinity anywhere, an intermediate value included."""
    memo: dict[int, Any] = {}
    found = [False]

    def ev(e: Expr) -> Any:
        if id(e) not in memo:
            v = memo[id(e)] = _eval(e, tuple(args), ev, None)
            a = np.asarray(v)
            found[0] |= a.dtype.kind in "fc" and not bool(np.all(np.isfinite(a)))
        return memo[id(e)]

    with np.errstate(all="ignore"):
        map_structure(ev, result)
    return found[0]


def build(result: Any, hook: Hook | None = None, share: bool = True,
          n_args: int | None = None) -> Callable[..., Any]:
    """A plain Python function of the arguments that evaluates `result` (an Expr or a
    tuple/list/dict of them). `share=False` re-evaluates shared subexpressions (for CSE)."""

    def impl(*args: Any) -> Any:
        memo: dict[int, Any] = {}

        def ev(e: Expr) -> Any:
            if share and id(e) in memo:
                return memo[id(e)]
            v = _eval(e, args, ev, hook)
            memo[id(e)] = v
            return v

        return map_structure(ev, result)

    # fusejit wants named positional parameters, so wrap `impl` in `def generated(a0, a1...)`.
    used = 1 + max((e.param for e in _nodes(result) if e.kind == "arg"), default=-1)
    n = used if n_args is None else n_args
    assert n >= used
    params = ", ".join(f"a{i}" for i in range(n))
    namespace: dict[str, Any] = {"impl": impl}
    exec(f"def generated({params}):\n    return impl({params})\n", namespace)
    return namespace["generated"]


def _nodes(result: Any) -> list[Expr]:
    out, seen, stack = [], set(), leaves(result)
    while stack:
        e = stack.pop()
        if id(e) not in seen:
            seen.add(id(e))
            out.append(e)
            stack.extend(e.children)
    return out


# --- random choices ---------------------------------------------------------------------------


class Chooser:
    """Random decisions; subclassed for hypothesis (`data.draw`) and NumPy seeds."""

    def choice(self, seq: list[Any]) -> Any:
        raise NotImplementedError

    def integer(self, lo: int, hi: int) -> int:
        raise NotImplementedError

    def chance(self, p: float) -> bool:
        return self.integer(0, 99) < round(100 * p)


class SeededChooser(Chooser):
    def __init__(self, seed: int) -> None:
        self.rng = np.random.default_rng(seed)

    def choice(self, seq: list[Any]) -> Any:
        return seq[int(self.rng.integers(len(seq)))]

    def integer(self, lo: int, hi: int) -> int:
        return int(self.rng.integers(lo, hi + 1))


class DrawChooser(Chooser):
    def __init__(self, data: Any) -> None:
        from hypothesis import strategies as st

        self.data, self.st = data, st

    def choice(self, seq: list[Any]) -> Any:
        return seq[self.data.draw(self.st.integers(0, len(seq) - 1))]

    def integer(self, lo: int, hi: int) -> int:
        return self.data.draw(self.st.integers(lo, hi))


# --- arguments --------------------------------------------------------------------------------


@dataclass
class ArgSpec:
    """What one function argument is: an array (dtype, shape, layout), a NumPy scalar, or a
    Python scalar (value fixed at generation time)."""

    kind: str  # "array" | "npscalar" | "pyscalar"
    dtype: np.dtype | None = None
    shape: tuple[int, ...] = ()
    layout: str = "C"
    value: Any = None


LAYOUTS = ["C", "C", "C", "perm", "step", "neg", "stepneg", "bcast0"]


def random_values(rng: np.random.Generator, dtype: np.dtype, shape: tuple[int, ...]) -> Any:
    """Mostly moderate values plus the special ones: extremes, zeros of both signs, NaN, Inf,
    halves (rounding ties), values near the domain edges of log/arcsin."""
    n = int(np.prod(shape, dtype=np.int64))
    if dtype.kind == "c":  # both parts drawn as floats (special values in either part)
        part = np.dtype(np.float32 if dtype == np.complex64 else np.float64)
        out = np.empty(shape, dtype)
        out.real, out.imag = random_values(rng, part, shape), random_values(rng, part, shape)
        return out
    if dtype.kind == "b":
        return np.asarray(rng.random(shape) < 0.5)
    if dtype.kind in "iu":
        info = np.iinfo(dtype)
        small = rng.integers(max(info.min, -12), min(info.max, 12) + 1, n)
        special = np.array([info.min, info.max, 0, 1, info.max // 2 + 1,
                            info.min + 1 if info.min else 2, 7, 3], dtype=np.int64 if
                           dtype != np.uint64 else np.uint64)
        wide = rng.integers(info.min, info.max, n, dtype=dtype, endpoint=True)
        pick = rng.random(n)
        out = np.where(pick < 0.7, small.astype(dtype), wide)
        sp_idx = rng.integers(0, len(special), n)
        out = np.where(pick > 0.9, special.astype(dtype)[sp_idx], out)
        return out.astype(dtype).reshape(shape)
    fin = np.finfo(dtype)
    special = np.array([0.0, -0.0, np.nan, np.inf, -np.inf, 1.0, -1.0, 0.5, -0.5, 2.5, -1.5,
                        float(fin.max), float(fin.tiny), 1e-3, 0.999, 1.0001, 88.5, 30.0,
                        -0.0], dtype=dtype)
    uniform = rng.uniform(-3, 3, n).astype(dtype)
    halves = (rng.integers(-8, 9, n) / 2).astype(dtype)
    pick = rng.random(n)
    out = np.where(pick < 0.75, uniform, halves)
    out = np.where(pick > 0.9, special[rng.integers(0, len(special), n)], out)
    return out.astype(dtype).reshape(shape)


def layout_array(values: np.ndarray, layout: str, rng: np.random.Generator) -> np.ndarray:
    """`values` (C-contiguous) re-laid out: a permuted, stepped, reversed or stride-0 view."""
    shape = values.shape
    if layout == "C" or values.ndim == 0:
        return values
    if layout == "perm":
        perm = tuple(int(p) for p in rng.permutation(values.ndim))
        inv = tuple(int(p) for p in np.argsort(perm))
        return np.ascontiguousarray(values.transpose(perm)).transpose(inv)
    if layout in ("step", "stepneg"):
        big = np.zeros(tuple(2 * n + 1 for n in shape), values.dtype)
        if layout == "step":
            index = tuple(slice(1, 2 * n + 1, 2) for n in shape)
        else:
            index = tuple(slice(2 * n - 1, None, -2) if n else slice(0, 0, -2) for n in shape)
        big[index] = values
        return big[index]
    if layout == "neg":
        rev = tuple(slice(None, None, -1) for _ in shape)
        return np.ascontiguousarray(values[rev])[rev]
    if layout == "bcast0":
        # one axis of length > 1 read with stride 0 (a read-only broadcast view)
        axes = [d for d, n in enumerate(shape) if n > 1]
        if not axes:
            return values
        d = axes[0]
        first = np.take(values, [0], axis=d)
        return np.broadcast_to(first, shape)
    raise AssertionError(layout)


def make_args(specs: list[ArgSpec], seed: int) -> list[Any]:
    rng = np.random.default_rng(seed)
    out: list[Any] = []
    for s in specs:
        if s.kind == "pyscalar":
            out.append(s.value)
        elif s.kind == "npscalar":
            out.append(random_values(rng, s.dtype, ()).reshape(())[()])
        else:
            out.append(layout_array(random_values(rng, s.dtype, s.shape), s.layout, rng))
    return out


# --- the generator ----------------------------------------------------------------------------


def sub_shape(ch: Chooser, shape: tuple[int, ...]) -> tuple[int, ...]:
    """A shape that broadcasts to `shape`: some leading dims dropped, some dims set to 1."""
    drop = ch.integer(0, len(shape)) if ch.chance(0.4) else 0
    rest = shape[drop:]
    return tuple(1 if (n != 1 and ch.chance(0.2)) else n for n in rest)


@dataclass
class Generator:
    """Builds random expressions; `args` collects the argument specs as leaves are made."""

    ch: Chooser
    dtypes: list[np.dtype]
    max_depth: int = 4
    views: bool = True
    literals: bool = True
    array_literals: bool = False
    scalar_args: bool = True
    share: float = 0.0  # probability of reusing an existing node (DAGs, for the fuzzer)
    # reductions (axis, keepdims), reshape, concatenate/stack and matmul (the fuzzer)
    structural: bool = False
    complex_ok: bool = False  # complex values (dtypes in `dtypes`, Python complex literals)
    args: list[ArgSpec] = field(default_factory=list)
    pool: list[Expr] = field(default_factory=list)

    # leaves ---------------------------------------------------------------------------------
    def arg(self, spec: ArgSpec, probe: Any) -> Expr:
        self.args.append(spec)
        dtype = spec.dtype if spec.dtype is not None else np.asarray(spec.value).dtype
        return Expr("arg", (), len(self.args) - 1, dtype, spec.shape,
                    weak=spec.kind == "pyscalar", probe=probe)

    def array_leaf(self, shape: tuple[int, ...], dtype: np.dtype | None = None) -> Expr:
        dtype = dtype or self.ch.choice(self.dtypes)
        layout = self.ch.choice(LAYOUTS)
        return self.arg(ArgSpec("array", dtype, shape, layout), np.zeros((), dtype))

    def py_value(self, kind: str) -> Any:
        ch = self.ch
        if kind == "bool":
            return ch.chance(0.5)
        if kind == "int":
            return ch.choice([0, 1, 2, 3, 5, 7, 100, -1, -3, 127])
        if kind == "complex":
            return ch.choice([1j, 0.5 - 2j, -1 + 0j, complex(0, -0.0), 3e10j,
                              complex(float("nan"), 1), complex(float("inf"), 0.5)])
        return ch.choice([0.5, -2.25, 3.0, 1e-3, -0.0, 1e10, 2.5, float("nan"), 0.1])

    def leaf(self, shape: tuple[int, ...]) -> Expr:
        ch = self.ch
        r = ch.integer(0, 99)
        if r < 60 or not shape and r < 65:
            return self.array_leaf(sub_shape(ch, shape))
        if r < 65:
            return self.array_leaf(())  # a 0-d array
        if r < 75 and self.scalar_args:
            dtype = ch.choice(self.dtypes)
            return self.arg(ArgSpec("npscalar", dtype), np.zeros((), dtype))
        if r < 83 and self.scalar_args:
            v = self.py_value(ch.choice(["bool", "int", "int", "float"]
                                        + (["complex"] if self.complex_ok else [])))
            return self.arg(ArgSpec("pyscalar", value=v), v)
        if self.literals and r < 92:
            v = self.py_value(ch.choice(["int", "int", "float", "bool"]
                                        + (["complex"] * 2 if self.complex_ok else [])))
            return Expr("lit", (), v, np.asarray(v).dtype, (), weak=True, probe=v)
        if self.literals and r < 96:
            dtype = ch.choice(self.dtypes)
            v = np.asarray(self.py_value("int") if dtype.kind != "f" else
                           self.py_value("float")).astype(dtype)[()]
            return Expr("lit", (), v, dtype, (), probe=np.zeros((), dtype))
        if self.array_literals:
            s = sub_shape(ch, shape)
            dtype = ch.choice(self.dtypes)
            v = random_values(np.random.default_rng(ch.integer(0, 1 << 30)), dtype, s)
            return Expr("lit", (), v, dtype, s, probe=np.zeros((), dtype))
        return self.array_leaf(sub_shape(ch, shape))

    # nodes ----------------------------------------------------------------------------------
    def node(self, kind: str, children: list[Expr], param: Any) -> Expr | None:
        """The node, with dtype/shape asked of NumPy, or None if NumPy rejects it (or it is
        Python-scalar arithmetic: a plain float or complex, not a NumPy scalar, which
        np.float64 and np.complex128 are even though they subclass Python's float/complex)."""
        probe_expr = Expr(kind, tuple(children), param)
        if kind in STRUCTURAL or (kind == "view" and param[0] == "reshape"):
            try:
                with np.errstate(all="ignore"):
                    out = np.asarray(_eval(probe_expr, (), _probe_value, None))
            except (TypeError, ValueError, np.exceptions.AxisError, np.linalg.LinAlgError):
                return None
            if out.dtype not in DTYPES and not (self.complex_ok and out.dtype.kind == "c"):
                return None
            if complex_refused(kind, param, [c.dtype for c in children] + [out.dtype]):
                return None
            return Expr(kind, tuple(children), param, out.dtype, out.shape,
                        probe=np.zeros((), out.dtype))
        try:
            shape = self._shape(kind, children, param)
            if kind == "view":
                probe = np.zeros((), children[0].dtype)
            else:
                with np.errstate(all="ignore"):
                    probe = _eval(probe_expr, (), lambda c: c.probe, None)
        except (TypeError, ValueError, OverflowError, IndexError, AttributeError,
                np.exceptions.AxisError):
            return None
        if isinstance(probe, (bool, int, float, complex)) and not isinstance(probe, np.generic):
            return None  # Python-scalar arithmetic: not a NumPy program
        probe = np.asarray(probe)
        if probe.dtype not in DTYPES and probe.dtype != np.float16 and not (
                self.complex_ok and probe.dtype.kind == "c"):
            return None
        if complex_refused(kind, param, [c.dtype for c in children] + [probe.dtype]):
            return None
        if known_bug(kind, param, probe.dtype, tuple(children)):
            return None
        return Expr(kind, tuple(children), param, probe.dtype, shape,
                    probe=np.zeros((), probe.dtype))

    @staticmethod
    def _shape(kind: str, children: list[Expr], param: Any) -> tuple[int, ...]:
        if kind == "view":
            dummy = np.empty(children[0].shape, dtype=[])
            how = param
            if how[0] == "index":
                return dummy[how[1]].shape
            if how[0] == "transpose":
                return (dummy.T if how[1] is None else np.transpose(dummy, how[1])).shape
            if how[0] == "split":
                return np.split(dummy, how[1], axis=how[2])[how[3]].shape
            return tuple(how[1])
        return np.broadcast_shapes(*(c.shape for c in children))

    def strong(self, e: Expr, shape: tuple[int, ...]) -> Expr:
        """`e`, or an array leaf in its place when `e` is a Python scalar."""
        return self.array_leaf(sub_shape(self.ch, shape)) if e.weak else e

    def expr(self, shape: tuple[int, ...], depth: int = 0) -> Expr:
        """A random expression whose shape broadcasts to `shape`."""
        ch = self.ch
        if self.share and self.pool and ch.chance(self.share):
            fits = [p for p in self.pool if _broadcasts(p.shape, shape)]
            if fits:
                return ch.choice(fits)
        if depth >= self.max_depth or ch.chance(0.25 if depth else 0.0):
            return self.leaf(shape)
        for _ in range(6):
            e = self._try_node(shape, depth)
            if e is not None:
                if not e.weak:
                    self.pool.append(e)
                return e
        return self.strong(self.leaf(shape), shape)

    def _try_node(self, shape: tuple[int, ...], depth: int) -> Expr | None:
        ch = self.ch
        if self.structural and ch.chance(0.3):
            return self._structural(shape, depth)
        r = ch.integer(0, 99)
        sub = lambda: self.expr(shape, depth + 1)  # noqa: E731
        if r < 30:
            name = ch.choice(list(UNARY))
            x = sub()
            form = "op" if UNARY[name].operator and not x.weak and ch.chance(0.5) else "fn"
            return self.node("ufunc", [x], (name, form))
        if r < 68:
            name = ch.choice(list(BINARY))
            a, b = sub(), sub()
            if a.weak and b.weak:
                b = self.strong(b, shape)
            if name == "power":
                a, b = self._power_operands(a, b, shape)
                if b is None:
                    return None
            form = "op" if BINARY[name].operator and ch.chance(0.6) else "fn"
            return self.node("ufunc", [a, b], (name, form))
        if r < 74:
            cond, a, b = sub(), sub(), sub()
            if cond.weak and a.weak and b.weak:
                cond = self.strong(cond, shape)
            return self.node("where", [cond, a, b], None)
        if r < 79:
            a = self.strong(sub(), shape)
            lo, hi = sub(), sub()
            form = "method" if ch.chance(0.3) else "fn"
            if form == "method" and not isinstance(a.probe, np.ndarray):
                form = "fn"
            return self.node("clip", [a, lo, hi], form)
        if r < 87:
            return self._cast(self.strong(sub(), shape))
        if r < 90:
            x = self.strong(sub(), shape)
            if x.dtype.kind not in "f" and x.dtype != np.float16:
                return None
            return self.node("round", [x], ch.choice([0, 0, 1, 2]))
        if r < 93:
            x = self.strong(sub(), shape)
            which = ch.choice(["ones", "zeros", "full"])
            value = ch.choice([0, 1, 7, -2, 2.5]) if which == "full" else None
            dtype = ch.choice([None, *self.dtypes])
            if which == "full" and dtype is not None and dtype.kind in "iub" and value == 2.5:
                value = 3
            if which == "full" and value == -2 and (dtype or x.dtype).kind in "ub":
                value = 2
            return self.node("like", [x], (which, value, dtype))
        if r < 95:
            x = self.strong(sub(), shape)
            return self.node("copy", [x], ch.choice(["fn", "method"]))
        if self.views:
            return self._view(shape, depth)
        return None

    def _power_operands(self, a: Expr, b: Expr, shape: tuple[int, ...]):
        """Integer powers need non-negative exponents (NumPy raises otherwise)."""
        ints = a.dtype.kind in "iub" and b.dtype.kind in "iub"
        if not ints:
            return a, b
        if b.weak:
            return a, Expr("lit", (), self.ch.choice([0, 1, 2, 3]), np.dtype(np.int64), (),
                           weak=True, probe=2)
        masked = self.node("ufunc", [b, Expr("lit", (), 3, np.dtype(np.int64), (), weak=True,
                                             probe=3)], ("bitwise_and", "op"))
        return a, masked

    def _cast(self, x: Expr) -> Expr | None:
        target = self.ch.choice(self.dtypes)
        if x.dtype.kind == "f" and target.kind in "iu":
            info = np.iinfo(target)
            lo, hi = (-100, 100) if info.min < 0 else (0, 200)
            return self.node("safecast", [x], (lo, hi, target))
        return self.node("astype", [x], target)

    def _view(self, shape: tuple[int, ...], depth: int) -> Expr | None:
        """A view whose result broadcasts to `shape`, of an expression built for its input."""
        ch = self.ch
        target = sub_shape(ch, shape) if ch.chance(0.3) else shape
        nd = len(target)
        how = ch.choice(["transpose", "reverse", "step", "index", "newaxis", "split", "bcast",
                         "gather"])
        if how == "transpose" and nd >= 2:
            if ch.chance(0.5):
                src, param = target[::-1], ("transpose", None)
            else:
                perm = list(range(nd))
                i, j = ch.integer(0, nd - 1), ch.integer(0, nd - 1)
                perm[i], perm[j] = perm[j], perm[i]
                src = tuple(target[p] for p in np.argsort(perm))
                param = ("transpose", tuple(perm))
        elif how == "reverse" and nd >= 1:
            d = ch.integer(0, nd - 1)
            src = target
            param = ("index", tuple(slice(None, None, -1) if k == d else slice(None)
                                    for k in range(nd)))
        elif how == "step" and nd >= 1:
            d = ch.integer(0, nd - 1)
            step = ch.choice([2, 3, -2])
            n = target[d]
            start = ch.integer(0, 1)
            src_n = start + abs(step) * n if n else ch.integer(0, 2)
            src = target[:d] + (src_n,) + target[d + 1:]
            if step > 0:
                sl = slice(start, None, step) if n else slice(src_n, None, step)
            else:
                sl = slice(src_n - 1 - start, None, step) if n else slice(0, 0, step)
            param = ("index", tuple(sl if k == d else slice(None) for k in range(nd)))
        elif how == "index":
            extra = ch.integer(1, 3)
            i = ch.integer(-extra, extra - 1)
            src = (extra,) + target
            param = ("index", (i, Ellipsis) if ch.chance(0.5) else (i,))
        elif how == "newaxis" and nd >= 1 and 1 in target:
            d = target.index(1)
            src = target[:d] + target[d + 1:]
            param = ("index", tuple([slice(None)] * d + [None]))
        elif how == "split" and nd >= 1:
            axis = ch.integer(0, nd - 1)
            sections = ch.choice([2, 3, 4])
            piece = ch.integer(0, sections - 1)
            src = target[:axis] + (target[axis] * sections,) + target[axis + 1:]
            param = ("split", sections, axis - nd if ch.chance(0.3) else axis, piece)
        elif how == "gather" and nd >= 1:  # a constant integer-array index along one axis
            d = ch.integer(0, nd - 1)
            m = ch.integer(1, 4)
            idx = np.array([ch.integer(-m, m - 1) for _ in range(target[d])], np.int64)
            src = target[:d] + (m,) + target[d + 1:]
            param = ("index", tuple([slice(None)] * d + [idx]))
        elif how == "bcast" and nd >= 1:
            src = sub_shape(ch, target)
            param = ("broadcast_to", target)
        else:
            return None
        x = self.strong(self.expr_exact(src, depth + 1), src)
        return self.node("view", [x], param)

    def _structural(self, shape: tuple[int, ...], depth: int) -> Expr | None:
        """A reduction, reshape, concatenation/stack or matmul whose result broadcasts to
        `shape`, over expressions built for its inputs."""
        ch = self.ch
        target = sub_shape(ch, shape) if ch.chance(0.3) else shape
        nd = len(target)
        exact = lambda s: self.strong(self.expr_exact(s, depth + 1), s)  # noqa: E731
        how = ch.choice(["reduce", "reduce", "reshape", "concat", "stack", "matmul", "scan",
                         "scatter", "sort", "linalg"])
        if how == "linalg":
            return self._linalg(target, depth)
        if how == "sort" and nd >= 1:
            fn = ch.choice(["sort", "argsort"])
            return self.node("sort", [exact(target)], (fn, ch.integer(-nd, nd - 1)))
        if how == "scan" and nd >= 1:
            fn = ch.choice(["cumsum", "cumprod", "maximum", "minimum"])
            return self.node("scan", [exact(target)], (fn, ch.integer(-nd, nd - 1)))
        if how == "scatter" and nd >= 1:
            return self._scatter(target, depth)
        if how == "reduce":
            fn = ch.choice(["sum", "max", "min", "mean", "prod", "any", "all", "argmax"])
            n = ch.integer(1, 4)
            if fn != "argmax" and nd and 1 in target and ch.chance(0.5):
                d = target.index(1)
                src, axis, keep = target[:d] + (n,) + target[d + 1:], d, True
            else:
                d = ch.integer(0, nd)
                src, axis, keep = target[:d] + (n,) + target[d:], d, False
            if fn != "argmax" and ch.chance(0.3):
                axis -= len(src)
            return self.node("reduce", [exact(src)], (fn, axis, keep))
        if how == "reshape" and nd >= 1:
            size = int(np.prod(target))
            src = ch.choice([(size,), target[::-1], (1,) + target,
                             target[:-1] + (1, target[-1])])
            if int(np.prod(src)) != size:
                return None
            new = tuple(-1 if (k == 0 and size and ch.chance(0.3)) else n
                        for k, n in enumerate(target))
            return self.node("view", [exact(src)], ("reshape", new, ch.choice(["method", "fn"])))
        if how == "concat" and nd >= 1:
            axis = ch.integer(0, nd - 1)
            n = target[axis]
            cut = ch.integer(0, n)
            parts = [target[:axis] + (m,) + target[axis + 1:] for m in (cut, n - cut)]
            return self.node("concat", [exact(p) for p in parts], axis - nd * ch.integer(0, 1))
        if how == "stack" and nd >= 1:
            axis = ch.integer(0, nd - 1)
            if target[axis] not in (1, 2, 3):
                return None
            inner = target[:axis] + target[axis + 1:]
            return self.node("stack", [exact(inner) for _ in range(target[axis])], axis)
        if how == "matmul" and nd >= 1:
            k = ch.choice([1, 2, 3, 5])
            if nd == 1:
                a_shape, b_shape = (k,), (k, target[0])
            else:
                a_shape, b_shape = target[:-1] + (k,), (k, target[-1])
            dtype = ch.choice([np.dtype(np.float32), np.dtype(np.float64), np.dtype(np.int64)])
            a, b = exact(a_shape), exact(b_shape)
            a, b = (x if x.dtype == dtype else self.node(
                "safecast", [x], (-100, 100, dtype)) if x.dtype.kind == "f" and
                dtype.kind == "i" else self.node("astype", [x], dtype) for x in (a, b))
            if a is None or b is None:
                return None
            return self.node("matmul", [a, b], None)
        return None

    def _linalg(self, target: tuple[int, ...], depth: int) -> Expr | None:
        """np.linalg.solve/inv/det/slogdet/cholesky/eigvalsh/lstsq(a, b)[0] whose result is
        `target`, on float32/float64 matrices built well conditioned from random expressions
        (see _matrix); not over complex values."""
        ch = self.ch
        nd = len(target)
        fn = ch.choice(list(LINALG))
        dtype = ch.choice([np.dtype(np.float32), np.dtype(np.float64)])
        k = ch.choice([1, 2, 3, 5])
        if fn in ("det", "slogdet"):
            a = self._matrix(target, k, k, dtype, ch.chance(0.5), depth)
            if a is None:
                return None
            return self.node("linalg", [a], (fn, ch.integer(0, 1) if fn == "slogdet" else None))
        if fn == "eigvalsh" and nd >= 1:
            a = self._matrix(target[:-1], target[-1], target[-1], dtype, True, depth)
            return None if a is None else self.node("linalg", [a], (fn, None))
        if fn in ("inv", "cholesky") and nd >= 2 and target[-1] == target[-2]:
            a = self._matrix(target[:-2], target[-1], target[-1], dtype,
                             fn == "cholesky" or ch.chance(0.5), depth)
            return None if a is None else self.node("linalg", [a], (fn, None))
        if fn == "solve" and nd >= 1:
            n = target[0] if nd == 1 else target[-2]
            a = self._matrix(target[:-2], n, n, dtype, ch.chance(0.5), depth)
            b = self._rhs(target, dtype, depth)
            if a is None or b is None:
                return None
            return self.node("linalg", [a, b], (fn, None))
        if fn == "lstsq" and nd in (1, 2):  # 2-d a only; b (m,) or (m, k)
            n = target[0]
            m = n + ch.choice([0, 1, 3])
            a = self._matrix((), m, n, dtype, False, depth)
            b_shape = (m,) + target[1:]
            b = self._rhs(b_shape, dtype, depth)
            if a is None or b is None:
                return None
            return self.node("linalg", [a, b], (fn, 0))
        return None

    def _rhs(self, shape: tuple[int, ...], dtype: np.dtype, depth: int) -> Expr | None:
        """A right-hand side: a random expression as `dtype`, clipped to [-1e4, 1e4]. Values
        near the dtype's max overflow inside the LU substitution in an order-dependent way
        (float32 5x5 solve of b ~ +-3.4e38: NumPy's sgesv finite, fusejit's inf/NaN); that
        is the float range's edge, not the condition of the system this draw checks."""
        b = self._cast_to(self.strong(self.expr_exact(shape, depth + 1), shape), dtype)
        if b is None:
            return None
        lim = lambda v: Expr("lit", (), v, np.dtype(np.float64), (), weak=True,  # noqa: E731
                             probe=v)
        return self.node("clip", [b, lim(-1e4), lim(1e4)], "fn")

    def _cast_to(self, x: Expr, dtype: np.dtype) -> Expr | None:
        """`x` as finite `dtype` values (None for complex `x`)."""
        if x.dtype.kind == "c":
            return None
        if x.dtype != dtype:
            x = self.node("astype", [x], dtype)
        return None if x is None else self.node("ufunc", [x], ("nan_to_num", "fn"))

    def _matrix(self, batch: tuple[int, ...], m: int, n: int, dtype: np.dtype, spd: bool,
                depth: int) -> Expr | None:
        """A well-conditioned (batch..., m, n) matrix from a random expression s clipped to
        [-1, 1]: s @ swapaxes(s) / n + (n + 1) * I (symmetric positive definite, eigenvalues in
        [n + 1, 2n + 1]) or s + (n + 1) * I (diagonally dominant, singular values in
        [1, n + 1 + sqrt(m n)])."""
        shape = batch + (m, n)
        s = self._cast_to(self.strong(self.expr_exact(shape, depth + 1), shape), dtype)
        one = lambda v: Expr("lit", (), v, np.dtype(np.float64), (), weak=True,  # noqa: E731
                             probe=v)
        if s is None:
            return None
        s = self.node("clip", [s, one(-1.0), one(1.0)], "fn")
        if s is None:
            return None
        if spd and m == n:
            perm = tuple(range(len(batch))) + (len(shape) - 1, len(shape) - 2)
            t = self.node("view", [s], ("transpose", perm))
            s = None if t is None else self.node("matmul", [s, t], None)
            s = None if s is None else self.node("ufunc", [s, Expr(
                "lit", (), n, np.dtype(np.int64), (), weak=True, probe=n)], ("divide", "op"))
            if s is None:
                return None
        eye = (np.eye(m, n) * (n + 1)).astype(dtype)
        return self.node("ufunc", [s, Expr("lit", (), eye, dtype, (m, n),
                                           probe=np.zeros((), dtype))], ("add", "op"))

    def _scatter(self, target: tuple[int, ...], depth: int) -> Expr | None:
        """A scatter into a copy of an expression of `target`'s shape (exprgen._scatter): its
        index a constant with repeats and negative values, or computed from an expression."""
        ch = self.ch
        exact = lambda s: self.strong(self.expr_exact(s, depth + 1), s)  # noqa: E731
        form = ch.choice(["set", "iadd", "addat", "rows"])
        if form == "rows" and (len(target) < 2 or target[1] == 0):
            form = "set"
        axis = 1 if form == "rows" else 0
        n = target[axis]
        m = target[0] if form == "rows" else (ch.integer(0, 4) if n else 0)
        region = (m,) + target[2:] if form == "rows" else (m,) + target[1:]
        base = exact(target)
        if not _traced(base):
            return None  # NumPy would write into a constant: fusejit refuses that, clearly
        value = self.expr(region, depth + 1)
        if form in ("set", "addat") and base.dtype.kind in "biu":
            other = value.param if value.weak else np.zeros((), value.dtype)
            with np.errstate(all="ignore"):
                if np.add(np.zeros(1, base.dtype), other).dtype.kind == "f":
                    return None  # float cast back into integers: undefined out of range
        children = [base, value]
        const = None
        if n == 0 or ch.chance(0.5):
            rng = np.random.default_rng(ch.integer(0, 1 << 30))
            const = rng.integers(-n, max(n, 1), m) if n else np.zeros(0, np.int64)
        else:
            i = exact((m,))
            if i.dtype.kind == "f":
                i = self.node("safecast", [i], (-50, 50, np.dtype(np.int64)))
            elif i.dtype.kind == "b":
                i = self.node("astype", [i], np.dtype(np.int64))
            if i is None:
                return None
            children.append(i)
        return self.node("scatter", children, (form, const))

    def expr_exact(self, shape: tuple[int, ...], depth: int) -> Expr:
        """An expression of exactly `shape` (broadcast up when needed): the input of a view."""
        e = self.expr(shape, depth)
        if e.shape == shape:
            return e
        if e.weak:
            e = self.array_leaf(shape)
            return e
        if e.shape != shape:
            b = self.node("view", [e], ("broadcast_to", shape))
            return b if b is not None else self.array_leaf(shape)
        return e


def _probe_value(c: Expr) -> np.ndarray:
    """Ones of `c`'s shape; an identity in the last two axes (so a linalg probe is regular)."""
    if len(c.shape) < 2:
        return np.ones(c.shape, c.dtype)
    return np.zeros(c.shape, c.dtype) + np.eye(c.shape[-2], c.shape[-1], dtype=c.dtype)


def _broadcasts(small: tuple[int, ...], big: tuple[int, ...]) -> bool:
    if len(small) > len(big):
        return False
    return all(s in (1, b) for s, b in zip(small[::-1], big[::-1]))


# --- comparing with perturbation --------------------------------------------------------------

PERTURB_ULPS = 8
# Ops whose result's zero sign NumPy does not pin down (+0/-0 ties).
ZERO_SIGN_UNSPECIFIED = frozenset({"fmax", "fmin", "clip"})  # (clip: clip_tie_unspecified)


# Approximate functions whose results pass through the subnormals to zero.
UNDERFLOWS = frozenset({"erfc", "exp", "exp2", "expit", "ndtr", "gamma", "rgamma", "power"})


def make_hook(mode: str, seed: int = 0) -> Hook:
    """What NumPy leaves unspecified, varied: an approximate op's float result nudged by a few
    ulp (up, down, or randomly per element) and the sign of its NaNs (libm and NumPy's SIMD
    code make NaNs of either sign); the sign of a zero from fmax/fmin on a +0/-0 tie (NumPy's
    own loops answer differently depending on the array length)."""
    rng = np.random.default_rng(seed)
    from conftest import on_cuda

    # complex transcendentals are glibc's (bit for bit NumPy's) on the C backend, but the
    # device's libm on a CUDA run: there each part of their results is nudged too
    nudge_complex = on_cuda()

    def signs(shape: tuple[int, ...]) -> np.ndarray:
        if mode == "random":
            return rng.choice(np.array([-1.0, 1.0]), size=shape)
        return np.full(shape, 1.0 if mode == "up" else -1.0)

    def hook(v: Any, name: str, scale: Any = None) -> Any:
        arr = np.asarray(v)
        if scale is not None:  # an absolute error bound of each element (per part)
            scale = np.asarray(scale)
            if arr.dtype.kind == "c":
                out = np.empty_like(arr)
                out.real = hook(arr.real.copy(), name, scale.real)
                out.imag = hook(arr.imag.copy(), name, scale.imag)
            else:
                out = (arr + signs(arr.shape) * scale).astype(arr.dtype)
            return out[()] if isinstance(v, np.generic) else out
        if arr.dtype.kind == "c" and (nudge_complex or name in LAYOUT_DEPENDENT) and (
                name not in ZERO_SIGN_UNSPECIFIED):
            out = np.empty_like(arr)
            out.real, out.imag = hook(arr.real.copy(), name), hook(arr.imag.copy(), name)
            return out[()] if isinstance(v, np.generic) else out
        if arr.dtype.kind != "f":
            return v
        sign = signs(arr.shape)
        if name == "linalg":  # a norm-wise error: an absolute nudge, on the non-zeros
            if arr.size == 0:
                return v
            big = float(np.max(np.abs(arr), initial=0.0, where=np.isfinite(arr)))
            delta = LINALG_RTOL[arr.dtype] / 64 * big
            out = np.where(arr != 0, arr + sign * delta, arr).astype(arr.dtype)
            return out[()] if isinstance(v, np.generic) else out
        if name in ZERO_SIGN_UNSPECIFIED:
            out = np.where(arr == 0, np.copysign(arr, sign).astype(arr.dtype), arr)
            return out[()] if isinstance(v, np.generic) else out
        if name == "rgamma":  # beyond -2e9 SciPy's reflection loses the sign of its infinities
            arr = np.where(np.isinf(arr), np.copysign(arr, sign), arr).astype(arr.dtype)
        if arr.dtype == np.float16:  # one ulp; zeros and infinities stay (as for products)
            out = np.where(np.isfinite(arr) & (arr != 0),
                           np.nextafter(arr, (sign * np.inf).astype(arr.dtype)), arr)
        else:
            info = np.finfo(arr.dtype)
            out = arr * (1.0 + sign * PERTURB_ULPS * float(info.eps)).astype(arr.dtype)
            # a subnormal result: a few ulp are absolute there (a product would not move it);
            # a zero of a function that underflows gradually may be a subnormal elsewhere
            # (SciPy's erfc is 0 beyond 26.55, glibc's goes on to 27.2)
            sub = (arr != 0) & (np.abs(arr) < info.smallest_normal)
            if name in UNDERFLOWS:
                sub |= arr == 0
            step = (sign * PERTURB_ULPS * info.smallest_subnormal).astype(arr.dtype)
            out = np.where(sub, arr + step, out)
        out = np.where(np.isnan(out), np.copysign(out, sign), out).astype(arr.dtype)
        return out[()] if isinstance(v, np.generic) else out

    return hook


def has_approx(result: Any) -> bool:
    seen: set[int] = set()
    stack = leaves(result)
    while stack:
        e = stack.pop()
        if id(e) in seen:
            continue
        seen.add(id(e))
        if e.kind == "ufunc" and (_approx(e) or e.param[0] in ZERO_SIGN_UNSPECIFIED) or (
                linalg_approx(e) or clip_tie_unspecified(e) or _float_sum(e)):
            return True
        stack.extend(e.children)
    return False


def linalg_rtol(result: Any) -> float:
    """The relative tolerance (at least) for every float output of a program with linalg
    nodes (LINALG_RTOL of the loosest one); 0.0 without them."""
    return max((LINALG_RTOL[e.dtype] for e in _nodes(result) if linalg_approx(e)),
               default=0.0)


def _rtol(dtype: np.dtype, floor: float) -> float:
    """`dtype`'s tolerance (a complex dtype's: its parts'), at least `floor`."""
    return max(rtol_for(np.empty(0, dtype).real.dtype), floor)


def evaluate(result: Any, args: list[Any], hook: Hook | None = None) -> Any:
    with np.errstate(all="ignore"):
        return build(result, hook, n_args=len(args))(*args)


def stable_masks(result: Any, args: list[Any], expected: Any) -> list[np.ndarray | None]:
    """Per output leaf: where NumPy's own result is insensitive to few-ulp libm differences
    (None: every element is stable, no approximate op is involved)."""
    exp_leaves = [np.asarray(v) for v in leaves(expected)]
    if not has_approx(result):
        return [None] * len(exp_leaves)
    masks = [np.ones(v.shape, bool) for v in exp_leaves]
    floor = linalg_rtol(result)
    for mode, seed in [("up", 0), ("down", 0), ("random", 1), ("random", 2)]:
        pert = [np.asarray(v) for v in leaves(evaluate(result, args, make_hook(mode, seed)))]
        for m, p, e in zip(masks, pert, exp_leaves):
            m &= np.broadcast_to(match_mask(p.astype(e.dtype), e, _rtol(e.dtype, floor)),
                                 m.shape)
    return masks


def assert_matches(got_leaves: list[Any], exp_leaves: list[Any],
                   masks: list[np.ndarray | None], what: str, rtol_floor: float = 0.0) -> None:
    """Values of flat outputs (dtype and shape checked separately) on the stable elements, to
    their dtype's tolerance but at least `rtol_floor` (linalg_rtol)."""
    assert len(got_leaves) == len(exp_leaves), f"{what}: {len(got_leaves)} outputs"
    for i, (g, e, m) in enumerate(zip(got_leaves, exp_leaves, masks)):
        g, e = np.asarray(g), np.asarray(e)
        assert g.dtype == e.dtype, f"{what} output {i}: dtype {g.dtype} != {e.dtype}"
        assert g.shape == e.shape, f"{what} output {i}: shape {g.shape} != {e.shape}"
        # complex outputs: each part to its float dtype's tolerance (a real transcendental's
        # value may flow into a complex result)
        ok = match_mask(g, e, _rtol(e.dtype, rtol_floor))
        if m is not None:
            ok = ok | ~m
        if not np.all(ok):
            bad = np.argwhere(~np.atleast_1d(ok))[:6]
            ga, ea = np.atleast_1d(g), np.atleast_1d(e)
            detail = "; ".join(f"{tuple(int(v) for v in b)}: {ga[tuple(b)]!r} vs "
                               f"{ea[tuple(b)]!r}" for b in bad)
            raise AssertionError(f"{what} output {i} ({e.dtype}{list(e.shape)}): "
                                 f"{int((~np.atleast_1d(ok)).sum())} element(s) differ: "
                                 f"{detail}")


def assert_types(got: Any, expected: Any, path: str = "result") -> None:
    """Same Python structure and, per leaf, the same type (ndarray / NumPy scalar type)."""
    if isinstance(expected, (tuple, list)):
        assert type(got) is type(expected) and len(got) == len(expected), path
        for i, (g, e) in enumerate(zip(got, expected)):
            assert_types(g, e, f"{path}[{i}]")
    elif isinstance(expected, dict):
        assert type(got) is dict and list(got) == list(expected), path
        for k in expected:
            assert_types(got[k], expected[k], f"{path}[{k!r}]")
    else:
        assert type(got) is type(expected), (
            f"{path}: got {type(got).__name__}, NumPy gives {type(expected).__name__}")


# --- the end-to-end check ---------------------------------------------------------------------


def check_program(result: Any, specs: list[ArgSpec], seed: int, *, interpreter: bool = False,
                  share: bool = True) -> Any:
    """Compile `build(result)` with fusejit and check it against NumPy on arguments drawn from
    `seed`: same exception type if NumPy raises; else same structure, leaf types, dtypes,
    shapes and (stable) values; arguments unmodified; a second call neither retraces nor
    changes the result. With `interpreter`, the reference interpreter on the traced and on the
    optimised graph must agree with NumPy too. Returns the JitFunction."""
    import pytest
    from conftest import assert_same, assert_unmodified, snapshot

    import fusejit
    from fusejit.frontend.interpret import interpret
    from fusejit.frontend.trace import trace
    from fusejit.lowering.pipeline import optimise

    args = make_args(specs, seed)
    fn = build(result, share=share, n_args=len(specs))
    snap = snapshot(args)
    jf = fusejit.jit(fn)
    try:
        with np.errstate(all="ignore"):
            expected = fn(*args)
    except Exception as e:  # noqa: BLE001 - NumPy's exception is the spec
        with pytest.raises(type(e)):
            jf(*args)
        assert_unmodified(snap)
        return jf
    masks = stable_masks(result, args, expected)
    floor = linalg_rtol(result)
    got = jf(*args)
    assert_unmodified(snap)
    assert_types(got, expected)
    exp_leaves = leaves(expected)
    assert_matches(leaves(got), exp_leaves, masks, "compiled vs NumPy", floor)
    got2 = jf(*args)
    assert jf.trace_count == 1, "second call with the same signature retraced"
    assert_same(got2, got, rtol=0.0)
    assert_unmodified(snap)
    if interpreter:
        graph, positions = trace(fn, list(args))
        inputs = [args[p] for p in positions]
        with np.errstate(all="ignore"):
            flat = interpret(graph, inputs)
            flat_opt = interpret(optimise(graph), inputs)
        assert_matches(flat, exp_leaves, masks, "interpret(trace) vs NumPy", floor)
        assert_matches(flat_opt, exp_leaves, masks, "interpret(optimise(trace)) vs NumPy",
                       floor)
    return jf


def describe(result: Any, specs: list[ArgSpec]) -> str:
    parts = []
    for i, s in enumerate(specs):
        if s.kind == "array":
            parts.append(f"a{i}: {s.dtype}{list(s.shape)} {s.layout}")
        elif s.kind == "npscalar":
            parts.append(f"a{i}: np.{s.dtype} scalar")
        else:
            parts.append(f"a{i}: Python {s.value!r}")
    return f"{show(result)}\n  with " + "; ".join(parts)
