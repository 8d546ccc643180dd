"""The package's layout rules, read from the source: no private name (`_x`) is imported
across a file boundary or read through another of the package's modules (`R._axes` of
`from . import reductions as R`), and the modules of lowering/ and codegen/ import each other
without circles (function-level imports included)."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
SKIP = {"build", ".git", "__pycache__"}


def _sources() -> list[Path]:
    """The package's own sources: not build output, caches, hidden folders (a virtualenv such as
    CI's .venv-ci lives in the checkout) or anything installed into site-packages."""
    def ours(p: Path) -> bool:
        parts = p.relative_to(ROOT).parts
        return not (SKIP & set(parts) or "site-packages" in parts
                    or any(d.startswith(".") for d in parts[:-1]))

    return sorted(p for p in ROOT.rglob("*.py") if ours(p))


def _module(path: Path) -> list[str]:
    parts = list(path.relative_to(ROOT).with_suffix("").parts)
    return parts[:-1] if parts[-1] == "__init__" else parts


def _package_imports(path: Path) -> list[tuple[ast.ImportFrom | ast.Import, list[str]]]:
    """Each import of the package in a file: `from ... import` with the module it imports from
    (as package parts), or `import fusejit...` (with [])."""
    here = _module(path)
    package = here if path.name == "__init__.py" else here[:-1]
    out: list[tuple[ast.ImportFrom | ast.Import, list[str]]] = []
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.ImportFrom):
            if node.level:
                base = package[:len(package) - node.level + 1]
                out.append((node, base + (node.module.split(".") if node.module else [])))
            elif node.module and node.module.split(".")[0] == "fusejit":
                out.append((node, node.module.split(".")[1:]))
        elif isinstance(node, ast.Import) and any(a.name.split(".")[0] == "fusejit"
                                                  for a in node.names):
            out.append((node, []))
    return out


def _imports(path: Path) -> list[tuple[int, list[str], list[str]]]:
    """(line, imported module as package parts, names) of each import from the package."""
    out = []
    for node, mod in _package_imports(path):
        if isinstance(node, ast.ImportFrom):
            out.append((node.lineno, mod, [a.name for a in node.names]))
        else:
            out += [(node.lineno, a.name.split(".")[1:], []) for a in node.names
                    if a.name.split(".")[0] == "fusejit"]
    return out


def test_no_private_name_is_imported_across_files() -> None:
    found = [f"{p.relative_to(ROOT)}:{line}: from {'.'.join(mod) or 'fusejit'} import {name}"
             for p in _sources() for line, mod, names in _imports(p)
             for name in names if name.startswith("_") and not name.startswith("__")]
    assert not found, "private names imported from another file:\n" + "\n".join(found)


def _module_aliases(path: Path, known: set[tuple[str, ...]]) -> set[str]:
    """The names a file binds to the package's own modules (`from . import tracer as T`,
    `import fusejit.frontend.ops as O`)."""
    names = set()
    for node, mod in _package_imports(path):
        if isinstance(node, ast.ImportFrom):
            names |= {a.asname or a.name for a in node.names if tuple(mod + [a.name]) in known}
        else:
            names |= {a.asname for a in node.names if a.asname and
                      tuple(a.name.split(".")[1:]) in known}
    return names


def test_no_private_name_is_read_through_another_module() -> None:
    sources = [p for p in _sources()  # (tests and benchmarks may reach inside: A/B patches)
               if p.relative_to(ROOT).parts[0] not in ("tests", "benchmarks")]
    known = {tuple(_module(p)) for p in _sources()}
    found = []
    for p in sources:
        aliases = _module_aliases(p, known)
        for node in ast.walk(ast.parse(p.read_text(encoding="utf-8"))):
            if (isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name)
                    and node.value.id in aliases and node.attr.startswith("_")
                    and not node.attr.startswith("__")):
                found.append(f"{p.relative_to(ROOT)}:{node.lineno}: {node.value.id}.{node.attr}")
    assert not found, "private names read through another module:\n" + "\n".join(found)


def _resolve(mod: list[str], name: str, known: set[tuple[str, ...]]) -> tuple[str, ...] | None:
    """The module an import refers to: `from pkg import mod` names a module too."""
    if tuple(mod + [name]) in known:
        return tuple(mod + [name])
    return tuple(mod) if tuple(mod) in known else None


@pytest.mark.parametrize("stage", ["lowering", "codegen"])
def test_no_import_circles_inside(stage: str) -> None:
    files = {tuple(_module(p)): p for p in (ROOT / stage).glob("*.py")}
    known = set(files)
    edges: dict[tuple[str, ...], set[tuple[str, ...]]] = {m: set() for m in files}
    for m, p in files.items():
        for _, mod, names in _imports(p):
            for name in names or [""]:
                dst = _resolve(mod, name, known)
                if dst is not None and dst != m and dst[-1] != "__init__":
                    edges[m].add(dst)
    state: dict[tuple[str, ...], int] = {}
    stack: list[tuple[str, ...]] = []

    def visit(m: tuple[str, ...]) -> None:
        state[m] = 1
        stack.append(m)
        for d in sorted(edges[m]):
            if state.get(d) == 1:
                cycle = stack[stack.index(d):] + [d]
                raise AssertionError("import circle: " + " -> ".join(".".join(c) for c in cycle))
            if d not in state:
                visit(d)
        stack.pop()
        state[m] = 2

    for m in sorted(edges):
        if m not in state:
            visit(m)


def _names_a_backend(node: ast.expr, other: ast.expr, source: str) -> bool:
    """Whether comparing `node` with `other` compares backend names."""
    values = ([node.value] if isinstance(node, ast.Constant) else
              [e.value for e in node.elts if isinstance(e, ast.Constant)]
              if isinstance(node, (ast.Tuple, ast.List, ast.Set)) else [])
    if "cuda" in values:
        return True
    return "c" in values and "backend" in (ast.get_source_segment(source, other) or "")


def test_no_backend_name_is_compared_outside_the_registry() -> None:
    """Backends are peers (runtime/backends): code asks the Backend protocol what it needs
    instead of testing `backend == "cuda"`."""
    registry = ROOT / "runtime" / "backends"
    found = []
    for p in _sources():
        if p.is_relative_to(registry) or p.is_relative_to(ROOT / "tests"):
            continue
        source = p.read_text(encoding="utf-8")
        for node in ast.walk(ast.parse(source)):
            if isinstance(node, ast.Compare):
                sides = [node.left, *node.comparators]
                if any(_names_a_backend(a, b, source) or _names_a_backend(b, a, source)
                       for a, b in zip(sides, sides[1:])):
                    found.append(f"{p.relative_to(ROOT)}:{node.lineno}: "
                                 f"{ast.get_source_segment(source, node)}")
    assert not found, "backend names compared outside runtime/backends:\n" + "\n".join(found)
