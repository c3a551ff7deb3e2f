// scan (kernels/builtin_scan.c): the chunked inclusive scan (forward or
// reversed, masked or not) and its exclusive variant.
//@ load_vec4
#pragma unroll
        for (int q = 0; q < ITEMS / 4; q++) {
            const long long j = j0 + 4 * q;
            if (j < cols) {
                const float4 f = __ldg(reinterpret_cast<const float4*>(xr + @J@));
//@ mask_load
                const unsigned mw = __ldg(reinterpret_cast<const unsigned*>(mr + j));
#pragma unroll
                for (int b = 0; b < 4; b++)
                    if (!((mw >> (8 * b)) & 0xffu)) v[4 * q + b] = 0.0f;
//@ load_scalar
#pragma unroll
        for (int u = 0; u < ITEMS; u++) {
            const long long j = j0 + u;
            v[u] = @IDENT@;
            if (j < cols) {
                const long long pj = @J@;
//@ store_vec4
#pragma unroll
        for (int q = 0; q < ITEMS / 4; q++) {
            const long long j = j0 + 4 * q;
            if (j >= cols) break;
            const float4 f = make_float4(@VALS@);
//@ store
#pragma unroll
        for (int u = 0; u < ITEMS; u++) {
            const long long j = j0 + u;
            if (j >= cols) break;
//@ scan_head
    const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
    double carry = IDENT;   // the scan of all earlier tiles
    for (long long base = 0; base < cols; base += (long long)@BLOCK@ * ITEMS) {
        const long long j0 = base + (long long)threadIdx.x * ITEMS;
        float v[ITEMS];
//@ chunk_scan
        // thread-local inclusive scan of the chunk
#pragma unroll
        for (int u = 1; u < ITEMS; u++) v[u] = OP(v[u - 1], v[u]);
        // warp inclusive scan of the chunk totals
        acc_t inc = (acc_t)v[ITEMS - 1];
#pragma unroll
        for (int d = 1; d < 32; d <<= 1) {
            const acc_t n = __shfl_up_sync(0xffffffffu, inc, d);
            if (lane >= d) inc = OP(n, inc);
        }
        acc_t exc = __shfl_up_sync(0xffffffffu, inc, 1);
        if (lane == 0) exc = (acc_t)IDENT;
        if (lane == 31) wtot[warp] = inc;
        __syncthreads();
        acc_t woff = (acc_t)IDENT, tot = (acc_t)IDENT;
#pragma unroll
        for (int w = 0; w < NWARP; w++) {
            const acc_t t = wtot[w];
            if (w < warp) woff = OP(woff, t);
            tot = OP(tot, t);
        }
        __syncthreads();
        const acc_t off = (acc_t)OP(carry, (double)OP(woff, exc));
        carry = OP(carry, (double)tot);
//@ exclusive
#pragma unroll
        for (int u = ITEMS - 1; u > 0; u--) v[u] = (float)OP(off, (acc_t)v[u - 1]);
        v[0] = (float)off;
