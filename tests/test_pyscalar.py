"""Python-scalar arguments (frontend.pyscalar): arithmetic among them is Python's, run by the
prelude at call time; they meet NumPy as weak scalars; `**` type guards trace a variant."""

from __future__ import annotations

import operator
from typing import Any

import numpy as np
import pytest
from conftest import assert_same, c_structure
from hypothesis import given
from hypothesis import strategies as st

import fusejit
from fusejit import jit
from fusejit.errors import ConcretizationError
from fusejit.frontend.ir import format_graph
from fusejit.frontend.pyscalar import Prelude, Step
from fusejit.frontend.trace import trace


def outcome(fn: Any, *args: Any) -> Any:
    """The value, or the exception type, of fn(*args)."""
    try:
        with np.errstate(all="ignore"):
            return fn(*args)
    except Exception as e:  # noqa: BLE001 - compared by type
        return type(e)


def assert_outcome(got: Any, expected: Any) -> None:
    if isinstance(expected, type):
        assert got is expected, f"got {got!r}, Python raises {expected.__name__}"
    else:
        assert_same(got, expected)


# --- results: Python objects of Python's types ----------------------------------------------


@pytest.mark.parametrize("a,b", [(2.0, 3.0), (2, 3), (True, True), (7, 2.5)])
def test_scalar_only_arithmetic_gives_python_types(a: Any, b: Any) -> None:
    def f(a, b):
        return a * b + 1, a / b, a - b, a == b, a < b, -a, abs(a - b * 3)

    assert_same(jit(f)(a, b), f(a, b))


def test_bools_follow_python() -> None:
    def f(a, b):
        return a + b, a & b, a | b, a ^ b, ~a

    assert_same(jit(f)(True, True), f(True, True))


def test_integers_do_not_overflow() -> None:
    def f(a, b):
        return a * b, a ** 3, a << 70, divmod(-a, b)

    big = 2**62 + 1
    assert_same(jit(f)(big, 12345), f(big, 12345))


def test_argument_returned_is_the_same_object() -> None:
    def f(x, a):
        return x * 2, a

    big = 10**30
    y, a = jit(f)(np.ones(3), big)
    assert a is big


def test_returned_big_int_never_reaches_c() -> None:
    """A Python int the kernels do not read may be out of int64's range."""
    def f(x, a, b):
        return x + 1, a * b

    got = jit(f)(np.ones(2), 2**40, 2**40)
    assert_same(got, f(np.ones(2), 2**40, 2**40))


# --- meeting NumPy ---------------------------------------------------------------------------


@pytest.mark.parametrize("dtype", [np.float32, np.int16, np.uint8])
def test_prelude_value_meets_arrays_as_weak_scalar(dtype: type) -> None:
    def f(x, a, b):
        return x * (a // b) + (a - b), (a + b) * x

    x = np.arange(6, dtype=dtype).reshape(2, 3)
    assert_same(jit(f)(x, 7, 3), f(x, 7, 3))


def test_numpy_functions_of_python_scalars_give_numpy_scalars() -> None:
    def f(a, b):
        return np.exp(a * b), np.float32(2) * a, np.maximum(a, b), a * np.int8(3)

    assert_same(jit(f)(0.5, 2.0), f(0.5, 2.0))
    assert_same(jit(f)(3, 2), f(3, 2))


def test_out_of_int64_range_python_int_with_uint64_array() -> None:
    def f(x, s):
        return x + s, x * s

    x = np.arange(3, dtype=np.uint64)
    fj = jit(f)
    for s in (2**63, 2**64 - 1, 5):
        assert_same(fj(x, s), f(x, s))
    for s in (2**64, -1):  # NumPy refuses both
        with pytest.raises(OverflowError):
            f(x, s)
        with pytest.raises(OverflowError):
            fj(x, s)


@pytest.mark.parametrize("dtype", [np.float16, np.float32, np.float64, np.uint64, np.int8])
def test_python_ints_of_any_size_meet_arrays_as_numpy_does(dtype: type) -> None:
    """NumPy converts a Python int to a float through a double (2**60 + 2**36 + 1 rounds twice
    on its way to float32), accepts ints beyond int64 with float and uint64 arrays, and
    raises OverflowError where they do not fit."""
    def f(x, s):
        return x + s, x * 3 + (2**60 + 2**36 + 1) * (x > 0)

    fj, x = jit(f), np.arange(3).astype(dtype)
    for s in (3, 2**60 + 2**36 + 1, 2**63, 2**64 - 1, 2**70, -5):
        assert_outcome(outcome(fj, x, s), outcome(f, x, s))


# --- Python's errors and value-dependent types -----------------------------------------------


def test_zero_division_raises_like_python() -> None:
    def f(x, a, b):
        return x * (a / b)

    fj, x = jit(f), np.ones(3, np.float32)
    with pytest.raises(ZeroDivisionError):
        fj(x, 1.0, 0.0)  # at trace time
    assert_same(fj(x, 3.0, 2.0), f(x, 3.0, 2.0))
    with pytest.raises(ZeroDivisionError):
        fj(x, 1.0, 0.0)  # at call time, from the prelude
    assert fj.trace_count == 1


def test_power_type_guard_traces_a_variant_once() -> None:
    def f(x, a, b):
        return a ** b, x * a ** b

    fj, x = jit(f), np.arange(3, dtype=np.int32)
    for a, b in [(2, 3), (7, -2), (2, 5), (3, -1), (2, 3)]:
        assert_same(fj(x, a, b), f(x, a, b))
    assert fj.trace_count == 2  # int ** non-negative int, int ** negative int


def test_power_giving_complex_is_a_new_trace() -> None:
    def f(a, b):
        return a ** b

    fj = jit(f)
    assert_same(fj(8.0, 0.5), f(8.0, 0.5))
    assert_same(fj(-8.0, 0.5), f(-8.0, 0.5))  # a Python complex, as Python gives
    assert fj.trace_count == 2


def test_control_flow_on_python_scalar_names_the_fix() -> None:
    def f(x, n):
        if n > 0:
            return x
        return -x

    with pytest.raises(ConcretizationError, match="static_argnames"):
        jit(f)(np.ones(2), 3)
    assert_same(jit(f, static_argnames="n")(np.ones(2), 3), np.ones(2))


# --- every call path runs the prelude --------------------------------------------------------


def test_stub_path_recomputes_the_prelude() -> None:
    def f(x, lr, t):
        scale = lr * (1 - 0.9 ** t) / (1 - 0.99 ** t)
        return x * scale, scale

    fj, x = jit(f), np.linspace(0, 1, 8, dtype=np.float32)
    for t in range(1, 6):
        assert_same(fj(x, 0.01, t), f(x, 0.01, t))
    assert fj.trace_count == 1
    compiled = fj.lower_for(x, 0.01, 1)
    assert compiled.prelude and len(compiled.prelude.steps) == 6
    if c_structure():  # the C backend's stub (CUDA runs through CudaExecutable.run)
        assert compiled.stub is not None and "_retry" not in compiled.stub.source  # float**int


def test_in_place_update_with_prelude() -> None:
    def step(w, g, lr, decay):
        w -= (lr * (1 - decay)) * g

    fj = jit(step)
    w, g = np.ones(5), np.arange(5.0)
    w2 = w.copy()
    fj(w, g, 0.5, 0.25)
    step(w2, g, 0.5, 0.25)
    assert_same(w, w2)
    fj(w, w, 0.5, 0.25)  # aliased arguments take another path
    step(w2, w2, 0.5, 0.25)
    assert_same(w, w2)


def test_out_argument_with_prelude() -> None:
    def f(x, a, b):
        return x * (a + b)

    x, buf = np.arange(4.0), np.empty(4)
    assert jit(f)(x, 1.5, 2.0, out=buf) is buf
    assert_same(buf, f(x, 1.5, 2.0))


def test_export_keeps_numpy_scalar_rules(tmp_path: Any) -> None:
    def f(x, a, b):
        return x * (a * b)

    res = fusejit.export(f, np.ones(3, np.float32), 2.0, 3.0, path=str(tmp_path))
    lib = fusejit.load(res.library)
    assert_same(lib(np.ones(3, np.float32), 2.0, 3.0), f(np.ones(3, np.float32), 2.0, 3.0))


# --- the IR ----------------------------------------------------------------------------------


def test_prelude_is_printed_with_the_graph() -> None:
    def f(x, a, b):
        return x * (a * b + 1)

    graph, positions = trace(f, [np.ones(2), 2.0, 3.0], python_scalars=True)
    text = format_graph(graph)
    assert "python %p3 = %p1 * %p2  (float)" in text
    assert "python %p4 = %p3 + 1  (float)" in text
    assert positions == [0, 4]


def test_without_python_scalars_the_trace_is_numpy_only() -> None:
    graph, positions = trace(lambda x, a, b: x * (a * b), [np.ones(2), 2.0, 3.0])
    assert graph.prelude is None and positions == [0, 1, 2]


def test_prelude_evaluate_and_guards() -> None:
    p = Prelude(2, [Step("pow", (("v", 0), ("v", 1)), 2, int, guard=True),
                    Step("add", (("v", 2), ("c", 1)), 3, int)])
    assert p.evaluate((2, 3)) == (2, 3, 8, 9)
    assert p.evaluate((2, -1)) is None  # a float: another trace
    assert p.evaluate((2, -1), guarded=False) == (2, -1, 0.5, 1.5)
    assert p.types((2, -1, 0.5, 1.5)) == (float,)


# --- property: the prelude is Python ---------------------------------------------------------

_BINARY = ["add", "sub", "mul", "truediv", "floordiv", "mod", "pow", "lt", "eq", "and", "xor"]
_VALUES = st.one_of(st.booleans(), st.integers(-6, 6), st.integers(-2**70, 2**70),
                    st.sampled_from([0.0, -0.0, 0.5, -2.5, 3.0, 1e300, float("inf"),
                                     float("nan")]))


@st.composite
def _programs(draw: Any) -> list[tuple[str, int, int]]:
    n = draw(st.integers(1, 5))
    return [(draw(st.sampled_from(_BINARY)), draw(st.integers(0, 2 + i)),
             draw(st.integers(0, 2 + i))) for i in range(n)]


def _build(program: list[tuple[str, int, int]]) -> Any:
    def f(a, b, c):
        vals = [a, b, c]
        for op, i, j in program:
            x, y = vals[i], vals[j]
            if op == "pow":  # keep powers small: Python would compute huge integers
                y = y % 3
            vals.append(getattr(operator, op if op not in ("and", "xor") else op + "_")(x, y))
        return vals[-1]

    return f


@given(_programs(), _VALUES, _VALUES, _VALUES)
def test_prelude_matches_python(program: list[tuple[str, int, int]], a: Any, b: Any,
                                c: Any) -> None:
    f = _build(program)
    expected = outcome(f, a, b, c)
    if expected is fusejit.UnsupportedError:  # pragma: no cover - not raised by Python
        return
    got = outcome(jit(f), a, b, c)
    if isinstance(expected, complex):
        assert got is fusejit.UnsupportedError
        return
    assert_outcome(got, expected)


def test_adam_step_with_bias_correction_in_python() -> None:
    """The bias correction `lr * sqrt(1 - b2**t) / (1 - b1**t)` is Python arithmetic on the
    step count: computed per call by the prelude, one trace for every t."""
    def adam(w, g, m, v, t, lr=1e-3, b1=0.9, b2=0.999, eps=1e-8):
        m *= b1
        m += (1 - b1) * g
        v *= b2
        v += (1 - b2) * g * g
        lr_t = lr * (1 - b2 ** t) ** 0.5 / (1 - b1 ** t)
        w -= lr_t * m / (np.sqrt(v) + eps)
        return lr_t

    rng = np.random.default_rng(0)
    state = [rng.standard_normal(64).astype(np.float32), np.zeros(64, np.float32),
             np.zeros(64, np.float32)]
    ref = [a.copy() for a in state]
    fj = jit(adam)
    for t in range(1, 6):
        g = rng.standard_normal(64).astype(np.float32)
        w, m, v = state
        got = fj(w, g, m, v, t)
        expected = adam(ref[0], g, ref[1], ref[2], t)
        assert type(got) is float and got == expected
        for a, b in zip(state, ref):
            assert_same(a, b)
    assert fj.trace_count == 1


def test_converted_int_argument_is_returned_unconverted() -> None:
    """An int argument used only with floats is passed to C as a double; returned, it is
    still the caller's int (also on the path that writes arguments in place)."""
    def f(w, s):
        w += s
        return s, w * s

    fj = jit(f)
    w, ref = np.ones(3), np.ones(3)
    big = 2**70
    got = fj(w, big)
    expected = f(ref, big)
    assert got[0] is big
    assert_same(got, expected)
    assert_same(w, ref)


@pytest.mark.parametrize("dtype", [np.int8, np.int64, np.uint8, np.uint64])
@pytest.mark.parametrize("n", [2**63, 2**64, 2**64 + 7, -2**63 - 1, -2**70, 10**30])
def test_huge_int_argument_compares_like_numpy(dtype, n) -> None:
    """NumPy compares a Python int with an integer array exactly, however large; an int
    argument no int64 holds is run by a sibling that traces it as a literal."""
    def f(x, n):
        return x < n, x == n, n >= x

    x = np.array([0, 1, 100], dtype)
    fj = jit(f)
    assert_same(fj(x, 5), f(x, 5))
    assert_same(fj(x, n), f(x, n))
    assert_same(fj(x, n), f(x, n))  # the sibling's compiled variant, reused
    assert_same(fj(x, 5), f(x, 5))  # the ordinary signature is untouched
    assert len(fj._siblings) == 1 and next(iter(fj._siblings.values())).trace_count == 1
    assert fj.trace_count == 2  # its own trace and its sibling's


def test_huge_int_argument_arithmetic_raises_like_numpy() -> None:
    def f(x, n):
        return x + n

    x = np.arange(3)
    with pytest.raises(OverflowError) as want:
        f(x, 2**64)
    with pytest.raises(OverflowError) as got:
        jit(f)(x, 2**64)
    assert str(got.value) == str(want.value)
    # a float array takes any int NumPy converts, and one it cannot raises as NumPy does
    assert_same(jit(f)(np.ones(2), 2**70), f(np.ones(2), 2**70))
    with pytest.raises(OverflowError):
        f(np.ones(2), 2**1100)
    with pytest.raises(OverflowError):
        jit(f)(np.ones(2), 2**1100)


def test_huge_int_keyword_argument_and_errors_that_are_not_about_ints() -> None:
    fj = jit(lambda x, n=0: x > n)
    x = np.arange(4, dtype=np.int32)
    assert_same(fj(x, n=-2**80), x > -2**80)
    buf = np.zeros(4, bool)
    assert fj(x, 2**80, out=buf) is buf and not buf.any()
    assert fj(x, n=-2**80, out=buf) is buf and buf.all()

    def g(x, s):
        return x * s ** 400  # Python's own OverflowError (a float), no huge int involved

    with pytest.raises(OverflowError):
        jit(g)(np.ones(2), 10.0)


@pytest.mark.parametrize("fn", [lambda a: np.positive(a), lambda a: np.positive(a) + 0,
                                lambda a: np.negative(-a), lambda a: (a, +a), lambda a: a])
@pytest.mark.parametrize("value", [3, -7, 0])
def test_python_int_returned_through_a_reducing_op_keeps_its_value(fn, value: int) -> None:
    # np.positive(a) optimises to `a`, which prelowering copies in a kernel: the Python int
    # must then reach C (it used to be treated as idle and read as 0).
    got, want = fusejit.jit(fn)(value), fn(value)
    got, want = (got, want) if isinstance(want, tuple) else ((got,), (want,))
    assert [type(g) for g in got] == [type(w) for w in want]
    assert list(got) == list(want)
