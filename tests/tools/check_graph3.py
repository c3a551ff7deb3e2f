#!/usr/bin/env python3
"""Checks the built-in "graph" template on a small level-3 tree
(problems/gen/level3/gen.py --small DIR) without a GPU: the kernel rendered with
PARAMS (builtin_emit render) runs on the host, CUDA emulated as
emulate_level3.py runs the references (same inputs), and every output
element must agree with problems/gen/level2/graph_eval.py at the fp32 tolerance
(atol = rtol = 1e-4).

usage: check_graph3.py BUILD SMALLROOT WORK [-j N] [--params JSON]... [--sed S R]
                       [--seed N] [NUMBER...]
--seed N: the inputs' draw from seed N (default: the problem's number); WORK
keeps the inputs it drew first, so a new seed wants a new WORK.
Prints "ok"/"not ok" per problem and kernel, and "checked N kernels, N failed"."""
import json
import os
import random
import struct
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import check_graph as cg  # noqa: E402
import emulate_level3 as e3  # noqa: E402
import runcache  # noqa: E402

TOL = 1e-4


def run_one(build, root, work, base, params, sed, cache):
    d = os.path.join(root, "problems", "level3", base)
    spec_path = os.path.join(d, "spec.json")
    spec = json.load(open(spec_path))
    src, why = cg.render(build, spec_path, params, sed)
    if why:
        return False, why
    tag = "%s-%d" % (base, cache["k"])
    out = os.path.join(work, tag)
    idir = os.path.join(work, "inputs-" + base)
    os.makedirs(out, exist_ok=True)
    if not os.path.isdir(idir):
        os.makedirs(idir)
        rng = random.Random(int(os.environ.get("CHECK_GRAPH3_SEED", spec["number"])))
        for t in spec["inputs"]:
            sh = [spec["sizes"][x] if isinstance(x, str) else x for x in t["shape"]]
            e3.write_npy(os.path.join(idir, t["name"] + ".npy"), sh, t["dtype"],
                         e3.draw(t["dist"], e3.numel(sh, {}), rng))
    why = e3.er.build_run(work, tag, e3.er.host_smem(src) + "\n" + e3.cpp_main(spec, src, idir, out))
    if why:
        return False, why
    n = e3.numel(spec["outputs"][0]["shape"], spec["sizes"])
    got = struct.unpack("<%df" % n, open(os.path.join(out, spec["outputs"][0]["name"] + ".bin"), "rb").read())
    if "want" not in cache:
        cache["want"] = runcache.graph_values(e3.graph_eval, spec, idir)
    bad, mabs = e3.compare(got, cache["want"], TOL)
    return bad == 0, "%d elements, %d launches, python: %d bad (max abs %.2g)" % (
        n, src.count("<<<") - src.count("<<<...") , bad, mabs)


if __name__ == "__main__":
    argv = sys.argv[1:]
    if "--seed" in argv:
        i = argv.index("--seed")
        # through the environment: the jobs are other processes
        os.environ["CHECK_GRAPH3_SEED"] = str(int(argv[i + 1]))
        del argv[i:i + 2]
    sys.exit(cg.drive(argv, 3, run_one, __doc__))
