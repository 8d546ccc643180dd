"""Python operators on Tracers: `a + b`, reflected, comparison, unary, `divmod` and in-place
forms (`x += y` records an update of x's array): the METHODS that frontend.registry installs."""

from __future__ import annotations

from typing import Any

import numpy as np

from ..errors import UnsupportedError
from . import tracer as T
from . import ufuncs as U


def _binary(ufunc: np.ufunc, reflected: bool = False):
    def method(self: T.Tracer, other: Any) -> Any:
        if not T.is_operand(other):
            return NotImplemented
        other = T.array_operand(other)
        if ufunc is np.power and not reflected and not self.scalar and self.weak is None and (
                type(other) is int and other == 2):
            # ndarray.__pow__'s fast path: `array ** 2` is np.square (bool ** 2 is int8).
            return U.apply_ufunc(np.square, self)
        if ufunc is np.power and not reflected and not self.scalar and self.dtype.kind == "c":
            # ... and for complex arrays `** -1` is np.reciprocal, `** 0.5` np.sqrt
            if type(other) is int and other == -1:
                return U.apply_ufunc(np.reciprocal, self)
            if type(other) is float and other == 0.5:
                return U.apply_ufunc(np.sqrt, self)
        a, b = (other, self) if reflected else (self, other)
        if T.all_weak(a, b):
            return T.weak_result(U.apply_ufunc(ufunc, a, b))
        return U.apply_ufunc(ufunc, a, b)

    return method


def _unary(ufunc: np.ufunc):
    def method(self: T.Tracer) -> Any:
        out = U.apply_ufunc(ufunc, self)
        return T.weak_result(out) if self.weak is not None else out

    return method


_ARITHMETIC = [("add", np.add), ("sub", np.subtract), ("mul", np.multiply),
               ("truediv", np.divide), ("floordiv", np.floor_divide), ("mod", np.remainder),
               ("pow", np.power), ("and", np.bitwise_and), ("or", np.bitwise_or),
               ("xor", np.bitwise_xor), ("lshift", np.left_shift), ("rshift", np.right_shift)]
METHODS: dict[str, Any] = {}
for _name, _uf in _ARITHMETIC:
    METHODS[f"__{_name}__"] = _binary(_uf)
    METHODS[f"__r{_name}__"] = _binary(_uf, reflected=True)
for _name, _uf in [("lt", np.less), ("le", np.less_equal), ("gt", np.greater),
                   ("ge", np.greater_equal), ("eq", np.equal), ("ne", np.not_equal)]:
    METHODS[f"__{_name}__"] = _binary(_uf)
for _name, _uf in [("neg", np.negative), ("pos", np.positive), ("abs", np.absolute),
                   ("invert", np.invert)]:
    METHODS[f"__{_name}__"] = _unary(_uf)


def _divmod(self: T.Tracer, other: Any) -> Any:
    return np.floor_divide(self, other), np.remainder(self, other)


def _rdivmod(self: T.Tracer, other: Any) -> Any:
    return np.floor_divide(other, self), np.remainder(other, self)


METHODS["__divmod__"] = _divmod
METHODS["__rdivmod__"] = _rdivmod


def _inplace(ufunc: np.ufunc, name: str):
    def method(self: T.Tracer, other: Any) -> Any:
        if self.scalar or self.weak is not None:  # scalars are immutable: Python rebinds
            return getattr(self, f"__{name}__")(other)
        from .inplace import ufunc_into

        return ufunc_into(ufunc, (self, other), self)

    return method


for _name, _uf in _ARITHMETIC:
    METHODS[f"__i{_name}__"] = _inplace(_uf, _name)


def _imatmul(self: T.Tracer, other: Any) -> Any:
    raise UnsupportedError(f"in-place operator @= on a traced array is not supported by "
                           f"fusejit yet{T.where_msg()}; write `x = x @ y` instead")


METHODS["__imatmul__"] = _imatmul
