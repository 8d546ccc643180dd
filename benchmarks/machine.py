"""The machine a run is on: CPU model, library versions and threads, import times, and load.

This module owns the description of the environment that goes into a run's header, and the CPU
meters (from /proc/stat) that tell whether other processes were competing for the cores while a
cell was timed. It imports the peer adapters only to read their versions and thread settings.
"""

from __future__ import annotations

import os
import platform
import subprocess
import sys
import tempfile
import time
from collections.abc import Sequence

import numpy as np

if __package__:
    from . import peers
    from .report import LOAD_FLAG
else:  # run as a script: python benchmarks/bench.py
    import peers  # type: ignore[no-redef]
    from report import LOAD_FLAG  # type: ignore[no-redef]

QUIET_LOAD = LOAD_FLAG  # other processes' cores below which the machine counts as quiet
CHILD_TIMEOUT_S = 600


def cpu_info() -> tuple[str, bool]:
    """CPU model name and whether it has AVX-512F, from /proc/cpuinfo (Linux)."""
    fields: dict[str, str] = {}
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                key, _, value = line.partition(":")
                fields.setdefault(key.strip(), value.strip())
    except OSError:
        pass
    model = fields.get("model name") or platform.processor() or "unknown"
    return model, "avx512f" in fields.get("flags", "").split()


def machine_cpu_s() -> float:
    """CPU seconds the whole machine was busy or stolen (from /proc/stat); 0.0 elsewhere."""
    try:
        with open("/proc/stat") as f:
            v = [int(x) for x in f.readline().split()[1:9]]
    except (OSError, ValueError):
        return 0.0
    user, nice, system, _idle, _iowait, irq, softirq, steal = v
    return (user + nice + system + irq + softirq + steal) / os.sysconf("SC_CLK_TCK")


def own_cpu_s() -> float:
    """CPU seconds of this process (all threads) and its finished children (compilers)."""
    t = os.times()
    return t.user + t.system + t.children_user + t.children_system


class CpuMeter:
    """Cores this process (with its children) kept busy, and cores used by everything else
    (other processes and hypervisor steal), averaged from ``__init__`` to ``read``."""

    def __init__(self) -> None:
        self.cpu, self.machine, self.wall = own_cpu_s(), machine_cpu_s(), time.perf_counter()

    def read(self) -> tuple[float | None, float | None]:
        """(own cores, other cores); None for windows too short for /proc/stat's 10 ms ticks."""
        wall = time.perf_counter() - self.wall
        if wall < 0.2:
            return None, None
        own = own_cpu_s() - self.cpu
        other = max(0.0, machine_cpu_s() - self.machine - own)
        return own / wall, other / wall


def wait_quiet(max_s: float) -> float:
    """Wait (up to ``max_s``) until other processes use < QUIET_LOAD cores; seconds waited."""
    t0 = time.perf_counter()
    while time.perf_counter() - t0 < max_s:
        meter = CpuMeter()
        time.sleep(0.5)
        if (meter.read()[1] or 0.0) < QUIET_LOAD:
            break
    return time.perf_counter() - t0


IMPORT_PROBE = "import time; t = time.perf_counter(); import {}; print(time.perf_counter() - t)"


def import_time(module: str, repo_fusejit: bool) -> float | str:
    """Seconds for ``import module`` in a fresh interpreter (nothing imported before it)."""
    with tempfile.TemporaryDirectory(prefix="fusejit-bench-import-") as tmp:
        env = dict(os.environ)
        if repo_fusejit:  # not installed: a symlink named fusejit makes the repo importable
            os.symlink(peers.REPO_ROOT, os.path.join(tmp, "fusejit"))
            env["PYTHONPATH"] = os.pathsep.join(filter(None, [tmp, env.get("PYTHONPATH")]))
        try:
            proc = subprocess.run([sys.executable, "-c", IMPORT_PROBE.format(module)], cwd=tmp,
                                  env=env, capture_output=True, text=True,
                                  timeout=CHILD_TIMEOUT_S)
        except subprocess.TimeoutExpired:
            return "timed out"
    if proc.returncode:
        return ((proc.stderr.strip().splitlines() or ["failed"])[-1])
    return float(proc.stdout.split()[-1])


def import_times(peer_list: Sequence[peers.Peer]) -> dict[str, float | str]:
    out: dict[str, float | str] = {}
    for p in peer_list:
        if p.mod is not None:
            from_repo = isinstance(p, peers.FusejitPeer) and p.from_repo
            out[p.module_name] = import_time(p.module_name, from_repo)
    return out


def thread_info(peer_list: Sequence[peers.Peer]) -> str:
    loaded = {p.name: p.mod for p in peer_list if p.mod is not None}
    parts = [f"os.cpu_count()={os.cpu_count()}"]
    if "numexpr" in loaded:
        parts.append(f"numexpr {loaded['numexpr'].get_num_threads()}")
    if "numba" in loaded:
        nb = loaded["numba"]
        try:
            layer = nb.threading_layer()
        except ValueError:  # no parallel function has run yet
            layer = nb.config.THREADING_LAYER
        parts.append(f"numba {nb.get_num_threads()} ({layer}, SVML {nb.config.USING_SVML})")
    if "torch.compile" in loaded:
        parts.append(f"torch {loaded['torch.compile'].get_num_threads()}")
    if "jax" in loaded:
        parts.append(f"jax devices {loaded['jax'].devices()} (XLA's own pool)")
    return ", ".join(parts)


def versions(peer_list: Sequence[peers.Peer]) -> dict[str, str]:
    out = {"python": platform.python_version(), "numpy": np.__version__}
    try:
        import scipy

        out["scipy"] = scipy.__version__
    except ImportError:
        pass
    out.update({p.module_name: p.version() for p in peer_list if p.mod is not None})
    return out
