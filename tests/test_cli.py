"""End-to-end: the README's main command, `python -m fusejit demo`, run as a user would."""

from __future__ import annotations

import subprocess
import sys

from conftest import subprocess_env


def test_demo_runs_and_reports_fusion(tmp_path) -> None:
    env = subprocess_env(FUSEJIT_CACHE_DIR=str(tmp_path))
    proc = subprocess.run([sys.executable, "-m", "fusejit", "demo", "--scale", "5"],
                          capture_output=True, text=True, timeout=240, env=env)
    assert proc.returncode == 0, proc.stderr
    out = proc.stdout
    for name in ("gelu", "lstm_cell", "sinmul_bcast", "black_scholes", "softmax", "layernorm",
                 "masked_mse"):
        line = next(ln for ln in out.splitlines() if ln.startswith(name))
        assert "-> 1 kernel(s)" in line, line
        rel_err = float(line.split()[5])
        assert rel_err < 1e-6, line
    assert "lstm_cell" in out and "2 output(s)" in out


def test_unknown_command_exits_nonzero() -> None:
    proc = subprocess.run([sys.executable, "-m", "fusejit", "nonsense"], capture_output=True,
                          text=True, timeout=60)
    assert proc.returncode != 0
    assert "invalid choice" in proc.stderr
