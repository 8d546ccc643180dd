"""Damaged, edited or planted exports are refused by `fusejit.load` with an ExportError, never a
crash (issue 19, cases 1, 2 and the `load` items of 9). Every damaged case runs in a child
process: a SIGSEGV or SIGBUS there fails the test instead of killing the test run."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys

import numpy as np
import pytest

import fusejit
from fusejit import ExportError
from fusejit.errors import ExportTargetError, TargetError
from fusejit.runtime import targets

HERE = os.path.dirname(os.path.abspath(__file__))
PKG_PARENT = os.path.dirname(os.path.dirname(HERE))  # the folder that holds `fusejit`


def gelu(x):
    return 0.5 * x * (1 + np.tanh(0.7978845608 * (x + 0.044715 * x * x * x)))


def scale_in_place(x, y):
    x *= 2
    return y + 1


@pytest.fixture(scope="module")
def exported(tmp_path_factory: pytest.TempPathFactory) -> dict[str, str]:
    d = tmp_path_factory.mktemp("trust-export")
    x = np.ones(4096, np.float32)
    g = fusejit.export(gelu, x, path=str(d / "libgelu.so"))
    s = fusejit.export(scale_in_place, np.ones(64), np.ones(64), path=str(d / "libinplace.so"))
    return {"gelu": g.library, "inplace": s.library}


def copy_export(lib: str, dest) -> str:
    """The export's three files copied into `dest`; the new library path."""
    dest.mkdir(exist_ok=True)
    stem = os.path.splitext(lib)[0]
    for ext in (".so", ".json", ".h"):
        shutil.copy(stem + ext, dest / os.path.basename(stem + ext))
    return str(dest / os.path.basename(lib))


def edit_meta(lib: str, change) -> None:
    path = os.path.splitext(lib)[0] + ".json"
    with open(path) as f:
        meta = json.load(f)
    change(meta)
    with open(path, "w") as f:
        json.dump(meta, f)


def in_child(code: str) -> subprocess.CompletedProcess:
    """Run `code` (with numpy as np and fusejit imported) in a fresh interpreter."""
    env = dict(os.environ, PYTHONPATH=PKG_PARENT + os.pathsep + os.environ.get("PYTHONPATH", ""))
    return subprocess.run([sys.executable, "-c", "import numpy as np, fusejit\n" + code],
                          capture_output=True, text=True, env=env, timeout=120)


def assert_refused(proc: subprocess.CompletedProcess, message: str) -> None:
    """The child exited through an uncaught ExportError saying `message` (not a signal)."""
    assert proc.returncode == 1, f"exit {proc.returncode}: {proc.stderr[-2000:]}"
    last = proc.stderr.strip().splitlines()[-1]
    assert last.startswith("fusejit.errors.ExportError: "), proc.stderr[-2000:]
    assert message in last, last


def load_and_call(lib: str, n: int = 4096, dtype: str = "float32") -> str:
    return (f"f = fusejit.load({lib!r})\n"
            f"print(f(np.ones({n}, np.{dtype})).sum())\n")


EDITS = {
    # case 1 exactly: the shapes say 16 elements, the library computes 4096 of them
    "shape": (lambda m: (m["args"][0].update(shape=[16]), m["outputs"][0].update(shape=[16])),
              16, "float32", "args[0].shape"),
    "dtype": (lambda m: (m["args"][0].update(dtype="float64"),
                         m["outputs"][0].update(dtype="float64")), 4096, "float64",
              "args[0].dtype"),
    "strides": (lambda m: m["args"][0].update(strides=[2], contiguous=False), 4096, "float32",
                "args[0]"),
    "workspace": (lambda m: m.update(workspace_bytes=m["workspace_bytes"] + 64), 4096,
                  "float32", "workspace_bytes"),
    "outputs": (lambda m: m["outputs"][0].update(source="input", input=0), 4096, "float32",
                "outputs[0]"),
}


@pytest.mark.parametrize("edit", sorted(EDITS))
def test_edited_metadata_is_refused_not_run(exported, tmp_path, edit: str) -> None:
    change, n, dtype, where = EDITS[edit]
    lib = copy_export(exported["gelu"], tmp_path / "e")
    edit_meta(lib, change)
    assert_refused(in_child(load_and_call(lib, n, dtype)), where)


def test_edited_written_flag_is_refused(exported, tmp_path) -> None:
    lib = copy_export(exported["inplace"], tmp_path / "w")
    edit_meta(lib, lambda m: m["args"][0].update(written=False))
    assert_refused(in_child(f"fusejit.load({lib!r})"), "args[0].written")


def test_truncated_library_is_refused(exported, tmp_path) -> None:
    lib = copy_export(exported["gelu"], tmp_path / "t")
    with open(lib, "rb") as f:
        head = f.read(4000)
    with open(lib, "wb") as f:
        f.write(head)
    assert_refused(in_child(load_and_call(lib)), "does not match the digest")


def test_flipped_code_bytes_are_refused(exported, tmp_path) -> None:
    lib = copy_export(exported["gelu"], tmp_path / "f")
    data = bytearray(open(lib, "rb").read())
    for i in range(len(data) // 3, len(data) // 3 + 64):
        data[i] ^= 0xFF
    open(lib, "wb").write(bytes(data))
    assert_refused(in_child(load_and_call(lib)), "does not match the digest")


def test_library_outside_the_directory_is_refused(exported, tmp_path) -> None:
    lib = copy_export(exported["gelu"], tmp_path / "p")
    edit_meta(lib, lambda m: m.update(library="../../usr/lib/x86_64-linux-gnu/libm.so.6"))
    assert_refused(in_child(f"fusejit.load({lib!r})"), "same directory as the metadata")
    os.unlink(lib)
    os.symlink(exported["gelu"], lib)  # a link to a library elsewhere
    edit_meta(lib, lambda m: m.update(library="libgelu.so"))
    assert_refused(in_child(f"fusejit.load({lib!r})"), "not a regular file")


def test_world_writable_directory_is_refused(exported, tmp_path) -> None:
    lib = copy_export(exported["gelu"], tmp_path / "ww")
    os.chmod(tmp_path / "ww", 0o777)
    with pytest.raises(fusejit.ExportError, match="writable by group or others"):
        fusejit.load(lib)
    os.chmod(tmp_path / "ww", 0o755)
    os.chmod(lib, 0o777)
    with pytest.raises(fusejit.ExportError, match="writable by group or others"):
        fusejit.load(lib)
    os.chmod(lib, 0o755)
    assert fusejit.load(lib)(np.ones(4096, np.float32)).shape == (4096,)


@pytest.mark.skipif(os.getuid() != 0, reason="needs root to give a file to another user")
def test_foreign_owned_library_is_refused(exported, tmp_path) -> None:
    lib = copy_export(exported["gelu"], tmp_path / "fo")
    os.chown(lib, 12345, 12345)
    with pytest.raises(fusejit.ExportError, match="owned by uid 12345"):
        fusejit.load(lib)


@pytest.mark.parametrize("symbol", ["gelu_missing", "gelu(void); int x", "1abc"])
def test_edited_symbol_name_is_an_export_error(exported, tmp_path, symbol: str) -> None:
    lib = copy_export(exported["gelu"], tmp_path / "s")
    edit_meta(lib, lambda m: m["symbols"].update(call=symbol))
    with pytest.raises(fusejit.ExportError):
        fusejit.load(lib)
    edit_meta(lib, lambda m: m["symbols"].update(call="gelu", signature=symbol))
    with pytest.raises(fusejit.ExportError):
        fusejit.load(lib)


def test_untouched_export_loads_and_says_what_it_needs(exported) -> None:
    f = fusejit.load(exported["gelu"])
    x = np.linspace(-3, 3, 4096, dtype=np.float32)
    np.testing.assert_allclose(f(x), gelu(x), rtol=1e-5, atol=1e-6)
    meta = json.load(open(os.path.splitext(exported["gelu"])[0] + ".json"))
    assert len(meta["library_sha256"]) == 64
    assert "gelu_signature" in open(os.path.splitext(exported["gelu"])[0] + ".h").read()


# -- issue 16 part 4: exported libraries say what CPU they need, and check it ----------------

x86 = pytest.mark.skipif("sse2" not in targets.cpu_features(),
                         reason="x86-64 levels need an x86-64 CPU")
CC = shutil.which(os.environ.get("CC") or "cc") or shutil.which("gcc")

CPU_DRIVER = """
#include <stdio.h>
#include "lib{name}.h"
int main(void) {{
    float x[{n}], y[{n}];
    for (int i = 0; i < {n}; i++) x[i] = 0.25f * i;
    const char *missing = {name}_cpu_missing();
    printf("init %d missing %s\\n", {name}_init(), missing ? missing : "none");
    int st = {name}(x, y, NULL);
    printf("call %d %s\\n", st, {name}_strerror(st));
    return 0;
}}
"""


def run_cpu_driver(lib: str, tmp_path) -> str:
    d, name = os.path.dirname(lib), os.path.basename(lib)[3:-3]
    src, exe = tmp_path / "main.c", tmp_path / "main"
    src.write_text(CPU_DRIVER.format(name=name, n=64))
    subprocess.run([CC, str(src), "-I", d, "-L", d, f"-l{name}", f"-Wl,-rpath,{d}", "-o",
                    str(exe)], check=True)
    return subprocess.run([str(exe)], capture_output=True, text=True, check=True,
                          timeout=60).stdout


@x86
@pytest.mark.skipif(CC is None, reason="no C compiler")
def test_export_for_baseline_x86_64_runs_and_says_so(tmp_path) -> None:
    res = fusejit.export(gelu, np.ones(64, np.float32), path=str(tmp_path / "libbase.so"),
                         target="x86-64")
    meta = json.load(open(res.metadata))
    assert meta["target"] == "x86-64" and "-march=x86-64 " in meta["compiler"] + " "
    assert meta["cpu_features"] == list(targets.TARGETS["x86-64"][1])
    header = open(res.header).read()
    assert '#define BASE_TARGET "x86-64"' in header and "base_init(void)" in header
    x = np.linspace(-3, 3, 64, dtype=np.float32)
    np.testing.assert_allclose(fusejit.load(res.library)(x), gelu(x), rtol=1e-5, atol=1e-6)
    assert run_cpu_driver(res.library, tmp_path).splitlines() == [
        "init 0 missing none", "call 0 success"]


@x86
@pytest.mark.skipif(CC is None, reason="no C compiler")
def test_level_above_this_cpu_is_refused_by_load_and_by_the_library(tmp_path,
                                                                    monkeypatch) -> None:
    """x86-64-v4 plus a feature no current CPU has (AVX512-4FMAPS, Xeon Phi only) stands for
    a level above this machine's: both checks are real, only the level's list is extended."""
    feature = "avx512_4fmaps"
    assert feature not in targets.cpu_features()
    v4 = targets.TARGETS["x86-64-v4"]
    monkeypatch.setitem(targets.TARGETS, "x86-64-v4", (v4[0], v4[1] + (feature,)))
    monkeypatch.setitem(targets.CPU_SUPPORTS, feature, "avx5124fmaps")
    res = fusejit.export(gelu, np.ones(64, np.float32), path=str(tmp_path / "libhigh.so"),
                         target="x86-64-v4")
    needs = json.load(open(res.metadata))["cpu_features"]
    assert feature in needs
    # on an AVX-512 machine only `feature` is missing; on an AVX2 one, x86-64-v4's own too
    have = targets.cpu_features()
    missing = [f for f in needs if f not in have]
    assert missing[-1] == feature
    them = "it" if len(missing) == 1 else "them"
    with pytest.raises(ExportTargetError,
                       match=f"needs {', '.join(missing)}: this CPU does not have {them}"):
        fusejit.load(res.library)
    out = run_cpu_driver(res.library, tmp_path).splitlines()  # (the first one it lacks)
    assert out[0] == f"init -4 missing {missing[0]}"
    assert out[1] == f"call -4 this CPU lacks {missing[0]}, which the library was compiled " \
                     "for (target x86-64-v4)"


@x86
def test_load_names_the_missing_features_of_a_faked_cpu(exported, tmp_path,
                                                        monkeypatch) -> None:
    res = fusejit.export(gelu, np.ones(64, np.float32), path=str(tmp_path / "libv3.so"),
                         target="x86-64-v3")
    have = frozenset(targets.TARGETS["x86-64-v2"][1])  # an SSE4.2 machine
    monkeypatch.setattr(targets, "cpu_features", lambda: have)
    with pytest.raises(ExportTargetError, match="needs avx, avx2, bmi1, bmi2, f16c, fma"):
        fusejit.load(res.library)
    edited = copy_export(res.library, tmp_path / "edited")  # hiding the need does not help
    edit_meta(edited, lambda m: m.update(cpu_features=[]))
    with pytest.raises(ExportError, match="cpu_features"):
        fusejit.load(edited)


@pytest.mark.parametrize("target", ["x86-64-v9", "haswell", ""])
def test_unknown_target_is_refused_before_anything_is_written(tmp_path, target: str) -> None:
    out = tmp_path / "out"
    with pytest.raises(TargetError, match="unknown target"):
        fusejit.export(gelu, np.ones(8, np.float32), path=str(out / "libg.so"),
                       target=target or "bogus")
    assert not out.exists()
    env = dict(os.environ, PYTHONPATH=PKG_PARENT + os.pathsep + os.environ.get("PYTHONPATH", ""))
    script = tmp_path / "m.py"
    script.write_text("import numpy as np\ndef g(x):\n    return x * 2\n")
    proc = subprocess.run([sys.executable, "-m", "fusejit", "export", f"{script}:g", "--arg",
                           "float32[8]", "-o", str(out), "--target", target or "bogus"],
                          capture_output=True, text=True, env=env, timeout=120)
    assert proc.returncode == 1 and "unknown target" in proc.stderr
    assert len(proc.stderr.strip().splitlines()) == 1 and not out.exists()
