"""complex64 / complex128 in the op table: which ops take complex operands and the C each one
renders to (codegen/include/fj_complex.h holds the helpers), plus the ops that move between a
complex value and its two real parts (`real`, `imag`, `complex_pack`).

An op that is not listed here refuses complex operands at trace time
(`check_complex`): its real rendering would compute something else."""

from __future__ import annotations

import dataclasses
from collections.abc import Callable

import numpy as np

from ..errors import UnsupportedError

Render = Callable[[list[str], str], str]


def _is_complex(sfx: str) -> bool:
    return sfx.startswith("c")


def _lib(name: str) -> Render:
    """A libm complex function: `namef` for complex64, `name` for complex128 (declared as
    fj_lm_<name> in fj_complex.h, so that gcc cannot fold it at compile time)."""
    return lambda i, o: f"fj_lm_{name}{'f' if i[0] == 'c64' else ''}({{0}})"


def _fj(name: str, n: int = 1) -> Render:
    args = ", ".join("{" + str(k) + "}" for k in range(n))
    return lambda i, o: f"fj_{name}_{i[0]}({args})"


def _parts(expr: str) -> Render:
    """`expr` over `R` (real part) and `I` (imaginary part) of operand 0."""
    return lambda i, o: "(" + expr.replace("R", "__real__ ({0})").replace(
        "I", "__imag__ ({0})") + ")"


# Ops whose complex form NumPy defines and fusejit renders; everything else is refused.
COMPLEX_C: dict[str, Render] = {
    "add": lambda i, o: "({0} + {1})",
    "subtract": lambda i, o: "({0} - {1})",
    "multiply": _fj("cmul", 2),
    "divide": _fj("cdiv", 2),
    "negative": _fj("cneg"),
    "positive": lambda i, o: "({0})",
    "conjugate": _fj("cconj"),
    "absolute": _fj("cabs"),
    "square": _fj("csquare"),
    "reciprocal": _fj("crecip"),
    "power": _fj("cpow", 2),
    "exp": _lib("cexp"),
    "log": _lib("clog"),
    "sqrt": _lib("csqrt"),
    "sin": _lib("csin"), "cos": _lib("ccos"), "tan": _lib("ctan"),
    "sinh": _lib("csinh"), "cosh": _lib("ccosh"), "tanh": _lib("ctanh"),
    "arcsin": _lib("casin"), "arccos": _lib("cacos"), "arctan": _lib("catan"),
    "arcsinh": _lib("casinh"), "arccosh": _lib("cacosh"), "arctanh": _lib("catanh"),
    "log2": _fj("clog2"), "log10": _fj("clog10"), "exp2": _fj("cexp2"),
    "log1p": _fj("clog1p"), "expm1": _fj("cexpm1"), "sign": _fj("csign"),
    "rint": lambda i, o: (lambda f: f"fj_cpack_{i[0]}(rint{f}(__real__ ({{0}})), "
                          f"rint{f}(__imag__ ({{0}})))")("f" if i[0] == "c64" else ""),
    "equal": lambda i, o: "({0} == {1})",
    "not_equal": lambda i, o: "({0} != {1})",
    "less": _fj("clt", 2),
    "less_equal": _fj("cle", 2),
    "greater": _fj("cgt", 2),
    "greater_equal": _fj("cge", 2),
    "maximum": _fj("cmaximum", 2), "minimum": _fj("cminimum", 2),
    "fmax": _fj("cfmax", 2), "fmin": _fj("cfmin", 2),
    "clip": _fj("cclip", 3),
    "isnan": _parts("isnan(R) || isnan(I)"),
    "isinf": _parts("isinf(R) || isinf(I)"),
    "isfinite": _parts("isfinite(R) && isfinite(I)"),
    "logical_and": lambda i, o: "(({0} != 0) & ({1} != 0))",
    "logical_or": lambda i, o: "(({0} != 0) | ({1} != 0))",
    "logical_xor": lambda i, o: "(({0} != 0) ^ ({1} != 0))",
    "logical_not": lambda i, o: "({0} == 0)",
    "where": lambda i, o: "({0} ? {1} : {2})",
    "copy": lambda i, o: "({0})",
    "real": lambda i, o: "(__real__ ({0}))",
    "imag": lambda i, o: "(__imag__ ({0}))",
    "complex_pack": lambda i, o: f"fj_cpack_{o}({{0}}, {{1}})",
}


def _dispatch(real: Render | None, cplx: Render) -> Render:
    def render(ins: list[str], out: str) -> str:
        if real is None or any(_is_complex(s) for s in ins):
            return cplx(ins, out)
        return real(ins, out)

    return render


def _pack_ref(re: np.ndarray, im: np.ndarray) -> np.ndarray:
    """complex_pack's NumPy meaning: re + i*im with both parts kept exactly (Inf, NaN, -0.0)."""
    re, im = np.broadcast_arrays(np.asarray(re), np.asarray(im))
    out = np.empty(re.shape, np.result_type(re.dtype, im.dtype, np.complex64))
    out.real, out.imag = re, im
    return out


PART_OPS = ("real", "imag", "complex_pack")  # complex <-> its parts (no NumPy ufunc)


def install(ops: dict, opdef: type) -> None:
    """Add the part ops and give every listed op its complex rendering (ops.py calls this)."""
    ops["real"] = opdef("real", "elementwise", 1, lambda z: np.array(np.real(z)))
    ops["imag"] = opdef("imag", "elementwise", 1, lambda z: np.array(np.imag(z)))
    ops["complex_pack"] = opdef("complex_pack", "elementwise", 2, _pack_ref)
    for name, render in COMPLEX_C.items():
        op = ops[name]
        ops[name] = dataclasses.replace(op, c=_dispatch(op.c, render))


# Reductions that order values: complex ones are composed of real reductions before a node is
# made (frontend/complex_order.py), so a complex `reduce` node with one of these is refused.
ORDERED = frozenset({"max", "min", "argmax", "argmin"})


def check_complex(op_name: str, dtypes: list[np.dtype], where: str) -> None:
    """Raise UnsupportedError when `op_name` has complex operands but no complex rendering."""
    if op_name in COMPLEX_C or not any(np.dtype(d).kind == "c" for d in dtypes):
        return
    raise UnsupportedError(f"{op_name} of complex values is not supported by fusejit{where}"
                           " (complex numbers support + - * / **, abs, angle, conj, real, imag,"
                           " exp, log, sqrt, square, reciprocal, the trigonometric and "
                           "hyperbolic functions and their inverses, log2/log10/exp2/log1p/"
                           "expm1, sign, rint, comparisons, maximum/minimum/fmax/fmin, clip, "
                           "isnan/isinf/isfinite, sum/prod/mean, max/min/argmax/argmin and "
                           "matmul); compute it outside the compiled function")


def check_complex_node(op: str, dtypes: list[np.dtype], attrs: dict, where: str) -> None:
    """The trace-time guard on every new node with a complex operand or result: elementwise
    ops need a complex rendering, reductions may only sum/multiply (or test), scans and
    LAPACK calls refuse complex values."""
    from .ops import OPS

    kind = OPS[op].kind if op in OPS else ""
    if kind == "elementwise" and op != "cast":
        check_complex(op, dtypes, where)
    elif op == "reduce" and attrs.get("fn") in ORDERED:
        raise UnsupportedError(f"np.{attrs['fn']} of complex values is not supported by fusejit"
                               f"{where} (as one reduce node: np.max/min/argmax/argmin compose "
                               "it of real reductions, frontend/complex_order.py)")
    elif (kind == "library" and attrs.get("fn") != "lstsq"
          or kind == "scan" and attrs.get("fn") not in COMPLEX_C
          or op == "scatter" and attrs.get("fn") and attrs["fn"] not in COMPLEX_C):
        raise UnsupportedError(f"{op} ({attrs.get('fn') or attrs.get('kind') or op}) of complex "
                               f"values is not supported by fusejit{where}")
