"""numpy's array constructors accepting traced values while a trace runs: np.asarray,
np.asanyarray, np.array, np.ascontiguousarray, np.asfortranarray, np.asarray_chkfinite, and
np.full with a traced fill value; the items of np.r_[...] and np.c_[...]; np.vectorize's
calls with traced arguments (frontend/vectorize.py). The traced
functions of np and np.linalg (np.sum, np.linalg.norm: frontend.registry's) given a list or
tuple that holds traced values (`np.sum([a, b])`, `np.max((x, y))`), which NumPy's dispatch
does not look into. np.nditer of a traced operand is refused by name (NumPy's iterator would
wrap the Tracer in an object array and fail with an unrelated TypeError).

NumPy does not dispatch these through `__array_function__` (only with like=): it asks the
argument for a real array (`Tracer.__array__`), which a traced value cannot give. So while
any trace runs (`patched()`, entered by frontend/trace.py around the user's function), the
numpy module's attributes of those names are wrappers: each calls NumPy's function first,
unchanged, and only when that fails because the array argument holds a Tracer (the
ConcretizationError of `Tracer.__array__`) converts it as NumPy would
(frontend/conversion.py); a traced function given lists of traced values converts them
first where NumPy would (_make_retry). Ufuncs are left alone (a wrapper is not a ufunc):
`np.abs([a, b])` keeps the ConcretizationError, whose message says to write
np.abs(np.stack([a, b])). Plain calls, from this thread or any other, run NumPy's own
function with the same arguments: same result, same errors (one frame deeper: a warning
NumPy emits inside one of these calls, such as ComplexWarning for dtype=float of complex
values, is attributed to the wrapper's line while a trace runs).

`patched()` is reference-counted and thread-safe: the first trace to start installs the
wrappers, the last to end (normally or by an exception) puts back exactly the objects that
were there. Nested traces count like concurrent ones. Each wrapper forwards to what it
replaced, so two copies of fusejit loaded at once (pytest can import the package under two
names) chain their wrappers; a copy ending puts back the innermost one still in use.

Names bound before the trace (`from numpy import asarray`, `asarray = np.asarray`) are not
the module's attribute: frontend/captures.py gives a jitted function (and the Python
functions it calls) the wrapper in their place (`replacement`); library code outside the
user's files keeps NumPy's function, where the ConcretizationError stays.
FUSEJIT_PATCH_NUMPY=0 (config.patch_numpy) turns all of this off.
"""

from __future__ import annotations

import contextlib
import functools
import sys
import threading
from collections.abc import Callable, Iterator
from typing import Any

import numpy as np

from .. import config

NAMES = ("asarray", "asanyarray", "array", "ascontiguousarray", "asfortranarray",
         "asarray_chkfinite", "full")
# the allocators the user's code sees (frontend/captures.py gives its functions these in
# place of NumPy's, under `np.` and under names bound to them): while a trace runs they give a
# traced array (frontend/conversion.py allocate), which the function can then fill with traced
# values. numpy's own attributes stay NumPy's: library and C code keep real arrays.
ALLOCATORS = ("zeros", "ones", "empty", "full")


def _genuine(f: Any) -> Any:
    while getattr(f, "__fusejit_original__", None) is not None:
        f = f.__fusejit_original__
    return f


# NumPy's own functions (unwrapped, should a trace be running in another copy of fusejit)
ORIGINALS: dict[str, Callable[..., Any]] = {n: _genuine(getattr(np, n)) for n in NAMES}
_BY_ID = {id(f): n for n, f in ORIGINALS.items()}


class _State:
    """This copy's installation: how many traces need it, and what each wrapper replaced."""

    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.count = 0
        self.found: dict[tuple[str, str], Any] = {}


_STATE = _State()


def _traced_owner(x: Any) -> Any:
    """frontend/conversion.py of the fusejit copy whose Tracer `x` holds (at any depth of
    lists/tuples), or None."""
    cls = type(x)
    if getattr(cls, "__fusejit_tracer__", False):
        package = cls.__module__.rpartition(".")[0]
        return sys.modules.get(f"{package}.conversion")
    if isinstance(x, (list, tuple)):
        for e in x:
            owner = _traced_owner(e)
            if owner is not None:
                return owner
    return None


def _marked(wrapper: Callable[..., Any], original: Any, forward: Any) -> Callable[..., Any]:
    functools.update_wrapper(wrapper, original)  # name, docstring; inspect.signature
    if hasattr(original, "_implementation"):  # NumPy's undispatched code (numpy_lib reads it)
        wrapper._implementation = original._implementation  # type: ignore[attr-defined]
    wrapper.__fusejit_original__ = original  # type: ignore[attr-defined]
    wrapper.__fusejit_forward__ = forward  # type: ignore[attr-defined]
    wrapper.__fusejit_state__ = _STATE  # type: ignore[attr-defined]
    return wrapper


def _make(name: str, forward: Callable[..., Any]) -> Callable[..., Any]:
    original = ORIGINALS[name]

    def wrapper(*args: Any, **kwargs: Any) -> Any:
        try:
            return forward(*args, **kwargs)
        except TypeError:  # (ConcretizationError is one)
            obj = args[0] if args else kwargs.get("object", kwargs.get("a"))
            owner = _traced_owner(obj)
            if owner is None:
                raise
        return owner.convert(name, original, args, kwargs)

    def full(*args: Any, **kwargs: Any) -> Any:
        """np.full(shape, fill_value): with a traced fill NumPy would copy it into a real
        array (and fail in np.copyto), so the fill is looked at first."""
        owner = _traced_owner(args[1] if len(args) > 1 else kwargs.get("fill_value"))
        if owner is not None:
            return owner.convert(name, original, args, kwargs)
        return forward(*args, **kwargs)

    return _marked(full if name == "full" else wrapper, original, forward)


def _allocator(name: str) -> Callable[..., Any]:
    """np.<name> as the user's traced code sees it (ALLOCATORS)."""
    original = _genuine(getattr(np, name))

    def allocate(*args: Any, **kwargs: Any) -> Any:
        conversion = sys.modules.get(__name__.rpartition(".")[0] + ".conversion")
        if conversion is not None and conversion.tracing_here():
            made = conversion.allocate(name, original, args, kwargs)
            if made is not None:
                return made
        return getattr(np, name)(*args, **kwargs)  # (NumPy's, or a trace's `full` wrapper)

    functools.update_wrapper(allocate, original)
    allocate.__fusejit_original__ = original  # type: ignore[attr-defined]
    return allocate


ALLOCATING: dict[str, Callable[..., Any]] = {n: _allocator(n) for n in ALLOCATORS}
_ALLOCATOR_IDS = {id(f.__fusejit_original__): n  # type: ignore[attr-defined]
                  for n, f in ALLOCATING.items()}


class _Dispatches(BaseException):
    """NumPy's dispatcher found a _Probe (BaseException: no `except Exception` in NumPy's code
    swallows it)."""


class _Converts(BaseException):
    """NumPy asked a _Probe for a real array."""


class _Probe:
    """Stands for a traced value inside a list while _make_retry asks NumPy what it does
    with the list: dispatch (np.concatenate's dispatcher looks into its sequence) or convert
    it (np.sum's does not)."""

    def __array_function__(self, *args: Any) -> Any:
        raise _Dispatches

    def __array__(self, *args: Any, **kwargs: Any) -> Any:
        raise _Converts


def _probed(x: Any) -> Any:
    """`x` with each Tracer inside its lists and tuples replaced by a _Probe."""
    if getattr(type(x), "__fusejit_tracer__", False):
        return _Probe()
    if isinstance(x, (list, tuple)):
        items = [_probed(e) for e in x]
        return items if isinstance(x, list) else tuple(items)
    return x


def _make_retry(original: Any, forward: Callable[..., Any]) -> Callable[..., Any]:
    """A traced NumPy function (np.sum, np.linalg.norm) given a list or tuple that holds
    traced values and no traced argument of its own (`np.sum([a, b])`, `np.max((x, y))`):
    where NumPy's dispatch does not look inside the list (NumPy would convert it, which a
    traced value cannot give), the call is made with each such list as np.asarray makes it
    (a traced array, frontend/conversion.py), which dispatches to fusejit. Which of the two
    NumPy does is asked of NumPy itself, by a call with _Probes in the traced values' place.
    Any other call is NumPy's, unchanged."""

    def retrying(*args: Any, **kwargs: Any) -> Any:
        values = (*args, *kwargs.values())
        owner = next((o for o in (_traced_owner(v) for v in values
                                  if isinstance(v, (list, tuple))) if o is not None), None)
        if owner is None or any(getattr(type(v), "__fusejit_tracer__", False) for v in values):
            return forward(*args, **kwargs)
        try:
            forward(*(_probed(a) for a in args), **{k: _probed(v) for k, v in kwargs.items()})
        except _Converts:
            def arrayed(a: Any) -> Any:
                if isinstance(a, (list, tuple)) and _traced_owner(a) is not None:
                    return owner.convert("asarray", ORIGINALS["asarray"], (a,), {})
                return a

            return forward(*(arrayed(a) for a in args),
                           **{k: arrayed(v) for k, v in kwargs.items()})
        except (_Dispatches, Exception):
            pass
        return forward(*args, **kwargs)

    return _marked(retrying, original, forward)


# What frontend/captures.py binds in place of a name holding NumPy's function.
WRAPPERS: dict[str, Callable[..., Any]] = {n: _make(n, f) for n, f in ORIGINALS.items()}

# Each place a wrapper goes while a trace runs: (key, module, NumPy's function,
# make(forward) for a function there that is not NumPy's own, this copy's wrapper of NumPy's)
_SLOTS: list[tuple[tuple[str, str], Any, Any, Callable[..., Any], Callable[..., Any]]] = [
    (("numpy", n), np, ORIGINALS[n], functools.partial(_make, n), WRAPPERS[n]) for n in NAMES]
# The traced NumPy functions given a retrying wrapper (retry_lists): id -> (function, wrapper)
_RETRIED: dict[int, tuple[Any, Callable[..., Any]]] = {}
_MODULES = {"numpy": np, "numpy.linalg": np.linalg, "numpy.fft": np.fft}


def retry_lists(functions: Any) -> None:
    """Give each of `functions` (frontend.registry's traced NumPy functions) that np,
    np.linalg or np.fft holds a retrying wrapper (_make_retry) in its place while traces run.
    Called once, when the registry is installed; the array constructors keep their own."""
    wanted = {id(f) for f in functions}
    for module_name, module in _MODULES.items():
        for attr, f in list(vars(module).items()):  # (not dir(): NumPy loads submodules lazily)
            if (id(f) in wanted and attr not in NAMES and not isinstance(f, (type, np.ufunc))
                    and _genuine(f) is f):
                wrapper = _RETRIED.setdefault(id(f), (f, _make_retry(f, f)))[1]
                _SLOTS.append(((module_name, attr), module, f,
                               functools.partial(_make_retry, f), wrapper))


def replacement(value: Any) -> Callable[..., Any] | None:
    """The wrapper for `value` when it is one of NumPy's constructors, allocators or retried
    functions (else None): what the user's code bound to it sees while traced."""
    allocator = _ALLOCATOR_IDS.get(id(value))
    if allocator is not None:
        return ALLOCATING[allocator]
    name = _BY_ID.get(id(value))
    if name is not None and ORIGINALS[name] is value:
        return WRAPPERS[name]
    entry = _RETRIED.get(id(value))
    return entry[1] if entry is not None and entry[0] is value else None


def enabled() -> bool:
    """Whether constructors accept traced values (FUSEJIT_PATCH_NUMPY, default on)."""
    return config.current().patch_numpy


# NumPy's module of np.r_ and np.c_ (AxisConcatenator): each item goes through its own global
# `array`, wrapped too while a trace runs, so that np.r_[...] and np.c_[...] of traced values
# run NumPy's own code (slices, directives, ndmin, the dtype of the whole) and then
# np.concatenate, which traces. Left alone where that global is not NumPy's array.
_TRICKS = sys.modules.get(type(np.r_).__module__)


# np.nditer (a type, not a function): while a trace runs, a function that refuses a traced
# operand and otherwise builds NumPy's iterator. `isinstance(it, np.nditer)` inside a traced
# function sees that function then (an iterator built there is still NumPy's type).
NDITER = _genuine(np.nditer)


def _nditer(op: Any, *args: Any, **kwargs: Any) -> Any:
    owner = _traced_owner(op)
    if owner is not None:
        owner.refuse_nditer()
    return NDITER(op, *args, **kwargs)


functools.update_wrapper(_nditer, NDITER, updated=())
_nditer.__fusejit_original__ = NDITER  # type: ignore[attr-defined]


# np.vectorize's __call__ (a class attribute, so that instances made before the trace see it):
# with a traced argument, frontend/vectorize.py runs the function once on the arrays (NumPy's
# would hand each element to Python, through np.asarray of a traced value).
VECTORIZE_CALL = _genuine(np.vectorize.__call__)


def _vectorize_call(self: Any, *args: Any, **kwargs: Any) -> Any:
    owner = _traced_owner([*args, *kwargs.values()])
    if owner is None:
        return VECTORIZE_CALL(self, *args, **kwargs)
    return owner.vectorize_call(self, args, kwargs)


functools.update_wrapper(_vectorize_call, VECTORIZE_CALL)
_vectorize_call.__fusejit_original__ = VECTORIZE_CALL  # type: ignore[attr-defined]


def _install() -> None:
    if np.nditer is NDITER:
        np.nditer = _nditer
    if np.vectorize.__call__ is VECTORIZE_CALL:
        np.vectorize.__call__ = _vectorize_call  # type: ignore[method-assign]
    for key, module, original, make, own in _SLOTS:
        current = getattr(module, key[1])
        _STATE.found[key] = current
        setattr(module, key[1], own if current is original else make(current))
    if getattr(_TRICKS, "array", None) is ORIGINALS["array"]:
        _TRICKS.array = WRAPPERS["array"]  # type: ignore[union-attr]


def _restore() -> None:
    if np.nditer is _nditer:
        np.nditer = NDITER
    if np.vectorize.__call__ is _vectorize_call:
        np.vectorize.__call__ = VECTORIZE_CALL  # type: ignore[method-assign]
    if getattr(_TRICKS, "array", None) is WRAPPERS["array"]:
        _TRICKS.array = ORIGINALS["array"]  # type: ignore[union-attr]
    for key, module, _, _, _ in _SLOTS:
        mine = getattr(module, key[1])
        if getattr(mine, "__fusejit_state__", None) is not _STATE:
            continue  # another copy's wrapper over ours: it puts ours back, we are skipped then
        target = _STATE.found.pop(key)
        # skip the wrappers of copies that no longer need theirs
        while getattr(target, "__fusejit_state__", _STATE) is not _STATE and (
                target.__fusejit_state__.count == 0):
            target = target.__fusejit_forward__
        setattr(module, key[1], target)


@contextlib.contextmanager
def patched() -> Iterator[None]:
    """The wrappers in numpy for the duration of the block (unless FUSEJIT_PATCH_NUMPY=0)."""
    if not enabled():
        yield
        return
    with _STATE.lock:
        if _STATE.count == 0:
            _install()
        _STATE.count += 1
    try:
        yield
    finally:
        with _STATE.lock:
            _STATE.count -= 1
            if _STATE.count == 0:
                _restore()
