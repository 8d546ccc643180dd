"""Per-lane accumulators of argmax/argmin over rows (rendered into codegen/creduce.py's lane
loops): lane l follows the points q + l of each group of FJ_LANES of a row in order, keeping
its first extreme and that point's index with branch-free selects (so that the lane loop
vectorises); then the lanes are combined as NumPy's result: first occurrence wins, NaN
counts as the extreme.
"""

from __future__ import annotations

from ..frontend.ops import ctype
from ..lowering.loop_ir import Reduce


def arg_lane_update(r: Reduce, flat: str) -> list[str]:
    """argmax/argmin, one lane of FJ_LANES: lane l sees the points q + l of each group of
    FJ_LANES in order and keeps its first extreme (a NaN beats everything, the first one
    wins), as branch-free selects so that the lane loop vectorises."""
    v, b, a = r.value, f"fj_lb_{r.var}[fj_l]", f"fj_la_{r.var}[fj_l]"
    better = ">" if r.fn == "argmax" else "<"
    nan = f" | (({v} != {v}) & ({b} == {b}))" if r.in_dtype.kind == "f" else ""
    return [f"const int fj_take_{r.var} = ({a} < 0) | ({v} {better} {b}){nan};",
            f"{b} = fj_take_{r.var} ? {v} : {b};",
            f"{a} = fj_take_{r.var} ? ({flat}) : {a};"]


def arg_lanes_combine(r: Reduce) -> list[str]:
    """The lanes' winners combined into fj_at_<var>: the first NaN if a lane has one, else
    the extreme value at its smallest index (NumPy's first occurrence)."""
    t, var = ctype(r.in_dtype), r.var
    better = ">" if r.fn == "argmax" else "<"
    flt = r.in_dtype.kind == "f"
    take = (f"fj_at_{var} < 0 ? 1 : "
            + (f"fj_best_{var} != fj_best_{var} ? (fj_v != fj_v && fj_i < fj_at_{var}) : "
               "fj_v != fj_v ? 1 : " if flt else "")
            + f"(fj_v {better} fj_best_{var} || (fj_v == fj_best_{var} && fj_i < fj_at_{var}))")
    return [f"{t} fj_best_{var} = 0; int64_t fj_at_{var} = -1;",
            "for (int fj_l = 0; fj_l < FJ_LANES; fj_l++) {",
            f"    const int64_t fj_i = fj_la_{var}[fj_l];",
            f"    const {t} fj_v = fj_lb_{var}[fj_l];",
            f"    if (fj_i >= 0 && ({take})) {{ fj_best_{var} = fj_v; fj_at_{var} = fj_i; }}",
            "}"]


def extreme_lanes_combine(r: Reduce, t: str, nan: str) -> list[str]:
    """Float max/min lanes folded without NaN-aware selects (creduce.py's fast fold) combined
    into fj_a_<var>. With no NaN in the row (`nan` 0), the lanes' sequential fold
    `a = a > lane ? a : lane` from -inf (fj_rmax's order) ends on the value of the LAST lane
    equal to the extreme (+0 == -0), so that is found with two vector loops, off the 32-step
    chain of dependent selects (xent_grad 8192x1024, one core: 3.71-3.97 -> 3.37-3.40 ms);
    a row with a NaN keeps the sequential NaN-aware fold."""
    v, op = r.var, ">" if r.fn == "max" else "<"
    red, fs = ("max" if r.fn == "max" else "min"), ("f64" if t == "double" else "f32")
    return [f"if (!{nan}) {{",
            f"    {t} fj_x_{v} = fj_lm_{v}[0];",
            f"    #pragma omp simd reduction({red}:fj_x_{v})",
            f"    for (int fj_l = 1; fj_l < FJ_LANES; fj_l++) fj_x_{v} = "
            f"fj_x_{v} {op} fj_lm_{v}[fj_l] ? fj_x_{v} : fj_lm_{v}[fj_l];",
            f"    int fj_w_{v} = 0;",
            f"    #pragma omp simd reduction(max:fj_w_{v})",
            f"    for (int fj_l = 0; fj_l < FJ_LANES; fj_l++) "
            f"fj_w_{v} = fj_lm_{v}[fj_l] == fj_x_{v} ? fj_l : fj_w_{v};",
            f"    fj_a_{v} = fj_lm_{v}[fj_w_{v}];",
            "} else {",
            f"    for (int fj_l = 0; fj_l < FJ_LANES; fj_l++) "
            f"fj_a_{v} = fj_r{r.fn}_{fs}(fj_a_{v}, fj_lm_{v}[fj_l]);",
            "}"]
