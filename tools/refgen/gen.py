#!/usr/bin/env python3
"""Generates problems/level1/ for the matmul, conv and pool problems (probsB's
58: 1-4, 6-18, 41-46, 50, 54-87) from the table below: spec.json,
reference.py (PyTorch module, KernelBench semantics) and reference.cu (plain
one-thread-per-output reference, double accumulation).

Every shape in the table is checked against ../shared/kernelbench/level1.tsv
(or --tsv) when that file exists; output sizes are computed with PyTorch's
formulas and must equal the tsv's output shapes.

    python3 tools/refgen/gen.py [--root .] [--tsv PATH] [--check]

--check regenerates into memory and fails if a committed file differs."""
import argparse, json, math, os, sys

F32 = 4

# ---------------------------------------------------------------- helpers

def conv_out(n, k, s, p, d):
    return (n + 2 * p - d * (k - 1) - 1) // s + 1

def convt_out(n, k, s, p, d, op):
    return (n - 1) * s - 2 * p + d * (k - 1) + op + 1

def pool_out(n, k, s, p, d, ceil):
    num = n + 2 * p - d * (k - 1) - 1
    o = (-(-num // s) if ceil else num // s) + 1
    if ceil and (o - 1) * s >= n + p:   # last window must start inside input or left pad
        o -= 1
    return o

def taps_conv(n_in, n_out, k, s, p, d):
    """(o, k) pairs whose input index is inside [0, n_in)."""
    c = 0
    for kk in range(k):
        # o*s - p + kk*d in [0, n_in)  ->  o in [lo, hi]
        lo = max(0, -(-(p - kk * d) // s))
        hi = min(n_out - 1, (n_in - 1 + p - kk * d) // s)
        if hi >= lo:
            c += hi - lo + 1
    return c

def taps_convt(n_in, n_out, k, s, p, d):
    """(i, k) pairs whose output index i*s - p + k*d is inside [0, n_out)."""
    c = 0
    for kk in range(k):
        lo = max(0, -(-(p - kk * d) // s))
        hi = min(n_in - 1, (n_out - 1 + p - kk * d) // s)
        if hi >= lo:
            c += hi - lo + 1
    return c

def prod(xs):
    r = 1
    for x in xs:
        r *= x
    return r

def tup(v, n):
    return list(v) if isinstance(v, (list, tuple)) else [v] * n

def uniform(b):
    return {"kind": "uniform", "low": -b, "high": b}

U01 = {"kind": "uniform", "low": 0.0, "high": 1.0}

# ---------------------------------------------------------------- table
# Matmul: name, file, inputs [(name, [(dim name, value)...], post)], forward
# expression, attrs, flops kind.
MATMUL = [
    (1, "1_Square_matrix_multiplication_.py", "Single square matrix multiplication (C = A * B).",
     [("A", [("N", 4096), ("N", 4096)]), ("B", [("N", 4096), ("N", 4096)])],
     "torch.matmul(A, B)", {}, ["N", "N"]),
    (2, "2_Standard_matrix_multiplication_.py", "Single matrix multiplication (C = A * B).",
     [("A", [("M", 2048), ("K", 8192)]), ("B", [("K", 8192), ("N", 4096)])],
     "torch.matmul(A, B)", {}, ["M", "N"]),
    (3, "3_Batched_matrix_multiplication.py", "Batched matrix multiplication (torch.bmm).",
     [("A", [("batch_size", 128), ("m", 512), ("k", 1024)]),
      ("B", [("batch_size", 128), ("k", 1024), ("n", 2048)])],
     "torch.bmm(A, B)", {"batched": True}, ["batch_size", "m", "n"]),
    (4, "4_Matrix_vector_multiplication_.py", "Matrix-vector multiplication (C = A * B, B of shape (K, 1)).",
     [("A", [("M", 2048), ("K", 1048576)]), ("B", [("K", 1048576), 1])],
     "torch.matmul(A, B)", {"matvec": True}, ["M", 1]),
    (6, "6_Matmul_with_large_K_dimension_.py", "Matrix multiplication with a large K dimension.",
     [("A", [("M", 256), ("K", 524288)]), ("B", [("K", 524288), ("N", 256)])],
     "torch.matmul(A, B)", {}, ["M", "N"]),
    (7, "7_Matmul_with_small_K_dimension_.py", "Matrix multiplication with a small K dimension.",
     [("A", [("M", 32768), ("K", 64)]), ("B", [("K", 64), ("N", 32768)])],
     "torch.matmul(A, B)", {}, ["M", "N"]),
    (8, "8_Matmul_with_irregular_shapes_.py", "Matrix multiplication with irregular shapes.",
     [("A", [("M", 8205), ("K", 2949)]), ("B", [("K", 2949), ("N", 5921)])],
     "torch.matmul(A, B)", {}, ["M", "N"]),
    (9, "9_Tall_skinny_matrix_multiplication_.py", "Tall-skinny matrix multiplication: (M, N) @ (N, M) -> (M, M).",
     [("A", [("M", 32768), ("N", 32)]), ("B", [("N", 32), ("M", 32768)])],
     "torch.matmul(A, B)", {}, ["M", "M"]),
    (10, "10_3D_tensor_matrix_multiplication.py", "3D tensor times matrix: (N, M, K) @ (K, L) -> (N, M, L).",
     [("A", [("N", 16), ("M", 1024), ("K", 2048)]), ("B", [("K", 2048), ("L", 768)])],
     "torch.matmul(A, B)", {}, ["N", "M", "L"]),
    (11, "11_4D_tensor_matrix_multiplication.py", "4D tensor-matrix product: C[b,i,j,k] = sum_l A[b,i,j,l] * B[l,k].",
     [("A", [("b", 8), ("i", 256), ("j", 512), ("l", 256)]), ("B", [("l", 256), ("k", 768)])],
     'torch.einsum("bijl,lk->bijk", A, B)', {}, ["b", "i", "j", "k"]),
    (12, "12_Matmul_with_diagonal_matrices_.py", "diag(A) @ B: a diagonal matrix (given by its diagonal) times a matrix.",
     [("A", [("N", 4096)]), ("B", [("N", 4096), ("M", 4096)])],
     "torch.diag(A) @ B", {"diag": True}, ["N", "M"]),
    (13, "13_Matmul_for_symmetric_matrices.py", "Matrix multiplication of two symmetric matrices.",
     [("A", [("N", 4096), ("N", 4096)], "symmetrize"), ("B", [("N", 4096), ("N", 4096)], "symmetrize")],
     "torch.matmul(A, B)", {}, ["N", "N"]),
    (14, "14_Matmul_for_upper_triangular_matrices.py", "Matrix multiplication of upper triangular matrices; the result is upper triangular.",
     [("A", [("N", 4096), ("N", 4096)], "triu"), ("B", [("N", 4096), ("N", 4096)], "triu")],
     "torch.triu(torch.matmul(A, B))", {"mask": "triu"}, ["N", "N"]),
    (15, "15_Matmul_for_lower_triangular_matrices.py", "Matrix multiplication of lower triangular matrices; the result is lower triangular.",
     [("A", [("N", 4096), ("N", 4096)], "tril"), ("B", [("N", 4096), ("N", 4096)], "tril")],
     "torch.tril(torch.matmul(A, B))", {"mask": "tril"}, ["N", "N"]),
    (16, "16_Matmul_with_transposed_A.py", "Matrix multiplication with A transposed: C = A.T @ B.",
     [("A", [("K", 8192), ("M", 2048)]), ("B", [("K", 8192), ("N", 4096)])],
     "torch.matmul(A.T, B)", {"trans_a": True}, ["M", "N"]),
    (17, "17_Matmul_with_transposed_B.py", "Matrix multiplication with B transposed: C = A @ B.T.",
     [("A", [("M", 2048), ("K", 8192)]), ("B", [("N", 4096), ("K", 8192)])],
     "torch.matmul(A, B.T)", {"trans_b": True}, ["M", "N"]),
    (18, "18_Matmul_with_transposed_both.py", "Matrix multiplication with both transposed: C = A.T @ B.T.",
     [("A", [("K", 8192), ("M", 2048)]), ("B", [("N", 4096), ("K", 8192)])],
     "torch.matmul(A.T, B.T)", {"trans_a": True, "trans_b": True}, ["M", "N"]),
]

# Pool: num, file, class, dims, x dims, ctor [(name, value, passed)], effective
# geometry, layer kwargs text.
POOL = [
    (41, "41_Max_Pooling_1D.py", "MaxPool1d", "max", [("batch_size", 64), ("features", 192), ("sequence_length", 65536)],
     [("kernel_size", 8), ("stride", 1), ("padding", 4), ("dilation", 3), ("return_indices", False)],
     dict(kernel=[8], stride=[1], padding=[4], dilation=[3])),
    (42, "42_Max_Pooling_2D.py", "MaxPool2d", "max", [("batch_size", 32), ("channels", 64), ("height", 512), ("width", 512)],
     [("kernel_size", 4), ("stride", 1), ("padding", 1), ("dilation", 1)],
     dict(kernel=[4, 4], stride=[1, 1], padding=[1, 1], dilation=[1, 1])),
    (43, "43_Max_Pooling_3D.py", "MaxPool3d", "max", [("batch_size", 16), ("channels", 32), ("dim1", 128), ("dim2", 128), ("dim3", 128)],
     [("kernel_size", 3), ("stride", 2), ("padding", 1), ("dilation", 3), ("return_indices", False), ("ceil_mode", False)],
     dict(kernel=[3] * 3, stride=[2] * 3, padding=[1] * 3, dilation=[3] * 3)),
    (44, "44_Average_Pooling_1D.py", "AvgPool1d", "avg", [("batch_size", 64), ("in_channels", 128), ("input_length", 65536)],
     [("kernel_size", 8), ("stride", 1), ("padding", 4)],
     dict(kernel=[8], stride=[1], padding=[4], dilation=[1])),
    (45, "45_Average_Pooling_2D.py", "AvgPool2d", "avg", [("batch_size", 16), ("channels", 64), ("height", 2048), ("width", 2048)],
     [("kernel_size", 11), ("stride", None), ("padding", 0)],
     dict(kernel=[11, 11], stride=[11, 11], padding=[0, 0], dilation=[1, 1])),
    (46, "46_Average_Pooling_3D.py", "AvgPool3d", "avg", [("batch_size", 16), ("channels", 32), ("depth", 128), ("height", 128), ("width", 256)],
     [("kernel_size", 3), ("stride", 2), ("padding", 1)],
     dict(kernel=[3] * 3, stride=[2] * 3, padding=[1] * 3, dilation=[1] * 3)),
]

# Conv: num, file, description, torch class, attribute, x dims, ctor signature
# [(param, default-text or None)], init values (module-level ints, in
# get_init_inputs order as bound to the signature), layer call text, effective
# geometry (kernel, stride, padding, dilation, output_padding, groups, bias).
def G(kernel, stride=None, padding=None, dilation=None, output_padding=None, groups=1, bias=False):
    n = len(kernel)
    return dict(kernel=list(kernel), stride=tup(stride or 1, n), padding=tup(padding or 0, n),
                dilation=tup(dilation or 1, n), output_padding=tup(output_padding or 0, n),
                groups=groups, bias=bias)

STD_SIG = [("in_channels", None), ("out_channels", None), ("kernel_size", None), ("stride", "1"),
           ("padding", "0"), ("dilation", "1"), ("groups", "1"), ("bias", "False")]
T_SIG = [("in_channels", None), ("out_channels", None), ("kernel_size", None), ("stride", "1"),
         ("padding", "0"), ("output_padding", "0"), ("groups", "1"), ("bias", "False")]
T_SIG_D = [("in_channels", None), ("out_channels", None), ("kernel_size", None), ("stride", "1"),
           ("padding", "0"), ("output_padding", "0"), ("dilation", "1"), ("groups", "1"), ("bias", "False")]
STD_CALL = "in_channels, out_channels, kernel_size, stride=stride, padding=padding, dilation=dilation, groups=groups, bias=bias"
T_CALL = "in_channels, out_channels, kernel_size, stride=stride, padding=padding, output_padding=output_padding, groups=groups, bias=bias"
T_CALL_D = "in_channels, out_channels, kernel_size, stride=stride, padding=padding, output_padding=output_padding, dilation=dilation, groups=groups, bias=bias"
D_SIG = [("in_channels", None), ("out_channels", None), ("kernel_size", None), ("stride", "1"),
         ("padding", "0"), ("dilation", "1"), ("bias", "False")]
D_CALL = "in_channels, out_channels, kernel_size, stride=stride, padding=padding, dilation=dilation, bias=bias"

X3 = lambda c, d, h, w: [("batch_size", 16), ("in_channels", c), ("depth", d), ("height", h), ("width", w)]

CONV = [
    (50, "50_conv_standard_2D__square_input__square_kernel.py",
     "The first convolution of AlexNet: Conv2d(3, 96, kernel_size=11, stride=4, padding=2), with bias.",
     "Conv2d", "conv1", [("batch_size", 256), ("in_channels", 3), ("height", 224), ("width", 224)],
     [("num_classes", "1000")], [("num_classes", 1000)],
     "in_channels=3, out_channels=96, kernel_size=11, stride=4, padding=2",
     G([11, 11], 4, 2, bias=True), {"out_channels": 96}),
    (54, "54_conv_standard_3D__square_input__square_kernel.py", "Standard 3D convolution, cubic input and kernel.",
     "Conv3d", "conv3d", [("batch_size", 16), ("in_channels", 3), ("depth", 64), ("width", 64), ("height", 64)],
     STD_SIG, [("in_channels", 3), ("out_channels", 64), ("kernel_size", 3)],
     "in_channels, out_channels, (kernel_size, kernel_size, kernel_size), stride=stride, padding=padding, dilation=dilation, groups=groups, bias=bias",
     G([3, 3, 3]), {}),
    (55, "55_conv_standard_2D__asymmetric_input__square_kernel.py", "Standard 2D convolution, asymmetric input, square kernel.",
     "Conv2d", "conv2d", [("batch_size", 8), ("in_channels", 64), ("height", 512), ("width", 1024)],
     STD_SIG, [("in_channels", 64), ("out_channels", 128), ("kernel_size", 3)],
     "in_channels, out_channels, (kernel_size, kernel_size), stride=stride, padding=padding, dilation=dilation, groups=groups, bias=bias",
     G([3, 3]), {}),
    (56, "56_conv_standard_2D__asymmetric_input__asymmetric_kernel.py", "Standard 2D convolution, asymmetric input and kernel.",
     "Conv2d", "conv2d", [("batch_size", 8), ("in_channels", 64), ("height", 512), ("width", 256)],
     [("in_channels", None), ("out_channels", None), ("kernel_size", None), ("stride", "(1, 1)"), ("padding", "(0, 0)"),
      ("dilation", "(1, 1)"), ("groups", "1"), ("bias", "False")],
     [("in_channels", 64), ("out_channels", 128), ("kernel_size", (5, 7))], STD_CALL, G([5, 7]), {}),
    (57, "57_conv_transposed_2D__square_input__square_kernel.py", "Transposed 2D convolution, square input and kernel.",
     "ConvTranspose2d", "conv_transpose2d", [("batch_size", 8), ("in_channels", 64), ("height", 1024), ("width", 1024)],
     T_SIG, [("in_channels", 64), ("out_channels", 64), ("kernel_size", 3)],
     "in_channels, out_channels, kernel_size=(kernel_size, kernel_size), stride=stride, padding=padding, output_padding=output_padding, groups=groups, bias=bias",
     G([3, 3]), {}),
    (58, "58_conv_transposed_3D__asymmetric_input__asymmetric_kernel.py", "Transposed 3D convolution, asymmetric input and kernel.",
     "ConvTranspose3d", "conv_transpose3d", [("batch_size", 16), ("in_channels", 32), ("depth_in", 16), ("height_in", 32), ("width_in", 64)],
     [("in_channels", None), ("out_channels", None), ("kernel_size", None), ("stride", "(1, 1, 1)"), ("padding", "(0, 0, 0)"),
      ("output_padding", "(0, 0, 0)"), ("groups", "1"), ("bias", "False")],
     [("in_channels", 32), ("out_channels", 16), ("kernel_size", (3, 5, 7))], T_CALL, G([3, 5, 7]), {}),
    (59, "59_conv_standard_3D__asymmetric_input__square_kernel.py",
     "Standard 3D convolution with a (kernel_size, kernel_size, 1) kernel on an input ordered (N, C, height, width, depth).",
     "Conv3d", "conv3d", [("batch_size", 16), ("in_channels", 3), ("height", 256), ("width", 256), ("depth", 10)],
     STD_SIG, [("in_channels", 3), ("out_channels", 64), ("kernel_size", 3)],
     "in_channels, out_channels, (kernel_size, kernel_size, 1), stride=stride, padding=padding, dilation=dilation, groups=groups, bias=bias",
     G([3, 3, 1]), {}),
    (60, "60_conv_standard_3D__square_input__asymmetric_kernel.py", "Standard 3D convolution, cubic input, asymmetric kernel.",
     "Conv3d", "conv3d", [("batch_size", 16), ("in_channels", 3), ("width", 64), ("height", 64), ("depth", 64)],
     STD_SIG, [("in_channels", 3), ("out_channels", 64), ("kernel_size", (3, 5, 7))], STD_CALL, G([3, 5, 7]), {}),
    (61, "61_conv_transposed_3D__square_input__square_kernel.py", "Transposed 3D convolution, cubic input and kernel.",
     "ConvTranspose3d", "conv_transpose3d", [("batch_size", 8), ("in_channels", 48), ("depth", 64), ("height", 64), ("width", 64)],
     T_SIG, [("in_channels", 48), ("out_channels", 48), ("kernel_size", 3)],
     "in_channels, out_channels, kernel_size=(kernel_size, kernel_size, kernel_size), stride=stride, padding=padding, output_padding=output_padding, groups=groups, bias=bias",
     G([3, 3, 3]), {}),
    (62, "62_conv_standard_2D__square_input__asymmetric_kernel.py", "Standard 2D convolution, square input, asymmetric kernel.",
     "Conv2d", "conv2d", [("batch_size", 8), ("in_channels", 32), ("height", 512), ("width", 512)],
     STD_SIG, [("in_channels", 32), ("out_channels", 64), ("kernel_size", (5, 9))], STD_CALL, G([5, 9]), {}),
    (63, "63_conv_standard_2D__square_input__square_kernel.py", "Standard 2D convolution, square input and kernel.",
     "Conv2d", "conv2d", [("batch_size", 16), ("in_channels", 16), ("height", 1024), ("width", 1024)],
     STD_SIG, [("in_channels", 16), ("out_channels", 128), ("kernel_size", 3)],
     "in_channels, out_channels, (kernel_size, kernel_size), stride=stride, padding=padding, dilation=dilation, groups=groups, bias=bias",
     G([3, 3]), {}),
    (64, "64_conv_transposed_1D.py", "Transposed 1D convolution.",
     "ConvTranspose1d", "conv1d_transpose", [("batch_size", 64), ("in_channels", 128), ("length", 65536)],
     T_SIG, [("in_channels", 128), ("out_channels", 128), ("kernel_size", 3)], T_CALL, G([3]), {}),
    (65, "65_conv_transposed_2D__square_input__asymmetric_kernel.py", "Transposed 2D convolution, square input, asymmetric kernel.",
     "ConvTranspose2d", "conv_transpose2d", [("batch_size", 8), ("in_channels", 64), ("height", 512), ("width", 512)],
     T_SIG, [("in_channels", 64), ("out_channels", 64), ("kernel_size", (3, 7))], T_CALL, G([3, 7]), {}),
    (66, "66_conv_standard_3D__asymmetric_input__asymmetric_kernel.py", "Standard 3D convolution, asymmetric input and kernel.",
     "Conv3d", "conv3d", [("batch_size", 8), ("in_channels", 3), ("depth", 16), ("height", 128), ("width", 128)],
     [("in_channels", None), ("out_channels", None), ("kernel_size", None), ("stride", "(1, 1, 1)"), ("padding", "(0, 0, 0)"),
      ("dilation", "(1, 1, 1)"), ("groups", "1"), ("bias", "False")],
     [("in_channels", 3), ("out_channels", 64), ("kernel_size", (3, 5, 7))], STD_CALL, G([3, 5, 7]), {}),
    (67, "67_conv_standard_1D.py", "Standard 1D convolution.",
     "Conv1d", "conv1d", [("batch_size", 32), ("in_channels", 64), ("length", 131072)],
     STD_SIG, [("in_channels", 64), ("out_channels", 128), ("kernel_size", 3)], STD_CALL, G([3]), {}),
    (68, "68_conv_transposed_3D__square_input__asymmetric_kernel.py", "Transposed 3D convolution, cubic input, asymmetric kernel.",
     "ConvTranspose3d", "conv_transpose3d", [("batch_size", 16), ("in_channels", 32), ("depth", 64), ("width", 64), ("height", 64)],
     [("in_channels", None), ("out_channels", None), ("kernel_size", None), ("stride", "(1, 1, 1)"), ("padding", "(0, 0, 0)"),
      ("output_padding", "(0, 0, 0)"), ("groups", "1"), ("bias", "False")],
     [("in_channels", 32), ("out_channels", 64), ("kernel_size", (3, 5, 5))], T_CALL, G([3, 5, 5]), {}),
    (69, "69_conv_transposed_2D__asymmetric_input__asymmetric_kernel.py", "Transposed 2D convolution, asymmetric input and kernel.",
     "ConvTranspose2d", "conv_transpose2d", [("batch_size", 64), ("in_channels", 64), ("height_in", 128), ("width_in", 256)],
     [("in_channels", None), ("out_channels", None), ("kernel_size", None), ("stride", "(1, 1)"), ("padding", "(0, 0)"),
      ("output_padding", "(0, 0)"), ("dilation", "(1, 1)"), ("groups", "1"), ("bias", "False")],
     [("in_channels", 64), ("out_channels", 128), ("kernel_size", (3, 5))], T_CALL_D, G([3, 5]), {}),
    (70, "70_conv_transposed_3D__asymmetric_input__square_kernel.py", "Transposed 3D convolution, cubic kernel.",
     "ConvTranspose3d", "conv_transpose3d", [("batch_size", 8), ("in_channels", 48), ("depth", 96), ("height", 96), ("width", 96)],
     T_SIG_D, [("in_channels", 48), ("out_channels", 24), ("kernel_size", 3)],
     "in_channels, out_channels, (kernel_size, kernel_size, kernel_size), stride=stride, padding=padding, output_padding=output_padding, dilation=dilation, groups=groups, bias=bias",
     G([3, 3, 3]), {}),
    (71, "71_conv_transposed_2D__asymmetric_input__square_kernel.py", "Transposed 2D convolution, asymmetric input, square kernel.",
     "ConvTranspose2d", "conv_transpose2d", [("batch_size", 8), ("in_channels", 32), ("height_in", 512), ("width_in", 1024)],
     T_SIG, [("in_channels", 32), ("out_channels", 32), ("kernel_size", 3)],
     "in_channels, out_channels, kernel_size=(kernel_size, kernel_size), stride=stride, padding=padding, output_padding=output_padding, groups=groups, bias=bias",
     G([3, 3]), {}),
    (72, "72_conv_transposed_3D_asymmetric_input_asymmetric_kernel___strided_padded_grouped_.py",
     "Transposed 3D convolution, strided, padded, with output padding, grouped.",
     "ConvTranspose3d", "conv_transpose3d", [("batch_size", 8), ("in_channels", 32), ("depth", 12), ("height", 24), ("width", 48)],
     [("in_channels", None), ("out_channels", None), ("kernel_size", None), ("stride", "(1, 1, 1)"), ("padding", "(0, 0, 0)"),
      ("output_padding", "(0, 0, 0)"), ("groups", "1"), ("bias", "False")],
     [("in_channels", 32), ("out_channels", 32), ("kernel_size", (3, 5, 7)), ("stride", (2, 2, 2)), ("padding", (1, 2, 3)),
      ("output_padding", (1, 1, 1)), ("groups", 4)], T_CALL,
     G([3, 5, 7], [2, 2, 2], [1, 2, 3], output_padding=[1, 1, 1], groups=4), {}),
    (73, "73_conv_transposed_3D_asymmetric_input_square_kernel__strided_padded__grouped.py",
     "Transposed 3D convolution, strided and padded. KernelBench quirk: get_init_inputs passes six values, the sixth "
     "(groups = 4) binds to output_padding, which the layer does not receive: the layer runs with groups = 1 and output_padding = 0.",
     "ConvTranspose3d", "conv_transpose3d", [("batch_size", 4), ("in_channels", 32), ("depth", 32), ("height", 64), ("width", 128)],
     T_SIG, [("in_channels", 32), ("out_channels", 32), ("kernel_size", 3), ("stride", 2), ("padding", 1), ("output_padding", 4, "groups")],
     "in_channels, out_channels, kernel_size=(kernel_size, kernel_size, kernel_size), stride=stride, padding=padding, groups=groups, bias=bias",
     G([3, 3, 3], 2, 1), {}),
    (74, "74_conv_transposed_1D_dilated.py", "Transposed 1D convolution, dilated.",
     "ConvTranspose1d", "conv1d_transpose", [("batch_size", 32), ("in_channels", 32), ("length", 131072)],
     D_SIG, [("in_channels", 32), ("out_channels", 64), ("kernel_size", 5), ("stride", 1), ("padding", 0), ("dilation", 3)],
     D_CALL, G([5], 1, 0, 3), {}),
    (75, "75_conv_transposed_2D_asymmetric_input_asymmetric_kernel_strided__grouped____padded____dilated__.py",
     "Transposed 2D convolution, strided, grouped, padded and dilated.",
     "ConvTranspose2d", "conv_transpose2d", [("batch_size", 16), ("in_channels", 32), ("height", 128), ("width", 256)],
     [("in_channels", None), ("out_channels", None), ("kernel_size", None), ("stride", "(1, 1)"), ("padding", "(0, 0)"),
      ("dilation", "(1, 1)"), ("groups", "1"), ("bias", "False")],
     [("in_channels", 32), ("out_channels", 64), ("kernel_size", (3, 5)), ("stride", (2, 3)), ("padding", (1, 2)),
      ("dilation", (2, 1)), ("groups", 4)], STD_CALL, G([3, 5], [2, 3], [1, 2], [2, 1], groups=4), {}),
    (76, "76_conv_standard_1D_dilated_strided__.py", "Standard 1D convolution, strided and dilated.",
     "Conv1d", "conv1d", [("batch_size", 64), ("in_channels", 64), ("length", 524280)],
     [("in_channels", None), ("out_channels", None), ("kernel_size", None), ("stride", "1"), ("dilation", "1"), ("bias", "False")],
     [("in_channels", 64), ("out_channels", 128), ("kernel_size", 3), ("stride", 3), ("dilation", 4)],
     "in_channels, out_channels, kernel_size, stride=stride, dilation=dilation, bias=bias", G([3], 3, 0, 4), {}),
    (77, "77_conv_transposed_3D_square_input_square_kernel___padded____dilated____strided__.py",
     "Transposed 3D convolution, strided, padded and dilated.",
     "ConvTranspose3d", "conv_transpose3d", [("batch_size", 16), ("in_channels", 32), ("depth", 16), ("height", 32), ("width", 32)],
     D_SIG, [("in_channels", 32), ("out_channels", 64), ("kernel_size", 3), ("stride", 2), ("padding", 1), ("dilation", 2)],
     "in_channels, out_channels, kernel_size=(kernel_size, kernel_size, kernel_size), stride=stride, padding=padding, dilation=dilation, bias=bias",
     G([3, 3, 3], 2, 1, 2), {}),
    (78, "78_conv_transposed_2D_asymmetric_input_asymmetric_kernel___padded__.py", "Transposed 2D convolution, padded.",
     "ConvTranspose2d", "conv_transpose2d", [("batch_size", 8), ("in_channels", 32), ("height", 512), ("width", 1024)],
     [("in_channels", None), ("out_channels", None), ("kernel_size", None), ("stride", "(1, 1)"), ("padding", "(0, 0)"), ("bias", "False")],
     [("in_channels", 32), ("out_channels", 32), ("kernel_size", (3, 7)), ("stride", (1, 1)), ("padding", (1, 3))],
     "in_channels, out_channels, kernel_size, stride=stride, padding=padding, bias=bias", G([3, 7], 1, [1, 3]), {}),
    (79, "79_conv_transposed_1D_asymmetric_input_square_kernel___padded____strided____dilated__.py",
     "Transposed 1D convolution, padded, strided and dilated.",
     "ConvTranspose1d", "conv1d_transpose", [("batch_size", 16), ("in_channels", 32), ("length", 131072)],
     D_SIG, [("in_channels", 32), ("out_channels", 64), ("kernel_size", 3), ("stride", 2), ("padding", 1), ("dilation", 2)],
     D_CALL, G([3], 2, 1, 2), {}),
    (80, "80_conv_standard_2D_square_input_asymmetric_kernel___dilated____padded__.py",
     "Standard 2D convolution, asymmetric kernel, padded and dilated.",
     "Conv2d", "conv2d", [("batch_size", 8), ("in_channels", 32), ("height", 512), ("width", 512)],
     D_SIG, [("in_channels", 32), ("out_channels", 64), ("kernel_size", (5, 9)), ("stride", 1), ("padding", (2, 4)), ("dilation", (2, 3))],
     D_CALL, G([5, 9], 1, [2, 4], [2, 3]), {}),
    (81, "81_conv_transposed_2D_asymmetric_input_square_kernel___dilated____padded____strided__.py",
     "Transposed 2D convolution, strided, padded and dilated.",
     "ConvTranspose2d", "conv_transpose2d", [("batch_size", 16), ("in_channels", 32), ("height_in", 64), ("width_in", 128)],
     D_SIG, [("in_channels", 32), ("out_channels", 64), ("kernel_size", 3), ("stride", 5), ("padding", 1), ("dilation", 2)],
     D_CALL, G([3, 3], 5, 1, 2), {}),
    (82, "82_conv_depthwise_2D_square_input_square_kernel.py", "Depthwise 2D convolution (groups = in_channels), square kernel.",
     "Conv2d", "conv2d", [("batch_size", 16), ("in_channels", 64), ("height", 512), ("width", 512)],
     [("in_channels", None), ("kernel_size", None), ("stride", "1"), ("padding", "0"), ("bias", "False")],
     [("in_channels", 64), ("kernel_size", 3), ("stride", 1), ("padding", 0)],
     "in_channels, in_channels, kernel_size, stride=stride, padding=padding, groups=in_channels, bias=bias",
     G([3, 3], groups=64), {}),
    (83, "83_conv_depthwise_2D_square_input_asymmetric_kernel.py", "Depthwise 2D convolution with a (kernel_size, 1) kernel.",
     "Conv2d", "conv2d", [("batch_size", 64), ("in_channels", 8), ("height", 512), ("width", 512)],
     [("in_channels", None), ("kernel_size", None), ("stride", "1"), ("padding", "0"), ("dilation", "1"), ("bias", "False")],
     [("in_channels", 8), ("kernel_size", 3), ("stride", 1), ("padding", 0), ("dilation", 1)],
     "in_channels, in_channels, kernel_size=(kernel_size, 1), stride=stride, padding=padding, dilation=dilation, groups=in_channels, bias=bias",
     G([3, 1], groups=8), {}),
    (84, "84_conv_depthwise_2D_asymmetric_input_square_kernel.py", "Depthwise 2D convolution (groups = in_channels), asymmetric input.",
     "Conv2d", "conv2d", [("batch_size", 64), ("in_channels", 128), ("height_in", 256), ("width_in", 512)],
     [("in_channels", None), ("out_channels", None), ("kernel_size", None), ("stride", "1"), ("padding", "0"), ("bias", "False")],
     [("in_channels", 128), ("out_channels", 128), ("kernel_size", 3), ("stride", 1), ("padding", 0)],
     "in_channels, out_channels, (kernel_size, kernel_size), stride=stride, padding=padding, groups=in_channels, bias=bias",
     G([3, 3], groups=128), {}),
    (85, "85_conv_depthwise_2D_asymmetric_input_asymmetric_kernel.py",
     "Depthwise 2D convolution with an asymmetric kernel; the layer is Conv2d(in_channels, in_channels, groups=in_channels) "
     "(the out_channels and groups arguments are unused).",
     "Conv2d", "conv2d", [("batch_size", 32), ("in_channels", 128), ("height", 128), ("width", 256)],
     [("in_channels", None), ("out_channels", None), ("kernel_size_h", None), ("kernel_size_w", None), ("stride_h", "1"),
      ("stride_w", "1"), ("padding_h", "0"), ("padding_w", "0"), ("dilation_h", "1"), ("dilation_w", "1"),
      ("groups", "1"), ("bias", "False")],
     [("in_channels", 128), ("out_channels", 128), ("kernel_size_h", 3), ("kernel_size_w", 7), ("stride_h", 1), ("stride_w", 1),
      ("padding_h", 0), ("padding_w", 0), ("dilation_h", 1), ("dilation_w", 1), ("groups", 128)],
     "in_channels, in_channels, (kernel_size_h, kernel_size_w), stride=(stride_h, stride_w), padding=(padding_h, padding_w), dilation=(dilation_h, dilation_w), groups=in_channels, bias=bias",
     G([3, 7], groups=128), {}),
    (86, "86_conv_depthwise_separable_2D.py",
     "Depthwise-separable 2D convolution: a depthwise 3x3 convolution (padding 1) followed by a pointwise 1x1 convolution, both without bias.",
     "Conv2d", "depthwise", [("batch_size", 16), ("in_channels", 64), ("height", 512), ("width", 512)],
     [("in_channels", None), ("out_channels", None), ("kernel_size", None), ("stride", "1"), ("padding", "0"), ("dilation", "1"), ("bias", "False")],
     [("in_channels", 64), ("out_channels", 128), ("kernel_size", 3), ("stride", 1), ("padding", 1), ("dilation", 1)],
     None, G([3, 3], 1, 1, 1, groups=64), {}),
    (87, "87_conv_pointwise_2D.py", "Pointwise (1x1) 2D convolution.",
     "Conv2d", "conv1d", [("batch_size", 16), ("in_channels", 64), ("height", 1024), ("width", 1024)],
     [("in_channels", None), ("out_channels", None), ("bias", "False")],
     [("in_channels", 64), ("out_channels", 128)],
     "in_channels, out_channels, kernel_size=1, stride=1, padding=0, bias=bias", G([1, 1]), {}),
]

# ---------------------------------------------------------------- builders
import ast

def dir_name(num, file):
    base = file[:-3]
    assert base.startswith("%d_" % num), file
    return "%03d_%s" % (num, base[len("%d_" % num):].rstrip("_"))

def out_dim_name(d):
    return d[:-3] + "_out" if d.endswith("_in") else "out_" + d

def pyval(v):
    if isinstance(v, bool) or v is None:
        return repr(v)
    if isinstance(v, (list, tuple)):
        return "(" + ", ".join(str(x) for x in v) + ")"
    return str(v)

def jsonval(v):
    return list(v) if isinstance(v, tuple) else v

def spec_base(num, file, family, operation, sizes, init_args, inputs, outputs, flops, min_bytes, attrs, notes):
    d = dir_name(num, file)
    return {
        "id": "level1/" + d, "level": 1, "number": num, "name": d[4:],
        "kernelbench_file": file, "family": family, "operation": operation,
        "sizes": sizes, "scalars": {}, "init_args": init_args,
        "inputs": inputs, "outputs": outputs, "tolerance": "fp32",
        "flops": flops, "min_bytes": min_bytes, "attrs": attrs, "notes": notes,
    }

def resolve(shape, sizes):
    return [s if isinstance(s, int) else sizes[s] for s in shape]

def tensor_bytes(shape, sizes):
    return prod(resolve(shape, sizes)) * F32

PY_HEAD = "import torch\nimport torch.nn as nn\n\n\n"

def py_module_vars(pairs):
    out, seen = [], set()
    for k, v in pairs:
        if k in seen:
            continue
        seen.add(k)
        out.append("%s = %s" % (k, pyval(v)))
    return "\n".join(out) + "\n"

CU_TAIL = "\n/*@launch\n%s\n@*/\n"

# ---- matmul

def build_matmul(row):
    num, file, desc, ins, expr, attrs, out_shape = row
    sizes, inputs, modvars, gen_lines = {}, [], [], []
    for t in ins:
        name, dims = t[0], t[1]
        post = t[2] if len(t) > 2 else None
        shape = []
        for dd in dims:
            if isinstance(dd, int):
                shape.append(dd)
            else:
                sizes[dd[0]] = dd[1]
                shape.append(dd[0])
                modvars.append(dd)
        dist = dict(U01)
        if post:
            dist["post"] = post
        inputs.append({"name": name, "role": "input", "dtype": "float32", "shape": shape, "dist": dist})
        args = ", ".join(str(s) for s in shape)
        if post == "symmetrize":
            gen_lines += ["    %s = torch.rand(%s)" % (name, args), "    %s = (%s + %s.T) / 2" % (name, name, name)]
        elif post in ("triu", "tril"):
            gen_lines.append("    %s = torch.%s(torch.rand(%s))" % (name, post, args))
        else:
            gen_lines.append("    %s = torch.rand(%s)" % (name, args))
    outputs = [{"name": "C", "dtype": "float32", "shape": out_shape}]
    A, B = inputs[0]["shape"], inputs[1]["shape"]
    batched, ta, tb = attrs.get("batched", False), attrs.get("trans_a", False), attrs.get("trans_b", False)
    if attrs.get("diag"):
        e_batch, e_m, e_k, e_n = "1", A[0], "1", B[1]
    elif batched:
        e_batch, e_m, e_k, e_n = A[0], A[1], A[2], B[2]
    else:
        e_batch = "1"
        e_m = A[1] if ta else " * ".join(str(s) for s in A[:-1])
        e_k = A[0] if ta else A[-1]
        e_n = B[0] if tb else B[-1]
    ev = lambda e: eval(str(e), {}, dict(sizes))
    batch, M, K, N = ev(e_batch), ev(e_m), ev(e_k), ev(e_n)
    mask = attrs.get("mask", "none")
    if attrs.get("diag"):
        flops = M * N
    elif mask != "none":
        flops = M * (M + 1) * (M + 2) // 3
    else:
        flops = 2 * batch * M * N * K
    min_bytes = sum(tensor_bytes(t["shape"], sizes) for t in inputs + outputs)
    full_attrs = {"batched": batched, "trans_a": ta, "trans_b": tb,
                  "diag": bool(attrs.get("diag")), "mask": mask}
    notes = ""
    if mask != "none":
        notes = "flops counts only the products that are not structurally zero (k from i to j for C[i][j] with i <= j): n(n+1)(n+2)/3."
    if attrs.get("diag"):
        notes = "flops counts one multiply per output (PyTorch's dense diag(A) @ B does 2*N*N*M)."
    spec = spec_base(num, file, "matmul", desc, sizes, {}, inputs, outputs, flops, min_bytes, full_attrs, notes)
    # reference.py
    argnames = [t["name"] for t in inputs]
    py = PY_HEAD + 'class Model(nn.Module):\n    """%s"""\n\n    def __init__(self):\n        super(Model, self).__init__()\n\n' % desc
    py += "    def forward(%s) -> torch.Tensor:\n        return %s\n\n\n" % (
        ", ".join(["self"] + ["%s: torch.Tensor" % a for a in argnames]), expr)
    py += py_module_vars(modvars) + "\n\ndef get_inputs():\n" + "\n".join(gen_lines)
    py += "\n    return [%s]\n\n\ndef get_init_inputs():\n    return []\n" % ", ".join(argnames)
    # reference.cu
    if attrs.get("diag"):
        cu = ("// Reference: C[i][j] = A[i] * B[i][j] (diag(A) @ B), one thread per output.\n"
              "extern \"C\" __global__ void diag_matmul_ref(const float* __restrict__ A, const float* __restrict__ B,\n"
              "                                            float* __restrict__ C, long long M, long long N)\n{\n"
              "    long long idx = blockIdx.x * (long long)blockDim.x + threadIdx.x;\n"
              "    if (idx >= M * N) return;\n"
              "    long long m = idx / N;\n"
              "    C[idx] = (float)((double)A[m] * (double)B[idx]);\n}\n")
        launch = "diag_matmul_ref<<<ceil_div(%s * %s, 256), 256>>>(A, B, C, %s, %s);" % (e_m, e_n, e_m, e_n)
    elif attrs.get("matvec"):
        cu = ("// Reference: C[m] = sum_k A[m][k] * B[k]; one block per row, each thread sums a\n"
              "// strided part in double, then a tree reduction in shared memory (double).\n"
              "extern \"C\" __global__ void matvec_ref(const float* __restrict__ A, const float* __restrict__ B,\n"
              "                                       float* __restrict__ C, long long M, long long K)\n{\n"
              "    __shared__ double part[256];\n"
              "    const long long m = blockIdx.x;\n"
              "    double acc = 0.0;\n"
              "    for (long long k = threadIdx.x; k < K; k += blockDim.x)\n"
              "        acc += (double)A[m * K + k] * (double)B[k];\n"
              "    part[threadIdx.x] = acc;\n"
              "    __syncthreads();\n"
              "    for (int w = 128; w > 0; w >>= 1) {\n"
              "        if (threadIdx.x < w) part[threadIdx.x] += part[threadIdx.x + w];\n"
              "        __syncthreads();\n"
              "    }\n"
              "    if (threadIdx.x == 0) C[m] = (float)part[0];\n}\n")
        launch = "matvec_ref<<<%s, 256>>>(A, B, C, %s, %s);" % (e_m, e_m, e_k)
    else:
        aidx = "(b * M + m) * K + k" if batched else ("k * M + m" if ta else "m * K + k")
        bidx = "(b * K + k) * N + n" if batched else ("n * K + k" if tb else "k * N + n")
        layout = "A %s, B %s" % ("(batch, M, K)" if batched else ("(K, M)" if ta else "(M, K)"),
                                 "(batch, K, N)" if batched else ("(N, K)" if tb else "(K, N)"))
        mline = ""
        if mask == "triu":
            mline = "    if (m > n) { C[idx] = 0.0f; return; }   /* torch.triu of the product */\n"
        elif mask == "tril":
            mline = "    if (m < n) { C[idx] = 0.0f; return; }   /* torch.tril of the product */\n"
        cu = ("// Reference: C[b][m][n] = sum_k A[..] * B[..] with %s; one thread per\n"
              "// output element, double accumulation over the whole K.\n"
              "extern \"C\" __global__ void matmul_ref(const float* __restrict__ A, const float* __restrict__ B,\n"
              "                                       float* __restrict__ C, long long batch, long long M,\n"
              "                                       long long N, long long K)\n{\n"
              "    long long idx = blockIdx.x * (long long)blockDim.x + threadIdx.x;\n"
              "    if (idx >= batch * M * N) return;\n"
              "    const long long n = idx %% N;\n"
              "    const long long m = (idx / N) %% M;\n"
              "    const long long b = idx / (M * N);\n"
              "    (void)b;\n%s"
              "    double acc = 0.0;\n"
              "    for (long long k = 0; k < K; ++k)\n"
              "        acc += (double)A[%s] * (double)B[%s];\n"
              "    C[idx] = (float)acc;\n}\n") % (layout, mline, aidx, bidx)
        total = " * ".join(x for x in ([] if e_batch == "1" else [str(e_batch)]) + ["(%s)" % e_m if "*" in str(e_m) else str(e_m), str(e_n)])
        launch = "matmul_ref<<<ceil_div(%s, 256), 256>>>(A, B, C, %s, %s, %s, %s);" % (
            total, e_batch, e_m, e_n, e_k)
    cu += CU_TAIL % launch
    return spec, py, cu

# ---- shared 3-axis padding for the generic CUDA kernels

def pad3(vals, fill):
    return [fill] * (3 - len(vals)) + list(vals)

def geometry_defines(nb, ci, co, groups, ins, outs, g):
    lines = ["#define NB %d" % nb, "#define CI %d" % ci, "#define CO %d" % co]
    if groups is not None:
        lines.append("#define GROUPS %d" % groups)
    for tag, vals in (("I", pad3(ins, 1)), ("O", pad3(outs, 1)), ("K", pad3(g["kernel"], 1)),
                      ("S", pad3(g["stride"], 1)), ("P", pad3(g["padding"], 0)), ("DIL", pad3(g["dilation"], 1))):
        for ax, v in zip("DHW", vals):
            lines.append("#define %s%s %d" % (tag, ax, v))
    return "\n".join(lines) + "\n"

# ---- pool

def build_pool(row):
    num, file, cls, op, xdims, ctor, g = row
    nd = len(g["kernel"])
    sizes = {k: v for k, v in xdims}
    ins = [v for _, v in xdims[2:]]
    outs = [pool_out(n, k, s, p, d, False) for n, k, s, p, d in
            zip(ins, g["kernel"], g["stride"], g["padding"], g["dilation"])]
    onames = [out_dim_name(k) for k, _ in xdims[2:]]
    for k, v in zip(onames, outs):
        sizes[k] = v
    for k, v in ctor:
        if isinstance(v, int) and not isinstance(v, bool) and v > 0:   # sizes are positive
            sizes[k] = v
    xshape = [k for k, _ in xdims]
    oshape = xshape[:2] + onames
    inputs = [{"name": "x", "role": "input", "dtype": "float32", "shape": xshape, "dist": dict(U01)}]
    outputs = [{"name": "out", "dtype": "float32", "shape": oshape}]
    nc = xdims[0][1] * xdims[1][1]
    taps = prod(taps_conv(n, o, k, s, p, d) for n, o, k, s, p, d in
                zip(ins, outs, g["kernel"], g["stride"], g["padding"], g["dilation"]))
    out_numel = nc * prod(outs)
    flops = nc * taps + (out_numel if op == "avg" else 0)
    min_bytes = (nc * prod(ins) + out_numel) * F32
    init_args = {k: jsonval(v) for k, v in ctor}
    if op == "max":
        init_args.setdefault("ceil_mode", False)
    else:
        init_args.update({"ceil_mode": False, "count_include_pad": True})
    attrs = {"op": op, "kernel": g["kernel"], "stride": g["stride"], "padding": g["padding"],
             "dilation": g["dilation"], "ceil_mode": False, "count_include_pad": True}
    notes = ""
    if num == 45:
        notes = "stride=None means stride = kernel_size = 11."
    desc = "%s over the last %d dimension%s." % (cls, nd, "s" if nd > 1 else "")
    spec = spec_base(num, file, "pool", desc, sizes, init_args, inputs, outputs, flops, min_bytes, attrs, notes)
    # reference.py
    sig = {"kernel_size": "kernel_size: int", "stride": "stride: int = None", "padding": "padding: int = 0",
           "dilation": "dilation: int = 1", "return_indices": "return_indices: bool = False",
           "ceil_mode": "ceil_mode: bool = False"}
    params = [k for k, _ in ctor]
    attr = "maxpool" if op == "max" else "avg_pool"
    py = PY_HEAD + 'class Model(nn.Module):\n    """Applies %s.%s"""\n\n' % (cls, (" " + notes) if notes else "")
    py += "    def __init__(self, %s):\n        super(Model, self).__init__()\n" % ", ".join(sig[k] for k in params)
    py += "        self.%s = nn.%s(%s)\n\n" % (attr, cls, ", ".join("%s=%s" % (k, k) for k in params))
    py += "    def forward(self, x: torch.Tensor) -> torch.Tensor:\n        return self.%s(x)\n\n\n" % attr
    # Passed arguments: the prefix before the first None (45 passes only kernel_size).
    passed = []
    for k, v in ctor:
        if v is None:
            break
        passed.append((k, v))
    py += py_module_vars(list(xdims) + passed)
    py += "\n\ndef get_inputs():\n    x = torch.rand(%s)\n    return [x]\n\n\n" % ", ".join(xshape)
    py += "def get_init_inputs():\n    return [%s]\n" % ", ".join(k for k, v in passed)
    # reference.cu
    cu = ("// Reference: %s, x (%s) -> out (%s).\n"
          "// One thread per output element. Spatial axes are padded to three (size 1,\n"
          "// kernel 1, stride 1, no padding on the missing ones) so one kernel serves\n"
          "// 1D, 2D and 3D.%s\n") % (cls, ", ".join(xshape), ", ".join(oshape),
        " Max: padded positions never win (PyTorch pads with -inf)." if op == "max" else
        " Avg: count_include_pad=True, the divisor is the window clipped to the padded input.")
    cu += geometry_defines(xdims[0][1], xdims[1][1], xdims[1][1], None, ins, outs, g)
    cu += ("\nextern \"C\" __global__ void pool_ref(const float* __restrict__ x, float* __restrict__ out)\n{\n"
           "    long long idx = blockIdx.x * (long long)blockDim.x + threadIdx.x;\n"
           "    if (idx >= (long long)NB * CI * OD * OH * OW) return;\n"
           "    long long t = idx;\n"
           "    const int ow = (int)(t % OW); t /= OW;\n"
           "    const int oh = (int)(t % OH); t /= OH;\n"
           "    const int od = (int)(t % OD); t /= OD;\n"
           "    const long long nc = t;   /* n * CI + c */\n"
           "    const float* xp = x + nc * ((long long)ID * IH * IW);\n"
           "    const int d0 = od * SD - PD, h0 = oh * SH - PH, w0 = ow * SW - PW;\n")
    if op == "max":
        cu += ("    float m = __int_as_float((int)0xff800000);   /* -inf */\n"
               "    for (int kd = 0; kd < KD; ++kd) {\n"
               "        const int id = d0 + kd * DILD;\n"
               "        if (id < 0 || id >= ID) continue;\n"
               "        for (int kh = 0; kh < KH; ++kh) {\n"
               "            const int ih = h0 + kh * DILH;\n"
               "            if (ih < 0 || ih >= IH) continue;\n"
               "            for (int kw = 0; kw < KW; ++kw) {\n"
               "                const int iw = w0 + kw * DILW;\n"
               "                if (iw < 0 || iw >= IW) continue;\n"
               "                const float v = xp[((long long)id * IH + ih) * IW + iw];\n"
               "                if (v > m || v != v) m = v;   /* NaN propagates, as in PyTorch */\n"
               "            }\n        }\n    }\n"
               "    out[idx] = m;\n}\n")
    else:
        cu += ("    /* divisor: window clipped to the padded extent [-P, I + P) */\n"
               "    const int d1 = min(d0 + KD, ID + PD), h1 = min(h0 + KH, IH + PH), w1 = min(w0 + KW, IW + PW);\n"
               "    const double divisor = (double)(d1 - d0) * (h1 - h0) * (w1 - w0);\n"
               "    double s = 0.0;\n"
               "    for (int id = max(d0, 0); id < min(d1, ID); ++id)\n"
               "        for (int ih = max(h0, 0); ih < min(h1, IH); ++ih)\n"
               "            for (int iw = max(w0, 0); iw < min(w1, IW); ++iw)\n"
               "                s += (double)xp[((long long)id * IH + ih) * IW + iw];\n"
               "    out[idx] = (float)(s / divisor);\n}\n")
    launch = "pool_ref<<<ceil_div(%s, 256), 256>>>(x, out);" % " * ".join(oshape)
    cu += CU_TAIL % launch
    return spec, py, cu

# ---- conv

def bound_args(sig, init):
    """Constructor arguments as bound to Model.__init__ (defaults filled)."""
    vals = {}
    for i, (k, default) in enumerate(sig):
        if i < len(init):
            assert init[i][0] == k, (init[i][0], k)
            vals[k] = jsonval(init[i][1])
        elif default is not None:
            vals[k] = jsonval(ast.literal_eval(default))
    return vals

CONV_BODY = {
    False: (
        "    const int cpg = CI / GROUPS;          /* input channels per group */\n"
        "    const int g = co / (CO / GROUPS);\n"
        "    double acc = 0.0;\n"
        "    for (int cj = 0; cj < cpg; ++cj) {\n"
        "        const int ci = g * cpg + cj;\n"
        "        for (int kd = 0; kd < KD; ++kd) {\n"
        "            const int id = od * SD - PD + kd * DILD;\n"
        "            if (id < 0 || id >= ID) continue;\n"
        "            for (int kh = 0; kh < KH; ++kh) {\n"
        "                const int ih = oh * SH - PH + kh * DILH;\n"
        "                if (ih < 0 || ih >= IH) continue;\n"
        "                for (int kw = 0; kw < KW; ++kw) {\n"
        "                    const int iw = ow * SW - PW + kw * DILW;\n"
        "                    if (iw < 0 || iw >= IW) continue;\n"
        "                    acc += (double)x[(((n * CI + ci) * ID + id) * IH + ih) * IW + iw]\n"
        "                         * (double)WEIGHT[(((long long)(co * cpg + cj) * KD + kd) * KH + kh) * KW + kw];\n"
        "                }\n            }\n        }\n    }\n"),
    True: (
        "    const int cpg = CI / GROUPS;          /* input channels per group */\n"
        "    const int opg = CO / GROUPS;          /* output channels per group */\n"
        "    const int g = co / opg, oc = co % opg;\n"
        "    double acc = 0.0;\n"
        "    for (int cj = 0; cj < cpg; ++cj) {\n"
        "        const int ci = g * cpg + cj;\n"
        "        for (int kd = 0; kd < KD; ++kd) {\n"
        "            const int nd = od + PD - kd * DILD;   /* = id * SD when input id reaches od */\n"
        "            if (nd < 0 || nd % SD != 0 || nd / SD >= ID) continue;\n"
        "            const int id = nd / SD;\n"
        "            for (int kh = 0; kh < KH; ++kh) {\n"
        "                const int nh = oh + PH - kh * DILH;\n"
        "                if (nh < 0 || nh % SH != 0 || nh / SH >= IH) continue;\n"
        "                const int ih = nh / SH;\n"
        "                for (int kw = 0; kw < KW; ++kw) {\n"
        "                    const int nw = ow + PW - kw * DILW;\n"
        "                    if (nw < 0 || nw % SW != 0 || nw / SW >= IW) continue;\n"
        "                    const int iw = nw / SW;\n"
        "                    acc += (double)x[(((n * CI + ci) * ID + id) * IH + ih) * IW + iw]\n"
        "                         * (double)WEIGHT[(((long long)(ci * opg + oc) * KD + kd) * KH + kh) * KW + kw];\n"
        "                }\n            }\n        }\n    }\n"),
}

CONV_HEAD = (
    "    long long idx = blockIdx.x * (long long)blockDim.x + threadIdx.x;\n"
    "    if (idx >= (long long)NB * CO * OD * OH * OW) return;\n"
    "    long long t = idx;\n"
    "    const int ow = (int)(t % OW); t /= OW;\n"
    "    const int oh = (int)(t % OH); t /= OH;\n"
    "    const int od = (int)(t % OD); t /= OD;\n"
    "    const int co = (int)(t % CO);\n"
    "    const long long n = t / CO;\n")

def build_conv(row):
    num, file, desc, cls, attr, xdims, sig, init, call, g, extra = row
    transposed = "Transpose" in cls
    nd = len(g["kernel"])
    init = [(e[0], e[1]) + tuple(e[2:]) for e in init]
    bound = bound_args(sig, init)
    nb, ci = xdims[0][1], xdims[1][1]
    ins = [v for _, v in xdims[2:]]
    groups = g["groups"]
    if "out_channels" in extra:
        co = extra["out_channels"]
    elif num != 86 and groups == ci:      # depthwise: Conv2d(C, C, groups=C)
        co = ci
    else:
        co = bound["out_channels"]
    if transposed:
        outs = [convt_out(n, k, s, p, d, op) for n, k, s, p, d, op in
                zip(ins, g["kernel"], g["stride"], g["padding"], g["dilation"], g["output_padding"])]
    else:
        outs = [conv_out(n, k, s, p, d) for n, k, s, p, d in
                zip(ins, g["kernel"], g["stride"], g["padding"], g["dilation"])]
    sizes = {k: v for k, v in xdims}
    sizes["out_channels"] = co
    onames = [out_dim_name(k) for k, _ in xdims[2:]]
    for k, v in zip(onames, outs):
        sizes[k] = v
    for e in init:
        if (len(e) == 2 and isinstance(e[1], int) and not isinstance(e[1], bool) and e[1] > 0
                and e[0] not in ("num_classes",)):
            sizes.setdefault(e[0], e[1])
    sizes.update(extra)
    xshape = [k for k, _ in xdims]
    oshape = ["batch_size", "out_channels"] + onames
    kprod = prod(g["kernel"])
    inputs = [{"name": "x", "role": "input", "dtype": "float32", "shape": xshape, "dist": dict(U01)}]
    ch_in_name = "in_channels"
    if num == 86:
        params = [("dw_weight", [ch_in_name, 1] + g["kernel"], kprod, "depthwise.weight"),
                  ("pw_weight", ["out_channels", ch_in_name, 1, 1], ci, "pointwise.weight")]
    elif transposed:
        params = [("weight", [ch_in_name, "out_channels" if groups == 1 else co // groups] + g["kernel"],
                   (co // groups) * kprod, attr + ".weight")]
    else:
        params = [("weight", ["out_channels", ch_in_name if groups == 1 else ci // groups] + g["kernel"],
                   (ci // groups) * kprod, attr + ".weight")]
    if g["bias"]:
        params.append(("bias", ["out_channels"], params[0][2], attr + ".bias"))
    for name, shape, fan_in, tp in params:
        inputs.append({"name": name, "role": "param", "dtype": "float32", "shape": shape,
                       "dist": uniform(1.0 / math.sqrt(fan_in)), "torch_param": tp,
                       "init": "kaiming_uniform(a=sqrt(5)): U(-1/sqrt(fan_in), 1/sqrt(fan_in)), fan_in = %d" % fan_in})
    outputs = [{"name": "out", "dtype": "float32", "shape": oshape}]
    # flops: 2 x multiply-adds that touch real (non-padding) input elements
    if transposed:
        taps = prod(taps_convt(n, o, k, s, p, d) for n, o, k, s, p, d in
                    zip(ins, outs, g["kernel"], g["stride"], g["padding"], g["dilation"]))
        macs = nb * ci * (co // groups) * taps
    else:
        taps = prod(taps_conv(n, o, k, s, p, d) for n, o, k, s, p, d in
                    zip(ins, outs, g["kernel"], g["stride"], g["padding"], g["dilation"]))
        macs = nb * (ci if num == 86 else co) * ((ci // groups) if num != 86 else 1) * taps
    out_numel = nb * co * prod(outs)
    if num == 86:
        macs += nb * co * ci * prod(outs)
    flops = 2 * macs + (out_numel if g["bias"] else 0)
    min_bytes = sum(tensor_bytes(t["shape"], sizes) for t in inputs + outputs)
    attrs = {"transposed": transposed, "kernel": g["kernel"], "stride": g["stride"], "padding": g["padding"],
             "dilation": g["dilation"], "output_padding": g["output_padding"], "groups": groups,
             "bias": g["bias"], "pointwise": num == 86}
    notes = ("PyTorch may run convolutions in TF32 (torch.backends.cudnn.allow_tf32 defaults to True); "
             "cross-check with it off. flops = 2 x multiply-adds on real (non-padding) input elements.")
    if num == 73:
        notes = ("KernelBench quirk: the sixth constructor argument (groups = 4) binds to output_padding, which is "
                 "not passed to the layer: groups = 1, output_padding = 0. " + notes)
    if num == 59:
        notes = "Input dims are (N, C, height, width, depth); the kernel is (3, 3, 1). " + notes
    spec = spec_base(num, file, "conv", desc, sizes, bound, inputs, outputs, flops, min_bytes, attrs, notes)
    # reference.py
    def sig_txt(k, default):
        iv = dict((e[0], e[1]) for e in init).get(k)
        if k == "bias":
            ty = "bool"
        elif isinstance(iv, tuple) or (default or "").startswith("("):
            ty = "tuple"
        else:
            ty = "int"
        return "%s: %s" % (k, ty) + ("" if default is None else " = %s" % default)
    py = PY_HEAD + 'class Model(nn.Module):\n    """%s"""\n\n' % desc
    py += "    def __init__(self, %s):\n        super(Model, self).__init__()\n" % ", ".join(sig_txt(k, d) for k, d in sig)
    if num == 86:
        py += ("        self.depthwise = nn.Conv2d(in_channels, in_channels, kernel_size, stride=stride, padding=padding, "
               "dilation=dilation, groups=in_channels, bias=bias)\n"
               "        self.pointwise = nn.Conv2d(in_channels, out_channels, kernel_size=1, bias=bias)\n\n"
               "    def forward(self, x: torch.Tensor) -> torch.Tensor:\n"
               "        x = self.depthwise(x)\n        x = self.pointwise(x)\n        return x\n\n\n")
    else:
        py += "        self.%s = nn.%s(%s)\n\n" % (attr, cls, call)
        py += "    def forward(self, x: torch.Tensor) -> torch.Tensor:\n        return self.%s(x)\n\n\n" % attr
    modvars = [("batch_size", nb)] + [(e[2] if len(e) > 2 else e[0], e[1]) for e in init] + list(xdims[1:])
    py += py_module_vars(modvars)
    py += "\n\ndef get_inputs():\n    x = torch.rand(%s)\n    return [x]\n\n\n" % ", ".join(xshape)
    py += "def get_init_inputs():\n    return [%s]\n" % ", ".join(e[2] if len(e) > 2 else e[0] for e in init)
    # reference.cu
    head = ("// Reference: %s%s, x (%s) -> out (%s).\n"
            "// One thread per output element, double accumulation. Spatial axes are padded\n"
            "// to three (size 1, kernel 1, stride 1, no padding on the missing ones), so one\n"
            "// kernel serves 1D, 2D and 3D.%s\n") % (
        cls, " + pointwise Conv2d" if num == 86 else "", ", ".join(xshape), ", ".join(oshape),
        " Transposed: out[od] gathers x[id] where od = id*S - P + k*DIL." if transposed else "")
    wshape = "(%s)" % ", ".join(str(sizes.get(s, s)) for s in params[0][1])
    if num == 86:
        cu = head + "// Depthwise 3x3 (padding 1) into a double scratch tensor, then 1x1 pointwise.\n"
        cu += geometry_defines(nb, ci, ci, ci, ins, ins, g)
        cu += "#define CPW %d   /* pointwise output channels */\n" % co
        cu += ("\nextern \"C\" __global__ void depthwise_ref(const float* __restrict__ x, const float* __restrict__ dw_weight,\n"
               "                                          double* __restrict__ mid)\n{\n")
        cu += CONV_HEAD + CONV_BODY[False].replace("WEIGHT", "dw_weight") + "    mid[idx] = acc;\n}\n"
        cu += ("\nextern \"C\" __global__ void pointwise_ref(const double* __restrict__ mid, const float* __restrict__ pw_weight,\n"
               "                                          float* __restrict__ out)\n{\n"
               "    long long idx = blockIdx.x * (long long)blockDim.x + threadIdx.x;\n"
               "    const long long hw = (long long)OH * OW;\n"
               "    if (idx >= (long long)NB * CPW * hw) return;\n"
               "    const long long p = idx % hw;\n"
               "    const int co = (int)((idx / hw) % CPW);\n"
               "    const long long n = idx / (hw * CPW);\n"
               "    double acc = 0.0;\n"
               "    for (int ci = 0; ci < CI; ++ci)\n"
               "        acc += mid[(n * CI + ci) * hw + p] * (double)pw_weight[co * CI + ci];\n"
               "    out[idx] = (float)acc;\n}\n")
        midn = "batch_size * in_channels * %s" % " * ".join(onames)
        launch = ("scratch double mid[%s];\n"
                  "depthwise_ref<<<ceil_div(%s, 256), 256>>>(x, dw_weight, mid);\n"
                  "pointwise_ref<<<ceil_div(%s, 256), 256>>>(mid, pw_weight, out);") % (
            midn, midn, " * ".join(oshape))
    else:
        cu = head + "// weight %s%s.\n" % (wshape, ", bias (out_channels)" if g["bias"] else "")
        cu += geometry_defines(nb, ci, co, groups, ins, outs, g)
        args = "const float* __restrict__ x, const float* __restrict__ weight, "
        if g["bias"]:
            args += "const float* __restrict__ bias, "
        cu += "\nextern \"C\" __global__ void conv_ref(%s\n                                     float* __restrict__ out)\n{\n" % args.rstrip()
        cu += CONV_HEAD + CONV_BODY[transposed].replace("WEIGHT", "weight")
        if g["bias"]:
            cu += "    acc += (double)bias[co];\n"
        cu += "    out[idx] = (float)acc;\n}\n"
        launch = "conv_ref<<<ceil_div(%s, 256), 256>>>(x, weight, %sout);" % (
            " * ".join(oshape), "bias, " if g["bias"] else "")
    cu += CU_TAIL % launch
    return spec, py, cu

# ---------------------------------------------------------------- main

def parse_shape(s):
    s = s.strip().strip("()")
    return [int(x) for x in s.split(",") if x.strip()]

def load_tsv(path):
    rows = {}
    with open(path) as f:
        lines = f.read().splitlines()
    for line in lines[1:]:
        c = line.split("\t")
        if len(c) < 8 or not c[0].strip().isdigit():
            continue
        ins = {}
        try:
            for part in c[3].split(";"):
                name, rest = part.split(":", 1)
                ins[name.strip()] = parse_shape(rest.strip().split(")")[0] + ")")
            out = parse_shape(c[6])
        except ValueError:
            continue       # not a tensor-only row (none of ours)
        rows[int(c[0])] = {"file": c[1], "operation": c[2], "inputs": ins, "out": out}
    return rows

def check_against_tsv(spec, tsv):
    r = tsv.get(spec["number"])
    if r is None:
        return ["%d: not in tsv" % spec["number"]]
    errs = []
    if r["file"] != spec["kernelbench_file"]:
        errs.append("%d: file %s != %s" % (spec["number"], spec["kernelbench_file"], r["file"]))
    sz = spec["sizes"]
    for t in spec["inputs"]:
        if t["role"] != "input":
            continue
        got = resolve(t["shape"], sz)
        if r["inputs"].get(t["name"]) != got:
            errs.append("%d: input %s %s != tsv %s" % (spec["number"], t["name"], got, r["inputs"].get(t["name"])))
    got = resolve(spec["outputs"][0]["shape"], sz)
    if got != r["out"]:
        errs.append("%d: output %s != tsv %s" % (spec["number"], got, r["out"]))
    return errs

def build_all():
    out = []
    for row in MATMUL:
        out.append(build_matmul(row))
    for row in POOL:
        out.append(build_pool(row))
    for row in CONV:
        out.append(build_conv(row))
    return out

def main():
    ap = argparse.ArgumentParser()
    here = os.path.dirname(os.path.abspath(__file__))
    ap.add_argument("--root", default=os.path.normpath(os.path.join(here, "..", "..")))
    ap.add_argument("--tsv", default=None)
    ap.add_argument("--check", action="store_true")
    a = ap.parse_args()
    tsv_path = a.tsv
    for c in (os.path.join(a.root, "..", "..", "shared", "kernelbench", "level1.tsv"),
              os.path.join(a.root, "..", "shared", "kernelbench", "level1.tsv")):
        if not tsv_path and os.path.exists(c):
            tsv_path = os.path.normpath(c)
    tsv_path = tsv_path or ""
    built = build_all()
    errs = []
    if os.path.exists(tsv_path):
        tsv = load_tsv(tsv_path)
        for spec, _, _ in built:
            errs += check_against_tsv(spec, tsv)
    elif a.tsv:
        errs.append("tsv not found: " + a.tsv)
    if errs:
        print("\n".join(errs), file=sys.stderr)
        return 1
    stale = 0
    for spec, py, cu in built:
        d = os.path.join(a.root, "problems", "level1", spec["id"].split("/")[1])
        files = {"spec.json": json.dumps(spec, indent=2) + "\n", "reference.py": py, "reference.cu": cu}
        if not a.check:
            os.makedirs(d, exist_ok=True)
        for name, text in files.items():
            p = os.path.join(d, name)
            if a.check:
                try:
                    cur = open(p).read()
                except OSError:
                    cur = None
                if cur != text:
                    print("stale: " + p, file=sys.stderr)
                    stale += 1
            else:
                with open(p + ".tmp", "w") as f:
                    f.write(text)
                os.replace(p + ".tmp", p)
    if not a.check:
        print("wrote %d problems" % len(built))
    return 1 if stale else 0

if __name__ == "__main__":
    sys.exit(main())
