"""config: environment knobs; `import fusejit` leaves OpenMP's settings alone."""

from __future__ import annotations

import os

import pytest

from fusejit import config


def test_bad_integer_knob_falls_back_to_default(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("FUSEJIT_DEBUG", "lots")
    assert config.current().debug == 0
    monkeypatch.setenv("FUSEJIT_DEBUG", "3")
    assert config.current().debug == 3


def test_import_leaves_openmp_alone() -> None:
    """`import fusejit` sets no OpenMP variable and loads no OpenMP runtime: libgomp's own
    spin default stays (a GOMP_SPINCOUNT=10000 default made a one-kernel call such as
    lstm_cell 3x slower, 0.43 -> 1.3 ms; benchmarks/RESULTS.md, session 13 (lead))."""
    import subprocess
    import sys

    code = ("import os, fusejit; print(os.environ.get('GOMP_SPINCOUNT'), "
            "os.environ.get('OMP_WAIT_POLICY'), "
            "any('libgomp' in line for line in open('/proc/self/maps')))")
    env = {k: v for k, v in os.environ.items() if k not in ("GOMP_SPINCOUNT", "OMP_WAIT_POLICY")}
    out = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True,
                         timeout=120)
    assert out.returncode == 0, out.stderr[-2000:]
    assert out.stdout.strip() == "None None False", out.stdout
