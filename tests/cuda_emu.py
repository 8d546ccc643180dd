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

A kernel is called as the driver calls it from a launch's parameter buffer (pycuda's
`_launch_kernel`, CU_LAUNCH_PARAM_BUFFER_POINTER): a thunk compiled beside each kernel reads
every parameter of the kernel's own C++ type (pointers, the `fj_val<T>` of a 0-d input passed
by value) at that type's alignment, one after the other, and refuses a buffer whose size is
not theirs together.

What this checks that the fake pycuda's loop-IR interpreter cannot: the CUDA text itself, its
indexing, vector paths, team reductions, split reductions, the tiled matmul and its epilogue,
the kernels' parameter layout.
"""

from __future__ import annotations

import atexit
import ctypes
import hashlib
import os
import re
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
#define __noinline__
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

# Appended to a program's source: a thunk per kernel that reads its parameters from a launch's
# parameter buffer at the offsets the CUDA ABI gives them (each aligned to its type) and
# calls it, and the size those parameters take together.
THUNKS = r"""
#include <utility>
template <typename T> static inline T fj_emu_param(const unsigned char *p) {
    T v;
    memcpy((void *)&v, p, sizeof v);
    return v;
}
template <typename... A> static inline void fj_emu_offsets(unsigned long *off, unsigned long *end) {
    unsigned long at = 0, k = 0;
    ((at = (at + alignof(A) - 1) / alignof(A) * alignof(A), off[k++] = at, at += sizeof(A)), ...);
    *end = at;
}
template <typename... A, unsigned long... I>
static inline void fj_emu_apply(void (*fn)(A...), const unsigned char *buf,
                                std::integer_sequence<unsigned long, I...>) {
    unsigned long off[sizeof...(A) + 1], end;
    fj_emu_offsets<A...>(off, &end);
    fn(fj_emu_param<A>(buf + off[I])...);
}
template <typename... A>
static inline void fj_emu_call(void (*fn)(A...), const unsigned char *buf) {
    fj_emu_apply(fn, buf, std::make_integer_sequence<unsigned long, sizeof...(A)>{});
}
template <typename... A> static inline long fj_emu_size(void (*)(A...)) {
    unsigned long off[sizeof...(A) + 1], end;
    fj_emu_offsets<A...>(off, &end);
    return (long)end;
}
"""
_KERNEL = re.compile(r"__global__ void (?:__launch_bounds__\([^)]*\)\s*)?(\w+)\s*\(")


def _thunks(source: str) -> str:
    """THUNKS and, for each kernel of `source`, fj_emu_thunk_<name> and fj_emu_size_<name>."""
    lines = [THUNKS]
    for name in dict.fromkeys(_KERNEL.findall(source)):
        lines += [f'extern "C" void fj_emu_thunk_{name}(const unsigned char *b) '
                  f"{{ fj_emu_call({name}, b); }}",
                  f'extern "C" long fj_emu_size_{name}(void) {{ return fj_emu_size({name}); }}']
    return "\n".join(lines) + "\n"


# The launcher, built once per process: threads, barriers, the kernel's thunk. A kernel
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
typedef void (*fj_emu_thunk)(const unsigned char *);
extern "C" int fj_emu_launch(fj_emu_thunk fn, const unsigned char *args, unsigned grid,
                             unsigned block, int threaded) {
    if (block > 1024) return -1;
    blockDim = {block, 1, 1};
    gridDim = {grid, 1, 1};
    if (!threaded) {
        for (unsigned b = 0; b < grid; b++)
            for (unsigned t = 0; t < block; t++) {
                threadIdx = {t, 0, 0};
                blockIdx = {b, 0, 0};
                fn(args);
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
                fn(args);
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
                           ("runtime.cc", RUNTIME)):
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
        f.write(source + _thunks(source))
    _compile(src, out, ["-I", os.path.join(_DIR, "include"), "-include", "fj_emu_shim.h"])
    lib = _LIBS[key] = ctypes.CDLL(out)
    lib.fj_emu_launch = runtime.fj_emu_launch  # (the launcher, reached from the kernel's lib)
    return lib


def launch(lib: ctypes.CDLL, name: str, grid: int, block: int, params: bytes,
           threaded: bool = True) -> None:
    """Run kernel `name` of `lib` over `grid` blocks of `block` threads with the parameter
    buffer `params` (host addresses for device ones); `threaded=False` for a kernel that never
    synchronises its threads (they then run one after the other)."""
    size = getattr(lib, f"fj_emu_size_{name}")
    size.restype = ctypes.c_long
    if size() != len(params):
        raise RuntimeError(f"emulated launch of {name}: {len(params)} bytes of parameters, "
                           f"the kernel's take {size()}")
    fn = ctypes.cast(getattr(lib, f"fj_emu_thunk_{name}"), ctypes.c_void_p)
    buf = ctypes.create_string_buffer(params, max(len(params), 1))
    status = lib.fj_emu_launch(fn, buf, ctypes.c_uint(grid), ctypes.c_uint(block),
                               int(threaded))
    if status:
        raise RuntimeError(f"emulated launch of {name}: {block} threads a block is more than "
                           "the emulator takes")


def host_address(buf: Any) -> int:
    """The host address of a writable buffer (the fake pycuda's device memory)."""
    return ctypes.addressof(ctypes.c_char.from_buffer(buf))
