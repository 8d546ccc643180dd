"""The registry of backends: each name (jit(backend=...), FUSEJIT_BACKEND) maps to the module
of this package that implements it (the Backend protocol, runtime/backends/base.py). Adding a
backend is a new module and one line here; nothing else in fusejit compares backend names."""

from __future__ import annotations

import importlib

from ...errors import UnsupportedError
from .base import Backend, Built

__all__ = ["Backend", "Built", "get", "names"]

# name -> (module of this package, class)
_REGISTRY: dict[str, tuple[str, str]] = {
    "c": ("c", "CBackend"),
    "cuda": ("cuda", "CudaBackend"),
}
_instances: dict[str, Backend] = {}


def names() -> list[str]:
    """The backends fusejit knows, by name."""
    return list(_REGISTRY)


def get(name: str) -> Backend:
    """The backend called `name` (its module is imported on first use); UnsupportedError for
    a name that is not registered."""
    backend = _instances.get(name)
    if backend is None:
        if name not in _REGISTRY:
            known = " or ".join(repr(n) for n in _REGISTRY)
            raise UnsupportedError(f"unknown backend {name!r} (use {known})")
        module, cls = _REGISTRY[name]
        backend = getattr(importlib.import_module(f".{module}", __name__), cls)()
        _instances[name] = backend
    return backend
