"""Errors: what NumPy rejects, the compiled function rejects with the same exception type;
what fusejit cannot compile fails at trace time with a fusejit error naming the user's
file:line; a missing C compiler says so."""

from __future__ import annotations

import inspect
import os

import numpy as np
import pytest
from conftest import assert_same, assert_unmodified, snapshot

import fusejit
from fusejit import jit
from fusejit.errors import (
    ArgumentTypeError,
    CompilerNotFoundError,
    ConcretizationError,
    FusejitError,
    TraceError,
    UnsupportedError,
)


def line_of(fn, marker: str) -> str:
    """`file:line` of the line of `fn`'s source that contains `marker`."""
    lines, start = inspect.getsourcelines(fn)
    for k, text in enumerate(lines):
        if marker in text:
            return f"{__file__}:{start + k}"
    raise AssertionError(f"marker {marker!r} not in {fn.__name__}")


def raises_at(exc: type[BaseException], fn, marker: str, *args):
    """Call jit(fn)(*args): it must raise `exc` with a message naming the marked line."""
    with pytest.raises(exc) as info:
        jit(fn)(*args)
    where = line_of(fn, marker)
    assert where in str(info.value), f"{where} not in: {info.value}"
    return info.value


X = np.linspace(-1, 1, 6)


# --- tracer misuse: concrete values needed ----------------------------------------------------


def test_python_if_on_traced_value() -> None:
    def f(x):
        if x > 0:  # MARK
            return x
        return -x

    err = raises_at(ConcretizationError, f, "# MARK", np.array(1.5))
    assert isinstance(err, TypeError) and isinstance(err, TraceError)
    assert "np.where" in str(err) and "static_argnums" in str(err)


def test_while_and_boolean_operators_on_traced_values() -> None:
    def f(x):
        while x < 0:  # MARK
            x = x + 1
        return x

    def g(x, y):
        return x and y  # MARK

    raises_at(ConcretizationError, f, "# MARK", np.float64(-1))
    raises_at(ConcretizationError, g, "# MARK", np.array(True), np.array(False))


@pytest.mark.parametrize("conv", ["int", "float", "bool", "asarray", "array", "item", "index",
                                  "tolist"])
def test_conversions_to_concrete_values(conv: str, monkeypatch: pytest.MonkeyPatch) -> None:
    # np.asarray/np.array trace (tests/test_asarray.py) unless FUSEJIT_PATCH_NUMPY=0
    monkeypatch.setenv("FUSEJIT_PATCH_NUMPY", "0")

    def f(x):
        if conv == "int":
            return int(x)  # MARK
        if conv == "float":
            return float(x)  # MARK
        if conv == "bool":
            return bool(x)  # MARK
        if conv == "asarray":
            return np.asarray(x)  # MARK
        if conv == "array":
            return np.array(x) + 1  # MARK
        if conv == "item":
            return x.item()  # MARK
        if conv == "index":
            return [1.0, 2.0][x]  # MARK
        return x.tolist()  # MARK

    lines, start = inspect.getsourcelines(f)
    marked = [start + k for k, t in enumerate(lines) if "# MARK" in t]
    with pytest.raises(ConcretizationError) as info:
        jit(f)(np.int64(1))
    assert any(f"{__file__}:{n}" in str(info.value) for n in marked), str(info.value)
    if conv in ("asarray", "array"):
        assert "FUSEJIT_PATCH_NUMPY=0" in str(info.value)


# --- unsupported NumPy features ---------------------------------------------------------------


@pytest.mark.parametrize("name", ["histogram2d", "unique", "linalg", "reduceat", "method",
                                  "inplace", "setitem", "mask"])
def test_unsupported_numpy_features(name: str) -> None:
    def f(x):
        if name == "histogram2d":
            return np.histogram2d(x[0], x[1])  # MARK
        if name == "unique":
            return np.unique(x.reshape(2, 3), axis=0)  # MARK
        if name == "linalg":
            return np.linalg.eig(x)  # MARK
        if name == "reduceat":
            return np.add.reduceat(x, [0, 2])  # MARK
        if name == "method":
            return x.byteswap()  # MARK
        if name == "inplace":
            x @= x  # MARK
            return x
        if name == "setitem":
            x[x > 0] = x[:2]  # MARK  (two values for a selection of data-dependent length)
            return x
        return np.sort(x[x > 0])  # MARK

    lines, start = inspect.getsourcelines(f)
    marked = [start + k for k, t in enumerate(lines) if "# MARK" in t]
    x = X.copy()
    snap = snapshot([x])
    with pytest.raises(UnsupportedError) as info:
        jit(f)(x)
    assert isinstance(info.value, NotImplementedError)
    assert any(f"{__file__}:{n}" in str(info.value) for n in marked), str(info.value)
    assert "not supported" in str(info.value)
    if name == "linalg":  # named with its submodule, as the user wrote it
        assert "np.linalg." in str(info.value), str(info.value)
    assert_unmodified(snap)


def test_unsupported_function_error_names_the_function() -> None:
    err = raises_at(UnsupportedError, lambda x: np.trim_zeros(x[0]), "np.trim_zeros", X)
    assert "np.trim_zeros" in str(err)


def test_compiled_library_code_handed_a_traced_array() -> None:
    """A library's compiled code (Cython, C) that needs the array's memory raises a TypeError
    about the Tracer deep inside it; fusejit names the function that failed and the line."""
    err = raises_at(UnsupportedError, lambda x: memoryview(x), "memoryview", X)
    assert "bytes-like" in str(err)
    st = pytest.importorskip("scipy.stats")
    err = raises_at(UnsupportedError, lambda x: st.kendalltau(x[0], x[1])[0], "_kendall_dis",
                    X)
    assert "test_errors.py" in str(err)
    # (Cython's argument checks: "expected numpy.ndarray, got Tracer", "not Tracer")
    ndi, sl = pytest.importorskip("scipy.ndimage"), pytest.importorskip("scipy.linalg")
    raises_at(UnsupportedError, lambda x: ndi.label(x > 0)[0], "label", X)
    raises_at(UnsupportedError, lambda x: sl.sqrtm(np.outer(x, x)), "sqrtm", X)


# --- unsupported dtypes -----------------------------------------------------------------------


@pytest.mark.parametrize("arg", [
    np.array([1], dtype=object),
    np.array(["ab"]), np.array([b"ab"]), np.array(["2020-01-01"], dtype="datetime64[D]"),
    np.array([1.0], dtype=">f8"), np.array([1.0], dtype=">c8"), np.str_("a"),
], ids=["object", "str", "bytes", "datetime", "big-endian", "big-endian-complex",
        "str-scalar"])
def test_unsupported_argument_dtypes(arg) -> None:
    with pytest.raises(UnsupportedError) as info:
        jit(lambda x: x)(arg)
    assert "not supported" in str(info.value)


@pytest.mark.parametrize("arg", ["text", [1.0, 2.0], (1, 2), object()],
                         ids=["str", "list", "tuple", "object"])
def test_unsupported_argument_types(arg) -> None:
    # Issue 19 (9): a TypeError, as NumPy raises for such an operand (`"a" + 1`,
    # `np.sin("a")`, `[1.0] + 1`), with advice that works.
    with pytest.raises(ArgumentTypeError, match="static_argnums") as info:
        jit(lambda x: x + 1)(arg)
    assert isinstance(info.value, TypeError)
    assert "np.asarray" in str(info.value)
    with pytest.raises(TypeError):
        (lambda x: x + 1)(arg)


@pytest.mark.parametrize("arg", ["text", [1.0, 2.0]], ids=["str", "list"])
def test_str_and_list_arguments_raise_what_numpy_raises(arg) -> None:
    for f in (lambda x: x * 2.5, lambda x: np.sin(x)):  # noqa: PLW0108
        numpy_error = None
        try:
            f(arg)
        except TypeError as e:
            numpy_error = e
        with pytest.raises(TypeError):
            jit(f)(arg)
        if numpy_error is None:  # np.sin([1.0, 2.0]) works in NumPy: the advice says how
            with pytest.raises(TypeError, match=r"np\.asarray"):
                jit(f)(arg)


def test_unsupported_dtypes_inside_the_function() -> None:
    def f(x):
        return np.linalg.inv((x * 1j).reshape(2, 3)[:, :2])  # MARK

    def g(x):
        return np.linalg.det(x.astype(np.complex64).reshape(2, 3)[:, 1:])  # MARK

    def h(x):
        return x.astype("U3")  # MARK

    for fn in (f, g, h):
        err = raises_at(UnsupportedError, fn, "# MARK", X)
        assert "not supported" in str(err)


# --- NumPy's own errors, same type ------------------------------------------------------------


def test_integer_negative_power_raises_value_error_at_call() -> None:
    f = jit(lambda x, y: x ** y)
    x = np.arange(1, 5, dtype=np.int32)
    ok = np.array([0, 1, 2, 3], np.int32)
    bad = np.array([0, 1, -2, 3], np.int32)
    assert_same(f(x, ok), x ** ok)
    with pytest.raises(ValueError, match="negative integer powers"):
        x ** bad  # NumPy
    with pytest.raises(ValueError, match="negative integer powers"):
        f(x, bad)
    assert_same(f(x, ok), x ** ok)  # still usable afterwards
    assert f.trace_count == 1
    with pytest.raises(ValueError):
        jit(lambda x, s: x ** s)(x, np.int8(-1))
    with pytest.raises(ValueError):
        jit(lambda x: x ** -1)(x)


def test_integer_power_error_only_where_numpy_raises() -> None:
    """Unsigned and float exponents never raise; a zero-size array raises nothing."""
    f = jit(lambda x, y: x ** y)
    u = np.arange(4, dtype=np.uint8)
    assert_same(f(u, u), u ** u)
    assert_same(f(u.astype(np.int64), np.array([-1.5])), u.astype(np.int64) ** np.array([-1.5]))
    e = np.zeros(0, np.int16)
    assert_same(f(e, e - 1), e ** (e - 1))


def test_out_of_range_python_int_raises_overflow_error() -> None:
    a = np.arange(4, dtype=np.int8)
    with pytest.raises(OverflowError):
        a + 300  # NumPy, NEP 50
    with pytest.raises(OverflowError):
        jit(lambda x: x + 300)(a)  # a literal: at trace time
    f = jit(lambda x, s: x + s)
    assert_same(f(a, 5), a + 5)
    with pytest.raises(OverflowError):
        f(a, 300)  # an argument: same signature as f(a, 5), checked at call time
    with pytest.raises(OverflowError):
        f(a, -129)
    assert_same(f(a, -128), a + -128)
    assert f.trace_count == 1
    u = np.arange(3, dtype=np.uint16)
    with pytest.raises(OverflowError):
        f(u, -1)


def test_broadcast_mismatch_raises_value_error_naming_the_line() -> None:
    def f(x, y):
        return x + y  # MARK

    err = raises_at(ValueError, f, "# MARK", np.ones((2, 3)), np.ones((4,)))
    assert not isinstance(err, FusejitError)  # the NumPy exception type, not a subclass


def test_numpy_errors_from_views_and_split() -> None:
    with pytest.raises(ValueError):
        jit(lambda x: np.split(x, 4))(np.ones(6))  # not an equal division
    with pytest.raises(IndexError):
        jit(lambda x: x[7])(np.ones(6))
    with pytest.raises(IndexError):
        jit(lambda x: x[0, 0])(np.ones(6))
    with pytest.raises(np.exceptions.AxisError):
        jit(lambda x: np.split(x, 2, axis=2))(np.ones((2, 2)))
    with pytest.raises(ValueError):
        jit(lambda x: np.broadcast_to(x, (3, 2)))(np.ones(3))
    with pytest.raises(TypeError):
        jit(lambda x: np.bitwise_and(x, x))(np.ones(3))  # no loop for floats
    with pytest.raises(TypeError):
        jit(lambda x: x.astype(np.int8, casting="safe"))(np.ones(3))


def test_error_then_success_keeps_the_cache_consistent() -> None:
    f = jit(lambda x, y: x + y)
    with pytest.raises(ValueError):
        f(np.ones(3), np.ones(4))
    assert_same(f(np.ones(3), np.ones(3)), np.full(3, 2.0))
    n = f.trace_count
    with pytest.raises(ValueError):
        f(np.ones(3), np.ones(4))  # still an error: nothing bad was cached
    assert_same(f(np.ones(3), np.ones(3)), np.full(3, 2.0))
    assert f.trace_count == n and f.compile_count == 1


# --- missing C compiler -----------------------------------------------------------------------


@pytest.mark.c_only  # the C toolchain (test_cuda_jit covers a missing nvcc)
def test_missing_c_compiler(monkeypatch: pytest.MonkeyPatch, tmp_path) -> None:
    from fusejit.runtime import toolchain

    def clear() -> None:
        for fn in (getattr(toolchain, "_detect", None), getattr(toolchain, "detect", None)):
            if hasattr(fn, "cache_clear"):
                fn.cache_clear()

    monkeypatch.setenv("FUSEJIT_CC", "/nonexistent/cc")
    monkeypatch.delenv("CC", raising=False)
    monkeypatch.setenv("PATH", str(tmp_path))  # an empty directory: no cc, gcc or clang
    clear()
    try:
        with pytest.raises(CompilerNotFoundError) as info:
            jit(lambda x: x * 3 + 7)(np.arange(11.0))
        assert "C compiler" in str(info.value)
        assert isinstance(info.value, FusejitError)
    finally:
        monkeypatch.undo()
        clear()
    assert os.environ.get("FUSEJIT_CC") != "/nonexistent/cc"
    assert_same(jit(lambda x: x * 3 + 7)(np.arange(11.0)), np.arange(11.0) * 3 + 7)


def test_error_classes_are_exported() -> None:
    for name in ("FusejitError", "TraceError", "UnsupportedError", "ConcretizationError",
                 "CompileError", "CompilerNotFoundError"):
        assert issubclass(getattr(fusejit, name), Exception)
    assert issubclass(ConcretizationError, TypeError)
    assert issubclass(UnsupportedError, NotImplementedError)


# --- masks (scatters: tests/test_scatter.py): a clear UnsupportedError at the user's line -


@pytest.mark.parametrize("form, message", [
    ("mask", "returns x\\[mask\\].*depends on the data"),
    ("mask_and_index", "boolean mask"),
    ("bool_scalar", "boolean mask"),
    ("take_out", "np.take.*out="),
    ("nonzero", "returns np.nonzero\\(m\\)"),
    ("argwhere", "returns np.argwhere\\(m\\)"),
    ("compress", "returns x\\[mask\\]"),
])
def test_masks_and_scatters_are_refused_clearly(form: str, message: str) -> None:
    """(What masks can do: tests/test_masked.py.)"""
    def f(x):
        if form == "mask":
            return x[x > 0]  # MARK
        if form == "mask_and_index":
            return x.reshape(2, 1, 3)[x[:2] > 0, :, 1]  # MARK
        if form == "bool_scalar":
            return x[True, [0, 2]]  # MARK (x[True] alone is x[None]: test_gather.py)
        if form == "take_out":
            return np.take(x, [0, 2], out=np.empty(2))  # MARK
        if form == "nonzero":
            return np.nonzero(x)  # MARK
        if form == "argwhere":
            return np.argwhere(x)  # MARK
        return np.compress(x > 0, x)  # MARK

    lines, start = inspect.getsourcelines(f)
    marked = [start + k for k, t in enumerate(lines) if "# MARK" in t]
    x = X.copy()
    snap = snapshot([x])
    with pytest.raises(UnsupportedError, match=message) as info:
        jit(f)(x)
    assert any(f"{__file__}:{n}" in str(info.value) for n in marked), str(info.value)
    assert_unmodified(snap)


def test_matrix_and_masked_arguments_are_refused() -> None:
    """Checked by type without importing np.ma for plain arrays (the warm first call)."""
    f = fusejit.jit(lambda x: x + 1)
    with pytest.raises(fusejit.UnsupportedError, match="MaskedArray"):
        f(np.ma.array([1.0, 2.0], mask=[0, 1]))
    with pytest.raises(fusejit.UnsupportedError, match="matrix"):
        f(np.matrix([[1.0, 2.0]]))
