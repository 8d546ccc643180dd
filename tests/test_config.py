"""config: environment knobs and the OpenMP spin default."""

from __future__ import annotations

import os

import pytest

from fusejit import config


@pytest.mark.parametrize("preset", [None, "OMP_WAIT_POLICY", "GOMP_SPINCOUNT"])
def test_openmp_spin_default_respects_the_user(monkeypatch: pytest.MonkeyPatch,
                                               preset: str | None) -> None:
    monkeypatch.delenv("OMP_WAIT_POLICY", raising=False)
    monkeypatch.delenv("GOMP_SPINCOUNT", raising=False)
    if preset:
        monkeypatch.setenv(preset, "active" if preset == "OMP_WAIT_POLICY" else "5")
    config.apply_openmp_defaults()
    if preset is None:
        assert os.environ["GOMP_SPINCOUNT"] == config.OMP_SPIN_DEFAULT
    elif preset == "OMP_WAIT_POLICY":
        assert "GOMP_SPINCOUNT" not in os.environ
        assert os.environ["OMP_WAIT_POLICY"] == "active"
    else:
        assert os.environ["GOMP_SPINCOUNT"] == "5"


def test_bad_integer_knob_falls_back_to_default(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("FUSEJIT_DEBUG", "lots")
    assert config.current().debug == 0
    monkeypatch.setenv("FUSEJIT_DEBUG", "3")
    assert config.current().debug == 3


def test_import_sets_the_spin_default_before_openmp_loads() -> None:
    """`import fusejit` sets it (a library imported next, such as torch, may load libgomp
    before fusejit's first compiled call) and loads no OpenMP runtime itself; the user's
    OMP_WAIT_POLICY is left alone."""
    import subprocess
    import sys

    code = ("import os, fusejit; print(os.environ.get('GOMP_SPINCOUNT'), "
            "any('libgomp' in line for line in open('/proc/self/maps')))")
    for preset, want in ((None, f"{config.OMP_SPIN_DEFAULT} False"),
                         ("passive", "None False")):
        env = {k: v for k, v in os.environ.items()
               if k not in ("GOMP_SPINCOUNT", "OMP_WAIT_POLICY")}
        if preset:
            env["OMP_WAIT_POLICY"] = preset
        out = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True,
                             text=True, timeout=120)
        assert out.returncode == 0, out.stderr[-2000:]
        assert out.stdout.strip() == want, (preset, out.stdout)
