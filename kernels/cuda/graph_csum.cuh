// The graph template's channel-sum kernels (kernels/graph/builtin_graph_csum.c):
// per-bucket partial sums and the ordered steps over them.
//@ bucket_sums
    /* xs[o][b] = sum of x's @IX@ positions of channel row o in bucket b (@NB@), in double, fixed order */
    __shared__ double sh[256];
    const float* xr = x + (long long)blockIdx.x * @IX@LL;
    double s[@NB@];
#pragma unroll
    for (int b = 0; b < @NB@; b++)
        s[b] = 0.0;
//@ steps
        for (int t = 0; t < @T@; t++) {
            double r = 0.0;
            for (int b = 0; b < @NB@; b++)
                if (@KV@[b * @T@ + t])
                    r += xb[b];
            s += (double)wp[t] * r;
        }
    }
