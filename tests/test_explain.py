"""`f.explain(...)`: the report's sections, fusion refusals, BLAS vs loops, the memory plan, the
Graphviz DOT view, and what each FUSEJIT_DEBUG level prints."""

from __future__ import annotations

import os
import re
import shutil
import subprocess

import numpy as np
import pytest
from conftest import c_structure, on_cuda

import fusejit
from fusejit.frontend.ir import format_graph, users
from fusejit.lowering import fusion
from fusejit.lowering.loop_ir import GemmKernel
from fusejit.lowering.memplan import check_plan, summary
from fusejit.runtime.explain_dot import arena_blocks, node_buffers

F32 = np.float32
rng = np.random.default_rng(7)


def lstm_cell(concat, c):
    i, j, f, o = np.split(concat, 4, axis=1)
    new_c = c * (1 / (1 + np.exp(-(f + 1.0)))) + np.tanh(i) * np.tanh(j)
    return new_c, np.tanh(new_c) * np.tanh(o)


def mlp(x, w1, b1, w2):
    h = np.maximum(x @ w1 + b1, 0)  # bias + relu: the first gemm's epilogue
    return (np.tanh(h @ w2) @ w2.T).sum(axis=0)  # the last product is reduced: stored


def _mlp_args():
    return (rng.random((32, 64), F32), rng.random((64, 128), F32), rng.random(128, F32),
            rng.random((128, 10), F32))


def _lines_of(fn) -> dict[str, int]:
    """Source line -> line number, for a function defined in this file."""
    import inspect

    src, first = inspect.getsourcelines(fn)
    return {line.strip(): first + k for k, line in enumerate(src)}


# --- the report ---------------------------------------------------------------------------------


def test_report_shows_graphs_kernels_sources_memory_and_times() -> None:
    f = fusejit.jit(lstm_cell)
    args = (rng.random((16, 32), F32), rng.random((16, 8), F32))
    e = f.explain(*args)
    c = f.lower_for(*args)
    text = str(e)
    assert format_graph(c.graph) in text and format_graph(c.optimised) in text
    assert text.index("after tracing") < text.index("after optimisation") < text.index("kernels")
    # one kernel, both outputs, and the user's lines it fused (file:line and the text itself)
    assert len(c.program.kernels) == 1 and "k0: elementwise" in text
    assert re.search(r"stores %\d+ -> output0, %\d+ -> output1", text)
    lines = _lines_of(lstm_cell)
    for stmt in ("new_c = c * (1 / (1 + np.exp(-(f + 1.0)))) + np.tanh(i) * np.tanh(j)",
                 "return new_c, np.tanh(new_c) * np.tanh(o)"):
        assert f"test_explain.py:{lines[stmt]}  {stmt}" in text
    for node in c.optimised.nodes():
        if node.op not in ("input", "const", "view"):
            assert f"%{node.id} {node.op}" in text
    for stage, seconds in c.times.items():
        assert f"{stage} {seconds * 1e3:.1f} ms" in text
    assert e.times == c.times and e.program is c.program


def test_explain_does_not_recompile() -> None:
    f = fusejit.jit(lstm_cell)
    args = (rng.random((8, 16), F32), rng.random((8, 4), F32))
    f(*args)
    before = (f.trace_count, f.compile_count)
    for _ in range(2):
        f.explain(*args)
    assert (f.trace_count, f.compile_count) == before
    other = (rng.random((4, 16), F32), rng.random((4, 4), F32))
    f.explain(*other)  # a new signature compiles once, and the call then reuses it
    f(*other)
    assert (f.trace_count, f.compile_count) == (before[0] + 1, before[1] + 1)


def test_memory_plan_table_and_summary() -> None:
    f = fusejit.jit(mlp)
    e = f.explain(*_mlp_args())
    p = e.program
    check_plan(p)
    s = summary(p)
    text = e.memory_report()
    assert (f"naive {s.naive_bytes} B" in text and f"planned arena {s.arena_bytes} B" in text
            and f"lower bound {s.lower_bound} B" in text)
    assert s.naive_bytes > s.arena_bytes  # the two products share their memory
    names = [k.name for k in p.kernels]
    for b in p.buffers:
        row = next(line.split() for line in text.splitlines() if line.startswith(b.name + " "))
        assert row[1] == b.kind and row[4] == str(b.nbytes)
        assert row[5] == (str(b.offset) if b.kind == "temp" else "-")
        first, last = row[6].split("..")
        assert names.index(first) <= names.index(last)
    temps = [b for b in p.buffers if b.kind == "temp"]
    assert "memory plan: naive" in str(e).splitlines()[0]
    assert not c_structure() or len(temps) == 3  # C: the products' epilogues store nothing


@pytest.mark.c_only  # the C backend's choice of BLAS or generated loops
def test_matmuls_say_blas_or_generated_loops() -> None:
    f = fusejit.jit(lambda a, b: (a @ b) * 2)
    for dtype, how in ((np.float64, "BLAS gemm"), (np.int64, "generated loops (no BLAS")):
        a, b = np.ones((3, 4), dtype), np.ones((4, 5), dtype)
        e = f.explain(a, b)
        (gemm,) = [k for k in e.program.kernels if isinstance(k, GemmKernel)]
        assert gemm.blas == (dtype is np.float64)
        assert f"matmul [3x4] @ [4x5] {np.dtype(dtype).name}: {how}" in str(e)


# --- fusion refusals ----------------------------------------------------------------------------


def _kernel_text(e, name: str) -> str:
    text = e.kernels_report()
    start = text.index(f"\n{name}: ")
    end = text.find("\nk", start + 1)
    return text[start:end if end > 0 else None]


def test_refusal_broadcast_recompute_budget() -> None:
    e = fusejit.jit(lambda x, v: x * np.exp(v)).explain(np.ones((64, 64)), np.ones(64))
    k0 = _kernel_text(e, "k0")
    assert re.search(r"stored: %\d+ \(exp, cost \d+\) is broadcast 64x", k0)
    assert "differs from k0's domain [64]" in _kernel_text(e, "k1")


def test_refusal_reduction_boundary_and_axes() -> None:
    def f(x):
        y = x + 1
        return y, y.sum(axis=1), y.sum(axis=0)

    e = fusejit.jit(f).explain(np.ones((6, 5)))
    assert "reduction boundary: a reduction starts its own row loop" in _kernel_text(e, "k1")
    assert "it reduces axes (0,), k1 reduces (1,)" in _kernel_text(e, "k2")


def test_refusal_matmul_and_dependency_order() -> None:
    def f(x, a, b):
        y = x + 1
        m = a @ b
        return y, m.T + 1  # read at another index: no gemm epilogue

    e = fusejit.jit(f).explain(np.ones((4, 4)), np.ones((4, 4)), np.ones((4, 4)))
    assert "(matmul) is a kernel of its own: a GEMM reads its operands" in _kernel_text(e, "k1")
    k2 = _kernel_text(e, "k2")
    assert re.search(r"not fused into k0: it reads %\d+, stored by k1, which runs after k0", k2)
    assert "not fused into k1: k1 is a matmul, which fuses nothing else" in k2


def test_refusal_scatter_and_fill_kernel() -> None:
    def f(x, v):
        y = x * 2
        y[1:3] = v + 1
        return y

    e = fusejit.jit(f).explain(np.ones((5, 4)), np.ones(4))
    assert "fills its scatter's buffer" in _kernel_text(e, "k0_fill")
    assert "(scatter) is a kernel of its own: it writes a region" in _kernel_text(e, "k0")


def test_every_new_kernel_of_a_shared_domain_says_why() -> None:
    """Partition-level: a group that starts while another group of its domain exists always
    carries a refusal naming that group."""
    from fusejit.frontend.trace import trace
    from fusejit.lowering.pipeline import optimise

    def f(x, a):
        s = x.sum(axis=1, keepdims=True)
        m = a @ a
        return x - s, m * 2, x + m

    g, _ = trace(f, [np.ones((4, 4)), np.ones((4, 4))], frozenset(), "f", None)
    groups, _, _ = fusion.partition(optimise(g))
    for gi, group in enumerate(groups):
        if group.matmul:
            assert group.refusals and "kernel of its own" in group.refusals[0]
            continue
        for gj, other in enumerate(groups[:gi]):
            if other.shape == group.shape:
                assert any(f"into k{gj}:" in r for r in group.refusals), (gi, gj, group)


# --- lowering copies, in-place updates ----------------------------------------------------------


def test_nodes_added_by_lowering_are_explained() -> None:
    """`return x * 2, x * 2`: lowering copies the second output; the explanation lowers again
    (nothing is built) so its Program names nodes that its graph holds."""
    f = fusejit.jit(lambda x: (x * 2, x * 2))
    x = np.arange(10.0)
    e = f.explain(x)
    c = f.lower_for(x)
    assert re.search(r"lowering added .*\n  %\d+ = copy\(%\d+\)", e.kernels_report())
    assert [(b.kind, b.shape, b.offset) for b in e.program.buffers] == [
        (b.kind, b.shape, b.offset) for b in c.program.buffers]
    assert [k.name for k in e.program.kernels] == [k.name for k in c.program.kernels]
    ids = {n.id for n in e.lowered.nodes()}
    assert all(n in ids for k in e.program.kernels for n in k.nodes)
    assert "copy" in e.to_dot()


def test_in_place_update_is_explained() -> None:
    def adagrad(w, g, cache, lr=0.01, eps=1e-8):
        cache += g * g
        w -= lr * g / (np.sqrt(cache) + eps)

    args = [rng.random(100, F32) for _ in range(3)]
    e = fusejit.jit(adagrad).explain(*args)
    assert re.search(r"stores %\d+ -> input2, %\d+ -> input0", e.kernels_report())
    assert "written into input0 in place" in e.to_dot()


# --- DOT ----------------------------------------------------------------------------------------


def _dot_parts(dot: str) -> tuple[dict[str, str], list[tuple[str, str]]]:
    nodes = dict(re.findall(r"^\s*(n\d+) \[(.*)\];$", dot, flags=re.M))
    edges = re.findall(r"^\s*(n\d+) -> (n\d+);$", dot, flags=re.M)
    return nodes, edges


def test_dot_is_well_formed_and_labelled() -> None:
    f = fusejit.jit(mlp)
    e = f.explain(*_mlp_args())
    dot = e.to_dot()
    assert dot.startswith('digraph "mlp" {') and dot.rstrip().endswith("}")
    depth = 0
    for ch in dot:
        depth += {"{": 1, "}": -1}.get(ch, 0)
        assert depth >= 0
    assert depth == 0
    nodes, edges = _dot_parts(dot)
    graph = e.lowered
    uses = users(graph.nodes())
    assert set(nodes) == {f"n{n.id}" for n in graph.nodes()}
    for a, b in edges:
        assert a in nodes and b in nodes
    assert len(edges) == sum(len(n.inputs) for n in graph.nodes())
    for n in graph.nodes():
        assert f'label="%{n.id} {n.op}\\n{n.type}\\nrefs {len(uses[n.id])}' in nodes[f"n{n.id}"]
    for k in e.program.kernels:  # each kernel a cluster
        assert f'subgraph "cluster_{k.name}"' in dot


def test_dot_colours_nodes_by_arena_block() -> None:
    e = fusejit.jit(mlp).explain(*_mlp_args())
    nodes, _ = _dot_parts(e.to_dot())
    where = node_buffers(e.program)
    blocks = arena_blocks(e.program)
    colour = {}
    for nid, attrs in nodes.items():
        buf = where.get(int(nid[1:]))
        if buf is not None and buf.kind == "temp":
            colour[nid] = (blocks[buf.index], re.search(r'fillcolor="(#\w+)"', attrs).group(1))
    if c_structure():  # C's plan: three temps, one block reused
        assert len(colour) == 3 and len({b for b, _ in colour.values()}) == 2
    for b1, c1 in colour.values():
        for b2, c2 in colour.values():
            assert (b1 == b2) == (c1 == c2)
    styles = {nid: attrs for nid, attrs in nodes.items() if int(nid[1:]) not in where}
    assert all("dashed" in a or "shape=note" in a for a in styles.values())  # fused / consts
    inputs = [a for a in nodes.values() if re.match(r'label="%\d+ input\\n', a)]
    assert len(inputs) == 4 and all('fillcolor="#e0e0e0"' in a for a in inputs)


@pytest.mark.skipif(shutil.which("dot") is None, reason="Graphviz `dot` is not installed")
def test_dot_renders_with_graphviz() -> None:
    for fn, args in ((mlp, _mlp_args()),
                     (lstm_cell, (rng.random((4, 8), F32), rng.random((4, 2), F32)))):
        dot = fusejit.jit(fn).explain(*args).to_dot()
        r = subprocess.run(["dot", "-Tsvg"], input=dot, capture_output=True, text=True,
                           timeout=60)
        assert r.returncode == 0 and "<svg" in r.stdout, r.stderr


# --- FUSEJIT_DEBUG levels -----------------------------------------------------------------------

# What each level adds (each level prints everything of the levels below it too).
LEVEL_MARKERS = {
    1: ("[fusejit] compiled dbg for", "[fusejit] dbg: memory plan: naive"),
    2: ("[fusejit] traced dbg:\ngraph dbg(", "[fusejit] optimised dbg:\ngraph dbg("),
    3: ("== kernels (2) ==", "stored: %", "== memory plan (arena"),
    4: ("[fusejit] program dbg (arena",),
    5: ("[fusejit] generated C for dbg:", "#include"),
}


@pytest.mark.parametrize("level", [0, 1, 2, 3, 4, 5])
def test_debug_levels(level: int, monkeypatch: pytest.MonkeyPatch, capfd) -> None:
    def dbg(x, v):
        return x * np.exp(v) + 1

    monkeypatch.setenv("FUSEJIT_DEBUG", str(level))
    capfd.readouterr()
    fusejit.jit(dbg)(np.ones((64, 64)), np.ones(64))
    err = capfd.readouterr().err
    for lvl, markers in LEVEL_MARKERS.items():
        for m in markers:
            m = m.replace("generated C ", "generated CUDA ") if on_cuda() else m
            assert (m in err) == (lvl <= level), (level, m)
    if level == 0:
        assert "[fusejit]" not in err


def test_debug_level_is_documented() -> None:
    import fusejit.config as config

    doc = config.__doc__ or ""
    for level in range(1, 6):
        assert re.search(rf"^\s*{level}\s", doc, flags=re.M), level
    readme = os.path.join(os.path.dirname(config.__file__), "README.md")
    if not os.path.exists(readme):
        pytest.skip("not run from a source checkout")
    with open(readme) as fh:
        text = fh.read()
    assert "| `FUSEJIT_DEBUG` | 0..5" in text and ".explain(" in text and ".to_dot()" in text
