

/* k0: domain [64, 64]; nodes []
   launch: block 256, grid 4, 4 elements per vector step */
extern "C" __global__ void __launch_bounds__(256) fj_lstm_cell_k0(const float *b0, const float *b1, float *b2, float *b3) {
    typedef int fj_idx;
    const fj_idx fj_n = 4096;
    const fj_idx fj_step = (fj_idx)gridDim.x * (fj_idx)blockDim.x;
    fj_idx fj_i = (fj_idx)blockIdx.x * (fj_idx)blockDim.x + (fj_idx)threadIdx.x;
    if (fj_aligned(b0, 16) && fj_aligned(b1, 16) && fj_aligned(b2, 16) && fj_aligned(b3, 16)) {
        for (fj_idx fj_c = fj_i; fj_c < fj_n / 4; fj_c += fj_step) {
            fj_idx fj_r = fj_c * 4;
            const fj_idx i1 = fj_r % 64;
            fj_r /= 64;
            const fj_idx i0 = fj_r;
            const fj_vec<float, 4> fj_l0 = *(const fj_vec<float, 4> *)(b1 + (i0 * 64 + i1));
            const fj_vec<float, 4> fj_l1 = *(const fj_vec<float, 4> *)(b0 + (128 + i0 * 256 + i1));
            const fj_vec<float, 4> fj_l2 = *(const fj_vec<float, 4> *)(b0 + (i0 * 256 + i1));
            const fj_vec<float, 4> fj_l3 = *(const fj_vec<float, 4> *)(b0 + (64 + i0 * 256 + i1));
            fj_vec<float, 4> fj_s4;
            const fj_vec<float, 4> fj_l5 = *(const fj_vec<float, 4> *)(b0 + (192 + i0 * 256 + i1));
            fj_vec<float, 4> fj_s6;
            #pragma unroll
            for (int fj_u = 0; fj_u < 4; fj_u++) {
                const float v0 = fj_l0.v[fj_u];
                const float v1 = 0x1.0000000000000p+0f;
                const float v2 = fj_l1.v[fj_u];
                const float v4 = ((float)(v2 + v1));
                const float v5 = ((float)fj_neg_f32(v4));
                const float v6 = ((float)fj_exp_f32(v5));
                const float v7 = ((float)(v1 + v6));
                const float v8 = ((float)(v1 / v7));
                const float v9 = ((float)(v0 * v8));
                const float v10 = fj_l2.v[fj_u];
                const float v12 = ((float)fj_neg_f32(v10));
                const float v13 = ((float)fj_exp_f32(v12));
                const float v14 = ((float)(v1 + v13));
                const float v15 = ((float)(v1 / v14));
                const float v16 = fj_l3.v[fj_u];
                const float v18 = ((float)fj_tanh_f32(v16));
                const float v19 = ((float)(v15 * v18));
                const float v20 = ((float)(v9 + v19));
                fj_s4.v[fj_u] = v20;
                const float v21 = ((float)fj_tanh_f32(v20));
                const float v22 = fj_l5.v[fj_u];
                const float v24 = ((float)fj_neg_f32(v22));
                const float v25 = ((float)fj_exp_f32(v24));
                const float v26 = ((float)(v1 + v25));
                const float v27 = ((float)(v1 / v26));
                const float v28 = ((float)(v21 * v27));
                fj_s6.v[fj_u] = v28;
            }
            *(fj_vec<float, 4> *)(b2 + (i0 * 64 + i1)) = fj_s4;
            *(fj_vec<float, 4> *)(b3 + (i0 * 64 + i1)) = fj_s6;
        }
        fj_i += fj_n / 4 * 4;
    }
    for (; fj_i < fj_n; fj_i += fj_step) {
        fj_idx fj_r = fj_i;
        const fj_idx i1 = fj_r % 64;
        fj_r /= 64;
        const fj_idx i0 = fj_r;
        const float v0 = b1[i0 * 64 + i1];
        const float v1 = 0x1.0000000000000p+0f;
        const float v2 = b0[128 + i0 * 256 + i1];
        const float v4 = ((float)(v2 + v1));
        const float v5 = ((float)fj_neg_f32(v4));
        const float v6 = ((float)fj_exp_f32(v5));
        const float v7 = ((float)(v1 + v6));
        const float v8 = ((float)(v1 / v7));
        const float v9 = ((float)(v0 * v8));
        const float v10 = b0[i0 * 256 + i1];
        const float v12 = ((float)fj_neg_f32(v10));
        const float v13 = ((float)fj_exp_f32(v12));
        const float v14 = ((float)(v1 + v13));
        const float v15 = ((float)(v1 / v14));
        const float v16 = b0[64 + i0 * 256 + i1];
        const float v18 = ((float)fj_tanh_f32(v16));
        const float v19 = ((float)(v15 * v18));
        const float v20 = ((float)(v9 + v19));
        b2[i0 * 64 + i1] = v20;
        const float v21 = ((float)fj_tanh_f32(v20));
        const float v22 = b0[192 + i0 * 256 + i1];
        const float v24 = ((float)fj_neg_f32(v22));
        const float v25 = ((float)fj_exp_f32(v24));
        const float v26 = ((float)(v1 + v25));
        const float v27 = ((float)(v1 / v26));
        const float v28 = ((float)(v21 * v27));
        b3[i0 * 64 + i1] = v28;
    }
}
