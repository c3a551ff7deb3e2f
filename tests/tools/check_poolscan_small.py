#!/usr/bin/env python3
"""check_templates.py for the pooling (41-46) and scan (89-93) problems at
small sizes of our choosing.

emulate_refs.py shrinks only some size names (SMALL), which leaves a pooling
spec inconsistent (input shrunk, output not) or far too big to emulate. This
writes a small copy of each pooling problem into WORK/root, with the same
geometry (attrs) and small, consistent sizes under renamed size names (so
SMALL does not touch them; the last spatial dim a multiple of 4 so the
float4 paths run), then runs check_templates.py over that root: every idea
renders from the small spec, compiles, and is emulated against the oracle.
The full-size launch check and NVRTC compile stay with check_templates.py
--no-emulate on the real specs.
Scans get rows of LEN elements (--len, default 1102: not a multiple of 4,
so the scalar fallback runs, and long enough for several tiles per row in
the small-block ideas); emulate_refs.py's own run uses rows of 40.

usage: check_poolscan_small.py BUILD ROOT WORK [--len LEN] [check_templates options] NUMBER..."""
import glob
import json
import os
import shutil
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))


def out_len(n, k, s, p, d, ceil_mode):
    span = n + 2 * p - d * (k - 1) - 1
    o = (-(-span // s) if ceil_mode else span // s) + 1
    if ceil_mode and (o - 1) * s >= n + p:
        o -= 1
    return o


def small_scan(spec, length):
    sizes = {"batch_size_t": 3, "length_t": length}
    for t in spec["inputs"] + spec["outputs"]:
        t["shape"] = [n + "_t" for n in t["shape"]]
    spec["sizes"] = sizes
    return spec


def small_spec(spec, length):
    if spec["family"] == "scan":
        return small_scan(spec, length)
    g = spec["attrs"]
    x, y = spec["inputs"][0], spec["outputs"][0]
    nsp = len(x["shape"]) - 2
    vals = [2, 3]
    for i in range(nsp):
        k, s, p, d = g["kernel"][i], g["stride"][i], g["padding"][i], g["dilation"][i]
        n = d * (k - 1) + 1 + 2 * s + 3
        if i == nsp - 1:
            n += -n % 4
        vals.append(n)
    outs = vals[:2] + [out_len(vals[2 + i], g["kernel"][i], g["stride"][i], g["padding"][i],
                                g["dilation"][i], g.get("ceil_mode", False)) for i in range(nsp)]
    sizes = {}
    for t, v in ((x, vals), (y, outs)):
        shape = []
        for name, n in zip(t["shape"], v):
            nm = name + "_t"
            assert sizes.get(nm, n) == n
            sizes[nm] = n
            shape.append(nm)
        t["shape"] = shape
    spec["sizes"] = sizes
    return spec


def main():
    args = sys.argv[1:]
    build, root, work = args[:3]
    rest = args[3:]
    length = 1102
    if "--len" in rest:
        i = rest.index("--len")
        length = int(rest[i + 1])
        del rest[i:i + 2]
    nums = [a for i, a in enumerate(rest)
            if a.isdigit() and (i == 0 or rest[i - 1] not in ("--impls", "--seed", "--every"))]
    sroot = os.path.join(work, "root")
    shutil.rmtree(sroot, ignore_errors=True)
    for a in nums:
        d = glob.glob(os.path.join(root, "problems", "level1", "%03d_*" % int(a)))[0]
        nd = os.path.join(sroot, "problems", "level1", os.path.basename(d))
        os.makedirs(nd)
        spec = small_spec(json.load(open(os.path.join(d, "spec.json"))), length)
        json.dump(spec, open(os.path.join(nd, "spec.json"), "w"), indent=1)
        shutil.copy(os.path.join(d, "reference.cu"), nd)
        shutil.copy(os.path.join(d, "reference.py"), nd)
    r = subprocess.run([sys.executable, os.path.join(HERE, "check_templates.py"), build, sroot,
                        os.path.join(work, "ct")] + rest)
    return r.returncode


if __name__ == "__main__":
    sys.exit(main())
