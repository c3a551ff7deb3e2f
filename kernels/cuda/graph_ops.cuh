// the graph template's op kernels (kernels/graph/builtin_graph_ops.c).
//@ helpers_end
        }
        __syncthreads();
    }
    const double r = sh[0];
    __syncthreads();
    return r;
}

//@ linear_store
        __syncthreads();
    }
    for (int ti = 0; ti < TM; ti++) {
        const long long r = row0 + tr * TM + ti;
        if (r >= M) break;
        for (int tj = 0; tj < TN; tj++) {
            const long long cc = col0 + tc * TN + tj;
            if (cc >= N) break;
//@ conv_taps
        const float* wp = w + (long long)(co * cpg + cj) * (KD * KH * KW);
        for (int kd = 0; kd < KD; ++kd) {
            const int id = od * SD - PD + kd * DILD;
            if (id < 0 || id >= ID) continue;
            for (int kh = 0; kh < KH; ++kh) {
                const int ih = oh * SH - PH + kh * DILH;
                if (ih < 0 || ih >= IH) continue;
                for (int kw = 0; kw < KW; ++kw) {
                    const int iw = ow * SW - PW + kw * DILW;
                    if (iw < 0 || iw >= IW) continue;
//@ convt_taps
        const float* wp = w + (long long)(ci * opg + oc) * (KD * KH * KW);
        for (int kd = 0; kd < KD; ++kd) {
            const int nd = od + PD - kd * DILD;
            if (nd < 0 || nd % SD != 0 || nd / SD >= ID) continue;
            const int id = nd / SD;
            for (int kh = 0; kh < KH; ++kh) {
                const int nh = oh + PH - kh * DILH;
                if (nh < 0 || nh % SH != 0 || nh / SH >= IH) continue;
                const int ih = nh / SH;
                for (int kw = 0; kw < KW; ++kw) {
                    const int nw = ow + PW - kw * DILW;
                    if (nw < 0 || nw % SW != 0 || nw / SW >= IW) continue;
                    const int iw = nw / SW;
//@ conv_end
                }
            }
        }
    }
//@ pool_max
    float m = __int_as_float((int)0xff800000);
    for (int kd = 0; kd < KD; ++kd) {
        const int id = d0 + kd * DILD;
        if (id < 0 || id >= ID) continue;
        for (int kh = 0; kh < KH; ++kh) {
            const int ih = h0 + kh * DILH;
            if (ih < 0 || ih >= IH) continue;
            for (int kw = 0; kw < KW; ++kw) {
                const int iw = w0 + kw * DILW;
                if (iw < 0 || iw >= IW) continue;
                const float a = xp[((long long)id * IH + ih) * IW + iw];
                if (a > m || a != a) m = a;   /* NaN propagates */
            }
        }
    }
//@ pool_avg
    const int d1 = min(d0 + KD, ID + PD), h1 = min(h0 + KH, IH + PH), w1 = min(w0 + KW, IW + PW);
    const float divisor = (float)((d1 - d0) * (h1 - h0) * (w1 - w0));
    float s = 0.0f;
    for (int id = max(d0, 0); id < min(d1, ID); ++id)
        for (int ih = max(h0, 0); ih < min(h1, IH); ++ih)
            for (int iw = max(w0, 0); iw < min(w1, IW); ++iw)
                s += xp[((long long)id * IH + ih) * IW + iw];
//@ adaptive_sum
;
    double s = 0.0;
    for (long long r = threadIdx.x; r < count; r += blockDim.x) {
        long long q = r, off = base;
//@ adaptive_end
        s += (double)x[off];
    }
    s = block_sum(s, sh);
    if (threadIdx.x == 0)
