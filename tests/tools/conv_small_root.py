#!/usr/bin/env python3
"""Writes a problems tree whose forward-convolution specs are shrunk so the
CPU emulator (emulate_refs.py) can run them: few channels, small spatial
sizes (output sizes recomputed from kernel/stride/padding/dilation), groups
kept equal to the channels for depthwise problems. Everything else of the
spec stays (attrs, literal kernel dims, distributions).

usage: conv_small_root.py ROOT OUT NUMBER..."""
import glob
import json
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from emulate_refs import SMALL  # noqa: E402

OUT2 = (19, 70)        # 2-D output: several tiles, partial ones
OUT3 = (3, 5, 7)
OUT1 = (300,)


def shrink(spec):
    sizes = dict(spec["sizes"])
    a = spec["attrs"]
    x, y = spec["inputs"][0], spec["outputs"][0]
    nd = len(x["shape"]) - 2
    ci = sizes[x["shape"][1]]
    dw = a["groups"] == ci and a["groups"] > 1
    sizes[x["shape"][0]] = 2
    sizes[x["shape"][1]] = 5
    if dw:
        a["groups"] = 5
        if "groups" in sizes:
            sizes["groups"] = 5
    if isinstance(y["shape"][1], str) and y["shape"][1] != x["shape"][1]:
        sizes[y["shape"][1]] = 5 if dw and not a.get("pointwise") else 10
    want = {1: OUT1, 2: OUT2, 3: OUT3}[nd]
    for i in range(nd):
        k, s, p, d = a["kernel"][i], a["stride"][i], a["padding"][i], a["dilation"][i]
        o = want[i]
        n = (o - 1) * s + d * (k - 1) + 1 - 2 * p
        n += s - 1  # a remainder row the stride skips
        n = SMALL.get(x["shape"][2 + i], n)  # emulate_refs.py overrides these
        sizes[x["shape"][2 + i]] = n
        sizes[y["shape"][2 + i]] = (n + 2 * p - d * (k - 1) - 1) // s + 1
    spec["sizes"] = sizes
    return spec


def main():
    root, out = sys.argv[1:3]
    for num in sys.argv[3:]:
        d = glob.glob(os.path.join(root, "problems", "level1", "%03d_*" % int(num)))[0]
        t = os.path.join(out, "problems", "level1", os.path.basename(d))
        os.makedirs(t, exist_ok=True)
        spec = shrink(json.load(open(os.path.join(d, "spec.json"))))
        json.dump(spec, open(os.path.join(t, "spec.json"), "w"), indent=1)
        for f in ("reference.py", "reference.cu"):
            if os.path.exists(os.path.join(d, f)):
                open(os.path.join(t, f), "w").write(open(os.path.join(d, f)).read())


if __name__ == "__main__":
    main()
