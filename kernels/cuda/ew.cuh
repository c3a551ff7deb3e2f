// ew (kernels/builtin_ew.c): the grid-stride loop of the elementwise kernel,
// @ILP@ vectors of type @VT@ per thread, loaded with @LOAD@.
//@ loop
    for (long long i = tid; i < nv; i += nthreads * @ILP@) {
        @VT@ r[@ILP@];
#pragma unroll
        for (int k = 0; k < @ILP@; k++) {
            long long j = i + k * nthreads;
            if (j < nv) r[k] = @LOAD@;
        }
#pragma unroll
        for (int k = 0; k < @ILP@; k++) {
            long long j = i + k * nthreads;
            if (j >= nv) break;
