"""fusejit.grad / value_and_grad / vjp as an API: pytree arguments, argnums, has_aux, jit
composition (a jitted function differentiated; a gradient inside a jitted training step),
caching per signature, export, the op table's completeness, and the errors."""

from __future__ import annotations

import inspect

import numpy as np
import pytest
from conftest import c_structure
from gradcheck import check_grad

import fusejit
from fusejit.errors import UnsupportedError


def mlp_loss(params, x, labels):
    w1, b1, w2, b2 = params
    h = np.maximum(x @ w1 + b1, 0)
    logits = h @ w2 + b2
    m = logits.max(axis=1, keepdims=True)
    lse = m[:, 0] + np.log(np.exp(logits - m).sum(axis=1))
    return (lse - logits[np.arange(len(labels)), labels]).mean()


def mlp_params(rng, d, hidden, c, dtype=np.float64):
    return [rng.normal(size=(d, hidden)).astype(dtype), rng.normal(size=hidden).astype(dtype),
            rng.normal(size=(hidden, c)).astype(dtype), rng.normal(size=c).astype(dtype)]


def mlp_hand_grad(params, x, labels):
    """The backward pass written out (softmax cross-entropy through a ReLU layer)."""
    w1, b1, w2, b2 = params
    z1 = x @ w1 + b1
    h = np.maximum(z1, 0)
    z = h @ w2 + b2
    p = np.exp(z - z.max(axis=1, keepdims=True))
    p /= p.sum(axis=1, keepdims=True)
    dz = (p - np.eye(z.shape[1])[labels]) / len(labels)
    dh = (dz @ w2.T) * (z1 > 0)
    return [x.T @ dh, dh.sum(axis=0), h.T @ dz, dz.sum(axis=0)]


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_mlp_loss_matches_hand_derived(dtype):
    rng = np.random.default_rng(0)
    params = mlp_params(rng, 6, 5, 4, dtype)
    x, labels = rng.normal(size=(9, 6)).astype(dtype), rng.integers(0, 4, 9)
    value, grads = fusejit.value_and_grad(fusejit.jit(mlp_loss))(params, x, labels)
    assert isinstance(grads, list) and len(grads) == 4
    tol = 1e-12 if dtype == np.float64 else 2e-5
    np.testing.assert_allclose(value, mlp_loss(params, x, labels), rtol=tol)
    for g, want, p in zip(grads, mlp_hand_grad(params, x, labels), params):
        assert g.dtype == p.dtype and g.shape == p.shape
        np.testing.assert_allclose(g, want, rtol=tol * 10, atol=tol)


def test_pytrees_argnums_has_aux():
    rng = np.random.default_rng(1)
    tree = {"a": rng.normal(size=3), "b": (rng.normal(size=(2, 3)), [rng.normal(size=())])}
    y = rng.normal(size=3)

    def f(t, y, scale):
        (m, [s]) = t["b"]
        out = np.sum(np.tanh(t["a"] * y) * scale) + np.sum(m @ t["a"]) * s
        return out, {"m": m.sum()}

    (value, aux), (gt, gy) = fusejit.value_and_grad(f, argnums=(0, 1), has_aux=True)(tree, y,
                                                                                   2.0)
    assert set(gt) == {"a", "b"} and isinstance(gt["b"], tuple) and isinstance(gt["b"][1], list)
    np.testing.assert_allclose(value, f(tree, y, 2.0)[0])
    np.testing.assert_allclose(aux["m"], tree["b"][0].sum())
    check_grad(lambda a: f({**tree, "a": a}, y, 2.0)[0], [tree["a"]], 0, gt["a"])
    check_grad(lambda m: f({**tree, "b": (m, tree["b"][1])}, y, 2.0)[0], [tree["b"][0]], 0,
               gt["b"][0])
    check_grad(lambda y: f(tree, y, 2.0)[0], [y], 0, gy)
    g, aux2 = fusejit.grad(f, has_aux=True)(tree, y, 2.0)
    np.testing.assert_allclose(g["a"], gt["a"])
    gs = fusejit.grad(lambda x, s: np.sum(x) * s, argnums=1)(y, 3.0)  # a Python float
    np.testing.assert_allclose(gs, y.sum())


def test_compiled_once_per_signature():
    calls = []

    def f(x, n):
        calls.append(1)
        return np.sum(x ** n)

    g = fusejit.grad(f)
    x = np.linspace(0.0, 1.0, 4)
    for _ in range(3):
        np.testing.assert_allclose(g(x, 3), 3 * x ** 2)
    assert len(calls) == 1
    np.testing.assert_allclose(g(x, 2), 2 * x)  # an int argument is baked in
    g(np.linspace(0.0, 1.0, 5), 3)
    assert len(calls) == 3


def test_training_step_inside_jit():
    """value_and_grad traced inline in a jitted SGD step: one program, weights updated."""
    rng = np.random.default_rng(2)
    params = mlp_params(rng, 6, 5, 4)
    x, labels = rng.normal(size=(9, 6)), rng.integers(0, 4, 9)
    vg = fusejit.value_and_grad(mlp_loss)

    @fusejit.jit
    def step(params, x, labels):
        loss, grads = vg(params, x, labels)
        for p, g in zip(params, grads):
            p -= 0.1 * g
        return loss

    want = [p - 0.1 * g for p, g in zip(params, mlp_hand_grad(params, x, labels))]
    w1, b1, w2, b2 = (p.copy() for p in params)

    @fusejit.jit
    def flat_step(w1, b1, w2, b2, x, labels):
        return step([w1, b1, w2, b2], x, labels)

    loss = flat_step(w1, b1, w2, b2, x, labels)
    np.testing.assert_allclose(loss, mlp_loss(params, x, labels))
    for got, w in zip((w1, b1, w2, b2), want):
        np.testing.assert_allclose(got, w, rtol=1e-12)


def test_relu_backward_keeps_a_byte_mask_not_the_preactivation():
    """np.maximum(z, 0)'s gradient (JAX's tie rule: half at z == 0) reads h > 0 and z == 0:
    the plan stores the bool z == 0 from the first gemm's epilogue instead of the float z,
    and dh takes h's block, so the step's arena is the hand-written step's plus that mask
    (not plus z). Ties still get half the gradient."""
    rng = np.random.default_rng(4)
    n, d, hidden, c = 64, 32, 48, 4
    x = rng.normal(size=(n, d)).astype(np.float32)
    labels = rng.integers(0, c, n)
    params = mlp_params(rng, d, hidden, c, np.float32)
    vg = fusejit.value_and_grad(mlp_loss)

    def auto(w1, b1, w2, b2, x, labels):
        loss, grads = vg([w1, b1, w2, b2], x, labels)
        return loss, *grads

    def hand(w1, b1, w2, b2, x, labels):
        h = np.maximum(x @ w1 + b1, 0)
        z = h @ w2 + b2
        e = np.exp(z - z.max(axis=1, keepdims=True))
        dz = e / e.sum(axis=1, keepdims=True)
        dz[np.arange(n), labels] -= 1
        dz /= n
        dh = (dz @ w2.T) * (h > 0)
        return x.T @ dh, dh.sum(axis=0), h.T @ dz, dz.sum(axis=0)

    args = (*params, x, labels)
    auto_plan, hand_plan = (fusejit.jit(f).lower_for(*args).program for f in (auto, hand))
    if c_structure():  # (the C backend's plan: CUDA lowers matmuls without BLAS epilogues)
        assert auto_plan.arena_bytes < hand_plan.arena_bytes + n * hidden * 2  # z: 4 B each
        assert "(equal, bool) is a narrow function of" in str(fusejit.jit(auto).explain(*args))
    got, want = fusejit.jit(auto)(*args)[1:], hand(*args)
    for g, w in zip(got, want):
        np.testing.assert_allclose(g, w, rtol=2e-5, atol=1e-6)
    # exact ties: z == 0 in unit 0 for every row gets half the gradient there
    xt = np.zeros((n, d), np.float32)
    xt[:, 0] = 1.0
    w1 = params[0].copy()
    w1[0, 0] = 0.0
    g = fusejit.grad(lambda b1: np.sum(np.maximum(xt @ w1 + b1, 0)))(np.zeros(hidden,
                                                                              np.float32))
    assert g[0] == 0.5 * n
    g = fusejit.grad(lambda b1: np.sum(np.minimum(0.0, -(xt @ w1 + b1))))(np.zeros(hidden,
                                                                                  np.float32))
    assert g[0] == -0.5 * n


def test_vjp():
    a = np.linspace(0.1, 1.0, 6).reshape(2, 3)
    b = np.linspace(-1.0, 1.0, 3)
    out, back = fusejit.vjp(lambda a, b: (np.sin(a) * b, a.sum(axis=0)), a, b)
    np.testing.assert_allclose(out[0], np.sin(a) * b)
    ct = (np.ones((2, 3)), np.arange(3.0))
    ga, gb = back(ct)
    np.testing.assert_allclose(ga, np.cos(a) * b + np.arange(3.0))
    np.testing.assert_allclose(gb, np.sin(a).sum(axis=0))
    with pytest.raises(TypeError, match="structure"):
        back(np.ones((2, 3)))


def _inline_vjp(f, primals, ct):
    """The pullback traced inline with the forward pass in one jitted program (what vjp
    computed before it kept residuals)."""
    if len(primals) == 1:
        return fusejit.jit(lambda p, c: fusejit.vjp(f, p)[1](c))(*primals, ct)
    if isinstance(ct, tuple):
        return fusejit.jit(lambda p, q, c, d: fusejit.vjp(f, p, q)[1]((c, d)))(*primals, *ct)
    return fusejit.jit(lambda p, q, c: fusejit.vjp(f, p, q)[1](c))(*primals, ct)


VJP_CASES = [
    (lambda x: np.exp(np.sin(x)) * x, (np.linspace(-1, 1, 12).reshape(3, 4),)),
    (lambda x, y: (np.tanh(x @ y), np.sort(x, axis=1)[:, 1:] ** 2),
     (np.linspace(-1, 1, 12).reshape(3, 4), np.linspace(0, 2, 8).reshape(4, 2))),
    (lambda x: np.cumsum(x[np.array([2, 0, 2])] / np.linalg.norm(x), axis=0),
     (np.linspace(0.5, 2, 12).reshape(3, 4),)),
    (lambda x, y: np.maximum(x, y) * np.log(y), (np.linspace(0.1, 2, 6), np.full(6, 1.0))),
]


@pytest.mark.parametrize("case", range(len(VJP_CASES)))
def test_vjp_pullback_keeps_residuals(case):
    f, primals = VJP_CASES[case]
    out, back = fusejit.vjp(f, *primals)
    outs = out if isinstance(out, tuple) else (out,)
    rng = np.random.default_rng(case)
    ct = tuple(rng.normal(size=np.shape(o)) for o in outs)
    ct = ct if isinstance(out, tuple) else ct[0]
    got = back(ct)
    want = _inline_vjp(f, primals, ct)
    for g, w in zip(got, want):
        np.testing.assert_allclose(g, w, rtol=1e-13, atol=1e-15)
    for g, k in zip(got, range(len(primals))):  # and the finite differences
        check_grad(lambda *a: sum(np.sum(o * c) for o, c in zip(
            *(((f(*a),), (ct,)) if not isinstance(out, tuple) else (f(*a), ct)))),
            list(primals), k, g, rtol=1e-6)


def test_vjp_pullback_runs_the_backward_pass_alone():
    x = np.linspace(-1, 1, 12).reshape(3, 4)
    out, back = fusejit.vjp(lambda x: np.exp(np.sin(x)), x)
    np.testing.assert_allclose(out, np.exp(np.sin(x)))
    ct = np.ones_like(x)
    graph = str(back.pullback.explain(*back.arguments(ct))).split("== graph after optim")[0]
    assert " = cos(" in graph and " = sin(" not in graph and " = exp(" not in graph, graph
    assert any(np.allclose(r, out) for r in back.residuals)  # exp(sin(x)) was kept
    np.testing.assert_allclose(back(ct)[0], np.cos(x) * np.exp(np.sin(x)))
    ga, gb = fusejit.vjp(lambda a, b: a * b * b, x, x)[1](ct)  # one array as two primals
    np.testing.assert_allclose(ga, x * x)
    np.testing.assert_allclose(gb, 2 * x * x)
    with pytest.raises(ValueError, match="shape"):
        back(np.ones(3))


def test_export_of_a_gradient(tmp_path):
    def loss(x, y):
        return np.sum((np.tanh(x) - y) ** 2)

    x, y = np.linspace(-1, 1, 8), np.linspace(0, 1, 8)
    res = fusejit.export(fusejit.grad(loss), x, y, path=str(tmp_path))
    lib = fusejit.load(res.library)
    np.testing.assert_allclose(lib(x, y), 2 * (np.tanh(x) - y) * (1 - np.tanh(x) ** 2))


def test_errors():
    x = np.linspace(0.0, 1.0, 3)
    with pytest.raises(TypeError, match="float32 or float64"):
        fusejit.grad(lambda i: np.sum(i * 1.0))(np.arange(3))
    with pytest.raises(TypeError, match="float32 or float64"):
        fusejit.grad(lambda b, x: np.sum(x), argnums=(0, 1))(np.array([True]), x)
    with pytest.raises(TypeError, match="scalar output"):
        fusejit.grad(lambda x: x * 2)(x)
    with pytest.raises(ValueError, match="argnums"):
        fusejit.grad(lambda x: x.sum(), argnums=2)(x)
    line = inspect.currentframe().f_lineno + 2
    with pytest.raises(UnsupportedError, match=rf"np.nextafter at .*test_grad_api.py:{line}"):
        fusejit.grad(lambda x: np.sum(np.nextafter(x, 2.0)))(x)
    with pytest.raises(UnsupportedError, match=r"scan \(logaddexp\) at .*test_grad_api"):
        fusejit.grad(lambda v: np.sum(np.logaddexp.accumulate(v)))(x)
    # an integer path needs no rule: argmax and comparisons carry no gradient
    g = fusejit.grad(lambda x: np.sum(x * (x > 0.4)) + x[np.argmax(x)])(x)
    np.testing.assert_allclose(g, [0, 1, 2])


def test_every_op_has_a_rule_or_says_why_not():
    from fusejit.frontend import vjp_rules
    from fusejit.frontend.ops import OPS

    assert vjp_rules.MISSING == []
    for name, op in OPS.items():
        rule = op.vjp
        assert callable(rule) or (isinstance(rule, vjp_rules.Marker) and (
            rule.kind != "refused" or rule.reason)), name


def test_readme_gradients_section():
    """The README's Gradients example runs, and its stated results hold."""
    import os
    import re

    readme = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))),
                          "README.md")
    with open(readme, encoding="utf-8") as fh:
        text = fh.read()
    section = text[text.index("## Gradients"):text.index("## Export a compiled function")]
    code = re.search(r"```python\n(.*?)```", section, re.S).group(1)
    ns: dict = {}
    exec(compile(code, "README.md", "exec"), ns)
    np.testing.assert_allclose(ns["g"], [-2, -2, -2, -2, 0])
    np.testing.assert_allclose(ns["cotangent"], np.cos(np.linspace(0, 1, 4)))
    params, x, labels = ns["params"], ns["x"], ns["labels"]
    for g, want in zip(ns["grads"], mlp_hand_grad(params, x, labels)):
        np.testing.assert_allclose(g, want, rtol=1e-10, atol=1e-12)
    before = [p.copy() for p in params]
    value = ns["sgd_step"](*params, x, labels)
    np.testing.assert_allclose(value, ns["value"])
    for p, b, g in zip(params, before, ns["grads"]):
        np.testing.assert_allclose(p, b - 0.1 * g, rtol=1e-12)


def test_explain_shows_both_halves():
    """The backward pass's kernels name the user's lines they differentiate."""
    calls = []

    @fusejit.jit
    def step(x, y):
        calls.append(1)
        v, g = fusejit.value_and_grad(lambda x: np.sum(np.tanh(x) * y))(x)
        return v, g

    x, y = np.linspace(-1, 1, 64), np.linspace(0, 1, 64)
    line = inspect.getsourcelines(step.fn)[1] + 3
    text = str(step.explain(x, y))
    assert f"test_grad_api.py:{line} (gradient)" in text
    assert f"test_grad_api.py:{line} " in text.replace(f":{line} (gradient)", "")
    v, g = step(x, y)
    np.testing.assert_allclose(g, (1 - np.tanh(x) ** 2) * y)
    assert len(calls) == 1


def test_second_order_and_static_arguments():
    """grad of a function that takes a grad (a Hessian-vector product), and a jitted
    function's static arguments staying static under grad."""
    def f(x):
        return np.sum(np.sin(x) * x[::-1]) + np.sum(x[1:] * x[:-1] ** 3) + np.max(x ** 2)

    x, v = np.linspace(0.1, 1.0, 5), np.arange(5.0)
    hv = fusejit.grad(lambda x: np.sum(fusejit.grad(f)(x) * v))(x)
    g = fusejit.grad(f)
    eps = 1e-6
    np.testing.assert_allclose(hv, (g(x + eps * v) - g(x - eps * v)) / (2 * eps), rtol=1e-6)

    @fusejit.jit(static_argnums=1)
    def h(x, axis):
        return np.sum(np.max(x, axis=axis) ** 2)

    m = np.arange(6.0).reshape(2, 3)
    np.testing.assert_allclose(fusejit.grad(h)(m, 0), [[0, 0, 0], [6, 8, 10]])
    np.testing.assert_allclose(fusejit.grad(h)(m, 1), [[0, 0, 4], [0, 0, 10]])


def test_errors_inside_a_trace():
    """The same argument checks when the gradient is taken inside a jitted function."""
    @fusejit.jit
    def f(x, n):
        return fusejit.grad(lambda x, n: np.sum(x * n), argnums=1)(x, n)

    with pytest.raises(TypeError, match="float32 or float64"):
        f(np.ones(3), np.arange(3))
    with pytest.raises(TypeError, match="float32 or float64"):
        fusejit.jit(lambda x: fusejit.grad(lambda b: np.sum(x) * b)(True))(np.ones(2))


def test_profile_source_column_keeps_gradient_lines_short():
    from fusejit.runtime.profile_report import source_lines

    assert source_lines(["/a/x.py:3 (gradient)", "/a/x.py:4 (gradient)", "/a/x.py:3"]) == (
        "x.py:3-4 (gradient); x.py:3")
