"""The Array API standard on traced arrays: `Tracer.__array_namespace__`.

NumPy 2's main namespace implements the standard (2023.12); a traced array's namespace is that
namespace as NumPy's own code sees it while tracing (frontend.numpy_lib): the same functions,
each dispatching on Tracers through `__array_function__`/`__array_ufunc__`, with `asarray`
(and `astype`, `full`...) leaving a Tracer a Tracer. So array-API code (SciPy's under
SCIPY_ARRAY_API=1, which asks `array_api_compat.array_namespace(x)`, i.e. this method) traces
into the same graph as the NumPy code it stands for. Also here: the array attributes the
standard adds (`device`, `to_device`, `mT`).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from . import tracer as T
from .numpy_lib import TracingModule


class ArrayNamespace(TracingModule):
    """numpy, as the Array API namespace of traced arrays."""

    __fusejit_namespace__ = True  # how frontend/scipy_api.py recognises it

    def __init__(self) -> None:
        super().__init__(np)
        self.__name__ = "fusejit.array_api"

    def __repr__(self) -> str:
        return "<fusejit Array API namespace (NumPy's, on traced arrays)>"

    def __array_namespace_info__(self) -> Any:
        return _Info(np.__array_namespace_info__())


class _Info:
    """NumPy's namespace info, except that a compiled function has no boolean indexing and no
    data-dependent shapes (so SciPy's `xpx.apply_where` selects with `where`, as for JAX)."""

    def __init__(self, info: Any) -> None:
        self._info = info

    def __getattr__(self, name: str) -> Any:
        return getattr(self._info, name)

    def capabilities(self) -> dict[str, Any]:
        return {**self._info.capabilities(), "boolean indexing": False,
                "data-dependent shapes": False}


NAMESPACE = ArrayNamespace()


def _array_namespace(self: T.Tracer, /, *, api_version: str | None = None) -> ArrayNamespace:
    if api_version is not None and api_version not in ("2021.12", "2022.12", "2023.12",
                                                       "2024.12"):
        raise ValueError(f"Unrecognized array API version: {api_version!r}")
    return NAMESPACE


def _device(self: T.Tracer) -> str:
    return "cpu"


def _to_device(self: T.Tracer, device: Any, /, *, stream: Any = None) -> T.Tracer:
    if device != "cpu":
        raise ValueError(f"unsupported device {device!r}")
    return self


def _mt(self: T.Tracer) -> Any:
    if self.ndim < 2:
        raise ValueError("matrix transpose with ndim < 2 is undefined")
    return np.swapaxes(self, -1, -2)


# Tracer's `__array_namespace__`, `device`, `to_device` and `mT` (installed by frontend.registry).
METHODS: dict[str, Any] = {"__array_namespace__": _array_namespace, "device": property(_device),
                           "to_device": _to_device, "mT": property(_mt)}
