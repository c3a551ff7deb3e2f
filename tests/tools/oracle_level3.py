#!/usr/bin/env python3
"""Compares kforge's CPU oracle (oracle/oracle_graph*.c) with the pure-Python
graph evaluator (problems/gen/level2/graph_eval.py) on the level-3 problems of a
small-size tree (problems/gen/level3/gen.py --small DIR): `kforge problems inputs`
writes the inputs and the oracle's sample, graph_eval evaluates the same
inputs, every sampled element must agree (both compute in float64).

usage: oracle_level3.py KFORGE SMALLROOT WORK [-j N] [--tol T] [--evaluator DIR] [NUMBER...]
(--evaluator: import graph_eval.py from DIR, for a test's mutated copy)
Prints one line per problem ("ok ..." / "not ok ...") and a summary line
"compared N problems, F failed"; exit 0 when every problem matches."""
import concurrent.futures
import json
import math
import os
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import emulate_refs as er  # noqa: E402
graph_eval = None


def run_one(kforge, root, work, base, tol):
    out = os.path.join(work, base)
    env = dict(os.environ, KFORGE_ROOT=root)
    t0 = time.time()
    r = subprocess.run([kforge, "problems", "inputs", "level3/" + base, "--out", out, "--seed", "5",
                        "--samples", "100000"], env=env, capture_output=True, text=True)
    dt = time.time() - t0
    if r.returncode:
        return False, "kforge problems inputs: " + r.stderr.strip()[-300:]
    oracle = json.load(open(os.path.join(out, "oracle", "out.json")))
    spec = json.load(open(os.path.join(out, "spec.json")))
    want = graph_eval.evaluate(spec, graph_eval.load_inputs(spec, os.path.join(out, "inputs"))).data
    bad, mabs = 0, 0.0
    for i, v in zip(oracle["index"], oracle["value"]):
        w = want[i]
        d = 0.0 if v == w else abs(v - w)   # equal infinities (masked_fill) agree
        if d != d:
            d = math.inf
        mabs = max(mabs, d)
        if not d <= tol + tol * abs(w):
            bad += 1
    n = len(oracle["index"])
    ok = bad == 0 and n == len(want)
    return ok, "%d elements (%d sampled), %d bad, max abs %.2g, oracle %.2fs" % (len(want), n, bad,
                                                                              mabs, dt)


def one(a):
    try:
        return run_one(*a)
    except Exception as e:  # noqa
        return False, "%s: %s" % (type(e).__name__, e)


def main():
    args = sys.argv[1:]
    global graph_eval
    jobs, tol, evdir = 1, 1e-9, os.path.join(HERE, "..", "..", "problems", "gen", "level2")
    for opt in ("-j", "--tol", "--evaluator"):
        if opt in args:
            i = args.index(opt)
            if opt == "-j":
                jobs = int(args[i + 1])
            elif opt == "--tol":
                tol = float(args[i + 1])
            else:
                evdir = args[i + 1]
            del args[i:i + 2]
    sys.path.insert(0, evdir)
    import graph_eval as ge  # noqa: E402
    graph_eval = ge
    if len(args) < 3:
        sys.exit(__doc__)
    kforge, root, work = (os.path.abspath(a) for a in args[:3])
    only = set(int(a) for a in args[3:])
    bases = er.problem_bases(root, 3, only)
    os.makedirs(work, exist_ok=True)
    failed = 0
    with concurrent.futures.ThreadPoolExecutor(jobs) as ex:
        for b, (ok, rep) in zip(bases, ex.map(one, [(kforge, root, work, b, tol) for b in bases])):
            failed += not ok
            print("%s %s: %s" % ("ok" if ok else "not ok", b, rep), flush=True)
    print("compared %d problems, %d failed" % (len(bases), failed))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
