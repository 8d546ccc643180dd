

/* k0: domain [32768]; nodes []
   launch: block 256, grid 32, 4 elements per vector step */
extern "C" __global__ void __launch_bounds__(256) fj_gelu_k0(const float *b0, float *b1) {
    typedef int fj_idx;
    const fj_idx fj_n = 32768;
    const fj_idx fj_step = (fj_idx)gridDim.x * (fj_idx)blockDim.x;
    fj_idx fj_i = (fj_idx)blockIdx.x * (fj_idx)blockDim.x + (fj_idx)threadIdx.x;
    if (fj_aligned(b0, 16) && fj_aligned(b1, 16)) {
        for (fj_idx fj_c = fj_i; fj_c < fj_n / 4; fj_c += fj_step) {
            const fj_idx i0 = fj_c * 4;
            const fj_vec<float, 4> fj_l0 = *(const fj_vec<float, 4> *)(b0 + (i0));
            fj_vec<float, 4> fj_s1;
            #pragma unroll
            for (int fj_u = 0; fj_u < 4; fj_u++) {
                const float v0 = 0x1.0000000000000p-1f;
                const float v1 = fj_l0.v[fj_u];
                const float v2 = ((float)(v0 * v1));
                const float v3 = 0x1.0000000000000p+0f;
                const float v4 = 0x1.9884540000000p-1f;
                const float v5 = 0x1.6e4e260000000p-5f;
                const float v6 = ((float)(v5 * v1));
                const float v7 = ((float)(v6 * v1));
                const float v8 = ((float)(v7 * v1));
                const float v9 = ((float)(v1 + v8));
                const float v10 = ((float)(v4 * v9));
                const float v11 = ((float)fj_tanh_f32(v10));
                const float v12 = ((float)(v3 + v11));
                const float v13 = ((float)(v2 * v12));
                fj_s1.v[fj_u] = v13;
            }
            *(fj_vec<float, 4> *)(b1 + (i0)) = fj_s1;
        }
        fj_i += fj_n / 4 * 4;
    }
    for (; fj_i < fj_n; fj_i += fj_step) {
        const fj_idx i0 = fj_i;
        const float v0 = 0x1.0000000000000p-1f;
        const float v1 = b0[i0];
        const float v2 = ((float)(v0 * v1));
        const float v3 = 0x1.0000000000000p+0f;
        const float v4 = 0x1.9884540000000p-1f;
        const float v5 = 0x1.6e4e260000000p-5f;
        const float v6 = ((float)(v5 * v1));
        const float v7 = ((float)(v6 * v1));
        const float v8 = ((float)(v7 * v1));
        const float v9 = ((float)(v1 + v8));
        const float v10 = ((float)(v4 * v9));
        const float v11 = ((float)fj_tanh_f32(v10));
        const float v12 = ((float)(v3 + v11));
        const float v13 = ((float)(v2 * v12));
        b1[i0] = v13;
    }
}
