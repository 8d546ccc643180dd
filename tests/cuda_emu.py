"""Runs generated CUDA on the CPU, for tests on machines without a GPU: the program's source
is compiled by g++ as C++ with a shim for the CUDA constructs the code generators use, and a
launch runs every block in turn, each thread of a block as a host thread.

The shim: `__global__`/`__device__` functions are plain functions; `threadIdx`/`blockIdx` are
thread-local, `blockDim`/`gridDim` global; `__shared__` arrays are static (one block runs at a
time); `__syncthreads()` is a barrier over the block's threads; `__shfl_down_sync` and
`__shfl_sync` exchange values through a slot per thread between two barriers (so, as on a GPU,
every thread of a block must make the same calls); `atomicOr` is an atomic OR; `__half` is
`_Float16`. Device math (expf, tanhf, erff, powf...) is the host's libm, not CUDA's, so
results agree with a GPU's to the functions' accuracy, not bit for bit.

What this checks that the fake pycuda's loop-IR interpreter cannot: the CUDA text itself, its
indexing, vector paths, team reductions, split reductions, the tiled matmul and its epilogue.
"""

from __future__ import annotations

import atexit
import ctypes
import hashlib
import os
import shutil
import subprocess
import tempfile
from typing import Any

SHIM = r"""
#include <stdint.h>
#include <string.h>
#include <math.h>
#define __global__
#define __device__
#define __host__
#define __forceinline__ inline
#define __launch_bounds__(...)
#define __shared__ static
#define __restrict__
struct fj_emu_dim3 { unsigned x, y, z; };
extern thread_local fj_emu_dim3 threadIdx, blockIdx;
extern fj_emu_dim3 blockDim, gridDim;
extern "C" void fj_emu_sync(void);
extern "C" unsigned char *fj_emu_slot(unsigned t);
static inline void __syncthreads() { fj_emu_sync(); }
template <class T> static inline T __shfl_down_sync(unsigned, T v, int o, int w = 32) {
    const unsigned t = threadIdx.x;
    memcpy(fj_emu_slot(t), &v, sizeof v);
    __syncthreads();
    T r = v;
    if (t % (unsigned)w + (unsigned)o < (unsigned)w) memcpy(&r, fj_emu_slot(t + o), sizeof r);
    __syncthreads();
    return r;
}
template <class T> static inline T __shfl_sync(unsigned, T v, int src, int w = 32) {
    const unsigned t = threadIdx.x;
    memcpy(fj_emu_slot(t), &v, sizeof v);
    __syncthreads();
    T r;
    memcpy(&r, fj_emu_slot(t - t % (unsigned)w + (unsigned)src), sizeof r);
    __syncthreads();
    return r;
}
static inline unsigned __float_as_uint(float x) { unsigned u; memcpy(&u, &x, 4); return u; }
static inline float __uint_as_float(unsigned u) { float x; memcpy(&x, &u, 4); return x; }
static inline long long __double_as_longlong(double x) { long long u; memcpy(&u, &x, 8); return u; }
static inline double __longlong_as_double(long long u) { double x; memcpy(&x, &u, 8); return x; }
static inline unsigned atomicOr(unsigned *p, unsigned v) {
    return __atomic_fetch_or(p, v, __ATOMIC_SEQ_CST);
}
"""

MAX_ARGS = 160


def _calls() -> str:
    """The switch calling a kernel of n pointer arguments (all arguments are pointers)."""
    lines = []
    for n in range(MAX_ARGS + 1):
        params = ", ".join(["void *"] * n) or "void"
        args = ", ".join(f"a[{i}]" for i in range(n))
        lines.append(f"    case {n}: ((void (*)({params}))fn)({args}); break;")
    return "\n".join(lines)


# The launcher, built once per process: threads, barriers, the kernel call by arity. A kernel
# that synchronises runs its block's threads as host threads (made once per launch, a barrier
# per block); one that does not (an elementwise grid-stride loop) runs them one by one.
RUNTIME = r"""
#include <barrier>
#include <thread>
#include <vector>
#include <string.h>
struct fj_emu_dim3 { unsigned x, y, z; };
thread_local fj_emu_dim3 threadIdx, blockIdx;
fj_emu_dim3 blockDim, gridDim;
static std::barrier<> *fj_emu_bar;
static unsigned char fj_emu_slots[1024][16];
extern "C" void fj_emu_sync(void) { fj_emu_bar->arrive_and_wait(); }
extern "C" unsigned char *fj_emu_slot(unsigned t) { return fj_emu_slots[t]; }
static void fj_emu_call(void *fn, int n, void **a) {
    switch (n) {
CALLS
    default: __builtin_trap();
    }
}
extern "C" int fj_emu_launch(void *fn, int n, void **args, unsigned grid, unsigned block,
                             int threaded) {
    if (n > MAX_ARGS || block > 1024) return -1;
    blockDim = {block, 1, 1};
    gridDim = {grid, 1, 1};
    if (!threaded) {
        for (unsigned b = 0; b < grid; b++)
            for (unsigned t = 0; t < block; t++) {
                threadIdx = {t, 0, 0};
                blockIdx = {b, 0, 0};
                fj_emu_call(fn, n, args);
            }
        return 0;
    }
    std::barrier<> gate(block + 1);
    std::vector<std::thread> threads;
    threads.reserve(block);
    for (unsigned t = 0; t < block; t++)
        threads.emplace_back([&, t] {
            for (unsigned b = 0; b < grid; b++) {
                gate.arrive_and_wait();  /* this block's barrier is ready */
                threadIdx = {t, 0, 0};
                blockIdx = {b, 0, 0};
                fj_emu_call(fn, n, args);
                fj_emu_bar->arrive_and_drop();
                gate.arrive_and_wait();  /* the block is done */
            }
        });
    for (unsigned b = 0; b < grid; b++) {
        std::barrier<> bar(block);
        fj_emu_bar = &bar;
        gate.arrive_and_wait();
        gate.arrive_and_wait();
    }
    for (auto &th : threads) th.join();
    return 0;
}
"""

FP16 = r"""
typedef _Float16 __half;
static inline __half __float2half_rn(float x) { return (__half)x; }
static inline __half __double2half(double x) { return (__half)x; }
static inline float __half2float(__half x) { return (float)x; }
static inline unsigned short __half_as_ushort(__half x) {
    unsigned short u; memcpy(&u, &x, 2); return u;
}
static inline __half __ushort_as_half(unsigned short u) { __half x; memcpy(&x, &u, 2); return x; }
"""

_DIR = tempfile.mkdtemp(prefix="fusejit-cuda-emu-")
atexit.register(shutil.rmtree, _DIR, True)
_LIBS: dict[str, ctypes.CDLL] = {}


def _compile(path: str, out: str, extra: list[str]) -> None:
    cmd = ["g++", "-std=c++20", "-O1", "-w", "-shared", "-fPIC", "-pthread", *extra, "-x",
           "c++", path, "-o", out]
    proc = subprocess.run(cmd, capture_output=True, text=True, timeout=300)
    if proc.returncode:
        raise RuntimeError(f"the CUDA source does not compile for the host emulation:\n"
                           f"{proc.stderr[-4000:]}")


def _runtime() -> ctypes.CDLL:
    """The launcher library, loaded so that kernel libraries resolve its symbols."""
    lib = _LIBS.get("runtime")
    if lib is None:
        inc = os.path.join(_DIR, "include")
        os.makedirs(inc, exist_ok=True)
        for name, text in (("fj_emu_shim.h", SHIM), ("cuda_fp16.h", FP16),
                           ("runtime.cc", RUNTIME.replace("CALLS", _calls())
                            .replace("MAX_ARGS", str(MAX_ARGS)))):
            with open(os.path.join(inc, name), "w") as f:
                f.write(text)
        out = os.path.join(_DIR, "libfj_emu.so")
        _compile(os.path.join(inc, "runtime.cc"), out, [])
        lib = _LIBS["runtime"] = ctypes.CDLL(out, mode=ctypes.RTLD_GLOBAL)
    return lib


def build(source: str) -> ctypes.CDLL:
    """The CUDA program `source` compiled for the host (cached per source in this process)."""
    runtime = _runtime()
    key = hashlib.sha256(source.encode()).hexdigest()[:24]
    lib = _LIBS.get(key)
    if lib is not None:
        return lib
    src, out = os.path.join(_DIR, f"{key}.cu"), os.path.join(_DIR, f"{key}.so")
    with open(src, "w") as f:
        f.write(source)
    _compile(src, out, ["-I", os.path.join(_DIR, "include"), "-include", "fj_emu_shim.h"])
    lib = _LIBS[key] = ctypes.CDLL(out)
    lib.fj_emu_launch = runtime.fj_emu_launch  # (the launcher, reached from the kernel's lib)
    return lib


def launch(lib: ctypes.CDLL, name: str, grid: int, block: int, pointers: list[int],
           threaded: bool = True) -> None:
    """Run kernel `name` of `lib` over `grid` blocks of `block` threads with these (host)
    pointer arguments; `threaded=False` for a kernel that never synchronises its threads
    (they then run one after the other)."""
    fn = ctypes.cast(getattr(lib, name), ctypes.c_void_p)
    args = (ctypes.c_void_p * max(len(pointers), 1))(*pointers)
    status = lib.fj_emu_launch(fn, len(pointers), args, ctypes.c_uint(grid),
                               ctypes.c_uint(block), int(threaded))
    if status:
        raise RuntimeError(f"emulated launch of {name}: {len(pointers)} arguments or "
                           f"{block} threads a block is more than the emulator takes")


def host_address(buf: Any) -> int:
    """The host address of a writable buffer (the fake pycuda's device memory)."""
    return ctypes.addressof(ctypes.c_char.from_buffer(buf))
