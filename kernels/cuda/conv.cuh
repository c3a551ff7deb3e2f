// conv (kernels/builtin_conv.c): the direct convolution's shared-memory
// tile load and store (the gather itself is emitted per problem).
//@ tile_load_tail
                ra[q] = v;
            }
#pragma unroll
            for (int q = 0; q < LB; q++) {
                const int i = tid + q * NT, kk = i % BK, nn = i / BK, co = co0 + nn, k = kb + kk;
                rb[q] = (i < BN * BK && co < CO && k < K) ? __ldg(w + (long long)co * K + k) : 0.0f;
            }
        }
//@ tile_store
#pragma unroll
        for (int q = 0; q < LA; q++) {
            const int i = tid + q * NT;
            if (i < BM * BK) As[i / BM][i % BM] = ra[q];
        }
#pragma unroll
        for (int q = 0; q < LB; q++) {
            const int i = tid + q * NT;
            if (i < BN * BK) Bs[i % BK][i / BK] = rb[q];
        }
        __syncthreads();
