"""Several statements that fail at run time: the compiled function raises the exception NumPy
raises first, in statement order, whatever order its kernels run in (runtime/error_order.py),
and leaves the arguments as passed when it can replay (no argument written before a check)."""

from __future__ import annotations

import numpy as np
import pytest
from conftest import on_cuda

import fusejit
from fusejit.runtime.error_order import replay_safe


def numpy_error(f, *args):
    """NumPy's exception for f(*args) on copies of the arguments, with the copies after it."""
    copies = [np.copy(a) if isinstance(a, np.ndarray) else a for a in args]
    try:
        f(*copies)
    except Exception as e:  # noqa: BLE001 - the exception is the answer
        return e, copies
    return None, copies


def jit_error(jf, *args):
    copies = [np.copy(a) if isinstance(a, np.ndarray) else a for a in args]
    try:
        jf(*copies)
    except Exception as e:  # noqa: BLE001
        return e, copies
    return None, copies


def chain(x, idx, e, w, k, a, b):
    """Six independent statements, each failing on its own input."""
    g = x[idx]  # IndexError
    p = k ** e  # ValueError (integer to a negative power)
    c = np.bincount(w, minlength=8)  # ValueError (negative value)
    s = np.linalg.solve(a, b)  # LinAlgError (singular)
    m = np.average(x[:4], weights=np.repeat(b[:, 0], 2))  # ZeroDivisionError (sum 0)
    t = np.take(x, idx[::-1])  # IndexError again, later
    return g.sum() + p.sum() + c.sum() + s.sum() + m + t.sum()


def chain_reversed(x, idx, e, w, k, a, b):
    """The same statements in the other order."""
    t = np.take(x, idx[::-1])
    m = np.average(x[:4], weights=np.repeat(b[:, 0], 2))
    s = np.linalg.solve(a, b)
    c = np.bincount(w, minlength=8)
    p = k ** e
    g = x[idx]
    return g.sum() + p.sum() + c.sum() + s.sum() + m + t.sum()


def _inputs(fail: int):
    x = np.arange(6.0)
    idx = np.array([0, 5, 9 if fail & 1 else 2])
    e = np.array([1, -1 if fail & 2 else 2, 3])
    w = np.array([1, -3 if fail & 4 else 3, 7])
    k = np.array([2, 3, 4])
    a = np.array([[1.0, 2.0], [2.0, 4.0]]) if fail & 8 else np.eye(2) * 2
    b = np.array([[1.0], [-1.0], [0.0], [0.0]])[:2] if fail & 16 else np.ones((2, 1))
    return x, idx, e, w, k, a, b


JCHAIN = fusejit.jit(chain)


def test_first_failing_statement_wins() -> None:
    """Every subset of the five failing statements, in both orders (two programs)."""
    for fn in (chain, chain_reversed):
        jf = JCHAIN if fn is chain else fusejit.jit(fn)
        for fail in range(32):
            args = _inputs(fail)
            want, _ = numpy_error(fn, *args)
            got, copies = jit_error(jf, *args)
            assert type(got) is type(want), (fn.__name__, fail, got, want)
            if isinstance(want, IndexError):
                assert str(got) == str(want)  # NumPy's own message, from the replay
            for a, c in zip(args, copies, strict=True):
                np.testing.assert_array_equal(a, c)


def test_brief_example_and_arguments_kept() -> None:
    """np.add.at with an index out of range, then np.bincount of a negative value: NumPy's
    IndexError (the first statement), and x untouched (the scatter checks before it writes;
    NumPy too leaves x as it was, since add.at raised)."""

    def f(x, idx, v, w):
        np.add.at(x, idx, v)
        return np.bincount(w, minlength=8)

    jf = fusejit.jit(f)
    x, v = np.zeros(5), np.array([1.0, 2.0])
    for idx, w in ((np.array([0, 7]), np.array([1, -2])), (np.array([0, 7]), np.array([1, 2])),
                   (np.array([0, 3]), np.array([1, -2]))):
        want, after_numpy = numpy_error(f, x, idx, v, w)
        got, after = jit_error(jf, x, idx, v, w)
        assert type(got) is type(want)
        np.testing.assert_array_equal(after[0], x)  # fusejit: nothing written on an error
        if isinstance(want, IndexError):
            np.testing.assert_array_equal(after_numpy[0], x)


def test_python_scalar_prelude_and_message() -> None:
    """A stub with Python scalar arithmetic (prelude values among the graph's inputs): the
    replay gets them too, and the exception is NumPy's own, message included."""

    def f(x, idx, n, w):
        c = np.bincount(w * (n + 1), minlength=8)
        return x[idx] * (n * 2) + c[:1]

    jf = fusejit.jit(f)
    x, w = np.arange(4.0), np.array([0, 1, -1])
    jf(x, np.array([1, 2]), 3, np.abs(w))  # compiles and installs the stub
    want, _ = numpy_error(f, x, np.array([1, 9]), 3, w)
    got, _ = jit_error(jf, x, np.array([1, 9]), 3, w)
    assert type(got) is type(want) is ValueError
    want, _ = numpy_error(f, x, np.array([1, 9]), 3, np.abs(w))
    got, _ = jit_error(jf, x, np.array([1, 9]), 3, np.abs(w))
    assert type(got) is IndexError and str(got) == str(want)


def test_replay_safety_decision() -> None:
    """Programs that write an argument before a check may fail are not replayed (the
    argument already changed): the status's flag with the first check in statement order."""

    def written_first(x, y, idx):
        x += 1
        return y[idx] + x[:1]

    def reads_only(x, idx):
        return x[idx]

    for fn, args, safe in ((written_first, (np.zeros(3), np.arange(3.0), np.array([0])), False),
                           (reads_only, (np.zeros(3), np.array([0])), True)):
        compiled = fusejit.jit(fn).lower_for(*args)
        assert replay_safe(compiled.program) is safe
    x = np.zeros(3)
    with pytest.raises(IndexError) as got:
        fusejit.jit(written_first)(x, np.arange(3.0), np.array([5]))
    if not on_cuda():  # (the CUDA backend leaves host arguments as passed: no note)
        assert "'x' may already hold values this call wrote" in "".join(got.value.__notes__)
