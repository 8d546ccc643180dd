"""Ahead-of-time export: C programs linked against exported libraries, `fusejit.load`, the
metadata checks and the `python -m fusejit export` command (issue 5, part 2)."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import threading

import numpy as np
import pytest
from conftest import assert_same, cancellation_atol, on_cuda

import fusejit
from fusejit import ExportError, jit


def gelu(x):
    return 0.5 * x * (1 + np.tanh(0.7978845608 * (x + 0.044715 * x * x * x)))


def lstm_cell(concat, c):
    i, j, f, o = np.split(concat, 4, axis=1)
    sig = lambda z: 1 / (1 + np.exp(-z))  # noqa: E731
    new_c = c * sig(f + 1.0) + sig(i) * np.tanh(j)
    return new_c, np.tanh(new_c) * sig(o)


def l2(x, y):
    return np.sqrt(np.sum((x - y) ** 2))


def softmax_t(x):
    """Two kernels with a temporary between them: a non-empty workspace."""
    e = np.exp(x - x.max(axis=1, keepdims=True))
    return (e / e.sum(axis=1, keepdims=True)).T * 2, x.sum()


def structured(x, n, s, w):
    y = x * 2 + n
    z = (y[:, :3] * np.array([1.0, 2.0, 3.0], np.float32)).sum() * s
    return {"y": y, "z": z, "again": y, "w": w, "tag": None, "t": (y.max(), [np.tanh(y)])}


def shift(a, n):
    return a + n


def power(a, b):
    return a ** b


CC = shutil.which(os.environ.get("CC") or "cc") or shutil.which("gcc") or shutil.which("clang")
needs_cc = pytest.mark.skipif(CC is None, reason="no C compiler")
CTYPES = {"float32": "float", "float64": "double", "int8": "int8_t", "int64": "int64_t",
          "bool": "uint8_t", "uint8": "uint8_t", "int32": "int32_t"}
RNG = np.random.default_rng(5)


def f32(*shape: int) -> np.ndarray:
    return (RNG.random(shape) * 6 - 3).astype(np.float32)


@pytest.fixture(scope="module")
def outdir(tmp_path_factory: pytest.TempPathFactory) -> str:
    return str(tmp_path_factory.mktemp("export"))


def _export(outdir: str, fn, *args, name: str, **kw) -> fusejit.runtime.aot.ExportResult:
    return fusejit.export(fn, *args, path=os.path.join(outdir, f"lib{name}.so"), **kw)


def c_driver(meta: dict, alloc: bool) -> str:
    """A C program that reads each argument from a file, calls the export, writes each out
    parameter to a file and prints the status and workspace size. Sizes come from the
    header's #defines."""
    name, macro = meta["name"], meta["name"].upper()
    lines = ["#include <stdio.h>", "#include <stdlib.h>", f'#include "lib{name}.h"', "",
             "static void *slurp(const char *path, size_t n) {",
             "    void *p = malloc(n ? n : 1); FILE *f = fopen(path, \"rb\");",
             "    if (!f || fread(p, 1, n, f) != n) { perror(path); exit(3); }",
             "    fclose(f); return p; }", "",
             "int main(int argc, char **argv) {", "    int i = 1; (void)argc;"]
    call = []
    for a in meta["args"]:
        t, up = CTYPES[a["dtype"]], a["cname"].upper()
        n = f"{macro}_{up}_SIZE * sizeof({t})"
        lines.append(f"    {t} *{a['cname']} = slurp(argv[i++], {n});")
        call.append(a["cname"])
    outs = [o for o in meta["outputs"] if o["source"] == "buffer"]
    for o in outs:
        t = CTYPES[o["dtype"]]
        lines.append(f"    {t} *{o['cname']} = malloc({macro}_{o['cname'].upper()}_SIZE * "
                     f"sizeof({t}) + 1);")
        call.append(o["cname"])
    if alloc:
        fn = meta["symbols"]["alloc"]
    else:
        lines.append(f"    void *ws = malloc({name}_workspace_size() + 1);")
        fn, call = meta["symbols"]["call"], call + ["ws"]
    lines.append(f"    int st = {fn}({', '.join(call)});")
    lines.append(f'    printf("status %d %s\\nworkspace %zu\\n", st, {name}_strerror(st), '
                 f"{name}_workspace_size());")
    for o in outs:
        t = CTYPES[o["dtype"]]
        lines += [f"    FILE *f_{o['cname']} = fopen(argv[i++], \"wb\");",
                  f"    fwrite({o['cname']}, sizeof({t}), {macro}_{o['cname'].upper()}_SIZE, "
                  f"f_{o['cname']}); fclose(f_{o['cname']});"]
    for a in meta["args"]:  # arguments written in place, after the out parameters
        if a["written"]:
            t, c = CTYPES[a["dtype"]], a["cname"]
            lines += [f"    FILE *w_{c} = fopen(argv[i++], \"wb\");",
                      f"    fwrite({c}, sizeof({t}), {macro}_{c.upper()}_SIZE, w_{c}); "
                      f"fclose(w_{c});"]
    lines += ["    return st == 0 ? 0 : 1;", "}"]
    return "\n".join(lines) + "\n"


def run_c(result, args: list, tmp: str, alloc: bool = False) -> tuple[list, str]:
    """Compile a C driver against the export and run it on `args`; its outputs and stdout."""
    meta = json.load(open(result.metadata))
    d = os.path.dirname(result.library)
    src, exe = os.path.join(tmp, f"main_{meta['name']}.c"), os.path.join(tmp, meta["name"])
    with open(src, "w") as f:
        f.write(c_driver(meta, alloc))
    subprocess.run([CC, "-std=c99", "-Wall", "-Werror", src, "-I", d, "-L", d,
                    f"-l{meta['name']}", f"-Wl,-rpath,{d}", "-o", exe], check=True)
    files = []
    for k, a in enumerate(args):
        files.append(os.path.join(tmp, f"in{k}.bin"))
        np.asarray(a).tofile(files[-1])
    outs = [o for o in meta["outputs"] if o["source"] == "buffer"]
    written = [a for a in meta["args"] if a["written"]]
    outs += written  # their final contents come back after the out parameters
    out_files = [os.path.join(tmp, f"out{k}.bin") for k in range(len(outs))]
    env = dict(os.environ, OMP_NUM_THREADS="2")
    proc = subprocess.run([exe, *files, *out_files], capture_output=True, text=True, env=env,
                          timeout=120)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    got = [np.fromfile(p, o["dtype"]).reshape(o["shape"]) for p, o in zip(out_files, outs)]
    return got, proc.stdout


@needs_cc
@pytest.mark.parametrize("alloc", [False, True])
def test_c_program_gelu_matches_numpy(outdir: str, tmp_path, alloc: bool) -> None:
    x = f32(4099)
    res = _export(outdir, gelu, x, name="gelu")
    (got,), out = run_c(res, [x], str(tmp_path), alloc)
    assert "status 0 success" in out
    assert_same(got, gelu(x), atol=cancellation_atol(x))


@needs_cc
def test_c_program_two_outputs_and_reduction(outdir: str, tmp_path) -> None:
    a, c = f32(16, 128), f32(16, 32)
    res = _export(outdir, lstm_cell, a, c, name="lstm")
    got, _ = run_c(res, [a, c], str(tmp_path))
    assert_same(tuple(got), lstm_cell(a, c), atol=2e-6)
    x, y = RNG.random(10000), RNG.random(10000)
    res = _export(outdir, l2, x, y, name="l2")
    (got,), _ = run_c(res, [x, y], str(tmp_path), alloc=True)
    assert got.shape == () and np.isclose(got[()], l2(x, y), rtol=1e-12)


@needs_cc
def test_c_program_workspace_matches_plan(outdir: str, tmp_path) -> None:
    x = f32(64, 48)
    res = _export(outdir, softmax_t, x, name="softmax_t")
    planned = jit(softmax_t).lower_for(x).program.arena_bytes
    assert planned > 0 and res.spec.workspace_bytes == planned
    (t, s), out = run_c(res, [x], str(tmp_path))
    assert f"workspace {planned}" in out
    ref_t, ref_s = softmax_t(x)
    assert_same(t, ref_t)
    assert np.isclose(s[()], ref_s, rtol=1e-5)
    assert fusejit.load(res.library).workspace_size == planned
    header = open(res.header).read()
    assert f"#define SOFTMAX_T_WORKSPACE_SIZE {planned}" in header


@needs_cc
def test_c_program_reports_numpy_error(outdir: str, tmp_path) -> None:
    a = np.arange(6, dtype=np.int64)
    res = _export(outdir, power, a, a, name="power")
    meta = json.load(open(res.metadata))
    src, exe = str(tmp_path / "m.c"), str(tmp_path / "m")
    with open(src, "w") as f:
        f.write(c_driver(meta, alloc=True))
    d = os.path.dirname(res.library)
    subprocess.run([CC, src, "-I", d, "-L", d, "-lpower", f"-Wl,-rpath,{d}", "-o", exe],
                   check=True)
    a.tofile(tmp_path / "a.bin")
    (a - 3).tofile(tmp_path / "b.bin")
    proc = subprocess.run([exe, tmp_path / "a.bin", tmp_path / "b.bin", tmp_path / "o.bin"],
                          capture_output=True, text=True, timeout=60)
    assert proc.returncode == 1
    assert "status 1 ValueError: Integers to negative integer powers" in proc.stdout
    with pytest.raises(ValueError, match="negative integer powers"):
        fusejit.load(res.library)(a, a - 3)


@pytest.mark.skipif(not (shutil.which("nm") and shutil.which("ldd")), reason="needs nm, ldd")
def test_library_exports_only_its_api_and_needs_no_python(outdir: str) -> None:
    res = _export(outdir, lstm_cell, f32(4, 16), f32(4, 4), name="lstm_api")
    nm = subprocess.run(["nm", "-D", "--defined-only", res.library], capture_output=True,
                        text=True, check=True).stdout
    defined = {ln.split()[-1] for ln in nm.splitlines() if ln.strip()}
    defined -= {"_init", "_fini", "_edata", "_end", "__bss_start"}
    assert defined == {"lstm_api", "lstm_api_alloc", "lstm_api_workspace_size",
                       "lstm_api_strerror", "lstm_api_abi", "lstm_api_signature",
                       "lstm_api_init", "lstm_api_cpu_missing"}
    undefined = subprocess.run(["nm", "-D", "--undefined-only", res.library],
                               capture_output=True, text=True, check=True).stdout
    assert "Py" not in undefined and "fusejit" not in undefined
    ldd = subprocess.run(["ldd", res.library], capture_output=True, text=True).stdout
    allowed = ("libc.", "libm.", "libgomp", "libmvec", "ld-linux", "linux-vdso", "libgcc_s",
               "libpthread", "libdl", "librt")
    for line in ldd.splitlines():
        lib = os.path.basename(line.split()[0])
        assert lib.startswith(allowed), f"unexpected dependency {line.strip()}"


def test_header_states_the_specialisation(outdir: str) -> None:
    res = _export(outdir, structured, f32(6, 5), 3, np.float32(2), np.arange(4, dtype=np.int8),
                  name="structured")
    h = open(res.header).read()
    for text in ("#define STRUCTURED_X_SHAPE {6, 5}", '#define STRUCTURED_X_DTYPE "float32"',
                 "#define STRUCTURED_X_STRIDES {5, 1}", "BLAS: none",
                 "int structured(const float *x, const int64_t *n, const float *s, "
                 "const int8_t *w, float *out0, float *out1, float *out4, float *out5, "
                 "void *workspace);",
                 "result['again'] -> the same array as result['y']",
                 "result['w'] -> argument w returned unchanged",
                 "result['t'][1][0] -> out5: float32[6, 5], C-contiguous",
                 "result['z'] -> out1: float32 scalar", "size_t structured_workspace_size(void);",
                 "#define STRUCTURED_ERR_INT_NEG_POWER 1", "structured_strerror(int status)"):
        assert text in h, text


def test_load_round_trips(outdir: str) -> None:
    x = f32(3000)
    f = fusejit.load(_export(outdir, gelu, x, name="gelu_rt").library)
    # the export is C; against the CUDA jit, NumPy's tolerance (GELU's tanh cancels)
    assert_same(f(x), jit(gelu)(x), atol=cancellation_atol(x) if on_cuda() else 0.0)
    assert_same(f(x=x), gelu(x), atol=cancellation_atol(x))
    a, c = f32(8, 64), f32(8, 16)
    g = fusejit.load(_export(outdir, lstm_cell, a, c, name="lstm_rt").library)
    assert_same(g(a, c), lstm_cell(a, c), atol=2e-6)
    x, w = f32(12, 10)[::2, ::-1], np.arange(4, dtype=np.int8)
    args = (x, 5, np.float32(0.5), w)
    s = fusejit.load(_export(outdir, structured, *args, name="structured_rt").library)
    got = s(*args)
    assert_same(got, structured(*args))
    assert got["w"] is w and got["again"] is got["y"] and got["tag"] is None
    assert_same(s(x, -2, np.float32(3), w), structured(x, -2, np.float32(3), w))


def test_static_arguments_are_fixed_at_export(outdir: str) -> None:
    @jit(static_argnames="axis")
    def total(x, axis):
        return x.sum(axis=axis)

    x = f32(5, 7)
    res = _export(outdir, total, x, 1, name="total")
    assert "axis = 1" in open(res.header).read()
    f = fusejit.load(res.library)
    assert_same(f(x), x.sum(axis=1))
    with pytest.raises(TypeError, match="fixed at export"):
        f(x, axis=0)


def test_alloc_export_and_scalar_arguments(outdir: str) -> None:
    a = np.arange(-4, 5, dtype=np.int8)
    res = _export(outdir, shift, a, 3, name="shift", workspace="alloc")
    h = open(res.header).read()
    assert "int shift(const int8_t *a, const int64_t *n, int8_t *out0);" in h
    assert "[-128, 127]" in h and "shift_alloc" not in h
    f = fusejit.load(res.library)
    assert_same(f(a, 7), a + 7)
    with pytest.raises(OverflowError, match="500"):
        f(a, 500)
    import cffi  # the C-side range check, bypassing load's own

    ffi = cffi.FFI()
    ffi.cdef("int shift(const int8_t *, const int64_t *, int8_t *); "
             "const char *shift_strerror(int);")
    lib = ffi.dlopen(res.library)
    out = np.empty_like(a)
    st = lib.shift(ffi.from_buffer("int8_t[]", a), ffi.new("int64_t *", 500),
                   ffi.from_buffer("int8_t[]", out))
    assert st == -3 and b"outside the range" in ffi.string(lib.shift_strerror(st))
    with pytest.raises(ValueError, match="offers alloc"):
        fusejit.load(res.library, workspace="caller")


def test_load_rejects_mismatched_arguments(outdir: str) -> None:
    a, c = f32(8, 64), f32(8, 16)
    g = fusejit.load(_export(outdir, lstm_cell, a, c, name="lstm_bad").library)
    with pytest.raises(ValueError, match=r"argument 'c': expected shape \(8, 16\), got \(8, 8\)"):
        g(a, c[:, :8])
    with pytest.raises(TypeError, match="argument 'concat': expected dtype float32, got float64"):
        g(a.astype(np.float64), c)
    with pytest.raises(ValueError, match="argument 'c': expected a C-contiguous.*"
                                         "ascontiguousarray"):
        g(a, np.asfortranarray(c))
    with pytest.raises(TypeError, match="argument 'c': expected a float32.*got list"):
        g(a, c.tolist())
    with pytest.raises(TypeError, match="missing argument"):
        g(a)
    with pytest.raises(TypeError, match="takes 2 argument"):
        g(a, c, c)
    s = fusejit.load(_export(outdir, shift, np.arange(3.0), 2, name="shift_f").library)
    with pytest.raises(TypeError, match="argument 'n': expected a Python int, got float"):
        s(np.arange(3.0), 2.5)


def test_metadata_that_does_not_match_is_refused(outdir: str, tmp_path) -> None:
    r1 = _export(str(tmp_path), gelu, f32(16), name="swap")
    saved = tmp_path / "saved"
    saved.mkdir()
    shutil.copy(r1.library, saved / "libswap.so")
    r2 = _export(str(tmp_path), gelu, f32(32), name="swap")
    shutil.copy(saved / "libswap.so", r2.library)  # a stale library beside new metadata
    with pytest.raises(ExportError, match="does not match"):
        fusejit.load(r2.library)
    with pytest.raises(ExportError, match="no export metadata"):
        fusejit.load(str(tmp_path / "libnothing.so"))
    meta = json.load(open(r2.metadata))
    meta["format_version"] = 99
    json.dump(meta, open(r2.metadata, "w"))
    with pytest.raises(ExportError, match="format version 99"):
        fusejit.load(r2.library)
    meta["format_version"] = 2
    json.dump(meta, open(r2.metadata, "w"))
    os.unlink(r2.library)
    with pytest.raises(ExportError, match="does not exist"):
        fusejit.load(r2.metadata)
    open(r2.metadata, "w").write("{not json")
    with pytest.raises(ExportError, match="cannot read"):
        fusejit.load(r2.metadata)


@pytest.mark.parametrize("mode", [None, "alloc"])
def test_concurrent_calls_from_threads(outdir: str, mode: str | None) -> None:
    x0 = f32(96, 80)
    res = _export(outdir, softmax_t, x0, name="softmax_mt")
    assert res.spec.workspace_bytes > 0
    f = fusejit.load(res.library, workspace=mode)
    inputs = [f32(96, 80) for _ in range(8)]
    expected = [softmax_t(x) for x in inputs]
    errors: list[BaseException] = []

    def work(k: int) -> None:
        try:
            for _ in range(25):
                t, s = f(inputs[k])
                assert_same(t, expected[k][0])
                assert np.isclose(s, expected[k][1], rtol=1e-5)
        except BaseException as e:  # noqa: BLE001 - reported below
            errors.append(e)

    threads = [threading.Thread(target=work, args=(k,)) for k in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors, errors[0]


def _cli(*args: str, cwd: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "fusejit", "export", *args],
                          capture_output=True, text=True, cwd=cwd, timeout=240,
                          env=dict(os.environ, PYTHONPATH=os.pathsep.join(
                              [os.path.dirname(os.path.dirname(fusejit.__file__)),
                               os.environ.get("PYTHONPATH", "")])))


def test_cli_export(tmp_path) -> None:
    (tmp_path / "models.py").write_text(
        "import numpy as np\n\n\ndef scaled_gelu(x, s):\n"
        "    return s * (0.5 * x * (1 + np.tanh(0.7978845608 * (x + 0.044715 * x * x * x))))\n")
    proc = _cli("models:scaled_gelu", "--arg", "float32[64,32]", "--arg", "float32", "-o",
                "out", cwd=str(tmp_path))
    assert proc.returncode == 0, proc.stderr
    assert "int scaled_gelu(const float *x, const float *s, float *out0, void *workspace);" \
        in proc.stdout
    for ext in ("so", "h", "json"):
        assert (tmp_path / "out" / f"libscaled_gelu.{ext}").exists()
    f = fusejit.load(str(tmp_path / "out" / "libscaled_gelu.so"))
    x = f32(64, 32)
    assert_same(f(x, np.float32(2)), np.float32(2) * gelu(x), atol=2 * cancellation_atol(x))
    proc = _cli("./models.py:scaled_gelu", "--arg", "float64[8]", "--arg", "float", "--name",
                "sg64", "--workspace", "alloc", "-o", "out2", cwd=str(tmp_path))
    assert proc.returncode == 0, proc.stderr
    f = fusejit.load(str(tmp_path / "out2" / "libsg64.so"))
    x = RNG.random(8)
    assert_same(f(x, 3.0), 3.0 * gelu(x), atol=3 * cancellation_atol(x))


@pytest.mark.parametrize("argv, message", [
    (["models:f", "--arg", "float33[4]"], "unsupported dtype 'float33'"),
    (["models:f", "--arg", "float32[4,x]"], "dimension 'x'"),
    (["models:f", "--arg", "float32[4"], "expected DTYPE[d0,d1,...]"),
    (["models:f", "--arg", "object[2]"], "unsupported dtype 'object'"),
    (["models:f"], "missing a required argument"),
    (["models:nope", "--arg", "float32[4]"], "has no function 'nope'"),
    (["no_such_module:f", "--arg", "float32[4]"], "cannot import 'no_such_module'"),
    (["missing.py:f", "--arg", "float32[4]"], "no such file"),
    (["models", "--arg", "float32[4]"], "expected module:function"),
    (["models:broken", "--arg", "float32[4]"], "NameError"),
    (["models:branchy", "--arg", "float32[4]"], "models.py:"),
])
def test_cli_bad_input_is_one_clear_line(tmp_path, argv: list[str], message: str) -> None:
    (tmp_path / "models.py").write_text(
        "import numpy as np\n\n\ndef f(x):\n    return x + 1\n\n\n"
        "def broken(x):\n    return undefined_name * x\n\n\n"
        "def branchy(x):\n    if x.sum() > 0:\n        return x\n    return -x\n")
    proc = _cli(*argv, "-o", "out", cwd=str(tmp_path))
    assert proc.returncode != 0
    assert "Traceback" not in proc.stderr, proc.stderr
    assert message in proc.stderr, proc.stderr
    assert proc.stderr.startswith("fusejit export: ")


def test_reexport_then_load_in_the_same_process(tmp_path) -> None:
    path = str(tmp_path / "libagain.so")
    fusejit.export(gelu, f32(8), path=path)
    first = fusejit.load(path)
    fusejit.export(lstm_cell, f32(2, 8), f32(2, 2), path=path, name="again")
    second = fusejit.load(path)  # the loader must not hand back the first library
    a, c = f32(2, 8), f32(2, 2)
    assert_same(second(a, c), lstm_cell(a, c), atol=2e-6)
    x = f32(8)
    assert_same(first(x), gelu(x), atol=cancellation_atol(x))


def test_export_name_must_be_a_c_identifier(tmp_path) -> None:
    with pytest.raises(ValueError, match="not usable as a C identifier"):
        fusejit.export(gelu, f32(4), path=str(tmp_path / "libx.so"), name="int")
    with pytest.raises(ValueError, match="not usable as a C identifier"):
        fusejit.export(gelu, f32(4), path=str(tmp_path / "libx.so"), name="9lives")
    res = fusejit.export(gelu, f32(4), path=str(tmp_path) + os.sep)  # a directory
    assert res.library == os.path.join(str(tmp_path), "libgelu.so")


def test_readme_export_example(tmp_path, monkeypatch: pytest.MonkeyPatch) -> None:
    path = os.path.join(os.path.dirname(fusejit.__file__), "README.md")
    if not os.path.exists(path):
        pytest.skip("README.md is not installed with the package")
    readme = open(path).read()
    section = readme.split("## Export a compiled function", 1)[1]
    code = section.split("```python\n", 1)[1].split("```", 1)[0]
    monkeypatch.chdir(tmp_path)
    exec(compile(code, "README.md", "exec"), {})
    assert (tmp_path / "build" / "libgelu.h").exists()


def dense(x, w, b):
    return np.maximum(x @ w + b, 0)


@needs_cc
def test_c_program_with_matmul_uses_generated_loops(outdir: str, tmp_path) -> None:
    """The JIT calls SciPy's BLAS; an exported library must not need SciPy, so its matmuls
    are generated loops and the header says so."""
    x, w, b = f32(9, 33), f32(33, 7), f32(7)
    res = _export(outdir, dense, x, w, b, name="dense")
    (got,), _ = run_c(res, [x, w, b], str(tmp_path))
    assert_same(got, dense(x, w, b), rtol=1e-5, atol=1e-5)
    with open(os.path.join(outdir, "libdense.h"), encoding="utf-8") as f:
        assert "BLAS: none (generated loops only)" in f.read()
    assert_same(fusejit.load(os.path.join(outdir, "libdense.so"))(x, w, b), dense(x, w, b),
                rtol=1e-5, atol=1e-5)


def adagrad(w, g, cache, lr=0.01, eps=1e-8):
    cache += g * g
    w -= lr * g / (np.sqrt(cache) + eps)
    return np.sum(w)


@needs_cc
def test_export_of_an_in_place_update(outdir: str, tmp_path) -> None:
    """An optimiser step that writes its arguments: the C program and `load` update the
    caller's arrays exactly as NumPy does; defaults travel in the metadata."""
    w, g, cache = f32(4, 300), f32(4, 300), np.abs(f32(4, 300))
    res = _export(outdir, adagrad, w, g, cache, name="adagrad")
    header = open(res.header).read()
    assert "w: float32[4, 300], C-contiguous; WRITTEN in place" in header
    assert "float *w, const float *g, float *cache" in header
    assert "g: float32[4, 300], C-contiguous\n" in header
    ref_w, ref_c = w.copy(), cache.copy()
    ref_s = adagrad(ref_w, g, ref_c)
    (s, got_w, got_c), _ = run_c(res, [w, g, cache, 0.01, 1e-8], str(tmp_path))
    assert_same(got_w, ref_w)
    assert_same(got_c, ref_c)
    # a sum of signed values: its float32 error scales with sum |w|, not with the sum itself
    # (near 0 for some draws of the shared RNG, whose state depends on the tests run before)
    atol = 1e-6 * float(np.abs(ref_w).sum())
    assert np.isclose(s[()], ref_s, rtol=1e-5, atol=atol)
    f = fusejit.load(res.library)
    w2, c2 = w.copy(), cache.copy()
    got_s = f(w2, g, c2)  # lr and eps from the function's defaults
    assert_same(w2, ref_w)
    assert_same(c2, ref_c)
    assert np.isclose(got_s, ref_s, rtol=1e-5, atol=atol)
    before = w2.copy()
    with pytest.raises(ValueError, match="shares memory"):
        f(w2, g, w2)
    with pytest.raises(ValueError, match="read-only"):
        ro = w2.copy()
        ro.flags.writeable = False
        f(ro, g, c2)
    np.testing.assert_array_equal(w2, before)  # nothing written by the refused calls
