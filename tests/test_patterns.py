"""Tests of lowering/patterns.py: before/after, idempotence, exactness of the premise."""

from __future__ import annotations

import numpy as np
import scipy.special as sc

import fusejit
from fusejit.frontend.ir import format_graph
from fusejit.frontend.trace import trace
from fusejit.lowering import passes, patterns


def _ops(graph) -> list[str]:
    return [n.op for n in graph.nodes() if n.op not in ("input", "const")]


def test_hoist_negation_shares_erf_between_z_and_minus_z() -> None:
    def cdfs(z):
        cdf = lambda t: 0.5 * (1 + sc.erf(t / np.float32(1.5)))
        return cdf(z), cdf(-z)

    x = np.linspace(-3, 3, 8, dtype=np.float32)
    graph, _ = trace(cdfs, [x])
    assert _ops(graph).count("erf") == 2
    after = passes.cse(patterns.hoist_negation(graph))
    passes.verify(after)
    assert _ops(after).count("erf") == 1, format_graph(after)
    assert _ops(after).count("divide") == 1


def test_hoist_negation_is_idempotent_and_cancels_double_negation() -> None:
    graph, _ = trace(lambda x: (np.negative(-x), np.tanh(-x) * 2), [np.ones(4)])
    once = passes.cse(patterns.hoist_negation(graph))
    twice = passes.cse(patterns.hoist_negation(once))
    assert format_graph(once) == format_graph(twice)
    assert once.outputs[0] is once.inputs[0]


def test_hoist_negation_leaves_integers_alone() -> None:
    graph, _ = trace(lambda x: (-x) // 3, [np.arange(5, dtype=np.int32)])
    after = patterns.hoist_negation(graph)
    assert _ops(after) == _ops(graph)


def test_compiled_erf_and_tanh_are_exactly_odd() -> None:
    """The premise of the rewrite, on the compiled (vectorised) functions themselves."""
    f = fusejit.jit(lambda x: (sc.erf(x), sc.erf(-x), np.tanh(x), np.tanh(-x)))
    rng = np.random.default_rng(0)
    for dtype, uint in ((np.float32, np.uint32), (np.float64, np.uint64)):
        finite = rng.uniform(-10, 10, 1 << 16).astype(dtype)
        top = 0x7F800000 if dtype == np.float32 else 0x7FF0000000000000
        bits = rng.integers(0, top, 1 << 16, dtype=uint).view(dtype)
        x = np.concatenate([finite, bits, np.array([0.0, 1e-40, np.inf], dtype)])
        a, b, c, d = f(x)
        np.testing.assert_array_equal(a.view(uint), (-b).view(uint))
        np.testing.assert_array_equal(c.view(uint), (-d).view(uint))


def test_black_scholes_matches_numpy_after_rewrite() -> None:
    def bs(s, k, t, r, v):
        cdf = lambda z: 0.5 * (1 + sc.erf(z / np.float32(np.sqrt(2))))
        sq = v * np.sqrt(t)
        d1 = (np.log(s / k) + (r + 0.5 * v * v) * t) / sq
        d2 = d1 - sq
        disc = k * np.exp(-r * t)
        return s * cdf(d1) - disc * cdf(d2), disc * cdf(-d2) - s * cdf(-d1)

    rng = np.random.default_rng(1)
    args = [rng.uniform(lo, hi, 1000).astype(np.float32)
            for lo, hi in ((10, 100), (10, 100), (0.1, 2), (0.01, 0.1), (0.1, 0.5))]
    got = fusejit.jit(bs)(*args)
    ref = bs(*[a.astype(np.float64) for a in args])
    for g, r in zip(got, ref):
        assert g.dtype == np.float32
        assert np.linalg.norm(g - r) / np.linalg.norm(r) < 1e-6
