#!/usr/bin/env python3
"""Structural checks of problems/level3 (problems/gen/level3/gen.py's output):
every spec is family graph with fp32 tolerance; every node's op is one of
docs/graph-ir.md's with the attributes it needs; operands are spec tensors
or earlier nodes' outputs; shapes are integer lists; the last node writes
the only output; every spec tensor is read; parameter names are state_dict
keys (torch_param, dots as underscores) or plain attributes (torch_attr).

usage: check_level3.py ROOT   (prints "checked N specs" or what is wrong)"""
import glob
import json
import os
import sys

ATTRS = {
    "linear": [], "matmul": [], "act": ["fn"], "binary": ["fn"], "reshape": [], "permute": ["perm"],
    "concat": ["dim"], "conv": ["dims", "kernel", "stride", "padding", "dilation", "groups", "transposed",
                               "output_padding"],
    "pool": ["kind", "dims", "kernel", "stride", "padding", "ceil_mode"], "adaptive_avg_pool": ["output_size"],
    "reduce": ["fn", "dims", "keepdim"], "softmax": ["dim", "log"], "norm": ["kind", "eps"],
    "dropout": ["p"], "expand": [], "slice": ["dim", "start", "stop", "step"], "pad": ["before", "after"], "cumsum": ["dim"],
    "masked_fill": ["value"], "const": ["values"], "take": ["index"], "roll": ["shifts", "dims"],
    "compare": ["fn", "const"],
    "rnn": ["kind", "layers", "hidden", "bidirectional", "batch_first", "bias", "h0", "c0", "output"],
}


def check(spec):
    bad = []
    if spec["family"] != "graph" or spec["tolerance"] != "fp32" or spec["level"] != 3:
        bad.append("family/tolerance/level")
    names = {t["name"] for t in spec["inputs"]}
    read = set()
    for t in spec["inputs"]:
        if not all(isinstance(d, int) and d > 0 for d in t["shape"]):
            bad.append("%s: shape %s" % (t["name"], t["shape"]))
        if t["role"] == "param":
            tp, ta = t.get("torch_param"), t.get("torch_attr")
            if bool(tp) == bool(ta):
                bad.append("%s: torch_param or torch_attr" % t["name"])
            key = (tp or ta).replace(".", "_")
            if t["name"] not in (key, key + "_attr"):
                bad.append("%s: name is not %s" % (t["name"], key))
    g = spec["attrs"]["graph"]
    for n in g:
        op = n["op"]
        if op not in ATTRS:
            bad.append("%s: op %s" % (n["out"], op))
            continue
        need = ATTRS[op] + (["where", "diagonal"] if op == "masked_fill" and len(n["in"]) == 1 else [])
        for a in need:
            if a not in n:
                bad.append("%s: %s without %s" % (n["out"], op, a))
        for t in n["in"]:
            if t not in names:
                bad.append("%s reads %s before it exists" % (n["out"], t))
            read.add(t)
        if not all(isinstance(d, int) and d > 0 for d in n["shape"]):
            bad.append("%s: shape %s" % (n["out"], n["shape"]))
        if n["out"] in names:
            bad.append("%s written twice" % n["out"])
        names.add(n["out"])
    outs = spec["outputs"]
    if len(outs) != 1 or not g or g[-1]["out"] != outs[0]["name"] or g[-1]["shape"] != outs[0]["shape"]:
        bad.append("the last node does not write the output")
    unread = [t["name"] for t in spec["inputs"] if t["name"] not in read and t["role"] == "param"]
    if unread:
        bad.append("parameters never read: %s" % unread)
    return bad


def main():
    root = sys.argv[1]
    specs = sorted(glob.glob(os.path.join(root, "problems", "level3", "*", "spec.json")))
    fails = 0
    for f in specs:
        spec = json.load(open(f))
        for b in check(spec):
            print("%s: %s" % (spec["id"], b))
            fails += 1
    print("checked %d specs, %d problems" % (len(specs), fails))
    return 1 if fails or not specs else 0


if __name__ == "__main__":
    sys.exit(main())
