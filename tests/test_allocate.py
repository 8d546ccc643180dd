"""Arrays the function allocates and fills (frontend/numpy_patch.py's allocators,
frontend/conversion.py allocate): np.zeros/ones/empty/full called from the user's code while
a trace runs give traced arrays, so `y = np.zeros(n); y[idx] = v` and `np.add.at(h, i, 1)`
compile; and values that depend on no input (frontend/known.py) are concrete where Python
needs them (`if`, float(), .tolist()), as NumPy's are."""

from __future__ import annotations

import numpy as np
import pytest
from conftest import assert_same

import fusejit
from fusejit.errors import ConcretizationError

RNG = np.random.default_rng(4)
IDX = np.array([1, 3, 6, 3])
V = RNG.standard_normal(4)
X = RNG.standard_normal((3, 5))


def _fill(idx, v):
    y = np.zeros(10)
    y[idx] = v
    h = np.zeros(5, dtype=np.int64)
    np.add.at(h, idx % 5, 1)
    z = np.ones((2, 3), np.float32)
    z[0, :] = v[0]
    e = np.empty(3)
    e[:] = 7.0
    t = np.full(4, 2.5)
    t[1] = v.sum()
    c = np.zeros(2, complex)
    c[0] = v[1] + 1j
    b = np.zeros(4, bool)
    b[idx % 4] = v > 0
    d = np.ones(2, None)  # (dtype=None: float64, as NumPy's)
    d[1] = v[2]
    return y, h, z, e, t, c, b, d


def _rows(x):
    out = np.empty((3, x.shape[1]))
    for i in range(3):
        out[i] = x[i] * (i + 1)
    col = out[:, 1:3]  # (a view of the allocated array: writes through it are seen)
    col[...] = -1.0
    return out


def _histogram(x, bins):
    counts = np.zeros(bins)
    np.add.at(counts, np.clip((x * 2 + 5).astype(np.int64), 0, bins - 1), 1.0)
    return counts / counts.sum()


@pytest.mark.parametrize("fn, args", [(_fill, (IDX, V)), (_rows, (X,)),
                                      (_histogram, (RNG.standard_normal(200), 10))])
def test_allocated_arrays_filled_with_traced_values(fn, args) -> None:
    static = (1,) if fn is _histogram else ()
    got = fusejit.jit(fn, static_argnums=static)(*args)
    want = fn(*args)
    for g, w in zip(got if isinstance(got, tuple) else (got,),
                    want if isinstance(want, tuple) else (want,)):
        assert_same(g, w)


def test_known_values_are_concrete_where_python_needs_them() -> None:
    def f(x):
        table = np.zeros(4)
        for k in range(4):
            table[k] = k * k
        scale = float(table[2]) if table[3] > 5 else -1.0  # (a known value: NumPy's branch)
        return x * scale + table.sum(), table.tolist(), int(table.argmax())

    got, want = fusejit.jit(f)(V), f(V)
    assert_same(got[0], want[0])
    assert got[1] == want[1] and got[2] == want[2]


def test_a_value_that_depends_on_an_input_still_needs_one() -> None:
    def f(x):
        y = np.zeros(3)
        y[0] = x[0]
        return 1.0 if y[0] > 0 else 0.0  # (depends on x: no concrete value when tracing)

    with pytest.raises(ConcretizationError, match="`if`"):
        fusejit.jit(f)(V)


def test_numpy_errors_and_dtypes_fusejit_has_not() -> None:
    def negative(x):
        return np.zeros(-1) + x[0]

    def objects(x):
        o = np.zeros(2, dtype=object)  # (NumPy's own array: fusejit has no object dtype)
        o[0] = "a"
        return x * len(o)

    with pytest.raises(ValueError, match="negative dimensions"):
        fusejit.jit(negative)(V)
    assert_same(fusejit.jit(objects)(V), objects(V))


def test_library_code_keeps_numpys_arrays() -> None:
    """NumPy's own Python code calling np.zeros (np.pad's, np.histogram's) is unchanged."""
    def f(x):
        return np.pad(x, 2, mode="constant"), np.histogram(x, bins=4, range=(-2, 2))[0]

    for g, w in zip(fusejit.jit(f)(V), f(V)):
        assert_same(g, w)
