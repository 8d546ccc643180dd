"""Peer adapters: turn a workload into a zero-argument callable for one library, or say n/a.

This module owns *how* each library runs a workload: numpy (the plain function), fusejit
(``fusejit.jit`` of the plain function), numexpr and numba (the workload's hand-written
versions), jax (``jax.jit`` of the array-API version, ``block_until_ready``) and torch.compile
(inductor over the array-API version), or a workload's ``own`` version for that library (the
gradient workloads: jax.value_and_grad, torch autograd). Input conversion happens in
``prepare``, outside the timed call. Every library is imported lazily, so any subset may be
installed; a missing library or a failing import is reported as the reason, never raised.
"""

from __future__ import annotations

import atexit
import importlib
import importlib.util
import os
import shutil
import sys
import tempfile
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from types import ModuleType, SimpleNamespace
from typing import Any

import numpy as np

if __package__:
    from .workloads import Workload
else:  # run as a script: python benchmarks/bench.py
    from workloads import Workload  # type: ignore[no-redef]

REPO_ROOT = Path(__file__).resolve().parent.parent


class NotApplicable(Exception):
    """The peer cannot run this workload; the message says why."""


@dataclass
class Prepared:
    """A workload bound to one peer and one set of inputs."""

    call: Callable[[], Any]  # one complete, synchronised evaluation
    to_numpy: Callable[[Any], tuple[np.ndarray, ...]]  # result -> NumPy outputs (untimed)


def as_arrays(result: Any) -> tuple[np.ndarray, ...]:
    items = result if isinstance(result, (tuple, list)) else (result,)
    return tuple(np.asarray(r) for r in items)


class Peer:
    """Base adapter. ``load`` imports the library once; ``prepare`` binds one workload."""

    name = "?"
    module_name = ""  # what is imported; used for versions and import timing

    def __init__(self) -> None:
        self.mod: ModuleType | None = None
        self.unavailable: str | None = None

    def load(self) -> str | None:
        """Import the library; return None when usable, else the reason it is not."""
        if self.mod is None and self.unavailable is None:
            try:
                self.mod = self._import()
            except Exception as exc:  # ImportError, or a half-written package raising anything
                self.unavailable = f"{type(exc).__name__}: {exc}"
        return self.unavailable

    def _import(self) -> ModuleType:
        return importlib.import_module(self.module_name)

    def version(self) -> str:
        return str(getattr(self.mod, "__version__", "?")) if self.mod else "not installed"

    def prepare(self, wl: Workload, inputs: Sequence[np.ndarray]) -> Prepared:
        raise NotImplementedError


class NumpyPeer(Peer):
    name, module_name = "numpy", "numpy"

    def prepare(self, wl: Workload, inputs: Sequence[np.ndarray]) -> Prepared:
        fn, args = wl.numpy_fn, tuple(inputs)
        return Prepared(lambda: fn(*args), as_arrays)


def _load_fusejit_from_repo() -> ModuleType:
    """Import the repository root as ``fusejit`` when it is not installed (script use)."""
    init = REPO_ROOT / "__init__.py"
    if not init.exists():
        raise ModuleNotFoundError(f"No module named 'fusejit' (and no {init})")
    spec = importlib.util.spec_from_file_location(
        "fusejit", init, submodule_search_locations=[str(REPO_ROOT)])
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules["fusejit"] = module
    try:
        spec.loader.exec_module(module)
    except BaseException:
        del sys.modules["fusejit"]
        raise
    return module


class FusejitPeer(Peer):
    name, module_name = "fusejit", "fusejit"
    from_repo = False  # True when loaded from the repository root, not an installed package

    def _import(self) -> ModuleType:
        try:
            return importlib.import_module("fusejit")
        except ModuleNotFoundError as exc:
            if exc.name != "fusejit":
                raise
            self.from_repo = True
            return _load_fusejit_from_repo()

    def prepare(self, wl: Workload, inputs: Sequence[np.ndarray]) -> Prepared:
        assert self.mod is not None
        fn, args = self.mod.jit(wl.fusejit_fn or wl.numpy_fn), tuple(inputs)
        return Prepared(lambda: fn(*args), as_arrays)


class NumexprPeer(Peer):
    name, module_name = "numexpr", "numexpr"

    def _import(self) -> ModuleType:
        mod = importlib.import_module("numexpr")
        mod.set_num_threads(os.cpu_count() or 1)  # all cores (its default, made explicit)
        return mod

    def prepare(self, wl: Workload, inputs: Sequence[np.ndarray]) -> Prepared:
        if wl.numexpr is None:
            raise NotApplicable("no numexpr version")
        fn, args = wl.numexpr(self.mod), tuple(inputs)
        return Prepared(lambda: fn(*args), as_arrays)


class NumbaPeer(Peer):
    name, module_name = "numba", "numba"

    def prepare(self, wl: Workload, inputs: Sequence[np.ndarray]) -> Prepared:
        if wl.numba is None:
            raise NotApplicable("no numba version")
        fn, args = wl.numba(self.mod), tuple(inputs)  # njit compiles on the first call
        return Prepared(lambda: fn(*args), as_arrays)


class JaxPeer(Peer):
    name, module_name = "jax", "jax"

    def _import(self) -> ModuleType:
        jax = importlib.import_module("jax")
        import jax.numpy as jnp
        import jax.scipy.special as jss

        self.ns = SimpleNamespace(sin=jnp.sin, tanh=jnp.tanh, exp=jnp.exp, log=jnp.log,
                                  sqrt=jnp.sqrt, erf=jss.erf, split=jnp.split,
                                  rmax=lambda a, axis: jnp.max(a, axis=axis, keepdims=True),
                                  rsum=lambda a, axis: jnp.sum(a, axis=axis, keepdims=True),
                                  rmean=lambda a, axis: jnp.mean(a, axis=axis, keepdims=True),
                                  total=jnp.sum, relu=lambda a: jnp.maximum(a, 0),
                                  where=jnp.where)
        return jax

    def prepare(self, wl: Workload, inputs: Sequence[np.ndarray]) -> Prepared:
        if self.name in wl.own:
            return Prepared(wl.own[self.name](self.mod, tuple(inputs)), as_arrays)
        if wl.xp_fn is None:
            raise NotApplicable("no array-API version")
        jax, xp_fn, ns = self.mod, wl.xp_fn, self.ns
        assert jax is not None
        fn = jax.jit(lambda *a: xp_fn(ns, *a))
        args = tuple(jax.block_until_ready(jax.device_put(a)) for a in inputs)
        return Prepared(lambda: jax.block_until_ready(fn(*args)), as_arrays)


class TorchCompilePeer(Peer):
    name, module_name = "torch.compile", "torch"

    def _import(self) -> ModuleType:
        if "TORCHINDUCTOR_CACHE_DIR" not in os.environ:  # first call = a real compile
            cache = tempfile.mkdtemp(prefix="fusejit-bench-inductor-")
            atexit.register(shutil.rmtree, cache, ignore_errors=True)
            os.environ["TORCHINDUCTOR_CACHE_DIR"] = cache
        torch = importlib.import_module("torch")
        torch.set_num_threads(os.cpu_count() or 1)
        import torch._inductor.config as inductor_config

        # compile in-process: a pool of compile workers only competes for the few cores here,
        # and keeps running in the background after the first call, skewing the timed calls
        inductor_config.compile_threads = 1
        self.ns = SimpleNamespace(
            sin=torch.sin, tanh=torch.tanh, exp=torch.exp, log=torch.log, sqrt=torch.sqrt,
            erf=torch.special.erf, split=lambda a, n, axis: torch.chunk(a, n, dim=axis),
            rmax=lambda a, axis: torch.amax(a, dim=axis, keepdim=True),
            rsum=lambda a, axis: torch.sum(a, dim=axis, keepdim=True),
            rmean=lambda a, axis: torch.mean(a, dim=axis, keepdim=True), total=torch.sum,
            relu=torch.relu, where=torch.where)
        return torch

    def prepare(self, wl: Workload, inputs: Sequence[np.ndarray]) -> Prepared:
        if self.name in wl.own:
            return Prepared(wl.own[self.name](self.mod, tuple(inputs)), as_arrays)
        if wl.xp_fn is None:
            raise NotApplicable("no array-API version")
        torch, xp_fn, ns = self.mod, wl.xp_fn, self.ns
        assert torch is not None
        fn = torch.compile(lambda *a: xp_fn(ns, *a))  # default backend: inductor
        args = tuple(torch.from_numpy(a) for a in inputs)

        def to_numpy(result: Any) -> tuple[np.ndarray, ...]:
            items = result if isinstance(result, (tuple, list)) else (result,)
            return tuple(t.detach().numpy() for t in items)

        return Prepared(lambda: fn(*args), to_numpy)


ALL_PEERS: dict[str, type[Peer]] = {
    p.name: p for p in (NumpyPeer, FusejitPeer, NumexprPeer, NumbaPeer, JaxPeer, TorchCompilePeer)
}


def make_peers(names: Sequence[str]) -> list[Peer]:
    unknown = [n for n in names if n not in ALL_PEERS]
    if unknown:
        raise SystemExit(f"unknown peer(s) {unknown}; choose from {list(ALL_PEERS)}")
    return [ALL_PEERS[n]() for n in names]
