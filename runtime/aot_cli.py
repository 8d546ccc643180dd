"""`python -m fusejit export module:function --arg SPEC ... -o DIR`: the export command.

Parses argument specs (`float32[4096,4096]`, `float64[]`, `int64`, `float`, `value:3`),
imports the function (`module:function` importable from the current directory, or
`path/to/file.py:function`), and calls the export function the driver hands in (runtime may
not import the driver). Every failure is one clear line on stderr and a non-zero exit status,
never a traceback from fusejit's own code.
"""

from __future__ import annotations

import argparse
import ast
import importlib
import importlib.util
import inspect
import os
import re
import sys
import traceback
from collections.abc import Callable
from typing import Any

import numpy as np

from ..codegen.export import check_name
from ..errors import FusejitError
from ..frontend.ops import SUPPORTED_DTYPES

SPEC_HELP = ("an example argument: DTYPE[d0,d1,...] an array (DTYPE[] a 0-d array), DTYPE a "
             "NumPy scalar, int / float / bool a Python scalar, value:LITERAL a Python literal "
             "(for static arguments); DTYPE is one of "
             + ", ".join(sorted(d.name for d in SUPPORTED_DTYPES)))

_SPEC = re.compile(r"\s*(\w+)\s*(?:\[([^\]]*)\])?\s*")


class UsageError(Exception):
    """A bad command line (reported with exit status 2)."""


def parse_spec(spec: str) -> Any:
    """An example argument for `spec` (see SPEC_HELP); raises UsageError."""
    if spec.startswith("value:"):
        try:
            return ast.literal_eval(spec[len("value:"):].strip())
        except (ValueError, SyntaxError) as e:
            raise UsageError(f"bad --arg {spec!r}: not a Python literal ({e})") from None
    if spec.strip() in ("int", "float", "bool"):
        return {"int": 0, "float": 0.0, "bool": False}[spec.strip()]
    m = _SPEC.fullmatch(spec)
    if not m:
        raise UsageError(f"bad --arg {spec!r}: expected DTYPE[d0,d1,...], e.g. "
                         "float32[4096,4096] or float64[]")
    name, dims = m.group(1), m.group(2)
    try:
        dtype = np.dtype(name)
    except TypeError:
        dtype = None
    if dtype is None or dtype not in SUPPORTED_DTYPES or dtype.name != name:
        raise UsageError(f"bad --arg {spec!r}: unsupported dtype {name!r} (use one of "
                         f"{', '.join(sorted(d.name for d in SUPPORTED_DTYPES))})")
    if dims is None:
        return dtype.type(0)
    shape = []
    for d in filter(None, (p.strip() for p in dims.split(","))):
        if not d.isdigit():
            raise UsageError(f"bad --arg {spec!r}: dimension {d!r} is not a non-negative "
                             "integer")
        shape.append(int(d))
    if dims.strip() and len(shape) != len(dims.split(",")):
        raise UsageError(f"bad --arg {spec!r}: empty dimension")
    return np.zeros(shape, dtype)


def resolve(target: str) -> Callable[..., Any]:
    """The function named by `module:function` or `path/to/file.py:function`."""
    mod_name, sep, attr = target.rpartition(":")
    if not sep or not mod_name or not attr:
        raise UsageError(f"bad function {target!r}: expected module:function or "
                         "path/to/file.py:function")
    try:
        if mod_name.endswith(".py") or os.sep in mod_name:
            path = os.path.abspath(mod_name)
            if not os.path.isfile(path):
                raise UsageError(f"no such file: {mod_name}")
            sys.path.insert(0, os.path.dirname(path))
            name = re.sub(r"\W", "_", os.path.splitext(os.path.basename(path))[0])
            spec = importlib.util.spec_from_file_location(name, path)
            if spec is None or spec.loader is None:
                raise UsageError(f"cannot import {mod_name}: not a Python file")
            module = importlib.util.module_from_spec(spec)
            sys.modules[name] = module
            spec.loader.exec_module(module)
        else:
            if os.getcwd() not in sys.path:
                sys.path.insert(0, os.getcwd())
            module = importlib.import_module(mod_name)
    except UsageError:
        raise
    except ModuleNotFoundError as e:
        raise UsageError(f"cannot import {mod_name!r}: {e}") from None
    except Exception as e:  # noqa: BLE001 - the user's module failed: say where
        raise UsageError(f"importing {mod_name!r} failed: {_user_error(e)}") from None
    obj: Any = module
    for part in attr.split("."):
        obj = getattr(obj, part, None)
        if obj is None:
            raise UsageError(f"{mod_name!r} has no function {attr!r}")
    if not callable(obj):
        raise UsageError(f"{mod_name}:{attr} is not a function")
    return obj


def _user_error(e: BaseException) -> str:
    """`Type: message (at file:line)` naming the innermost frame outside fusejit."""
    here = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    frames = [f for f in traceback.extract_tb(e.__traceback__)
              if not os.path.abspath(f.filename).startswith(here + os.sep)]
    where = f" (at {frames[-1].filename}:{frames[-1].lineno})" if frames else ""
    return f"{type(e).__name__}: {e}{where}"


def add_parser(sub: Any) -> argparse.ArgumentParser:
    """Register the `export` subcommand on an argparse subparsers object."""
    p = sub.add_parser("export", help="compile a function ahead of time into a shared library",
                       description="Compile FUNCTION for the given example arguments into "
                       "DIR/libNAME.so, a C header DIR/libNAME.h and metadata DIR/libNAME.json "
                       "(load it from Python with fusejit.load).")
    p.add_argument("function", help="module:function or path/to/file.py:function")
    p.add_argument("--arg", action="append", default=[], metavar="SPEC", help=SPEC_HELP)
    p.add_argument("-o", "--output", default="build", metavar="DIR",
                   help="directory to write to (default: build)")
    p.add_argument("--name", help="C name prefix (default: the function's name)")
    p.add_argument("--target", default=None, metavar="TARGET",
                   help="instruction set to compile for: native (this CPU) or an x86-64 level "
                        "(x86-64, x86-64-v2, x86-64-v3, x86-64-v4); default: $FUSEJIT_MARCH, "
                        "else native")
    p.add_argument("--workspace", choices=("caller", "alloc"), default="caller",
                   help="caller: NAME() takes a workspace pointer and NAME_alloc() allocates "
                        "one per call; alloc: NAME() allocates it (default: caller)")
    return p


def run(args: argparse.Namespace, export: Callable[..., Any]) -> int:
    """Carry out `export` for parsed `args`; returns the exit status."""
    try:
        example = [parse_spec(s) for s in args.arg]
        fn = resolve(args.function)
        base = getattr(fn, "fn", fn)  # a @fusejit.jit function wraps the Python one
        name = args.name or re.sub(r"\W", "_", getattr(base, "__name__", "fn"), flags=re.ASCII)
        try:
            check_name(name)
        except ValueError as e:
            raise UsageError(str(e)) from None
        try:
            inspect.signature(base).bind(*example)
        except TypeError as e:
            raise UsageError(f"{args.function}: {e} (give one --arg per parameter)") from None
        except ValueError:
            pass
    except UsageError as e:
        print(f"fusejit export: {e}", file=sys.stderr)
        return 2
    path = os.path.join(args.output, f"lib{name}.so")
    try:
        result = export(fn, *example, path=path, name=name, workspace=args.workspace,
                        target=args.target)
    except FusejitError as e:
        print(f"fusejit export: {e}", file=sys.stderr)
        return 1
    except OSError as e:
        print(f"fusejit export: cannot write {path}: {e}", file=sys.stderr)
        return 1
    except Exception as e:  # noqa: BLE001 - the user's function failed while tracing
        print(f"fusejit export: {args.function} failed while tracing: {_user_error(e)}",
              file=sys.stderr)
        return 1
    spec = result.spec
    print(f"exported {spec.function} as {spec.name} "
          f"(workspace {spec.workspace_bytes} bytes, BLAS: none, target {spec.target})")
    for what, p in (("library", result.library), ("header", result.header),
                    ("metadata", result.metadata)):
        print(f"  {what:<9} {p}")
    params = spec.params() + (["void *workspace"] if spec.workspace == "caller" else [])
    print(f"  int {spec.entry}({', '.join(params)});")
    return 0
