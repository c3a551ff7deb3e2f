// 3xTF32 on wmma m16n16k8: each K tile's products, x split as hi = tf32(x)
// and lo = tf32(x - hi), into a fresh fragment part, then FADDed into acc
// (tensor-core accumulation truncates: long sums drift past 1e-4).
// part_init, split_kstep: conv_tc (kernels/builtin_convtc.c) and the conv
// epilogue kernels (kernels/emit/builtin_conv_epi.c), As k-major (BM + 8
// wide), Bs n-major (BK + 4 wide); products, fadd: those and matmul_tc
// (kernels/builtin_mv.c, tmpl_tc_emit_mma).
//@ part_init
        wmma::fragment<wmma::accumulator, 16, 16, 8, float> part[FM][FN];
#pragma unroll
        for (int i = 0; i < FM; i++)
#pragma unroll
            for (int j = 0; j < FN; j++) wmma::fill_fragment(part[i][j], 0.0f);
//@ split_kstep
#pragma unroll 1
        for (int kk = 0; kk < BK; kk += 8) {
            wmma::fragment<wmma::matrix_a, 16, 16, 8, wmma::precision::tf32, wmma::col_major> ah[FM], al[FM];
            wmma::fragment<wmma::matrix_b, 16, 16, 8, wmma::precision::tf32, wmma::col_major> bh[FN], bl[FN];
#pragma unroll
            for (int i = 0; i < FM; i++) {
                wmma::load_matrix_sync(ah[i], As + kk * (BM + 8) + (wm * FM + i) * 16, BM + 8);
#pragma unroll
                for (int e = 0; e < ah[i].num_elements; e++) {
                    const float v = ah[i].x[e], h = wmma::__float_to_tf32(v);
                    ah[i].x[e] = h;
                    al[i].x[e] = wmma::__float_to_tf32(v - h);
                }
            }
#pragma unroll
            for (int j = 0; j < FN; j++) {
                wmma::load_matrix_sync(bh[j], Bs + (wn * FN + j) * 16 * (BK + 4) + kk, BK + 4);
#pragma unroll
                for (int e = 0; e < bh[j].num_elements; e++) {
                    const float v = bh[j].x[e], h = wmma::__float_to_tf32(v);
                    bh[j].x[e] = h;
                    bl[j].x[e] = wmma::__float_to_tf32(v - h);
                }
            }
//@ products
#pragma unroll
            for (int i = 0; i < FM; i++)
#pragma unroll
                for (int j = 0; j < FN; j++) {
                    // small terms first
                    wmma::mma_sync(part[i][j], al[i], bh[j], part[i][j]);
                    wmma::mma_sync(part[i][j], ah[i], bl[j], part[i][j]);
                    wmma::mma_sync(part[i][j], ah[i], bh[j], part[i][j]);
                }
        }
//@ fadd
#pragma unroll
        for (int i = 0; i < FM; i++)
#pragma unroll
            for (int j = 0; j < FN; j++)
#pragma unroll
                for (int e = 0; e < acc[i][j].num_elements; e++) acc[i][j].x[e] += part[i][j].x[e];
