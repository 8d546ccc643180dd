"""Host time of one call of a compiled CUDA function (issue 18's dispatch target: <= 15 µs).

This module owns that measurement. Small elementwise functions of 2-3 arguments (16 float32
elements, so the device work is negligible) are called in a loop, and the time per call is
reported for device-resident arguments (results left on the device) and for NumPy arguments
(results copied back). Calls alternate between two sets of arguments of different values.

- On a GPU (the default), the arguments are pycuda GPUArrays, and CuPy arrays and PyTorch CUDA
  tensors where those import. The time per call is the wall time of a loop of calls between
  two device synchronisations. Launches are asynchronous and a 16-element kernel finishes
  before the next call is issued, so for device arguments this is the host's time. For NumPy
  arguments it is the round trip: copy in, launch, copy out.
- `--fake` runs without a GPU, over a null pycuda: every driver call (launch, copy,
  allocation, context push/pop, cuPointerGetAttribute) does nothing but count itself. The
  null calls' own cost (calls per call x the measured time of one null call) is reported and
  subtracted, so the figure is fusejit's Python alone. Times are this process's CPU time
  (there is no device to wait for).

    python benchmarks/bench_cuda_host.py [--fake] [--repeat 7] [--json PATH] [--profile]

`--profile` adds where the time of the first function's calls with device arguments goes
(cProfile, the functions that take the most time themselves).
"""

from __future__ import annotations

import argparse
import json
import operator
import sys
import time
import types
from collections.abc import Callable
from typing import Any

import numpy as np

N = 16  # elements per argument


def mul_add(x, y):  # the bench's `dispatch` workload
    return x * y + 1


def fma3(x, y, z):
    return x * y + z


def axpy(a, x, y):  # a Python float and two arrays
    return a * x + y


def five_two(s, k, t, r, v):  # black_scholes' arguments: five arrays in, two out
    return s * k + t, r * v


CASES: list[tuple[str, Callable[..., Any], tuple[str, ...]]] = [
    ("x*y+1", mul_add, ("a", "a")),
    ("x*y+z", fma3, ("a", "a", "a")),
    ("a*x+y (a float)", axpy, ("s", "a", "a")),
    ("5 in, 2 out", five_two, ("a", "a", "a", "a", "a")),
]


class NullDriver:
    """A pycuda whose driver calls do nothing but count (`calls`)."""

    def __init__(self) -> None:
        self.calls = 0
        self.top = 1 << 20
        drv = self

        def counted(fn: Callable[..., Any]) -> Callable[..., Any]:
            def call(*args: Any) -> Any:
                drv.calls += 1
                return fn(*args)
            return call

        def alloc(n: int) -> int:
            addr, drv.top = drv.top, drv.top + (int(n) + 255) // 256 * 256
            return addr

        stack: list[Any] = []
        self.counted, self.stack = counted, stack

        class Function:
            def prepare(self, fmt: str) -> Function:
                self.arg_format, self.texrefs = fmt, []  # as pycuda's prepare sets them
                return self

            prepared_call = staticmethod(counted(lambda grid, block, *args: None))
            _launch_kernel = staticmethod(counted(lambda grid, block, buf, shared, stream:
                                                  None))

        class Allocation:
            """pycuda.driver.DeviceAllocation: int() is the address."""

            def __init__(self, addr: int) -> None:
                self.addr = addr

            def __int__(self) -> int:
                return self.addr

        class GPUArray:
            def __init__(self, shape: Any, dtype: Any) -> None:
                drv.calls += 1  # cuMemAlloc
                self.shape = tuple(shape) if isinstance(shape, (tuple, list)) else (shape,)
                self.dtype = np.dtype(dtype)
                self.size = int(np.prod(self.shape))
                step, strides = self.dtype.itemsize, []
                for n in reversed(self.shape):
                    strides.append(step)
                    step *= max(n, 1)
                self.strides = tuple(reversed(strides))
                self.gpudata = Allocation(alloc(self.size * self.dtype.itemsize))

            @property
            def ptr(self) -> int:
                return int(self.gpudata)

            @property
            def __cuda_array_interface__(self) -> dict[str, Any]:  # as pycuda builds it
                return {"shape": self.shape, "strides": self.strides, "data": (self.ptr, False),
                        "typestr": self.dtype.str, "version": 3}

        ctx = types.SimpleNamespace(push=counted(lambda: stack.append(ctx)))
        dev = types.SimpleNamespace(retain_primary_context=lambda: ctx, name=lambda: "Null",
                                    compute_capability=lambda: (9, 0),
                                    get_attribute=lambda attr: 132)
        device = lambda i: dev  # noqa: E731
        device.count = lambda: 1  # type: ignore[attr-defined]
        self.driver = types.SimpleNamespace(
            init=lambda: None, Device=device, Error=type("Error", (Exception,), {}),
            device_attribute=types.SimpleNamespace(MULTIPROCESSOR_COUNT=0),
            Context=types.SimpleNamespace(
                pop=counted(lambda: stack.pop()), synchronize=lambda: None,
                get_current=counted(lambda: stack[-1] if stack else None)),
            mem_alloc=counted(alloc), memset_d32=counted(lambda dst, v, n: None),
            module_from_buffer=lambda image: types.SimpleNamespace(
                get_function=lambda name: Function()),
            memcpy_htod=counted(lambda dst, src: None),
            memcpy_dtoh=counted(lambda dst, src: dst.fill(0)))  # (the error word: 0)
        self.gpuarray = types.SimpleNamespace(GPUArray=GPUArray, empty=GPUArray,
                                              to_gpu=lambda a: GPUArray(a.shape, a.dtype))

    def install(self, setattr: Callable[[Any, str, Any], None] = setattr,
                setitem: Callable[[Any, str, Any], None] = operator.setitem) -> None:
        """Make this the pycuda fusejit imports, with a stand-in nvcc (for this process, or
        through a test's monkeypatch.setattr / setitem)."""
        import importlib.machinery

        from fusejit.runtime import backend_cuda, cuda_blas, cuda_interop

        pkg = types.ModuleType("pycuda")
        pkg.__spec__ = importlib.machinery.ModuleSpec("pycuda", None)
        pkg.driver, pkg.gpuarray = self.driver, self.gpuarray  # type: ignore[attr-defined]
        for name, mod in (("pycuda", pkg), ("pycuda.driver", self.driver),
                          ("pycuda.gpuarray", self.gpuarray)):
            setitem(sys.modules, name, mod)
        setattr(backend_cuda, "find_nvcc", lambda: backend_cuda.Nvcc("nvcc", (13, 0), "", (90,)))
        setattr(backend_cuda, "compile_cubin", lambda source, arch: b"null")
        setattr(cuda_interop, "pointer_device", self.counted(lambda ptr: 0))
        setattr(cuda_blas, "library", lambda: "the null pycuda has no cuBLAS")

    def null_call_s(self, loops: int = 100_000) -> float:
        """Seconds one counted null driver call takes: the mean of a no-op call and a
        device-to-host copy's (which zeroes its destination), best of 5 each."""
        word = np.empty(4, np.uint8)
        best = [float("inf")] * 2
        for _ in range(5):
            for i, (f, args) in enumerate([(self.driver.memset_d32, (0, 0, 1)),
                                           (self.driver.memcpy_dtoh, (word, 0))]):
                t0 = time.process_time()
                for _ in range(loops):
                    f(*args)
                best[i] = min(best[i], (time.process_time() - t0) / loops)
        return sum(best) / 2


def per_call_s(call: Callable[[], Any], sync: Callable[[], None], repeat: int,
               inner: int, clock: Callable[[], float] = time.perf_counter) -> float:
    """Seconds per call: the best of `repeat` loops of `inner` calls between two syncs (the
    best, not the median: on a shared machine other processes only ever add time)."""
    for _ in range(20):
        call()
    samples = []
    for _ in range(repeat):
        sync()
        t0 = clock()
        for _ in range(inner):
            call()
        sync()
        samples.append((clock() - t0) / inner)
    return min(samples)


def device_kinds(gpuarray: Any, fake: bool) -> dict[str, tuple[Callable[[np.ndarray], Any],
                                                               Callable[[], None]]]:
    """name -> (host array -> device array, synchronise) for the device arrays at hand."""
    import pycuda.driver as cuda

    kinds = {"GPUArray": (gpuarray.to_gpu, cuda.Context.synchronize)}
    if fake:
        return kinds
    try:
        import cupy

        kinds["CuPy"] = (cupy.asarray, cupy.cuda.Device().synchronize)
    except Exception as e:  # noqa: BLE001 - not installed / no device: skipped, with why
        print(f"[host] CuPy: n/a ({type(e).__name__}: {e})", file=sys.stderr)
    try:
        import torch

        if torch.cuda.is_available():
            kinds["torch"] = (lambda a: torch.as_tensor(a, device="cuda"),
                              torch.cuda.synchronize)
    except Exception as e:  # noqa: BLE001
        print(f"[host] torch: n/a ({type(e).__name__}: {e})", file=sys.stderr)
    return kinds


def run(fake: bool, repeat: int, inner: int, null: NullDriver | None = None
        ) -> dict[str, Any]:
    """The table's rows; `fake`: over `null` (installed here when not given)."""
    if fake and null is None:
        null = NullDriver()
        null.install()
    import fusejit
    from fusejit.runtime import backend_cuda

    ok, device = backend_cuda.available()
    if not ok:
        raise SystemExit(f"bench_cuda_host: no usable CUDA GPU here: {device} (--fake runs "
                         "over a null driver)")
    import pycuda.gpuarray as gpuarray

    rng = np.random.default_rng(0)
    host = [rng.standard_normal(N).astype(np.float32) for _ in range(5)]
    rows = []
    for label, fn, kinds in CASES:
        f = fusejit.jit(fn, backend="cuda")

        def args_for(put: Callable[[np.ndarray], Any], sign: float,
                     kinds: tuple[str, ...] = kinds) -> tuple[Any, ...]:
            it = iter(host)
            return tuple(0.5 * sign if k == "s" else put(sign * next(it)) for k in kinds)

        f(*args_for(np.asarray, 1.0))  # compiles (and leaves the primary context current)
        for kind, (put, sync) in {"NumPy": (np.asarray, lambda: None),
                                  **device_kinds(gpuarray, fake)}.items():
            # two sets of arguments, alternately: host bytes change between calls, as they
            # do in use (unchanged packed inputs are not sent again)
            pair = [args_for(put, 1.0), args_for(put, -1.0)]

            def call(f: Any = f, pair: list[tuple[Any, ...]] = pair) -> Any:
                pair.reverse()
                return f(*pair[0])

            for _ in range(5):
                call()
            before = null.calls if null else 0
            for _ in range(10):
                call()  # (each result dropped at once, as in the timed loop)
            calls = (null.calls - before) / 10 if null else None
            # (no device to wait for: this process's CPU time, which other processes on a
            # shared machine disturb less than the wall clock)
            t = per_call_s(call, sync, repeat, inner, time.process_time if fake else
                           time.perf_counter)
            rows.append({"case": label, "args": kind, "us": t * 1e6, "driver_calls": calls})
    result: dict[str, Any] = {"device": device, "fake": fake, "rows": rows}
    if null is not None:
        result["null_call_us"] = null.null_call_s(max(1000, 50 * inner)) * 1e6
        for r in rows:
            r["host_us"] = r["us"] - r["driver_calls"] * result["null_call_us"]
    return result


def profile(calls: int = 5000, top: int = 18) -> str:
    """cProfile of `calls` calls of the first case with device arguments (after run())."""
    import cProfile
    import io
    import pstats

    import pycuda.gpuarray as gpuarray

    import fusejit

    label, fn, kinds = CASES[0]
    f = fusejit.jit(fn, backend="cuda")
    host = [np.ones(N, np.float32) for _ in kinds]
    f(*host)
    put, sync = device_kinds(gpuarray, True)["GPUArray"]
    args = [put(h) for h in host]
    for _ in range(20):
        f(*args)
    sync()
    prof = cProfile.Profile()
    prof.enable()
    for _ in range(calls):
        f(*args)
    sync()
    prof.disable()
    out = io.StringIO()
    pstats.Stats(prof, stream=out).sort_stats("tottime").print_stats(top)
    return f"profile of {calls} calls of {label}, GPUArray arguments:\n{out.getvalue()}"


def render(result: dict[str, Any]) -> str:
    fake = result["fake"]
    lines = [f"device: {result['device']}" + (
        f" (null driver: one driver call {result['null_call_us']:.3f} µs, subtracted)"
        if fake else ""), "",
        "| function | arguments | µs per call |" + (" driver calls | fusejit host µs |"
                                                  if fake else ""),
        "|---|---|---|" + ("---|---|" if fake else "")]
    for r in result["rows"]:
        extra = f" {r['driver_calls']:g} | {r['host_us']:.2f} |" if fake else ""
        lines.append(f"| {r['case']} | {r['args']} | {r['us']:.2f} |{extra}")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    ap.add_argument("--fake", action="store_true", help="over a null pycuda (no GPU needed)")
    ap.add_argument("--repeat", type=int, default=7, help="timed loops per cell")
    ap.add_argument("--inner", type=int, default=2000, help="calls per timed loop")
    ap.add_argument("--json", metavar="PATH", help="also write the results as JSON")
    ap.add_argument("--profile", action="store_true", help="also profile device-argument calls")
    args = ap.parse_args(argv)
    result = run(args.fake, args.repeat, args.inner)
    print(render(result))
    if args.profile:
        print(profile())
    if args.json:
        with open(args.json, "w") as f:
            json.dump(result, f, indent=1)
    return 0


if __name__ == "__main__":
    sys.exit(main())
