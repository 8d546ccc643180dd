#define FJ_PAR_MIN 32768

#define FJ_GEMM_PAR_MIN 262144

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

typedef int (*fj_kernel_fn)(char *const *fj_buf, int64_t fj_lo, int64_t fj_hi);

/* Run blocks [0, nblk) of a kernel, split statically over the threads when the work is big
   enough; the split depends only on the thread count, so results never depend on timing. */
static int fj_run(fj_kernel_fn fn, char *const *buf, int64_t nblk, int64_t work) {
#ifdef _OPENMP
    if (nblk > 1 && work >= FJ_PAR_MIN) {
        int err = 0;
        #pragma omp parallel reduction(|:err)
        {
            const int64_t t = omp_get_thread_num(), nt = omp_get_num_threads();
            err |= fn(buf, nblk * t / nt, nblk * (t + 1) / nt);
        }
        return err;
    }
#endif
    return fn(buf, 0, nblk);
}

/* k0: matmul batch [], 4 x 8 @ 8 x 3, float32, BLAS gemm + epilogue over blocks of 4 rows (product in the rows of its output); nodes [...] */
/* rows [fj_lo, fj_hi) of the flattened (batch, m) space */
static int fj_k0(char *const *fj_buf, int64_t fj_lo, int64_t fj_hi) {
    const float *const fj_A = (const float *)fj_buf[0];
    const float *const fj_B = (const float *)fj_buf[1];
    float *const fj_C = (float *)fj_buf[3];
    const float *const b2 = (const float *)fj_buf[2];
    float *const b3 = (float *)fj_buf[3];
    if (!fj_sgemm) return 64;
    const char fj_ta = 'N', fj_tb = 'N';
    const int fj_n = 3, fj_k = 8;
    const int fj_lda = 8, fj_ldb = 3, fj_ldc = 3;
    const float fj_alpha = (float)1.0;
    const float fj_beta = 0;
    int fj_err = 0;
    if (fj_hi <= fj_lo) return 0;
    const int64_t fj_rows = 4;
    for (int64_t fj_r0 = fj_lo; fj_r0 < fj_hi;) {
        const int64_t fj_b = fj_r0 / 4, fj_m0 = fj_r0 - fj_b * 4;
        int64_t fj_r1 = fj_r0 + fj_rows;
        if (fj_r1 > fj_hi) fj_r1 = fj_hi;
        if (fj_r1 > (fj_b + 1) * 4) fj_r1 = (fj_b + 1) * 4;
        const int fj_m = (int)(fj_r1 - fj_r0);
        int64_t fj_r = fj_b;
        (void)fj_r;
        const int64_t fj_oa = 0;
        const int64_t fj_ob = 0;
        const int64_t fj_oc = 0;
        fj_sgemm(&fj_tb, &fj_ta, &fj_n, &fj_m, &fj_k, &fj_alpha, fj_B + fj_ob, &fj_ldb, fj_A + fj_oa + fj_m0 * 8, &fj_lda, &fj_beta, fj_C + fj_oc + fj_m0 * 3, &fj_ldc);
        for (int64_t i = fj_m0; i < fj_m0 + fj_m; i++) {
            const float *const fj_p = fj_C + fj_oc + i * 3;
            const float *const p0 = b2 + (0);
            float *const p1 = b3 + (0 + i * 3);
            #pragma omp simd
            for (int64_t j = 0; j < 3; j++) {
                const float acc = fj_p[j];
                const float v1 = p0[j];
                const float v2 = ((float)(acc + v1));
                const float v3 = 0x0.0p+0f;
                const float v4 = ((float)fj_maximum_f32(v2, v3));
                p1[j] = v4;
            }
        }
        fj_r0 = fj_r1;
    }
    return fj_err;
}

/* Entry point: every kernel in order, one native call per invocation.
   fj_io: inputs, constants and outputs in buffer order; fj_arena: the temporaries' arena. */
int fj_entry(char *const *fj_io, char *fj_arena) {
    char *fj_buf[4];
    fj_buf[0] = fj_io[0];
    fj_buf[1] = fj_io[1];
    fj_buf[2] = fj_io[2];
    fj_buf[3] = fj_io[3];
    (void)fj_arena;
    int fj_err = 0;
    fj_err = fj_run_gemm(fj_k0, fj_buf, 4, 120);
    if (fj_err) return fj_err;
    return 0;
}
