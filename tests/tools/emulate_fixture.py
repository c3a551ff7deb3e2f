#!/usr/bin/env python3
"""Builds a philox fixture (as record_philox_fixture writes on a GPU) by
running the GPU fill kernels on the host with tests/tools/emulate_fill.cpp.
usage: emulate_fixture.py EMULATOR SPEC.json > fixture.json"""
import json
import subprocess
import sys

KIND = {"uniform": ("low", "high"), "normal": ("mean", "std"), "randint": ("low", "high"),
        "bernoulli": ("p", None), "sign": (None, None), "constant": ("value", None)}
KINDS = list(KIND)
DT = ["float32", "float16", "bfloat16", "int64", "int32", "bool"]
POST = ["none", "symmetrize", "triu", "tril", "scale_by_random", "softmax_lastdim"]

emu, specf = sys.argv[1], sys.argv[2]
spec = json.load(open(specf))
lines = []
for t, ten in enumerate(spec["inputs"]):
    shape = [spec["sizes"][d] if isinstance(d, str) else d for d in ten["shape"]]
    n = 1
    for d in shape:
        n *= d
    if n > 100000:
        continue  # the huge tensor is for the real GPU
    dist = ten["dist"]
    pa, pb = KIND[dist["kind"]]
    a = float(dist[pa]) if pa else 0.0
    b = float(dist[pb]) if pb else 0.0
    post = dist.get("post", "none")
    post = 6 if isinstance(post, list) else POST.index(post)
    cols = shape[-1]
    rows = shape[-2] if len(shape) >= 2 else 1
    lines.append("%s %d %d %d %d %r %r %d %d %d" % (ten["name"], t, KINDS.index(dist["kind"]),
                                                   DT.index(ten["dtype"]), post, a, b, rows, cols, n))
out = subprocess.run([emu], input="\n".join(lines) + "\n", capture_output=True, text=True, check=True)
print(json.dumps({"spec": spec, "seed": 20261122, "device": "host emulation",
                  "tensors": json.loads(out.stdout)}))
