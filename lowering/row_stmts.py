"""The row statements of loop IR (lowering/loop_ir.py re-exports them): a scan's running
fold (lowering/scan.py) and a sort kernel's row sort or table search (lowering/sort.py)."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np


@dataclass(frozen=True)
class Scan:
    """The running fold of `value` by binary op `fn` (of `dtype`, like `value`) along the
    last domain dim of a scan kernel: `var` is value's own at the first point of a row, then
    fn(previous var, value) (NumPy's accumulate order; lowering/scan.py)."""

    var: str
    fn: str
    value: str
    dtype: np.dtype
    # fn "lfilter", "sosfilt" (scipy.signal.lfilter, one sosfilt section:
    # frontend/scipy_filter.py, codegen/cfilter.py): `var` is the filter's output at each
    # point, by SciPy's direct form II transposed with coefficients `b` and `a` (the vars
    # of their values, already divided by a[0] as SciPy does; K of each), from the state
    # `init` (the vars of zi's K - 1 values at the row's point, or () for zeros) at a row's
    # first point
    b: tuple[str, ...] = ()
    a: tuple[str, ...] = ()
    init: tuple[str, ...] = ()
    sections: int = 1  # sosfilt: sections one after another at each point (3 of b, a each)


@dataclass(frozen=True)
class Sort:
    """A sort kernel's row operation (lowering/sort.py). Modes "sort", "stable", "arg": the
    `value`s (of `dtype`) of a row of the last domain dim are sorted (NumPy's order, NaN
    last); `var` at each point is the row's sorted value there, or (arg) the int64 position
    it came from (stable). Modes "left", "right": `var` is np.searchsorted(table, value,
    side), `table` the Load of the `n` sorted values' first element (`stride` apart)."""

    var: str
    mode: str
    value: str
    dtype: np.dtype
    table: str = ""
    stride: int = 0
    n: int = 0
