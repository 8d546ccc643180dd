"""What the BLAS-backed C kernels share: the BLAS declarations and `fj_run_gemm` (the row
split over the program's OpenMP threads), the per-thread scratch pool of epilogue products,
the C of batch offsets and alpha, and the status codes these kernels return (errors.Status:
NO_BLAS when a library runs before `fj_set_blas` gave it BLAS, NO_SCRATCH when a scratch block
cannot be allocated). codegen/cgemm.py, cgemm_epilogue.py and cgemv.py render the kernels.
"""

from __future__ import annotations

from ..errors import Status
from ..frontend.ops import ctype
from ..lowering.loop_ir import Access, GemmKernel, LapackKernel, Program

ERR_NO_BLAS = Status.NO_BLAS.code  # a BLAS kernel ran in a library given no BLAS routines
ERR_NO_SCRATCH = Status.NO_SCRATCH.code  # a thread's scratch block could not be allocated

BLAS_DECLS = """
#include <pthread.h>
typedef void (*fj_gemm_f32_t)(const char *, const char *, const int *, const int *,
    const int *, const float *, const float *, const int *, const float *, const int *,
    const float *, float *, const int *);
typedef void (*fj_gemm_f64_t)(const char *, const char *, const int *, const int *,
    const int *, const double *, const double *, const int *, const double *, const int *,
    const double *, double *, const int *);
typedef void (*fj_gemv_f32_t)(const char *, const int *, const int *, const float *,
    const float *, const int *, const float *, const int *, const float *, float *, const int *);
typedef void (*fj_gemv_f64_t)(const char *, const int *, const int *, const double *,
    const double *, const int *, const double *, const int *, const double *, double *,
    const int *);
typedef void (*fj_gemm_c64_t)(const char *, const char *, const int *, const int *,
    const int *, const float _Complex *, const float _Complex *, const int *,
    const float _Complex *, const int *, const float _Complex *, float _Complex *, const int *);
typedef void (*fj_gemm_c128_t)(const char *, const char *, const int *, const int *,
    const int *, const double _Complex *, const double _Complex *, const int *,
    const double _Complex *, const int *, const double _Complex *, double _Complex *,
    const int *);
typedef int (*fj_blas_get_t)(void);
typedef void (*fj_blas_put_t)(int);
typedef struct { pthread_mutex_t lock; int depth; int saved; } fj_blas_state_t;
static fj_gemm_f32_t fj_sgemm;
static fj_gemm_f64_t fj_dgemm;
static fj_gemv_f32_t fj_sgemv;
static fj_gemv_f64_t fj_dgemv;
static fj_gemm_c64_t fj_cgemm;
static fj_gemm_c128_t fj_zgemm;
static fj_blas_get_t fj_blas_get;
static fj_blas_put_t fj_blas_put;
static fj_blas_state_t *fj_blas_state;
/* Called once by the runtime after loading: SciPy's BLAS sgemm, dgemm, sgemv, dgemv, cgemm
   and zgemm;
   OpenBLAS's get/set_num_threads and the state all programs share (runtime/blas.py), or
   NULLs. */
__attribute__((visibility("default"))) void fj_set_blas(void *sgemm, void *dgemm, void *sgemv,
                                                        void *dgemv, void *cgemm, void *zgemm,
                                                        void *get, void *put, void *state) {
    fj_sgemm = (fj_gemm_f32_t)sgemm;
    fj_dgemm = (fj_gemm_f64_t)dgemm;
    fj_sgemv = (fj_gemv_f32_t)sgemv;
    fj_dgemv = (fj_gemv_f64_t)dgemv;
    fj_cgemm = (fj_gemm_c64_t)cgemm;
    fj_zgemm = (fj_gemm_c128_t)zgemm;
    fj_blas_get = (fj_blas_get_t)get;
    fj_blas_put = (fj_blas_put_t)put;
    fj_blas_state = (fj_blas_state_t *)state;
}
/* OpenBLAS to one thread while any program runs a split gemm or gemv (the first entrant
   saves the count, the last leaver restores it). */
static void fj_blas_single(int enter) {
    pthread_mutex_lock(&fj_blas_state->lock);
    if (enter) {
        if (fj_blas_state->depth++ == 0) {
            fj_blas_state->saved = fj_blas_get();
            fj_blas_put(1);
        }
    } else if (--fj_blas_state->depth == 0) {
        fj_blas_put(fj_blas_state->saved);
    }
    pthread_mutex_unlock(&fj_blas_state->lock);
}
/* Rows [0, rows) of a gemm kernel: split over this program's OpenMP threads, each running
   BLAS single-threaded on its block of rows (one thread pool: OpenBLAS's own idle workers
   never compete with ours), or one call on BLAS's own threads when the thread count of the
   BLAS cannot be set. Each element's sum over k is the same either way. */
static int fj_run_gemm(int (*fn)(char *const *, int64_t, int64_t), char *const *buf,
                       int64_t rows, int64_t work) {
#ifdef _OPENMP
    if (fj_blas_state && rows > 1 && work >= FJ_GEMM_PAR_MIN && omp_get_max_threads() > 1) {
        int err = 0;
        fj_blas_single(1);
        #pragma omp parallel reduction(|:err)
        {
            const int64_t t = omp_get_thread_num(), nt = omp_get_num_threads();
            err |= fn(buf, rows * t / nt, rows * (t + 1) / nt);
        }
        fj_blas_single(0);
        return err;
    }
#endif
    return fn(buf, 0, rows);
}
"""

# Multiply-adds below which a gemm runs as one BLAS call (splitting costs more than it gains).
GEMM_PAR_MIN = 1 << 18


def batch_offsets(k: GemmKernel | LapackKernel, accs: list[tuple[str, Access]], idx: str
                  ) -> list[str]:
    """C lines decoding flat batch index `idx` (over `k.batch`) into per-operand pointer
    offsets (gemm, gemv, epilogue and LAPACK kernels)."""
    lines = [f"int64_t fj_r = {idx};"]
    offs = {name: [str(a.offset)] for name, a in accs}
    for d in reversed(range(len(k.batch))):
        n = k.batch[d]
        lines.append(f"const int64_t fj_i{d} = fj_r % {n}; fj_r /= {n};")
        for name, a in accs:
            if a.strides[d]:
                offs[name].append(f"fj_i{d} * {a.strides[d]}")
    lines.append("(void)fj_r;")
    for name, _ in accs:
        lines.append(f"const int64_t fj_o{name} = {' + '.join(offs[name])};")
    return lines


GEMM_FN = {"float32": "fj_sgemm", "float64": "fj_dgemm", "complex64": "fj_cgemm",
           "complex128": "fj_zgemm"}


def alpha_decl(k: GemmKernel, t: str) -> str:
    """The C declaration of `fj_alpha` (the literal, or the value read from its buffer)."""
    if k.alpha_from is None:
        return f"const {t} fj_alpha = ({t}){float(k.alpha)!r};"
    assert abs(k.alpha) == 1.0 and k.alpha_dtype is not None
    src = f"(({ctype(k.alpha_dtype)} const *)fj_buf[{k.alpha_from.buf}])[{k.alpha_from.offset}]"
    return f"const {t} fj_alpha = {'-' if k.alpha < 0 else ''}({t}){src};"


EPILOGUE_DECLS = """
#include <stdlib.h>
/* Scratch blocks of epilogue gemms: a pool per library. A thread takes a block when it
   enters such a kernel and gives it back when it leaves, so the blocks are allocated once
   (at most one per thread running such a kernel at the same time, plus blocks of other
   sizes) and their pages stay resident: later calls fault nothing. Freed when the library
   is unloaded. */
typedef struct fj_block { struct fj_block *next; size_t bytes; } fj_block_t;
static pthread_mutex_t fj_pool_lock = PTHREAD_MUTEX_INITIALIZER;
static fj_block_t *fj_pool;
#define FJ_BLOCK_HEAD 64
static void *fj_scratch_get(size_t bytes) {
    fj_block_t *b = NULL, **p;
    bytes = (bytes + 63) / 64 * 64;
    pthread_mutex_lock(&fj_pool_lock);
    for (p = &fj_pool; *p; p = &(*p)->next) {
        if ((*p)->bytes >= bytes) {
            b = *p;
            *p = b->next;
            break;
        }
    }
    pthread_mutex_unlock(&fj_pool_lock);
    if (!b) {
        b = (fj_block_t *)aligned_alloc(64, FJ_BLOCK_HEAD + bytes);
        if (!b) return NULL;
        b->bytes = bytes;
    }
    return (char *)b + FJ_BLOCK_HEAD;
}
static void fj_scratch_put(void *data) {
    fj_block_t *b = (fj_block_t *)((char *)data - FJ_BLOCK_HEAD);
    pthread_mutex_lock(&fj_pool_lock);
    b->next = fj_pool;
    fj_pool = b;
    pthread_mutex_unlock(&fj_pool_lock);
}
__attribute__((destructor)) static void fj_pool_free(void) {
    pthread_mutex_lock(&fj_pool_lock);
    while (fj_pool) {
        fj_block_t *b = fj_pool;
        fj_pool = b->next;
        free(b);
    }
    pthread_mutex_unlock(&fj_pool_lock);
}
"""


def blas_decls(program: Program) -> str:
    """The declarations a Program with BLAS kernels needs ("" when it has none)."""
    gemms = [k for k in program.kernels if isinstance(k, GemmKernel)]
    if not any(k.blas for k in gemms):
        return ""
    return (f"#define FJ_GEMM_PAR_MIN {GEMM_PAR_MIN}\n{BLAS_DECLS}"
            + (EPILOGUE_DECLS if any(k.scratch for k in gemms) else ""))
