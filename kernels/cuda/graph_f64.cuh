// The graph template's double-precision path (kernels/graph/builtin_graph_f64.c):
// each float32 input is copied into a double buffer before the graph runs and
// the double result is rounded into the float32 output after it.
//@ convert
extern "C" __global__ void @NAME@(const @FROM@* __restrict__ x, @TO@* __restrict__ y, long long n)
{
    const long long step = (long long)gridDim.x * blockDim.x;
    for (long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x; i < n; i += step)
        y[i] = (@TO@)x[i];
}

//@ dmma
#ifdef __CUDACC__ // (on the host: tests/tools/emulate_dmma.h)
// d += a b on the fp64 tensor cores (mma m8n8k4): a holds A (row lane / 4, k lane % 4),
// b holds B (k lane % 4, column lane / 4), d holds D (row lane / 4, columns 2 (lane % 4) + 0, 1).
__device__ __forceinline__ void gf64_dmma(double (&d)[2], double a, double b)
{
    asm volatile("mma.sync.aligned.m8n8k4.row.col.f64.f64.f64.f64 {%0, %1}, {%2}, {%3}, {%0, %1};\n"
                 : "+d"(d[0]), "+d"(d[1]) : "d"(a), "d"(b));
}
#if __CUDA_ARCH__ >= 900
// sm_90's m16n8k16: a[v] holds A (row lane / 4 + 8 (v & 1), k lane % 4 + 4 (v >> 1)), b[v] B (k
// lane % 4 + 4v, column lane / 4); d0 D's rows lane / 4, d1 rows lane / 4 + 8, columns as above.
__device__ __forceinline__ void gf64_dmma16(double (&d0)[2], double (&d1)[2], const double (&a)[8], const double (&b)[4])
{
    asm volatile("mma.sync.aligned.m16n8k16.row.col.f64.f64.f64.f64 {%0, %1, %2, %3}, "
                 "{%4, %5, %6, %7, %8, %9, %10, %11}, {%12, %13, %14, %15}, {%0, %1, %2, %3};\n"
                 : "+d"(d0[0]), "+d"(d0[1]), "+d"(d1[0]), "+d"(d1[1])
                 : "d"(a[0]), "d"(a[1]), "d"(a[2]), "d"(a[3]), "d"(a[4]), "d"(a[5]), "d"(a[6]), "d"(a[7]),
                   "d"(b[0]), "d"(b[1]), "d"(b[2]), "d"(b[3]));
}
#endif
#endif
//@ dmma_head
    /* implicit GEMM on the fp64 tensor cores: a block's 64 rows x 64 of the NC columns,
     * KT in steps of 16 through shared memory, 4 warps of 32 x 32 */
    __shared__ double As[16][64 + 4];   /* [k][row]: the fragment reads miss no bank */
    __shared__ double Bs[64][16 + 4];   /* [column][k] */
    const int tid = threadIdx.x, lane = tid & 31;
    const int wm = (tid >> 6) * 32, wn = ((tid >> 5) & 1) * 32;
    const long long m0 = (long long)blockIdx.x * 64;
    const int n0 = blockIdx.y * 64;
    double ra[8], rb[8], acc[4][4][2];
#pragma unroll
    for (int i = 0; i < 4; i++)
#pragma unroll
        for (int j = 0; j < 4; j++) acc[i][j][0] = acc[i][j][1] = 0.0;
//@ conv_dmma
    /* rows: output pixels (a transposed conv's: the input's), columns: output channels (a
     * transposed conv's channels x taps), k = (ci, tap); a thread loads its pixel
     * (tid & 63) at k rows ar + 2j, and its k column bk of columns bc + 8j */
    const long long SP = (long long)OD * OH * OW, M = NB * SP;
    const int TAPS = KD * KH * KW, KT = CI * TAPS;
    const int ar = tid >> 6, bk = tid & 15, bc = tid >> 4;
    const long long am = m0 + (tid & 63);
    const bool mok = am < M;
    long long t = mok ? am : 0;
    const int ow = (int)(t % OW); t /= OW;
    const int oh = (int)(t % OH); t /= OH;
    const int od = (int)(t % OD);
    const double* xp = x + t / OD * CI * ((long long)ID * IH * IW);
    const int d0 = od * SD - PD, h0 = oh * SH - PH, w0 = ow * SW - PW;
    auto load = [&](int k0) {
#pragma unroll
        for (int j = 0; j < 8; j++) {
            const int k = k0 + ar + 2 * j;
            double v = 0.0;
            if (mok && k < KT) {
                const int ci = k / TAPS, tap = k % TAPS;
                const int id = d0 + tap / (KH * KW) * DILD, ih = h0 + tap / KW % KH * DILH, iw = w0 + tap % KW * DILW;
                if (id >= 0 && id < ID && ih >= 0 && ih < IH && iw >= 0 && iw < IW)
                    v = xp[(((long long)ci * ID + id) * IH + ih) * IW + iw];
            }
            ra[j] = v;
        }
#pragma unroll
        for (int j = 0; j < 8; j++) {
            const int co = n0 + bc + 8 * j, k = k0 + bk;
            rb[j] = co < NC && k < KT ? @BW@ : 0.0;
        }
    };
    auto stage = [&]() {
#pragma unroll
        for (int j = 0; j < 8; j++) {
            As[ar + 2 * j][tid & 63] = ra[j];
            Bs[bc + 8 * j][bk] = rb[j];
        }
    };
//@ mm_dmma
    /* C[z] = A B, A at a[aoff + m * KT + k], B at b[boff + k * NC + n], both rows
     * contiguous: a thread loads A's k (tid & 15) of rows (tid >> 4) + 8j and B's
     * column (tid & 63) at k rows (tid >> 6) + 2j */
    const long long z = blockIdx.z;
    long long aoff = 0, boff = 0;
@BOFFS@    const long long M = @M@LL;
    const int KT = @K@, NC = @N@;
    const int ak = tid & 15, arow = tid >> 4, bcol = tid & 63, bkr = tid >> 6;
    auto load = [&](int k0) {
#pragma unroll
        for (int j = 0; j < 8; j++) {
            const long long m = m0 + arow + 8 * j;
            ra[j] = m < M && k0 + ak < KT ? a[aoff + m * KT + k0 + ak] : 0.0;
            const int k = k0 + bkr + 2 * j;
            rb[j] = k < KT && n0 + bcol < NC ? b[boff + (long long)k * NC + n0 + bcol] : 0.0;
        }
    };
    auto stage = [&]() {
#pragma unroll
        for (int j = 0; j < 8; j++) {
            As[ak][arow + 8 * j] = ra[j];
            Bs[bcol][bkr + 2 * j] = rb[j];
        }
    };
//@ dmma_loop
    load(0);
    for (int k0 = 0; k0 < KT; k0 += 16) {
        stage();
        __syncthreads();
        if (k0 + 16 < KT) load(k0 + 16);   /* the next tile's loads in flight over the products */
//@ dmma_k4
#pragma unroll
        for (int kk = 0; kk < 16; kk += 4) {
            double fa[4], fb[4];
#pragma unroll
            for (int i = 0; i < 4; i++) {
                fa[i] = As[kk + (lane & 3)][wm + 8 * i + (lane >> 2)];
                fb[i] = Bs[wn + 8 * i + (lane >> 2)][kk + (lane & 3)];
            }
#pragma unroll
            for (int i = 0; i < 4; i++)
#pragma unroll
                for (int j = 0; j < 4; j++) gf64_dmma(acc[i][j], fa[i], fb[j]);
        }
//@ dmma_k16
        {   /* m16n8k16: rows 16i + 8 (v & 1), k 4 (v >> 1) of A's fragment; acc[2i], acc[2i + 1] its D */
            double fa[2][8], fb[4][4];
#pragma unroll
            for (int i = 0; i < 2; i++)
#pragma unroll
                for (int v = 0; v < 8; v++) fa[i][v] = As[(lane & 3) + 4 * (v >> 1)][wm + 16 * i + 8 * (v & 1) + (lane >> 2)];
#pragma unroll
            for (int j = 0; j < 4; j++)
#pragma unroll
                for (int v = 0; v < 4; v++) fb[j][v] = Bs[wn + 8 * j + (lane >> 2)][(lane & 3) + 4 * v];
#pragma unroll
            for (int i = 0; i < 2; i++)
#pragma unroll
                for (int j = 0; j < 4; j++) gf64_dmma16(acc[2 * i][j], acc[2 * i + 1][j], fa[i], fb[j]);
        }
//@ dmma_tail
        __syncthreads();
    }
#pragma unroll
    for (int i = 0; i < 4; i++)
#pragma unroll
        for (int j = 0; j < 4; j++)
#pragma unroll
            for (int h = 0; h < 2; h++) {
                const long long m = m0 + wm + 8 * i + (lane >> 2);
                const int co = n0 + wn + 8 * j + 2 * (lane & 3) + h;
                if (m >= M || co >= NC) continue;
                const double r = acc[i][j][h];
