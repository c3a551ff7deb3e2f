// The pointwise-convolution epilogue block (kernels/emit/builtin_conv_epi_pw.c):
// the epilogue code @CODE@ with its position variables.
//@ epi_block
        {
        const long long kf_pb = b, kf_pm = m, kf_pn = n;
        {
        const long long n = kf_pb, c = kf_pm, s = kf_pn;
        (void)n; (void)c; (void)s;
@CODE@        }
        }
