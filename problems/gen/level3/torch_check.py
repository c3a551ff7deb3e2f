#!/usr/bin/env python3
"""Checks the level-3 operator graphs against PyTorch itself: runs each
problem's reference.py (KernelBench's module, at the sizes of its tree) in
float64 on the CPU, in training mode, with the spec's parameters copied in by
their torch_param (state_dict) names, and compares its output with
problems/gen/level2/graph_eval.py on the same values. Inputs are drawn here from the
spec's distributions (numpy, seeded). torch.randn called inside forward
returns the problem's `randn` inputs in order; dropout uses the mask inputs.
einops.rearrange, where the module imports it and einops is missing, is a
small shim (reshape / permute). Needs torch and numpy (Debian's
python3-torch is enough).

    torch_check.py ROOT [NUMBER...]

ROOT is a tree with problems/level3 (the small copies of gen.py --small for
speed). Prints one line per problem; exit 1 on any mismatch."""
import json
import os
import sys
import types

import numpy as np
import torch

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "level2"))
import graph_eval  # noqa: E402

TOL = 1e-9


def einops_shim():
    """einops.rearrange for plain letters, parenthesised groups and `...`."""
    def groups(side):
        out, cur = [], None
        for tok in side.replace("(", " ( ").replace(")", " ) ").split():
            if tok == "(":
                cur = []
            elif tok == ")":
                out.append(cur)
                cur = None
            elif cur is not None:
                cur.append(tok)
            else:
                out.append([tok])
        return out

    def rearrange(x, pattern, **axes):
        lhs, rhs = (groups(s) for s in pattern.split("->"))
        nell = x.dim() - (len(lhs) - (1 if ["..."] in lhs else 0))
        sizes, names, i = dict(axes), [], 0
        for g in lhs:
            if g == ["..."]:
                for k in range(nell):
                    sizes["_e%d" % k] = x.shape[i + k]
                    names.append("_e%d" % k)
                i += nell
                continue
            known = 1
            for c in g:
                known *= sizes.get(c, 1)
            for c in g:
                if c not in sizes:
                    sizes[c] = x.shape[i] // known
            names += g
            i += 1
        y = x.reshape([sizes[c] for c in names])
        out = []
        for g in rhs:
            out += ["_e%d" % k for k in range(nell)] if g == ["..."] else g
        y = y.permute([names.index(c) for c in out])
        shape = []
        for g in rhs:
            if g == ["..."]:
                shape += [sizes["_e%d" % k] for k in range(nell)]
            else:
                n = 1
                for c in g:
                    n *= sizes[c]
                shape.append(n)
        return y.reshape(shape)
    m = types.ModuleType("einops")
    m.rearrange = rearrange
    return m


def draw(t, rng):
    shape = t["shape"]
    d = t["dist"]
    k = d["kind"]
    if k == "uniform":
        v = rng.uniform(d["low"], d["high"], shape)
    elif k == "normal":
        v = rng.normal(d["mean"], d["std"], shape)
    elif k == "constant":
        v = np.full(shape, float(d["value"]))
    elif k == "bernoulli":
        v = rng.random(shape) < d["p"]
    else:
        raise ValueError("distribution %s" % k)
    return np.asarray(v, dtype=np.float64)


def run(root, base):
    d = os.path.join(root, "problems", "level3", base)
    spec = json.load(open(os.path.join(d, "spec.json")))
    rng = np.random.default_rng(spec["number"])
    ins = {t["name"]: draw(t, rng) for t in spec["inputs"]}
    if "einops" not in sys.modules:
        try:
            import einops  # noqa: F401
        except ImportError:
            sys.modules["einops"] = einops_shim()
    g = {"__name__": "kernelbench"}
    exec(compile(open(os.path.join(d, "reference.py")).read(), base, "exec"), g)
    torch.manual_seed(0)
    model = g["Model"](*g["get_init_inputs"]()).double()
    model.train()
    sd = model.state_dict()
    for t in spec["inputs"]:
        if t["role"] == "param":
            if "torch_param" not in t:
                return False, "param %s has no state_dict key (torch_attr): not checked" % t["name"]
            key = t["torch_param"]
            if key not in sd:
                return False, "param %s: no %s in the module's state_dict" % (t["name"], key)
            sd[key].copy_(torch.from_numpy(ins[t["name"]]).reshape(sd[key].shape))
    # the module's tensors, in forward's order (not the masks or drawn ones)
    args = [torch.from_numpy(ins[t["name"]]) for t in spec["inputs"]
            if t["role"] == "input" and t["dtype"] != "bool" and not t["name"].startswith("randn")]
    drawn = [torch.from_numpy(ins[t["name"]]) for t in spec["inputs"] if t["name"].startswith("randn")]
    masks = [torch.from_numpy(ins[t["name"]]) for t in spec["inputs"] if t["dtype"] == "bool"]
    real_dropout, real_randn = torch.nn.functional.dropout, torch.randn

    def dropout(x, p=0.5, training=True, inplace=False):
        return x * masks.pop(0) / (1.0 - p) if training and p > 0 else x

    def randn(*a, **k):
        return drawn.pop(0)
    torch.nn.functional.dropout = dropout
    try:
        with torch.no_grad():
            torch.randn = randn      # forward's own draws only
            yt = model(*args)
    finally:
        torch.nn.functional.dropout, torch.randn = real_dropout, real_randn
    want = graph_eval.evaluate(spec, {k: graph_eval.Tensor(v.shape, [float(x) for x in v.reshape(-1)])
                                      for k, v in ins.items()})
    if list(yt.shape) != list(want.shape):
        return False, "torch gives shape %s, the graph %s" % (list(yt.shape), list(want.shape))
    y = yt.numpy().reshape(-1)
    err = max((abs(a - b) / (1.0 + abs(b)) for a, b in zip(y, want.data)), default=0.0)
    return err <= TOL, "%d elements, max err %.2g" % (len(y), err)


def main():
    if len(sys.argv) < 2:
        sys.exit(__doc__)
    root = os.path.abspath(sys.argv[1])
    only = set(int(x) for x in sys.argv[2:])
    bases = [b for b in sorted(os.listdir(os.path.join(root, "problems", "level3")))
             if not only or int(b.split("_")[0]) in only]
    torch.set_default_dtype(torch.float64)
    bad = 0
    for b in bases:
        try:
            ok, rep = run(root, b)
        except Exception as e:  # noqa
            ok, rep = False, "%s: %s" % (type(e).__name__, e)
        bad += not ok
        print("%s %s %s" % ("ok" if ok else "not ok", b, rep), flush=True)
    print("torch-checked %d problems, %d mismatching" % (len(bases), bad))
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
