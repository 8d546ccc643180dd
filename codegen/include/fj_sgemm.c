/*
 * fj_sgemm.c -- fusejit's own float32 GEMM for AVX-512 CPUs (runtime/blas_own.py builds it,
 * once per machine and target, and hands its address to programs in place of SciPy's sgemm
 * when the loaded OpenBLAS runs kernels without AVX-512 on a CPU that has it).
 *
 *   fj_own_sgemm(transa, transb, m, n, k, alpha, A, lda, B, ldb, beta, C, ldc)
 *
 * The Fortran sgemm's calling convention (every argument by pointer, 32-bit integers,
 * column-major): C = alpha * op(A) @ op(B) + beta * C, op(X) = X or X^T ('N'/'T', 'C' = 'T').
 * As BLAS: m, n or k 0 and alpha 0 need no A or B (C = beta * C), beta 0 never reads C.
 *
 * GotoBLAS/BLIS loop structure: op(B) is packed in KC x NC blocks of NR-column slivers
 * (p-major: NR values per k), op(A) in MC x KC blocks of MR-row slivers (MR values per k), both
 * zero-padded to whole slivers; a 32 x 12 register tile (24 zmm accumulators) runs over each
 * pair of slivers, 2 vector loads of A and 12 broadcasts of B per k. Edge tiles are computed
 * whole into a scratch tile and the wanted part added to C. Packing buffers are per thread,
 * kept while it lives (no page faults after its first call), 2.6 MB each.
 *
 * Threads: called from inside an OpenMP parallel region (fusejit splits large gemms by rows
 * over its own threads, codegen/cblas.py fj_run_gemm) it runs on the calling thread; called
 * outside one with enough work, it splits the larger of m and n over the OpenMP threads.
 *
 * GCC vector types and AVX-512 builtins, no <immintrin.h> (see fj_vtile.h for why).
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <pthread.h>
#ifdef _OPENMP
#include <omp.h>
#endif

#if !defined(__AVX512F__)
#error "fj_sgemm.c needs an AVX-512 target"
#endif

typedef float fj_v16 __attribute__((vector_size(64)));
typedef float fj_v16u __attribute__((vector_size(64), aligned(4)));

#ifndef FJ_MR
#define FJ_MR 32
#endif
#define FJ_NR 12
#ifndef FJ_KC
#define FJ_KC 384
#endif
#ifndef FJ_MC
#define FJ_MC 192
#endif
#ifndef FJ_NC
#define FJ_NC 1536
#endif
#ifndef FJ_PFA
#define FJ_PFA 8
#endif
/* Multiply-adds from which a call outside a parallel region uses the OpenMP threads. */
#define FJ_PAR_MIN (1 << 21)

static inline fj_v16 fj_fma(fj_v16 a, fj_v16 b, fj_v16 c) {
    return __builtin_ia32_vfmaddps512_mask(a, b, c, (unsigned short)0xffff, 4);
}
static inline fj_v16 fj_splat(float x) {
    return (fj_v16){x, x, x, x, x, x, x, x, x, x, x, x, x, x, x, x};
}

/* One MR x NR tile: acc = sum over p < kc of a[p] (MR) x b[p] (NR); then
   C[i*rs + j*cs] = alpha * acc + beta * C (beta 0: C not read; beta 1: C += alpha * acc). The
   vector stores need rs 1 and a whole tile; others go through a scratch tile. */
#define FJ_ROW(j) fj_v16 c0##j = {0}, c1##j = {0};
#define FJ_STEP(j) { const fj_v16 bj = fj_splat(b[j]); c0##j = fj_fma(a0, bj, c0##j); \
                     c1##j = fj_fma(a1, bj, c1##j); }
#define FJ_ALL(X) X(0) X(1) X(2) X(3) X(4) X(5) X(6) X(7) X(8) X(9) X(10) X(11)
#define FJ_OUT(j) { fj_v16u *d0 = (fj_v16u *)(c + (j) * cs), *d1 = d0 + 1; \
    if (beta == 0.0f) { *d0 = va * c0##j; *d1 = va * c1##j; } \
    else if (beta == 1.0f) { *d0 = fj_fma(va, c0##j, *d0); *d1 = fj_fma(va, c1##j, *d1); } \
    else { *d0 = fj_fma(va, c0##j, vb * *d0); *d1 = fj_fma(va, c1##j, vb * *d1); } }
#define FJ_TMP(j) { ((fj_v16 *)tmp)[2 * (j)] = c0##j; ((fj_v16 *)tmp)[2 * (j) + 1] = c1##j; }

static void fj_tile(int64_t kc, const float *restrict a, const float *restrict b, float alpha,
                    float beta, float *restrict c, int64_t rs, int64_t cs, int64_t mr,
                    int64_t nr) {
    FJ_ALL(FJ_ROW)
    for (int64_t j = 0; j < nr; j++) __builtin_prefetch(c + j * cs, 1, 3);
    for (int64_t p = 0; p < kc; p++) {
        const fj_v16 a0 = ((const fj_v16 *)a)[0], a1 = ((const fj_v16 *)a)[1];
        __builtin_prefetch(a + FJ_PFA * FJ_MR, 0, 3);
        FJ_ALL(FJ_STEP)
        a += FJ_MR;
        b += FJ_NR;
    }
    const fj_v16 va = fj_splat(alpha), vb = fj_splat(beta);
    if (mr == FJ_MR && nr == FJ_NR && rs == 1) {
        FJ_ALL(FJ_OUT)
        return;
    }
    float tmp[FJ_MR * FJ_NR] __attribute__((aligned(64)));
    FJ_ALL(FJ_TMP)
    for (int64_t j = 0; j < nr; j++) {
        float *cj = c + j * cs;
        const float *t = tmp + j * FJ_MR;
        if (beta == 0.0f)
            for (int64_t i = 0; i < mr; i++) cj[i * rs] = alpha * t[i];
        else
            for (int64_t i = 0; i < mr; i++) cj[i * rs] = alpha * t[i] + beta * cj[i * rs];
    }
}

/* Pack rows [i0, i0 + mc) x cols [p0, p0 + kc) of op(A) into MR-row slivers. */
static void fj_pack_a(float *restrict out, const float *restrict A, int64_t lda, int ta,
                      int64_t i0, int64_t mc, int64_t p0, int64_t kc) {
    for (int64_t s = 0; s < mc; s += FJ_MR) {
        const int64_t mr = mc - s < FJ_MR ? mc - s : FJ_MR;
        float *o = out + s * kc;
        if (!ta) {  /* op(A)[i, p] = A[i + p * lda]: MR contiguous per p */
            const float *src = A + (i0 + s) + p0 * lda;
            if (mr == FJ_MR) {
                for (int64_t p = 0; p < kc; p++) {
                    ((fj_v16 *)(o + p * FJ_MR))[0] = *(const fj_v16u *)(src + p * lda);
                    ((fj_v16 *)(o + p * FJ_MR))[1] = *(const fj_v16u *)(src + p * lda + 16);
                }
            } else {
                for (int64_t p = 0; p < kc; p++) {
                    int64_t i = 0;
                    for (; i < mr; i++) o[p * FJ_MR + i] = src[i + p * lda];
                    for (; i < FJ_MR; i++) o[p * FJ_MR + i] = 0.0f;
                }
            }
        } else {  /* op(A)[i, p] = A[p + i * lda]: contiguous along p per row i */
            const float *src = A + p0 + (i0 + s) * lda;
            for (int64_t q = 0; q < kc; q += 16) {  /* 16 k at a time: writes stay in L1 */
                const int64_t qe = kc - q < 16 ? kc - q : 16;
                for (int64_t i = 0; i < mr; i++)
                    for (int64_t p = q; p < q + qe; p++) o[p * FJ_MR + i] = src[p + i * lda];
            }
            for (int64_t i = mr; i < FJ_MR; i++)
                for (int64_t p = 0; p < kc; p++) o[p * FJ_MR + i] = 0.0f;
        }
    }
}

/* Pack rows [p0, p0 + kc) x cols [j0, j0 + nc) of op(B) into NR-column slivers. */
static void fj_pack_b(float *restrict out, const float *restrict B, int64_t ldb, int tb,
                      int64_t p0, int64_t kc, int64_t j0, int64_t nc) {
    for (int64_t s = 0; s < nc; s += FJ_NR) {
        const int64_t nr = nc - s < FJ_NR ? nc - s : FJ_NR;
        float *o = out + s * kc;
        if (!tb) {  /* op(B)[p, j] = B[p + j * ldb]: contiguous along p per column j */
            const float *src = B + p0 + (j0 + s) * ldb;
            for (int64_t j = 0; j < nr; j++)
                for (int64_t p = 0; p < kc; p++) o[p * FJ_NR + j] = src[p + j * ldb];
        } else {  /* op(B)[p, j] = B[j + p * ldb]: NR contiguous per p */
            const float *src = B + (j0 + s) + p0 * ldb;
            for (int64_t p = 0; p < kc; p++)
                for (int64_t j = 0; j < nr; j++) o[p * FJ_NR + j] = src[j + p * ldb];
        }
        for (int64_t j = nr; j < FJ_NR; j++)
            for (int64_t p = 0; p < kc; p++) o[p * FJ_NR + j] = 0.0f;
    }
}

/* This thread's packing buffers, kept for the thread's life (pages fault once) and freed
   when it exits (a pthread key's destructor). */
typedef struct { float *a, *b; } fj_bufs_t;
static pthread_key_t fj_key;
static pthread_once_t fj_once = PTHREAD_ONCE_INIT;
static int fj_key_ok;
static void fj_free_bufs(void *p) {
    fj_bufs_t *bufs = (fj_bufs_t *)p;
    free(bufs->a);
    free(bufs->b);
    free(bufs);
}
static void fj_make_key(void) { fj_key_ok = pthread_key_create(&fj_key, fj_free_bufs) == 0; }

static fj_bufs_t *fj_buffers(void) {
    pthread_once(&fj_once, fj_make_key);
    if (!fj_key_ok) return NULL;
    fj_bufs_t *bufs = (fj_bufs_t *)pthread_getspecific(fj_key);
    if (bufs) return bufs;
    bufs = (fj_bufs_t *)malloc(sizeof *bufs);
    if (!bufs) return NULL;
    bufs->a = (float *)aligned_alloc(64, sizeof(float) * FJ_MC * FJ_KC);
    bufs->b = (float *)aligned_alloc(64, sizeof(float) * FJ_KC * FJ_NC);
    if (!bufs->a || !bufs->b || pthread_setspecific(fj_key, bufs) != 0) {
        fj_free_bufs(bufs);
        return NULL;
    }
    return bufs;
}

/* C = beta * C (beta 0: zeros, C not read), columns [0, n). */
static void fj_scale(int64_t m, int64_t n, float beta, float *c, int64_t ldc) {
    for (int64_t j = 0; j < n; j++) {
        float *cj = c + j * ldc;
        if (beta == 0.0f)
            memset(cj, 0, sizeof(float) * m);
        else if (beta != 1.0f)
            for (int64_t i = 0; i < m; i++) cj[i] *= beta;
    }
}

/* The gemm on the calling thread (m, n, k > 0, alpha != 0) with its packing buffers. */
static void fj_serial(const fj_bufs_t *buf, int ta, int tb, int64_t m, int64_t n, int64_t k, float alpha,
                      const float *A, int64_t lda, const float *B, int64_t ldb, float beta,
                      float *C, int64_t rs, int64_t cs) {
    for (int64_t jc = 0; jc < n; jc += FJ_NC) {
        const int64_t nc = n - jc < FJ_NC ? n - jc : FJ_NC;
        for (int64_t pc = 0; pc < k; pc += FJ_KC) {
            const int64_t kc = k - pc < FJ_KC ? k - pc : FJ_KC;
            const float bet = pc == 0 ? beta : 1.0f;
            fj_pack_b(buf->b, B, ldb, tb, pc, kc, jc, nc);
            for (int64_t ic = 0; ic < m; ic += FJ_MC) {
                const int64_t mc = m - ic < FJ_MC ? m - ic : FJ_MC;
                fj_pack_a(buf->a, A, lda, ta, ic, mc, pc, kc);
                for (int64_t jr = 0; jr < nc; jr += FJ_NR) {
                    const int64_t nr = nc - jr < FJ_NR ? nc - jr : FJ_NR;
                    for (int64_t ir = 0; ir < mc; ir += FJ_MR) {
                        const int64_t mr = mc - ir < FJ_MR ? mc - ir : FJ_MR;
                        fj_tile(kc, buf->a + ir * kc, buf->b + jr * kc, alpha, bet,
                                C + (ic + ir) * rs + (jc + jr) * cs, rs, cs, mr, nr);
                    }
                }
            }
        }
    }
}

/* Without memory for the packing buffers: the same product by plain loops (slow, right). */
static void fj_unpacked(int ta, int tb, int64_t m, int64_t n, int64_t k, float alpha,
                        const float *A, int64_t lda, const float *B, int64_t ldb, float beta,
                        float *C, int64_t rs, int64_t cs) {
    for (int64_t j = 0; j < n; j++)
        for (int64_t i = 0; i < m; i++) {
            float s = 0.0f;
            for (int64_t p = 0; p < k; p++)
                s += (ta ? A[p + i * lda] : A[i + p * lda]) * (tb ? B[j + p * ldb] : B[p + j * ldb]);
            float *c = C + i * rs + j * cs;
            *c = beta == 0.0f ? alpha * s : alpha * s + beta * *c;
        }
}

static int fj_trans(const char *t) { return *t == 'T' || *t == 't' || *t == 'C' || *t == 'c'; }

static int64_t fj_pad(int64_t x, int64_t to) { return (x + to - 1) / to * to; }

__attribute__((visibility("default"))) void fj_own_sgemm(
    const char *transa, const char *transb, const int *pm, const int *pn, const int *pk,
    const float *palpha, const float *A, const int *plda, const float *B, const int *pldb,
    const float *pbeta, float *C, const int *pldc) {
    int ta = fj_trans(transa), tb = fj_trans(transb);
    int64_t m = *pm, n = *pn, lda = *plda, ldb = *pldb, rs = 1, cs = *pldc;
    const int64_t k = *pk;
    const float alpha = *palpha, beta = *pbeta;
    if (m <= 0 || n <= 0) return;
    if (k <= 0 || alpha == 0.0f) {
        fj_scale(m, n, beta, C, cs);
        return;
    }
    if (fj_pad(n, FJ_MR) * fj_pad(m, FJ_NR) * 4 < fj_pad(m, FJ_MR) * fj_pad(n, FJ_NR) * 3) {
        /* few rows (m = 10 pads to a 32-row tile): C^T = op(B)^T op(A)^T wastes less */
        const float *t = A;
        const int64_t tm = m, tl = lda;
        const int tt = ta;
        A = B, lda = ldb, ta = !tb;
        B = t, ldb = tl, tb = !tt;
        m = n, n = tm, rs = cs, cs = 1;
    }
#ifdef _OPENMP
    if (!omp_in_parallel() && omp_get_max_threads() > 1 && m * n * k >= FJ_PAR_MIN) {
        const int by_n = n >= m;
        int failed = 0;
        #pragma omp parallel shared(failed)
        {
            const fj_bufs_t *buf = fj_buffers();
            if (!buf) {
                #pragma omp atomic write
                failed = 1;
            }
            #pragma omp barrier
            int stop;
            #pragma omp atomic read
            stop = failed;
            const int64_t t = omp_get_thread_num(), nt = omp_get_num_threads();
            if (stop) {
                /* nothing */
            } else if (by_n) {  /* whole NR slivers per thread */
                const int64_t s = (n + FJ_NR - 1) / FJ_NR;
                const int64_t j0 = s * t / nt * FJ_NR, j1 = s * (t + 1) / nt * FJ_NR;
                const int64_t e = j1 < n ? j1 : n;
                if (j0 < e)
                    fj_serial(buf, ta, tb, m, e - j0, k, alpha, A, lda, tb ? B + j0 : B + j0 * ldb,
                              ldb, beta, C + j0 * cs, rs, cs);
            } else {  /* whole MR slivers per thread */
                const int64_t s = (m + FJ_MR - 1) / FJ_MR;
                const int64_t i0 = s * t / nt * FJ_MR, i1 = s * (t + 1) / nt * FJ_MR;
                const int64_t e = i1 < m ? i1 : m;
                if (i0 < e)
                    fj_serial(buf, ta, tb, e - i0, n, k, alpha, ta ? A + i0 * lda : A + i0, lda,
                              B, ldb, beta, C + i0 * rs, rs, cs);
            }
        }
        if (!failed) return;
    }
#endif
    const fj_bufs_t *buf = fj_buffers();
    if (buf)
        fj_serial(buf, ta, tb, m, n, k, alpha, A, lda, B, ldb, beta, C, rs, cs);
    else
        fj_unpacked(ta, tb, m, n, k, alpha, A, lda, B, ldb, beta, C, rs, cs);
}
