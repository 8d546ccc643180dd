"""Non-temporal (streaming) stores of large outputs: the C helpers, and which row kernels'
outputs go out that way.

An output far larger than the caches is never read back while in them, yet each plain store
first reads its cache line from memory (write-allocate): a third more traffic for a kernel
that reads one array and writes one. Stores that bypass the caches skip that read. They
must write whole, aligned cache lines (the partial lines at a row's ends are stored as usual)
and be ordered before other threads read the data (fj_sfence, at the end of each thread's
part of a kernel).

A multi-phase row kernel (codegen/creduce.py) whose last phase writes a row of a large output
that the kernel touches nowhere else (softmax may stash exp in it in an earlier phase and read
it back) keeps that row in an aligned array on the stack, in L1, and streams each chunk out
as the last phase finishes it: the output is written once, with no read of its lines. Two
threads, 4096x4096 float32, interleaved in one process (load 7.7, wall): layernorm_rows
2.58 -> 2.15 ms, softmax_rows 4.20 -> 3.54 ms (a 2-thread streaming copy of the same bytes:
1.49 ms with plain stores, 1.09 ms streamed). When the last phase's chunk loop is a plain
loop that stores the row, it runs a cache line of points at a time into a 64-byte array
streamed straight to the output (stream_direct) instead of the row and a copy after it:
softmax_rows 3.67 -> 3.49 ms (x86-64-v3), 2.43 -> 2.40 (native); layernorm_rows 2.71 -> 2.58,
2.59 -> 2.44 (benchmarks/RESULTS.md, session 16).
"""

from __future__ import annotations

import numpy as np

from ..lowering.loop_ir import Access, Load, ReduceKernel, Store

STREAM_BYTES = 16 << 20  # outputs this large are written with non-temporal stores
ROW_STAGE_BYTES = 64 << 10  # rows staged on the stack (streamed row kernels) at most
# Rows of fewer points are not staged: each row's stream then comes in one burst after all of
# its compute, with nothing of the row left to overlap it (softmax, rows of 1024 float32, one
# core, CPU time: 8192 rows 3.40 -> 3.74 ms, 16384 rows 7.05 -> 7.48 ms; xent_grad 3.34 -> 3.61).
ROW_STAGE_MIN = 2048

STREAM_C = """#ifndef FJ_STREAM_DEFINED
#define FJ_STREAM_DEFINED
typedef long long fj_v2di __attribute__((vector_size(16)));
/* `bytes` from src to dst; when nt, past the caches (dst 16-byte aligned, bytes a multiple
   of 16): no read of dst's lines before they are written. fj_sfence orders such stores. */
static inline void fj_stream(void *dst, const void *src, int64_t bytes, int nt) {
#if defined(__SSE2__)
    if (nt) {
        for (int64_t b = 0; b < bytes; b += 16) {
            fj_v2di v;
            __builtin_memcpy(&v, (const char *)src + b, 16);
            __builtin_ia32_movntdq((fj_v2di *)((char *)dst + b), v);
        }
        return;
    }
#endif
    (void)nt;
    __builtin_memcpy(dst, src, bytes);
}
static inline void fj_sfence(void) {
#if defined(__SSE2__)
    __builtin_ia32_sfence();
#endif
}
#endif
""".splitlines()

STREAM_ROW_C = """#ifndef FJ_STREAM_ROW_DEFINED
#define FJ_STREAM_ROW_DEFINED
#if defined(__SSE2__)
#include <immintrin.h>
#endif
/* `bytes` from src (64-byte aligned) to dst (any alignment): the whole 64-byte lines of dst
   past the caches, the partial lines at its ends with plain stores. */
static inline void fj_stream_row(void *dst, const void *src, int64_t bytes) {
    char *d = (char *)dst;
    const char *s = (const char *)src;
    int64_t head = (int64_t)((64 - ((uintptr_t)d & 63)) & 63);
    if (head > bytes) head = bytes;
    __builtin_memcpy(d, s, head);
    int64_t b = head;
    for (; b + 64 <= bytes; b += 64) {
#if defined(__AVX512F__)
        _mm512_stream_si512((void *)(d + b), _mm512_loadu_si512((const void *)(s + b)));
#elif defined(__AVX__)
        _mm256_stream_si256((__m256i *)(d + b), _mm256_loadu_si256((const __m256i *)(s + b)));
        _mm256_stream_si256((__m256i *)(d + b + 32),
                            _mm256_loadu_si256((const __m256i *)(s + b + 32)));
#elif defined(__SSE2__)
        for (int q = 0; q < 64; q += 16)
            _mm_stream_si128((__m128i *)(d + b + q), _mm_loadu_si128((const __m128i *)(s + b + q)));
#else
        __builtin_memcpy(d + b, s + b, 64);
#endif
    }
    __builtin_memcpy(d + b, s + b, bytes - b);
}
/* 64 bytes from src to dst, both 64-byte aligned, past the caches. */
static inline void fj_stream_line(void *dst, const void *src) {
#if defined(__AVX512F__)
    _mm512_stream_si512((void *)dst, _mm512_load_si512(src));
#elif defined(__AVX__)
    _mm256_stream_si256((__m256i *)dst, _mm256_load_si256((const __m256i *)src));
    _mm256_stream_si256((__m256i *)((char *)dst + 32),
                        _mm256_load_si256((const __m256i *)((const char *)src + 32)));
#elif defined(__SSE2__)
    for (int q = 0; q < 64; q += 16)
        _mm_stream_si128((__m128i *)((char *)dst + q),
                         _mm_load_si128((const __m128i *)((const char *)src + q)));
#else
    __builtin_memcpy(dst, src, 64);
#endif
}
static inline void fj_sfence_rows(void) {
#if defined(__SSE2__)
    _mm_sfence();
#endif
}
#endif
""".splitlines()

_SIZES = {"float": 4, "double": 8}


def streamed_row(k: ReduceKernel, buf_types: dict[int, tuple[str, bool]]) -> Access | None:
    """The store of a multi-phase row kernel's last phase to stage a row at a time and stream
    out (see the module docstring), or None: one unit-stride store that moves with the outer
    point, of float or double, STREAM_BYTES written in all, rows of ROW_STAGE_MIN points to
    ROW_STAGE_BYTES, and every load and store of its buffer in the kernel that same row."""
    if (k.layout != "rows" or len(k.inner) != 1 or not k.outer or len(k.phases) < 2):
        return None
    nouter, n = len(k.outer), k.inner[0]
    stores = [s for s in k.phases[-1] if isinstance(s, Store)]
    if len(stores) != 1 or stores[0].index or stores[0].fn is not None:
        return None
    acc = stores[0].access
    size = _SIZES.get(buf_types[acc.buf][0], 0)
    if (not size or acc.strides[-1] != 1 or not any(acc.strides[:nouter])
            or n < ROW_STAGE_MIN or n * size > ROW_STAGE_BYTES
            or int(np.prod(k.outer, dtype=np.int64)) * n * size < STREAM_BYTES):
        return None
    mine = [s for s in k.body if isinstance(s, (Load, Store)) and s.access.buf == acc.buf]
    if any(s.access != acc or s.index or (isinstance(s, Store) and s.fn is not None)
           for s in mine) or any(any(s is e for e in k.epilogue) for s in mine):
        return None
    # Written before it is read (not an input updated in place, whose row the kernel reads).
    return acc if isinstance(mine[0], Store) else None


def stream_direct(lines: list[str], dst: str, ctype: str) -> list[str]:
    """`lines` (a streamed row kernel's last phase, its row staged in fj_row) with the chunk
    loop that stores the row and the fj_stream_row after it fused: the loop runs a cache line
    of points at a time into a 64-byte array that fj_stream_line streams to `dst` + point
    (the chunk's first output element), the partial lines at the chunk's ends stored as
    usual; the same statements at every point, so the same bits. Unchanged unless that loop
    is a plain `omp simd` loop (no reduction) with one store to the row. x86-64-v3, softmax
    rows of 4096 float32, two threads, generated C in one process (benchmarks/c_ab.py, 14
    rounds, median): 4.05 -> 3.48 ms."""
    tail = next((i for i, ln in enumerate(lines) if ln.strip().startswith("fj_stream_row(")),
                None)
    head = "for (int64_t j = 0; j < fj_cn; j++) {"
    if tail is None or tail < 3 or lines[tail - 1].strip() != "}":
        return lines
    pad = lines[tail][:len(lines[tail]) - len(lines[tail].lstrip())]
    start = next((i for i in range(tail - 2, -1, -1) if lines[i] == pad + head), None)
    if start is None or start == 0 or lines[start - 1] != pad + "#pragma omp simd":
        return lines
    body = [ln.strip() for ln in lines[start + 1:tail - 1]]
    store = "fj_row[fj_c + j] = "
    if (sum(ln.startswith(store) for ln in body) != 1 or any(ln.endswith("{") or ln == "}"
                                                             for ln in body)):
        return lines

    def at(target: str) -> list[str]:
        return [target + ln[len(store):] if ln.startswith(store) else ln for ln in body]

    line = f"(int64_t)(64 / sizeof({ctype}))"
    fused = ["{", f"{ctype} *const fj_d = {dst};",
             "int64_t fj_h = ((uintptr_t)fj_d % sizeof *fj_d) ? fj_cn : "
             "(int64_t)(((64 - ((uintptr_t)fj_d & 63)) & 63) / sizeof *fj_d);",
             "if (fj_h > fj_cn) fj_h = fj_cn;",
             "for (int64_t j = 0; j < fj_h; j++) {", *(f"    {b}" for b in at("fj_d[j] = ")), "}",
             "int64_t fj_q = fj_h;",
             f"for (; fj_q + {line} <= fj_cn; fj_q += {line}) {{",
             f"    {ctype} fj_s[64 / sizeof({ctype})] __attribute__((aligned(64)));",
             "    #pragma omp simd",
             f"    for (int64_t fj_l = 0; fj_l < {line}; fj_l++) {{",
             "        const int64_t j = fj_q + fj_l;",
             *(f"        {b}" for b in at("fj_s[fj_l] = ")),
             "    }", "    fj_stream_line(fj_d + fj_q, fj_s);", "}",
             "for (int64_t j = fj_q; j < fj_cn; j++) {", *(f"    {b}" for b in at("fj_d[j] = ")),
             "}", "}"]
    return lines[:start - 1] + [pad + ln for ln in fused] + lines[tail + 1:]

