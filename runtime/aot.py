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

import dataclasses
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
from ..frontend.ir import Graph, after, node_ids
from ..kernels_cache.entries import file_digest
from ..lowering.loop_ir import Program, Store
from ..lowering.lower import lower
from ..lowering.memplan import plan
from . import targets
from .backend_c import VERSION
from .toolchain import Toolchain, detect, run_cc

FORMAT = "fusejit-export"
FORMAT_VERSION = 2
# Metadata fields that are about the files rather than the function: not in the signature table
# compiled into the library (everything else is, and `load` insists that both agree).
FILE_FIELDS = ("library", "header", "library_sha256")
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
    if isinstance(a, complex):
        return "complex"
    return "int" if isinstance(a, int) else "float"


def required_features(target: str) -> list[str]:
    """The CPU features (/proc/cpuinfo names) a library compiled for `target` may use and so
    needs: a level's own list, or for "native" the checkable ones this CPU has."""
    if target == "native":
        have = targets.cpu_features()
        return sorted(f for f in targets.CPU_SUPPORTS if f in have)
    return list(targets.TARGETS[targets.check_target(target)][1])


def describe(req: ExportRequest, program: Program, name: str, workspace: str,
             compiler: str = "", openmp: bool = True, target: str = "native") -> ExportSpec:
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
    features = required_features(target)
    if target == "native":
        notes = ["Built with -march=native: it runs on CPUs with this machine's instruction set "
                 "(or a superset); export with target='x86-64-v3' (--target) for others."]
    else:
        notes = [f"Built for {target} ({targets.TARGETS[target][0]}): it runs on every CPU "
                 "with that level's features."]
    checks = [(f, targets.CPU_SUPPORTS[f]) for f in features if f in targets.CPU_SUPPORTS]
    return ExportSpec(name, req.function, args, outputs, static, program.arena_bytes,
                      workspace, error_codes(), VERSION, compiler,
                      openmp=openmp, notes=notes, target=target, cpu_checks=checks)


def _metadata(spec: ExportSpec, req: ExportRequest, library: str, header: str) -> dict:
    return {
        "format": FORMAT, "format_version": FORMAT_VERSION, "fusejit_version": VERSION,
        "name": spec.name, "function": spec.function,
        "library": os.path.basename(library), "header": os.path.basename(header),
        "abi": spec.abi(), "workspace": spec.workspace,
        "workspace_bytes": spec.workspace_bytes,
        "symbols": {"call": spec.entry if spec.workspace == "caller" else None,
                    "alloc": spec.entry_alloc, "workspace_size": f"{spec.name}_workspace_size",
                    "strerror": f"{spec.name}_strerror", "abi": f"{spec.name}_abi",
                    "signature": f"{spec.name}_signature"},
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
        "target": spec.target, "cpu_features": required_features(spec.target),
    }


def signature_table(meta: dict) -> str:
    """The metadata without its file fields, as canonical JSON: the table compiled into the
    library (`NAME_signature()`) that `load` compares with the `.json`."""
    return json.dumps({k: v for k, v in meta.items() if k not in FILE_FIELDS},
                      sort_keys=True, separators=(",", ":"))


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
    """Compile `program` (whose C text is `source`, rendered for `toolchain`'s target) into
    the export at `path`."""
    if workspace not in ("caller", "alloc"):
        raise ValueError(f"workspace must be 'caller' or 'alloc', got {workspace!r}")
    check_name(name)
    tc = toolchain or detect()
    stem, _ = os.path.splitext(path)
    header, meta_path = stem + ".h", stem + ".json"
    # not group-writable whatever the umask: load refuses directories others can write into
    os.makedirs(os.path.dirname(os.path.abspath(path)), mode=0o755, exist_ok=True)
    soname = os.path.basename(path)
    flags = _link_flags(tc, soname)
    compiler = f"{tc.version} ({os.path.basename(tc.cc)} {' '.join(flags)})"
    spec = describe(req, program, name, workspace, compiler, tc.openmp, tc.march)
    header_text = render_header(spec)
    meta = _metadata(spec, req, path, header)
    full = source + "\n" + header_text + render_wrapper(spec, program, signature_table(meta))
    d = os.path.dirname(os.path.abspath(path))
    with tempfile.TemporaryDirectory(prefix=".fusejit-export-", dir=d) as tmp:
        src = os.path.join(tmp, f"lib{name}.c")
        out = os.path.join(tmp, soname)
        with open(src, "w", encoding="utf-8") as f:
            f.write(full)
        run_cc([tc.cc, *flags, src, "-o", out, *tc.libs], f"export {name}")
        os.chmod(out, 0o755)
        meta["library_sha256"] = file_digest(out)
        _write_text(header, header_text)
        os.replace(out, path)
    _write_text(meta_path, json.dumps(meta, indent=1) + "\n")
    return ExportResult(name, path, header, meta_path, spec)



def export_toolchain(target: str, fastmath: bool) -> Toolchain:
    """The toolchain an export for instruction-set `target` compiles with; TargetError (before
    anything is compiled or written) for a target that is unknown or that the compiler does
    not know. Exporting for a level this CPU cannot run is allowed: `load` checks."""
    native = detect().with_fastmath(fastmath)
    tc = native.with_march(targets.check_target(target))
    if targets.missing_features(target):
        # The probes' test programs cannot run here: OpenMP and libmvec are properties of the
        # compiler and C library, not of the instruction set, so this machine's answers hold.
        tc = dataclasses.replace(tc, openmp=native.openmp, libmvec=native.libmvec)
    return tc


def export_compiled(fn: Any, signature: inspect.Signature, args: tuple, g: Graph,
                    program: Program, source: str, positions: list[int], path: str | None,
                    name: str | None, workspace: str, tc: Toolchain) -> ExportResult:
    """`fusejit.export` once `fn` is compiled for `args` (optimised graph `g`, `program` and
    its C `source`): default name and path, the program again without BLAS or profiling
    timers when it has them (the library must not need SciPy), rendered for the toolchain
    `tc` of `export_toolchain`, then `export_library`."""
    if name is None:
        m = re.fullmatch(r"lib(\w+)\.\w+", os.path.basename(path or ""), flags=re.ASCII)
        name = m.group(1) if m else re.sub(r"\W", "_", fn.__name__, flags=re.ASCII)
    if path is None or path.endswith(("/", os.sep)) or os.path.isdir(path):
        path = os.path.join(path or "build", f"lib{name}.so")
    if uses_blas(program) or config.current().profile:
        strides = [b.strides for b in sorted(program.by_kind("input"), key=lambda b: b.ref)]
        with node_ids(after(g)):
            program = plan(lower(g, strides, blas=False))
    # the target's options (a level's own vector width and tile functions), not the JIT's
    source = render(program, COptions(par_min=config.current().parallel_min,
                                      libmvec=tc.libmvec, vtile=tc.vtile))
    req = ExportRequest(
        function=f"{getattr(fn, '__module__', '?')}:{fn.__qualname__}",
        params=list(signature.parameters), args=args, positions=positions,
        out_tree=g.out_tree, out_scalar=list(g.out_scalar[:g.n_results]),
        ranges={k: n.attrs["range"] for k, n in enumerate(g.inputs) if "range" in n.attrs},
        defaults={p: v.default for p, v in signature.parameters.items()
                  if type(v.default) in (bool, int, float)})
    return export_library(program, source, req, path, name, workspace, toolchain=tc)
