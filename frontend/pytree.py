"""Flatten a function's return value (nested tuples, named tuples such as np.linalg's
results, lists, dicts) into leaves and back."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

# ("leaf",) | ("tuple"|"list", [TreeDef]) | ("dict", [keys], [TreeDef]) | ("static", value)
# | ("namedtuple", type or Bunch, [TreeDef])
TreeDef = Any


def flatten(obj: Any, is_leaf) -> tuple[list[Any], TreeDef]:
    """Leaves (objects for which `is_leaf` is true) and a structure to rebuild `obj`."""
    leaves: list[Any] = []

    def walk(o: Any) -> TreeDef:
        if is_leaf(o):
            leaves.append(o)
            return ("leaf",)
        if isinstance(o, (tuple, list)) and type(o) in (tuple, list):
            return (type(o).__name__, [walk(v) for v in o])
        if isinstance(o, tuple) and hasattr(type(o), "_fields"):
            extra = getattr(o, "__dict__", None)
            if extra:  # SciPy's result bunches: attributes beside the tuple's fields
                keys = tuple(extra)
                return ("namedtuple", Bunch(type(o), keys),
                        [walk(v) for v in o] + [walk(extra[k]) for k in keys])
            return ("namedtuple", type(o), [walk(v) for v in o])
        if type(o) is dict:
            keys = list(o)
            return ("dict", keys, [walk(o[k]) for k in keys])
        return ("static", o)

    return leaves, walk(obj)


class Bunch:
    """Rebuilds a tuple subclass whose instances also hold attributes (SciPy's
    LinregressResult's intercept_stderr, PearsonRResult's data for confidence_interval):
    called with the tuple's fields, then the attributes' values in `keys` order."""

    def __init__(self, cls: type, keys: tuple[str, ...]) -> None:
        self.cls, self.keys = cls, keys

    def __call__(self, *values: Any) -> Any:
        n = len(values) - len(self.keys)
        obj = tuple.__new__(self.cls, values[:n])
        obj.__dict__.update(zip(self.keys, values[n:]))
        return obj

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Bunch) and (self.cls, self.keys) == (other.cls, other.keys)

    def __hash__(self) -> int:
        return hash((self.cls, self.keys))

    def __repr__(self) -> str:
        return f"{self.cls.__name__}(+{', '.join(self.keys)})"


def unflatten(tree: TreeDef, leaves: list[Any]) -> Any:
    """Rebuild the structure described by `tree` from `leaves` (in flatten order)."""
    return _build(tree, iter(leaves))


def _build(t: TreeDef, it: Iterator[Any]) -> Any:
    # A module function, not a closure over itself: a self-referencing closure is a reference
    # cycle holding `leaves` (a call's outputs) until the next garbage collection, which kept
    # the runtime from recycling output buffers whose refcount it checks.
    kind = t[0]
    if kind == "leaf":
        return next(it)
    if kind == "tuple":
        return tuple(_build(c, it) for c in t[1])
    if kind == "list":
        return [_build(c, it) for c in t[1]]
    if kind == "namedtuple":
        return t[1](*(_build(c, it) for c in t[2]))
    if kind == "dict":
        return {k: _build(c, it) for k, c in zip(t[1], t[2])}
    return t[1]
