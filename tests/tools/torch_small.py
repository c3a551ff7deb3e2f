#!/usr/bin/env python3
"""Cross-checks problems against PyTorch on the CPU at small sizes: writes a
shrunk copy of each problem (spec sizes and reference.py's `name = INT` lines),
has kforge write its inputs and oracle sample, and runs
tools/torch_crosscheck.py on them. Needs a Python with torch and numpy.

usage: torch_small.py KFORGE ROOT WORKDIR [NUMBER...]"""
import json
import os
import re
import subprocess
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from emulate_refs import SMALL  # noqa: E402


def shrink(root, work, base):
    d = os.path.join(root, "problems", "level1", base)
    spec = json.load(open(os.path.join(d, "spec.json")))
    sizes = {k: SMALL.get(k, v) for k, v in spec["sizes"].items()}
    if spec["number"] == 100:
        sizes["batch_size"] = sizes["dim"] = 40
    spec["sizes"] = sizes
    for t in spec["inputs"]:
        if t["dist"]["kind"] == "randint" and "num_classes" in sizes:
            t["dist"]["high"] = min(t["dist"]["high"], sizes["num_classes"])
    out = os.path.join(work, "root", "problems", "level1", base)
    os.makedirs(out, exist_ok=True)
    os.makedirs(os.path.join(work, "root", "templates"), exist_ok=True)
    json.dump(spec, open(os.path.join(out, "spec.json"), "w"), indent=1)
    py = open(os.path.join(d, "reference.py")).read()
    for k, v in sizes.items():
        py = re.sub(r"(?m)^%s = \d+$" % re.escape(k), "%s = %d" % (k, v), py)
    open(os.path.join(out, "reference.py"), "w").write(py)
    with open(os.path.join(d, "reference.cu")) as f:
        open(os.path.join(out, "reference.cu"), "w").write(f.read())


def main():
    kforge, root, work = sys.argv[1:4]
    only = set(int(x) for x in sys.argv[4:])
    bases = [b for b in sorted(os.listdir(os.path.join(root, "problems", "level1")))
             if (not only or int(b.split("_")[0]) in only)
             and os.path.exists(os.path.join(root, "problems", "level1", b, "spec.json"))]
    dump = os.path.join(work, "dump")
    env = dict(os.environ, KFORGE_ROOT=os.path.join(work, "root"))
    nums = []
    for b in bases:
        shrink(root, work, b)
        r = subprocess.run([kforge, "problems", "inputs", b, "--out", os.path.join(dump, b),
                            "--seed", "3", "--samples", "100000"], env=env, capture_output=True,
                           text=True)
        if r.returncode:
            print("not ok %s: kforge problems inputs: %s" % (b, r.stderr.strip()))
            continue
        nums.append(str(int(b.split("_")[0])))
    if not nums:
        return 1
    r = subprocess.run([sys.executable, os.path.join(root, "tools", "torch_crosscheck.py"),
                        "--root", os.path.join(work, "root"), "--dump", dump, "--device", "cpu",
                        "--problems", ",".join(nums)])
    return r.returncode


if __name__ == "__main__":
    sys.exit(main())
