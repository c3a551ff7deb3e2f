#!/usr/bin/env python3
"""Runs the level-3 reference.cu files of a small-size tree (problems/gen/level3/gen.py
--small DIR) on the host, CUDA emulated as in emulate_refs.py, and compares
every output element with problems/gen/level2/graph_eval.py (pure Python, float64).
Inputs are drawn here (Python's random, seeded; the spec's distributions), so
specs the engine cannot load yet are checked too. Launch blocks may hold
`for (int v = 0; v < N; ++v) { ... }` loops and `name + OFFSET` arguments.

usage: emulate_level3.py SMALLROOT WORK [-j N] [NUMBER...]
Prints one line per problem ("ok ..." / "not ok ...") and a summary line;
exit 0 when every problem matches."""
import concurrent.futures
import json
import os
import random
import re
import struct
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
sys.path.insert(0, os.path.join(HERE, "..", "..", "problems", "gen", "level2"))
import emulate_refs as er  # noqa: E402
import graph_eval  # noqa: E402

PY_TOL = 1e-5      # reference (double, float output) against the Python evaluator
CSIZE = {"float": 4, "double": 8, "bool": 1}


def numel(shape, sizes):
    n = 1
    for x in shape:
        n *= sizes[x] if isinstance(x, str) else x
    return n


def draw(dist, n, rng):
    k = dist["kind"]
    if k == "uniform":
        return [rng.uniform(dist["low"], dist["high"]) for _ in range(n)]
    if k == "normal":
        return [rng.gauss(dist["mean"], dist["std"]) for _ in range(n)]
    if k == "constant":
        return [float(dist["value"])] * n
    if k == "bernoulli":
        return [1.0 if rng.random() < dist["p"] else 0.0 for _ in range(n)]
    raise ValueError("distribution %s" % k)


def write_npy(path, shape, dtype, vals):
    descr, fmt = {"float32": ("<f4", "f"), "bool": ("|b1", "?")}[dtype]
    hdr = "{'descr': '%s', 'fortran_order': False, 'shape': (%s), }" % (
        descr, "".join("%d, " % d for d in shape))
    hdr += " " * (63 - (len(hdr) + 10) % 64) + "\n"
    data = [bool(v) for v in vals] if dtype == "bool" else vals
    with open(path, "wb") as f:
        f.write(b"\x93NUMPY\x01\x00" + struct.pack("<H", len(hdr)) + hdr.encode("latin1"))
        f.write(struct.pack("<%d%s" % (len(data), fmt), *data))


def cpp_main(spec, src, idir, odir):
    """The host program: load inputs, declare scratch, run the launch block."""
    sizes = spec["sizes"]
    block = src[src.index("/*@launch") + len("/*@launch"):src.index("@*/")]
    main, names, loops = ["int main() {"], {}, []
    for t in spec["inputs"]:
        main.append('  void *b_%s = kf_load("%s/%s.npy", %d);' %
                    (t["name"], idir, t["name"], numel(t["shape"], sizes) * er.DSZ[t["dtype"]]))
        names[t["name"]] = ("b_" + t["name"], er.DSZ[t["dtype"]])
    for t in spec["outputs"]:
        nb = numel(t["shape"], sizes) * er.DSZ[t["dtype"]]
        main.append("  void *b_%s = malloc(%d); memset(b_%s, 0xEE, %d);" % (t["name"], nb, t["name"], nb))
        names[t["name"]] = ("b_" + t["name"], er.DSZ[t["dtype"]])
    for line in block.splitlines():
        stmt = line.split("//")[0].strip()
        if not stmt:
            continue
        m = re.fullmatch(r"scratch\s+(zeroed\s+)?(\w+)\s+(\w+)\s*\[(.+)\];", stmt)
        if m:
            nb = er.ev(m.group(4), sizes) * CSIZE[m.group(2)]
            main.append("  void *s_%s = malloc(%d); memset(s_%s, %s, %d);" %
                        (m.group(3), nb, m.group(3), "0" if m.group(1) else "0xFF", nb))
            names[m.group(3)] = ("s_" + m.group(3), CSIZE[m.group(2)])
            continue
        m = re.fullmatch(r"for \(int (\w+) = 0; \1 < (\d+); \+\+\1\) \{", stmt)
        if m:
            main.append("  for (long long %s = 0; %s < %s; ++%s) {" % (m.group(1), m.group(1), m.group(2), m.group(1)))
            loops.append(m.group(1))
            continue
        if stmt == "}":
            main.append("  }")
            loops.pop()
            continue
        m = re.fullmatch(r"(\w+)\s*<<<(.+?)>>>\s*\((.*)\);", stmt)
        if not m:
            raise ValueError("cannot read launch statement %r" % stmt)
        cfg = er.split_top(m.group(2))
        args = []
        for a in er.split_top(m.group(3)):
            p = re.fullmatch(r"(\w+)\s*\+\s*(.+)", a)
            if a in names:
                args.append("AnyPtr{%s}" % names[a][0])
            elif p and p.group(1) in names:
                b, sz = names[p.group(1)]
                args.append("AnyPtr{(char *)%s + (%s) * %d}" % (b, p.group(2), sz))
            elif a in loops:
                args.append("(long long)%s" % a)
            else:
                args.append("(long long)%dLL" % er.ev(a, sizes))
        main.append("  kf_launch(%s, %s, [&] { %s(%s); });" %
                    (er.dim(er.ev(cfg[0], sizes)), er.dim(er.ev(cfg[1], sizes)), m.group(1), ", ".join(args)))
    for t in spec["outputs"]:
        main.append('  { FILE *f = fopen("%s/%s.bin", "wb"); fwrite(b_%s, 1, %d, f); fclose(f); }' %
                    (odir, t["name"], t["name"], numel(t["shape"], sizes) * er.DSZ[t["dtype"]]))
    main.append("  return 0;\n}")
    return "\n".join(main) + "\n"


def compare(got, want, tol):
    bad, mabs = 0, 0.0
    for g, w in zip(got, want):
        d = abs(g - w)
        if d != d:
            d = float("inf")
        mabs = max(mabs, d)
        if not d <= tol + tol * abs(w):
            bad += 1
    return bad, mabs


def run_one(root, work, base):
    d = os.path.join(root, "problems", "level3", base)
    spec = json.load(open(os.path.join(d, "spec.json")))
    src = open(os.path.join(d, "reference.cu")).read()
    out = os.path.join(work, base)
    idir = os.path.join(out, "inputs")
    os.makedirs(idir, exist_ok=True)
    rng = random.Random(spec["number"])
    for t in spec["inputs"]:
        sh = [spec["sizes"][x] if isinstance(x, str) else x for x in t["shape"]]
        write_npy(os.path.join(idir, t["name"] + ".npy"), sh, t["dtype"], draw(t["dist"], numel(sh, {}), rng))
    why = er.build_run(work, base, src + "\n" + cpp_main(spec, src, idir, out))
    if why:
        return False, why
    n = numel(spec["outputs"][0]["shape"], spec["sizes"])
    got = struct.unpack("<%df" % n, open(os.path.join(out, "out.bin"), "rb").read())
    t0 = time.time()
    want = graph_eval.evaluate(spec, graph_eval.load_inputs(spec, idir)).data
    t_py = time.time() - t0
    bad, mabs = compare(got, want, PY_TOL)
    return bad == 0, "%d elements, %d nodes, python: %d bad, max abs %.2g (%.1f s)" % (
        n, len(spec["attrs"]["graph"]), bad, mabs, t_py)


def one(a):
    try:
        return run_one(*a)
    except Exception as e:  # noqa
        return False, "%s: %s" % (type(e).__name__, e)


def main():
    args = sys.argv[1:]
    jobs = 1
    if "-j" in args:
        i = args.index("-j")
        jobs = int(args[i + 1])
        del args[i:i + 2]
    if len(args) < 2:
        sys.exit(__doc__)
    root, work = (os.path.abspath(a) for a in args[:2])
    only = set(int(a) for a in args[2:])
    bases = er.problem_bases(root, 3, only)
    os.makedirs(work, exist_ok=True)
    er.shim_header(work)  # built once, before the jobs
    failed = 0
    with concurrent.futures.ProcessPoolExecutor(max_workers=jobs) as ex:
        for b, (ok, rep) in zip(bases, ex.map(one, [(root, work, b) for b in bases])):
            failed += not ok
            print("%s %s %s" % ("ok" if ok else "not ok", b, rep), flush=True)
    print("emulated %d problems, %d failed" % (len(bases), failed))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
