#!/usr/bin/env python3
"""Checks the built-in "graph" template on a small level-3 tree
(tools/level3/gen.py --small DIR) without a GPU: the kernel rendered with
PARAMS (builtin_emit render) runs on the host, CUDA emulated as
emulate_level3.py runs the references (same inputs), and every output
element must agree with tools/level2/graph_eval.py at the fp32 tolerance
(atol = rtol = 1e-4).

usage: check_graph3.py BUILD SMALLROOT WORK [-j N] [--params JSON]... [--sed S R]
                       [NUMBER...]
Prints "ok"/"not ok" per problem and kernel, and "checked N kernels, N failed"."""
import concurrent.futures
import json
import os
import random
import struct
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import emulate_level3 as e3  # noqa: E402

TOL = 1e-4


def run_one(build, root, work, base, k, params, sed, cache):
    d = os.path.join(root, "problems", "level3", base)
    spec_path = os.path.join(d, "spec.json")
    spec = json.load(open(spec_path))
    r = subprocess.run([os.path.join(build, "tests", "builtin_emit"), "render", spec_path, "graph",
                        params], capture_output=True, text=True)
    if r.returncode:
        return False, "render: " + r.stderr.strip()[-300:]
    src = r.stdout
    if sed:
        if sed[0] not in src:
            return False, "mutation %r: not in the kernel" % sed[0]
        src = src.replace(sed[0], sed[1], 1)
    tag = "%s-%d" % (base, k)
    out = os.path.join(work, tag)
    idir = os.path.join(work, "inputs-" + base)
    os.makedirs(out, exist_ok=True)
    if not os.path.isdir(idir):
        os.makedirs(idir)
        rng = random.Random(spec["number"])
        for t in spec["inputs"]:
            sh = [spec["sizes"][x] if isinstance(x, str) else x for x in t["shape"]]
            e3.write_npy(os.path.join(idir, t["name"] + ".npy"), sh, t["dtype"],
                         e3.draw(t["dist"], e3.numel(sh, {}), rng))
    cpp = os.path.join(work, tag + ".cpp")
    with open(cpp, "w") as f:
        f.write(src + "\n" + e3.cpp_main(spec, src, idir, out))
    exe = os.path.join(work, tag + ".exe")
    c = subprocess.run(e3.CXX + ["-include", e3.er.shim_header(work), "-o", exe, cpp],
                       capture_output=True, text=True)
    if c.returncode:
        return False, "c++: " + c.stderr[-600:]
    x = subprocess.run([exe], capture_output=True, text=True)
    if x.returncode:
        return False, "emulated run failed: %s" % x.stderr[-300:]
    n = e3.numel(spec["outputs"][0]["shape"], spec["sizes"])
    got = struct.unpack("<%df" % n, open(os.path.join(out, spec["outputs"][0]["name"] + ".bin"), "rb").read())
    if "want" not in cache:
        cache["want"] = e3.graph_eval.evaluate(spec, e3.graph_eval.load_inputs(spec, idir)).data
    bad, mabs = e3.compare(got, cache["want"], TOL)
    return bad == 0, "%d elements, %d launches, python: %d bad (max abs %.2g)" % (
        n, src.count("<<<") - src.count("<<<...") , bad, mabs)


def one(a):
    build, root, work, base, plist, sed = a
    cache, res = {}, []
    for k, params in enumerate(plist):
        try:
            res.append(run_one(build, root, work, base, k, params, sed, cache))
        except Exception as e:  # noqa
            res.append((False, "%s: %s" % (type(e).__name__, e)))
    return res


def main():
    args = sys.argv[1:]
    jobs, plist, sed, rest, i = 1, [], None, [], 0
    while i < len(args):
        if args[i] == "-j":
            jobs = int(args[i + 1])
            i += 2
        elif args[i] == "--params":
            plist.append(args[i + 1])
            i += 2
        elif args[i] == "--sed":
            sed = (args[i + 1], args[i + 2])
            i += 3
        else:
            rest.append(args[i])
            i += 1
    if len(rest) < 3:
        sys.exit(__doc__)
    build, root, work = (os.path.abspath(a) for a in rest[:3])
    only = set(int(a) for a in rest[3:])
    bases = [b for b in sorted(os.listdir(os.path.join(root, "problems", "level3")))
             if not only or int(b.split("_")[0]) in only]
    os.makedirs(work, exist_ok=True)
    e3.er.shim_header(work)  # built once, before the jobs
    plist = plist or ["{}"]
    failed = total = 0
    with concurrent.futures.ProcessPoolExecutor(max_workers=jobs) as ex:
        for b, res in zip(bases, ex.map(one, [(build, root, work, b, plist, sed) for b in bases])):
            for params, (ok, rep) in zip(plist, res):
                total += 1
                failed += not ok
                print("%s %s %s %s" % ("ok" if ok else "not ok", b, params, rep), flush=True)
    print("checked %d kernels, %d failed" % (total, failed))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
