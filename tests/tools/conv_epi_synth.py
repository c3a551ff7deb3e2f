#!/usr/bin/env python3
"""Writes synthetic convolution problems for conv_epi (t0920): shapes level 1
lacks (groups with few channels a group, C_in/groups not a multiple of 4,
strides, dilations, output padding, strides over the kernel extent so some
phases meet no tap, bias), each as its own problems tree (a level-1 spec
copied from a base problem with new sizes and attrs, small enough for the
emulator: emulate_refs.py keeps batch_size at 3) plus shape.json, the same
convolution for tests/helpers/convepi_emit with literal sizes.

usage: conv_epi_synth.py ROOT OUT   prints "CASE NUMBER DIR" lines"""
import copy
import glob
import json
import os
import shutil
import sys

# (name, base problem, transposed, C_in, C_out, groups, input extents,
#  kernel, stride, padding, dilation, output_padding, bias)
CASES = [
    ("f2_groups_cpg3", 50, False, 6, 20, 2, [9, 10], [3, 2], [2, 1], [1, 0], [1, 2], [0, 0], True),
    ("f3_strided", 54, False, 8, 16, 1, [4, 7, 5], [2, 3, 1], [1, 2, 1], [0, 1, 0], [1, 1, 1], [0, 0, 0], False),
    ("f1_groups_dil", 76, False, 12, 24, 3, [37], [5], [2], [2], [2], [0], True),
    ("f2_wide", 63, False, 40, 72, 1, [6, 7], [3, 3], [1, 1], [1, 1], [1, 1], [0, 0], False),
    ("t1_stride3_op", 79, True, 8, 12, 1, [13], [4], [3], [1], [2], [1], True),
    ("t2_groups_phase", 75, True, 12, 24, 3, [5, 6], [3, 4], [2, 3], [1, 2], [2, 1], [1, 0], False),
    ("t3_cpg5", 72, True, 10, 16, 2, [3, 4, 5], [3, 2, 3], [2, 2, 1], [0, 1, 1], [1, 1, 2], [1, 0, 0], True),
    ("t2_stride_over_k", 81, True, 8, 8, 1, [4, 5], [2, 2], [4, 3], [0, 0], [1, 1], [0, 0], False),
    ("t2_wide", 57, True, 40, 136, 1, [4, 5], [3, 3], [1, 1], [1, 0], [1, 1], [0, 0], False),
    # 1x1: the wgmma core's request runs it as a batched GEMM (cepi_emit_pw)
    ("f2_pointwise", 50, False, 12, 72, 1, [6, 9], [1, 1], [1, 1], [0, 0], [1, 1], [0, 0], True),
]
AX = {1: ["width"], 2: ["height", "width"], 3: ["depth", "height", "width"]}
BATCH = 3  # emulate_refs.SMALL["batch_size"]


def out_extent(i, k, s, p, d, op, tr):
    if tr:
        return (i - 1) * s - 2 * p + d * (k - 1) + op + 1
    return (i + 2 * p - d * (k - 1) - 1) // s + 1


def make(root, out, case):
    name, base, tr, ci, co, g, ins, k, s, p, d, op, bias = case
    nd = len(ins)
    bdir = glob.glob(os.path.join(root, "problems", "level1", "%03d_*" % base))[0]
    spec = json.load(open(os.path.join(bdir, "spec.json")))
    outs = [out_extent(ins[i], k[i], s[i], p[i], d[i], op[i], tr) for i in range(nd)]
    sizes = {"batch_size": BATCH, "in_channels": ci, "out_channels": co}
    for i, a in enumerate(AX[nd]):
        sizes[a] = ins[i]
        sizes["out_" + a] = outs[i]
    x = copy.deepcopy(spec["inputs"][0])
    x["shape"] = ["batch_size", "in_channels"] + AX[nd]
    x["dist"] = {"kind": "uniform", "low": 0.0, "high": 1.0}
    w = copy.deepcopy(spec["inputs"][1])
    w["shape"] = (["in_channels", co // g] if tr else ["out_channels", ci // g]) + list(k)
    w["dist"] = {"kind": "uniform", "low": -0.2, "high": 0.2}
    ins_t = [x, w]
    if bias:
        ins_t.append({"name": "bias", "role": "param", "dtype": "float32",
                      "shape": ["out_channels"], "dist": {"kind": "uniform", "low": -0.5, "high": 0.5}})
    spec["sizes"] = sizes
    spec["inputs"] = ins_t
    spec["outputs"][0]["shape"] = ["batch_size", "out_channels"] + ["out_" + a for a in AX[nd]]
    spec["attrs"] = {"transposed": tr, "kernel": k, "stride": s, "padding": p, "dilation": d,
                     "output_padding": op, "groups": g, "bias": bias, "pointwise": False}
    spec["scalars"] = {}
    pdir = os.path.join(out, name, "problems", "level1", os.path.basename(bdir))
    os.makedirs(pdir, exist_ok=True)
    json.dump(spec, open(os.path.join(pdir, "spec.json"), "w"), indent=1)
    shutil.copy(os.path.join(bdir, "reference.cu"), os.path.join(pdir, "reference.cu"))
    shape = {"transposed": tr, "groups": g, "N": BATCH, "C_in": ci, "C_out": co, "in": ins,
             "out": outs, "kernel": k, "stride": s, "padding": p, "dilation": d,
             "output_padding": op, "x": "x", "w": "weight", "y": spec["outputs"][0]["name"],
             "name": "conv0"}
    if bias:
        shape.update(params=", const float* __restrict__ bias", args=", bias",
                     code="        v += bias[c];\n")
    json.dump(shape, open(os.path.join(out, name, "shape.json"), "w"))
    print(name, base, os.path.join(out, name))


def main():
    root, out = sys.argv[1:3]
    for c in CASES:
        make(root, out, c)


if __name__ == "__main__":
    main()
