"""Non-temporal (streaming) stores of large outputs: the C helpers.

An output far larger than the caches is never read back while in them, yet each plain store
first reads its cache line from memory (write-allocate): a third more traffic for a kernel
that reads one array and writes one. Stores that bypass the caches skip that read. They
must write whole, aligned cache lines (the partial lines at a row's ends are stored as usual)
and be ordered before other threads read the data (fj_sfence, at the end of each thread's
part of a kernel).
"""

from __future__ import annotations

STREAM_BYTES = 16 << 20  # outputs this large are written with non-temporal stores

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
