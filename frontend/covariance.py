"""np.cov: NumPy's own code (frontend/numpy_lib.py) without weights; with fweights= or
aweights= written here from traced operations, in NumPy's order, because NumPy's code branches
on values (`if fact <= 0`, `if any(aweights < 0)`) that a trace does not have.

NumPy's checks of the weights' values raise its exceptions when the program runs (errors.Status
FWEIGHTS_INT, FWEIGHTS_NEG, AWEIGHTS_NEG; `check_*` ops) for traced weights, and at trace time
for constant ones; their shapes are checked at trace time. NumPy's "Degrees of freedom <= 0"
RuntimeWarning (then a factor of 0, so inf or NaN) cannot be issued by a running program: the
values are NumPy's, without the warning."""

from __future__ import annotations

import warnings
from typing import Any

import numpy as np

from ..errors import Status
from . import tracer as T
from .numpy_lib import asarray, numpy_code

_NUMPY_COV = numpy_code(np.cov)


def _check(op: str, bad: Any) -> T.Tracer:
    """A bool that is `bad`, through a check_* op (the program fails where it is true)."""
    return T.Tracer(T.make_node(op, [T.to_node(np.any(bad), np.dtype(bool))], (),
                                np.dtype(bool)))


def _weights(w: Any, name: str, n: int) -> Any:
    """fweights/aweights as float, with NumPy's checks in NumPy's order: the shape now, the
    values (errors.Status's exception and message) now for constants, else when the program
    runs (a check_* op each, kept alive by the weights that pass through it)."""
    w = asarray(w, dtype=float)
    traced = isinstance(w, T.Tracer)
    flags: list[tuple[str, Any]] = []

    def test(status: Status, bad: Any) -> None:
        if not traced and np.any(bad):
            raise status.exc(status.message)
        flags.append((f"check_{status.name.lower()}", bad))

    fweights = name == "fweights"
    if fweights:  # NumPy tests integrality before the shape
        test(Status.FWEIGHTS_INT, w != np.around(w))
    if w.ndim > 1:
        raise RuntimeError(f"cannot handle multidimensional {name}")
    if w.shape[0] != n:
        raise RuntimeError(f"incompatible numbers of samples and {name}")
    test(Status.FWEIGHTS_NEG if fweights else Status.AWEIGHTS_NEG, w < 0)
    for op, bad in flags if traced else ():
        w = np.where(_check(op, bad), np.zeros((), w.dtype), w)
    return w


def cov(m: Any, y: Any = None, rowvar: bool = True, bias: bool = False, ddof: Any = None,
        fweights: Any = None, aweights: Any = None, *, dtype: Any = None) -> Any:
    if fweights is None and aweights is None:
        return _NUMPY_COV(m, y, rowvar, bias, ddof, fweights, aweights, dtype=dtype)
    if ddof is not None and ddof != int(ddof):
        raise ValueError("ddof must be integer")
    m = asarray(m)
    if m.ndim > 2:
        raise ValueError("m has more than 2 dimensions")
    if y is not None:
        y = asarray(y)
        if y.ndim > 2:
            raise ValueError("y has more than 2 dimensions")
    if dtype is None:
        dtype = np.result_type(m, np.float64) if y is None else np.result_type(m, y, np.float64)
    X = np.array(m, ndmin=2, dtype=dtype)
    if not rowvar and m.ndim != 1:
        X = X.T
    if X.shape[0] == 0:
        return np.array([]).reshape(0, 0)
    if y is not None:
        y = np.array(y, copy=None, ndmin=2, dtype=dtype)
        if not rowvar and y.shape[0] != 1:
            y = y.T
        X = np.concatenate((X, y), axis=0)
    if ddof is None:
        ddof = 1 if bias == 0 else 0
    n = X.shape[1]
    w = None
    if fweights is not None:
        w = _weights(fweights, "fweights", n)
    if aweights is not None:
        aweights = _weights(aweights, "aweights", n)
        w = aweights if w is None else w * aweights
    avg, w_sum = np.average(X, axis=1, weights=w, returned=True)
    w_sum = w_sum[0]
    if ddof == 0:
        fact = w_sum
    elif aweights is None:
        fact = w_sum - ddof
    else:
        fact = w_sum - ddof * np.sum(w * aweights) / w_sum
    if isinstance(fact, T.Tracer):
        fact = np.where(fact <= 0, np.zeros((), fact.dtype), fact)[()]
    elif fact <= 0:
        warnings.warn("Degrees of freedom <= 0 for slice", RuntimeWarning, stacklevel=2)
        fact = 0.0
    X = np.subtract(X, avg[:, None]).astype(X.dtype)  # NumPy: X -= avg[:, None]
    X_T = (X * w).T
    c = np.dot(X, X_T.conj())
    c = np.multiply(c, np.true_divide(1, fact)).astype(c.dtype)  # NumPy: c *= 1 / fact
    return c.squeeze()


HANDLERS = {np.cov: cov}
