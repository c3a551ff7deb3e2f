"""Shared helpers of tools/torch_crosscheck.py and tools/torch_baseline.py:
finding problems, loading reference.py, building the module."""
import glob
import inspect
import json
import os
import re


def parse_filter(text):
    """'19,23,40-45,Softmax' -> predicate on (number, dirname)."""
    if not text:
        return lambda num, name: True
    nums, words = set(), []
    for part in text.split(","):
        part = part.strip()
        m = re.fullmatch(r"(\d+)-(\d+)", part)
        if m:
            nums.update(range(int(m.group(1)), int(m.group(2)) + 1))
        elif part.isdigit():
            nums.add(int(part))
        elif part:
            words.append(part.lower())
    return lambda num, name: num in nums or any(w in name.lower() for w in words)


def problem_dirs(root, level=1, filt=None):
    keep = parse_filter(filt)
    out = []
    for d in sorted(glob.glob(os.path.join(root, "problems", "level%d" % level, "[0-9]*"))):
        base = os.path.basename(d)
        num = int(base.split("_", 1)[0])
        if os.path.exists(os.path.join(d, "spec.json")) and keep(num, base):
            out.append((num, d))
    return sorted(out)


def load_spec(d):
    with open(os.path.join(d, "spec.json")) as f:
        return json.load(f)


def load_reference(d):
    """Executes reference.py; returns its namespace (Model, get_inputs, ...)."""
    path = os.path.join(d, "reference.py")
    with open(path) as f:
        src = f.read()
    ns = {"__name__": "kforge_reference", "__file__": path}
    exec(compile(src, path, "exec"), ns)
    return ns


def build_model(ns, device):
    import torch
    init = ns["get_init_inputs"]() if "get_init_inputs" in ns else []
    model = ns["Model"](*init)
    return model.to(device)


def forward_arg_names(model):
    sig = inspect.signature(model.forward)
    return [p.name for p in sig.parameters.values()
            if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD) and p.default is p.empty]
