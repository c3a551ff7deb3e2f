#!/usr/bin/env python3
"""Emulates convolution candidates at small spatial extents. emulate_refs.py
shrinks only the batch and "length", which leaves a conv's other spatial
axes at full size (far too slow to emulate) and its output extents
inconsistent with its input's. This shrinks every spatial input axis, derives
the output extents from PyTorch's formulas (attrs), and hands the smaller
spec to emulate_refs.emulate. Candidates must take their sizes from the
launch block (size names), not bake them in.

usage: emulate_convt.py KFORGE ROOT WORK CAND NUMBER
       emulate_convt.py --jobs LIST [-j N] KFORGE
Prints emulate_refs' line ("ok ..." / "not ok ..."); exit 1 unless ok.
--jobs: LIST's records DIR ROOT NUMBER FILE as emulate_refs.py --jobs."""
import glob
import json
import os
import shutil
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import emulate_refs  # noqa: E402

# Spatial input extents by axis count: small, unequal, larger than kernels.
SMALL_AX = {1: [40], 2: [7, 11], 3: [4, 6, 9]}


def out_extent(i, k, s, p, d, op, transposed):
    if transposed:
        return (i - 1) * s - 2 * p + d * (k - 1) + op + 1
    return (i + 2 * p - d * (k - 1) - 1) // s + 1


def shrink(spec):
    sizes = {k: emulate_refs.SMALL.get(k, v) for k, v in spec["sizes"].items()}
    x, y = spec["inputs"][0], spec["outputs"][0]
    nd = len(x["shape"]) - 2
    a = spec["attrs"]
    ax = lambda key, dflt: a.get(key) or [dflt] * nd  # noqa: E731
    ext = list(SMALL_AX[nd])
    while True:  # kforge's oracle samples beyond 100000 elements: stay below
        outs = []
        for i in range(nd):
            iname = x["shape"][2 + i]
            e = ext[i] if isinstance(iname, str) else iname
            outs.append(out_extent(e, ax("kernel", 1)[i], ax("stride", 1)[i], ax("padding", 0)[i],
                                   ax("dilation", 1)[i], ax("output_padding", 0)[i],
                                   a.get("transposed")))
        n = 1
        for t in y["shape"][:2]:
            n *= sizes[t] if isinstance(t, str) else t
        for o in outs:
            n *= o
        big = max(range(nd), key=lambda i: ext[i])
        if n <= 90000 or ext[big] <= 2:
            break
        ext[big] -= 1
    for i in range(nd):
        iname, oname = x["shape"][2 + i], y["shape"][2 + i]
        if isinstance(iname, str):
            sizes[iname] = ext[i]
        if isinstance(oname, str):
            sizes[oname] = outs[i]
    spec = dict(spec)
    spec["sizes"] = sizes
    return spec


def cand_line(kforge, root, work, cand, num):
    """The line `emulate_convt.py KFORGE ROOT WORK CAND NUM` prints."""
    d = glob.glob(os.path.join(root, "problems", "level1", "%03d_*" % int(num)))[0]
    spec = shrink(json.load(open(os.path.join(d, "spec.json"))))
    tmp = os.path.join(work, "small", os.path.basename(d))
    os.makedirs(tmp, exist_ok=True)
    with open(os.path.join(tmp, "spec.json"), "w") as f:
        json.dump(spec, f)
    shutil.copy(os.path.join(d, "reference.cu"), os.path.join(tmp, "reference.cu"))
    try:
        ok, rep = emulate_refs.emulate(kforge, root, work, tmp, os.path.abspath(cand))
    except Exception as e:  # noqa
        ok, rep = False, "%s: %s" % (type(e).__name__, e)
    return "%s %s %s" % ("ok" if ok else "not ok", os.path.basename(d), rep)


def main():
    args = sys.argv[1:]
    if args[:1] == ["--jobs"]:
        return emulate_refs.jobs_main(args, cand_line)
    kforge, root, work, cand, num = args[:5]
    line = cand_line(kforge, root, work, cand, num)
    print(line, flush=True)
    return 0 if line.startswith("ok") else 1


if __name__ == "__main__":
    sys.exit(main())
