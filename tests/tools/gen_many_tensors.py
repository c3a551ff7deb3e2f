#!/usr/bin/env python3
"""Writes a problem with many parameter tensors (as a level-3 model has:
DenseNet201 carries ~600), for the engine's limits tests.

usage: gen_many_tensors.py ROOT NPARAMS [CANDIDATE]
  ROOT/problems/level3/901_ManyParams/{spec.json, reference.py, reference.cu}:
  y = relu(x), with NPARAMS params p0..p{N-1} of 16 floats each (small, and
  every one a distinct tensor). The reference and CANDIDATE (when given; the
  same kernels) read every param, 50 per launch, without changing y."""
import json
import os
import sys

PER = 50   # params per launch (under LAUNCH_MAX_ARGS with y and n)


def source(nparams):
    names = ["p%d" % i for i in range(nparams)]
    plist = ", ".join("const float* __restrict__ q%d" % i for i in range(PER))
    src = ["// y = relu(x); touch() reads 16 elements of each of 50 params.",
           'extern "C" __global__ void relu_k(const float* __restrict__ x, float* __restrict__ y, long long n)',
           "{",
           "    long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x;",
           "    if (i < n) y[i] = x[i] > 0.f ? x[i] : 0.f;",
           "}",
           "",
           'extern "C" __global__ void touch(%s, float* __restrict__ y, int k)' % plist,
           "{",
           "    const float* q[%d] = { %s };" % (PER, ", ".join("q%d" % i for i in range(PER))),
           "    float s = 0.f;",
           "    for (int j = 0; j < k; j++)",
           "        s += q[j][threadIdx.x];",
           "    if (s != s) y[0] = s;   // params are finite: never taken",
           "}",
           "",
           "/*@launch",
           "relu_k<<<ceil_div(n, 256), 256>>>(x, y, n);"]
    for b in range(0, nparams, PER):
        chunk = names[b:b + PER]
        k = len(chunk)
        chunk = chunk + [chunk[-1]] * (PER - k)   # unused slots repeat the last
        src.append("touch<<<1, 16>>>(%s, y, %d);" % (", ".join(chunk), k))
    src.append("@*/")
    return "\n".join(src) + "\n"


def main():
    root, n = sys.argv[1], int(sys.argv[2])
    d = os.path.join(root, "problems", "level3", "901_ManyParams")
    os.makedirs(d, exist_ok=True)
    inputs = [{"name": "x", "role": "input", "dtype": "float32", "shape": ["n"],
               "dist": {"kind": "uniform", "low": -1.0, "high": 1.0}}]
    inputs += [{"name": "p%d" % i, "role": "param", "dtype": "float32", "shape": [16],
                "dist": {"kind": "uniform", "low": -0.5, "high": 0.5}} for i in range(n)]
    spec = {"id": "level3/901_ManyParams", "level": 3, "number": 901, "name": "ManyParams",
            "kernelbench_file": "901_ManyParams.py", "family": "elementwise",
            "operation": "relu with %d unused params" % n, "sizes": {"n": 1024}, "scalars": {},
            "inputs": inputs, "outputs": [{"name": "y", "dtype": "float32", "shape": ["n"]}],
            "tolerance": "fp32", "flops": 1024, "min_bytes": 8192 + 64 * n,
            "attrs": {"op": "relu"}}
    with open(os.path.join(d, "spec.json"), "w") as f:
        json.dump(spec, f, indent=1)
    with open(os.path.join(d, "reference.py"), "w") as f:
        f.write("n = 1024\n")
    with open(os.path.join(d, "reference.cu"), "w") as f:
        f.write(source(n))
    if len(sys.argv) > 3:
        with open(sys.argv[3], "w") as f:
            f.write(source(n))


if __name__ == "__main__":
    main()
