"""Fit the piecewise tables of codegen/include/fj_vtile_tables.h (float32 tanh, erf, log).

fj_vtile.h evaluates each of these functions as one polynomial of degree 4 or 5 per interval, 32
intervals, with every coefficient looked up by a two-register permute (AVX-512 vpermt2ps), so a
vector of 16 points costs about as much as one polynomial: no branches, no division, no second
piece evaluated and thrown away.

The intervals, and the variable r of their polynomials (always exact in float32):
  tanh, erf  a = |x| (clamped below 16, so r stays finite); interval k = (bits(max(a, 2^-4)) >>
             21) - 492: from 2^-4 on, four intervals per binade, [2^-4 (1 + s/4),
             2^-4 (1 + (s+1)/4)) and so on; interval 0 is [0, 2^-4 * 1.25). The permute reads
             only the low 5 bits of the index, so the tables are stored rotated (interval k at
             (k + 492) mod 32) and bits(max(a, 2^-4)) >> 21 indexes them as it is. The
             intervals past the one where f reaches 1 in float32 are the constant 1 (erf(inf) =
             tanh(inf) = 1 exactly). r = a - start of the interval (Sterbenz: exact).
             f(a) = c0 + s * r + r * (c1 + c2 r + ...), where s = 1 and c0 = 0 in interval 0 of
             erf (so erf(a) = a + a * (...) keeps the last bit near 0: 2/sqrt(pi) has no exact
             float), s = 0 elsewhere.
  log        m = getmant(x) in [0.75, 1.5), x = m * 2^e; interval k = low 5 bits of
             bits(m) >> 18: k < 16 is [1 + k/32, 1 + (k+1)/32), k >= 16 is [0.75 + (k-16)/64,
             0.75 + (k-15)/64). r = m - the interval's end nearer to 1 (exact), so the two
             intervals that touch 1 have c0 = 0 and keep log(m)'s relative accuracy there.
             log(x) = e * ln2 + (c0 + r * (c1 + ...)).

Method: each interval's polynomial is minimax in relative error (Lawson's iteratively reweighted
least squares), in a variable scaled to [0, 1] by a power of two (well conditioned), its
coefficients rounded to float32 one at a time from the lowest, the higher ones refitted after
each rounding. The rounding of the float32 evaluation is measured by benchmarks/vmath_accuracy.c
(all 2^32 inputs).

    python benchmarks/vmath_tables.py                       # fit errors per interval
    python benchmarks/vmath_tables.py --write               # regenerate the header
"""

from __future__ import annotations

import argparse
import math
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import numpy as np

Func = Callable[[np.ndarray], np.ndarray]
HEADER = Path(__file__).resolve().parent.parent / "codegen" / "include" / "fj_vtile_tables.h"
N = 32  # intervals: two 16-float registers per coefficient
ROTATE = 492  # (bits(2^-4) >> 21): the raw index of interval 0 of tanh and erf
_erf = np.vectorize(math.erf, otypes=[float])


@dataclass(frozen=True)
class Piece:
    """One interval: f(a) for a in [lo, hi], polynomial in r = a - anchor."""

    lo: float
    hi: float
    anchor: float
    linear: bool  # f = r + r * (...): s = 1, c0 = 0 (interval 0 of erf)
    zero: bool  # c0 = 0 (f(anchor) = 0)
    one: bool = False  # f = 1 exactly (where f rounds to 1 in float32)


def _lawson(a: np.ndarray, b: np.ndarray, w: np.ndarray, iters: int = 200) -> np.ndarray:
    """Minimax a @ c ~ b in the w-weighted max norm; the best iterate is kept (the weights can
    collapse once the error reaches float64 rounding). vmath_fit.py's version lacks this guard
    and stays as it is: it reproduces fj_vmath_f32.h's coefficients."""
    aw, bw = a * w[:, None], b * w
    col = np.max(np.abs(aw), axis=0)
    col[col == 0] = 1.0
    aw = aw / col
    lw = np.full(len(b), 1.0 / len(b))
    best, best_err = np.zeros(a.shape[1]), np.inf
    for _ in range(iters):
        s = np.sqrt(lw)
        c, *_ = np.linalg.lstsq(aw * s[:, None], bw * s, rcond=None)
        err = np.abs(aw @ c - bw)
        m = float(err.max())
        if m < best_err:
            best, best_err = c, m
        lw = lw * np.maximum(err, m * 1e-6)
        lw /= lw.sum()
    return best / col


def fit_piece(f: Func, p: Piece, degree: int) -> tuple[np.ndarray, float]:
    """float32 coefficients c0..c_degree (in r = a - anchor) and the max relative error."""
    if p.one:
        return np.array([1.0] + [0.0] * degree, dtype=np.float32), 0.0
    n = 4000
    x = 0.5 * (p.lo + p.hi) + 0.5 * (p.hi - p.lo) * np.cos(np.pi * (np.arange(n) + 0.5) / n)
    x = x[x != p.anchor] if (p.zero or p.linear) else x
    scale = 2.0 ** math.ceil(math.log2(max(abs(p.hi - p.anchor), abs(p.lo - p.anchor))))
    r = (x - p.anchor) / scale
    y = f(x)
    w = 1.0 / np.abs(y)
    fixed = (x - p.anchor) if p.linear else np.zeros_like(x)
    first = 1 if (p.zero or p.linear) else 0
    basis = np.stack([r ** i for i in range(first, degree + 1)], axis=1)
    coefs: list[float] = []
    for i in range(basis.shape[1]):
        done = basis[:, :i] @ np.array(coefs, dtype=float)
        rest = _lawson(basis[:, i:], y - fixed - done, w)
        coefs.append(float(np.float32(rest[0])))
    c = np.array(coefs)
    err = float(np.max(np.abs(basis @ c + fixed - y) * w))
    full = np.concatenate([np.zeros(first), c]) / scale ** np.arange(degree + 1)
    return full.astype(np.float32), err


def exponent_pieces(last: int, linear0: bool) -> list[Piece]:
    """tanh / erf intervals (see the module docstring): fitted up to interval `last`, where the
    function has reached 1 in float32, and exactly 1 from the next one on."""
    starts = [0.0] + [2.0 ** (-4 + k // 4) * (1 + (k % 4) / 4) for k in range(1, N + 1)]
    return [Piece(starts[k], starts[k + 1], starts[k], linear=linear0 and k == 0, zero=k == 0,
                  one=k > last) for k in range(N)]


def log_pieces() -> list[Piece]:
    pieces = []
    for k in range(N):
        if k < 16:
            lo, hi = 1 + k / 32, 1 + (k + 1) / 32
            pieces.append(Piece(lo, hi, lo, linear=False, zero=k == 0))
        else:
            lo, hi = 0.75 + (k - 16) / 64, 0.75 + (k - 15) / 64
            pieces.append(Piece(lo, hi, hi, linear=False, zero=k == N - 1))
    return pieces


@dataclass(frozen=True)
class Table:
    name: str
    f: Func
    pieces: list[Piece]
    degree: int


TABLES = [
    # tanh rounds to 1 from 9.0109 on: interval 28 is [8, 10)
    Table("tanh", np.tanh, exponent_pieces(28, linear0=False), 5),
    # erf rounds to 1 from 3.9192 on: interval 23 is [3.5, 4)
    Table("erf", _erf, exponent_pieces(23, linear0=True), 5),
    Table("log", np.log, log_pieces(), 4),
]


def best_anchor(f: Func, lo: float, hi: float, window: tuple[float, float] = (0.4, 0.6),
                most: int = 1 << 21) -> float:
    """The float32 in [lo, hi)'s `window` (fractions of its width) whose f(anchor) is nearest a
    float32, so c0 is almost exact: rounded c0 would otherwise be compensated by the higher
    coefficients, large and cancelling (noise in f where it is flat). Every candidate lies in
    [lo, 2 lo], so r = a - anchor is exact (Sterbenz)."""
    w0, w1 = (float(np.float32(lo + (hi - lo) * w)) for w in window)
    u0, u1 = (int(np.float32(v).view(np.uint32)) for v in (w0, w1))
    c = np.arange(u0, u1 + 1, max(1, (u1 - u0) // most), dtype=np.uint32).view(np.float32)
    c = c.astype(float)
    c = c[(c >= lo) & (c < hi) & (c <= 2 * lo)]
    y = f(c)
    err = np.abs(y - y.astype(np.float32).astype(float)) / np.abs(y)
    return float(c[int(np.argmin(err))])


def anchored_pieces(f: Func, starts: list[float], linear0: bool,
                    windows: dict[float, tuple[float, float]] | None = None) -> list[Piece]:
    """[starts[k], starts[k+1]) with best_anchor, in windows[start] where given (tanh: near the
    end of the intervals where it flattens, so r (c1 + ...)'s rounding stays below tanh's step
    between consecutive floats and tanh monotonic); an interval starting at 0 anchors at 0."""
    out = []
    for lo, hi in zip(starts, starts[1:]):
        if lo == 0:
            out.append(Piece(lo, hi, 0.0, linear=linear0, zero=True))
        elif lo <= 1.0 <= hi and f is np.log:  # log's intervals touching 1 anchor there
            out.append(Piece(lo, hi, 1.0, linear=False, zero=True))
        else:
            w = (windows or {}).get(lo, (0.4, 0.6))
            out.append(Piece(lo, hi, best_anchor(f, lo, hi, w), linear=False, zero=False))
    return out


# AVX2 (8 intervals, one vpermps per coefficient), see fj_vtile.h; `slot` = the permute index
# (low 3 bits) of interval 0, the others follow it.
N8 = 8
_TANH_WINDOWS = {1.0: (0.75, 1.0), 2.0: (0.75, 1.0), 4.0: (0.75, 1.0), 8.0: (0.0, 0.25)}
TABLES8 = [
    # one interval per binade of max(a, 2^-4) (bits >> 23), |x| clamped to 9.125; f = r + r q
    # in interval 0 (as erf: q's rounding there is then far below tanh's step)
    (Table("tanh", np.tanh, anchored_pieces(np.tanh, [0, 1 / 8, 1 / 4, 1 / 2, 1, 2, 4, 8,
                                                      9.125], True, _TANH_WINDOWS), 9),
     123),
    # two per binade of max(a, 1/4) (bits >> 22), |x| clamped to 3.9375
    (Table("erf", _erf, anchored_pieces(_erf, [0, 0.375, 0.5, 0.75, 1, 1.5, 2, 3, 3.9375],
                                        True), 7), 250),
    # m in [0.75, 1.5) (bits >> 20): [1, 1.5) in eighths, then [0.75, 1) in sixteenths
    (Table("log", np.log, anchored_pieces(np.log, [1, 1.125, 1.25, 1.375, 1.5], False)
           + anchored_pieces(np.log, [0.75, 0.8125, 0.875, 0.9375, 1.0], False), 5), 0),
]


def fit_table(t: Table) -> tuple[list[np.ndarray], list[float]]:
    coefs, errs = [], []
    for p in t.pieces:
        c, e = fit_piece(t.f, p, t.degree)
        coefs.append(c)
        errs.append(e)
    return coefs, errs


def c_float(v: float) -> str:
    v = float(np.float32(v))
    if v == 0:
        return "0.0f"
    mant, exp = v.hex().split("p")
    return mant.rstrip("0").rstrip(".") + "p" + exp + "f"


def _row(values: list[float]) -> str:
    items = [c_float(v) for v in values]
    lines, line = [], "    {"
    for i, it in enumerate(items):
        piece = it + (", " if i < len(items) - 1 else "")
        if len(line) + len(piece) > 98:
            lines.append(line.rstrip())
            line = "     "
        line += piece
    lines.append(line + "},")
    return "\n".join(lines)


def render() -> str:
    out = ["/* fj_vtile_tables.h -- GENERATED by benchmarks/vmath_tables.py --write; do not edit.",
           " * Piecewise polynomial tables of fj_vtile.h: per function, the anchors of the 32",
           " * intervals (r = a - anchor), then coefficient k of every interval in row k;",
           " * erf also has s (f = c0 + s r + r (c1 + ...)). tanh and erf are stored rotated:",
           " * interval k at column (k + 492) mod 32. */",
           "#ifndef FJ_VTILE_TABLES_H", "#define FJ_VTILE_TABLES_H", ""]
    for t in TABLES:
        coefs, errs = fit_table(t)
        out.append(f"/* {t.name}: degree {t.degree}, max relative fit error "
                   f"{max(errs) / 2.0 ** -24:.3f} x 2^-24 */")
        rows = [[p.anchor for p in t.pieces]]
        if t.name == "erf":
            rows.append([1.0 if p.linear else 0.0 for p in t.pieces])
        rows += [[float(c[k]) for c in coefs] for k in range(t.degree + 1)]
        if t.name in ("tanh", "erf"):  # position p holds interval (p - 492) mod 32
            rows = [[row[(p - ROTATE) % N] for p in range(N)] for row in rows]
        out.append(f"static const float fj__tab_{t.name}[{len(rows)}][32] "
                   "__attribute__((aligned(64))) = {")
        out += [_row(r) for r in rows]
        out.append("};")
        out.append("")
    out.append("/* AVX2: 8 intervals (fj_vtile.h), rows as above; interval k at column "
               "(k + slot) mod 8. */")
    for t, slot in TABLES8:
        coefs, errs = fit_table(t)
        out.append(f"/* {t.name}: degree {t.degree}, max relative fit error "
                   f"{max(errs) / 2.0 ** -24:.3f} x 2^-24, slot {slot % N8} */")
        rows = [[p.anchor for p in t.pieces]]
        if any(p.linear for p in t.pieces):
            rows.append([1.0 if p.linear else 0.0 for p in t.pieces])
        rows += [[float(c[k]) for c in coefs] for k in range(t.degree + 1)]
        rows = [[row[(p - slot) % N8] for p in range(N8)] for row in rows]
        out.append(f"static const float fj__tab8_{t.name}[{len(rows)}][8] "
                   "__attribute__((aligned(32))) = {")
        out += [_row(r) for r in rows]
        out.append("};")
        out.append("")
    out.append("#endif /* FJ_VTILE_TABLES_H */")
    return "\n".join(out) + "\n"


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--write", action="store_true", help=f"rewrite {HEADER.name}")
    args = ap.parse_args()
    if args.write:
        HEADER.write_text(render())
        print(f"wrote {HEADER}")
        return
    for t in TABLES + [t for t, _ in TABLES8]:
        _, errs = fit_table(t)
        print(f"{t.name}: degree {t.degree}, max relative fit error "
              f"{max(errs) / 2.0 ** -24:.3f} x 2^-24; per interval: "
              + " ".join(f"{e / 2.0 ** -24:.2f}" for e in errs))


if __name__ == "__main__":
    main()
