"""The registry of backends: each name (jit(backend=...), FUSEJIT_BACKEND) maps to a factory
of the object that implements it (the Backend protocol, runtime/backends/base.py). Adding a
backend is a new module and one `register` call; nothing else in fusejit compares backend
names (tests/test_layout.py)."""

from __future__ import annotations

from collections.abc import Callable

from ...errors import UnsupportedError
from .base import Backend, Built, Runnable

__all__ = ["Backend", "Built", "Runnable", "get", "names", "register", "unregister"]


def _c() -> Backend:
    from .c import CBackend

    return CBackend()


def _cuda() -> Backend:
    from .cuda import CudaBackend

    return CudaBackend()


# name -> factory; a backend's module is imported when it is first asked for
_REGISTRY: dict[str, Callable[[], Backend]] = {"c": _c, "cuda": _cuda}
_instances: dict[str, Backend] = {}


def register(name: str, factory: Callable[[], Backend]) -> None:
    """Make `factory()` the backend called `name` (replacing one of that name)."""
    _REGISTRY[name] = factory
    _instances.pop(name, None)


def unregister(name: str) -> None:
    """Forget the backend called `name`."""
    _REGISTRY.pop(name, None)
    _instances.pop(name, None)


def names() -> list[str]:
    """The backends fusejit knows, by name."""
    return list(_REGISTRY)


def get(name: str) -> Backend:
    """The backend called `name` (made on first use); UnsupportedError for a name that is
    not registered."""
    backend = _instances.get(name)
    if backend is None:
        if name not in _REGISTRY:
            known = " or ".join(repr(n) for n in _REGISTRY)
            raise UnsupportedError(f"unknown backend {name!r} (use {known})")
        backend = _instances[name] = _REGISTRY[name]()
    return backend
