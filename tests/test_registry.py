"""frontend/registry.py is the one way NumPy reaches the frontend: no other module patches Tracer
or reads another module's handler table, a function claimed twice is an error, and the ndarray
methods it installs answer as their NumPy functions do."""

from __future__ import annotations

import ast
import importlib
from pathlib import Path

import numpy as np
import pytest

import fusejit
from fusejit.errors import UnsupportedError
from fusejit.frontend import registry
from fusejit.frontend.tracer import Tracer

FRONTEND = Path(registry.__file__).resolve().parent
TABLES = {"HANDLERS", "UFUNCS", "UFUNC_METHODS", "METHODS", "REFUSED"}


def _frontend_sources() -> list[Path]:
    return sorted(p for p in FRONTEND.glob("*.py") if p.name != "registry.py")


def test_only_the_registry_patches_tracer() -> None:
    found = []
    for path in _frontend_sources():
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Call) and getattr(node.func, "id", None) == "setattr":
                target = ast.unparse(node.args[0]) if node.args else ""
                if target.endswith("Tracer"):
                    found.append(f"{path.name}:{node.lineno}: {ast.unparse(node)}")
            if isinstance(node, (ast.Assign, ast.AnnAssign)):
                targets = node.targets if isinstance(node, ast.Assign) else [node.target]
                for t in targets:
                    if isinstance(t, ast.Attribute) and ast.unparse(t.value).endswith("Tracer"):
                        found.append(f"{path.name}:{node.lineno}: {ast.unparse(t)} = ...")
    assert not found, "Tracer patched outside frontend/registry.py:\n" + "\n".join(found)


def test_no_module_reads_another_modules_handler_table() -> None:
    found = [f"{p.name}:{node.lineno}: from {node.module} import {a.name}"
             for p in _frontend_sources()
             for node in ast.walk(ast.parse(p.read_text(encoding="utf-8")))
             if isinstance(node, ast.ImportFrom) for a in node.names if a.name in TABLES]
    assert not found, "handler tables merged outside frontend/registry.py:\n" + "\n".join(found)


def test_every_module_with_a_table_is_listed() -> None:
    listed = set(registry.MODULES)
    for path in _frontend_sources():
        module = importlib.import_module(f"fusejit.frontend.{path.stem}")
        if TABLES & set(vars(module)):
            assert path.stem in listed, f"frontend/{path.name} declares a table but is not in " \
                                        "registry.MODULES, so nothing reads it"


def test_every_numpy_function_has_one_owner() -> None:
    owners = {key: module for (table, key), module in registry._OWNER.items()
              if table == "HANDLERS"}
    assert set(owners) == set(registry.FUNCTIONS)
    assert registry.FUNCTIONS[np.sum] is importlib.import_module(
        "fusejit.frontend.reductions").HANDLERS[np.sum]


def test_a_function_claimed_twice_is_an_error() -> None:
    saved = dict(registry._OWNER), dict(registry.FUNCTIONS)
    try:
        registry._merge("HANDLERS", registry.FUNCTIONS, {np.sum: lambda *a: None}, "elsewhere")
    except RuntimeError as e:
        assert "np.sum" in str(e) or "'sum'" in str(e)
        assert "frontend/reductions.py" in str(e) and "frontend/elsewhere.py" in str(e)
    else:
        pytest.fail("a second handler for np.sum was accepted")
    finally:
        registry._OWNER.clear()
        registry._OWNER.update(saved[0])
        registry.FUNCTIONS.clear()
        registry.FUNCTIONS.update(saved[1])


def test_a_method_cannot_replace_one_tracer_defines() -> None:
    with pytest.raises(RuntimeError, match="Tracer.astype"):
        registry._install_method("astype", lambda self: None, "elsewhere")
    assert Tracer.astype.__qualname__ == "Tracer.astype"


def test_array_methods_follow_numpy() -> None:
    for name in registry.ARRAY_METHODS:
        assert hasattr(Tracer, name) == hasattr(np.ndarray, name), name


@pytest.mark.parametrize("name,args,kwargs", [
    ("sum", (0,), {}), ("prod", (), {"axis": 1, "keepdims": True}), ("max", (1,), {}),
    ("min", (), {}), ("mean", (0,), {}), ("var", (), {"ddof": 1}), ("std", (1,), {}),
    ("any", (0,), {}), ("all", (), {}), ("argmax", (1,), {}), ("argmin", (), {}),
    ("cumsum", (1,), {}), ("cumprod", (), {}), ("clip", (0.2, 0.7), {}), ("round", (2,), {}),
    ("ravel", (), {}), ("squeeze", (), {}), ("swapaxes", (0, 1), {}), ("repeat", (2, 1), {}),
    ("take", ([2, 0],), {"axis": 1}), ("diagonal", (1,), {}), ("trace", (), {}),
])
def test_array_method_is_its_numpy_function(name: str, args: tuple, kwargs: dict) -> None:
    x = np.random.default_rng(0).random((3, 4))

    def f(a):
        return getattr(a, name)(*args, **kwargs)

    got, want = fusejit.jit(f)(x), f(x)
    np.testing.assert_allclose(got, want, rtol=1e-12)
    assert np.asarray(got).dtype == np.asarray(want).dtype
    assert np.shape(got) == np.shape(want)


def test_ufunc_method_without_handler_is_a_clear_error() -> None:
    with pytest.raises(UnsupportedError, match="add.reduceat is not supported"):
        fusejit.jit(lambda a: np.add.reduceat(a, [0, 1]))(np.ones(3))


def test_dot_method_and_operators_route_through_the_registry() -> None:
    x = np.arange(6.0).reshape(2, 3)

    def f(a):
        b = a.dot(a.T)
        b += 1
        return -b, divmod(a, 4.0), a @ a.T

    got, want = fusejit.jit(f)(x), f(x)
    for g, w in zip(got[:1] + got[1] + got[2:], want[:1] + want[1] + want[2:]):
        np.testing.assert_allclose(g, w)


def test_var_with_ddof_traces_without_numpys_empty_slice_warning() -> None:
    import warnings

    x = np.random.default_rng(1).random((3, 4))
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        got = fusejit.jit(lambda a: (np.var(a, ddof=1), a.std(axis=0, ddof=1)))(x)
    np.testing.assert_allclose(got[0], np.var(x, ddof=1))
    np.testing.assert_allclose(got[1], x.std(axis=0, ddof=1))
