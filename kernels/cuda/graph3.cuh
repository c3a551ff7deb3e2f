// the level-3 graph kernels (kernels/graph/builtin_graph3.c): the GRU cell update.
//@ gru_update
    const float rg = 1.0f / (1.0f + expf(-(gx[0] + gh[0])));
    const float zg = 1.0f / (1.0f + expf(-(gx[1] + gh[1])));
    const float ng = tanhf(gx[2] + rg * gh[2]);
    const float h = (1.0f - zg) * ng + zg * hprev;
//@ attn_scores
        if (sc == __int_as_float(-8388608)) continue;
        if (sc > m) {
            const float f = expf(m - sc);
            l *= f;
#pragma unroll
            for (int c = 0; c < @DV@; c++) acc[c] *= f;
            m = sc;
        }
        const float pr = expf(sc - m);
        l += pr;
#pragma unroll
        for (int c = 0; c < @DV@; c++) acc[c] += pr * vp[j * @DV@LL + c];
    }
    const double mx = block_max((double)m, sh);
    const float f = m == __int_as_float(-8388608) ? 0.0f : expf((float)((double)m - mx));
    const double tot = block_sum(l * f, sh);
#pragma unroll
    for (int c = 0; c < @DV@; c++) {
        const double a = block_sum((double)(acc[c] * f), sh);
        if (threadIdx.x == 0) {
