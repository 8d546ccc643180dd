"""The op table: every operation fusejit knows, defined once.

Each OpDef holds the NumPy reference implementation (used by the interpreter and constant
folding), the kind (elementwise, view, source...), the cost used by fusion, the C expression it
renders to for each dtype, and the runtime error checks it needs. Dtypes are never guessed:
`resolve_ufunc` asks NumPy itself. Every later stage reads this table; a test checks that every
entry is complete.
"""

from __future__ import annotations

import dataclasses
import sys
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from ..errors import Status, UnsupportedError
from .gather_ref import gather_dims as gather_dims  # `X as X`: re-exported
from .gather_ref import gather_reference
from .gather_ref import gather_shape as gather_shape
from .lapack_ref import lapack_ref, lapack_solve_ref

# C type and helper-suffix of every supported storage dtype.
C_TYPES: dict[str, tuple[str, str]] = {
    "bool": ("uint8_t", "b"),
    "int8": ("int8_t", "i8"),
    "int16": ("int16_t", "i16"),
    "int32": ("int32_t", "i32"),
    "int64": ("int64_t", "i64"),
    "uint8": ("uint8_t", "u8"),
    "uint16": ("uint16_t", "u16"),
    "uint32": ("uint32_t", "u32"),
    "uint64": ("uint64_t", "u64"),
    "float16": ("_Float16", "f16"),
    "float32": ("float", "f32"),
    "float64": ("double", "f64"),
    "complex64": ("float _Complex", "c64"),
    "complex128": ("double _Complex", "c128"),
}
SUPPORTED_DTYPES = frozenset(np.dtype(n) for n in C_TYPES)


def ctype(dtype: np.dtype) -> str:
    return C_TYPES[np.dtype(dtype).name][0]


def suffix(dtype: np.dtype) -> str:
    return C_TYPES[np.dtype(dtype).name][1]


def check_dtype(dtype: np.dtype, what: str = "value") -> np.dtype:
    """Return `dtype` if fusejit can store it, else raise UnsupportedError."""
    dtype = np.dtype(dtype)
    if dtype not in SUPPORTED_DTYPES or dtype.byteorder == ">":
        raise UnsupportedError(
            f"dtype {dtype} of {what} is not supported by fusejit (supported: bool, int8..int64, "
            "uint8..uint64, float16 (storage), float32, float64, complex64, complex128); "
            "convert it with .astype() outside the compiled function"
        )
    return dtype


@dataclass(frozen=True)
class ErrorCheck:
    """A runtime condition (C, over the op's operands) that makes NumPy raise: the kernel sets
    its status flag (errors.Status: the code, exception and message)."""

    status: Status
    cond: str
    applies: Callable[[list[str]], bool] = lambda sfx: True

    @property
    def code(self) -> int:
        return self.status.code


ERR_INT_NEG_POWER = ErrorCheck(Status.INT_NEG_POWER, "({1} < 0)",
                               lambda sfx: sfx[1].startswith("i"))
# A gather index outside its axis (after counting negative ones from the end); args: the
# index (any integer type, read as int64 the way NumPy converts index arrays to intp) and
# the axis length. The load itself reads element 0 instead (see fj_ix_raise).
ERR_INDEX_RANGE = ErrorCheck(Status.INDEX_RANGE, "fj_ix_bad((int64_t)({0}), {1})")
# np.bincount's input value outside [0, minlength) (frontend/scatter.py); args as above.
ERR_BINCOUNT_RANGE = ErrorCheck(Status.BINCOUNT_RANGE,
                                "((uint64_t)(int64_t)({0}) >= (uint64_t)({1}))")
ERROR_CHECKS = {e.code: e for e in (ERR_INT_NEG_POWER, ERR_INDEX_RANGE, ERR_BINCOUNT_RANGE)}


@dataclass(frozen=True)
class OpDef:
    """One operation. `c` maps (input suffixes, output suffix) to a C expression template."""

    name: str
    kind: str  # "elementwise" | "view" | "gather" | "reduction" | "contraction" | "update" |
    #            "source"
    nin: int
    ref: Callable[..., Any] | None
    c: Callable[[list[str], str], str] | None = None
    cost: int = 1
    errors: tuple[ErrorCheck, ...] = field(default_factory=tuple)
    ufunc_name: str | None = None  # name of the NumPy/SciPy ufunc this op implements
    # float32 -> float32 over a tile of points in vector code (codegen/include/fj_vtile.h):
    # call-staged kernels call fj_tile_<tile>_f32 instead of a loop over the C expression
    tile: str | None = None
    # Reverse-mode rule (installed by frontend/vjp_rules.py with set_vjp; tests check each op)
    vjp: Any = None
    # an elementwise op whose inputs may differ in dtype (its C takes each input's own type):
    # cast, where's bool condition, ldexp's integer exponent, ndarray.view's bitcasts
    mixed_inputs: bool = False
    # other input counts a node of this op may have (a filter scan's b, a and zi)
    more_inputs: tuple[int, ...] = ()


def set_vjp(name: str, rule: Any) -> None:
    """Give op `name` its vector-Jacobian product (kept on the record itself)."""
    object.__setattr__(OPS[name], "vjp", rule)


def _is_float(sfx: str) -> bool:
    return sfx.startswith("f")


def placeholders(n: int) -> str:
    return ", ".join("{" + str(i) + "}" for i in range(n))


def _libm(name: str) -> Callable[[list[str], str], str]:
    """A libm function: `namef` for float32, `name` for float64."""

    def render(ins: list[str], out: str) -> str:
        fn = name + ("f" if out == "f32" else "")
        return f"{fn}({placeholders(len(ins))})"

    return render


def _helper(name: str) -> Callable[[list[str], str], str]:
    """A fusejit helper from fj_scalar.h, typed by the first input's suffix."""

    def render(ins: list[str], out: str) -> str:
        return f"fj_{name}_{ins[0]}({placeholders(len(ins))})"

    return render


def _helper_by_out(name: str) -> Callable[[list[str], str], str]:
    """A fusejit helper typed by the output suffix (float16 never reaches here)."""
    return lambda ins, out: f"fj_{name}_{out}({{0}})"


def _vmath_f32(name: str, other: Callable[[list[str], str], str]
               ) -> Callable[[list[str], str], str]:
    """float32: fusejit's own vectorisable `fj_NAME_f32` (fj_vmath_f32.h); else `other`."""

    def render(ins: list[str], out: str) -> str:
        return f"fj_{name}_f32({{0}})" if out == "f32" else other(ins, out)

    return render


def _infix(sym: str, bool_sym: str | None = None) -> Callable[[list[str], str], str]:
    def render(ins: list[str], out: str) -> str:
        s = bool_sym if (bool_sym and ins[0] == "b") else sym
        return f"({{0}} {s} {{1}})"

    return render


def _float_or(float_render, int_render):
    def render(ins: list[str], out: str) -> str:
        return (float_render if _is_float(ins[0]) else int_render)(ins, out)

    return render


def _const(text: str):
    return lambda ins, out: text


def fixed_expr(text: str):
    return lambda ins, out: text


OPS: dict[str, OpDef] = {}


def add_op(op: OpDef) -> None:
    OPS[op.name] = op


def _ufunc(name: str, c, cost: int = 1, errors: tuple[ErrorCheck, ...] = (), uname: str = "",
           nin: int = 0) -> None:
    uname = uname or name
    uf = getattr(np, uname, None)
    add_op(OpDef(name, "elementwise", nin or (uf.nin if uf is not None else 1), uf, c, cost,
               errors, uname))


# --- arithmetic -----------------------------------------------------------------------------
_ufunc("add", _infix("+", "|"))
_ufunc("subtract", _infix("-"))
_ufunc("multiply", _infix("*", "&"))
_ufunc("divide", _infix("/"), cost=4)
_ufunc("floor_divide", _helper("floordiv"), cost=6)
_ufunc("remainder", _helper("remainder"), cost=6)
_ufunc("fmod", _float_or(_libm("fmod"), _helper("fmod")), cost=6)
# float power: fj_pow_f32/_f64 (fj_vpow.h), vectorisable powf/pow (libmvec's powf is scalar for
# negative bases); integer power: fj_scalar.h's exact wrap-around helper.
_ufunc("power", _float_or(lambda i, o: f"fj_pow_{o}({{0}}, {{1}})", _helper("power")), cost=20,
       errors=(ERR_INT_NEG_POWER,))
# (floats: fj_neg_T flips the sign bit; gcc folds `-x` of an fma into an fnmsub, +0 for -0)
_ufunc("negative", lambda i, o: f"fj_neg_{o}({{0}})" if o in ("f32", "f64") else "(-{0})")
_ufunc("positive", fixed_expr("({0})"))
_ufunc("conjugate", fixed_expr("({0})"))  # real dtypes only: a copy
_ufunc("absolute", lambda i, o: "({0})" if i[0] == "b" else
       (_libm("fabs")(i, o) if _is_float(i[0]) else _helper("abs")(i, o)))
_ufunc("fabs", _libm("fabs"))
_ufunc("sign", _helper("sign"))
_ufunc("reciprocal", _helper("reciprocal"), cost=4)
_ufunc("square", _helper("square"))
_ufunc("maximum", lambda i, o: "({0} | {1})" if i[0] == "b" else _helper("maximum")(i, o))
_ufunc("minimum", lambda i, o: "({0} & {1})" if i[0] == "b" else _helper("minimum")(i, o))
_ufunc("fmax", _float_or(_libm("fmax"), lambda i, o: "({0} > {1} ? {0} : {1})"))
_ufunc("fmin", _float_or(_libm("fmin"), lambda i, o: "({0} < {1} ? {0} : {1})"))
_ufunc("heaviside", _helper("heaviside"))
_ufunc("spacing", _helper("spacing"), cost=4)
_ufunc("gcd", _helper("gcd"), cost=40)  # integers only (NumPy has no float or bool loop)
_ufunc("lcm", _helper("lcm"), cost=40)
_ufunc("deg2rad", _helper("deg2rad"))
_ufunc("rad2deg", _helper("rad2deg"))
_ufunc("degrees", _helper("rad2deg"))
_ufunc("radians", _helper("deg2rad"))
# --- transcendental -------------------------------------------------------------------------
for _n, _c in [("sqrt", "sqrt"), ("cbrt", "cbrt"), ("exp2", "exp2"),
               ("expm1", "expm1"), ("log2", "log2"), ("log10", "log10"),
               ("log1p", "log1p"), ("tan", "tan"),
               ("arcsin", "asin"), ("arccos", "acos"), ("arctan", "atan"), ("sinh", "sinh"),
               ("cosh", "cosh"), ("arcsinh", "asinh"), ("arccosh", "acosh"),
               ("arctanh", "atanh"), ("arctan2", "atan2"), ("hypot", "hypot"),
               ("copysign", "copysign"), ("nextafter", "nextafter")]:
    _ufunc(_n, _libm(_c), cost=1 if _n in ("copysign", "sqrt") else 20)
# float32 exp, tanh and log (and erf below): fj_vmath_f32.h, its own branch-free code gcc vectorises
# (within 1.05 ULP) or libmvec's, whichever is faster on the build; float64 stays libm/libmvec.
_ufunc("exp", _vmath_f32("exp", _libm("exp")), cost=20)
_ufunc("tanh", _vmath_f32("tanh", _libm("tanh")), cost=20)
_ufunc("log", _vmath_f32("log", _libm("log")), cost=20)
for _n in ("exp", "tanh", "log"):
    OPS[_n] = dataclasses.replace(OPS[_n], tile=_n)
# fj_sin/fj_cos (fj_vmath.h) keep gcc from merging sin and cos of one value into sincos,
# which has no vector variant.
_ufunc("sin", _helper_by_out("sin"), cost=20)
_ufunc("cos", _helper_by_out("cos"), cost=20)
_ufunc("logaddexp", _helper("logaddexp"), cost=40)
_ufunc("logaddexp2", _helper("logaddexp2"), cost=40)
# --- rounding -------------------------------------------------------------------------------
for _n in ("floor", "ceil", "trunc"):
    _ufunc(_n, _float_or(_libm(_n), fixed_expr("({0})")))
_ufunc("rint", _float_or(_helper("rint"), fixed_expr("({0})")))
# --- predicates -----------------------------------------------------------------------------
_ufunc("isnan", _float_or(fixed_expr("(isnan({0}) != 0)"), _const("0")))
_ufunc("isinf", _float_or(fixed_expr("(isinf({0}) != 0)"), _const("0")))
_ufunc("isfinite", _float_or(fixed_expr("(isfinite({0}) != 0)"), _const("1")))
_ufunc("signbit", _float_or(fixed_expr("(signbit({0}) != 0)"), fixed_expr("({0} < 0)")))
# --- comparison and logic -------------------------------------------------------------------
for _n, _s in [("equal", "=="), ("not_equal", "!="), ("less", "<"), ("less_equal", "<="),
               ("greater", ">"), ("greater_equal", ">=")]:
    _ufunc(_n, _infix(_s))
_ufunc("logical_and", fixed_expr("(({0} != 0) & ({1} != 0))"))
_ufunc("logical_or", fixed_expr("(({0} != 0) | ({1} != 0))"))
_ufunc("logical_xor", fixed_expr("(({0} != 0) ^ ({1} != 0))"))
_ufunc("logical_not", fixed_expr("({0} == 0)"))
for _n, _s in [("bitwise_and", "&"), ("bitwise_or", "|"), ("bitwise_xor", "^")]:
    _ufunc(_n, _infix(_s))
_ufunc("invert", lambda i, o: "({0} ^ 1)" if i[0] == "b" else "(~{0})")
_ufunc("left_shift", _helper("lshift"))
_ufunc("right_shift", _helper("rshift"))
_ufunc("bitwise_count", _helper("bitwise_count"), cost=4)  # integers only: a uint8 count
# --- SciPy special functions (resolved lazily: importing scipy is slow) ---------------------
for _n, _r in [("erf", _vmath_f32("erf", _libm("erf"))), ("erfc", _libm("erfc")),
               ("expit", _helper("expit"))]:
    add_op(OpDef(_n, "elementwise", 1, None, _r, 20, (), _n, tile="erf" if _n == "erf" else None))
# --- non-ufunc elementwise ------------------------------------------------------------------
add_op(OpDef("where", "elementwise", 3, np.where, lambda i, o: (  # float: fj_where_T (fj_scalar.h)
    f"fj_where_{o}({{0}}, {{1}}, {{2}})" if o in ("f32", "f64") else "({0} ? {1} : {2})"),
    mixed_inputs=True))
add_op(OpDef("clip", "elementwise", 3, np.clip,
           lambda i, o: ("(({0} | {1}) & {2})" if i[0] == "b" else
                         f"fj_minimum_{i[0]}(fj_maximum_{i[0]}({{0}}, {{1}}), {{2}})")))


def _clip_keep(x: np.ndarray, lo: np.ndarray, hi: np.ndarray) -> np.ndarray:
    """np.clip as NumPy's loop for bounds of stride 0 computes it: a tie keeps x."""
    x, lo, hi = np.asarray(x), np.asarray(lo), np.asarray(hi)
    with np.errstate(invalid="ignore"):
        t = np.where(np.isnan(x) | (x >= lo), x, lo)
        return np.where(np.isnan(t) | (t <= hi), t, hi)


# a float clip whose bounds are one value each (frontend/numpy_api.py _clip_keeps_ties)
add_op(OpDef("clip_keep", "elementwise", 3, _clip_keep,
             lambda i, o: f"fj_clipk_{i[0]}({{0}}, {{1}}, {{2}})"))
add_op(OpDef("cast", "elementwise", 1, lambda x, dtype: x.astype(dtype),
           lambda i, o: "({0} != 0)" if o == "b" else "({0})", mixed_inputs=True))
add_op(OpDef("copy", "elementwise", 1, np.copy, fixed_expr("({0})")))
# --- views: index maps over their input (lowering/views.py gives each its map) --------------


def view_reference(x: np.ndarray, start: tuple[int, ...], dims: tuple[tuple[int, int], ...],
                   shape: tuple[int, ...]) -> np.ndarray:
    """Evaluate a `view`: out[i] = x[start + sum over out dims d of step_d * i_d on axis_d]."""
    if 0 in shape:
        return np.empty(shape, x.dtype)
    grids = np.indices(shape, sparse=True) if shape else []
    index: list[Any] = list(start)
    for d, (axis, step) in enumerate(dims):
        if axis >= 0:
            index[axis] = index[axis] + step * grids[d]
    picked = x[tuple(index)] if index else x
    return np.array(np.broadcast_to(picked, shape))


# One view op covers broadcasting, transposes, slicing with steps, split, integer indexing,
# expand_dims and squeeze: each output dim d reads input axis dims[d][0] (or none, -1: a
# broadcast dim) with step dims[d][1]; every input axis starts at start[axis].
add_op(OpDef("view", "view", 1, view_reference))
# A reshape that merges axes: the same memory read with NumPy's no-copy reshape strides
# (frontend/reshape.py); its input's view chain is stored by fusion, lowering reads through.
add_op(OpDef("reshape", "view", 1, lambda x, shape: np.reshape(x, shape)))
# --- reductions: fn (sum, prod, max, min, any, all, argmax, argmin) over `axes` ------------


def reduce_reference(x: np.ndarray, fn: str, axes: tuple[int, ...], keepdims: bool) -> Any:
    """Evaluate a `reduce` node with NumPy (arg-reductions over several axes flatten them)."""
    if fn in ("argmax", "argmin"):
        if len(axes) == 1:
            return getattr(np, fn)(x, axis=axes[0], keepdims=keepdims)
        flat = getattr(np, fn)(x.reshape(-1))
        return np.reshape(flat, (1,) * x.ndim) if keepdims else flat
    with np.errstate(all="ignore"):
        return getattr(np, fn)(x, axis=axes, keepdims=keepdims)


add_op(OpDef("reduce", "reduction", 1, reduce_reference, cost=1))
# --- updates: `old` with a view's region replaced by `value` (x[1:3] = v, through views) ----


def scatter_reference(old: np.ndarray, value: np.ndarray, *index: np.ndarray,
                      start: tuple[int, ...], dims: tuple[tuple[int, int], ...],
                      vshape: tuple[int, ...] | None = None, axes: tuple[int, ...] = (),
                      fn: str | None = None, loop: Any = None, check: str = "raise"
                      ) -> np.ndarray:
    """Evaluate a `scatter`: a copy of old whose view (start, dims) is set to value; with
    index arrays (frontend/scatter.py), the positions view[index along axes] are set (the
    last assignment to a repeated one wins), or with `fn` updated by ufunc.at."""
    out = np.array(old, copy=True, order="C")  # C order: out.reshape(-1) below is a view
    if index:
        assert vshape is not None
        flat = view_reference(np.arange(max(old.size, 1)).reshape(old.shape) if old.size
                              else np.zeros(old.shape, np.intp), start, dims, vshape)
        if check == "bincount" and any(np.any((i < 0) | (i >= vshape[a]))
                                       for i, a in zip(index, axes)):
            raise ValueError(Status.BINCOUNT_RANGE.message)
        pos = gather_reference(flat, *index, axes=axes, mode="raise").reshape(-1)
        vals = np.asarray(value).reshape(-1)
        target = out.reshape(-1)
        if fn is None:
            target[pos] = vals
        else:
            with np.errstate(all="ignore"):
                getattr(np, OPS[fn].ufunc_name or fn).at(target, pos, vals)
        return out
    if value.size == 0:
        return out
    grids = np.indices(value.shape, sparse=True) if value.ndim else []
    index: list[Any] = list(start)
    for d, (axis, step) in enumerate(dims):
        if axis >= 0:
            index[axis] = index[axis] + step * grids[d]
    out[tuple(np.broadcast_to(i, value.shape) for i in index)] = value
    return out


add_op(OpDef("scatter", "update", 2, scatter_reference, errors=(ERR_BINCOUNT_RANGE,)))
# --- scans: fn.accumulate along `axis` in dtype `dtype` (np.cumsum, ufunc.accumulate) -------


# scans that are linear filters along their axis (frontend/scipy_filter.py): a second input
# is the initial state zi, attrs b and a the coefficients
FILTER_SCANS = frozenset({"lfilter", "sosfilt"})


def scan_reference(x: np.ndarray, fn: str, axis: int, b: np.ndarray | None = None,
                   a: np.ndarray | None = None, zi: np.ndarray | None = None) -> np.ndarray:
    """Evaluate a `scan`: NumPy's accumulate of binary op `fn` along `axis` (x already has
    the result's dtype); fn "lfilter": scipy.signal.lfilter's output with coefficients `b`,
    `a` (divided by a[0]) from state `zi` (None: zeros); "sosfilt": one section's sosfilt."""
    if fn in FILTER_SCANS:
        import scipy.signal

        with np.errstate(all="ignore"):
            if fn == "sosfilt":
                sos = np.concatenate([np.atleast_2d(b), np.atleast_2d(a)], axis=1)
                if zi is None:
                    return scipy.signal.sosfilt(sos, x, axis=axis)
                return scipy.signal.sosfilt(sos, x, axis=axis, zi=zi[None])[0]
            if zi is None:
                return scipy.signal.lfilter(b, a, x, axis=axis)
            return scipy.signal.lfilter(b, a, x, axis=axis, zi=zi)[0]
    with np.errstate(all="ignore"):
        return getattr(np, OPS[fn].ufunc_name or fn).accumulate(x, axis=axis, dtype=x.dtype)


add_op(OpDef("scan", "scan", 1, scan_reference, more_inputs=(3, 4)))
# An array whose every element is written by the scatters that use it (np.concatenate):
# it has no value of its own, so the scatter chain needs no fill kernel.
add_op(OpDef("empty", "source", 0, lambda shape, dtype: np.zeros(shape, dtype)))
# --- gathers: src indexed by integer arrays along `axes` (x[idx], x[:, i, j], np.take) -------


# inputs: (src, index_1, ..., index_k); attrs: axes (k source axes), mode. `nin` is the least.
add_op(OpDef("gather", "gather", 2, gather_reference, errors=(ERR_INDEX_RANGE,)))
# --- contractions: (batch..., M, K) @ (batch..., K, N), same batch shape and dtype ------------
add_op(OpDef("matmul", "contraction", 2, np.matmul, cost=1))
# --- LAPACK: stacked square matrices in, one stored result (frontend/lapack_ref.py) -------------
add_op(OpDef("lapack", "library", 1, lapack_ref, cost=1))
add_op(OpDef("lapack_solve", "library", 2, lapack_solve_ref, cost=1))
# --- sources --------------------------------------------------------------------------------
add_op(OpDef("input", "source", 0, None))
add_op(OpDef("const", "source", 0, None))

# More scipy.special ufuncs and the check_* ops of NumPy functions' run-time errors
from . import ops_complex as _ops_complex  # noqa: E402
from .ops_more import (  # noqa: E402  (adds them to OPS)
    CHECKS,
    PRIVATE_UFUNCS,
    SCIPY_ALIASES,
    SPECIAL_UFUNCS,
)

ERROR_CHECKS.update((e.code, e) for e in CHECKS)
_ops_complex.install(OPS, OpDef)  # complex renderings of the ops that take complex operands
ELEMENTWISE_UFUNCS = {op.ufunc_name: op for op in OPS.values() if op.ufunc_name}
_SCIPY_NAMES = ("erf", "erfc", "expit", *SPECIAL_UFUNCS)


def lookup_ufunc(ufunc: np.ufunc) -> OpDef | None:
    """The op implementing `ufunc`, or None. SciPy ufuncs are matched by identity."""
    name = ufunc.__name__
    # by identity: scipy.special.digamma's __name__ is "psi"; under SCIPY_ARRAY_API=1 the
    # names of scipy.special are wrappers of the ufuncs (functools.wraps: `__wrapped__`)
    special = sys.modules.get("scipy.special")
    for sp_name in (*_SCIPY_NAMES, *SCIPY_ALIASES) if special is not None else ():
        f = getattr(special, sp_name, None)
        if f is ufunc or getattr(f, "__wrapped__", None) is ufunc:
            return OPS[sp_name] if sp_name in _SCIPY_NAMES else ELEMENTWISE_UFUNCS[sp_name]
    private = sys.modules.get("scipy.special._ufuncs")
    if name.startswith("_") and private is not None:
        op = OPS.get(name[1:]) if name[1:] in PRIVATE_UFUNCS else None
        return op if op is not None and getattr(private, name, None) is ufunc else None
    if name in _SCIPY_NAMES:
        return None
    if getattr(np, name, None) is ufunc or (name == "divide" and ufunc is np.true_divide):
        return ELEMENTWISE_UFUNCS.get(name)
    if name in ("absolute", "fabs") and ufunc in (np.absolute, np.fabs):
        return OPS[name]
    return None


def reference(op: OpDef) -> Callable[..., Any]:
    """The NumPy/SciPy callable that defines `op` (SciPy imported on demand)."""
    if op.ref is not None:
        return op.ref
    import scipy.special

    return getattr(scipy.special, op.ufunc_name or op.name)


Operand = np.dtype | type  # a dtype, or the Python type of a weak scalar (int/float)


def resolve_ufunc(ufunc: np.ufunc, operands: list[Any]) -> tuple[list[np.dtype], np.dtype]:
    """Ask NumPy for the loop input dtypes and output dtype of `ufunc(*operands)`.

    `operands` holds dtypes (for arrays/NumPy scalars) or concrete Python scalars (weak,
    NEP 50). NumPy itself is called on empty arrays, so its exceptions (OverflowError for an
    out-of-range Python int, TypeError for unsupported loops) are raised exactly as NumPy would.
    """
    probes = [np.empty(0, d) if isinstance(d, np.dtype) else d for d in operands]
    with np.errstate(all="ignore"):
        result = ufunc(*probes)
    out_dtype = np.asarray(result).dtype
    if not any(isinstance(d, np.dtype) for d in operands):
        # Only Python scalars: NumPy converts them to arrays (int64/float64/bool) first.
        operands = [np.asarray(d).dtype for d in operands]
    spec = tuple(d if isinstance(d, np.dtype) else
                 (np.dtype(bool) if isinstance(d, (bool, np.bool_)) else type(d))
                 for d in operands)
    loop = ufunc.resolve_dtypes(spec + (None,) * ufunc.nout)
    return list(loop[: ufunc.nin]), out_dtype
