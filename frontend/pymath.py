"""The `math` module in traced code: math functions of Python-scalar arguments run as Python.

`lr * math.sqrt(1 - beta2 ** t) / (1 - beta1 ** t)` with a Python int step `t` is an Adam
step's bias correction: the arithmetic on `t` is Python's, recorded in the trace's prelude
(frontend/pyscalar.py) and run at each call, and so is `math.sqrt` of it here: a prelude step
that calls math.sqrt itself, so the value, the type (math.floor gives an int) and the errors
(`ValueError: math domain error`, raised by the call) are Python's. The user's functions see
`math` (and names bound to its functions, `from math import sqrt`) through these wrappers
(frontend/captures.py). math of a traced array value (a 0-d array, a NumPy scalar computed
from the arguments) is refused: math converts it to a Python float, whose value is the data.
"""

from __future__ import annotations

import math
import types
from collections.abc import Callable
from typing import Any

from ..errors import UnsupportedError
from .pyscalar import PY_NUMBER, PyScalar, record
from .tracer import Tracer, where_msg

# numpy's name for a math function where it differs (math.fabs is np.fabs, math.pow np.power)
_NUMPY_NAME = {"pow": "power", "asin": "arcsin", "acos": "arccos", "atan": "arctan",
               "atan2": "arctan2", "asinh": "arcsinh", "acosh": "arccosh",
               "atanh": "arctanh", "gamma": "scipy.special.gamma",
               "lgamma": "scipy.special.gammaln", "erf": "scipy.special.erf",
               "erfc": "scipy.special.erfc"}


def _wrap(name: str, fn: Callable[..., Any]) -> Callable[..., Any]:
    def call(*args: Any, **kwargs: Any) -> Any:
        if not any(isinstance(a, Tracer) for a in (*args, *kwargs.values())):
            return fn(*args, **kwargs)
        if not kwargs and all(isinstance(a, PyScalar) or type(a) in PY_NUMBER for a in args):
            return record(f"math.{name}", *args)
        np_name = _NUMPY_NAME.get(name, name)
        raise UnsupportedError(
            f"math.{name} of a traced array value is not supported by fusejit{where_msg()}: "
            "math needs a Python number, and this one is the data. Use "
            f"{'np.' if '.' not in np_name else ''}{np_name} (NumPy's answer where math "
            "raises: NaN or inf), or pass the value as a Python float argument")

    call.__name__ = call.__qualname__ = name
    call.__doc__ = fn.__doc__
    return call


WRAPPERS: dict[str, Callable[..., Any]] = {
    name: _wrap(name, fn) for name, fn in vars(math).items()
    if callable(fn) and not name.startswith("_")}
_BY_ID = {id(getattr(math, name)): name for name in WRAPPERS}


class _Math(types.ModuleType):
    """math as the user's traced code sees it: its functions wrapped, its constants math's."""

    def __getattr__(self, name: str) -> Any:
        wrapper = WRAPPERS.get(name)
        return wrapper if wrapper is not None else getattr(math, name)


MATH = _Math("math")


def replacement(value: Any) -> Any:
    """What the user's code sees for `value`: the wrapped module or function, else None."""
    if value is math:
        return MATH
    name = _BY_ID.get(id(value))
    return WRAPPERS[name] if name is not None and getattr(math, name) is value else None
