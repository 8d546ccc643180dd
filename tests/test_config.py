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
