// The graph template's reduction kernels (kernels/graph/builtin_graph_red.c): a
// reduction in P blocks per output (the view's @HEAD@ and @LOOP@ from C), the
// squares about the mean, and the ordered combination of the partial results.
//@ part_kernel
    /* @WHAT@ over @R@ values in @P@ blocks of @CHUNK@: partial results */
    __shared__ double sh[256];
@HEAD@    double s = @INIT@;
@LOOP@        @STEP@
    }
    s = block_@COMB@(s, sh);
    if (threadIdx.x == 0) part[blockIdx.x] = s;
//@ squares
    /* squares about the mean, the same blocks */
    __shared__ double sh[256];
@HEAD@    double t = 0.0;
    for (int k = 0; k < @P@; k++) t += part[o * @P@LL + k];
    const double mean = t / @R@.0;
    double q = 0.0;
@LOOP@        q += (a - mean) * (a - mean);
    }
    q = block_sum(q, sh);
    if (threadIdx.x == 0) part[@QOFF@LL + blockIdx.x] = q;
//@ combine
    /* the @P@ partial results of each output, in order */
    const long long o = blockIdx.x * (long long)blockDim.x + threadIdx.x;
    if (o >= @OUTS@LL) return;
    double s = @INIT@;
    for (int k = 0; k < @P@; k++) {
        const double a = part[o * @P@LL + k];
        @STEP@
    }
