"""C-family expression rendering shared by the C and CUDA backends: literals, casts, ops."""

from __future__ import annotations

import math
from collections.abc import Callable, Iterable
from typing import Any

import numpy as np

from ..frontend.ops import OPS, ctype, suffix
from ..lowering.loop_ir import Access, Check, Compute, Const, Load, Program, Stmt, Store

_INT_SUFFIX = {"int64": "LL", "uint64": "ULL", "uint32": "U"}


def literal(value: Any, dtype: np.dtype) -> str:
    """An exact C literal of `value` in `dtype` (hex floats, NaN/Inf builtins, INT64_MIN)."""
    dtype = np.dtype(dtype)
    if dtype.kind == "b":
        return "1" if value else "0"
    if dtype.kind in "iu":
        v = int(value)
        if dtype.kind == "i" and v == int(np.iinfo(dtype).min):
            return f"(({ctype(dtype)})({v + 1}{_INT_SUFFIX.get(dtype.name, '')} - 1))"
        return f"(({ctype(dtype)}){v}{_INT_SUFFIX.get(dtype.name, '')})"
    if dtype.kind == "c":
        part = np.dtype(np.float32 if dtype == np.complex64 else np.float64)
        v = complex(value)
        return (f"__builtin_complex({literal(v.real, part)}, {literal(v.imag, part)})")
    v = float(value)
    f = "f" if dtype == np.float32 else ""
    if math.isnan(v):
        text = f"__builtin_nan{f}(\"\")"
        text = f"(-{text})" if math.copysign(1.0, v) < 0 else text
    elif math.isinf(v):
        text = f"__builtin_inf{f}()" if v > 0 else f"(-__builtin_inf{f}())"
    else:
        text = f"{v.hex()}{f}"
    return f"(({ctype(dtype)}){text})" if dtype == np.float16 else text


def x86_int(arg: str, bits: int) -> str:
    """(int{bits}_t)(arg) of a float with x86's answer where C's is undefined: the
    "indefinite integer" (INT_MIN) for NaN and values out of range. Written out (the
    truncation masked by the range test, no branch) so that no compiler folds a constant
    operand its own way (gcc saturates `(int)NaN` to 0 once `where(c, nan, x)` puts a constant
    in an arm), and CUDA, whose conversion saturates, gives it too."""
    u, lo = f"uint{bits}_t", f"0x1p{bits - 1}"
    top = "0x80000000u" if bits == 32 else "0x8000000000000000ULL"
    # |x| < 2**(bits-1): in range (x = -2**(bits-1) and (-2**(bits-1) - 1, -2**(bits-1)] are
    # too, but truncate to INT_MIN, the indefinite integer: the same answer)
    ok = f"(-({u})(__builtin_fabs((double)({arg})) < {lo}))"
    return (f"((int{bits}_t)((({u})(int{bits}_t)({arg}) & {ok}) | ({top} & ~{ok})))")


def cast_expr(src: np.dtype, dst: np.dtype, arg: str) -> str:
    """C conversion with NumPy's results for the cases C leaves to the implementation."""
    if dst.kind == "b":
        return f"({arg} != 0)"
    if src == np.complex128 and dst == np.complex64:  # gcc 12 drops a plain cast's rounding
        return f"fj_cnarrow_c64({arg})"
    if src.kind == "c" and dst.kind == "i":  # NumPy: a plain C cast of the real part
        return f"(({ctype(dst)})(__real__ ({arg})))"
    if src.kind == "c" and dst.kind != "c":  # NumPy drops the imaginary part
        part = np.dtype(np.float32 if src == np.complex64 else np.float64)
        return cast_expr(part, dst, f"__real__ ({arg})")
    if src.kind == "f" and dst.kind in "iu" and (dst.itemsize < 4 or dst == np.int32):
        # NumPy's (x86's) result: truncation to int32 (cvttsd2si; INT_MIN for NaN and out of
        # range, which C leaves undefined), then wrap-around to the narrower type
        return f"(({ctype(dst)}){x86_int(arg, 32)})"
    if src.kind == "f" and dst == np.uint32:
        # NumPy's scalar loop (its SIMD loop differs beyond 2**31: NumPy itself answers by
        # array length there): through int64, wrapped
        return f"((uint32_t){x86_int(arg, 64)})"
    if src.kind == "f" and dst == np.uint64:
        # NumPy's (gcc's generic) conversion through int64, not AVX-512's vcvttsd2usi, which
        # gives all ones for negative values
        high = x86_int(f"((double)({arg}) - 0x1p63)", 64)
        return (f"((double)({arg}) >= 0x1p63 ? ((uint64_t){high} "
                f"^ 0x8000000000000000ULL) : (uint64_t){x86_int(arg, 64)})")
    if src.kind == "f" and dst == np.int64:
        return x86_int(arg, 64)
    if src.kind in "biu" and src.itemsize < 4 and dst.kind == "f":
        # Exact through int32; GCC does not vectorise a uint8 -> float conversion of a value
        # computed in the same loop (`acc * (h > 0)`), but does through int32.
        return f"(({ctype(dst)})(int32_t)({arg}))"
    return f"(({ctype(dst)})({arg}))"


def compute_expr(stmt: Compute) -> str:
    """The right-hand side of a Compute statement."""
    if stmt.op == "cast":
        return cast_expr(stmt.in_dtypes[0], stmt.dtype, stmt.args[0])
    op = OPS[stmt.op]
    assert op.c is not None, f"op {stmt.op} has no C rendering"
    template = op.c([suffix(d) for d in stmt.in_dtypes], suffix(stmt.dtype))
    return f"(({ctype(stmt.dtype)}){template.format(*stmt.args)})"


def check_expr(stmt: Check) -> str:
    check = next(c for c in OPS[stmt.op].errors if c.code == stmt.code)
    return check.cond.format(*stmt.args)


def const_expr(stmt: Const) -> str:
    return literal(stmt.value, stmt.dtype)


def gather_terms(load: Load) -> str:
    """The data-dependent part of a gathered load's element index (empty for other loads):
    each index value as int64 (NumPy's conversion to intp), made an element index by
    fj_ix_<mode> (fj_scalar.h), times its axis stride."""
    return "".join(f" + fj_ix_{t.mode}((int64_t)({t.var}), {t.extent}LL) * {t.stride}"
                   for t in load.index)


def point_lines(stmts: Iterable[Stmt], program: Program,
                pointer: Callable[[Access, np.dtype], tuple[str, int | str]],
                gathered: dict[str, str] | None = None) -> list[str]:
    """C statements of an elementwise body at point `j` of a row: loads, constants, computes,
    error checks and stores, memory reached through the row pointer that `pointer(access,
    dtype)` names (with its stride along the row: a number, or the name of a variable that
    holds it). `gathered` names, per gathered load, a row pointer that already holds its
    index terms (their values are the same along the row)."""
    def index(s: int | str) -> str:
        return "0" if s == 0 else ("j" if s == 1 else f"j * {s}")

    lines: list[str] = []
    for s in stmts:
        if isinstance(s, Load):
            p, st = pointer(s.access, s.dtype)
            terms = gather_terms(s)
            if gathered and s.var in gathered:
                p, terms = gathered[s.var], ""
            lines.append(f"const {ctype(s.dtype)} {s.var} = {p}[{index(st)}{terms}];")
        elif isinstance(s, Const):
            lines.append(f"const {ctype(s.dtype)} {s.var} = {const_expr(s)};")
        elif isinstance(s, Compute):
            lines.append(f"const {ctype(s.dtype)} {s.var} = {compute_expr(s)};")
        elif isinstance(s, Check):
            lines.append(f"fj_err |= ({check_expr(s)}) ? {s.code} : 0;")
        elif isinstance(s, Store):
            p, st = pointer(s.access, program.buffers[s.access.buf].dtype)
            lines.append(f"{p}[{index(st)}] = {s.var};")
    return lines


def invariant_stmts(body: list[Stmt], fixed_load: Callable[[Load], bool]
                    ) -> tuple[set[int], set[str]]:
    """ids of the statements whose value is the same at every point of a row, and the
    variables they define: constants, loads for which `fixed_load` says the access does not
    move along the row (and whose gather indices are such values), and what is computed or
    checked from them. The renderers run them once per row, before the point loop: gcc does
    not move them out itself when they hold a check (fj_err) or a gather."""
    fixed: set[str] = set()
    out: set[int] = set()
    for s in body:
        if isinstance(s, Const):
            ok = True
        elif isinstance(s, Load):
            ok = fixed_load(s) and all(t.var in fixed for t in s.index)
        elif isinstance(s, (Compute, Check)):
            ok = all(a in fixed for a in s.args)
        else:
            ok = False
        if ok:
            out.add(id(s))
            if not isinstance(s, Check):
                fixed.add(s.var)
    return out, fixed


def buffer_types(program: Program, stored: Iterable[int]) -> dict[int, tuple[str, bool]]:
    """{buffer: (C element type, written by the kernel)} for every buffer of `program`."""
    written = set(stored)
    return {b.index: (ctype(b.dtype), b.index in written) for b in program.buffers}


def buffer_decls(used: Iterable[int], types: dict[int, tuple[str, bool]],
                 indent: str = "    ") -> list[str]:
    """A kernel's prologue: `b<buf>`, the typed pointer to each buffer it uses, cast from
    `fj_buf` (const unless the kernel writes the buffer)."""
    lines = []
    for b in used:
        t, written = types[b]
        const = "" if written else "const "
        lines.append(f"{indent}{const}{t} *const b{b} = ({const}{t} *)fj_buf[{b}];")
    return lines


class RowPointers:
    """The `pointer(access, dtype)` of a row kernel (see point_lines): one `p<k>` per distinct
    (buffer, offset, outer strides), declared once as `b<buf>` plus the outer loop indices
    `i<d>` times their strides (const unless the buffer is in `stored`); the declarations are
    appended to `decls` (each after `indent`). Returns the pointer's name and the stride
    along the row (a 0-d access is a row of one)."""

    def __init__(self, program: Program, stored: Iterable[int], decls: list[str],
                 indent: str = "") -> None:
        self.program, self.stored, self.decls, self.indent = program, set(stored), decls, indent
        self.names: dict[tuple[int, int, tuple[int, ...]], str] = {}

    def __call__(self, acc: Access, dtype: Any) -> tuple[str, int]:
        strides = acc.strides or (0,)
        key = (acc.buf, acc.offset, strides[:-1])
        if key not in self.names:
            self.names[key] = name = f"p{len(self.names)}"
            terms = [str(acc.offset)] + [f"i{d} * {s}" for d, s in enumerate(strides[:-1]) if s]
            const = "" if acc.buf in self.stored else "const "
            self.declare(name, const, ctype(self.program.buffers[acc.buf].dtype),
                         f"b{acc.buf} + ({' + '.join(terms)})")
        return self.ref(self.names[key]), strides[-1]

    def declare(self, name: str, const: str, ctype_: str, base: str) -> None:
        """Declare pointer `name` (`const` or ""; element type `ctype_`) at `base`."""
        self.decls.append(f"{self.indent}{const}{ctype_} *const {name} = {base};")

    def ref(self, name: str) -> str:
        """How the statements name pointer `name`."""
        return name
