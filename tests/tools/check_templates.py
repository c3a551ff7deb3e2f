#!/usr/bin/env python3
"""Checks the built-in proposer's kernels without a GPU. For each problem:
every applicable catalogue idea renders M implementations (builtin_emit
all); each must pass the launch check at full size and compile with NVRTC
for sm_90 (kfcompile; kernels with wgmma for sm_90a, and not emulated), and
its output, emulated on the host at small sizes, must match kforge's CPU
oracle (emulate_refs.py --cand). A kernel whose launch names none of the
spec's sizes is rendered for the full sizes (matmul_tce's mma core): its
template renders it again at the small sizes, and that one is emulated.

usage: check_templates.py BUILD ROOT WORK [--impls M] [--seed S] [--no-nvrtc]
                          [--no-emulate] [--every K] [--nvrtc-every K] NUMBER...
  --every K: emulate only every K-th rendered kernel of a problem (all compile).
  --nvrtc-every K: compile only every K-th rendered kernel of a problem, the
    first one at an offset that turns with the problem (all render).
Compiles and emulations run KF_TEST_JOBS at a time (default: every core).
Prints one line per kernel and "N kernels, N failed"; exit 1 if any failed."""
import glob
import json
import os
import re
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import emulate_refs  # noqa: E402


def jobs():
    """How many compiles/emulations run at once: KF_TEST_JOBS, else every core."""
    return max(1, int(os.environ.get("KF_TEST_JOBS") or os.cpu_count() or 1))


def is_sm90a(path):
    """Kernels with wgmma (the mm-tce-* and conv-tce-wgmma ideas): compiled for
    sm_90a, not emulated."""
    with open(path) as f:
        return "wgmma.mma_async" in f.read()


def by_arch(files):
    """FILES grouped by the architecture NVRTC compiles them for (wgmma's
    need sm_90a): [(arch, files)], no empty group."""
    return [(arch, g) for arch, g in (("sm_90", [f for f in files if not is_sm90a(f)]),
                                      ("sm_90a", [f for f in files if is_sm90a(f)])) if g]


def fixed_sizes(path, spec):
    """Whether the launch block of the kernel in PATH names none of SPEC's
    sizes: its launch (and its code) are for the full sizes only."""
    src = open(path).read()
    at = src.find("/*@launch")
    block = src[at:src.find("@*/", at)] if at >= 0 else ""
    return at >= 0 and not set(re.findall(r"[A-Za-z_]\w*", block)) & set(spec["sizes"])


def render_small(emit, spec, path):
    """The kernel in PATH as its template renders it at the sizes it is
    emulated at (emulate_refs.emu_sizes): PATH.small.cu, from the template
    and parameters its first line names ("// template NAME: {PARAMS}")."""
    m = re.match(r"// template (\w+): (\{.*\})\n", open(path).read())
    if not m:
        raise RuntimeError("launch fixed to the full sizes, and no template parameters "
                           "to render it at small sizes")
    small = dict(spec, sizes=emulate_refs.emu_sizes(spec))
    with open(path + ".small.json", "w") as f:
        json.dump(small, f)
    r = subprocess.run([emit, "render", path + ".small.json", m.group(1), m.group(2)],
                       capture_output=True, text=True)
    if r.returncode:
        raise RuntimeError("render at small sizes: " + r.stderr.strip()[-300:])
    with open(path + ".small.cu", "w") as f:
        f.write(r.stdout)
    return path + ".small.cu"


def main():
    args = sys.argv[1:]
    opts = {"--impls": "2", "--seed": "1", "--every": "1", "--nvrtc-every": "1"}
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
    n_jobs = jobs()
    fix = os.path.join(work, "fix")
    os.makedirs(fix, exist_ok=True)
    # Render every problem first (cheap), so the compiles and emulations of
    # all problems can share the cores; results are printed in problem order.
    rendered = []  # (num, files, render error or None)
    specs = {}
    tagged = []
    ce = int(opts["--nvrtc-every"])
    for p, num in enumerate(nums):
        d = glob.glob(os.path.join(root, "problems", "level1", "%03d_*" % num))[0]
        spec = os.path.join(d, "spec.json")
        specs[num] = json.load(open(spec))
        out = os.path.join(work, "%03d" % num)
        os.makedirs(out, exist_ok=True)
        r = subprocess.run([emit, "all", spec, out, opts["--impls"], opts["--seed"]],
                           capture_output=True, text=True)
        if r.returncode:
            rendered.append((num, [], r.stderr.strip()))
            continue
        files = [l for l in r.stdout.split("\n") if l]
        rendered.append((num, files, None))
        if files and "--no-nvrtc" not in flags:
            open(os.path.join(fix, "p%03d.json" % num), "w").write(open(spec).read())
            off = p % min(ce, len(files))
            for k, f in enumerate(files):
                if k % ce != off:
                    continue
                t = f + ".nvrtc.cu"
                open(t, "w").write("// problem: p%03d\n" % num + open(f).read())
                tagged.append(t)
    verdict = {f: [] for num, files, err in rendered for f in files}
    res = {}
    # wgmma kernels need sm_90a (and are not emulated)
    for arch, group in by_arch(tagged):
        r = subprocess.run([kfc, "--exe", kforge, "--arch", arch, "--fixtures", fix, "--pool",
                            str(n_jobs), "--timeout", "120", "--cpu", "120"] + group,
                           capture_output=True, text=True)
        for line in r.stdout.split("\n"):
            if ": " in line and line.split(": ")[0].endswith(".nvrtc.cu"):
                res[line.split(": ")[0][:-len(".nvrtc.cu")]] = line.split(": ", 1)[1]
    if tagged:
        for t in tagged:
            f = t[:-len(".nvrtc.cu")]
            st = res.get(f, "no result")
            if not st.startswith("ok"):
                verdict[f].append("nvrtc: " + st[:200])
    if "--no-emulate" not in flags:
        every = int(opts["--every"])
        emus = [(num, k, f) for num, files, err in rendered
                for k, f in enumerate(files) if k % every == 0 and not is_sm90a(f)]

        # emulate_refs.py's line for each (forked workers: one Python start
        # for all); it names its files after the problem: one dir per job
        with emulate_refs.pool(n_jobs) as ex:
            futs = []
            for num, k, f in emus:
                try:
                    cand = render_small(emit, specs[num], f) if fixed_sizes(f, specs[num]) else f
                except Exception as e:  # noqa
                    futs.append(e)
                    continue
                futs.append(ex.submit(emulate_refs.cand_line, kforge, root,
                                      os.path.join(work, "emu", "%03d-%d" % (num, k)), cand, num))
            for (num, k, f), fut in zip(emus, futs):
                try:
                    if isinstance(fut, Exception):
                        raise fut
                    line = fut.result()
                except Exception as e:  # noqa
                    line = "%s: %s" % (type(e).__name__, e)
                if not line.startswith("ok"):
                    verdict[f].append("emulate: " + (line or "no result"))
    total = failed = 0
    for num, files, err in rendered:
        if err is not None:
            print("not ok %03d render: %s" % (num, err))
            failed += 1
            total += 1
            continue
        if not files:
            print("# %03d: no template applies" % num)
            continue
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
