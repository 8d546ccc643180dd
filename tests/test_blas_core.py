"""runtime/blas_core.py: when fusejit names OpenBLAS's AVX-512 kernels for SciPy's BLAS, that
it leaves the user's OPENBLAS_CORETYPE and the environment as they were, and what it reports."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest

from fusejit import config
from fusejit.runtime import blas_core, targets

AVX2 = frozenset(targets.TARGETS["x86-64-v3"][1])
AVX512 = AVX2 | frozenset(blas_core.AVX512)


def test_decide_names_avx512_only_where_openblas_would_not() -> None:
    assert blas_core.decide(AVX512, ["Haswell"], None, "auto").core == "SkylakeX"
    assert blas_core.decide(AVX512, ["Zen", "Haswell"], None, "auto").core == "SkylakeX"
    for features, cores, user, mode in (
            (AVX2, ["Haswell"], None, "auto"),  # no AVX-512: never
            (AVX512 - {"avx512vl"}, ["Haswell"], None, "auto"),  # part of it (Xeon Phi)
            (frozenset(), ["Haswell"], None, "auto"),  # features unreadable
            (AVX512, ["Haswell", "SkylakeX"], None, "auto"),  # OpenBLAS knows the CPU
            (AVX512, ["Cooperlake"], None, "auto"),
            (AVX512, [], None, "auto"),  # no loaded OpenBLAS to ask
            (AVX512, ["Haswell"], "Haswell", "auto"),  # the user chose
            (AVX512, ["Haswell"], "", "auto"),
            (AVX512, ["Haswell"], None, "0"),  # switched off
            (AVX512, ["Haswell"], None, "off")):
        plan = blas_core.decide(features, cores, user, mode)
        assert plan.core is None, (features, cores, user, mode, plan)
    assert "set by the user" in blas_core.decide(AVX512, ["Haswell"], "Zen", "auto").why


def test_coretype_env_is_restored_and_the_users_value_kept(
        monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("OPENBLAS_CORETYPE", raising=False)
    with config.openblas_coretype("SkylakeX"):
        assert os.environ["OPENBLAS_CORETYPE"] == "SkylakeX"
    assert "OPENBLAS_CORETYPE" not in os.environ
    with pytest.raises(RuntimeError), config.openblas_coretype("SkylakeX"):
        raise RuntimeError  # restored when the import fails too
    assert "OPENBLAS_CORETYPE" not in os.environ
    with config.openblas_coretype(None):
        assert "OPENBLAS_CORETYPE" not in os.environ
    monkeypatch.setenv("OPENBLAS_CORETYPE", "Haswell")
    assert blas_core.plan().core is None  # whatever this CPU has
    with config.openblas_coretype("SkylakeX"):
        assert os.environ["OPENBLAS_CORETYPE"] == "Haswell"
    assert os.environ["OPENBLAS_CORETYPE"] == "Haswell"


def test_plan_on_a_cpu_without_avx512(monkeypatch: pytest.MonkeyPatch) -> None:
    """The CPU check faked to an AVX2 machine's (CI's): nothing is named, whatever OpenBLAS
    reports."""
    monkeypatch.delenv("OPENBLAS_CORETYPE", raising=False)
    monkeypatch.delenv("FUSEJIT_BLAS_CORETYPE", raising=False)
    monkeypatch.setattr(blas_core, "cpu_features", lambda: AVX2)
    monkeypatch.setattr(blas_core, "loaded_openblas", lambda: ["/fake/libopenblas.so"])
    monkeypatch.setattr(blas_core, "describe_library", lambda p: ("Haswell", "OpenBLAS 0"))
    assert blas_core.plan().core is None
    monkeypatch.setattr(blas_core, "cpu_features", lambda: AVX512)
    assert blas_core.plan().core == "SkylakeX"
    monkeypatch.setenv("FUSEJIT_BLAS_CORETYPE", "0")
    assert blas_core.plan().core is None


_SCRIPT = r"""
import os
import numpy as np  # NumPy's OpenBLAS loads under the OPENBLAS_CORETYPE this process had
os.environ.pop("OPENBLAS_CORETYPE")  # ... which the user never set, as far as fusejit knows
import fusejit
from fusejit.runtime import blas, blas_core

plan = blas_core.plan()
f = fusejit.jit(lambda a, b: a @ b)
a = np.arange(96 * 80, dtype=np.float32).reshape(96, 80) % 7
b = np.arange(80 * 64, dtype=np.float32).reshape(80, 64) % 5
assert np.array_equal(f(a, b), a @ b)
assert "OPENBLAS_CORETYPE" not in os.environ, os.environ["OPENBLAS_CORETYPE"]
report = blas.blas_report()
assert "SciPy's BLAS" in report and "runs SciPy's BLAS" in str(f.explain(a, b)), report
print(plan.core, report)
"""


def test_scipy_blas_loaded_with_the_plan_subprocess() -> None:
    """A fresh process whose NumPy's OpenBLAS was loaded with a non-AVX-512 core (as on a CPU
    OpenBLAS does not know): on an AVX-512 CPU fusejit loads SciPy's with SkylakeX kernels,
    elsewhere OpenBLAS chooses; either way the environment is left as it was and the
    report names the core that runs."""
    from conftest import subprocess_env

    if "avx2" not in targets.cpu_features():
        pytest.skip("needs a CPU with AVX2 (the Haswell core NumPy's OpenBLAS is given)")
    env = subprocess_env(OPENBLAS_CORETYPE="Haswell", FUSEJIT_BACKEND="c")
    env.pop("FUSEJIT_BLAS_CORETYPE", None)
    out = subprocess.run([sys.executable, "-c", _SCRIPT], env=env, capture_output=True,
                         text=True, timeout=300, cwd=os.path.dirname(__file__))
    assert out.returncode == 0, out.stderr[-3000:]
    core, report = out.stdout.strip().split(" ", 1)
    if core == "SkylakeX":
        assert "SkylakeX kernels (fusejit set" in report, report
    else:
        assert "OpenBLAS chose" in report or "not an OpenBLAS" in report, report
    if (all(f in targets.cpu_features() for f in blas_core.AVX512)
            and blas_core.loaded_openblas()):  # NumPy's BLAS is an OpenBLAS to ask
        assert core == "SkylakeX", report
    elif not all(f in targets.cpu_features() for f in blas_core.AVX512):
        assert core == "None", report


def test_report_names_the_core_and_the_fix(monkeypatch: pytest.MonkeyPatch) -> None:
    conf = "OpenBLAS 0.3.30 DYNAMIC_ARCH NO_AFFINITY Haswell MAX_THREADS=64"
    monkeypatch.setattr(blas_core, "describe_library", lambda p: ("Haswell", conf))
    monkeypatch.setattr(blas_core, "cpu_features", lambda: AVX512)
    user = blas_core.decide(AVX512, ["Haswell"], "Haswell", "auto")
    text = blas_core.report("/x/libscipy_openblas.so", user)
    assert text.startswith("SciPy's BLAS: OpenBLAS 0.3.30, Haswell kernels (OPENBLAS_CORETYPE="
                           "Haswell set by the user; this CPU has AVX-512"), text
    named = blas_core.decide(AVX512, ["Haswell"], None, "auto")
    assert "was loaded before fusejit" in blas_core.report("/x/lib.so", named)
    monkeypatch.setattr(blas_core, "cpu_features", lambda: AVX2)
    assert "AVX-512" not in blas_core.report("/x/lib.so", user)
    monkeypatch.setattr(blas_core, "describe_library", lambda p: (None, None))
    assert "not an OpenBLAS" in blas_core.report("/x/mkl.so", user)
