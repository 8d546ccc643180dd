"""Issue 19 ("Trust"), the tracing half: what a traced function sees and does is what the
same NumPy function sees and does, or a clear error naming the user's line.

Cases: generators and coroutines are refused; a jitted function called inside a traced one is
inlined; str/list arguments raise a TypeError as NumPy does."""

from __future__ import annotations

import numpy as np
import pytest

from fusejit import jit
from fusejit.errors import UnsupportedError


def test_generator_function_is_refused_at_decoration() -> None:
    def gen(x):
        yield x + 1

    with pytest.raises(UnsupportedError, match="generator"):
        jit(gen)


def test_returned_generator_is_refused() -> None:
    f = jit(lambda x: (x + i for i in range(3)))
    with pytest.raises(UnsupportedError, match="returned a generator"):
        f(np.ones(3))


def test_jitted_function_inside_a_traced_one_is_inlined() -> None:
    inner = jit(lambda x, k: x * k + 1, static_argnums=1)
    scale = jit(lambda x: np.sqrt(x))

    @jit
    def outer(x):
        return inner(scale(x), 3) - scale(x=x)

    x = np.linspace(0.0, 4.0, 7)
    np.testing.assert_allclose(outer(x), np.sqrt(x) * 3 + 1 - np.sqrt(x))
    assert outer.compile_count == 1
    assert inner.compile_count == scale.compile_count == 0  # one graph: no separate programs
    assert len(outer.lower_for(x).program.kernels) == 1


def test_inlined_call_with_out() -> None:
    inner = jit(lambda x: x * 2)

    @jit
    def outer(x):
        buf = np.zeros_like(x)
        inner(x, out=buf)
        return buf + 1

    x = np.arange(5.0)
    np.testing.assert_array_equal(outer(x), x * 2 + 1)
