"""Compiled functions over Dask arrays (runtime/dask_array.py): results equal NumPy's on the
concatenated arrays, for blockwise stages, tree reductions and matmul; bad input raises before
anything runs; a two-process LocalCluster computes the same and compiles once per worker."""

from __future__ import annotations

import numpy as np
import pytest
from conftest import assert_same, examples
from hypothesis import given, settings
from hypothesis import strategies as st

da = pytest.importorskip("dask.array")
dask = pytest.importorskip("dask")

import fusejit  # noqa: E402
from fusejit.errors import UnsupportedError  # noqa: E402
from fusejit.runtime import dask_ship, dask_stage  # noqa: E402


@pytest.fixture(autouse=True)
def _sync_scheduler():
    with dask.config.set(scheduler="sync"):
        yield


def concrete(a):
    return a.compute() if isinstance(a, da.Array) else a


def check(f, *args, rtol=None, atol=0.0):
    """jit(f) on Dask arguments gives Dask arrays whose values are f's on the whole arrays."""
    got = fusejit.jit(f)(*args)
    expected = f(*[concrete(a) for a in args])
    if isinstance(expected, tuple):
        assert isinstance(got, tuple) and len(got) == len(expected)
        for g, e in zip(got, expected):
            assert isinstance(g, da.Array)
            assert_same(np.asarray(g.compute()), np.asarray(e), rtol=rtol, atol=atol)
        return got
    assert isinstance(got, da.Array), type(got)
    assert got.dtype == np.asarray(expected).dtype and got.shape == np.shape(expected)
    assert_same(np.asarray(got.compute()), np.asarray(expected), rtol=rtol, atol=atol)
    return got


def rand(shape, chunks, dtype=np.float32, seed=0):
    x = np.random.default_rng(seed).standard_normal(shape).astype(dtype)
    return da.from_array(x, chunks=chunks)


def gelu_tanh(x):
    return 0.5 * x * (1 + np.tanh(0.7978845608 * (x + 0.044715 * x ** 3)))


def layernorm(x, g, b):
    m = x.mean(axis=1, keepdims=True)
    v = ((x - m) ** 2).mean(axis=1, keepdims=True)
    return (x - m) / np.sqrt(v + 1e-5) * g + b


@pytest.mark.parametrize("chunks", [(1000,), (300,), ((0, 500, 0, 500),), (64,)])
def test_elementwise_uneven_and_empty_chunks(chunks):
    x = rand((1000,), chunks, np.float64)
    y = check(gelu_tanh, x)
    assert y.chunks == x.chunks  # blockwise: the argument's chunks


def test_one_compiled_program_per_chunk_shape():
    x = rand((1000,), 300)  # 300, 300, 300, 100: two shapes
    f = fusejit.jit(lambda x: x * 2 + 1)
    before = set(dask_stage._local)
    f(x).compute()
    new = [dask_stage._local[t] for t in set(dask_stage._local) - before]
    assert len(new) == 1 and new[0].compile_count == 2


def test_broadcast_with_numpy_and_dask_arguments():
    x = rand((60, 40), (25, 15))
    y = rand((40,), 15, seed=1)
    g = np.linspace(0, 1, 40, dtype=np.float32)
    check(lambda x, y, g: x * y - g, x, y, g)
    check(lambda x, s: x * s + 2, x, 3.0)
    check(lambda x, y: x[:, None, :] + y[None, :, None], rand((8, 6), (3, 2)),
          rand((5,), 2, seed=2))


def test_gather_by_chunked_indices_and_constants_cut_into_chunks():
    table = np.random.default_rng(4).standard_normal((50, 8)).astype(np.float32)
    idx = da.from_array(np.random.default_rng(5).integers(0, 50, (30, 4)), chunks=(7, 2))
    y = check(lambda t, i: t[i] * 2, table, idx)  # an embedding lookup, per index chunk
    assert y.chunks[:2] == idx.chunks
    check(lambda t, i: np.take(t, i, axis=0).sum(axis=-1), table, idx)
    x = rand((20, 6), (6, 3), np.float64)
    check(lambda x: x * np.arange(6) + np.arange(20)[:, None], x)  # constants, chunked


SCALE = np.arange(6.0)


def test_global_arrays_the_function_reads():
    """A module-level array the function reads is an input read at each call, as on NumPy
    arguments (it raised IndexError: the plan looked for it among the arguments)."""
    global SCALE
    x = rand((4, 6), (2, 6), np.float64)
    f = fusejit.jit(lambda x: x * SCALE)
    old = SCALE
    try:
        assert_same(np.asarray(f(x).compute()), x.compute() * SCALE)
        SCALE = old * 2  # a new value, then a new dtype (traced again)
        assert_same(np.asarray(f(x).compute()), x.compute() * SCALE)
        SCALE = old.astype(np.float32)
        assert_same(np.asarray(f(x).compute()), x.compute() * SCALE)
        assert "per-chunk program" in str(f.explain(x))  # explain reads the global too
    finally:
        SCALE = old


def test_same_function_on_numpy_then_dask_and_by_keyword():
    f = fusejit.jit(lambda x, y: x * y + 1)
    assert_same(f(np.ones(4), 2.0), np.full(4, 3.0))
    assert_same(f(np.ones(4), 2.0), np.full(4, 3.0))  # the fast path is installed now
    got = f(da.ones(4, chunks=3), 2.0)
    assert isinstance(got, da.Array)
    assert_same(got.compute(), np.full(4, 3.0))
    assert_same(f(y=np.float64(3), x=da.ones(4, chunks=3)).compute(), np.full(4, 4.0))
    assert_same(f(np.ones(4), 2.0), np.full(4, 3.0))


def test_rowwise_layernorm_and_row_chunks():
    x = rand((70, 32), (16, 32))
    g = np.linspace(0.5, 1.5, 32, dtype=np.float32)
    y = check(layernorm, x, g, np.float32(0.25), atol=1e-6)
    assert y.chunks == x.chunks


@pytest.mark.parametrize("fn", ["sum", "prod", "max", "min", "mean", "var", "std", "argmax",
                                "argmin", "any", "all"])
@pytest.mark.parametrize("axis", [None, 1])
def test_reductions_over_chunked_axes(fn, axis):
    x = rand((37, 23), (10, (5, 0, 18)), np.float64)
    if fn == "prod":
        x = 1 + x / 10
    if fn in ("any", "all"):
        x = x > -1.5
    check(lambda x: getattr(np, fn)(x, axis=axis), x, rtol=1e-12)


def test_reductions_keepdims_ints_and_one_chunk():
    x = da.from_array(np.arange(-50, 50, dtype=np.int32).reshape(10, 10), chunks=(3, 4))
    check(lambda x: x.sum(axis=0, keepdims=True), x)
    check(lambda x: (x * x).max(axis=1, keepdims=True) + x.min(), x)
    check(lambda x: np.argmax(x * (x % 7 == 3), axis=1), x)
    one = rand((9, 5), -1)
    check(lambda x: (x.sum(), x.argmin(), x.var(axis=0)), one, rtol=1e-5)


def test_argmax_ties_and_nan_match_numpy():
    a = np.zeros((12, 6), np.float32)
    a[3, 2] = a[9, 1] = 1.0  # a tie across chunks: the first in C order wins
    check(lambda x: (np.argmax(x), np.argmax(x, axis=0)), da.from_array(a, chunks=(5, 4)))
    a[7, 5] = a[11, 0] = np.nan
    check(lambda x: (np.argmax(x), np.argmin(x, axis=1), x.max()),
          da.from_array(a, chunks=(5, 4)))
    z = a + 1j * (np.arange(72).reshape(12, 6) % 3)  # complex: lexicographic, first NaN
    z[2, 1] = complex(5, np.nan)  # in either part
    check(lambda z: z.max(axis=0), da.from_array(z, chunks=(6, 3)))  # argmax inside


def test_float32_sum_of_a_large_array_is_accurate():
    x = rand((1 << 20,), 1 << 17)
    got = fusejit.jit(lambda x: np.sum(x * x))(x).compute()
    exact = np.sum(x.compute().astype(np.float64) ** 2)
    assert abs(got - exact) <= 1e-5 * exact


def test_matmul_inner_axis_chunked_and_not():
    a, b = rand((30, 20), (7, 6)), rand((20, 9), (6, 4), seed=1)
    check(lambda a, b: np.tanh(a @ b) * 2, a, b, rtol=1e-5, atol=1e-5)
    w = np.random.default_rng(3).standard_normal((20, 5)).astype(np.float32)
    rows = rand((30, 20), (7, 20))
    y = check(lambda x, w: np.maximum(x @ w, 0), rows, w, rtol=1e-5)
    assert y.chunks[0] == rows.chunks[0]


def test_tuple_results_and_unchanged_argument():
    x = rand((20,), 6)
    y, s, same = fusejit.jit(lambda x: (x + 1, (x * 2).sum(), x))(x)
    assert same is x
    assert_same(np.asarray(y.compute()), x.compute() + 1)
    assert_same(np.asarray(s.compute()), np.asarray((x.compute() * 2).sum()), rtol=1e-6)


def test_results_with_the_same_axes_share_one_stage():
    x, y = rand((50,), 20), rand((50,), 20, seed=1)
    before = set(dask_stage._local)

    def two(x, y):
        d = np.exp(x) * y
        return d + 1, d * 2, np.sqrt(np.abs(d))

    a, b, c = check(two, x, y, rtol=1e-6)
    assert len(set(dask_stage._local) - before) == 1  # one compiled stage computes all three


def test_explain_shows_chunk_plan_and_per_chunk_program():
    x = rand((100, 8), (30, 8))
    f = fusejit.jit(lambda x, g: (x * g).sum(axis=0))
    text = str(f.explain(x, np.ones(8, np.float32)))
    assert "x: float32[100, 8] in 4x1 chunks of [30, 8]" in text
    assert "Dask tree reduction" in text and "per-chunk partial of sum" in text
    assert "per-chunk program" in text and "float32[30,8]" in text


def test_whole_axes_are_rechunked_when_other_axes_stay_split():
    x = rand((40, 30), (10, 10))
    y = check(lambda x: x[:, 1:] - x[:, :-1], x)
    assert y.chunks == ((10,) * 4, (29,))  # rows stay split; axis 1 is one chunk
    check(lambda x: np.cumsum(x, axis=1) * 2, x, rtol=1e-6)
    check(lambda x: np.sort(x, axis=1)[:, :3], x)
    check(lambda x: (np.argsort(x, axis=0), x.sum(axis=1)), x, rtol=1e-5, atol=1e-5)
    text = str(fusejit.jit(lambda x: x[:, 1:] - x[:, :-1]).explain(x))
    assert "rechunked: axis 1 of `x` (3 chunks) to one chunk, because a slice" in text
    assert "x after rechunking: 4x1 chunks of [10, 30]" in text
    assert "axis class" in text and "cut into 4 chunks" in text


def test_rechunking_keeps_chunks_within_dask_chunk_size():
    x = rand((64, 256), (32, 32))  # 4 KiB chunks; one whole row chunk would be 32 KiB
    with dask.config.set({"array.chunk-size": "4KiB"}):
        y = check(lambda x: np.cumsum(x, axis=1), x, rtol=1e-5)
    assert y.chunks == ((4,) * 16, (256,))
    with dask.config.set({"array.chunk-size": "4KiB"}):
        text = str(fusejit.jit(lambda x: np.cumsum(x, axis=1)).explain(x))
    assert "x after rechunking: 16x1 chunks of [4, 256]" in text
    assert "cut into 16 chunks" in text  # the rows as the stages get them, not the 2 of x


def test_in_place_update_gives_a_new_array():
    w, g = rand((40,), 15), rand((40,), 15, seed=1)
    w0 = w.compute()

    def step(w, g):
        w -= 0.1 * g
        return w

    new = fusejit.jit(step)(w, g)
    assert new is not w and isinstance(new, da.Array)
    assert_same(w.compute(), w0)  # Dask arrays are immutable: the caller's is unchanged
    assert_same(np.asarray(new.compute()), w0 - np.float32(0.1) * g.compute())


@settings(max_examples=examples(4))
@given(st.lists(st.integers(0, 9), min_size=1, max_size=4),
       st.lists(st.integers(1, 7), min_size=1, max_size=3))
def test_property_chunkings(rows, cols):
    rows = tuple(rows) if sum(rows) else rows[:-1] + [1]
    x = da.from_array(np.random.default_rng(sum(rows)).standard_normal(
        (sum(rows), sum(cols))), chunks=(tuple(rows), tuple(cols)))
    check(lambda x: (x.sum(axis=1), np.exp(x).max(axis=0)), x, rtol=1e-12)


def test_threaded_scheduler():
    x = rand((500, 8), (64, 4))
    with dask.config.set(scheduler="threads"):
        check(lambda x: (np.sin(x) * 2, x.std(axis=0)), x, rtol=1e-5)


def test_import_and_numpy_calls_never_import_dask():
    import subprocess
    import sys

    code = ("import sys, numpy as np, fusejit\n"
            "f = fusejit.jit(lambda x: x * 2)\n"
            "f(np.ones(3)); f.explain(np.ones(3))\n"
            "assert not [m for m in sys.modules if m.startswith('dask')], 'dask imported'\n")
    subprocess.run([sys.executable, "-c", code], check=True)


def test_errors_before_anything_runs():
    x = rand((40, 30), (10, 10))
    with pytest.raises(UnsupportedError, match=r"axis 0 of Dask argument `x`.*no other axis"):
        fusejit.jit(lambda x: x[1:] * 2)(rand((40,), 10))  # rechunking leaves nothing split
    with pytest.raises(UnsupportedError, match="rechunk"):
        fusejit.jit(lambda x: x + x.T)(rand((10, 10), 5))
    with pytest.raises(UnsupportedError, match="unknown chunk sizes"):
        fusejit.jit(lambda x: x * 2)(x[x[:, 0] > 0])
    with pytest.raises(UnsupportedError, match="datetime64"):
        fusejit.jit(lambda x: x * 2)(x.astype("datetime64[s]"))
    z = x.astype(np.complex64) * (1 - 2j)  # complex chunks
    got = fusejit.jit(lambda z: (z * 2j).sum(axis=0))(z)
    np.testing.assert_allclose(np.asarray(got), (z.compute() * 2j).sum(axis=0), rtol=1e-5)
    with pytest.raises(UnsupportedError, match="reshape"):
        fusejit.jit(lambda x: x.reshape(-1) + 1)(x)
    x1 = rand((40, 30), (10, 30))
    assert fusejit.jit(lambda x: x[:, 1:] * 2)(x1).shape == (40, 29)  # rows only: fine


def test_stage_errors_name_the_users_line():
    """An error raised while a stage is rebuilt for a chunk names the user's line of the node
    (it named the generated stage function, one line below the user's `def`), and the stage
    function's frame in the traceback is the user's `def` line itself."""
    node = dask_stage.StageNode("reduce", (0,), (1,), (None,), np.dtype(np.complex64),
                                {"fn": "max", "axes": (0,), "keepdims": True}, "user.py:12")
    spec = dask_stage.StageSpec("f_chunk0", ((0,),), (node,), (1,), None, ("user.py", 10))
    with pytest.raises(UnsupportedError, match=r"fusejit at user\.py:12 \(") as err:
        fusejit.jit(dask_stage.stage_function(spec))(np.ones(4, np.complex64))
    tb, lines = err.value.__traceback__, []
    while tb is not None:
        if tb.tb_frame.f_code.co_name == "f_chunk0":
            lines.append(tb.tb_lineno)
        tb = tb.tb_next
    assert lines == [10]


def _own_cache_dir() -> str:
    """Run on a worker: give it a kernel cache of its own (as on a machine of its own)."""
    import os
    import tempfile

    os.environ["FUSEJIT_CACHE_DIR"] = tempfile.mkdtemp(prefix="fusejit-worker-cache-")
    return os.environ["FUSEJIT_CACHE_DIR"]


def _hide_compiler() -> tuple:
    """Run on a worker: no C compiler and an empty kernel cache (a machine of its own)."""
    import os
    import tempfile

    old = (os.environ.get("FUSEJIT_CC"), os.environ.get("FUSEJIT_CACHE_DIR"))
    os.environ["FUSEJIT_CC"] = "/nonexistent/cc"
    os.environ["FUSEJIT_CACHE_DIR"] = tempfile.mkdtemp(prefix="fusejit-no-cc-")
    return old


def _restore_compiler(old: tuple) -> None:
    import os

    for name, value in zip(("FUSEJIT_CC", "FUSEJIT_CACHE_DIR"), old):
        if value is None:
            os.environ.pop(name, None)
        else:
            os.environ[name] = value


async def _exit_now() -> None:
    """Run on a worker: the process dies at once (as a machine that goes away)."""
    import os

    os._exit(1)


def _workers(client) -> list:
    """The workers' addresses, asked of the scheduler. (Not scheduler_info()["workers"]: the
    client's background refresh asks for no workers and can overwrite that answer with an
    empty dict between the call and its return, which failed a CI run.)"""
    return list(client.nthreads())


def _programs_built() -> int:
    """Run on a worker: how many C programs its kernel cache did not have (and it built)."""
    from fusejit import config
    from fusejit.kernels_cache import stats

    return stats.read(config.current().cache_dir).by_kind[("c-program", "miss")]


@pytest.fixture(scope="module")
def client():
    distributed = pytest.importorskip("distributed")
    import shutil
    import sys

    import cloudpickle

    cloudpickle.register_pickle_by_value(sys.modules[__name__])  # workers run our helpers
    cluster = distributed.LocalCluster(n_workers=2, processes=True, threads_per_worker=1,
                                       dashboard_address=None, silence_logs=40)
    c = distributed.Client(cluster)
    dirs = c.run(_own_cache_dir)
    try:
        yield c
    finally:
        c.close()
        cluster.close()
        cloudpickle.unregister_pickle_by_value(sys.modules[__name__])
        for d in dirs.values():
            shutil.rmtree(d, ignore_errors=True)


def test_local_cluster_two_processes(client):
    x = rand((4000, 64), (500, 64))
    g = np.linspace(0.5, 1.5, 64, dtype=np.float32)
    ln = fusejit.jit(layernorm)
    y = ln(x, g, np.float32(0.0))
    total = fusejit.jit(lambda x: (x * x).sum(axis=0))(x)
    got_y, got_t = client.compute([y, total], sync=True)
    xn = x.compute(scheduler="sync")
    assert_same(got_y, layernorm(xn, g, np.float32(0.0)), atol=1e-6)
    assert_same(got_t, (xn * xn).sum(axis=0), rtol=1e-5)
    stats = client.run(dask_stage.worker_stats)  # per worker: programs compiled per stage
    assert stats and all(built == sigs for per in stats.values() for built, sigs in per.values())
    got_y2 = client.compute(ln(x, g, np.float32(0.0)), sync=True)
    assert_same(got_y2, got_y)
    assert client.run(dask_stage.worker_stats) == stats  # nothing compiled again


def test_workers_build_from_their_own_kernel_cache(client, monkeypatch):
    monkeypatch.setenv("FUSEJIT_DASK_SHIP", "0")  # each worker builds (no library shipped)
    x = rand((2000, 16), (500, 16), np.float64)

    def fn(x):
        return np.tanh(x) * 3 - x.max(axis=1, keepdims=True)

    for addr in _workers(client):  # each worker builds every program once
        client.compute(fusejit.jit(fn)(x), workers=[addr], sync=True)
    built = client.run(_programs_built)
    assert all(built.values())
    got = client.compute(fusejit.jit(fn)(x), sync=True)  # new stages: built from each disk
    assert client.run(_programs_built) == built
    assert_same(got, fn(x.compute()))


def test_workers_without_a_compiler_run_libraries_shipped_by_the_client(client):
    old = client.run(_hide_compiler)
    try:
        x = rand((3000, 64), (700, 64), np.float64)  # 700 x4, 200: two chunk shapes
        g = np.linspace(0.5, 1.5, 64)
        f = fusejit.jit(layernorm)
        y, total = client.compute([f(x, g, 0.5), fusejit.jit(lambda x: (x * x).sum())(x)],
                                  sync=True)
        xn = x.compute(scheduler="sync")
        assert_same(y, layernorm(xn, g, 0.5), atol=1e-12)
        assert_same(total, np.asarray((xn * xn).sum()), rtol=1e-12)
        # a stage built on a worker would have raised CompilerNotFoundError: every chunk ran
        # a library the client built (the combine of partial sums runs NumPy's there)
        assert sum(client.run(dask_ship.loaded).values()) >= 2
    finally:
        for addr, value in old.items():
            client.run(_restore_compiler, value, workers=[addr])


def test_killed_worker_during_compute(client):
    """A worker dies while the compiled stages run: Dask reruns its tasks elsewhere (or on
    the restarted worker, which compiles again) and the result is still NumPy's."""
    x = rand((4000, 128), (250, 128), np.float64)

    def fn(x):
        return np.sqrt(np.abs(np.sin(x) * np.cos(x))) + x.mean(axis=1, keepdims=True)

    future = client.compute(fusejit.jit(fn)(x))
    victim = _workers(client)[0]
    client.run(_exit_now, workers=[victim], wait=False)
    assert not future.done()  # it died during compute()
    assert_same(future.result(timeout=120), fn(x.compute()))
    assert victim not in _workers(client)


def test_profiler_collects_from_workers(client, monkeypatch):
    from fusejit.runtime import profiler

    monkeypatch.setenv("FUSEJIT_PROFILE", "1")  # the client builds and ships instrumented stages
    x = rand((1000,), 100)  # 10 chunks over 2 workers
    f = fusejit.jit(lambda x: x * 2.0 + 0.4375)  # a constant of its own: a library of its own
    try:
        y = client.compute(f(x)).result()
        assert_same(y, x.compute() * 2.0 + 0.4375)
        got = fusejit.profile_workers(client)
        rows = [r for r in got.merged.functions if r.signature == "float32[100]" and r.calls]
        assert len(rows) == 1 and rows[0].calls == 10 and rows[0].total_s > 0
        per = [r for p in got.workers.values() for r in p.functions
               if r.function == rows[0].function]
        assert sum(r.calls for r in per) == 10 and got.workers  # however Dask spread them
        assert sum(k.calls for k in got.merged.kernels if k.function == rows[0].function) == 10
        text = str(got)
        assert "Per Dask worker" in text and rows[0].function in text
    finally:
        profiler.reset()


def test_profile_cli_reports_worker_threads_once(tmp_path):
    import subprocess
    import sys

    script = tmp_path / "daskjob.py"
    script.write_text(
        "import numpy as np, dask.array as da, fusejit\n"
        "from distributed import Client, LocalCluster\n"
        "if __name__ == '__main__':\n"
        "    client = Client(LocalCluster(n_workers=1, processes=False, dashboard_address=None))\n"
        "    x = da.from_array(np.arange(1000, dtype=np.float32), chunks=100)\n"
        "    f = fusejit.jit(lambda x: x * 3.0 + 0.8125)\n"
        "    print(float(f(x).sum().compute()))\n")
    out = subprocess.run([sys.executable, "-m", "fusejit", "profile", str(script)],
                         capture_output=True, text=True, check=True).stdout
    assert "1499312.5" in out  # 3 * 499500 + 812.5
    row = next(line for line in out.splitlines() if "float32[100]" in line)
    assert " 10 " in row  # ten chunks, each counted once (worker threads are this process)
    assert "(daskjob.py:6)" in row  # the stage is named after the user's function
