#!/usr/bin/env python3
"""Checks the built-in "graph" template (kernels/graph/builtin_graph*.c) on a
small-size level-2 tree (problems/gen/level2/gen.py --small DIR) without a GPU:
for each problem the kernel rendered with PARAMS (builtin_emit render) runs
on the host, CUDA emulated as emulate_level2.py runs the references, and
every output element must agree with the pure-Python graph evaluator and
with kforge's CPU oracle at the fp32 tolerance (atol = rtol = 1e-4).

usage: check_graph.py BUILD SMALLROOT WORK [-j N] [--params JSON]... [--sed S R]
                      [NUMBER...]
  --params JSON: the template's parameters; repeated: one kernel each (default {}).
  --sed S R: replace the first S in each rendered kernel by R (a mutation
             the comparison must catch).
Prints "ok"/"not ok" per problem and kernel, and "checked N kernels, N failed"."""
import concurrent.futures
import functools
import json
import os
import struct
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import emulate_level2 as el  # noqa: E402
import runcache  # noqa: E402

TOL = 1e-4


def render(build, spec_path, params, sed):
    """The template's kernel (builtin_emit render) with the mutation sed
    applied: (source, None) or (None, what failed)."""
    r = subprocess.run([os.path.join(build, "tests", "builtin_emit"), "render", spec_path, "graph",
                        params], capture_output=True, text=True)
    if r.returncode:
        return None, "render: " + r.stderr.strip()[-300:]
    src = r.stdout
    if sed:
        if sed[0] not in src:
            return None, "mutation %r: not in the kernel" % sed[0]
        src = src.replace(sed[0], sed[1], 1)
    return src, None


def run_one(build, root, work, base, params, sed, cache):
    d = os.path.join(root, "problems", "level2", base)
    spec_path = os.path.join(d, "spec.json")
    spec = json.load(open(spec_path))
    tag = "%s-%d" % (base, cache["k"])
    out = os.path.join(work, tag)
    os.makedirs(out, exist_ok=True)
    src, why = render(build, spec_path, params, sed)
    if why:
        return False, why
    inputs = os.path.join(work, "inputs", base)
    if not os.path.exists(os.path.join(inputs, "oracle", "out.json")):
        env = dict(os.environ, KFORGE_ROOT=root)
        r = runcache.problem_inputs([os.path.join(build, "kforge"), "problems", "inputs", "level2/" + base,
                                     "--out", inputs, "--seed", "5", "--samples", "100000"],
                                    d, env=env, capture_output=True, text=True)
        if r.returncode:
            return False, "kforge problems inputs: " + r.stderr.strip()[-300:]
    oracle = json.load(open(os.path.join(inputs, "oracle", "out.json")))
    idir = os.path.join(inputs, "inputs")
    why = el.er.build_run(work, tag, el.er.host_smem(src) + "\n" + el.cpp_main(spec, src, idir, out))
    if why:
        return False, why
    n = el.numel(spec["outputs"][0], spec["sizes"])
    got = struct.unpack("<%df" % n, open(os.path.join(out, "out.bin"), "rb").read())
    if "want" not in cache:
        cache["want"] = runcache.graph_values(el.graph_eval, spec, idir)
    want = cache["want"]
    bad, mabs, _ = el.compare(got, want, range(n), TOL)
    obad, oabs, _ = el.compare(got, oracle["value"], oracle["index"], TOL)
    ok = bad == 0 and obad == 0 and len(oracle["index"]) == n
    return ok, "%d elements, python: %d bad (max abs %.2g), oracle: %d bad (max abs %.2g)" % (
        n, bad, mabs, obad, oabs)


def one(run, a):
    """Every parameter set of one problem (the evaluator's values computed once)."""
    build, root, work, base, plist, sed = a
    cache, res = {}, []
    for k, params in enumerate(plist):
        cache["k"] = k
        try:
            res.append(run(build, root, work, base, params, sed, cache))
        except Exception as e:  # noqa
            res.append((False, "%s: %s" % (type(e).__name__, e)))
    return res


def drive(args, level, run, doc):
    """The command line of check_graph.py (level 2) and check_graph3.py
    (level 3): run(build, root, work, base, params, sed, cache) per problem
    and parameter set."""
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
        sys.exit(doc)
    build, root, work = (os.path.abspath(a) for a in rest[:3])
    bases = el.er.problem_bases(root, level, set(int(a) for a in rest[3:]))
    os.makedirs(work, exist_ok=True)
    el.er.shim_header(work)  # built once, before the jobs
    plist = plist or ["{}"]
    failed = total = 0
    with concurrent.futures.ProcessPoolExecutor(max_workers=jobs) as ex:
        jobs_args = [(build, root, work, b, plist, sed) for b in bases]
        for b, res in zip(bases, ex.map(functools.partial(one, run), jobs_args)):
            for params, (ok, rep) in zip(plist, res):
                total += 1
                failed += not ok
                print("%s %s %s %s" % ("ok" if ok else "not ok", b, params, rep), flush=True)
    print("checked %d kernels, %d failed" % (total, failed))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(drive(sys.argv[1:], 2, run_one, __doc__))
