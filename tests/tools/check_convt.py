#!/usr/bin/env python3
"""check_templates.py for convolution problems: renders every applicable idea
(builtin_emit all), launch-checks every kernel at full size (kfcompile
--launch-only), compiles them with NVRTC for sm_90 (those with wgmma for
sm_90a: check_templates.by_arch) and emulates them with
emulate_convt.py at small spatial extents (the stock emulator keeps conv
extents at full size, far too slow and inconsistent with the output's).

usage: check_convt.py BUILD ROOT WORK [--impls M] [--seed S] [--every K]
                      [--nvrtc-every K] [--no-nvrtc] NUMBER...
  --every K: emulate only every K-th kernel of a problem (at least one; the
    sampled ones rotate with the problem number);
  --nvrtc-every K: likewise for NVRTC compiles (all are launch-checked).
Compiles and emulations run KF_TEST_JOBS at a time (default: every core).
Prints one line per kernel and "N kernels, N failed"; exit 1 if any failed."""
import glob
import os
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
from check_templates import by_arch, jobs  # noqa: E402
import emulate_convt  # noqa: E402


def kfc(build, fix, files, extra):
    """kfcompile over FILES (tagged copies): {file: status line}."""
    tagged = []
    for f, num in files:
        t = f + ".nvrtc.cu"
        open(t, "w").write("// problem: p%03d\n" % num + open(f).read())
        tagged.append(t)
    res = {}
    for arch, group in by_arch(tagged):
        r = subprocess.run([os.path.join(build, "tests", "kfcompile"), "--exe",
                            os.path.join(build, "kforge"), "--arch", arch, "--fixtures", fix] + extra + group,
                           capture_output=True, text=True)
        for line in r.stdout.split("\n"):
            if ": " in line and line.split(": ")[0].endswith(".nvrtc.cu"):
                res[line.split(": ")[0][:-len(".nvrtc.cu")]] = line.split(": ", 1)[1]
    return res


def main():
    args = sys.argv[1:]
    opts = {"--impls": "2", "--seed": "1", "--every": "1", "--nvrtc-every": "1"}
    nvrtc, rest, i = True, [], 0
    while i < len(args):
        if args[i] in opts:
            opts[args[i]] = args[i + 1]
            i += 2
        elif args[i] == "--no-nvrtc":
            nvrtc = False
            i += 1
        else:
            rest.append(args[i])
            i += 1
    build, root, work = rest[:3]
    fix = os.path.join(work, "fix")
    os.makedirs(fix, exist_ok=True)
    every, nevery = int(opts["--every"]), int(opts["--nvrtc-every"])
    allf, verdict = [], {}
    for num in [int(x) for x in rest[3:]]:
        d = glob.glob(os.path.join(root, "problems", "level1", "%03d_*" % num))[0]
        spec = os.path.join(d, "spec.json")
        out = os.path.join(work, "%03d" % num)
        os.makedirs(out, exist_ok=True)
        open(os.path.join(fix, "p%03d.json" % num), "w").write(open(spec).read())
        r = subprocess.run([os.path.join(build, "tests", "builtin_emit"), "all", spec, out,
                            opts["--impls"], opts["--seed"]], capture_output=True, text=True)
        if r.returncode:
            print("not ok %03d render: %s" % (num, r.stderr.strip()))
            verdict["render %03d" % num] = ["render"]
            continue
        files = [l for l in r.stdout.split("\n") if l]
        if not files:
            print("# %03d: no template applies" % num)
        for k, f in enumerate(files):
            # rotate the sampled kernel over problems so every idea gets its turn
            allf.append((f, num, (k - num % max(1, min(int(opts["--every"]), len(files)))) %
                         max(1, len(files))))
            verdict[f] = []
    res = kfc(build, fix, [(f, n) for f, n, k in allf], ["--launch-only"])
    for f, n, k in allf:
        if not res.get(f, "").startswith("launch_ok"):
            verdict[f].append("launch: " + res.get(f, "no result")[:200])
    if nvrtc:
        pick = [(f, n) for f, n, k in allf if k % nevery == 0]
        res = kfc(build, fix, pick, ["--pool", str(jobs()), "--timeout", "120", "--cpu", "120"])
        for f, n in pick:
            if not res.get(f, "").startswith("ok"):
                verdict[f].append("nvrtc: " + res.get(f, "no result")[:200])
    emus = [(idx, f, n) for idx, (f, n, k) in enumerate(allf) if k % every == 0 and not verdict[f]]

    # emulate_convt.py's line for each (forked workers: one Python start for
    # all); it names its files after the problem: one dir per job
    with emulate_convt.emulate_refs.pool(jobs()) as ex:
        futs = [ex.submit(emulate_convt.cand_line, os.path.join(build, "kforge"), root,
                          os.path.join(work, "emu", "%03d-%d" % (n, idx)), f, n)
                for idx, f, n in emus]
        for (idx, f, n), fut in zip(emus, futs):
            try:
                line = fut.result()
            except Exception as e:  # noqa
                line = "%s: %s" % (type(e).__name__, e)
            if not line.startswith("ok"):
                verdict[f].append("emulate: " + (line or "no result"))
    for f, n, k in allf:
        print("%s %s%s" % ("not ok" if verdict[f] else "ok", os.path.basename(f),
                           " " + "; ".join(verdict[f]) if verdict[f] else ""))
        sys.stdout.flush()
    failed = sum(1 for v in verdict.values() if v)
    print("%d kernels, %d failed" % (len(verdict), failed))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
