#!/usr/bin/env python3
"""Runs the level-2 reference.cu files of a small-size tree (problems/gen/level2/gen.py
--small DIR) on the host, CUDA emulated as in emulate_refs.py (a block's
threads are fibers, __syncthreads a barrier), and compares every output
element with problems/gen/level2/graph_eval.py (pure Python, float64) and, where
kforge's CPU oracle knows family "graph", with the oracle's values.

usage: emulate_level2.py KFORGE SMALLROOT WORK [-j N] [NUMBER...]
Prints one line per problem ("ok ..." / "not ok ...") and a summary line
"oracle: compared N" or "oracle: unavailable (...)"; exit 0 when every
problem matches."""
import concurrent.futures
import json
import os
import re
import struct
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
sys.path.insert(0, os.path.join(HERE, "..", "..", "problems", "gen", "level2"))
import emulate_refs as er  # noqa: E402
import graph_eval  # noqa: E402
import runcache  # noqa: E402

PY_TOL = 1e-5      # reference (double, float output) against the Python evaluator
NO_ORACLE = "no oracle for family"


def numel(t, sizes):
    n = 1
    for x in t["shape"]:
        n *= sizes[x] if isinstance(x, str) else x
    return n


def cpp_main(spec, src, idir, odir):
    """The host program: load inputs, declare scratch, run the launch block."""
    sizes = spec["sizes"]
    block = src[src.index("/*@launch") + len("/*@launch"):src.index("@*/")]
    block = "\n".join(l.split("//")[0] for l in block.splitlines())
    main, names = ["int main() {"], {}
    for t in spec["inputs"]:
        main.append('  void *b_%s = kf_load("%s/%s.npy", %d);' %
                    (t["name"], idir, t["name"], numel(t, sizes) * er.DSZ[t["dtype"]]))
        names[t["name"]] = "b_" + t["name"]
    for t in spec["outputs"]:
        nb = numel(t, sizes) * er.DSZ[t["dtype"]]
        main.append("  void *b_%s = malloc(%d); memset(b_%s, 0xEE, %d);" % (t["name"], nb, t["name"], nb))
        names[t["name"]] = "b_" + t["name"]
    esize = {t["name"]: er.DSZ[t["dtype"]] for t in spec["inputs"] + spec["outputs"]}
    main += er.launch_cpp(block, spec, sizes, names, esize, float_args=False)
    for t in spec["outputs"]:
        main.append('  { FILE *f = fopen("%s/%s.bin", "wb"); fwrite(b_%s, 1, %d, f); fclose(f); }' %
                    (odir, t["name"], t["name"], numel(t, sizes) * er.DSZ[t["dtype"]]))
    main.append("  return 0;\n}")
    return "\n".join(main) + "\n"


def compare(got, want, idx, tol):
    bad, mabs, mrel = 0, 0.0, 0.0
    for i, w in zip(idx, want):
        d = abs(got[i] - w)
        if d != d:
            d = float("inf")
        mabs = max(mabs, d)
        if w:
            mrel = max(mrel, d / abs(w))
        if not d <= tol + tol * abs(w):
            bad += 1
    return bad, mabs, mrel


def run_one(kforge, root, work, base):
    d = os.path.join(root, "problems", "level2", base)
    spec = json.load(open(os.path.join(d, "spec.json")))
    src = open(os.path.join(d, "reference.cu")).read()
    out = os.path.join(work, base)
    os.makedirs(out, exist_ok=True)
    env = dict(os.environ, KFORGE_ROOT=root)
    r = runcache.problem_inputs([kforge, "problems", "inputs", "level2/" + base, "--out", out, "--seed", "5",
                                 "--samples", "100000"], d, env=env, capture_output=True, text=True)
    oracle = None
    if r.returncode == 0:
        oracle = json.load(open(os.path.join(out, "oracle", "out.json")))
    elif NO_ORACLE not in r.stderr:
        return False, "kforge problems inputs: " + r.stderr.strip()[-300:], None
    idir = os.path.join(out, "inputs")
    why = er.build_run(work, base, src + "\n" + cpp_main(spec, src, idir, out))
    if why:
        return False, why, None
    t = spec["outputs"][0]
    n = numel(t, spec["sizes"])
    got = struct.unpack("<%df" % n, open(os.path.join(out, "out.bin"), "rb").read())
    want = runcache.graph_values(graph_eval, spec, idir)
    bad, mabs, mrel = compare(got, want, range(n), PY_TOL)
    ok = bad == 0
    rep = "%d elements, python: %d bad, max abs %.2g, max rel %.2g" % (n, bad, mabs, mrel)
    if oracle is not None:
        tol = {"fp32": 1e-4, "fp16": 1e-2, "bf16": 1e-2, "exact": 0.0}[spec["tolerance"]]
        obad, oabs, orel = compare(got, oracle["value"], oracle["index"], tol)
        ok = ok and obad == 0 and len(oracle["index"]) == n
        rep += "; oracle: %d of %d bad, max abs %.2g" % (obad, len(oracle["index"]), oabs)
    return ok, rep, oracle is not None


def one(a):
    try:
        return run_one(*a)
    except Exception as e:  # noqa
        return False, "%s: %s" % (type(e).__name__, e), None


def main():
    args = sys.argv[1:]
    jobs = 1
    if "-j" in args:
        i = args.index("-j")
        jobs = int(args[i + 1])
        del args[i:i + 2]
    kforge, root, work = (os.path.abspath(a) for a in args[:3])
    only = set(int(a) for a in args[3:])
    bases = er.problem_bases(root, 2, only)
    os.makedirs(work, exist_ok=True)
    # the shim once, precompiled: every problem includes it
    er.shim_header(work)  # built once, before the jobs
    failed, with_oracle = 0, 0

    with concurrent.futures.ProcessPoolExecutor(max_workers=jobs) as ex:
        for b, (ok, rep, orc) in zip(bases, ex.map(one, [(kforge, root, work, b) for b in bases])):
            failed += not ok
            with_oracle += bool(orc)
            print("%s %s %s" % ("ok" if ok else "not ok", b, rep), flush=True)
    if with_oracle:
        print("oracle: compared %d" % with_oracle)
    else:
        print("oracle: unavailable (kforge has no oracle for family graph)")
    print("emulated %d problems, %d failed" % (len(bases), failed))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
