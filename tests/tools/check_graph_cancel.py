#!/usr/bin/env python3
"""Runs the built-in "graph" template's kernel for one small-size level-2
problem (problems/gen/level2/gen.py --small DIR) on inputs whose feature sum of
the first linear cancels: weight rows in pairs r, -r + d (r of magnitude
1000, d under 0.01), x uniform [0, 1), other inputs uniform [-0.01, 0.01).
The outputs are near 0.1 while each GEMM output is near 2600, so an fp32
GEMM misses them by about 1e-3 (its rounding), over the fp32 tolerance.
CUDA is emulated on the host as check_graph.py does; every output element
is compared with the Python graph evaluator (float64) at atol = rtol = 1e-4.

usage: check_graph_cancel.py BUILD SMALLROOT WORK NUMBER PARAMS...
Prints "ok"/"not ok" per PARAMS (JSON); exit 0 when all match."""
import glob
import json
import os
import random
import struct
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import emulate_level2 as el  # noqa: E402

TOL = 1e-4


def f32(v):
    return struct.unpack("<f", struct.pack("<f", v))[0]


def write_npy(path, shape, vals):
    hdr = "{'descr': '<f4', 'fortran_order': False, 'shape': (%s), }" % "".join(
        "%d, " % d for d in shape)
    hdr += " " * (63 - (10 + len(hdr)) % 64) + "\n"
    with open(path, "wb") as f:
        f.write(b"\x93NUMPY\x01\x00" + struct.pack("<H", len(hdr)) + hdr.encode("latin1"))
        f.write(struct.pack("<%df" % len(vals), *vals))


def make_inputs(spec, idir):
    sizes, rnd = spec["sizes"], random.Random(14)
    lin = next(n for n in spec["attrs"]["graph"] if n["op"] == "linear")
    os.makedirs(idir, exist_ok=True)
    for t in spec["inputs"]:
        if t["dtype"] != "float32":
            raise ValueError("%s: not float32" % t["name"])
        shape = [sizes[s] if isinstance(s, str) else s for s in t["shape"]]
        n = el.numel(t, sizes)
        if t["name"] == lin["in"][1]:
            rows, k = shape
            vals = []
            for i in range(0, rows - 1, 2):
                r = [f32(rnd.uniform(-1000, 1000)) for _ in range(k)]
                vals += r + [f32(-a + rnd.uniform(-0.01, 0.01)) for a in r]
            vals += [f32(rnd.uniform(-0.01, 0.01)) for _ in range(n - len(vals))]
        elif t["name"] == lin["in"][0]:
            vals = [f32(rnd.random()) for _ in range(n)]
        else:
            vals = [f32(rnd.uniform(-0.01, 0.01)) for _ in range(n)]
        write_npy(os.path.join(idir, t["name"] + ".npy"), shape, vals)


def run(build, work, spec_path, spec, idir, params, want, tag):
    r = subprocess.run([os.path.join(build, "tests", "builtin_emit"), "render", spec_path, "graph",
                        params], capture_output=True, text=True)
    if r.returncode:
        return False, "render: " + r.stderr.strip()[-300:]
    out = os.path.join(work, tag)
    os.makedirs(out, exist_ok=True)
    why = el.er.build_run(work, tag, r.stdout + "\n" + el.cpp_main(spec, r.stdout, idir, out))
    if why:
        return False, why
    n = len(want)
    got = struct.unpack("<%df" % n, open(os.path.join(out, "out.bin"), "rb").read())
    bad, mabs, _ = el.compare(got, want, range(n), TOL)
    return bad == 0, "%d elements (max |want| %.3g): %d bad (max abs err %.2g)" % (
        n, max(abs(v) for v in want), bad, mabs)


def main():
    if len(sys.argv) < 6:
        sys.exit(__doc__)
    build, root, work = (os.path.abspath(a) for a in sys.argv[1:4])
    num, plist = int(sys.argv[4]), sys.argv[5:]
    d = glob.glob(os.path.join(root, "problems", "level2", "%03d_*" % num))[0]
    spec_path = os.path.join(d, "spec.json")
    spec = json.load(open(spec_path))
    os.makedirs(work, exist_ok=True)
    el.er.shim_header(work)  # built once, before the jobs
    idir = os.path.join(work, "inputs")
    make_inputs(spec, idir)
    want = el.graph_eval.evaluate(spec, el.graph_eval.load_inputs(spec, idir)).data
    failed = 0
    for k, params in enumerate(plist):
        ok, rep = run(build, work, spec_path, spec, idir, params, want, "k%d" % k)
        failed += not ok
        print("%s %s %s %s" % ("ok" if ok else "not ok", os.path.basename(d), params, rep), flush=True)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
