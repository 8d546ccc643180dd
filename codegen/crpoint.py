"""Row kernels' per-point C (codegen/creduce.py, ccolumns.py): the statements at a point of a
row, the accumulator type, identity and fold of each reduction, and the buffers a kernel uses.
"""

from __future__ import annotations

import numpy as np

from ..frontend.ops import ctype, suffix
from ..lowering.loop_ir import (
    Access,
    Check,
    Compute,
    Const,
    Load,
    Reduce,
    ReduceKernel,
    Stmt,
    Store,
)
from .cexpr import check_expr, compute_expr, const_expr, gather_terms


def kernel_buffers(k: ReduceKernel) -> list[int]:
    """The buffers a reduce kernel's body loads or stores, in order."""
    return sorted({s.access.buf for s in k.body if isinstance(s, (Load, Store))})


def accumulator(r: Reduce) -> tuple[str, str, str | None]:
    """(C type, identity, simd reduction clause operator) of the accumulator of `r`."""
    s = suffix(r.in_dtype)
    flt = r.in_dtype.kind == "f"
    if r.fn == "sum":
        return ("double", "0.0", "+") if flt else (ctype(r.dtype), "0", "+")
    if r.fn == "prod" and r.in_dtype.kind == "c":  # NumPy's products, in order (fj_complex.h)
        return ctype(r.dtype), "1", None
    if r.fn == "prod":
        return ("double", "1.0", "*") if flt else (ctype(r.dtype), "1", "*")
    if r.fn in ("any", "all"):
        return "uint8_t", "0" if r.fn == "any" else "1", "|" if r.fn == "any" else "&"
    if r.fn in ("max", "min"):
        if flt:
            fs = "f32" if s in ("f16", "f32") else "f64"
            t = "float" if fs == "f32" else "double"
            inf = "__builtin_inff()" if fs == "f32" else "__builtin_inf()"
            return t, (f"-{inf}" if r.fn == "max" else inf), f"fj_{r.fn}_{fs}"
        info = np.iinfo(r.in_dtype) if r.in_dtype.kind in "iu" else None
        ident = (str(int(info.min)) if r.fn == "max" else str(int(info.max))) if info else (
            "0" if r.fn == "max" else "1")
        if r.in_dtype == np.int64 and r.fn == "max":
            ident = "(-9223372036854775807LL - 1)"
        elif r.in_dtype == np.uint64 and r.fn == "min":
            ident = "18446744073709551615ULL"
        return ctype(r.in_dtype), ident, r.fn
    return "int64_t", "0", None  # argmax / argmin


def combine(r: Reduce, acc: str, v: str) -> str:
    if r.fn == "sum":
        return f"{acc} += {v};"
    if r.fn == "prod" and r.in_dtype.kind == "c":
        return f"{acc} = fj_cmul_{suffix(r.in_dtype)}({acc}, {v});"
    if r.fn == "prod":
        return f"{acc} *= {v};"
    if r.fn == "any":
        return f"{acc} |= ({v} != 0);"
    if r.fn == "all":
        return f"{acc} &= ({v} != 0);"
    if r.in_dtype.kind == "f":
        fs = "f32" if suffix(r.in_dtype) in ("f16", "f32") else "f64"
        return f"{acc} = fj_r{r.fn}_{fs}({acc}, {v});"
    op = ">" if r.fn == "max" else "<"
    return f"{acc} = {v} {op} {acc} ? {v} : {acc};"


def point_index(acc: Access, nouter: int, last: str | None) -> str:
    terms = [str(acc.offset)]
    for d, s in enumerate(acc.strides):
        if not s:
            continue
        if d < nouter:
            terms.append(f"i{d} * {s}")
        elif d == len(acc.strides) - 1 and last is not None:
            terms.append(f"({last}) * {s}")
        else:
            terms.append(f"i{d} * {s}")
    return " + ".join(terms)


def point_stmt(s: Stmt, nouter: int, last: str | None) -> str:
    if isinstance(s, Load):
        index = point_index(s.access, nouter, last)
        return f"const {ctype(s.dtype)} {s.var} = b{s.access.buf}[{index}{gather_terms(s)}];"
    if isinstance(s, Const):
        return f"const {ctype(s.dtype)} {s.var} = {const_expr(s)};"
    if isinstance(s, Compute):
        return f"const {ctype(s.dtype)} {s.var} = {compute_expr(s)};"
    if isinstance(s, Check):
        return f"fj_err |= ({check_expr(s)}) ? {s.code} : 0;"
    assert isinstance(s, Store)
    acc = s.access
    return f"b{acc.buf}[{point_index(acc, nouter, last)}] = {s.var};"
