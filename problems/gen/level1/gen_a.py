#!/usr/bin/env python3
"""Generates problems/level1/NNN_Name/{spec.json,reference.py,reference.cu}
for the probsA problems (elementwise, softmax, norms, reductions, scans,
losses, attention). Sizes follow KernelBench's level-1 modules.
    python3 problems/gen/level1/gen_a.py [--root .] [--out DIR] [--check]
--out writes DIR/problems/level1/ instead of the root's; --check: fail if a
generated file differs from the committed one (make problems runs them all)."""
import argparse
import json
import os
import sys

U01 = {"kind": "uniform", "low": 0.0, "high": 1.0}

HEADER = "import torch\nimport torch.nn as nn\nimport torch.nn.functional as F\n\n"


def t_in(name, shape, dist=None, role="input", dtype="float32"):
    return {"name": name, "role": role, "dtype": dtype, "shape": shape, "dist": dist or dict(U01)}


def t_out(name, shape, dtype="float32"):
    return {"name": name, "dtype": dtype, "shape": shape}


def numel(shape, sizes):
    n = 1
    for d in shape:
        n *= sizes[d] if isinstance(d, str) else d
    return n


DSZ = {"float32": 4, "float16": 2, "bfloat16": 2, "int64": 8, "int32": 4, "bool": 1}

PROBLEMS = []


def problem(num, file, family, op, operation, sizes, inputs, outputs, torch_text, cuda,
            flops_per, scalars=None, init_args=None, tol="fp32", notes="", attrs=None):
    PROBLEMS.append(dict(num=num, file=file, family=family, op=op, operation=operation,
                         sizes=sizes, inputs=inputs, outputs=outputs, torch=torch_text,
                         cuda=cuda, flops_per=flops_per, scalars=scalars or {},
                         init_args=init_args or {}, tol=tol, notes=notes, attrs=attrs or {}))


# ---------------------------------------------------------------- elementwise
EW_KERNEL = """// Reference: y = {desc}, element by element, computed in double.
extern "C" __global__ void {kname}(const float* __restrict__ x, float* __restrict__ y,
                                   long long n{extra_params})
{{
    long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x;
    if (i >= n) return;
    double v = (double)x[i];
    y[i] = (float)({expr});
}}

/*@launch
{kname}<<<ceil_div({n}, 256), 256>>>({xname}, {yname}, {n}{extra_args});
@*/
"""

ACT = [
    # num, file, op, torch forward expr, cuda expr (double v), desc, flops/elem, scalars
    (19, "19_ReLU.py", "relu", "torch.relu(x)", "v > 0.0 ? v : 0.0", "max(x, 0)", 1, {}),
    (20, "20_LeakyReLU.py", "leaky_relu",
     "torch.nn.functional.leaky_relu(x, negative_slope=self.negative_slope)",
     "v > 0.0 ? v : v * (double)negative_slope", "leaky_relu(x, negative_slope)", 2,
     {"negative_slope": 0.01}),
    (21, "21_Sigmoid.py", "sigmoid", "torch.sigmoid(x)", "1.0 / (1.0 + exp(-v))",
     "1 / (1 + exp(-x))", 4, {}),
    (22, "22_Tanh.py", "tanh", "torch.tanh(x)", "tanh(v)", "tanh(x)", 4, {}),
    (25, "25_Swish.py", "swish", "x * torch.sigmoid(x)", "v / (1.0 + exp(-v))",
     "x * sigmoid(x)", 5, {}),
    (26, "26_GELU_.py", "gelu", "torch.nn.functional.gelu(x)",
     "0.5 * v * (1.0 + erf(v * 0.70710678118654752440))", "0.5 x (1 + erf(x / sqrt(2)))", 8, {}),
    (27, "27_SELU_.py", "selu", "torch.selu(x)",
     "v > 0.0 ? 1.0507009873554804934193349852946 * v : "
     "1.0507009873554804934193349852946 * 1.6732632423543772848170429916717 * (exp(v) - 1.0)",
     "scale * (max(0, x) + min(0, alpha (exp(x) - 1)))", 5, {}),
    (28, "28_HardSigmoid.py", "hardsigmoid", "torch.nn.functional.hardsigmoid(x)",
     "fmin(fmax(v / 6.0 + 0.5, 0.0), 1.0)", "clamp(x / 6 + 1/2, 0, 1)", 4, {}),
    (29, "29_Softplus.py", "softplus", "torch.nn.functional.softplus(x)",
     "v > 20.0 ? v : log1p(exp(v))", "log(1 + exp(x)) (x above 20: x)", 4, {}),
    (30, "30_Softsign.py", "softsign", "x / (1 + torch.abs(x))", "v / (1.0 + fabs(v))",
     "x / (1 + |x|)", 3, {}),
    (31, "31_ELU.py", "elu", "F.elu(x, alpha=self.alpha)",
     "v > 0.0 ? v : (double)alpha * (exp(v) - 1.0)", "x > 0 ? x : alpha (exp(x) - 1)", 4,
     {"alpha": 1.0}),
    (32, "32_HardTanh.py", "hardtanh", "F.hardtanh(x, min_val=-1., max_val=1.)",
     "fmin(fmax(v, -1.0), 1.0)", "clamp(x, -1, 1)", 2, {}),
]

ACT_NAMES = {19: "ReLU", 20: "LeakyReLU", 21: "Sigmoid", 22: "Tanh", 25: "Swish", 26: "GELU",
             27: "SELU", 28: "HardSigmoid", 29: "Softplus", 30: "Softsign", 31: "ELU",
             32: "HardTanh"}


def act_torch(num, fwd, scalars):
    name = ACT_NAMES[num]
    init = ""
    args = ""
    if "negative_slope" in scalars:
        init = "    def __init__(self, negative_slope: float = 0.01):\n        super(Model, self).__init__()\n        self.negative_slope = negative_slope\n"
    elif "alpha" in scalars:
        init = "    def __init__(self, alpha: float = 1.0):\n        super(Model, self).__init__()\n        self.alpha = alpha\n"
        args = "alpha"
    else:
        init = "    def __init__(self):\n        super(Model, self).__init__()\n"
    init_inputs = "[1.0]" if args == "alpha" else "[]"
    return (HEADER + "class Model(nn.Module):\n    \"\"\"\n    Simple model that performs a %s activation.\n    \"\"\"\n" % name
            + init + "\n    def forward(self, x: torch.Tensor) -> torch.Tensor:\n"
            "        \"\"\"\n        Applies %s to the input tensor.\n\n        Args:\n"
            "            x (torch.Tensor): Input tensor of any shape.\n\n        Returns:\n"
            "            torch.Tensor: Output tensor with %s applied, same shape as input.\n"
            "        \"\"\"\n        return %s\n\n" % (name, name, fwd)
            + "batch_size = 4096\ndim = 393216\n\ndef get_inputs():\n"
            "    x = torch.rand(batch_size, dim)\n    return [x]\n\n"
            "def get_init_inputs():\n    return %s  # No special initialization inputs needed\n"
            % init_inputs)


for num, file, op, fwd, expr, desc, fl, scal in ACT:
    extra_p = "".join(", float %s" % k for k in scal)
    extra_a = "".join(", %s" % k for k in scal)
    cu = EW_KERNEL.format(desc=desc, kname=op + "_ref", extra_params=extra_p, expr=expr,
                          n="batch_size * dim", xname="x", yname="y", extra_args=extra_a)
    problem(num, file, "elementwise", op, desc, {"batch_size": 4096, "dim": 393216},
            [t_in("x", ["batch_size", "dim"])], [t_out("y", ["batch_size", "dim"])],
            act_torch(num, fwd, scal), cu, fl, scalars=scal,
            init_args={k: v for k, v in scal.items()},
            notes=("negative_slope=0.01 (default)" if num == 20 else ""))

problem(5, "5_Matrix_scalar_multiplication.py", "elementwise", "scale", "C = A * s (s = 3.14)",
        {"M": 65536, "N": 16384}, [t_in("A", ["M", "N"])], [t_out("C", ["M", "N"])],
        HEADER + '''class Model(nn.Module):
    """
    Simple model that performs a matrix-scalar multiplication (C = A * s)
    """
    def __init__(self):
        super(Model, self).__init__()

    def forward(self, A: torch.Tensor, s: float) -> torch.Tensor:
        """
        Performs matrix-scalar multiplication.

        Args:
            A: Input matrix of shape (M, N)
            s: Scalar value

        Returns:
            C: Resulting matrix of shape (M, N)
        """
        return A * s

M = 65536
N = 16384

def get_inputs():
    A = torch.rand(M, N)
    s = 3.14
    return [A, s]

def get_init_inputs():
    return []  # No special initialization inputs needed
''',
        EW_KERNEL.format(desc="A * s (float multiply, as PyTorch)", kname="scale_ref",
                         extra_params=", float s", expr="(float)v * s", n="M * N",
                         xname="A", yname="C", extra_args=", s"),
        1, scalars={"s": 3.14},
        notes="s is a Python float passed to forward, not a tensor; a kernel gets it as a float scalar")

problem(88, "88_MinGPTNewGelu.py", "elementwise", "new_gelu",
        "0.5 x (1 + tanh(sqrt(2/pi) (x + 0.044715 x^3)))", {"batch_size": 8192, "dim": 8192},
        [t_in("x", ["batch_size", "dim"])], [t_out("y", ["batch_size", "dim"])],
        HEADER.replace("import torch.nn.functional as F\n", "import math\n") + '''# From https://github.com/karpathy/minGPT/blob/master/mingpt/model.py

class Model(nn.Module):
    """
    Implementation of the GELU activation function currently in Google BERT repo (identical to OpenAI GPT).
    Reference: Gaussian Error Linear Units (GELU) paper: https://arxiv.org/abs/1606.08415
    """
    def __init__(self):
        super(Model, self).__init__()

    def forward(self, x):
        return 0.5 * x * (1.0 + torch.tanh(math.sqrt(2.0 / math.pi) * (x + 0.044715 * torch.pow(x, 3.0))))

batch_size = 8192
dim = 8192

def get_inputs():
    return [torch.rand(batch_size, dim)]

def get_init_inputs():
    return []
''',
        EW_KERNEL.format(desc="MinGPT NewGELU (tanh approximation)", kname="new_gelu_ref",
                         extra_params="",
                         expr="0.5 * v * (1.0 + tanh(0.79788456080286535588 * (v + 0.044715 * v * v * v)))",
                         n="batch_size * dim", xname="x", yname="y", extra_args=""),
        9)

# ---------------------------------------------------------------- softmax
SOFTMAX_CU = """// Reference: {what} over each row of x (batch_size, dim); one block per row,
// max, then the sum of exp(x - max) in double, then the output.
extern "C" __global__ void {kname}(const float* __restrict__ x, float* __restrict__ y,
                                   long long rows, long long cols)
{{
    __shared__ double red[256];
    long long r = blockIdx.x;
    if (r >= rows) return;
    const float* xr = x + r * cols;
    float* yr = y + r * cols;
    double m = -1.0e300;
    for (long long j = threadIdx.x; j < cols; j += blockDim.x)
        m = fmax(m, (double)xr[j]);
    red[threadIdx.x] = m;
    __syncthreads();
    for (int s = 128; s > 0; s >>= 1) {{
        if (threadIdx.x < s) red[threadIdx.x] = fmax(red[threadIdx.x], red[threadIdx.x + s]);
        __syncthreads();
    }}
    m = red[0];
    __syncthreads();
    double sum = 0.0;
    for (long long j = threadIdx.x; j < cols; j += blockDim.x)
        sum += exp((double)xr[j] - m);
    red[threadIdx.x] = sum;
    __syncthreads();
    for (int s = 128; s > 0; s >>= 1) {{
        if (threadIdx.x < s) red[threadIdx.x] += red[threadIdx.x + s];
        __syncthreads();
    }}
    sum = red[0];
    for (long long j = threadIdx.x; j < cols; j += blockDim.x)
        yr[j] = (float)({expr});
}}

/*@launch
{kname}<<<batch_size, 256>>>(x, y, batch_size, dim);
@*/
"""

problem(23, "23_Softmax.py", "norm", "softmax", "softmax over dim 1",
        {"batch_size": 4096, "dim": 393216}, [t_in("x", ["batch_size", "dim"])],
        [t_out("y", ["batch_size", "dim"])],
        HEADER + '''class Model(nn.Module):
    """
    Simple model that performs a Softmax activation.
    """
    def __init__(self):
        super(Model, self).__init__()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        """
        Applies Softmax activation to the input tensor.

        Args:
            x (torch.Tensor): Input tensor of shape (batch_size, num_features).

        Returns:
            torch.Tensor: Output tensor with Softmax applied, same shape as input.
        """
        return torch.softmax(x, dim=1)

batch_size = 4096
dim = 393216

def get_inputs():
    x = torch.rand(batch_size, dim)
    return [x]

def get_init_inputs():
    return []  # No special initialization inputs needed
''',
        SOFTMAX_CU.format(what="softmax", kname="softmax_ref", expr="exp((double)xr[j] - m) / sum"),
        5)

problem(24, "24_LogSoftmax.py", "norm", "log_softmax", "log-softmax over dim 1",
        {"batch_size": 4096, "dim": 393216}, [t_in("x", ["batch_size", "dim"])],
        [t_out("y", ["batch_size", "dim"])],
        HEADER + '''class Model(nn.Module):
    """
    Simple model that performs a LogSoftmax activation.
    """
    def __init__(self, dim: int = 1):
        super(Model, self).__init__()
        self.dim = dim

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        """
        Applies LogSoftmax activation to the input tensor.

        Args:
            x (torch.Tensor): Input tensor of shape (batch_size, dim).

        Returns:
            torch.Tensor: Output tensor with LogSoftmax applied, same shape as input.
        """
        return torch.log_softmax(x, dim=self.dim)

batch_size = 4096
dim = 393216

def get_inputs():
    x = torch.rand(batch_size, dim)
    return [x]

def get_init_inputs():
    return []  # No special initialization inputs needed
''',
        SOFTMAX_CU.format(what="log-softmax", kname="log_softmax_ref",
                          expr="(double)xr[j] - m - log(sum)"),
        5, init_args={"dim": 1}, attrs={"dim": 1})

# ---------------------------------------------------------------- norms
BLOCK_RED2 = """
// Sums a and b over the block (256 threads) into red[0], red[256].
__device__ void block_sum2(double* red, double a, double b)
{
    red[threadIdx.x] = a;
    red[256 + threadIdx.x] = b;
    __syncthreads();
    for (int s = 128; s > 0; s >>= 1) {
        if (threadIdx.x < s) {
            red[threadIdx.x] += red[threadIdx.x + s];
            red[256 + threadIdx.x] += red[256 + threadIdx.x + s];
        }
        __syncthreads();
    }
}
"""

SEG_PARTIAL = BLOCK_RED2 + """
// Block (c, s) sums x and x^2 over chunk c of contiguous segment s.
extern "C" __global__ void seg_partial(const float* __restrict__ x, double* __restrict__ part,
                                       long long seg_len, int chunks)
{
    __shared__ double red[512];
    long long s = blockIdx.y;
    long long chunk = (seg_len + chunks - 1) / chunks;
    long long lo = s * seg_len + blockIdx.x * chunk;
    long long hi = min(lo + chunk, (s + 1) * seg_len);
    double a = 0.0, b = 0.0;
    for (long long i = lo + threadIdx.x; i < hi; i += blockDim.x) {
        double v = (double)x[i];
        a += v;
        b += v * v;
    }
    block_sum2(red, a, b);
    if (threadIdx.x == 0) {
        part[2 * (s * chunks + blockIdx.x)] = red[0];
        part[2 * (s * chunks + blockIdx.x) + 1] = red[256];
    }
}

// stats[2t] = mean, stats[2t+1] = 1/sqrt(var + eps) of statistic t from
// parts [t*per, (t+1)*per) covering `count` elements (biased variance).
extern "C" __global__ void seg_finalize(const double* __restrict__ part, double* __restrict__ stats,
                                        long long nstat, long long per, long long count, double eps)
{
    long long t = blockIdx.x * (long long)blockDim.x + threadIdx.x;
    if (t >= nstat) return;
    double a = 0.0, b = 0.0;
    for (long long k = 0; k < per; k++) {
        a += part[2 * (t * per + k)];
        b += part[2 * (t * per + k) + 1];
    }
    double mean = a / (double)count;
    double var = b / (double)count - mean * mean;
    if (var < 0.0) var = 0.0;
    stats[2 * t] = mean;
    stats[2 * t + 1] = 1.0 / sqrt(var + eps);
}
"""

NORM_APPLY = """
// y = (x - mean) * rstd{affine_desc}; statistic index {stat_desc}.
extern "C" __global__ void norm_apply(const float* __restrict__ x, {wb_params}const double* __restrict__ stats,
                                      float* __restrict__ y, long long n{extra_params})
{{
    long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x;
    if (i >= n) return;
    long long st = {stat_expr};
    double v = ((double)x[i] - stats[2 * st]) * stats[2 * st + 1];
    y[i] = (float)({out_expr});
}}
"""


def norm_torch(cls_doc, init_sig, init_body, fwd, sizes_txt, init_inputs):
    return (HEADER + "class Model(nn.Module):\n    \"\"\"\n    %s\n    \"\"\"\n" % cls_doc
            + "    def __init__(self%s):\n        super(Model, self).__init__()\n%s\n" % (init_sig, init_body)
            + "    def forward(self, x: torch.Tensor) -> torch.Tensor:\n        return %s\n\n" % fwd
            + sizes_txt + "\n\ndef get_inputs():\n    x = torch.rand(%s)\n    return [x]\n\n"
            % ("batch_size, features, dim1, dim2")
            + "def get_init_inputs():\n    return %s\n" % init_inputs)


# 33 BatchNorm2d, training mode: statistics over (N, H, W) per channel.
BN_SIZES = {"batch_size": 64, "features": 64, "dim1": 512, "dim2": 512}
problem(33, "33_BatchNorm.py", "norm", "batchnorm",
        "BatchNorm2d in training mode (batch statistics, biased variance, eps 1e-5)", BN_SIZES,
        [t_in("x", ["batch_size", "features", "dim1", "dim2"]),
         t_in("weight", ["features"], {"kind": "constant", "value": 1.0}, role="param"),
         t_in("bias", ["features"], {"kind": "constant", "value": 0.0}, role="param")],
        [t_out("y", ["batch_size", "features", "dim1", "dim2"])],
        norm_torch("Simple model that performs Batch Normalization.", ", num_features: int",
                   "        self.bn = nn.BatchNorm2d(num_features=num_features)",
                   "self.bn(x)", "batch_size = 64\nfeatures = 64\ndim1 = 512\ndim2 = 512",
                   "[features]"),
        SEG_PARTIAL + """
// Channel statistics from the per-(n, c) parts: mean and 1/sqrt(var + eps) over N*H*W.
extern "C" __global__ void bn_finalize(const double* __restrict__ part, double* __restrict__ stats,
                                       long long N, long long C, long long chunks, long long count,
                                       double eps)
{
    long long c = blockIdx.x * (long long)blockDim.x + threadIdx.x;
    if (c >= C) return;
    double a = 0.0, b = 0.0;
    for (long long n = 0; n < N; n++)
        for (long long k = 0; k < chunks; k++) {
            a += part[2 * ((n * C + c) * chunks + k)];
            b += part[2 * ((n * C + c) * chunks + k) + 1];
        }
    double mean = a / (double)count;
    double var = b / (double)count - mean * mean;
    if (var < 0.0) var = 0.0;
    stats[2 * c] = mean;
    stats[2 * c + 1] = 1.0 / sqrt(var + eps);
}
""" + NORM_APPLY.format(affine_desc=" * weight[c] + bias[c]", stat_desc="= channel c",
                         wb_params="const float* __restrict__ weight, const float* __restrict__ bias,\n                                      ",
                         extra_params=", long long C, long long HW", stat_expr="(i / HW) % C",
                         out_expr="v * (double)weight[st] + (double)bias[st]") + """
/*@launch
scratch double part[2 * batch_size * features * 16];
scratch double stats[2 * features];
seg_partial<<<dim3(16, batch_size * features), 256>>>(x, part, dim1 * dim2, 16);
bn_finalize<<<ceil_div(features, 64), 64>>>(part, stats, batch_size, features, 16, batch_size * dim1 * dim2, 1e-5);
norm_apply<<<ceil_div(batch_size * features * dim1 * dim2, 256), 256>>>(x, weight, bias, stats, y, batch_size * features * dim1 * dim2, features, dim1 * dim2);
@*/
""", 7, init_args={"num_features": 64}, scalars={"eps": 1e-5},
        attrs={"eps": 1e-5},
        notes="KernelBench constructs the module and calls it without .eval(): training mode, "
              "so batch statistics (biased variance) are used; weight 1 and bias 0 as PyTorch "
              "initialises them. Running statistics are updated by PyTorch but are not outputs.")

IN_SIZES = {"batch_size": 112, "features": 64, "dim1": 512, "dim2": 512}
problem(34, "34_InstanceNorm.py", "norm", "instancenorm",
        "InstanceNorm2d (no affine): statistics over (H, W) per (n, c), eps 1e-5", IN_SIZES,
        [t_in("x", ["batch_size", "features", "dim1", "dim2"])],
        [t_out("y", ["batch_size", "features", "dim1", "dim2"])],
        norm_torch("Simple model that performs Instance Normalization.", ", num_features: int",
                   "        self.inorm = nn.InstanceNorm2d(num_features=num_features)",
                   "self.inorm(x)", "batch_size = 112\nfeatures = 64\ndim1 = 512\ndim2 = 512",
                   "[features]"),
        SEG_PARTIAL + NORM_APPLY.format(affine_desc="", stat_desc="= (n, c)", wb_params="",
                                        extra_params=", long long HW", stat_expr="i / HW",
                                        out_expr="v") + """
/*@launch
scratch double part[2 * batch_size * features * 16];
scratch double stats[2 * batch_size * features];
seg_partial<<<dim3(16, batch_size * features), 256>>>(x, part, dim1 * dim2, 16);
seg_finalize<<<ceil_div(batch_size * features, 256), 256>>>(part, stats, batch_size * features, 16, dim1 * dim2, 1e-5);
norm_apply<<<ceil_div(batch_size * features * dim1 * dim2, 256), 256>>>(x, stats, y, batch_size * features * dim1 * dim2, dim1 * dim2);
@*/
""", 7, init_args={"num_features": 64}, scalars={"eps": 1e-5}, attrs={"eps": 1e-5})

GN_SIZES = {"batch_size": 112, "features": 64, "num_groups": 8, "dim1": 512, "dim2": 512}
problem(35, "35_GroupNorm_.py", "norm", "groupnorm",
        "GroupNorm (8 groups, affine weight 1 / bias 0): statistics over (C/G, H, W) per (n, g)",
        GN_SIZES,
        [t_in("x", ["batch_size", "features", "dim1", "dim2"]),
         t_in("weight", ["features"], {"kind": "constant", "value": 1.0}, role="param"),
         t_in("bias", ["features"], {"kind": "constant", "value": 0.0}, role="param")],
        [t_out("y", ["batch_size", "features", "dim1", "dim2"])],
        norm_torch("Simple model that performs Group Normalization.",
                   ", num_features: int, num_groups: int",
                   "        self.gn = nn.GroupNorm(num_groups=num_groups, num_channels=num_features)",
                   "self.gn(x)",
                   "batch_size = 112\nfeatures = 64\nnum_groups = 8\ndim1 = 512\ndim2 = 512",
                   "[features, num_groups]"),
        SEG_PARTIAL + NORM_APPLY.format(
            affine_desc=" * weight[c] + bias[c]", stat_desc="= (n, g)",
            wb_params="const float* __restrict__ weight, const float* __restrict__ bias,\n                                      ",
            extra_params=", long long C, long long G, long long HW",
            stat_expr="(i / HW) / C * G + ((i / HW) % C) / (C / G)",
            out_expr="v * (double)weight[(i / HW) % C] + (double)bias[(i / HW) % C]") + """
/*@launch
scratch double part[2 * batch_size * num_groups * 64];
scratch double stats[2 * batch_size * num_groups];
seg_partial<<<dim3(64, batch_size * num_groups), 256>>>(x, part, features / num_groups * dim1 * dim2, 64);
seg_finalize<<<ceil_div(batch_size * num_groups, 256), 256>>>(part, stats, batch_size * num_groups, 64, features / num_groups * dim1 * dim2, 1e-5);
norm_apply<<<ceil_div(batch_size * features * dim1 * dim2, 256), 256>>>(x, weight, bias, stats, y, batch_size * features * dim1 * dim2, features, num_groups, dim1 * dim2);
@*/
""", 7, init_args={"num_features": 64, "num_groups": 8}, scalars={"eps": 1e-5},
        attrs={"eps": 1e-5})

problem(36, "36_RMSNorm_.py", "norm", "rmsnorm",
        "x / sqrt(mean(x^2 over dim 1) + eps), eps 1e-5, no weight",
        {"batch_size": 112, "features": 64, "dim1": 512, "dim2": 512},
        [t_in("x", ["batch_size", "features", "dim1", "dim2"])],
        [t_out("y", ["batch_size", "features", "dim1", "dim2"])],
        HEADER + '''class Model(nn.Module):
    """
    Simple model that performs RMS Normalization.
    """
    def __init__(self, num_features: int, eps: float = 1e-5):
        super(Model, self).__init__()
        self.num_features = num_features
        self.eps = eps

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        # Calculate the RMS along the feature dimension
        rms = torch.sqrt(torch.mean(x ** 2, dim=1, keepdim=True) + self.eps)
        # Normalize the input by dividing by the RMS
        return x / rms

batch_size = 112
features = 64
dim1 = 512
dim2 = 512

def get_inputs():
    x = torch.rand(batch_size, features, dim1, dim2)
    return [x]

def get_init_inputs():
    return [features]
''',
        """// Reference: one thread per (n, h, w): the mean of x^2 over the channels in
// double, then every channel divided by sqrt(mean + eps).
extern "C" __global__ void rmsnorm_ref(const float* __restrict__ x, float* __restrict__ y,
                                       long long N, long long C, long long HW, float eps)
{
    long long p = blockIdx.x * (long long)blockDim.x + threadIdx.x;
    if (p >= N * HW) return;
    long long n = p / HW, q = p % HW;
    const float* xp = x + n * C * HW + q;
    double s = 0.0;
    for (long long c = 0; c < C; c++) {
        double v = (double)xp[c * HW];
        s += v * v;
    }
    double r = sqrt(s / (double)C + (double)eps);
    for (long long c = 0; c < C; c++)
        y[n * C * HW + c * HW + q] = (float)((double)xp[c * HW] / r);
}

/*@launch
rmsnorm_ref<<<ceil_div(batch_size * dim1 * dim2, 256), 256>>>(x, y, batch_size, features, dim1 * dim2, eps);
@*/
""", 4, init_args={"num_features": 64, "eps": 1e-5}, scalars={"eps": 1e-5},
        attrs={"eps": 1e-5})

SUMSQ = """// Reference: the sum of x^2 over the whole tensor in double (block partials,
// then one block), then x / sqrt(sum).
extern "C" __global__ void sumsq_partial(const float* __restrict__ x, double* __restrict__ part,
                                         long long n)
{
    __shared__ double red[256];
    double s = 0.0;
    for (long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x; i < n;
         i += (long long)gridDim.x * blockDim.x) {
        double v = (double)x[i];
        s += v * v;
    }
    red[threadIdx.x] = s;
    __syncthreads();
    for (int k = 128; k > 0; k >>= 1) {
        if (threadIdx.x < k) red[threadIdx.x] += red[threadIdx.x + k];
        __syncthreads();
    }
    if (threadIdx.x == 0) part[blockIdx.x] = red[0];
}

extern "C" __global__ void sum_parts(const double* __restrict__ part, long long n,
                                     double* __restrict__ total)
{
    __shared__ double red[256];
    double s = 0.0;
    for (long long i = threadIdx.x; i < n; i += blockDim.x) s += part[i];
    red[threadIdx.x] = s;
    __syncthreads();
    for (int k = 128; k > 0; k >>= 1) {
        if (threadIdx.x < k) red[threadIdx.x] += red[threadIdx.x + k];
        __syncthreads();
    }
    if (threadIdx.x == 0) total[0] = red[0];
}

extern "C" __global__ void div_norm(const float* __restrict__ x, const double* __restrict__ total,
                                    float* __restrict__ y, long long n)
{
    long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x;
    if (i < n) y[i] = (float)((double)x[i] / sqrt(total[0]));
}

/*@launch
scratch double part[4096];
scratch double total[1];
sumsq_partial<<<4096, 256>>>(x, part, batch_size * features * dim1 * dim2);
sum_parts<<<1, 256>>>(part, 4096, total);
div_norm<<<ceil_div(batch_size * features * dim1 * dim2, 256), 256>>>(x, total, y, batch_size * features * dim1 * dim2);
@*/
"""

problem(37, "37_FrobeniusNorm_.py", "norm", "frobenius",
        "x / ||x||_F (Frobenius norm of the whole tensor)",
        {"batch_size": 112, "features": 64, "dim1": 512, "dim2": 512},
        [t_in("x", ["batch_size", "features", "dim1", "dim2"])],
        [t_out("y", ["batch_size", "features", "dim1", "dim2"])],
        HEADER + '''class Model(nn.Module):
    """
    Simple model that performs Frobenius norm normalization.
    """
    def __init__(self):
        super(Model, self).__init__()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        norm = torch.norm(x, p='fro')
        return x / norm

batch_size = 112
features = 64
dim1 = 512
dim2 = 512

def get_inputs():
    x = torch.rand(batch_size, features, dim1, dim2)
    return [x]

def get_init_inputs():
    return []
''', SUMSQ, 3)

ROWNORM = """// Reference: one block per row; the row's {what} in double, then x divided by it.
extern "C" __global__ void {kname}(const float* __restrict__ x, float* __restrict__ y,
                                   long long rows, long long cols)
{{
    __shared__ double red[256];
    long long r = blockIdx.x;
    if (r >= rows) return;
    const float* xr = x + r * cols;
    double s = 0.0;
    for (long long j = threadIdx.x; j < cols; j += blockDim.x) {{
        double v = (double)xr[j];
        s += {term};
    }}
    red[threadIdx.x] = s;
    __syncthreads();
    for (int k = 128; k > 0; k >>= 1) {{
        if (threadIdx.x < k) red[threadIdx.x] += red[threadIdx.x + k];
        __syncthreads();
    }}
    double d = {den};
    for (long long j = threadIdx.x; j < cols; j += blockDim.x)
        y[r * cols + j] = (float)((double)xr[j] / d);
}}

/*@launch
{kname}<<<batch_size, 256>>>(x, y, batch_size, dim);
@*/
"""

problem(38, "38_L1Norm_.py", "norm", "l1norm", "x / mean(|x|, dim 1, keepdim)",
        {"batch_size": 32768, "dim": 65535}, [t_in("x", ["batch_size", "dim"])],
        [t_out("y", ["batch_size", "dim"])],
        HEADER + '''class Model(nn.Module):
    """
    Simple model that performs L1 normalization.
    """
    def __init__(self):
        super(Model, self).__init__()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return x / torch.mean(torch.abs(x), dim=1, keepdim=True)

batch_size = 32768
dim = 65535

def get_inputs():
    x = torch.rand(batch_size, dim)
    return [x]

def get_init_inputs():
    return []
''', ROWNORM.format(what="mean of |x|", kname="l1norm_ref", term="fabs(v)",
                    den="red[0] / (double)cols"), 3,
        notes="KernelBench divides by the mean of |x| (not the sum)")

problem(39, "39_L2Norm_.py", "norm", "l2norm", "x / ||x||_2 over dim 1 (keepdim)",
        {"batch_size": 32768, "dim": 65535}, [t_in("x", ["batch_size", "dim"])],
        [t_out("y", ["batch_size", "dim"])],
        HEADER + '''class Model(nn.Module):
    """
    Simple model that performs L2 normalization.
    """
    def __init__(self):
        super(Model, self).__init__()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return x / torch.norm(x, p=2, dim=1, keepdim=True)

batch_size = 32768
dim = 65535

def get_inputs():
    x = torch.rand(batch_size, dim)
    return [x]

def get_init_inputs():
    return []
''', ROWNORM.format(what="L2 norm", kname="l2norm_ref", term="v * v", den="sqrt(red[0])"), 3)

LN_SIZES = {"batch_size": 16, "features": 64, "dim1": 256, "dim2": 256}
problem(40, "40_LayerNorm.py", "norm", "layernorm",
        "LayerNorm over the last three dims (features, dim1, dim2), weight 1 / bias 0, eps 1e-5",
        LN_SIZES,
        [t_in("x", ["batch_size", "features", "dim1", "dim2"]),
         t_in("weight", ["features", "dim1", "dim2"], {"kind": "constant", "value": 1.0}, role="param"),
         t_in("bias", ["features", "dim1", "dim2"], {"kind": "constant", "value": 0.0}, role="param")],
        [t_out("y", ["batch_size", "features", "dim1", "dim2"])],
        norm_torch("Simple model that performs Layer Normalization.",
                   ", normalized_shape: tuple",
                   "        self.ln = nn.LayerNorm(normalized_shape=normalized_shape)",
                   "self.ln(x)", "batch_size = 16\nfeatures = 64\ndim1 = 256\ndim2 = 256",
                   "[(features, dim1, dim2)]"),
        SEG_PARTIAL + NORM_APPLY.format(
            affine_desc=" * weight[k] + bias[k]", stat_desc="= n",
            wb_params="const float* __restrict__ weight, const float* __restrict__ bias,\n                                      ",
            extra_params=", long long D", stat_expr="i / D",
            out_expr="v * (double)weight[i % D] + (double)bias[i % D]") + """
/*@launch
scratch double part[2 * batch_size * 256];
scratch double stats[2 * batch_size];
seg_partial<<<dim3(256, batch_size), 256>>>(x, part, features * dim1 * dim2, 256);
seg_finalize<<<ceil_div(batch_size, 64), 64>>>(part, stats, batch_size, 256, features * dim1 * dim2, 1e-5);
norm_apply<<<ceil_div(batch_size * features * dim1 * dim2, 256), 256>>>(x, weight, bias, stats, y, batch_size * features * dim1 * dim2, features * dim1 * dim2);
@*/
""", 7, init_args={"normalized_shape": [64, 256, 256]}, scalars={"eps": 1e-5},
        attrs={"eps": 1e-5})

# ---------------------------------------------------------------- reductions over dim 1
RED_SIZES = {"batch_size": 128, "dim1": 4096, "dim2": 4095}
RED_CU = """// Reference: {desc}; one thread per (b, j) walking dim1 (in double for sums).
extern "C" __global__ void {kname}(const float* __restrict__ x, {otype}* __restrict__ y,
                                   long long B, long long D1, long long D2)
{{
    long long o = blockIdx.x * (long long)blockDim.x + threadIdx.x;
    if (o >= B * D2) return;
    long long b = o / D2, j = o % D2;
    const float* xp = x + b * D1 * D2 + j;
{body}
}}

/*@launch
{kname}<<<ceil_div(batch_size * dim2, 256), 256>>>(x, y, batch_size, dim1, dim2);
@*/
"""
SUM_BODY = """    double s = 0.0;
    for (long long k = 0; k < D1; k++) s += (double)xp[k * D2];
    y[o] = (float)({fin});"""
EXT_BODY = """    float best = xp[0];
    long long bi = 0;
    for (long long k = 1; k < D1; k++) {{
        float v = xp[k * D2];
        if (v {cmp} best) {{ best = v; bi = k; }}   // first index wins ties, as PyTorch
    }}
    y[o] = {res};
    (void)best; (void)bi;"""


def red_torch(doc, fwd):
    return (HEADER + '''class Model(nn.Module):
    """
    Simple model that performs %s over a specific dimension.
    """
    def __init__(self, dim: int):
        """
        Initializes the model with the dimension to reduce over.

        Args:
            dim (int): Dimension to reduce over.
        """
        super(Model, self).__init__()
        self.dim = dim

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return %s

batch_size = 128
dim1 = 4096
dim2 = 4095

def get_inputs():
    x = torch.rand(batch_size, dim1, dim2)
    return [x]

def get_init_inputs():
    return [1]
''' % (doc, fwd))


for num, file, op, doc, fwd, kind, oshape, odt in [
    (47, "47_Sum_reduction_over_a_dimension.py", "sum", "sum reduction",
     "torch.sum(x, dim=self.dim, keepdim=True)", ("sum", "s"), ["batch_size", 1, "dim2"], "float32"),
    (48, "48_Mean_reduction_over_a_dimension.py", "mean", "mean reduction",
     "torch.mean(x, dim=self.dim)", ("sum", "s / (double)D1"), ["batch_size", "dim2"], "float32"),
    (49, "49_Max_reduction_over_a_dimension.py", "max", "max reduction",
     "torch.max(x, dim=self.dim)[0]", ("ext", ">", "best"), ["batch_size", "dim2"], "float32"),
    (51, "51_Argmax_over_a_dimension.py", "argmax", "argmax",
     "torch.argmax(x, dim=self.dim)", ("ext", ">", "bi"), ["batch_size", "dim2"], "int64"),
    (52, "52_Argmin_over_a_dimension.py", "argmin", "argmin",
     "torch.argmin(x, dim=self.dim)", ("ext", "<", "bi"), ["batch_size", "dim2"], "int64"),
    (53, "53_Min_reduction_over_a_dimension.py", "min", "min reduction",
     "torch.min(x, dim=self.dim)[0]", ("ext", "<", "best"), ["batch_size", "dim2"], "float32"),
]:
    body = SUM_BODY.format(fin=kind[1]) if kind[0] == "sum" else EXT_BODY.format(cmp=kind[1], res=kind[2])
    cu = RED_CU.format(desc="%s over dim 1 of (B, D1, D2)" % op, kname=op + "_dim1_ref",
                       otype="long long" if odt == "int64" else "float", body=body)
    problem(num, file, "reduce", op, "%s over dim 1" % op, dict(RED_SIZES),
            [t_in("x", ["batch_size", "dim1", "dim2"])], [t_out("y", oshape, odt)],
            red_torch(doc, fwd), cu, 1, init_args={"dim": 1},
            tol="exact" if odt == "int64" else "fp32", attrs={"dim": 1},
            notes=("ties resolve to the first index, as torch.argmax/argmin" if odt == "int64"
                   else ("keepdim=True" if num == 47 else "")))

# ---------------------------------------------------------------- scans
SCAN_SIZES = {"batch_size": 32768, "length": 32768}
SCAN_CU = """// Reference: {desc}; one thread per row, sequential along the row in double.
extern "C" __global__ void {kname}(const float* __restrict__ x, {mask_param}float* __restrict__ y,
                                   long long rows, long long cols)
{{
    long long r = blockIdx.x * (long long)blockDim.x + threadIdx.x;
    if (r >= rows) return;
    const float* xr = x + r * cols;
    float* yr = y + r * cols;
{body}
}}

/*@launch
{kname}<<<ceil_div(batch_size, 128), 128>>>(x, {mask_arg}y, batch_size, length);
@*/
"""


def scan_torch(doc, fwd, extra_inputs="", inputs="[torch.rand(batch_size, *input_shape)]",
               fwd_args="x"):
    return (HEADER + '''class Model(nn.Module):
    """
    %s

    Parameters:
        dim (int): The dimension along which to perform the scan operation.
    """

    def __init__(self, dim):
        super(Model, self).__init__()
        self.dim = dim

    def forward(self, %s):
        %s

batch_size = 32768
length = 32768
input_shape = (length,)
dim = 1

def get_inputs():%s
    return %s

def get_init_inputs():
    return [dim]
''' % (doc, fwd_args, fwd, extra_inputs, inputs))


SCANS = [
    (89, "89_cumsum.py", "cumsum", "inclusive prefix sum along dim 1",
     "A simple model that performs a cumulative sum (prefix sum) operation along a specified dimension.",
     "return torch.cumsum(x, dim=self.dim)",
     "    double s = 0.0;\n    for (long long j = 0; j < cols; j++) { s += (double)xr[j]; yr[j] = (float)s; }"),
    (90, "90_cumprod.py", "cumprod", "inclusive prefix product along dim 1",
     "A model that performs a cumulative product operation along a specified dimension.",
     "return torch.cumprod(x, dim=self.dim)",
     "    double p = 1.0;\n    for (long long j = 0; j < cols; j++) { p *= (double)xr[j]; yr[j] = (float)p; }"),
    (91, "91_cumsum_reverse.py", "cumsum_reverse", "reverse (suffix) sum along dim 1",
     "A model that performs a reverse cumulative sum operation along a specified dimension.",
     "return torch.cumsum(x.flip(self.dim), self.dim).flip(self.dim)",
     "    double s = 0.0;\n    for (long long j = cols - 1; j >= 0; j--) { s += (double)xr[j]; yr[j] = (float)s; }"),
    (92, "92_cumsum_exclusive.py", "cumsum_exclusive", "exclusive prefix sum along dim 1",
     "A model that performs an exclusive cumulative sum (does not include the current element).",
     "exclusive_cumsum = torch.cat((torch.zeros_like(x.select(self.dim, 0).unsqueeze(self.dim)), x), dim=self.dim).narrow(self.dim, 0, x.size(self.dim))\n        return torch.cumsum(exclusive_cumsum, dim=self.dim)",
     "    double s = 0.0;\n    for (long long j = 0; j < cols; j++) { yr[j] = (float)s; s += (double)xr[j]; }"),
]
for num, file, op, opdesc, doc, fwd, body in SCANS:
    problem(num, file, "scan", op, opdesc, dict(SCAN_SIZES),
            [t_in("x", ["batch_size", "length"])], [t_out("y", ["batch_size", "length"])],
            scan_torch(doc, fwd),
            SCAN_CU.format(desc=opdesc, kname=op + "_ref", mask_param="", mask_arg="", body=body),
            1, init_args={"dim": 1}, attrs={"dim": 1},
            notes=("KernelBench's current file keeps the first `length` columns with narrow(); "
                   "output[r][0] = 0, output[r][j] = sum of x[r][0..j-1]" if num == 92 else ""))

problem(93, "93_masked_cumsum.py", "scan", "masked_cumsum", "cumsum of x * mask along dim 1",
        dict(SCAN_SIZES),
        [t_in("x", ["batch_size", "length"]),
         t_in("mask", ["batch_size", "length"], {"kind": "bernoulli", "p": 0.5}, dtype="bool")],
        [t_out("y", ["batch_size", "length"])],
        scan_torch("A model that performs a masked cumulative sum, only summing elements that satisfy a condition.",
                   "return torch.cumsum(x * mask, dim=self.dim)",
                   extra_inputs="\n    x = torch.rand(batch_size, *input_shape)\n"
                                "    mask = torch.randint(0, 2, x.shape).bool()  # Random boolean mask",
                   inputs="[x, mask]", fwd_args="x, mask"),
        SCAN_CU.format(desc="masked prefix sum", kname="masked_cumsum_ref",
                       mask_param="const unsigned char* __restrict__ mask, ",
                       mask_arg="mask, ",
                       body="    const unsigned char* mr = mask + r * cols;\n    double s = 0.0;\n"
                            "    for (long long j = 0; j < cols; j++) { if (mr[j]) s += (double)xr[j]; yr[j] = (float)s; }"),
        2, init_args={"dim": 1}, attrs={"dim": 1},
        notes="mask is bool (1 byte, 0/1), drawn as bernoulli(0.5) like randint(0, 2).bool(); "
              "KernelBench's harness casts it to float32 before forward, which gives the same result")

# ---------------------------------------------------------------- losses
SUM_PARTS = """
// One block: total[0] = sum of part[0..n).
extern "C" __global__ void sum_parts(const double* __restrict__ part, long long n,
                                     double* __restrict__ total)
{
    __shared__ double red[256];
    double s = 0.0;
    for (long long i = threadIdx.x; i < n; i += blockDim.x) s += part[i];
    red[threadIdx.x] = s;
    __syncthreads();
    for (int k = 128; k > 0; k >>= 1) {
        if (threadIdx.x < k) red[threadIdx.x] += red[threadIdx.x + k];
        __syncthreads();
    }
    if (threadIdx.x == 0) total[0] = red[0];
}

extern "C" __global__ void finish_mean(const double* __restrict__ total, float* __restrict__ loss,
                                       long long count)
{
    if (blockIdx.x == 0 && threadIdx.x == 0) loss[0] = (float)(total[0] / (double)count);
}
"""

GRID_LOSS = """// Reference: {desc}; block partial sums in double, then one block, then the mean.
extern "C" __global__ void loss_partial({params}, double* __restrict__ part, long long n{extra})
{{
    __shared__ double red[256];
    double s = 0.0;
    for (long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x; i < n;
         i += (long long)gridDim.x * blockDim.x) {{
{term}
    }}
    red[threadIdx.x] = s;
    __syncthreads();
    for (int k = 128; k > 0; k >>= 1) {{
        if (threadIdx.x < k) red[threadIdx.x] += red[threadIdx.x + k];
        __syncthreads();
    }}
    if (threadIdx.x == 0) part[blockIdx.x] = red[0];
}}
""" + SUM_PARTS.replace("{", "{{").replace("}", "}}") + """
/*@launch
scratch double part[4096];
scratch double total[1];
loss_partial<<<4096, 256>>>({args}, part, {n}{extra_args});
sum_parts<<<1, 256>>>(part, 4096, total);
finish_mean<<<1, 32>>>(total, loss, {count});
@*/
"""

PT2 = "const float* __restrict__ predictions, const float* __restrict__ targets"


def loss_torch(doc, fwd, sizes_txt, inputs_txt, init_sig="", init_body="", init_inputs="[]",
               fwd_args="predictions, targets"):
    return (HEADER + '''class Model(nn.Module):
    """
    %s

    Parameters:
        None
    """
    def __init__(self%s):
        super(Model, self).__init__()%s

    def forward(self, %s):
        return %s

%s

def get_inputs():
%s

def get_init_inputs():
    return %s
''' % (doc, init_sig, init_body, fwd_args, fwd, sizes_txt, inputs_txt, init_inputs))


SQ = {"batch_size": 32768, "dim": 32768}
problem(94, "94_MSELoss.py", "loss", "mse", "mean((predictions - targets)^2)", dict(SQ),
        [t_in("predictions", ["batch_size", "dim"], dict(U01, post="scale_by_random")),
         t_in("targets", ["batch_size", "dim"])], [t_out("loss", [])],
        loss_torch("A model that computes the Mean Squared Error loss for regression tasks.",
                   "torch.mean((predictions - targets) ** 2)",
                   "batch_size = 32768\ndim = 32768\ninput_shape = (dim,)",
                   "    scale = torch.rand(())\n    return [torch.rand(batch_size, *input_shape)*scale, torch.rand(batch_size, *input_shape)]"),
        GRID_LOSS.format(desc="mean squared error", params=PT2, extra="",
                         term="        double d = (double)predictions[i] - (double)targets[i];\n        s += d * d;",
                         args="predictions, targets", n="batch_size * dim", extra_args="",
                         count="batch_size * dim"), 3,
        notes="predictions = U[0,1) times one U[0,1) scalar (scale_by_random)")

problem(96, "96_HuberLoss.py", "loss", "huber", "smooth L1 (Huber, beta 1) loss, mean", dict(SQ),
        [t_in("predictions", ["batch_size", "dim"], dict(U01, post="scale_by_random")),
         t_in("targets", ["batch_size", "dim"])], [t_out("loss", [])],
        loss_torch("A model that computes Smooth L1 (Huber) Loss for regression tasks.",
                   "torch.nn.functional.smooth_l1_loss(predictions, targets)",
                   "batch_size = 32768\ndim = 32768\ninput_shape = (dim,)",
                   "    scale = torch.rand(())\n    return [torch.rand(batch_size, *input_shape)*scale, torch.rand(batch_size, *input_shape)]"),
        GRID_LOSS.format(desc="smooth L1 loss (beta = 1)", params=PT2, extra="",
                         term="        double d = fabs((double)predictions[i] - (double)targets[i]);\n        s += d < 1.0 ? 0.5 * d * d : d - 0.5;",
                         args="predictions, targets", n="batch_size * dim", extra_args="",
                         count="batch_size * dim"), 4,
        notes="predictions = U[0,1) times one U[0,1) scalar (scale_by_random)")

problem(98, "98_KLDivLoss.py", "loss", "kldiv",
        "kl_div(log(predictions), targets, reduction='batchmean')",
        {"batch_size": 16384, "dim": 16384},
        [t_in("predictions", ["batch_size", "dim"],
              dict(U01, post=["scale_by_random", "softmax_lastdim"])),
         t_in("targets", ["batch_size", "dim"], dict(U01, post="softmax_lastdim"))],
        [t_out("loss", [])],
        loss_torch("A model that computes Kullback-Leibler Divergence for comparing two distributions.",
                   "torch.nn.functional.kl_div(torch.log(predictions), targets, reduction='batchmean')",
                   "batch_size = 16384\ndim = 16384\ninput_shape = (dim,)",
                   "    scale = torch.rand(())\n    return [(torch.rand(batch_size, *input_shape)*scale).softmax(dim=-1), torch.rand(batch_size, *input_shape).softmax(dim=-1)]"),
        GRID_LOSS.format(desc="KL divergence sum(t (log t - log p)) / batch_size", params=PT2,
                         extra="",
                         term="        double t = (double)targets[i];\n        if (t > 0.0) s += t * (log(t) - log((double)predictions[i]));",
                         args="predictions, targets", n="batch_size * dim", extra_args="",
                         count="batch_size"), 4,
        notes="both inputs are softmax rows (softmax_lastdim, in double); predictions are "
              "scaled by one U[0,1) scalar before the softmax; batchmean divides by batch_size")

problem(100, "100_HingeLoss.py", "loss", "hinge", "mean(clamp(1 - predictions * targets, min=0))",
        dict(SQ),
        [t_in("predictions", ["batch_size", "dim"]),
         t_in("targets", ["batch_size"], {"kind": "sign"})], [t_out("loss", [])],
        loss_torch("A model that computes Hinge Loss for binary classification tasks.",
                   "torch.mean(torch.clamp(1 - predictions * targets, min=0))",
                   "batch_size = 32768\ndim = 32768\ninput_shape = (dim,)",
                   "    return [torch.rand(batch_size, *input_shape), torch.randint(0, 2, (batch_size,)).float() * 2 - 1]"),
        GRID_LOSS.format(desc="hinge loss; targets (batch_size,) broadcast along the last dim",
                         params=PT2, extra=", long long cols",
                         term="        double v = 1.0 - (double)predictions[i] * (double)targets[i % cols];\n        s += v > 0.0 ? v : 0.0;",
                         args="predictions, targets", n="batch_size * dim",
                         extra_args=", dim", count="batch_size * dim"), 3,
        notes="targets has shape (batch_size,) and broadcasts against the LAST dim of "
              "predictions (element [i][j] uses targets[j]); batch_size == dim makes this legal")

problem(95, "95_CrossEntropyLoss.py", "loss", "cross_entropy",
        "cross_entropy(predictions, targets), mean over the batch",
        {"batch_size": 32768, "num_classes": 4096},
        [t_in("predictions", ["batch_size", "num_classes"]),
         t_in("targets", ["batch_size"], {"kind": "randint", "low": 0, "high": 4096}, dtype="int64")],
        [t_out("loss", [])],
        loss_torch("A model that computes Cross Entropy Loss for multi-class classification tasks.",
                   "torch.nn.functional.cross_entropy(predictions, targets)",
                   "batch_size = 32768\nnum_classes = 4096\ninput_shape = (num_classes,)\ndim = 1",
                   "    return [torch.rand(batch_size, *input_shape), torch.randint(0, num_classes, (batch_size,))]"),
        """// Reference: one block per row: logsumexp(row) - row[target] in double; then the mean.
extern "C" __global__ void ce_rows(const float* __restrict__ predictions,
                                   const long long* __restrict__ targets, double* __restrict__ rowloss,
                                   long long rows, long long cols)
{
    __shared__ double red[256];
    long long r = blockIdx.x;
    if (r >= rows) return;
    const float* p = predictions + r * cols;
    double m = -1.0e300;
    for (long long j = threadIdx.x; j < cols; j += blockDim.x) m = fmax(m, (double)p[j]);
    red[threadIdx.x] = m;
    __syncthreads();
    for (int k = 128; k > 0; k >>= 1) {
        if (threadIdx.x < k) red[threadIdx.x] = fmax(red[threadIdx.x], red[threadIdx.x + k]);
        __syncthreads();
    }
    m = red[0];
    __syncthreads();
    double s = 0.0;
    for (long long j = threadIdx.x; j < cols; j += blockDim.x) s += exp((double)p[j] - m);
    red[threadIdx.x] = s;
    __syncthreads();
    for (int k = 128; k > 0; k >>= 1) {
        if (threadIdx.x < k) red[threadIdx.x] += red[threadIdx.x + k];
        __syncthreads();
    }
    if (threadIdx.x == 0) {
        long long t = targets[r];
        rowloss[r] = m + log(red[0]) - (double)p[t];
    }
}
""" + SUM_PARTS + """
/*@launch
scratch double rowloss[batch_size];
scratch double total[1];
ce_rows<<<batch_size, 256>>>(predictions, targets, rowloss, batch_size, num_classes);
sum_parts<<<1, 256>>>(rowloss, batch_size, total);
finish_mean<<<1, 32>>>(total, loss, batch_size);
@*/
""", 4,
        notes="targets are int64 class indices (randint(0, num_classes)); KernelBench's "
              "harness at its snapshot cast them to float32, which breaks F.cross_entropy "
              "(KernelBench issue #151); kforge keeps int64")

problem(99, "99_TripletMarginLoss.py", "loss", "triplet",
        "TripletMarginLoss(margin=1.0, p=2), mean over the batch",
        {"batch_size": 32768, "dim": 8192},
        [t_in("anchor", ["batch_size", "dim"], dict(U01, post="scale_by_random")),
         t_in("positive", ["batch_size", "dim"]), t_in("negative", ["batch_size", "dim"])],
        [t_out("loss", [])],
        loss_torch("A model that computes Triplet Margin Loss for metric learning tasks.",
                   "self.loss_fn(anchor, positive, negative)",
                   "batch_size = 32768\ninput_shape = (8192,)\ndim = 8192",
                   "    scale = torch.rand(())\n    return [torch.rand(batch_size, *input_shape)*scale, torch.rand(batch_size, *input_shape), torch.rand(batch_size, *input_shape)]",
                   init_sig=", margin=1.0",
                   init_body="\n        self.loss_fn = torch.nn.TripletMarginLoss(margin=margin)",
                   init_inputs="[1.0]  # Default margin", fwd_args="anchor, positive, negative"),
        """// Reference: one block per row: d(a, p) and d(a, n) with pairwise_distance's
// eps (||a - b + 1e-6||_2) in double; loss = mean(max(d_ap - d_an + margin, 0)).
extern "C" __global__ void triplet_rows(const float* __restrict__ anchor,
                                        const float* __restrict__ positive,
                                        const float* __restrict__ negative,
                                        double* __restrict__ rowloss, long long rows,
                                        long long cols, float margin)
{
    __shared__ double red[512];
    long long r = blockIdx.x;
    if (r >= rows) return;
    double sp = 0.0, sn = 0.0;
    for (long long j = threadIdx.x; j < cols; j += blockDim.x) {
        double a = (double)anchor[r * cols + j];
        double dp = a - (double)positive[r * cols + j] + 1e-6;
        double dn = a - (double)negative[r * cols + j] + 1e-6;
        sp += dp * dp;
        sn += dn * dn;
    }
    red[threadIdx.x] = sp;
    red[256 + threadIdx.x] = sn;
    __syncthreads();
    for (int k = 128; k > 0; k >>= 1) {
        if (threadIdx.x < k) {
            red[threadIdx.x] += red[threadIdx.x + k];
            red[256 + threadIdx.x] += red[256 + threadIdx.x + k];
        }
        __syncthreads();
    }
    if (threadIdx.x == 0) {
        double v = sqrt(red[0]) - sqrt(red[256]) + (double)margin;
        rowloss[r] = v > 0.0 ? v : 0.0;
    }
}
""" + SUM_PARTS + """
/*@launch
scratch double rowloss[batch_size];
scratch double total[1];
triplet_rows<<<batch_size, 256>>>(anchor, positive, negative, rowloss, batch_size, dim, margin);
sum_parts<<<1, 256>>>(rowloss, batch_size, total);
finish_mean<<<1, 32>>>(total, loss, batch_size);
@*/
""", 8, scalars={"margin": 1.0}, init_args={"margin": 1.0}, attrs={"eps": 1e-6},
        notes="anchor = U[0,1) times one U[0,1) scalar; pairwise_distance adds eps = 1e-6 to the difference")

# ---------------------------------------------------------------- attention
problem(97, "97_ScaledDotProductAttention.py", "attention", "sdpa",
        "softmax(Q K^T / sqrt(embedding_dimension)) V, no mask, no dropout",
        {"batch_size": 32, "num_heads": 32, "sequence_length": 512, "embedding_dimension": 1024},
        [t_in(n, ["batch_size", "num_heads", "sequence_length", "embedding_dimension"])
         for n in ("Q", "K", "V")],
        [t_out("out", ["batch_size", "num_heads", "sequence_length", "embedding_dimension"])],
        HEADER + '''class Model(nn.Module):
    def __init__(self):
        super(Model, self).__init__()

    def forward(self, Q: torch.Tensor, K: torch.Tensor, V: torch.Tensor) -> torch.Tensor:
        out = torch.nn.functional.scaled_dot_product_attention(Q, K, V)
        return out

batch_size = 32
num_heads = 32
sequence_length = 512
embedding_dimension = 1024

def get_inputs():
    Q = torch.rand(batch_size, num_heads, sequence_length, embedding_dimension)
    K = torch.rand(batch_size, num_heads, sequence_length, embedding_dimension)
    V = torch.rand(batch_size, num_heads, sequence_length, embedding_dimension)
    return [Q, K, V]

def get_init_inputs():
    return []
''',
        """// Reference: one block (256 threads) per query row; scores in double (one warp
// per key, lanes over the embedding), softmax in double, then P V in double.
extern "C" __global__ void sdpa_ref(const float* __restrict__ Q, const float* __restrict__ K,
                                    const float* __restrict__ V, float* __restrict__ out,
                                    long long rows, long long S, long long D)
{
    extern __shared__ double p[];          // S scores
    __shared__ double red[256];
    long long row = blockIdx.x;
    if (row >= rows) return;
    long long bh = row / S;
    const float* q = Q + row * D;
    const float* Kb = K + bh * S * D;
    const float* Vb = V + bh * S * D;
    int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
    double scale = 1.0 / sqrt((double)D);
    for (long long k = warp; k < S; k += blockDim.x / 32) {
        double s = 0.0;
        for (long long d = lane; d < D; d += 32) s += (double)q[d] * (double)Kb[k * D + d];
        for (int o = 16; o > 0; o >>= 1) s += __shfl_down_sync(0xffffffffu, s, o);
        if (lane == 0) p[k] = s * scale;
    }
    __syncthreads();
    double m = -1.0e300;
    for (long long k = threadIdx.x; k < S; k += blockDim.x) m = fmax(m, p[k]);
    red[threadIdx.x] = m;
    __syncthreads();
    for (int s = 128; s > 0; s >>= 1) {
        if (threadIdx.x < s) red[threadIdx.x] = fmax(red[threadIdx.x], red[threadIdx.x + s]);
        __syncthreads();
    }
    m = red[0];
    __syncthreads();
    double sum = 0.0;
    for (long long k = threadIdx.x; k < S; k += blockDim.x) {
        p[k] = exp(p[k] - m);
        sum += p[k];
    }
    red[threadIdx.x] = sum;
    __syncthreads();
    for (int s = 128; s > 0; s >>= 1) {
        if (threadIdx.x < s) red[threadIdx.x] += red[threadIdx.x + s];
        __syncthreads();
    }
    sum = red[0];
    for (long long d = threadIdx.x; d < D; d += blockDim.x) {
        double acc = 0.0;
        for (long long k = 0; k < S; k++) acc += p[k] * (double)Vb[k * D + d];
        out[row * D + d] = (float)(acc / sum);
    }
}

/*@launch
sdpa_ref<<<batch_size * num_heads * sequence_length, 256, sequence_length * 8>>>(Q, K, V, out, batch_size * num_heads * sequence_length, sequence_length, embedding_dimension);
@*/
""", 0, notes="default scale 1/sqrt(embedding_dimension); PyTorch may pick a fused kernel "
              "(flash/memory-efficient) whose fp32 rounding differs slightly from the math path")


# ---------------------------------------------------------------- writer
def dir_name(num, file):
    return "%03d_%s" % (num, file[:-3].split("_", 1)[1].rstrip("_"))


def spec_of(pr):
    sizes = pr["sizes"]
    name = dir_name(pr["num"], pr["file"])
    if pr["op"] == "sdpa":
        b, h, s, d = (sizes[k] for k in ("batch_size", "num_heads", "sequence_length",
                                          "embedding_dimension"))
        flops = 4 * b * h * s * s * d
    else:
        flops = pr["flops_per"] * numel(pr["inputs"][0]["shape"], sizes)
    min_bytes = sum(numel(t["shape"], sizes) * DSZ[t["dtype"]] for t in pr["inputs"] + pr["outputs"])
    attrs = {"op": pr["op"]}
    attrs.update(pr["attrs"])
    return {
        "id": "level1/" + name,
        "level": 1,
        "number": pr["num"],
        "name": name.split("_", 1)[1],
        "kernelbench_file": pr["file"],
        "family": pr["family"],
        "operation": pr["operation"],
        "sizes": sizes,
        "scalars": pr["scalars"],
        "init_args": pr["init_args"],
        "inputs": pr["inputs"],
        "outputs": pr["outputs"],
        "tolerance": pr["tol"],
        "flops": flops,
        "min_bytes": min_bytes,
        "attrs": attrs,
        "notes": pr["notes"],
    }


# reference.cu's first line (spec.json and reference.py carry none: problems/README.md)
BANNER = "// Generated by problems/gen/level1/gen_a.py (make problems): do not edit.\n"


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--root", default=os.path.normpath(os.path.join(os.path.dirname(os.path.abspath(__file__)),
                                                                    "..", "..", "..")))
    ap.add_argument("--out", default=None, help="write DIR/problems/level1/ (default: the root's)")
    ap.add_argument("--check", action="store_true")
    a = ap.parse_args()
    check = a.check
    root = os.path.join(a.root if check else a.out or a.root, "problems", "level1")
    bad = 0
    for pr in sorted(PROBLEMS, key=lambda p: p["num"]):
        d = os.path.join(root, dir_name(pr["num"], pr["file"]))
        files = {
            "spec.json": json.dumps(spec_of(pr), indent=2) + "\n",
            "reference.py": pr["torch"],
            "reference.cu": BANNER + pr["cuda"],
        }
        for fn, text in files.items():
            path = os.path.join(d, fn)
            if check:
                try:
                    old = open(path).read()
                except OSError:
                    old = None
                if old != text:
                    print("differs: " + path)
                    bad += 1
                continue
            os.makedirs(d, exist_ok=True)
            with open(path + ".tmp", "w") as f:
                f.write(text)
            os.replace(path + ".tmp", path)
    print("%d problems %s" % (len(PROBLEMS), "checked" if check else "written"))
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
