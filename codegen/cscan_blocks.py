"""C for a scan kernel with few, long rows (np.cumsum of one long vector; lowering/scan.py)
run as a blocked parallel scan.

Each row is cut into BLOCKS blocks, a number that depends only on the shape (never on the
thread count). A first pass folds every block's values into its total (the blocks of all
rows in parallel); the second pass starts each block from the fold of the totals before
it, taken in block order, and scans the block as NumPy does a row, storing the scan and
its fused consumers. The producers of the scanned value are computed in both passes. The
result is the same for every thread count and call; integer results are NumPy's exactly
(wrapping add and multiply, max, min and the logical ops regroup exactly); float sums and
products differ from NumPy's sequential fold only by rounding.
"""

from __future__ import annotations

from typing import Any

from ..frontend.ops import ctype
from ..lowering.loop_ir import Kernel, Program, Scan, Store
from .cexpr import RowPointers, buffer_decls, buffer_types, point_lines
from .cscan import binary_expr, columns

BLOCKS = 16  # blocks per row at most
BLOCK_MIN = 1 << 14  # elements per block at least
FEW_ROWS = 4  # rows up to which a scan is blocked (more rows run in parallel as they are)


# Folds that regroup: exactly for integers and the logical ops, within rounding for float
# sums. Others (subtract, divide, fmod, ...) run row by row, in NumPy's order: blocks would
# fold block totals that are not the prefix of the row. Float products too: regrouped, a
# running product near the overflow or underflow threshold becomes inf or 0 at another index
# than NumPy's (session 16's CUDA emulation: finite where NumPy has inf).
ASSOCIATIVE = frozenset({"add", "multiply", "maximum", "minimum", "fmax", "fmin",
                         "logical_and", "logical_or", "logical_xor", "bitwise_and",
                         "bitwise_or", "bitwise_xor"})


def regroups(s: Scan) -> bool:
    """Whether scan `s`'s fold may be taken in blocks (see ASSOCIATIVE)."""
    return s.fn in ASSOCIATIVE and not (s.fn == "multiply" and s.dtype.kind in "fc")


def blocks(k: Kernel) -> int:
    """The blocks per row of scan kernel `k`, or 0 when it runs row by row (codegen/cscan.py):
    blocked are scans by a fold that `regroups` of at most FEW_ROWS contiguous rows long
    enough for 2+ blocks."""
    rows = k.size // max(k.domain[-1], 1)
    if columns(k) or rows > FEW_ROWS or rows == 0 or any(
            isinstance(s, Scan) and not regroups(s) for s in k.body):
        return 0
    nb = min(BLOCKS, k.domain[-1] // BLOCK_MIN)
    return nb if nb >= 2 else 0


def render_blocked_scan(k: Kernel, fn: str, program: Program, slot: int) -> dict[str, Any]:
    """The template view of scan kernel `k` in `blocks(k)` blocks per row; the block totals
    live in fj_buf[slot] (an array in the entry)."""
    nb = blocks(k)
    scan = next(s for s in k.body if isinstance(s, Scan))
    at = k.body.index(scan)
    t = ctype(scan.dtype)
    outer, n = k.domain[:-1], k.domain[-1]
    rows = k.size // n
    stored = {s.access.buf for s in k.body if isinstance(s, Store)}

    def head(name: str, body: list[Any], total: bool) -> list[str]:
        used = sorted({s.access.buf for s in body if hasattr(s, "access")})
        out = [f"static int {name}(char *const *fj_buf, int64_t fj_lo, int64_t fj_hi) {{",
               "    int fj_err = 0;", f"    {t} *const fj_tot = ({t} *)fj_buf[{slot}];"]
        out += buffer_decls(used, buffer_types(program, stored))
        out += ["    for (int64_t fj_u = fj_lo; fj_u < fj_hi; fj_u++) {",
                f"        const int64_t fj_k = fj_u % {nb};",
                f"        int64_t fj_r = fj_u / {nb};"]
        for d in reversed(range(len(outer))):
            out += [f"        const int64_t i{d} = fj_r % {outer[d]};",
                    f"        fj_r /= {outer[d]};"]
        out += ["        (void)fj_r;",
                f"        const int64_t fj_j0 = {n}LL * fj_k / {nb}, "
                f"fj_j1 = {n}LL * (fj_k + 1) / {nb};"]
        pointer = RowPointers(program, stored, out, "        ")

        lines = point_lines([s for s in body[:at] if not isinstance(s, Store)], program,
                            pointer) if total else []
        if total:
            step = binary_expr(scan.fn, "fj_a", scan.value, (scan.dtype,) * 2, scan.dtype)
            out += [f"        {t} fj_a = 0;",
                    "        for (int64_t j = fj_j0; j < fj_j1; j++) {"]
            out += [f"            {x}" for x in lines]
            out += [f"            fj_a = (j == fj_j0) ? {scan.value} : {step};", "        }",
                    "        fj_tot[fj_u] = fj_a;"]
            return out
        # The fold of the totals before this block, in block order.
        off = binary_expr(scan.fn, "fj_a", "fj_tot[fj_u - fj_k + fj_q]", (scan.dtype,) * 2,
                          scan.dtype)
        out += [f"        {t} fj_a = fj_tot[fj_u - fj_k];",
                "        for (int64_t fj_q = 1; fj_q < fj_k; fj_q++)",
                f"            fj_a = {off};"]
        step = binary_expr(scan.fn, "fj_a", scan.value, (scan.dtype,) * 2, scan.dtype)
        body_lines: list[str] = []
        for s in k.body:
            if isinstance(s, Scan):
                body_lines += [f"fj_a = (j == 0) ? {s.value} : {step};",
                               f"const {t} {s.var} = fj_a;"]
            else:
                body_lines += point_lines([s], program, pointer)
        out += ["        for (int64_t j = fj_j0; j < fj_j1; j++) {"]
        out += [f"            {x}" for x in body_lines] + ["        }"]
        return out

    lines = [f"/* {k.name}: scan along rows of {n}, for each of {list(outer)}, in {nb} "
             f"blocks per row (block totals, then each block from the totals before it); "
             f"nodes {k.nodes} */"]
    lines += head(f"{fn}_tot", k.body[:at + 1], True)
    lines += ["    }", "    return fj_err;", "}", ""]
    lines += head(fn, k.body, False)
    lines += ["    }", "    return fj_err;", "}"]
    units = rows * nb
    return {"name": k.name, "fn": fn, "slot": slot, "text": "\n".join(lines),
            "locals": [f"{t} fj_tot_{k.name}[{units}];",
                       f"fj_buf[{slot}] = (char *)fj_tot_{k.name};"],
            "calls": [f"fj_err = fj_run({fn}_tot, fj_buf, {units}, {k.size});",
                      "if (fj_err) return fj_err;",
                      f"fj_err = fj_run({fn}, fj_buf, {units}, {k.size});"]}
