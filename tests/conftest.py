"""Shared test configuration: a private kernel cache, hypothesis profiles, and `assert_same`.

`assert_same(got, expected)` is the suite's definition of "the compiled function returned what
NumPy returned": the same Python structure, the same kind of leaf (NumPy scalar vs ndarray vs
Python scalar, checked by exact type), dtype, shape, and values (integers and bools exactly;
floats within a relative tolerance per dtype, with NaN positions and the signs of zeros and
infinities matching).
"""

from __future__ import annotations

import os
import re
import shutil
import sys
import tempfile
from typing import Any

# The kernel cache must be private to the test session, and it must be set before fusejit
# compiles anything (the store is created lazily from FUSEJIT_CACHE_DIR).
_CACHE_DIR = tempfile.mkdtemp(prefix="fusejit-test-cache-")
os.environ["FUSEJIT_CACHE_DIR"] = _CACHE_DIR

import numpy as np  # noqa: E402
import pytest  # noqa: E402
from hypothesis import HealthCheck, settings  # noqa: E402

from fusejit.errors import UnsupportedError  # noqa: E402

sys.path.insert(0, os.path.dirname(__file__))
import quickset  # noqa: E402

# Every hypothesis example usually costs one C compile (0.1-0.3 s), so the CI profile keeps the
# example counts modest and deterministic; `dev` and `thorough` search harder.
_COMMON = dict(
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large,
                           HealthCheck.filter_too_much],
    print_blob=True,
)
# The quick set (tests/quickset.py, the README's test command) searches 0.6 of each test's
# example count, the full set (FUSEJIT_TEST_SLOW=1) all of it, and the steps of .ci/run that
# build the same code for other instruction sets 0.4 (FUSEJIT_TEST_EXAMPLES_SCALE, with the
# `ci-arch` profile): every explicit count goes through `examples()`.
_PROFILE = os.environ.get("HYPOTHESIS_PROFILE", "ci")
_EXAMPLES_SCALE = float(os.environ.get("FUSEJIT_TEST_EXAMPLES_SCALE", "")
                        or (0.6 if quickset.MODE == "0" and _PROFILE == "ci" else 1))


def examples(n: int) -> int:
    """A test's own max_examples, scaled for the quick set and the instruction-set steps."""
    return max(min(n, 5), round(n * _EXAMPLES_SCALE))


settings.register_profile("ci", max_examples=examples(30), derandomize=True, database=None,
                          **_COMMON)
settings.register_profile("dev", max_examples=60, **_COMMON)
settings.register_profile("thorough", max_examples=400, **_COMMON)
settings.register_profile("ci-arch", max_examples=20, derandomize=True, database=None,
                          **_COMMON)
settings.load_profile(_PROFILE)


@pytest.fixture(scope="session", autouse=True)
def _dispatcher_built() -> None:
    """Build fusejit's C call dispatcher before the first test (it is otherwise built in the
    background while the first programs compile, and calls made before it is ready take the
    cffi fallback path: see test_api.py::test_cold_start_path_*), so that which call path a
    test exercises does not depend on timing."""
    try:
        from fusejit.runtime.backend_c import dispatcher
    except ImportError:
        return
    dispatcher()


_FAKE_CUDA = os.environ.get("FUSEJIT_TEST_FAKE_CUDA", "")


@pytest.fixture(autouse=True)
def _fake_cuda_backend(request: Any) -> Any:
    """FUSEJIT_TEST_FAKE_CUDA=1: every test runs with FUSEJIT_BACKEND=cuda over the fake
    pycuda of cuda_fake.py (kernels run as NumPy over the loop IR), which checks the CUDA
    backend's host side (transfers, out=, Python-scalar paths, error words) on a machine
    without a GPU. FUSEJIT_TEST_FAKE_CUDA=emulate: the same, but the launches run the
    generated CUDA itself on the CPU (cuda_emu.py: g++, a host thread per GPU thread)."""
    if (_FAKE_CUDA not in ("1", "emulate")
            or request.module.__name__.startswith("test_cuda_")):
        yield  # the CUDA backend's own tests install the fake (or call nvcc) themselves
        return
    import cuda_fake

    mp = pytest.MonkeyPatch()
    try:
        cuda_fake.install(mp, emulate=_FAKE_CUDA == "emulate")
        mp.setenv("FUSEJIT_BACKEND", "cuda")
        yield
    finally:
        mp.undo()


def _cuda_run() -> bool:
    return (os.environ.get("FUSEJIT_BACKEND") == "cuda"
            or _FAKE_CUDA in ("1", "emulate"))


def on_cuda() -> bool:
    """Inside a test: does fusejit.jit compile for CUDA (FUSEJIT_BACKEND=cuda, or the fake)?
    For the few assertions whose expected structure differs by backend (the generated CUDA
    matmul takes no BLAS and writes any layout in place)."""
    return os.environ.get("FUSEJIT_BACKEND") == "cuda"


def subprocess_env(**extra: str) -> dict[str, str]:
    """os.environ (plus `extra`) for a test's Python subprocess. Under FUSEJIT_TEST_FAKE_CUDA
    it runs the C backend (the fake pycuda lives in this process only); with
    FUSEJIT_BACKEND=cuda on a GPU it runs CUDA."""
    env = dict(os.environ, **extra)
    if env.get("FUSEJIT_TEST_FAKE_CUDA") in ("1", "emulate"):
        env.pop("FUSEJIT_BACKEND", None)
    return env


_ITEM: list[Any] = []  # the running test item (c_structure marks its report)


def pytest_runtest_setup(item: Any) -> None:
    _ITEM[:] = [item]
    quickset.check_deadline()


def c_structure() -> bool:
    """Inside a test that checks values and then the C backend's structure (BLAS calls,
    epilogues, kernel counts): whether to check that structure. False on a CUDA run, where the
    values part still runs; the test is then counted in the run's summary."""
    if not on_cuda():
        return True
    if _ITEM and ("c_structure", "skipped") not in _ITEM[0].user_properties:
        _ITEM[0].user_properties.append(("c_structure", "skipped"))
    return False


def pytest_configure(config: Any) -> None:
    config.addinivalue_line("markers", "c_only: asserts the C backend's structure (BLAS "
                            "calls, kernel counts, host buffers); skipped on a CUDA run")


def pytest_collection_modifyitems(config: Any, items: list[Any]) -> None:
    """The quick set, the slow set or both (tests/quickset.py). On a CUDA run
    (FUSEJIT_BACKEND=cuda, or the fake), tests marked c_only are skipped."""
    quickset.select(config, items)
    if not _cuda_run():
        return
    skip = pytest.mark.skip(reason="c_only: asserts the C backend's structure")
    for item in items:
        if item.get_closest_marker("c_only"):
            item.add_marker(skip)


# What the CUDA backend refuses with a clear UnsupportedError (codegen/cuda.py,
# codegen/cuda_lapack.py): on a CUDA run a test that meets one is reported as skipped, counted
# by feature in the summary, instead of failing; any other error still fails.
_CUDA_REFUSALS = {"its device LAPACK kernels cover": "LAPACK calls"}


def _cuda_refusal(excinfo: Any) -> str | None:
    """The feature a CUDA run's failure names when the CUDA backend refused it, else None."""
    if excinfo is None or not _cuda_run():
        return None
    msg = str(excinfo.value)
    if not (isinstance(excinfo.value, UnsupportedError) or (
            isinstance(excinfo.value, AssertionError)  # (a test comparing exception types)
            and ("which the CUDA backend does not support yet" in msg
                 or "UnsupportedError(" in msg))):
        return None
    if "CUDA backend" not in msg:
        return None
    return next((name for key, name in _CUDA_REFUSALS.items() if key in msg), None)


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item: Any, call: Any) -> Any:
    outcome = yield
    report = outcome.get_result()
    if report.when == "call" and report.failed:
        feature = _cuda_refusal(call.excinfo)
        if feature is not None:
            report.outcome = "skipped"
            report.longrepr = (str(item.path), item.location[1] or 0,
                               f"cuda_refused: {feature}: {str(call.excinfo.value)[:200]}")


def pytest_terminal_summary(terminalreporter: Any) -> None:
    """On a CUDA run: how many tests were skipped as c_only, and how many checked values
    only (from the reports, so the counts hold under pytest-xdist too)."""
    quickset.summary(terminalreporter)
    reports = [r for rs in terminalreporter.stats.values() for r in rs
               if getattr(r, "when", None) in ("setup", "call")]
    c_only = {r.nodeid for r in reports if r.skipped and "c_only:" in str(r.longrepr)}
    parts = {r.nodeid for r in reports if ("c_structure", "skipped") in r.user_properties}
    if c_only:
        terminalreporter.write_line(f"CUDA run: {len(c_only)} test(s) marked c_only were "
                                    "skipped")
    refused: dict[str, set[str]] = {}
    for r in reports:
        m = re.search(r"cuda_refused: ([^:]+):", str(r.longrepr)) if r.skipped else None
        if m:
            refused.setdefault(m.group(1), set()).add(r.nodeid)
    if refused:
        terminalreporter.write_line(
            f"CUDA run: {sum(map(len, refused.values()))} test(s) met a feature the CUDA "
            "backend refuses with UnsupportedError (skipped): " + ", ".join(
                f"{k} {len(v)}" for k, v in sorted(refused.items())))
    if parts:
        terminalreporter.write_line(f"CUDA run: {len(parts)} test(s) checked values only, "
                                    "skipping their C-structure part (conftest.c_structure)")


def pytest_sessionfinish(session: Any, exitstatus: int) -> None:
    shutil.rmtree(_CACHE_DIR, ignore_errors=True)


# Relative tolerance per float dtype: float16 ~2 ulp, float32 ~16 ulp, float64 ~4500 ulp (a
# chain of libm calls whose implementations differ by a few ulp each, NumPy's SIMD loops vs the
# C library).
RTOL = {np.dtype(np.float16): 2e-3, np.dtype(np.float32): 2e-6, np.dtype(np.float64): 1e-12}


# The instruction set the suite compiles for (FUSEJIT_MARCH, default native): C test programs
# compiled by the tests use the same -march as the JIT, and per-ISA expectations read it.
MARCH = os.environ.get("FUSEJIT_MARCH", "").strip() or "native"
MARCH_FLAG = f"-march={MARCH}"


def target_features() -> frozenset[str]:
    """The CPU features (/proc/cpuinfo names) the code compiled for MARCH may use."""
    from fusejit.runtime.targets import target_features as features

    return features(MARCH)


def rtol_for(dtype: np.dtype) -> float:
    return RTOL.get(np.dtype(dtype), 0.0)


def match_mask(got: np.ndarray, expected: np.ndarray, rtol: float | None = None,
               atol: float = 0.0) -> np.ndarray:
    """Elementwise: does `got` match `expected` (same dtype and shape assumed)?

    Integers and bools must be equal; complex values part by part as floats. Floats: both
    NaN, or equal, or within `atol + rtol * |expected|`; an infinity only matches the same
    infinity and a zero only a zero of the same sign (a non-zero value within atol of a zero
    is accepted).
    """
    got = np.asarray(got)
    expected = np.asarray(expected)
    if expected.dtype.kind not in "fc":
        return np.asarray(got == expected)
    if expected.dtype.kind == "c":  # each part on its own, as a float of the part's dtype
        return (match_mask(got.real, expected.real, rtol, atol)
                & match_mask(got.imag, expected.imag, rtol, atol))
    if rtol is None:
        rtol = rtol_for(expected.dtype)
    g = got.astype(np.float64)
    e = expected.astype(np.float64)
    with np.errstate(all="ignore"):
        nan_g, nan_e = np.isnan(g), np.isnan(e)
        close = np.abs(g - e) <= atol + rtol * np.abs(e)
        close &= np.isfinite(g) == np.isfinite(e)
        close &= ~np.isinf(e) | (g == e)  # (|-inf - inf| <= rtol * inf held)
        ok = (g == e) | close
        zeros = (g == 0) & (e == 0)
        ok &= ~zeros | (np.signbit(g) == np.signbit(e))
        ok &= ~nan_g & ~nan_e
    return np.asarray(ok | (nan_g & nan_e))


def _describe_mismatch(got: np.ndarray, expected: np.ndarray, bad: np.ndarray) -> str:
    idx = np.argwhere(bad)
    lines = [f"{int(bad.sum())} of {bad.size} elements differ; first ones (index: got vs "
             "expected):"]
    for i in idx[:8]:
        t = tuple(int(v) for v in i)
        lines.append(f"  {t}: {got[t]!r} vs {expected[t]!r}")
    return "\n".join(lines)


def cancellation_atol(x: Any, ulps: float = 4.0) -> float:
    """An absolute tolerance for expressions like GELU's `0.5*x*(1 + tanh(u))`, where `1 + tanh`
    cancels for negative x: tanh implementations that are each within a ULP or two (NumPy's
    SIMD tanh, libm's, glibc's vector tanhf; which one runs depends on the CPU) then differ by
    a large *relative* amount, while the absolute error stays below `ulps * eps * max|x|`."""
    a = np.asarray(x)
    return float(ulps * np.finfo(a.dtype).eps * max(float(np.max(np.abs(a), initial=0)), 1.0))


def assert_same(got: Any, expected: Any, rtol: float | None = None, atol: float = 0.0,
                path: str = "result") -> None:
    """Assert that `got` is what NumPy gave (`expected`): structure, types, dtype, shape, values."""
    if isinstance(expected, (tuple, list)):
        assert type(got) is type(expected), f"{path}: {type(got)} is not {type(expected)}"
        assert len(got) == len(expected), f"{path}: length {len(got)} != {len(expected)}"
        for i, (g, e) in enumerate(zip(got, expected)):
            assert_same(g, e, rtol, atol, f"{path}[{i}]")
        return
    if isinstance(expected, dict):
        assert type(got) is dict, f"{path}: {type(got)} is not dict"
        assert list(got) == list(expected), f"{path}: keys {list(got)} != {list(expected)}"
        for k in expected:
            assert_same(got[k], expected[k], rtol, atol, f"{path}[{k!r}]")
        return
    if isinstance(expected, (np.ndarray, np.generic)):
        assert type(got) is type(expected), (
            f"{path}: got {type(got).__name__}, NumPy gives {type(expected).__name__}")
        assert got.dtype == expected.dtype, f"{path}: dtype {got.dtype} != {expected.dtype}"
        assert got.shape == expected.shape, f"{path}: shape {got.shape} != {expected.shape}"
        ok = match_mask(got, expected, rtol, atol)
        if not ok.all():
            g, e = np.atleast_1d(np.asarray(got)), np.atleast_1d(np.asarray(expected))
            raise AssertionError(f"{path} ({expected.dtype}{list(expected.shape)}): "
                                 + _describe_mismatch(g, e, ~np.atleast_1d(ok)))
        return
    if isinstance(expected, (bool, int, float, complex)):
        assert type(got) is type(expected), (
            f"{path}: got {type(got).__name__}, Python gives {type(expected).__name__}")
        if isinstance(expected, (float, complex)):
            t = np.complex128 if isinstance(expected, complex) else np.float64
            ok = match_mask(t(got), t(expected), RTOL[np.dtype("f8")] if rtol is None else rtol,
                            atol)
            assert ok, f"{path}: {got!r} != {expected!r}"
        else:
            assert got == expected, f"{path}: {got!r} != {expected!r}"
        return
    assert got == expected, f"{path}: {got!r} != {expected!r}"


def snapshot(args: Any) -> list[Any]:
    """Copies of the array arguments (with their bytes), to check later they were not modified."""
    return [(a, a.copy(), a.strides) if isinstance(a, np.ndarray) else (a, None, None)
            for a in args]


def assert_unmodified(snap: list[Any]) -> None:
    for i, (a, copy, strides) in enumerate(snap):
        if copy is not None:
            assert a.strides == strides, f"argument {i}: strides changed"
            assert a.tobytes() == copy.tobytes(), f"argument {i} was modified"


def run_both(f: Any, *args: Any) -> Any:
    """jit(f)(*args) against f(*args) for an f that modifies no argument: the same exception
    type, or the same result on two calls; the arguments unmodified either way. Returns the
    compiled function (None when NumPy raised)."""
    import fusejit

    snap = snapshot(args)
    try:
        want = f(*args)
    except Exception as e:  # noqa: BLE001 - the compiled function must raise the same type
        with pytest.raises(type(e)):
            fusejit.jit(f)(*args)
        assert_unmodified(snap)
        return None
    jf = fusejit.jit(f)
    assert_same(jf(*args), want)
    assert_unmodified(snap)
    assert_same(jf(*args), want)  # the second call runs the compiled code again
    return jf
