// The GEMM epilogue kernels on mma.sync (kernels/emit/builtin_gemm_epi_mma.c):
// 3xTF32 split helpers, loaders, products, k-tile and stores.
//@ helpers
#ifndef KF_GEMM_EPI_MMA
#define KF_GEMM_EPI_MMA
// big = tf32(x) (rounded), small = x - big (exact)
__device__ __forceinline__ void kfg_split(float x, unsigned& big, unsigned& small)
{
    const unsigned h = (__float_as_uint(x) + 0x1000u) & 0xffffe000u;
    big = h;
    small = __float_as_uint(x - __uint_as_float(h));
}
#ifdef __CUDACC__ // (on the host: tests/tools/emulate_shim_mma.h)
__device__ __forceinline__ void kfg_mma_bf16(float (&d)[4], const unsigned (&a)[4], unsigned b0, unsigned b1)
{
    asm("mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32 {%0, %1, %2, %3}, {%4, %5, %6, %7}, {%8, %9}, {%0, %1, %2, %3};\n"
        : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3])
        : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b0), "r"(b1));
}
__device__ __forceinline__ void kfg_mma_tf32(float (&d)[4], const unsigned (&a)[4], unsigned b0, unsigned b1)
{
    asm("mma.sync.aligned.m16n8k8.row.col.f32.tf32.tf32.f32 {%0, %1, %2, %3}, {%4, %5, %6, %7}, {%8, %9}, {%0, %1, %2, %3};\n"
        : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3])
        : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b0), "r"(b1));
}
#endif
#endif
//@ loader_head
    auto load = [&](int stage, int kt) {
        const long long k0 = kbeg + (long long)kt * BK;
        const unsigned sa = sbase + stage * (SA + SB) * 4, sb = sa + SA * 4;
//@ loader_a
#pragma unroll
        for (int e = 0; e < BM * 8 / NTHR; e++) {
            const int id = tid + e * NTHR, r = id >> 3, q = id & 7;
            const long long gr = m0 + r, gk = k0 + q * 4;
            const bool in = gr < M && gk < kend;
            kfg_cp16(sa + (r * BK + ((q ^ ((r & 1) << 2)) << 2)) * 4, in ? A + gr * K + gk : A, in);
        }
//@ loader_b
#pragma unroll
        for (int e = 0; e < BK * (BN / 4) / NTHR; e++) {
            const int id = tid + e * NTHR, r = id / (BN / 4), q = id % (BN / 4);
            const long long gk = k0 + r, gc = n0 + q * 4;
            const bool in = gk < kend && gc < N;
            kfg_cp16(sb + (r * BN + ((q ^ (((r >> 2) & 3) << 1)) << 2)) * 4, in ? B + gk * N + gc : B, in);
        }
//@ loader_b_tile
#pragma unroll 2
        for (int e = 0; e < BK * BN / NTHR; e++) {
            const int id = tid + e * NTHR, r = @R@, cc = @C@;
            const long long gk = k0 + r, gc = n0 + cc;
            const bool in = gk < kend && gc < N;
            kfg_cp4(sb + (r * BN + (((cc >> 2) ^ (((r >> 2) & 3) << 1)) << 2) + (cc & 3)) * 4, in ? B + @IDX@ : B, in);
        }
//@ products_split
                // tf32 big*big; both small products as one bf16 m16n8k16: slots 2t, 2t+1
                // are k = 4t+2s, 4t+2s+1 of small(a)*b, slots 2t+8, 2t+9 of a*small(b)
                unsigned ab[MT][4], ap[MT][4], bb[NQ * 4][2], bp[NQ * 4][2];
#pragma unroll
                for (int i = 0; i < MT; i++) {
                    const float x00 = s ? ra[i][0].z : ra[i][0].x, x01 = s ? ra[i][0].w : ra[i][0].y;
                    const float x10 = s ? ra[i][1].z : ra[i][1].x, x11 = s ? ra[i][1].w : ra[i][1].y;
                    unsigned s00, s01, s10, s11;
                    kfg_split(x00, ab[i][0], s00);
                    kfg_split(x10, ab[i][1], s10);
                    kfg_split(x01, ab[i][2], s01);
                    kfg_split(x11, ab[i][3], s11);
                    ap[i][0] = kfg_bf2(__uint_as_float(s00), __uint_as_float(s01));
                    ap[i][1] = kfg_bf2(__uint_as_float(s10), __uint_as_float(s11));
                    ap[i][2] = kfg_bf2(x00, x01);
                    ap[i][3] = kfg_bf2(x10, x11);
                }
#pragma unroll
                for (int qq = 0; qq < NQ; qq++) {
                    const float4 y0 = rb[2 * s][qq], y1 = rb[2 * s + 1][qq];
                    const float v0[4] = { y0.x, y0.y, y0.z, y0.w }, v1[4] = { y1.x, y1.y, y1.z, y1.w };
#pragma unroll
                    for (int jj = 0; jj < 4; jj++) {
                        unsigned s0, s1;
                        kfg_split(v0[jj], bb[4 * qq + jj][0], s0);
                        kfg_split(v1[jj], bb[4 * qq + jj][1], s1);
                        bp[4 * qq + jj][0] = kfg_bf2(v0[jj], v1[jj]);
                        bp[4 * qq + jj][1] = kfg_bf2(__uint_as_float(s0), __uint_as_float(s1));
                    }
                }
#pragma unroll
                for (int i = 0; i < MT; i++)
#pragma unroll
                    for (int j = 0; j < NQ * 4; j++) {
                        kfg_mma_bf16(part[i][j], ap[i], bp[j][0], bp[j][1]);
                        kfg_mma_tf32(part[i][j], ab[i], bb[j][0], bb[j][1]);
                    }
//@ products_frags
                unsigned ab[MT][4], as[MT][4], bb[NQ * 4][2], bs[NQ * 4][2];
#pragma unroll
                for (int i = 0; i < MT; i++) {
                    kfg_split(s ? ra[i][0].z : ra[i][0].x, ab[i][0], as[i][0]);
                    kfg_split(s ? ra[i][1].z : ra[i][1].x, ab[i][1], as[i][1]);
                    kfg_split(s ? ra[i][0].w : ra[i][0].y, ab[i][2], as[i][2]);
                    kfg_split(s ? ra[i][1].w : ra[i][1].y, ab[i][3], as[i][3]);
                }
#pragma unroll
                for (int qq = 0; qq < NQ; qq++) {
                    const float4 x0 = rb[2 * s][qq], x1 = rb[2 * s + 1][qq];
                    const float v0[4] = { x0.x, x0.y, x0.z, x0.w }, v1[4] = { x1.x, x1.y, x1.z, x1.w };
#pragma unroll
                    for (int jj = 0; jj < 4; jj++) {
                        kfg_split(v0[jj], bb[4 * qq + jj][0], bs[4 * qq + jj][0]);
                        kfg_split(v1[jj], bb[4 * qq + jj][1], bs[4 * qq + jj][1]);
                    }
                }
                // small products first
#pragma unroll
                for (int i = 0; i < MT; i++)
#pragma unroll
                    for (int j = 0; j < NQ * 4; j++) {
                        kfg_mma_tf32(part[i][j], as[i], bb[j][0], bb[j][1]);
                        kfg_mma_tf32(part[i][j], ab[i], bs[j][0], bs[j][1]);
                        kfg_mma_tf32(part[i][j], ab[i], bb[j][0], bb[j][1]);
                    }
//@ store_head
    kfg_wait<0>();
    // thread (g, t): rows g, g + 8 of each m16 tile; per group of 4 n-tiles
    // the 8 contiguous columns 8t..8t+7 (acc[i][4qq + jj][2rr] column jj,
    // acc[i][4qq + jj][2rr + 1] column 4 + jj)
#pragma unroll
    for (int i = 0; i < MT; i++)
#pragma unroll
        for (int rr = 0; rr < 2; rr++) {
            const long long m = m0 + wm0 + 16 * i + g + 8 * rr;
            if (m >= M) continue;
#pragma unroll
            for (int qq = 0; qq < NQ; qq++) {
                const long long n = n0 + wn0 + 32 * qq + 8 * t;
                if (n >= N) continue;
                float o[8];
#pragma unroll
                for (int jj = 0; jj < 4; jj++) {
                    o[jj] = epi(acc[i][4 * qq + jj][2 * rr], m, n + jj);
                    o[4 + jj] = epi(acc[i][4 * qq + jj][2 * rr + 1], m, n + 4 + jj);
                }
                float* p = Cout + m * N + n;
//@ store_vec
                if (n + 8 <= N) {
                    *(float4*)p = make_float4(o[0], o[1], o[2], o[3]);
                    *(float4*)(p + 4) = make_float4(o[4], o[5], o[6], o[7]);
                    continue;
                }
//@ store_scalar
#pragma unroll
                for (int jj = 0; jj < 8; jj++)
                    if (n + jj < N) p[jj] = o[jj];
            }
        }
//@ ktile
        float part[MT][NQ * 4][4];
#pragma unroll
        for (int i = 0; i < MT; i++)
#pragma unroll
            for (int j = 0; j < NQ * 4; j++)
#pragma unroll
                for (int e = 0; e < 4; e++) part[i][j][e] = 0.0f;
#pragma unroll
        for (int h = 0; h < BK / 16; h++) {
            float4 ra[MT][2], rb[4][NQ];
#pragma unroll
            for (int i = 0; i < MT; i++) {
                const unsigned col = ((4 * h + t) ^ (@A_SWZ@)) << 4;
                ra[i][0] = kfg_lds128(sa + a_off[i] + col);
                ra[i][1] = kfg_lds128(sa + a_off[i] + 8 * BK * 4 + col);
            }
#pragma unroll
            for (int q = 0; q < 4; q++)
#pragma unroll
                for (int qq = 0; qq < NQ; qq++) rb[q][qq] = kfg_lds128(sb + b_off[qq] + (16 * h + q) * BN * 4);
#pragma unroll
            for (int s = 0; s < 2; s++) {
//@ ktile_fadd
            }
        }
        // the tile's sum added with FADD: tensor-core accumulation truncates
#pragma unroll
        for (int i = 0; i < MT; i++)
#pragma unroll
            for (int j = 0; j < NQ * 4; j++)
#pragma unroll
                for (int e = 0; e < 4; e++) acc[i][j][e] += part[i][j][e];
//@ main
    float acc[MT][NQ * 4][4];
#pragma unroll
    for (int i = 0; i < MT; i++)
#pragma unroll
        for (int j = 0; j < NQ * 4; j++)
#pragma unroll
            for (int e = 0; e < 4; e++) acc[i][j][e] = 0.0f;
#pragma unroll
    for (int st = 0; st < STAGES - 1; st++) {
        if (st < ktiles) load(st, st);
        kfg_commit();
    }
    unsigned a_off[MT], b_off[NQ];   // fragment addresses (bytes, within a stage)
#pragma unroll
    for (int i = 0; i < MT; i++) a_off[i] = (wm0 + 16 * i + g) * BK * 4;
#pragma unroll
    for (int q = 0; q < NQ; q++) b_off[q] = (4 * t * BN + ((((wn0 >> 2) + 8 * q + g) ^ (t << 1)) << 2)) * 4;
    for (int kt = 0; kt < ktiles; kt++) {
        kfg_wait<STAGES - 2>();
        __syncthreads();
        if (kt + STAGES - 1 < ktiles) load((kt + STAGES - 1) % STAGES, kt + STAGES - 1);
        kfg_commit();
        const unsigned sa = sbase + (kt % STAGES) * (SA + SB) * 4, sb = sa + SA * 4;
