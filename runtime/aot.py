"""Ahead-of-time export: write a lowered Program as `libNAME.so` + `libNAME.h` + `libNAME.json`.

The driver (`jit.export`) traces and lowers the function and hands over the Program, its C
source (the very text the JIT compiles) and an `ExportRequest` describing the Python side
(parameters, example arguments, result structure). This module turns that into an
`ExportSpec`, renders the header and API wrapper (`codegen.export`), compiles the library with
hidden visibility for everything but the public API, and writes the metadata that
`runtime.aot_load.load` checks. Every file is written to a temporary name and renamed into
place.
"""

from __future__ import annotations

import inspect
import json
import os
import re
import sys
import tempfile
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from .. import config
from ..codegen.c import COptions, render, uses_blas
from ..codegen.export import (
    ExportArg,
    ExportOut,
    ExportSpec,
    c_identifier,
    check_name,
    render_header,
    render_wrapper,
)
from ..errors import UnsupportedError
from ..frontend import ops
from ..frontend.ir import Graph
from ..lowering.loop_ir import Program, Store
from ..lowering.lower import lower
from ..lowering.memplan import plan
from .backend_c import VERSION
from .toolchain import Toolchain, detect, run_cc

FORMAT = "fusejit-export"
FORMAT_VERSION = 1
_JSON_SCALARS = (str, int, float, bool, type(None))


@dataclass
class ExportRequest:
    """What the driver knows about the Python function being exported (plain data)."""

    function: str  # module:qualname
    params: list[str]  # parameter names, in order
    args: tuple  # the bound, normalised example arguments
    positions: list[int]  # parameter position of each graph input
    out_tree: Any  # frontend.pytree TreeDef of the result
    out_scalar: list[bool]  # per flat result: a NumPy scalar rather than a 0-d array
    ranges: dict[int, tuple[int, int]]  # graph input -> allowed values of a Python int
    defaults: dict[str, Any] = field(default_factory=dict)  # parameter -> Python scalar default


@dataclass
class ExportResult:
    """The files an export wrote."""

    name: str
    library: str
    header: str
    metadata: str
    spec: ExportSpec


def error_codes() -> dict[int, tuple[str, str]]:
    """Kernel status bits -> (define suffix, message) of the op table's error checks (the
    flags an export, lowered without BLAS, can return), from errors.Status."""
    return {code: (c.status.macro, f"{c.status.exc.__name__}: {c.status.message}")
            for code, c in sorted(ops.ERROR_CHECKS.items())}


def leaf_paths(tree: Any, prefix: str = "result") -> list[str]:
    """Where each flat result leaf sits in the returned structure, e.g. "result[1]['h']"."""
    kind = tree[0]
    if kind == "leaf":
        return [prefix]
    if kind in ("tuple", "list"):
        return [p for i, t in enumerate(tree[1]) for p in leaf_paths(t, f"{prefix}[{i}]")]
    if kind == "namedtuple":
        return [p for i, t in enumerate(tree[2]) for p in leaf_paths(t, f"{prefix}[{i}]")]
    if kind == "dict":
        return [p for k, t in zip(tree[1], tree[2]) for p in leaf_paths(t, f"{prefix}[{k!r}]")]
    return []


def tree_to_json(tree: Any) -> Any:
    """The result structure as JSON; dict keys and constant leaves must be JSON scalars."""
    kind = tree[0]
    if kind == "leaf":
        return ["leaf"]
    if kind in ("tuple", "list"):
        return [kind, [tree_to_json(t) for t in tree[1]]]
    if kind == "dict":
        for k in tree[1]:
            if not isinstance(k, _JSON_SCALARS) or (isinstance(k, float) and k != k):
                raise UnsupportedError(f"cannot export a result dict with key {k!r}: keys must "
                                       "be str, int, float, bool or None")
        return ["dict", list(tree[1]), [tree_to_json(t) for t in tree[2]]]
    if not isinstance(tree[1], _JSON_SCALARS):
        raise UnsupportedError(f"cannot export a result that contains the constant "
                               f"{tree[1]!r}: only arrays, scalars, str and None can be returned")
    return ["static", tree[1]]


def _kind(a: Any) -> str:
    if isinstance(a, np.ndarray):
        return "array"
    if isinstance(a, np.generic):
        return "numpy_scalar"
    if isinstance(a, bool):
        return "bool"
    return "int" if isinstance(a, int) else "float"


def describe(req: ExportRequest, program: Program, name: str, workspace: str,
             compiler: str = "", openmp: bool = True) -> ExportSpec:
    """The ExportSpec of `program` for the Python function described by `req`."""
    written = {s.access.buf for k in program.kernels for s in k.body if isinstance(s, Store)}
    taken: set[str] = set()
    by_ref = {b.ref: b for b in program.buffers if b.kind == "input"}
    args = []
    for k, pos in enumerate(req.positions):
        buf = by_ref[k]
        a = req.args[pos]
        contiguous = not isinstance(a, np.ndarray) or a.flags.c_contiguous or a.size == 0
        args.append(ExportArg(req.params[pos], c_identifier(req.params[pos], taken), pos,
                              _kind(a), buf.dtype, buf.shape, buf.strides, contiguous,
                              buf.index, buf.index in written, req.ranges.get(k)))
    paths = leaf_paths(req.out_tree)
    first: dict[int, int] = {}
    outputs = []
    for j, ref in enumerate(program.outputs):
        scalar = req.out_scalar[j]
        if ref.kind == "input":
            a = args[ref.index]
            outputs.append(ExportOut(j, paths[j], a.dtype, a.shape, scalar, "input",
                                     input=ref.index))
            continue
        buf = program.buffers[ref.index]
        if ref.index in first:
            outputs.append(ExportOut(j, paths[j], buf.dtype, buf.shape, scalar, "alias",
                                     alias_of=first[ref.index]))
            continue
        first[ref.index] = j
        outputs.append(ExportOut(j, paths[j], buf.dtype, buf.shape, scalar, "buffer",
                                 f"out{j}", ref.index))
    static = [(req.params[i], repr(v)) for i, v in enumerate(req.args)
              if i not in req.positions]
    notes = []
    if "-march=native" in compiler:
        notes.append("Built with -march=native: it runs on CPUs with this machine's instruction "
                     "set (or a superset).")
    return ExportSpec(name, req.function, args, outputs, static, program.arena_bytes,
                      workspace, error_codes(), VERSION, compiler,
                      openmp=openmp, notes=notes)


def _metadata(spec: ExportSpec, req: ExportRequest, library: str, header: str) -> dict:
    return {
        "format": FORMAT, "format_version": FORMAT_VERSION, "fusejit_version": VERSION,
        "name": spec.name, "function": spec.function,
        "library": os.path.basename(library), "header": os.path.basename(header),
        "abi": spec.abi(), "workspace": spec.workspace,
        "workspace_bytes": spec.workspace_bytes,
        "symbols": {"call": spec.entry if spec.workspace == "caller" else None,
                    "alloc": spec.entry_alloc, "workspace_size": f"{spec.name}_workspace_size",
                    "strerror": f"{spec.name}_strerror", "abi": f"{spec.name}_abi"},
        "params": req.params,
        "args": [{"name": a.name, "cname": a.cname, "position": a.position, "kind": a.kind,
                  "dtype": a.dtype.name, "shape": list(a.shape), "strides": list(a.strides),
                  "contiguous": a.contiguous, "written": a.written,
                  "range": list(a.range) if a.range else None,
                  **({"default": req.defaults[a.name]} if a.name in req.defaults else {})}
                 for a in spec.args],
        "static": [{"name": n, "repr": r} for n, r in spec.static],
        "outputs": [{"index": o.index, "path": o.path, "dtype": o.dtype.name,
                     "shape": list(o.shape), "scalar": o.scalar, "source": o.source,
                     "cname": o.cname or None, "input": o.input, "alias_of": o.alias_of}
                    for o in spec.outputs],
        "tree": tree_to_json(req.out_tree),
        "errors": {str(code): list(v) for code, v in spec.errors.items()},
        "blas": spec.blas, "compiler": spec.compiler,
    }


def _link_flags(tc: Toolchain, soname: str) -> list[str]:
    flags = [*tc.cflags, "-fvisibility=hidden"]
    if sys.platform.startswith("linux"):
        flags += [f"-Wl,-soname,{soname}", "-Wl,-z,defs"]
    return flags


def _write_text(path: str, text: str) -> None:
    d = os.path.dirname(path) or "."
    fd, tmp = tempfile.mkstemp(prefix=".fusejit-", dir=d)
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as f:
            f.write(text)
        os.chmod(tmp, 0o644)
        os.replace(tmp, path)
    except BaseException:
        if os.path.exists(tmp):
            os.unlink(tmp)
        raise


def export_library(program: Program, source: str, req: ExportRequest, path: str, name: str,
                   workspace: str = "caller", toolchain: Toolchain | None = None
                   ) -> ExportResult:
    """Compile `program` (whose C text is `source`) into the export at `path`."""
    if workspace not in ("caller", "alloc"):
        raise ValueError(f"workspace must be 'caller' or 'alloc', got {workspace!r}")
    check_name(name)
    tc = toolchain or detect()
    stem, _ = os.path.splitext(path)
    header, meta_path = stem + ".h", stem + ".json"
    os.makedirs(os.path.dirname(os.path.abspath(path)), exist_ok=True)
    soname = os.path.basename(path)
    flags = _link_flags(tc, soname)
    compiler = f"{tc.version} ({os.path.basename(tc.cc)} {' '.join(flags)})"
    spec = describe(req, program, name, workspace, compiler, tc.openmp)
    header_text = render_header(spec)
    full = source + "\n" + header_text + render_wrapper(spec, program)
    d = os.path.dirname(os.path.abspath(path))
    with tempfile.TemporaryDirectory(prefix=".fusejit-export-", dir=d) as tmp:
        src = os.path.join(tmp, f"lib{name}.c")
        out = os.path.join(tmp, soname)
        with open(src, "w", encoding="utf-8") as f:
            f.write(full)
        run_cc([tc.cc, *flags, src, "-o", out, *tc.libs], f"export {name}")
        _write_text(header, header_text)
        os.replace(out, path)
    _write_text(meta_path, json.dumps(_metadata(spec, req, path, header), indent=1) + "\n")
    return ExportResult(name, path, header, meta_path, spec)



def export_compiled(fn: Any, signature: inspect.Signature, args: tuple, g: Graph,
                    program: Program, source: str, positions: list[int], path: str | None,
                    name: str | None, workspace: str, fastmath: bool) -> ExportResult:
    """`fusejit.export` once `fn` is compiled for `args` (optimised graph `g`, `program` and
    its C `source`): default name and path, the program again without BLAS or profiling
    timers when it has them (the library must not need SciPy), then `export_library`."""
    if name is None:
        m = re.fullmatch(r"lib(\w+)\.\w+", os.path.basename(path or ""), flags=re.ASCII)
        name = m.group(1) if m else re.sub(r"\W", "_", fn.__name__, flags=re.ASCII)
    if path is None or path.endswith(("/", os.sep)) or os.path.isdir(path):
        path = os.path.join(path or "build", f"lib{name}.so")
    if uses_blas(program) or config.current().profile:
        strides = [b.strides for b in sorted(program.by_kind("input"), key=lambda b: b.ref)]
        program = plan(lower(g, strides, blas=False))
        source = render(program, COptions(par_min=config.current().parallel_min,
                                          libmvec=detect().libmvec, vtile=detect().vtile))
    req = ExportRequest(
        function=f"{getattr(fn, '__module__', '?')}:{fn.__qualname__}",
        params=list(signature.parameters), args=args, positions=positions,
        out_tree=g.out_tree, out_scalar=list(g.out_scalar[:g.n_results]),
        ranges={k: n.attrs["range"] for k, n in enumerate(g.inputs) if "range" in n.attrs},
        defaults={p: v.default for p, v in signature.parameters.items()
                  if type(v.default) in (bool, int, float)})
    return export_library(program, source, req, path, name, workspace,
                          toolchain=detect().with_fastmath(fastmath))
