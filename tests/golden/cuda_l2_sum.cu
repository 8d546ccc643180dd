

/* k0 phase 0: 1024 part(s) of 16384 per row of 16777216, 1 row(s); one block per part; raw results to scratch */
extern "C" __global__ void __launch_bounds__(256) fj_l2_sum_k0_p0(const float *b0, unsigned char *fj_scr) {
    typedef long long fj_idx;
    __shared__ long long fj_sh[64];
    const int fj_lane = threadIdx.x;
    for (fj_idx fj_w = blockIdx.x; fj_w < 1024; fj_w += gridDim.x) {
        const fj_idx fj_o = fj_w / 1024;
        const fj_idx fj_lo = (fj_w % 1024) * 16384;
        const fj_idx fj_hi = fj_lo + 16384 < 16777216 ? fj_lo + 16384 : 16777216;
        const fj_idx i0 = fj_o;
        double fj_a_v2 = 0.0;
        for (fj_idx fj_j = fj_lo + fj_lane; fj_j < fj_hi; fj_j += 256) {
            const fj_idx i1 = fj_j;
            const float v0 = b0[i1];
            const float v1 = ((float)(v0 * v0));
            fj_a_v2 = fj_op_add()(fj_a_v2, (double)(v1));
        }
        fj_a_v2 = fj_team_reduce<256>(fj_a_v2, fj_op_add(), fj_sh);
        if (fj_lane == 0) {
            ((double *)(fj_scr + 0))[fj_w] = fj_a_v2;
        }
    }
}

/* k0 phase 0: combine each row's 1024 parts in order; epilogue */
extern "C" __global__ void __launch_bounds__(256) fj_l2_sum_k0_f0(float *b1, unsigned char *fj_scr) {
    typedef long long fj_idx;
    __shared__ long long fj_sh[64];
    const int fj_lane = threadIdx.x;
    for (fj_idx fj_o = blockIdx.x; fj_o < 1; fj_o += gridDim.x) {
        double fj_a_v2 = 0.0;
        for (fj_idx fj_q = fj_lane; fj_q < 1024; fj_q += 256) fj_a_v2 = fj_op_add()(fj_a_v2, ((double *)(fj_scr + 0))[fj_o * 1024 + fj_q]);
        fj_a_v2 = fj_team_reduce<256>(fj_a_v2, fj_op_add(), fj_sh);
        const float v2 = (float)fj_a_v2;
        if (fj_lane == 0) ((float *)(fj_scr + 8192))[fj_o] = v2;
        if (fj_lane == 0) {
            const fj_idx i0 = fj_o;
            const float v3 = ((float)sqrtf(v2));
            b1[0] = v3;
        }
    }
}
