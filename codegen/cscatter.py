"""C for a scatter kernel (loop IR: a Kernel with a Store through index terms,
lowering/scatter.py): its points run serially in C order of the domain, so a repeated
position ends with the last assignment and ufunc.at's updates apply once per occurrence,
in order. A first pass evaluates the body's error checks alone (index range, the value's
own checks) and returns the error before anything is stored, as NumPy raises before it
writes; gcc drops the computations that pass does not need.
"""

from __future__ import annotations

from typing import Any

from ..frontend.ops import ctype
from ..lowering.loop_ir import Check, Kernel, Program, Store
from .cexpr import RowPointers, buffer_decls, buffer_types, cast_expr, gather_terms, point_lines
from .cscan import binary_expr


def store_line(s: Store, program: Program, pointer: Any) -> str:
    """The C statement of a store through index terms (ufunc.at's update with `fn`)."""
    dtype = program.buffers[s.access.buf].dtype
    p, st = pointer(s.access, dtype)
    at = ("0" if st == 0 else "j" if st == 1 else f"j * {st}") + gather_terms(s)  # type: ignore[arg-type]
    if s.fn is None:
        return f"{p}[{at}] = {s.var};"
    assert s.loop is not None
    l0, l1, lo = s.loop
    op = binary_expr(s.fn, cast_expr(dtype, l0, "(*fj_q)"), s.var, (l0, l1), lo)
    return (f"{{ {ctype(dtype)} *const fj_q = &{p}[{at}]; "
            f"*fj_q = {cast_expr(lo, dtype, op)}; }}")


def render_scatter(k: Kernel, fn: str, program: Program) -> dict[str, Any]:
    """The template view of serial kernel `k`: its text and the entry's call."""
    stored = {s.access.buf for s in k.body if isinstance(s, Store)}
    used = sorted({s.access.buf for s in k.body if hasattr(s, "access")})
    lines = [f"/* {k.name}: scatter, serial over {list(k.domain)}; nodes {k.nodes} */",
             f"static int {fn}(char *const *fj_buf, int64_t fj_lo, int64_t fj_hi) {{",
             "    int fj_err = 0;", "    (void)fj_lo; (void)fj_hi;"]
    lines += buffer_decls(used, buffer_types(program, stored))
    outer = k.domain[:-1]

    def loop(body: list[str]) -> list[str]:
        decls: list[str] = []
        pointer = RowPointers(program, stored, decls)

        inner = [body_line(s, program, pointer) for s in body]
        out = ["{"] + [f"for (int64_t i{d} = 0; i{d} < {n}; i{d}++) {{"
                       for d, n in enumerate(outer)]
        out += decls + [f"for (int64_t j = 0; j < {k.domain[-1]}; j++) {{"]
        out += ["    " + x for x in inner] + ["}"] * (len(outer) + 2)
        return ["    " + x for x in out]

    if any(isinstance(s, Check) for s in k.body):
        lines += loop([s for s in k.body if not isinstance(s, Store)])
        lines.append("    if (fj_err) return fj_err;")
    lines += loop([s for s in k.body if not isinstance(s, Check)])
    lines += ["    return fj_err;", "}"]
    return {"name": k.name, "fn": fn, "text": "\n".join(lines),
            "calls": [f"fj_err = {fn}(fj_buf, 0, 1);"]}


def body_line(s: Any, program: Program, pointer: Any) -> str:
    """The C line of one statement of a scatter kernel's body."""
    if isinstance(s, Store):
        return store_line(s, program, pointer)
    (line,) = point_lines([s], program, pointer)
    return line
