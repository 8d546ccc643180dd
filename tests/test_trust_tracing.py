"""Issue 19 ("Trust"), the tracing half: what a traced function sees and does is what the
same NumPy function sees and does, or a clear error naming the user's line.

Cases: generators and coroutines are refused; a jitted function called inside a traced one is
inlined; str/list arguments raise a TypeError as NumPy does (9); random draws are refused at the
user's line (4); global and closure arrays are read at every call, other globals are guarded
(5)."""

from __future__ import annotations

import numpy as np
import pytest
from conftest import assert_same
from numpy.random import normal

from fusejit import jit
from fusejit.errors import TraceError, UnsupportedError
from fusejit.frontend.captures import CapturedWarning


def test_generator_function_is_refused_at_decoration() -> None:
    def gen(x):
        yield x + 1

    with pytest.raises(UnsupportedError, match="generator"):
        jit(gen)


def test_returned_generator_is_refused() -> None:
    f = jit(lambda x: (x + i for i in range(3)))
    with pytest.raises(UnsupportedError, match="returned a generator"):
        f(np.ones(3))


def test_jitted_function_inside_a_traced_one_is_inlined() -> None:
    inner = jit(lambda x, k: x * k + 1, static_argnums=1)
    scale = jit(lambda x: np.sqrt(x))

    @jit
    def outer(x):
        return inner(scale(x), 3) - scale(x=x)

    x = np.linspace(0.0, 4.0, 7)
    np.testing.assert_allclose(outer(x), np.sqrt(x) * 3 + 1 - np.sqrt(x))
    assert outer.compile_count == 1
    assert inner.compile_count == scale.compile_count == 0  # one graph: no separate programs
    assert len(outer.lower_for(x).program.kernels) == 1


def test_inlined_call_with_out() -> None:
    inner = jit(lambda x: x * 2)

    @jit
    def outer(x):
        buf = np.zeros_like(x)
        inner(x, out=buf)
        return buf + 1

    x = np.arange(5.0)
    np.testing.assert_array_equal(outer(x), x * 2 + 1)


# --- str / list arguments (issue 19, 9): see also test_errors.py ---------------------------


@pytest.mark.parametrize("arg", ["abc", [1.0, 2.0]], ids=["str", "list"])
def test_str_and_list_arguments_raise_typeerror_like_numpy(arg) -> None:
    def f(x):
        return x + 1

    with pytest.raises(TypeError):
        f(arg)
    with pytest.raises(TypeError, match="np.asarray"):
        jit(f)(arg)


# --- no frozen random numbers (issue 19, 4) ----------------------------------------------------

RNG = np.random.default_rng(0)
LEGACY = np.random.RandomState(0)


def _line(marker: str) -> str:
    with open(__file__) as f:
        for k, text in enumerate(f, 1):
            if f"# {marker}" in text:
                return f"{__file__}:{k}"
    raise AssertionError(marker)


def _draw_legacy(x):
    return x + np.random.rand(3)  # DRAW-LEGACY


def _draw_imported(x):
    return x + normal(size=3)  # DRAW-IMPORTED


def _draw_generator(x):
    return x + RNG.normal(size=3)  # DRAW-GENERATOR


def _draw_random_state(x):
    return x * LEGACY.uniform(size=3)  # DRAW-STATE


def _draw_unseeded(x):
    return x + np.random.default_rng().normal(size=3)  # DRAW-UNSEEDED


def _draw_in_helper(x):
    return _draw_generator(x) * 2


@pytest.mark.parametrize("fn, marker", [
    (_draw_legacy, "DRAW-LEGACY"), (_draw_imported, "DRAW-IMPORTED"),
    (_draw_generator, "DRAW-GENERATOR"), (_draw_random_state, "DRAW-STATE"),
    (_draw_unseeded, "DRAW-UNSEEDED"), (_draw_in_helper, "DRAW-GENERATOR"),
])
def test_random_draws_while_tracing_raise_at_the_users_line(fn, marker) -> None:
    with pytest.raises(TraceError, match="random") as info:
        jit(fn)(np.zeros(3))
    assert _line(marker) in str(info.value)


def test_seeded_generator_inside_the_function_is_numpys() -> None:
    def f(x):
        return x + np.random.default_rng(7).standard_normal(3)

    x = np.arange(3.0)
    jf = jit(f)
    np.testing.assert_array_equal(jf(x), f(x))
    np.testing.assert_array_equal(jf(x), f(x))  # the same numbers every call, as in NumPy


# --- global arrays are read at every call (issue 19, 5) -----------------------------------------

G = np.ones(5)
SCALE = 2.0
TABLE = np.arange(4.0)


def _uses_g(x):
    return x + G * SCALE


def _helper(x):
    return x * TABLE


def _uses_helper(x):
    return _helper(x) + 1


def test_global_array_written_in_place_is_seen_without_a_retrace() -> None:
    global G
    G = np.ones(5)
    f = jit(_uses_g)
    x = np.zeros(5)
    np.testing.assert_array_equal(f(x), x + 2.0)
    G[:] = 2
    np.testing.assert_array_equal(f(x), _uses_g(x))
    assert f.trace_count == 1
    G = np.full(5, 3.0)  # rebound, same shape and dtype: read, no retrace
    np.testing.assert_array_equal(f(x), _uses_g(x))
    assert f.trace_count == 1
    G = np.ones((2, 5), np.float32)  # another shape and dtype: traced again
    assert_same(f(x), _uses_g(x))
    assert f.trace_count == 2
    G = np.ones((5, 4))[:, 1]  # not contiguous: read through a contiguous copy
    assert_same(f(x), _uses_g(x))
    G = np.ones(5)


def test_global_scalar_rebound_is_seen() -> None:
    global SCALE
    f = jit(_uses_g)
    x = np.zeros(5)
    f(x)
    SCALE = 3.0
    try:
        np.testing.assert_array_equal(f(x), _uses_g(x))
        assert f.trace_count == 2
        SCALE = float("3.0")  # equal value: no retrace
        f(x)
        assert f.trace_count == 2
    finally:
        SCALE = 2.0


def test_arrays_read_by_called_helpers_and_closures_are_seen() -> None:
    f = jit(_uses_helper)
    x = np.ones(4)
    np.testing.assert_array_equal(f(x), _uses_helper(x))
    TABLE[0] = 100.0
    try:
        np.testing.assert_array_equal(f(x), _uses_helper(x))
    finally:
        TABLE[0] = 0.0

    def make():
        t = np.arange(3.0)

        def g(x):
            return x - t

        return g, t

    g, t = make()
    jg = jit(g)
    jg(np.zeros(3))
    t[:] = 5
    np.testing.assert_array_equal(jg(np.zeros(3)), -t)


def test_global_array_needed_at_trace_time_is_guarded_on_its_contents() -> None:
    mask = np.array([0.0, 1.0, 0.0])

    def f(x):
        return x * 2 if mask.any() else x - 1

    jf = jit(f)
    x = np.ones(3)
    np.testing.assert_array_equal(jf(x), f(x))
    mask[:] = 0
    np.testing.assert_array_equal(jf(x), f(x))
    assert jf.trace_count == 2


def test_writing_into_a_global_array_is_refused_at_the_users_line() -> None:
    def f(x):
        G[:] = x  # WRITE-GLOBAL
        return x

    with pytest.raises(UnsupportedError, match="Pass it as an argument") as info:
        jit(f)(np.ones(5))
    assert "test_trust_tracing.py" in str(info.value)


def test_a_global_set_of_numbers_warns() -> None:
    """A set has no path to read its numbers again (no order): read once, with a warning.
    Dicts, lists and tuples are followed (tests/test_trust_reached.py)."""
    weights = {2.0}

    def f(x):
        return x * max(weights)

    with pytest.warns(CapturedWarning, match="'weights'"):
        jit(f)(np.ones(2))


def test_functions_without_globals_have_no_prelude() -> None:
    """The per-call guards exist only where there are globals to read (dispatch stays cheap)."""
    f = jit(lambda x, y: x * y + 1)
    x = np.ones(16, np.float32)
    assert f.lower_for(x, x).prelude is None
    assert jit(_uses_g).lower_for(np.ones(5)).prelude is not None


def test_global_reads_with_several_results_and_python_scalars() -> None:
    """The prelude's reads and the call stub's own names do not collide (value 1 is the read
    of G, output 1 the second result)."""
    def f(x, k):
        return x + G, x * k, x - G * k

    x = np.arange(5.0)
    jf = jit(f)
    for k in (2, 3.5):
        assert_same(jf(x, k), f(x, k))
    G[1] = 7.0
    try:
        assert_same(jf(x, 2), f(x, 2))
    finally:
        G[1] = 1.0


def test_python_side_effects_run_once_per_trace(capsys) -> None:
    """README (Globals, closures and side effects): print and list.append in the body run
    when the function is traced, not at every call."""
    log: list[int] = []

    def f(x):
        print("tracing f")
        log.append(1)
        return x + 1

    jf = jit(f)
    for _ in range(3):
        jf(np.ones(3))
    jf(np.ones(4))  # a new signature: traced again
    assert len(log) == 2
    assert capsys.readouterr().out.count("tracing f") == 2


def test_a_global_tuple_of_arrays_is_read_and_export_bakes_globals(tmp_path) -> None:
    pair = (np.ones(2), np.zeros(2))

    def f(x):
        return x * pair[0] + pair[1]

    jf = jit(f)
    jf(np.ones(2))
    pair[1][:] = 5.0
    np.testing.assert_array_equal(jf(np.ones(2)), f(np.ones(2)))
    import fusejit

    res = fusejit.export(_uses_g, np.ones(5), path=str(tmp_path / "libg.so"))
    lib = fusejit.load(res.library)
    np.testing.assert_array_equal(lib(np.zeros(5)), np.zeros(5) + G * SCALE)


def test_cuda_backend_reads_global_arrays_at_every_call(monkeypatch: pytest.MonkeyPatch) -> None:
    import cuda_fake

    cuda_fake.install(monkeypatch)
    f = jit(_uses_helper, backend="cuda")
    x = np.ones(4)
    np.testing.assert_allclose(f(x), _uses_helper(x))
    TABLE[1] = 9.0
    try:
        np.testing.assert_allclose(f(x), _uses_helper(x))
    finally:
        TABLE[1] = 1.0
