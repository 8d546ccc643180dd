

/* k0: reduction of 64 row(s) of 1000, 3 phase(s); a team of 256 thread(s) per row, 1 row(s) per block; rows held in registers (4 element(s) per thread); nodes [] */
extern "C" __global__ void __launch_bounds__(256, 8) fj_softmax_k0(const float *b0, float *b1) {
    typedef int fj_idx;
    __shared__ long long fj_sh[64];
    const int fj_lane = threadIdx.x % 256;
    const fj_idx fj_team = threadIdx.x / 256;
    for (fj_idx fj_base = (fj_idx)blockIdx.x * 1; fj_base < 64; fj_base += (fj_idx)gridDim.x * 1) {
        const fj_idx fj_o = fj_base + fj_team;
        const bool fj_on = fj_o < 64;
        const fj_idx fj_len = fj_on ? 1000 : 0;
        const fj_idx i0 = (fj_on ? fj_o : 0);
        float fj_h0[4];
        float fj_h1[4];
        float fj_a_v1 = (-__builtin_inff());
        #pragma unroll
        for (int fj_u = 0; fj_u < 4; fj_u++) {
            const fj_idx fj_j = fj_lane + (fj_idx)fj_u * 256;
            if (fj_j < fj_len) {
                const fj_idx i1 = fj_j;
                const float v0 = b0[i0 * 1000 + i1];
                fj_h0[fj_u] = v0;
                fj_a_v1 = fj_op_max()(fj_a_v1, (float)(v0));
            }
        }
        fj_a_v1 = fj_team_reduce<256>(fj_a_v1, fj_op_max(), fj_sh);
        const float v1 = (float)fj_a_v1;
        double fj_a_v5 = 0.0;
        #pragma unroll
        for (int fj_u = 0; fj_u < 4; fj_u++) {
            const fj_idx fj_j = fj_lane + (fj_idx)fj_u * 256;
            if (fj_j < fj_len) {
                const fj_idx i1 = fj_j;
                const float v2 = fj_h0[fj_u];
                const float v3 = ((float)(v2 - v1));
                const float v4 = ((float)fj_exp_f32(v3));
                fj_h1[fj_u] = v4;
                fj_a_v5 = fj_op_add()(fj_a_v5, (double)(v4));
            }
        }
        fj_a_v5 = fj_team_reduce<256>(fj_a_v5, fj_op_add(), fj_sh);
        const float v5 = (float)fj_a_v5;
        #pragma unroll
        for (int fj_u = 0; fj_u < 4; fj_u++) {
            const fj_idx fj_j = fj_lane + (fj_idx)fj_u * 256;
            if (fj_j < fj_len) {
                const fj_idx i1 = fj_j;
                const float v6 = fj_h1[fj_u];
                const float v7 = ((float)(v6 / v5));
                b1[i0 * 1000 + i1] = v7;
                fj_h1[fj_u] = v7;
            }
        }
        if (fj_on && fj_lane == 0) {
        }
    }
}
