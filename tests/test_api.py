"""The public API: decorator forms, metadata, static arguments, kwargs and defaults, output
structures, Python-scalar arguments, retracing rules, and the README examples."""

from __future__ import annotations

import functools

import numpy as np
import pytest
import scipy.special
from conftest import assert_same, assert_unmodified, cancellation_atol, snapshot

import fusejit
from fusejit import jit

RNG = np.random.default_rng(1234)


def rand(*shape: int, dtype: type = np.float64) -> np.ndarray:
    return RNG.standard_normal(shape).astype(dtype)


# --- decorator forms and metadata ------------------------------------------------------------


def test_decorator_without_parentheses() -> None:
    @jit
    def f(x, y):
        """Add and scale."""
        return (x + y) * 2

    x, y = rand(3, 4), rand(4)
    assert isinstance(f, fusejit.JitFunction)
    assert_same(f(x, y), (x + y) * 2)


def test_decorator_with_arguments() -> None:
    @jit(static_argnums=1)
    def f(x, n):
        return x * n

    @jit()
    def g(x):
        return -x

    x = rand(5)
    assert_same(f(x, 3), x * 3)
    assert_same(g(x), -x)


def test_jit_as_a_function_call() -> None:
    def f(x):
        return np.sqrt(np.abs(x))

    x = rand(7, dtype=np.float32)
    assert_same(jit(f)(x), f(x))
    assert_same(jit(static_argnames="x")(f)(2.0), f(2.0))


def test_wraps_metadata() -> None:
    def my_function(x, y=1.0):
        """The docstring."""
        return x + y

    my_function.custom = "attr"
    f = jit(my_function)
    assert f.__name__ == "my_function"
    assert f.__qualname__ == my_function.__qualname__
    assert f.__doc__ == "The docstring."
    assert f.__module__ == __name__
    assert f.__wrapped__ is my_function
    assert f.custom == "attr"
    assert functools.WRAPPER_ASSIGNMENTS  # the attributes checked above


# --- static arguments ------------------------------------------------------------------------


def test_static_argnums_specialise_and_allow_python_control_flow() -> None:
    @jit(static_argnums=(1,))
    def f(x, mode):
        if mode == "square":
            return x * x
        return x + 1

    x = rand(4)
    assert_same(f(x, "square"), x * x)
    assert_same(f(x, "inc"), x + 1)
    assert f.trace_count == 2
    assert_same(f(x, "square"), x * x)
    assert f.trace_count == 2


def test_static_argnums_negative_index_and_argnames() -> None:
    @jit(static_argnums=-1)
    def f(x, k):
        return x ** k

    @jit(static_argnames=("k",))
    def g(x, k=2):
        return np.split(x, k, axis=0)[0]

    x = rand(6)
    assert_same(f(x, 3), x ** 3)
    assert_same(g(x), x[:3])
    assert_same(g(x, k=3), x[:2])
    assert_same(g(x, 2), x[:3])
    assert g.trace_count == 2


def test_static_argnames_unknown_name_is_an_error() -> None:
    with pytest.raises(ValueError, match="no parameter 'nope'"):
        jit(lambda x: x, static_argnames="nope")


def test_unhashable_static_argument_is_a_type_error() -> None:
    f = jit(lambda x, opts: x * opts[0], static_argnums=1)
    with pytest.raises(TypeError, match="hashable"):
        f(rand(3), [2.0])


def test_static_value_change_retraces_but_not_otherwise() -> None:
    f = jit(lambda x, n: x * n, static_argnums=1)
    x = rand(3)
    for n in (2, 3, 2, 3, 4):
        assert_same(f(x, n), x * n)
    assert f.trace_count == 3


# --- kwargs and defaults ---------------------------------------------------------------------


def test_kwargs_and_defaults() -> None:
    @jit
    def f(x, y=2.0, z=None):
        return x * y if z is None else x * y + z

    x = rand(3, dtype=np.float32)
    assert_same(f(x), x * 2.0)
    assert_same(f(x, 3.0), x * 3.0)
    assert_same(f(y=3.0, x=x), x * 3.0)
    assert_same(f(x, z=np.float32(1)), x * 2.0 + np.float32(1))
    with pytest.raises(TypeError):
        f(x, w=1)
    with pytest.raises(TypeError):
        f()


def test_keyword_call_does_not_retrace() -> None:
    f = jit(lambda x, y: x - y)
    x, y = rand(4), rand(4)
    assert_same(f(x, y), x - y)
    assert_same(f(x=x, y=y), x - y)
    assert_same(f(x, y=y), x - y)
    assert f.trace_count == 1


# --- outputs -------------------------------------------------------------------------------


@pytest.mark.parametrize("kind", ["array", "scalar", "tuple", "list", "dict", "nested", "static"])
def test_output_structures(kind: str) -> None:
    def f(x, y):
        a = x * y
        b = np.exp(x) - 1
        s = (x * y)[0, 1]  # a NumPy scalar
        return {
            "array": a,
            "scalar": s,
            "tuple": (a, b),
            "list": [b, a, s],
            "dict": {"prod": a, "exp": b},
            "nested": {"k": [(a, s), {"b": b}], "t": (b,)},
            "static": (a, "label", None, 3, 2.5),
        }[kind]

    x, y = rand(2, 3), rand(3)
    assert_same(jit(f)(x, y), f(x, y))


def test_zero_d_results_are_numpy_scalars_like_numpy() -> None:
    def f(x, a):
        return x + 1, a * 2, np.where(a > 0, a, 0.0), a[()], a[...], a.astype(np.float32)

    x = np.float32(1.5)  # NumPy scalar
    a = np.array(2.0)  # 0-d array
    assert_same(jit(f)(x, a), f(x, a))


def test_returning_an_input_unchanged() -> None:
    f = jit(lambda x, y: (x, y * 2, x))
    x, y = rand(3), rand(3)
    out = f(x, y)
    assert out[0] is x and out[2] is x
    assert_same(out[1], y * 2)


def test_distinct_outputs_do_not_alias() -> None:
    """`x * 2` twice gives two independent arrays in NumPy; CSE must not make them one."""
    f = jit(lambda x: (x * 2, x * 2, np.copy(x), x.copy()))
    x = rand(4)
    a, b, c, d = f(x)
    assert a is not b and c is not d and c is not x and d is not x
    a[0] = 100.0
    c[0] = 100.0
    assert b[0] == x[0] * 2 and d[0] == x[0]
    same = jit(lambda x: (lambda y: (y, y))(x * 2))(x)
    assert same[0] is same[1]  # one object in NumPy, one object here


def test_output_simplified_to_an_input_is_a_new_object() -> None:
    """`-(-x)` may be simplified to `x`, but NumPy returns a new array (or, for 0-d, a NumPy
    scalar): the caller must not get its argument back."""
    f = jit(lambda x: (np.negative(-x), x))
    for x in (rand(3), np.array(2.0, np.float32), np.float64(1.5)):
        out = f(x)
        assert_same(out, f.fn(x))
        assert out[1] is x
        if isinstance(x, np.ndarray) and x.ndim:
            assert out[0] is not x
            out[0][...] = 7
            assert not np.any(x == 7)


def test_results_of_consecutive_calls_are_independent() -> None:
    """Big outputs may be recycled between calls, but never while the caller holds them."""
    f = jit(lambda x: np.sin(x) * 2)
    x1, x2 = rand(300, 300), rand(300, 300)
    r1 = f(x1)
    keep = r1[::2]  # a view keeps the buffer alive too
    r2 = f(x2)
    assert r1 is not r2
    assert_same(r1, np.sin(x1) * 2)
    assert_same(r2, np.sin(x2) * 2)
    del r1
    r3 = f(x2)
    assert_same(keep, (np.sin(x1) * 2)[::2])
    assert_same(r3, np.sin(x2) * 2)


# --- argument kinds --------------------------------------------------------------------------


def test_python_scalar_arguments_are_weak() -> None:
    """Python scalars follow NEP 50: they do not upcast arrays or NumPy scalars."""
    f = jit(lambda x, s: (x + s, x * s, s - x))
    for x in (np.arange(5, dtype=np.int8), np.float32(2.5), rand(3, dtype=np.float32),
              np.arange(3, dtype=np.uint16)):
        for s in (3, 2.5, True):
            assert_same(f(x, s), f.fn(x, s))


def test_python_scalar_value_change_does_not_retrace() -> None:
    f = jit(lambda x, s: x * s)
    x = rand(3, dtype=np.float32)
    for s in (1.5, 2.5, -3.0):
        assert_same(f(x, s), x * s)
    assert f.trace_count == 1
    assert_same(f(x, 2), x * 2)  # int is a new signature
    assert_same(f(x, True), x * True)  # so is bool
    assert f.trace_count == 3


def test_python_scalar_only_arithmetic_returns_python_scalars() -> None:
    def f(a, b):
        return a * b + 1

    assert_same(jit(f)(2.0, 3.0), f(2.0, 3.0))


def test_python_int_negative_power_follows_python() -> None:
    def f(a, b):
        return a ** b

    assert_same(jit(f)(7, -2), f(7, -2))


def test_python_int_beyond_int64_with_uint64_array() -> None:
    def f(x, s):
        return x + s

    x = np.arange(3, dtype=np.uint64)
    assert_same(jit(f)(x, 2**63), f(x, 2**63))


def test_out_of_range_python_int_comparison_is_exact() -> None:
    """NumPy compares an int8 array with 300 exactly (no OverflowError, no wrap-around)."""
    def f(x, s):
        return x < s, x == s, x > -1000, x >= 300, x != 2**70

    x = np.array([-128, 0, 127], np.int8)
    assert_same(jit(f)(x, 300), f(x, 300))
    assert_same(jit(f)(x, -5), f(x, -5))


def test_mixed_signed_unsigned_comparison_is_exact() -> None:
    def f(a, b):
        return a < b, a <= b, a == b, a != b, a > b, a >= b

    a = np.array([-1, 0, 5, -(2**63), 2**63 - 1], np.int64)
    b = np.array([2**64 - 1, 0, 5, 2**63, 2**63 - 1], np.uint64)
    assert_same(jit(f)(a, b), f(a, b))
    assert_same(jit(f)(b, a), f(b, a))
    assert_same(jit(f)(np.int8(-3), b), f(np.int8(-3), b))


@pytest.mark.parametrize("case", range(10))
def test_python_int_edge_cases_in_where_and_clip(case: int) -> None:
    """np.where casts an out-of-range Python int unsafely (wraps); clip drops a Python-int
    bound beyond an integer array's range (numpy/_core/_methods.py:_clip) and raises
    OverflowError for one on the wrong side; literal and argument forms alike."""
    u = np.array([0, 5, 200, 255], np.uint8)
    i = np.array([-128, -3, 0, 127], np.int8)
    fn, args = [
        (lambda x, s: np.where(x > 3, x, s), (u, -1)),
        (lambda x: np.where(x > 3, x, -1), (u,)),
        (lambda x: x.clip(-3, 100), (u,)),
        (lambda x, lo: np.clip(x, lo, 100), (u, -3)),
        (lambda x, lo, hi: x.clip(lo, hi), (i, -1000, 5)),
        (lambda x, hi: np.clip(x, 2, hi), (i, 300)),
        (lambda x, lo: np.clip(x, lo, None), (u, 300)),
        (lambda x, lo: np.clip(x, lo, 7.5), (i, -300)),
        # a float bound makes the result float: a Python-int argument below an unsigned
        # array's range is then an ordinary bound (the structural fuzzer, seed 1879)
        (lambda x, lo, hi: np.clip(x, lo, hi), (np.uint32(5), np.float64(0.1), -1)),
        (lambda x, hi: x.clip(0.5, hi), (u, -1)),
    ][case]
    try:
        expected = fn(*args)
    except OverflowError:
        with pytest.raises(OverflowError):
            jit(fn)(*args)
        return
    assert_same(jit(fn)(*args), expected)


def test_numpy_scalar_arguments() -> None:
    f = jit(lambda x, s: (x * s, np.maximum(x, s), s + s))
    x = np.arange(4, dtype=np.int16)
    for s in (np.int8(3), np.float32(0.5), np.uint64(2), np.bool_(True), np.float64(-1.5)):
        assert_same(f(x, s), f.fn(x, s))


def test_zero_size_and_size_one_and_zero_d_inputs() -> None:
    f = jit(lambda x, y: (x * y + 1, np.exp(x) > y))
    for xs, ys in [((0,), (0,)), ((3, 0), (0,)), ((1,), (5,)), ((), (4, 1)), ((2, 1), (1, 3)),
                   ((0, 3), (1, 1))]:
        x, y = np.asarray(rand(*xs)), np.asarray(rand(*ys))
        assert_same(f(x, y), f.fn(x, y))


@pytest.mark.parametrize("layout", ["transposed", "stepped", "reversed", "broadcast",
                                    "odd_strides", "unaligned", "readonly"])
def test_non_contiguous_inputs(layout: str) -> None:
    base = rand(6, 8)
    if layout == "transposed":
        x = base.T
    elif layout == "stepped":
        x = base[::2, 1::3]
    elif layout == "reversed":
        x = base[::-1, ::-2]
    elif layout == "broadcast":
        x = np.broadcast_to(base[:1], (6, 8))
    elif layout == "odd_strides":  # strides that are not a multiple of the itemsize
        buf = np.zeros(6 * 13 * 8, np.uint8)
        x = np.ndarray((6, 8), np.float64, buffer=buf, strides=(13 * 8, 13))
        x[...] = base
    elif layout == "unaligned":  # contiguous, but the data pointer is not 8-byte aligned
        buf = np.zeros(6 * 8 * 8 + 1, np.uint8)
        x = np.ndarray((6, 8), np.float64, buffer=buf, offset=1)
        x[...] = base
        assert not x.flags.aligned
    else:
        x = base.copy()
        x.setflags(write=False)
    f = jit(lambda x, y: (np.tanh(x) * y, x.T + 1))
    y = rand(x.shape[1])
    snap = snapshot([x, y])
    assert_same(f(x, y), f.fn(x, y))
    assert_unmodified(snap)
    assert f.trace_count == 1
    assert_same(f(x, y), f.fn(x, y))
    assert f.trace_count == 1


def test_large_arrays_run_in_parallel_correctly() -> None:
    """Big enough to take the OpenMP path (FJ_PAR_MIN), with a broadcast temporary."""
    f = jit(lambda x, v: np.where(x > 0, x * np.exp(v), -x) + np.float32(1))
    x = rand(513, 257, dtype=np.float32)
    v = rand(1, 257, dtype=np.float32)
    assert_same(f(x, v), f.fn(x, v))


@pytest.mark.parametrize("axis", [0, 1, 2, -1, -3])
def test_split_along_any_axis(axis: int) -> None:
    def f(x):
        parts = np.split(x, 2, axis=axis)
        uneven = np.array_split(x, 3, axis=axis)
        at = np.split(x, [1, 3], axis=axis)
        return parts, [p * 2 for p in uneven], tuple(p + 1 for p in at)

    x = rand(4, 6, 4)
    assert_same(jit(f)(x), f(x))


def test_concurrent_calls_from_threads() -> None:
    """Each thread has its own arena for temporaries: concurrent calls do not interfere."""
    from concurrent.futures import ThreadPoolExecutor

    f = jit(lambda x, v: x * np.exp(v) - np.log1p(np.abs(v)))
    xs = [rand(64, 64) for _ in range(8)]
    v = rand(1, 64)
    f(xs[0], v)
    assert len(f.lower_for(xs[0], v).program.by_kind("temp")) >= 1
    with ThreadPoolExecutor(4) as pool:
        results = list(pool.map(lambda x: [f(x, v) for _ in range(20)], xs))
    for x, rs in zip(xs, results):
        # x * exp(v) and log1p(|v|) can nearly cancel: the tolerance is relative to the terms
        scale = np.abs(x * np.exp(v)) + np.log1p(np.abs(v))
        for r in rs:
            assert_same(r, f.fn(x, v), rtol=0, atol=1e-14 * scale.max())
            np.testing.assert_array_equal(r, rs[0])  # every call the same bits
    assert f.trace_count == 1


def _without_dispatcher(monkeypatch: pytest.MonkeyPatch) -> None:
    """Simulate a cold start: the C call dispatcher is still being built in the background,
    so calls take the cffi fallback path."""
    import importlib

    paths = importlib.import_module("fusejit.runtime.callpaths")
    executor = importlib.import_module("fusejit.runtime.executor")

    monkeypatch.setattr(executor, "ready_dispatcher", lambda: None)
    monkeypatch.setattr(paths, "ready_dispatcher", lambda: None)


def test_cold_start_path_contiguous(monkeypatch: pytest.MonkeyPatch) -> None:
    _without_dispatcher(monkeypatch)
    f = jit(lambda x, y: (x * y, np.exp(x)[0], y))
    x, y = rand(3, 4), rand(4)
    out = f(x, y)
    assert_same(out, f.fn(x, y))
    assert out[2] is y


@pytest.mark.parametrize("layout", ["stepped", "broadcast"])
def test_cold_start_path_non_contiguous(monkeypatch: pytest.MonkeyPatch, layout: str) -> None:
    _without_dispatcher(monkeypatch)
    x = np.arange(12.0)[::2] if layout == "stepped" else np.broadcast_to(np.arange(3.0), (4, 3))
    f = jit(lambda x: x + 1)
    assert_same(f(x), x + 1)


# --- retracing -------------------------------------------------------------------------------


def test_retrace_only_on_new_signature() -> None:
    f = jit(lambda x: x * 2 + 1)
    a = rand(3, 4)
    f(a)
    f(rand(3, 4))  # same signature, new data
    assert (f.trace_count, f.compile_count) == (1, 1)
    f(rand(4, 3))  # new shape
    assert f.trace_count == 2
    f(rand(3, 4, dtype=np.float32))  # new dtype
    assert f.trace_count == 3
    f(rand(4, 3).T)  # same shape and dtype as the first, new layout
    assert f.trace_count == 4
    f(rand(4, 3).T)  # that layout again
    f(rand(3, 4))
    f(np.float64(1.0))  # NumPy scalar vs ...
    f(np.array(1.0))  # ... 0-d array
    f(1.0)  # ... Python float
    assert f.trace_count == 7
    for g in (rand(3, 4), rand(4, 3).T, np.float64(2.0), np.array(3.0)):
        assert_same(f(g), f.fn(g))
    assert float(f(4.0)) == 9.0  # (its result type: test_python_scalar_only_arithmetic...)
    assert f.trace_count == 7


@pytest.mark.c_only
def test_lower_for_exposes_the_compiled_artefacts() -> None:
    f = jit(lambda x, y: np.sqrt(x * x + y * y))
    x, y = rand(8, dtype=np.float32), rand(8, dtype=np.float32)
    c = f.lower_for(x, y)
    assert c.graph.inputs and c.optimised.outputs
    assert len(c.program.kernels) == 1
    assert "fj_entry" in c.source and "float" in c.source
    assert c.positions == [0, 1]
    assert f.lower_for(x, y) is c
    assert f.trace_count == 1
    assert_same(f(x, y), np.sqrt(x * x + y * y))
    assert f.trace_count == 1


# --- README examples (copied verbatim from README.md) ------------------------------------------


def gelu(x):
    return 0.5 * x * (1 + np.tanh(0.7978845608 * (x + 0.044715 * x * x * x)))


def lstm_cell(concat, c):
    i, j, f, o = np.split(concat, 4, axis=1)
    sig = lambda z: 1 / (1 + np.exp(-z))  # noqa: E731
    new_c = c * sig(f + 1.0) + sig(i) * np.tanh(j)
    return new_c, np.tanh(new_c) * sig(o)


def lstm_cell_scipy(gates, c):
    """The same cell written with scipy.special.expit."""
    i, f, g, o = np.split(gates, 4, axis=1)
    c_new = scipy.special.expit(f) * c + scipy.special.expit(i) * np.tanh(g)
    return np.tanh(c_new) * scipy.special.expit(o), c_new


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_readme_gelu(dtype: type) -> None:
    f = jit(gelu)
    x = np.random.default_rng(0).random(1 << 12).astype(dtype) * 8 - 4
    assert_same(f(x), gelu(x), atol=cancellation_atol(x))
    assert_same(f(x), gelu(x), atol=cancellation_atol(x))
    assert f.trace_count == 1
    assert len(f.lower_for(x).program.kernels) == 1


@pytest.mark.parametrize("cell", [lstm_cell, lstm_cell_scipy])
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_readme_lstm_cell_is_one_kernel(cell, dtype: type) -> None:
    f = jit(cell)
    rng = np.random.default_rng(1)
    a, c = rng.random((64, 256)).astype(dtype), rng.random((64, 64)).astype(dtype)
    # new_c sums products of O(1) terms: an absolute tolerance at that scale as well
    atol = 2e-6 if dtype == np.float32 else 1e-14
    assert_same(f(a, c), cell(a, c), atol=atol)
    program = f.lower_for(a, c).program
    assert len(program.kernels) == 1
    stores = {s.access.buf for s in program.kernels[0].stores()}
    assert stores == {b.index for b in program.by_kind("output")} and len(stores) == 2


def test_import_leaves_the_compiler_stages_unloaded():
    """`import fusejit` stays light: tracing, lowering and codegen load on the first compile."""
    import subprocess
    import sys

    code = ("import sys, fusejit\n"
            "heavy = ['fusejit.runtime.compiler', 'fusejit.lowering.lower', 'fusejit.codegen.c',"
            " 'fusejit.runtime.explain', 'fusejit.runtime.aot']\n"
            "print([m for m in heavy if m in sys.modules])\n")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         check=True).stdout.strip()
    assert out == "[]", out


@pytest.mark.c_only
def test_warm_first_call_of_an_elementwise_function_loads_only_what_it_needs(tmp_path):
    """Issue 19 (warm first call): a function without matmul, reduction, scan, sort or scatter
    does not load those lowering stages, the renderer (its C is cached) or numpy.random; one
    with a reduction loads the row kernels, one with a matmul the gemm stages."""
    import os
    import subprocess
    import sys

    code = ("import sys, numpy as np, fusejit\n"
            "kind = sys.argv[1]\n"
            "f = {'gelu': lambda x: 0.5 * x * (1 + np.tanh(0.79 * (x + 0.04 * x * x * x))),\n"
            "     'rows': lambda x: x / x.sum(axis=1, keepdims=True),\n"
            "     'mm': lambda x: np.tanh(x @ x)}[kind]\n"
            "fusejit.jit(f)(np.ones((8, 8)))\n"
            "mods = ['fusejit.lowering.' + m for m in ('matmul', 'matvec', 'epilogue',"
            " 'gemm_update', 'lapack', 'scan', 'sort', 'scatter', 'scatter_rows', 'rowwise')]\n"
            "mods += ['fusejit.codegen.c', 'numpy.random']\n"
            "print(' '.join(m.split('.')[-1] for m in mods if m in sys.modules))\n")
    env = dict(os.environ, FUSEJIT_CACHE_DIR=str(tmp_path))

    def loaded(kind: str) -> set[str]:
        out = subprocess.run([sys.executable, "-c", code, kind], capture_output=True,
                             text=True, check=True, env=env).stdout
        return set(out.split())

    for kind in ("gelu", "rows", "mm"):
        assert "c" in loaded(kind)  # cold: rendered
    assert loaded("gelu") == set()  # warm
    assert loaded("rows") == {"rowwise"}
    assert {"matmul", "epilogue", "gemm_update"} <= loaded("mm")


def test_defaults_left_to_the_function_are_constants() -> None:
    # `def f(x, axis=1, mode="sum")` works called as f(x): a default the caller does not pass
    # is a constant of the definition (one compile per set of defaulted parameters), while an
    # argument passed explicitly is traced (and an axis then needs static_argnames=).
    x = np.arange(6.0).reshape(2, 3)

    def f(v, axis=1, mode="sum", k=2.0, w=None):
        r = getattr(v, mode)(axis=axis) * k
        return r if w is None else r * w

    jf = jit(f)
    for kwargs in ({}, {"k": 3.0}, {"k": np.float64(5)}, {"w": np.array([2.0, 3.0])}):
        np.testing.assert_array_equal(jf(x, **kwargs), f(x, **kwargs))
    np.testing.assert_array_equal(jf(x, out=np.empty(2)), f(x))
    sibling = jf._sibling(frozenset({1, 2, 4}))  # axis, mode, w left to their defaults
    before = sibling.compile_count
    np.testing.assert_array_equal(jf(x, k=4.0), f(x, k=4.0))
    assert sibling.compile_count == before  # k is traced: a new value compiles nothing
    with pytest.raises(fusejit.errors.ArgumentTypeError, match="static_argnames"):
        jf(x, mode="max")  # passed explicitly: traced, and a str is not an array
    js = jit(f, static_argnames=("axis", "mode"))
    np.testing.assert_array_equal(js(x, 0, "max"), f(x, 0, "max"))
    np.testing.assert_array_equal(js(x, mode="min"), f(x, mode="min"))


def test_returned_views_of_arguments_are_copies() -> None:
    """README, What fusejit guarantees: a returned view of an argument is a new array (writing
    into it leaves the argument as it was, where NumPy's view would write it); the argument
    itself returned is the caller's object."""
    x = np.arange(12.0).reshape(3, 4)
    for f in (lambda x: x[::2], lambda x: x.T, lambda x: x.reshape(4, 3), lambda x: x[0]):
        got = fusejit.jit(f)(x)
        np.testing.assert_array_equal(got, f(x))
        assert not np.shares_memory(got, x)
    assert fusejit.jit(lambda x: x)(x) is x
