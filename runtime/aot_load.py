"""`fusejit.load`: call an exported library from Python without a C compiler.

The metadata written beside the library says what it was specialised for. Before the library
is opened (cffi in ABI mode: dlopen, no compilation) its files, its digest and the CPU it needs
are checked (`aot_verify`); once open, the signature table compiled into it must agree with the
metadata, and the call uses that table. Each call checks its arguments against it, allocates
the outputs, makes one native call and rebuilds the result the Python function returned.
"""

from __future__ import annotations

import json
import os
import shutil
import tempfile
import threading
from typing import Any

import numpy as np

from ..codegen.export import ERR_CPU
from ..errors import (
    ExportError,
    ExportTargetError,
    FusejitError,
    RuntimeFailure,
    Status,
    raise_status,
)
from ..frontend.pytree import unflatten
from . import aot_verify
from .aot import FILE_FIELDS, FORMAT, FORMAT_VERSION


def _paths(path: str) -> tuple[str, dict]:
    """(metadata path, metadata) for a path to the library, the metadata or their stem."""
    stem, ext = os.path.splitext(path)
    if ext not in (".so", ".json", ".dylib", ".h"):
        stem = path
    meta = stem + ".json"
    if not os.path.exists(meta):
        raise ExportError(f"no export metadata at {meta} (fusejit.load takes the path of a "
                          "library written by fusejit.export, e.g. build/libgelu.so, with its "
                          ".json beside it)")
    try:
        with open(meta, encoding="utf-8") as f:
            info = json.load(f)
    except (OSError, ValueError) as e:
        raise ExportError(f"cannot read export metadata {meta}: {e}") from None
    if not isinstance(info, dict) or info.get("format") != FORMAT:
        raise ExportError(f"{meta} is not fusejit export metadata")
    return meta, info


_opened: dict[str, tuple[int, int]] = {}  # path dlopen'ed -> (st_dev, st_ino) it had then
_opened_lock = threading.Lock()


def _fresh_path(path: str) -> str:
    """A path to dlopen for `path`. The dynamic loader hands back the library it already
    mapped under the same name, even when the file has since been replaced (re-exported in
    this process); a replaced file is opened through a link of its own name instead."""
    path = os.path.abspath(path)
    st = os.stat(path)
    ident = (st.st_dev, st.st_ino)
    with _opened_lock:
        if _opened.setdefault(path, ident) == ident:
            return path
        alias = os.path.join(tempfile.mkdtemp(prefix="fusejit-load-"),
                             f"{st.st_ino}-{os.path.basename(path)}")
        try:
            os.link(path, alias)
        except OSError:
            shutil.copy2(path, alias)
        return alias


def _element_strides(a: np.ndarray) -> tuple[int, ...] | None:
    if any(s % a.itemsize for s in a.strides):
        return None
    return tuple(s // a.itemsize for s in a.strides)


def _layout_matches(got: tuple[int, ...], want: list[int], shape: tuple[int, ...]) -> bool:
    return all(g == w for g, w, n in zip(got, want, shape) if n != 1)


class ExportedFunction:
    """A callable for an exported library; takes the non-static arguments of the original
    Python function (positionally or by name) and returns what it returned."""

    def __init__(self, path: str, workspace: str | None = None) -> None:
        meta_path, self.metadata = _paths(path)
        try:
            self._setup(meta_path, workspace)
        except FusejitError:
            raise
        except (KeyError, TypeError, IndexError, AttributeError, ValueError) as e:
            if isinstance(e, ValueError) and str(e).startswith("workspace="):
                raise
            raise ExportError(f"{meta_path} is malformed ({type(e).__name__}: {e}): export "
                              "the function again") from None

    def _setup(self, meta_path: str, workspace: str | None) -> None:
        m = self.metadata
        if m.get("format_version") != FORMAT_VERSION:
            raise ExportError(f"{meta_path} has export format version "
                              f"{m.get('format_version')!r}, this fusejit reads version "
                              f"{FORMAT_VERSION}: export the function again")
        lib_path = aot_verify.check_files(meta_path, m)
        ident = aot_verify.check_digest(lib_path, meta_path, m.get("library_sha256"))
        aot_verify.check_cpu(lib_path, m)
        syms = aot_verify.check_symbols(meta_path, m["symbols"])
        self._lib, self._ffi = self._open(lib_path, meta_path, syms, ident)
        m = self.metadata
        self.name: str = m["name"]
        self.path = lib_path
        self.__name__ = self.name
        self.__doc__ = f"{m['function']} exported by fusejit (loaded from {lib_path})."
        syms = m["symbols"]
        mode = workspace or ("caller" if syms.get("call") else "alloc")
        if mode not in ("caller", "alloc") or (mode == "caller" and not syms.get("call")):
            raise ValueError(f"workspace={workspace!r}: this export offers "
                             f"{'caller, alloc' if syms.get('call') else 'alloc'}")
        self.mode = mode
        self._fn = getattr(self._lib, syms["call"] if mode == "caller" else syms["alloc"])
        self.workspace_size = int(self._lib_call(syms["workspace_size"]))
        if self.workspace_size != m["workspace_bytes"]:
            raise ExportError(f"{lib_path} needs a {self.workspace_size}-byte workspace but "
                              f"{meta_path} says {m['workspace_bytes']}: the files do not match")
        self._args = m["args"]
        self._names = [a["name"] for a in self._args]
        self._outs = [(tuple(o["shape"]), np.dtype(o["dtype"])) for o in m["outputs"]
                      if o["source"] == "buffer"]
        self._tree = _tree_from_json(m["tree"])
        self._local = threading.local()

    def _open(self, lib_path: str, meta_path: str, syms: dict,
              ident: tuple[int, int, int, int]) -> tuple[Any, Any]:
        """dlopen the library whose bytes were verified (`ident`: the file they came from),
        check its signature table and its fingerprint against the metadata, and make the
        table this function's metadata."""
        import cffi

        m = self.metadata
        ffi = cffi.FFI()
        nptr = len(m["args"]) + sum(o["source"] == "buffer" for o in m["outputs"])
        ptrs = ", ".join(["void *"] * nptr)
        decls = [f"size_t {syms['workspace_size']}(void);",
                 f"const char *{syms['strerror']}(int);", f"const char *{syms['abi']}(void);",
                 f"const char *{syms['signature']}(void);",
                 f"int {syms['alloc']}({ptrs or 'void'});"]
        if syms.get("call"):
            decls.append(f"int {syms['call']}({', '.join(['void *'] * (nptr + 1))});")
        try:
            ffi.cdef("\n".join(decls))
        except Exception as e:  # noqa: BLE001 - cffi's parse errors: the metadata is bad
            raise ExportError(f"{meta_path} declares unusable symbols ({e}): export the "
                              "function again") from None
        where = _fresh_path(lib_path)
        try:
            lib = ffi.dlopen(where)
        except OSError as e:
            raise ExportError(f"cannot load {lib_path}: {e}") from None
        finally:
            if where != os.path.abspath(lib_path):  # mapped now: the link is not needed
                shutil.rmtree(os.path.dirname(where), ignore_errors=True)
        if aot_verify.identity(os.stat(lib_path)) != ident:
            raise ExportError(f"{lib_path} changed while it was being loaded")
        try:
            table = ffi.string(getattr(lib, syms["signature"])()).decode()
            abi = ffi.string(getattr(lib, syms["abi"])()).decode()
            for key in ("alloc", "call", "workspace_size", "strerror"):
                if syms.get(key):
                    getattr(lib, syms[key])
        except (AttributeError, ffi.error, UnicodeDecodeError) as e:
            raise ExportError(f"{lib_path} is not the library described by {meta_path}: "
                              f"{e}") from None
        if abi != m["abi"]:
            raise ExportError(f"{lib_path} does not match {meta_path}: the library was built "
                              f"for\n  {abi}\nbut the metadata describes\n  {m['abi']}\n"
                              "export the function again")
        self.metadata = aot_verify.compare_table(m, table, lib_path, meta_path, FILE_FIELDS)
        return lib, ffi

    def _lib_call(self, sym: str, *args: Any) -> Any:
        return getattr(self._lib, sym)(*args)

    def strerror(self, status: int) -> str:
        """The library's description of a status code."""
        return self._ffi.string(self._lib_call(self.metadata["symbols"]["strerror"],
                                               status)).decode()

    def __repr__(self) -> str:
        sig = ", ".join(f"{a['name']}: {_describe(a)}" for a in self._args)
        return f"<fusejit export {self.name}({sig}) from {self.path}>"

    def _bind(self, args: tuple, kwargs: dict) -> list[Any]:
        if len(args) > len(self._names):
            raise TypeError(f"{self.name}() takes {len(self._names)} argument(s) "
                            f"({', '.join(self._names)}), got {len(args)}")
        values = list(args) + [None] * (len(self._names) - len(args))
        given = [True] * len(args) + [False] * (len(self._names) - len(args))
        for key, v in kwargs.items():
            if key not in self._names:
                raise TypeError(f"{self.name}() got an unexpected keyword argument {key!r}"
                                + (" (it was fixed at export)" if any(
                                    s["name"] == key for s in self.metadata["static"]) else ""))
            i = self._names.index(key)
            if given[i]:
                raise TypeError(f"{self.name}() got multiple values for argument {key!r}")
            values[i], given[i] = v, True
        for i, spec in enumerate(self._args):
            if not given[i] and "default" in spec:
                values[i], given[i] = spec["default"], True
        missing = [n for n, g in zip(self._names, given) if not g]
        if missing:
            raise TypeError(f"{self.name}() missing argument(s): {', '.join(missing)}")
        return values

    def _check(self, spec: dict, v: Any) -> np.ndarray:
        """`v` as the array whose address is passed, after checking it against `spec`."""
        name, kind, dtype = spec["name"], spec["kind"], np.dtype(spec["dtype"])
        where = f"{self.name}(): argument {name!r}"
        if kind == "array":
            if not isinstance(v, np.ndarray):
                raise TypeError(f"{where}: expected a {_describe(spec)} array, got "
                                f"{type(v).__name__}")
            if v.dtype != dtype:
                raise TypeError(f"{where}: expected dtype {dtype.name}, got {v.dtype}")
            if v.shape != tuple(spec["shape"]):
                raise ValueError(f"{where}: expected shape {tuple(spec['shape'])}, got "
                                 f"{v.shape}")
            got = _element_strides(v)
            if v.size and (got is None or not _layout_matches(got, spec["strides"], v.shape)):
                want = tuple(spec["strides"])
                raise ValueError(
                    f"{where}: expected " + ("a C-contiguous array" if spec["contiguous"] else
                                             "an array") + f" with element strides {want}, "
                    + (f"got element strides {got}" if got else f"got byte strides {v.strides}")
                    + (f"; pass np.ascontiguousarray({name})" if spec["contiguous"] else ""))
            if spec["written"] and not v.flags.writeable:
                raise ValueError(f"{where}: is written in place but is read-only")
            return v
        if kind == "numpy_scalar":
            if not isinstance(v, np.generic) or v.dtype != dtype:
                got = f"{v.dtype} scalar" if isinstance(v, np.generic) else type(v).__name__
                raise TypeError(f"{where}: expected a NumPy {dtype.name} scalar, got {got}")
            return np.array(v)
        want = {"int": int, "float": float, "bool": bool, "complex": complex}[kind]
        if not isinstance(v, want) or isinstance(v, np.generic) or (
                kind == "int" and isinstance(v, bool)):
            raise TypeError(f"{where}: expected a Python {kind}, got {type(v).__name__}")
        if spec["range"] is not None:
            lo, hi = spec["range"]
            if not lo <= v <= hi:
                raise OverflowError(f"Python integer {v} out of bounds for the argument "
                                    f"{name!r} (allowed: {lo}..{hi})")
        elif kind == "int" and not -(1 << 63) <= v < (1 << 63):
            raise OverflowError(f"Python integer {v} out of bounds for int64")
        return np.array(v, dtype)

    def _check_overlap(self, arrays: list[np.ndarray]) -> None:
        """The library was compiled for distinct arguments: an argument it writes in place
        must not share memory with any other argument."""
        for i, spec in enumerate(self._args):
            if not spec["written"]:
                continue
            for j, other in enumerate(arrays):
                if j != i and np.may_share_memory(arrays[i], other):
                    raise ValueError(
                        f"{self.name}(): argument {spec['name']!r} is written in place and "
                        f"shares memory with argument {self._args[j]['name']!r}; the library "
                        "was compiled for separate arrays (pass a copy)")

    def _workspace(self) -> np.ndarray:
        ws = getattr(self._local, "ws", None)
        if ws is None:
            ws = self._local.ws = np.empty(max(self.workspace_size, 1), np.uint8)
        return ws

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        values = args if not kwargs and len(args) == len(self._names) else self._bind(args,
                                                                                       kwargs)
        arrays = [self._check(spec, v) for spec, v in zip(self._args, values)]
        self._check_overlap(arrays)
        outs = [np.empty(shape, dtype) for shape, dtype in self._outs]
        cast = self._ffi.cast
        ptrs = [cast("void *", a.__array_interface__["data"][0]) for a in arrays + outs]
        if self.mode == "caller":
            ws = self._workspace() if self.workspace_size else None
            ptrs.append(cast("void *", ws.__array_interface__["data"][0]) if ws is not None
                        else self._ffi.NULL)
        status = int(self._fn(*ptrs))
        if status:
            if status > 0:
                raise_status(status)
            known = Status.of(status)
            exc = (ExportTargetError if status == ERR_CPU else
                   known.exc if known is not None else RuntimeFailure)
            raise exc(f"{self.name}: {self.strerror(status)} (status {status})")
        return self._result(values, outs)

    def _result(self, values: Any, outs: list[np.ndarray]) -> Any:
        leaves: list[Any] = []
        it = iter(outs)
        for o in self.metadata["outputs"]:
            if o["source"] == "buffer":
                leaf = next(it)
                leaves.append(leaf[()] if o["scalar"] else leaf)
            elif o["source"] == "input":
                leaves.append(values[o["input"]])
            else:
                leaves.append(leaves[o["alias_of"]])
        return unflatten(self._tree, leaves)


def _describe(spec: dict) -> str:
    if spec["kind"] == "array":
        return f"{spec['dtype']}{list(spec['shape'])}"
    return {"numpy_scalar": f"{spec['dtype']} scalar"}.get(spec["kind"], spec["kind"])


def _tree_from_json(t: Any) -> Any:
    kind = t[0]
    if kind == "leaf":
        return ("leaf",)
    if kind in ("tuple", "list"):
        return (kind, [_tree_from_json(c) for c in t[1]])
    if kind == "dict":
        return ("dict", list(t[1]), [_tree_from_json(c) for c in t[2]])
    return ("static", t[1])


def load(path: str, workspace: str | None = None) -> ExportedFunction:
    """Open a library written by `fusejit.export` (its `.json` metadata beside it).

    `workspace=None` uses the caller-workspace entry with one workspace per thread when the
    library has it, else the allocating one; "alloc" forces the per-call allocating entry."""
    return ExportedFunction(path, workspace)
