#!/usr/bin/env python3
"""A candidate kernel, emulated on the host (emulate_level3.py's shim), on a
problem's inputs of one draw (`kforge problems inputs ID [--alive]`),
compared with the CPU oracle's sample of that draw at the spec's fp32
tolerance (|got - want| <= atol + rtol |want|, atol = rtol = 1e-4).

usage: sens_emulate.py KFORGE WORK ID CANDIDATE.cu [--alive] [--seed S] [--samples N]
Prints "pass ID DRAW: N sampled elements" or "fail ID DRAW: K of N (max abs err E)";
exit 0 either way, 2 on an error."""
import json
import os
import struct
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import emulate_level3 as e3  # noqa: E402

TOL = 1e-4


def main(argv):
    if len(argv) < 4:
        print(__doc__, file=sys.stderr)
        return 2
    kforge, work, pid, cand = argv[:4]
    alive = "--alive" in argv[4:]
    seed = argv[argv.index("--seed") + 1] if "--seed" in argv else "1"
    samples = argv[argv.index("--samples") + 1] if "--samples" in argv else "64"
    draw = "alive" if alive else "spec"
    tag = "%s-%s" % (os.path.basename(cand).rsplit(".", 1)[0], draw)
    d = os.path.join(work, "inputs-%s-%s" % (pid.replace("/", "_"), draw))
    if not os.path.isdir(os.path.join(d, "oracle")):
        cmd = [kforge, "problems", "inputs", pid, "--out", d, "--seed", seed, "--samples", samples]
        subprocess.run(cmd + (["--alive"] if alive else []), check=True, capture_output=True)
    spec = json.load(open(os.path.join(d, "spec.json")))
    src = open(cand).read()
    out = os.path.join(work, tag)
    os.makedirs(out, exist_ok=True)
    why = e3.er.build_run(work, tag, e3.er.host_smem(src) + "\n" +
                          e3.cpp_main(spec, src, os.path.join(d, "inputs"), out))
    if why:
        print("error %s %s: %s" % (pid, draw, why))
        return 2
    o = spec["outputs"][0]
    n = e3.numel(o["shape"], spec["sizes"])
    got = struct.unpack("<%df" % n, open(os.path.join(out, o["name"] + ".bin"), "rb").read())
    want = json.load(open(os.path.join(d, "oracle", o["name"] + ".json")))
    g = [got[i] for i in want["index"]]
    w = [v if v is not None else float("nan") for v in want["value"]]
    bad, mabs = e3.compare(g, w, TOL)
    if bad:
        print("fail %s %s: %d of %d (max abs err %.3g)" % (pid, draw, bad, len(w), mabs))
    else:
        print("pass %s %s: %d sampled elements (max abs err %.3g)" % (pid, draw, len(w), mabs))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
