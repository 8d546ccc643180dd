"""`benchmarks/bench.py --backend cuda` (benchmarks/bench_cuda.py): without a GPU it exits
with status 2 and one clear line; over the fake pycuda (its device events time with the host
clock) the whole protocol runs: bandwidth and sgemm rates, every workload kind (elementwise,
rows, matmul-bound, in place, latency), the correctness check, the table and the JSON."""

from __future__ import annotations

import importlib.util
import json
import os
import subprocess
import sys
import time
import types
from typing import Any

import cuda_fake
import numpy as np
import pytest

HERE = os.path.dirname(os.path.abspath(__file__))
BENCH = os.path.join(HERE, "..", "benchmarks")
sys.path.insert(0, BENCH)

import bench_cuda  # noqa: E402
import workloads  # noqa: E402


@pytest.mark.skipif(importlib.util.find_spec("pycuda") is not None, reason="pycuda installed")
def test_clear_exit_without_a_gpu() -> None:
    proc = subprocess.run([sys.executable, os.path.join(BENCH, "bench.py"), "--backend", "cuda",
                           "--quick"], capture_output=True, text=True, timeout=120)
    assert proc.returncode == 2 and "Traceback" not in proc.stderr
    assert "bench.py --backend cuda: no usable CUDA GPU here: CUDA backend unavailable: " \
           "pycuda is not installed" in proc.stderr


def _fake_events(monkeypatch: pytest.MonkeyPatch) -> None:
    driver = sys.modules["pycuda.driver"]

    class Event:
        def record(self) -> None:
            self.t = time.perf_counter()

        def synchronize(self) -> None:
            pass

        def time_since(self, other: Any) -> float:
            return (self.t - other.t) * 1e3

    def dtod(dst: int, src: int, n: int) -> None:
        driver.memory.buf[dst:dst + n] = driver.memory.buf[src:src + n]

    driver.Event, driver.memcpy_dtod = Event, dtod
    driver.Context.synchronize = lambda: None
    auto = types.ModuleType("pycuda.autoprimaryctx")
    driver.Device(0).retain_primary_context().push()
    monkeypatch.setitem(sys.modules, "pycuda.autoprimaryctx", auto)


def test_protocol_over_fake_pycuda(monkeypatch: pytest.MonkeyPatch, tmp_path: Any,
                                   capsys: pytest.CaptureFixture[str]) -> None:
    cuda_fake.install(monkeypatch)
    _fake_events(monkeypatch)
    monkeypatch.setitem(sys.modules, "cupy", None)  # (a GPU machine has a real CuPy: n/a here)
    out = tmp_path / "cuda.json"
    only = "gelu_tanh,mlp_fwd,adagrad_inplace,dispatch"
    assert bench_cuda.main(only, 1, True, str(out), ("cupy",)) == 0
    res = json.loads(out.read_text())
    assert res["device"].startswith("Fake") and res["dtod_gbs"] > 0 and res["sgemm_tflops"] > 0
    assert "cupy" in res["peer_na"]
    rows = {r["name"]: r for r in res["workloads"]}
    assert list(rows) == only.split(",")
    for name, r in rows.items():
        assert r["fusejit_check"] == "ok", (name, r)
        assert r["us"]["fusejit"] > 0 and r["us"]["cupy"] is None
    assert rows["dispatch"]["bound_us"] is None and rows["gelu_tanh"]["bound_us"] > 0
    wl = workloads.REGISTRY["mlp_fwd"]
    host = wl.make_inputs(0, True)
    assert np.isclose(rows["mlp_fwd"]["bound_us"],
                      wl.gemm_flops(host) / (res["sgemm_tflops"] * 1e12) * 1e6)
    table = capsys.readouterr().out
    assert "| workload | bound µs | fusejit | cupy | fusejit / bound | check |" in table
    assert "device: Fake (sm_90)" in table
    ns = types.SimpleNamespace(**vars(workloads.NUMPY_NS), compile=lambda f: f)
    t = bench_cuda.time_peer(wl, (ns, np.asarray, lambda: None, np.asarray), host, 1, 1e-4)
    assert t > 0


def test_host_time_over_null_driver(monkeypatch: pytest.MonkeyPatch) -> None:
    """benchmarks/bench_cuda_host.py --fake: every case and argument kind runs over the null
    pycuda, which counts the driver calls a call makes (GPUArray arguments: no pointer
    query, no transfer; NumPy arguments: the packed inputs in, the outputs out)."""
    import bench_cuda_host

    null = bench_cuda_host.NullDriver()
    null.install(monkeypatch.setattr, monkeypatch.setitem)
    res = bench_cuda_host.run(True, 1, 5, null)
    rows = {(r["case"], r["args"]): r for r in res["rows"]}
    assert set(rows) == {(c[0], k) for c in bench_cuda_host.CASES for k in ("NumPy", "GPUArray")}
    assert all(r["us"] > 0 and r["host_us"] < r["us"] for r in rows.values())
    # get_current (fusejit's context is current: no push/pop), launch; + htod and dtoh for
    # NumPy; the changed scalar: no htod (a kernel parameter, by value)
    assert rows[("x*y+1", "GPUArray")]["driver_calls"] == 2
    assert rows[("x*y+1", "NumPy")]["driver_calls"] == 4
    assert rows[("a*x+y (a float)", "GPUArray")]["driver_calls"] == 2
    assert "| x*y+z | GPUArray |" in bench_cuda_host.render(res)
