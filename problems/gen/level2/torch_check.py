#!/usr/bin/env python3
"""Checks the level-2 operator graphs against PyTorch itself: runs each
problem's reference.py (KernelBench's module, at the sizes of its tree) in
float64 on the CPU with kforge's generated inputs and parameters, and
compares with problems/gen/level2/graph_eval.py on the same inputs. Dropout is
patched to use the problem's mask input (docs/graph-ir.md). Needs torch and
numpy (Debian's python3-torch is enough).

    torch_check.py KFORGE ROOT WORK [NUMBER...]

ROOT is a tree with problems/level2 (the small copies of gen.py --small for
speed). Prints one line per problem; exit 1 on any mismatch."""
import json
import os
import subprocess
import sys

import numpy as np
import torch

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import graph_eval  # noqa: E402

TOL = 1e-9


def run(kforge, root, work, base):
    d = os.path.join(root, "problems", "level2", base)
    spec = json.load(open(os.path.join(d, "spec.json")))
    out = os.path.join(work, base)
    env = dict(os.environ, KFORGE_ROOT=root)
    subprocess.run([kforge, "problems", "inputs", "level2/" + base, "--out", out, "--seed", "7",
                    "--samples", "2"], env=env, capture_output=True)
    idir = os.path.join(out, "inputs")
    ins = {t["name"]: np.load(os.path.join(idir, t["name"] + ".npy")) for t in spec["inputs"]}
    g = {}
    exec(compile(open(os.path.join(d, "reference.py")).read(), base, "exec"), g)
    torch.manual_seed(0)
    model = g["Model"](*g["get_init_inputs"]()).double()
    model.train()
    sd = model.state_dict()
    for t in spec["inputs"]:
        if t["role"] == "param":
            key = t["torch_param"]
            sd[key].copy_(torch.from_numpy(ins[t["name"]].astype(np.float64)).reshape(sd[key].shape))
    args = [torch.from_numpy(ins[t["name"]].astype(np.float64)) for t in spec["inputs"]
            if t["role"] == "input" and t["dtype"] != "bool"]
    masks = [torch.from_numpy(ins[t["name"]].astype(np.float64)) for t in spec["inputs"]
             if t["dtype"] == "bool"]
    real = torch.nn.functional.dropout

    def dropout(x, p=0.5, training=True, inplace=False):
        return x * masks.pop(0) / (1.0 - p)
    torch.nn.functional.dropout = dropout
    try:
        with torch.no_grad():
            yt = model(*args)
    finally:
        torch.nn.functional.dropout = real
    want = graph_eval.evaluate(spec, graph_eval.load_inputs(spec, idir))
    if list(yt.shape) != list(want.shape):
        return False, "torch gives shape %s, the graph %s" % (list(yt.shape), list(want.shape))
    y = yt.numpy().reshape(-1)
    err = max((abs(a - b) / (1.0 + abs(b)) for a, b in zip(y, want.data)), default=0.0)
    return err <= TOL, "%d elements, max err %.2g" % (len(y), err)


def main():
    kforge, root, work = (os.path.abspath(a) for a in sys.argv[1:4])
    only = set(int(x) for x in sys.argv[4:])
    bases = [b for b in sorted(os.listdir(os.path.join(root, "problems", "level2")))
             if not only or int(b.split("_")[0]) in only]
    bad = 0
    for b in bases:
        try:
            ok, rep = run(kforge, root, work, b)
        except Exception as e:  # noqa
            ok, rep = False, "%s: %s" % (type(e).__name__, e)
        bad += not ok
        print("%s %s %s" % ("ok" if ok else "not ok", b, rep), flush=True)
    print("torch-checked %d problems, %d mismatching" % (len(bases), bad))
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
