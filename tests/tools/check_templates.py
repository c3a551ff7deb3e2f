#!/usr/bin/env python3
"""Checks the built-in proposer's kernels without a GPU. For each problem:
every applicable catalogue idea renders M implementations (builtin_emit
all); each must pass the launch check at full size and compile with NVRTC
for sm_90 (kfcompile), and its output, emulated on the host at small sizes,
must match kforge's CPU oracle (emulate_refs.py --cand).

usage: check_templates.py BUILD ROOT WORK [--impls M] [--seed S] [--no-nvrtc]
                          [--no-emulate] [--every K] NUMBER...
  --every K: emulate only every K-th rendered kernel of a problem (all compile).
Prints one line per kernel and "N kernels, N failed"; exit 1 if any failed."""
import glob
import os
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))


def main():
    args = sys.argv[1:]
    opts = {"--impls": "2", "--seed": "1", "--every": "1"}
    flags = set()
    rest = []
    i = 0
    while i < len(args):
        if args[i] in opts:
            opts[args[i]] = args[i + 1]
            i += 2
        elif args[i] in ("--no-nvrtc", "--no-emulate"):
            flags.add(args[i])
            i += 1
        else:
            rest.append(args[i])
            i += 1
    build, root, work = rest[:3]
    nums = [int(x) for x in rest[3:]]
    kforge = os.path.join(build, "kforge")
    emit = os.path.join(build, "tests", "builtin_emit")
    kfc = os.path.join(build, "tests", "kfcompile")
    total = failed = 0
    for num in nums:
        d = glob.glob(os.path.join(root, "problems", "level1", "%03d_*" % num))[0]
        spec = os.path.join(d, "spec.json")
        out = os.path.join(work, "%03d" % num)
        fix = os.path.join(work, "fix")
        os.makedirs(out, exist_ok=True)
        os.makedirs(fix, exist_ok=True)
        r = subprocess.run([emit, "all", spec, out, opts["--impls"], opts["--seed"]],
                           capture_output=True, text=True)
        if r.returncode:
            print("not ok %03d render: %s" % (num, r.stderr.strip()))
            failed += 1
            total += 1
            continue
        files = [l for l in r.stdout.split("\n") if l]
        if not files:
            print("# %03d: no template applies" % num)
            continue
        verdict = {f: [] for f in files}
        if "--no-nvrtc" not in flags:
            open(os.path.join(fix, "p%03d.json" % num), "w").write(open(spec).read())
            tagged = []
            for f in files:
                t = f + ".nvrtc.cu"
                open(t, "w").write("// problem: p%03d\n" % num + open(f).read())
                tagged.append(t)
            r = subprocess.run([kfc, "--exe", kforge, "--fixtures", fix, "--pool", "2",
                                "--timeout", "120", "--cpu", "120"] + tagged,
                               capture_output=True, text=True)
            res = {}
            for line in r.stdout.split("\n"):
                if ": " in line and line.split(": ")[0].endswith(".nvrtc.cu"):
                    res[line.split(": ")[0][:-len(".nvrtc.cu")]] = line.split(": ", 1)[1]
            for f in files:
                st = res.get(f, "no result")
                if not st.startswith("ok"):
                    verdict[f].append("nvrtc: " + st[:200])
        if "--no-emulate" not in flags:
            every = int(opts["--every"])
            for k, f in enumerate(files):
                if k % every:
                    continue
                r = subprocess.run([sys.executable, os.path.join(HERE, "emulate_refs.py"), kforge,
                                    root, os.path.join(work, "emu"), "--cand", f, str(num)],
                                   capture_output=True, text=True)
                line = (r.stdout.strip().split("\n") or [""])[-1]
                if r.returncode or not line.startswith("ok"):
                    verdict[f].append("emulate: " + (line or r.stderr.strip()[-300:]))
        for f in files:
            total += 1
            if verdict[f]:
                failed += 1
                print("not ok %s %s" % (os.path.basename(f), "; ".join(verdict[f])))
            else:
                print("ok %s" % os.path.basename(f))
        sys.stdout.flush()
    print("%d kernels, %d failed" % (total, failed))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
