

/* k0: domain [40]; nodes []
   launch: block 256, grid 1 */
extern "C" __global__ void __launch_bounds__(256) fj_complex_k0(const fj_c64 *b0, const fj_c64 *b1, fj_c64 *b2, float *b3) {
    typedef int fj_idx;
    const fj_idx fj_n = 40;
    const fj_idx fj_step = (fj_idx)gridDim.x * (fj_idx)blockDim.x;
    fj_idx fj_i = (fj_idx)blockIdx.x * (fj_idx)blockDim.x + (fj_idx)threadIdx.x;
    for (; fj_i < fj_n; fj_i += fj_step) {
        const fj_idx i0 = fj_i;
        const fj_c64 v0 = b0[i0];
        const fj_c64 v1 = ((fj_c64)fj_lm_cexpf(v0));
        const fj_c64 v2 = b1[i0];
        const fj_c64 v3 = ((fj_c64)fj_cmul_c64(v1, v2));
        const fj_c64 v4 = fj_cbuild(0x0.0p+0f, 0x1.0000000000000p+0f);
        const fj_c64 v5 = ((fj_c64)(v0 + v4));
        const fj_c64 v6 = ((fj_c64)fj_cdiv_c64(v3, v5));
        b2[i0] = v6;
        const float v7 = ((float)fj_cabs_c64(v0));
        const float v8 = ((float)(v7));
        b3[i0] = v8;
    }
}

/* k1: reduction of 1 row(s) of 40, 1 phase(s); a team of 64 thread(s) per row, 1 row(s) per block; rows re-read between phases; nodes [] */
extern "C" __global__ void __launch_bounds__(64) fj_complex_k1(const fj_c64 *b0, const fj_c64 *b1, fj_c64 *b4, fj_c64 *b5) {
    typedef int fj_idx;
    __shared__ long long fj_sh[64] __attribute__((aligned(16)));
    const int fj_lane = threadIdx.x % 64;
    const fj_idx fj_team = threadIdx.x / 64;
    for (fj_idx fj_base = (fj_idx)blockIdx.x * 1; fj_base < 1; fj_base += (fj_idx)gridDim.x * 1) {
        const fj_idx fj_o = fj_base + fj_team;
        const bool fj_on = fj_o < 1;
        const fj_idx fj_len = fj_on ? 40 : 0;
        const fj_idx i0 = (fj_on ? fj_o : 0);
        double fj_a_v2 = 0.0;
        double fj_a_v4 = 0.0;
        fj_c64 fj_a_v7 = 1;
        for (fj_idx fj_j = 0 + fj_lane; fj_j < fj_len; fj_j += 64) {
            const fj_idx i1 = fj_j;
            const fj_c64 v0 = b0[i1];
            const float v1 = ((float)(fj_re(v0)));
            fj_a_v2 = fj_op_add()(fj_a_v2, (double)(v1));
            const float v3 = ((float)(fj_im(v0)));
            fj_a_v4 = fj_op_add()(fj_a_v4, (double)(v3));
            const fj_c64 v5 = b1[i1];
            const fj_c64 v6 = ((fj_c64)fj_cmul_c64(v0, v5));
            fj_a_v7 = fj_op_mul()(fj_a_v7, (fj_c64)(v6));
        }
        fj_a_v2 = fj_team_reduce<64>(fj_a_v2, fj_op_add(), fj_sh);
        fj_a_v4 = fj_team_reduce<64>(fj_a_v4, fj_op_add(), fj_sh);
        fj_a_v7 = fj_team_reduce<64>(fj_a_v7, fj_op_mul(), fj_sh);
        const float v2 = (float)fj_a_v2;
        const float v4 = (float)fj_a_v4;
        const fj_c64 v7 = (fj_c64)fj_a_v7;
        if (fj_on && fj_lane == 0) {
            const fj_c64 v8 = ((fj_c64)fj_cpack_c64(v2, v4));
            b4[0] = v8;
            b5[0] = v7;
        }
    }
}
