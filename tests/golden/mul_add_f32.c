#define FJ_PAR_MIN 32768

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

/* k0: domain [1000]; nodes [...]; from ['test_golden.py:N'] */
static int fj_k0(char *const *fj_buf, int64_t fj_lo, int64_t fj_hi) {
    int fj_err = 0;
    const float *const b0 = (const float *)fj_buf[0];
    const float *const b1 = (const float *)fj_buf[1];
    float *const b2 = (float *)fj_buf[2];
    for (int64_t fj_b = fj_lo; fj_b < fj_hi; fj_b++) {
        int64_t fj_r = fj_b;
        const int64_t fj_ib = fj_r % 1;
        fj_r /= 1;
        (void)fj_r;
        const int64_t fj_j0 = fj_ib * 1000;
        const int64_t fj_n = 1000 - fj_j0 < 1000 ? 1000 - fj_j0 : 1000;
        const float *const p0 = b0 + (0 + fj_j0 * 1);
        const float *const p1 = b1 + (0 + fj_j0 * 1);
        float *const p2 = b2 + (0 + fj_j0 * 1);
        const float v3 = 0x1.0000000000000p+0f;
        #pragma omp simd
        for (int64_t j = 0; j < fj_n; j++) {
            const float v0 = p0[j];
            const float v1 = p1[j];
            const float v2 = ((float)(v0 * v1));
            const float v4 = ((float)(v2 + v3));
            p2[j] = v4;
        }
    }
    return fj_err;
}

/* Entry point: every kernel in order, one native call per invocation.
   fj_io: inputs, constants and outputs in buffer order; fj_arena: the temporaries' arena. */
int fj_entry(char *const *fj_io, char *fj_arena) {
    char *fj_buf[3];
    fj_buf[0] = fj_io[0];
    fj_buf[1] = fj_io[1];
    fj_buf[2] = fj_io[2];
    (void)fj_arena;
    int fj_err = 0;
    fj_err = fj_run(fj_k0, fj_buf, 1, 1000);
    if (fj_err) return fj_err;
    return 0;
}
