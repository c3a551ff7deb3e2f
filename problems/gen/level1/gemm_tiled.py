"""The references' double-precision GEMM body, shared by the level-1 and
level-2/3 generators: 256 threads compute a (16*RM) x 64 tile of outputs,
RM x 4 each, with k staged through shared memory 16 at a time. Every output
still sums its k in order from 0 (one fused multiply-add per k, as the
one-thread-per-output loop it replaces), so the results are the same bits;
only the loads are shared. Python 3.11 stdlib only."""

BK = 16          # k per shared-memory stage
BN = 64          # output columns per block (4 per thread)
THREADS = 256    # 16 x 16 threads
GRID_YZ_MAX = 65535


def block_rows(M):
    """Output rows per block: 16 for skinny products, else 64."""
    return 16 if M <= 16 else 64


def fits(M, N, batch=1):
    """Whether the tiled kernel's grid fits (grid.y, grid.z under 65536)."""
    bm = block_rows(M)
    return (M + bm - 1) // bm <= GRID_YZ_MAX and batch <= GRID_YZ_MAX


def grid(M, N, batch=1, m_expr=None, n_expr=None, batch_expr=None):
    """The launch's grid: dim3(N tiles, M tiles, batch), as launch-block
    expressions (m_expr/n_expr/batch_expr: the launch block's names for the
    sizes, else the numbers)."""
    bm = block_rows(M)
    m = m_expr if m_expr is not None else str(M)
    n = n_expr if n_expr is not None else str(N)
    b = batch_expr if batch_expr is not None else str(batch)
    return "dim3(ceil_div(%s, %d), ceil_div(%s, %d), %s)" % (n, BN, m, bm, b)


def stage(i, tile, jj, j, j0, width, Je, Ke, k_fast, elem):
    """The loop that stages one operand's width x 16 slice into shared
    memory, consecutive threads walking k (k_fast) or the other index, so
    the loads follow the operand's layout; zeros outside it."""
    s = i + "    for (int e = threadIdx.x; e < %d; e += %d) {\n" % (BK * width, THREADS)
    if k_fast:
        s += i + "        const int kk = e %% %d, %s = e / %d;\n" % (BK, jj, BK)
    else:
        s += i + "        const int %s = e %% %d, kk = e / %d;\n" % (jj, width, width)
    s += i + "        const long long %s = %s + %s, k = k0 + kk;\n" % (j, j0, jj)
    s += i + "        %s[kk][%s] = %s < %s && k < %s ? (double)%s : 0.0;\n" % (tile, jj, j, Je, Ke, elem)
    s += i + "    }\n"
    return s


def body(M, a_at, b_at, a_k_contig, b_n_contig, epilogue, sizes, prelude="", indent="    ", init=None):
    """The kernel body. M: the row count (a number: it picks the tile).
    a_at(m, k), b_at(k, n): C expressions of the operands' elements
    (operands `a`, `b` are the kernel's parameter names inside them).
    a_k_contig / b_n_contig: whether consecutive k (for a) / n (for b) are
    adjacent in memory (the loads walk that way). epilogue: statements that
    store output (m, n) from `acc` (a double; m, n long long). sizes:
    (M, N, K) as C expressions. prelude: statements before the tiles (the
    batch's bases from blockIdx.z). init(m, n): a C expression each output's
    sum starts from (a bias the plain loop started from), else 0.0."""
    Me, Ne, Ke = sizes
    bm = block_rows(M)
    rm = bm // 16
    i = indent
    s = prelude
    s += i + "__shared__ double As[%d][%d];\n" % (BK, bm + 1)
    s += i + "__shared__ double Bs[%d][%d];\n" % (BK, BN + 1)
    s += i + "const int tx = threadIdx.x % 16, ty = threadIdx.x / 16;\n"
    s += i + "const long long m0 = blockIdx.y * (long long)%d, n0 = blockIdx.x * (long long)%d;\n" % (bm, BN)
    s += i + "double acc[%d][4];\n" % rm
    s += i + "for (int r = 0; r < %d; ++r)\n" % rm
    if init:
        s += i + "    for (int c = 0; c < 4; ++c) {\n"
        s += i + "        const long long m = m0 + ty + 16 * r, n = n0 + tx + 16 * c;\n"
        s += i + "        acc[r][c] = m < %s && n < %s ? %s : 0.0;\n" % (Me, Ne, init("m", "n"))
        s += i + "    }\n"
    else:
        s += i + "    for (int c = 0; c < 4; ++c) acc[r][c] = 0.0;\n"
    s += i + "for (long long k0 = 0; k0 < %s; k0 += %d) {\n" % (Ke, BK)
    s += i + "    const int kn = %s - k0 < %d ? (int)(%s - k0) : %d;\n" % (Ke, BK, Ke, BK)
    s += stage(i, "As", "mm", "m", "m0", bm, Me, Ke, a_k_contig, a_at("m", "k"))
    s += stage(i, "Bs", "nn", "n", "n0", BN, Ne, Ke, not b_n_contig, b_at("k", "n"))
    s += i + "    __syncthreads();\n"
    s += i + "    for (int kk = 0; kk < kn; ++kk) {\n"
    s += i + "        double av[%d], bv[4];\n" % rm
    s += i + "        for (int r = 0; r < %d; ++r) av[r] = As[kk][ty + 16 * r];\n" % rm
    s += i + "        for (int c = 0; c < 4; ++c) bv[c] = Bs[kk][tx + 16 * c];\n"
    s += i + "        for (int r = 0; r < %d; ++r)\n" % rm
    s += i + "            for (int c = 0; c < 4; ++c) acc[r][c] += av[r] * bv[c];\n"
    s += i + "    }\n"
    s += i + "    __syncthreads();\n"
    s += i + "}\n"
    s += i + "for (int r = 0; r < %d; ++r)\n" % rm
    s += i + "    for (int c = 0; c < 4; ++c) {\n"
    s += i + "        const long long m = m0 + ty + 16 * r, n = n0 + tx + 16 * c;\n"
    s += i + "        if (m < %s && n < %s) {\n" % (Me, Ne)
    s += "".join(i + "            " + line + "\n" for line in epilogue("acc[r][c]"))
    s += i + "        }\n"
    s += i + "    }\n"
    return s
