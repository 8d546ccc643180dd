"""Python lists and tuples where NumPy takes an array (frontend/tracer.py array_operand,
frontend/numpy_patch.py _make_retry): as operands of operators, ufuncs and traced functions
(`x + [1, 2]`, `np.where(c, [a, 0.5], 0)`), holding numbers or traced values, and as the
array argument of a traced NumPy function that NumPy's dispatch does not look into
(`np.sum([a, b])`, `np.max((x, y))`). Each against NumPy: values, dtype (a list is never a
weak scalar), shape and exception type; numpy's module restored after each trace.
"""

from __future__ import annotations

import numpy as np
import pytest
from conftest import assert_same, examples, run_both
from hypothesis import given, settings
from hypothesis import strategies as st
from numpy import sum as bound_sum  # a name bound at import (frontend/captures.py)

import fusejit
from fusejit.errors import ConcretizationError
from fusejit.frontend import numpy_patch

X = np.arange(12.0).reshape(3, 4) - 4.5

OPERANDS = {
    "add": lambda a: a + [1.0, 2, 3, 4],
    "radd": lambda a: [1.0, 2, 3, 4] + a,
    "rsub tuple": lambda a: (1, 2, 3, 4) - a,
    "mul by list of traced": lambda a: a * [a[0, 0], 1.0, 2.0, 3.0],
    "rmul": lambda a: [2, 3, 4, 5] * a,
    "compare": lambda a: a > [1, 2, 3, 4],
    "eq": lambda a: a == [-4.5, 0, 0, 0],
    "matmul": lambda a: a @ [1.0, 2, 3, 4],
    "rmatmul": lambda a: [1.0, 2, 3] @ a,
    "column": lambda a: np.add(a, [[1], [2], [3]]),
    "ufunc tuple": lambda a: np.maximum(a, (1, 2, 3, 4)),
    "hypot": lambda a: np.hypot(a, [1, 2, 3, 4]),
    "where": lambda a: np.where(a > 3, [1.0, 2, 3, 4], 0),
    "where traced list": lambda a: np.where(a > 3, [a[0, 0], 1.0, 2.0, 3.0], 0),
    "clip": lambda a: np.clip(a, [0, 1, 2, 3], 5),
    "ints": lambda a: a.astype(np.int8) + [1, 2, 3, 4],
    "int list widens uint8": lambda a: a.astype(np.uint8) + [1, 300, 2, 3],
    "float32 and floats": lambda a: a.astype(np.float32) * [0.5, 1.5, 2.5, 3.5],
    "float32 and ints": lambda a: a.astype(np.float32) + [1, 2, 3, 4],
    "bools": lambda a: (a > 0) & [True, False, True, True],
    "empty": lambda a: a[:, :0] + [],
    "0-d list": lambda a: a - [[[2.0]]],
}


@pytest.mark.parametrize("name", list(OPERANDS))
def test_lists_as_operands_match_numpy(name: str) -> None:
    run_both(OPERANDS[name], X)


def test_inplace_update_with_a_list_writes_the_argument() -> None:
    def f(y):
        y += [1, 2, 3, 4]
        y *= (2.0, 1.0, 0.5, 1.0)
        return y.sum()

    got, want = X.copy(), X.copy()
    assert_same(fusejit.jit(f)(got), f(want))
    assert_same(got, want)


@pytest.mark.parametrize("f", [
    lambda a: a + [[1.0, 2.0], [3.0]],  # ragged: NumPy's ValueError
    lambda a: a + [1.0, 2.0],  # does not broadcast
    lambda a: np.add(a, [1.0, 2.0, 3.0]),
], ids=["ragged", "broadcast", "ufunc broadcast"])
def test_bad_lists_raise_numpys_exception(f) -> None:
    run_both(f, X)


FUNCTIONS = {
    "sum": lambda a, b: np.sum([a, b], axis=0),
    "sum of sums": lambda a, b: np.sum([np.sum(a ** 2), np.sum(b ** 2), 1.0]),
    "mean": lambda a, b: np.mean([a[0], b[1]]),
    "max tuple": lambda a, b: np.max((a[0, 0], b[1, 1])),
    "min mixed": lambda a, b: np.min([a[0], [1.0, -9.0, 2.0, 3.0]], axis=0),
    "median": lambda a, b: np.median([a, b], axis=0),
    "std": lambda a, b: np.std([a[0, 0], b[0, 0], 3.0]),
    "norm": lambda a, b: np.linalg.norm([a[0, 0], b[0, 0]]),
    "cumsum": lambda a, b: np.cumsum([a[0, 0], b[0, 0]]),
    "sort": lambda a, b: np.sort([b[0, 1], a[0, 0], 1.0]),
    "argmax": lambda a, b: np.argmax([a[0, 0], b[0, 0]]),
    "prod int": lambda a, b: np.prod([a[0, 0].astype(np.int32), 3]),
    "dot": lambda a, b: np.dot([a[0, 0], b[0, 0]], [1.0, 2.0]),
    "clip": lambda a, b: np.clip([a[0, 0], b[0, 0]], 0, 3),
    "keyword": lambda a, b: np.sum(a=[a, b], axis=1),
    "bound name": lambda a, b: bound_sum([a, b]),
    "ragged": lambda a, b: np.sum([a, b[0]]),
    "dispatching on the list": lambda a, b: np.concatenate([a, b[:1]]),
    "ravel": lambda a, b: np.ravel([a[0], b[0]]),
}


@pytest.mark.parametrize("name", list(FUNCTIONS))
def test_traced_functions_given_lists_of_traced_values(name: str) -> None:
    run_both(FUNCTIONS[name], X, X[::-1] * 2)
    for (module_name, attr), module, original, _, _ in numpy_patch._SLOTS:
        assert getattr(module, attr) is original, (module_name, attr)


def test_ufunc_given_a_list_of_traced_values_says_what_to_write() -> None:
    with pytest.raises(ConcretizationError, match=r"np\.abs\(np\.stack\(\[a, b\]\)\)"):
        fusejit.jit(lambda a: np.abs([a[0], a[1]]))(X)
    assert_same(fusejit.jit(lambda a: np.abs(np.stack([a[0], a[1]])))(X), np.abs(X[:2]))


def test_switched_off(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("FUSEJIT_PATCH_NUMPY", "0")
    with pytest.raises(ConcretizationError, match="FUSEJIT_PATCH_NUMPY=0"):
        fusejit.jit(lambda a: np.sum([a, a]))(X)
    # operands do not depend on the patch: they are converted by fusejit itself
    assert_same(fusejit.jit(lambda a: a + [a[0, 0], 1.0, 2.0, 3.0])(X),
                X + [X[0, 0], 1.0, 2.0, 3.0])


def test_every_retried_function_is_numpys_and_traced() -> None:
    from fusejit.frontend import registry

    assert len(numpy_patch._SLOTS) > len(numpy_patch.NAMES) + 150
    for (module_name, attr), module, original, _, wrapper in numpy_patch._SLOTS[
            len(numpy_patch.NAMES):]:
        assert getattr(module, attr) is original, (module_name, attr)
        assert registry.handler_for(original) is not None, attr
        assert wrapper.__fusejit_original__ is original
        assert numpy_patch.replacement(original) is not None


SCALARS = st.one_of(st.integers(-100, 100), st.floats(-1e3, 1e3, allow_nan=False, width=32),
                    st.booleans())
DTYPES = [np.bool_, np.int8, np.uint8, np.int32, np.int64, np.float32, np.float64]


@settings(max_examples=examples(40), deadline=None)
@given(dtype=st.sampled_from(DTYPES), row=st.lists(SCALARS, min_size=3, max_size=3),
       op=st.sampled_from(["add", "multiply", "maximum", "less", "where"]))
def test_property_number_lists(dtype, row, op) -> None:
    """A row of Python numbers (mixed kinds: NumPy's discovered dtype) against an array."""
    x = (np.arange(6) % 3).reshape(2, 3).astype(dtype)
    if op == "where":
        def f(a):
            return np.where(a > 0, row, a)
    else:
        ufunc = getattr(np, op)

        def f(a):
            return ufunc(a, row)
    with np.errstate(all="ignore"):
        run_both(f, x)
