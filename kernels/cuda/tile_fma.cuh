// The register-blocked inner product of the tiled GEMMs (kernels/builtin_util.c
// bt_emit_tile_fma): acc[TM][TN] += av x bv over a BK tile of shared As, Bs;
// @A_INDEX@ is the row of As for register i.
//@ tile_fma
#pragma unroll
        for (int kk = 0; kk < BK; kk++) {
            float av[TM], bv[TN];
#pragma unroll
            for (int i = 0; i < TM; i++) av[i] = As[kk][@A_INDEX@];
#pragma unroll
            for (int j = 0; j < TN; j++) bv[j] = Bs[kk][tc * TN + j];
#pragma unroll
            for (int i = 0; i < TM; i++)
#pragma unroll
                for (int j = 0; j < TN; j++) acc[i][j] = fmaf(av[i], bv[j], acc[i][j]);
        }
