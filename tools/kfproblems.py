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


LEVELS = (1, 2, 3)


def ensure_einops():
    """Level 3's Mamba2 (48, 49) imports einops; where it is missing, the
    small shim of problems/gen/level3/torch_check.py (rearrange only) stands in."""
    import sys
    if "einops" in sys.modules:
        return
    try:
        import einops  # noqa: F401
    except ImportError:
        sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "problems", "gen", "level3"))
        from torch_check import einops_shim
        sys.modules["einops"] = einops_shim()


def check_level(ap, level):
    """argparse error for a level the tools do not know yet."""
    if level not in LEVELS:
        ap.error("--level %d: only levels %s are supported" % (level, ", ".join(map(str, LEVELS))))


def kforge_id(level, d):
    """The ID kforge takes for problem directory d: a bare name is level 1."""
    base = os.path.basename(d)
    return base if level == 1 else "level%d/%s" % (level, base)


def mask_nodes(spec):
    """The graph's dropout nodes in order: [(mask input name, p)]."""
    return [(n["in"][1], float(n["p"])) for n in spec.get("attrs", {}).get("graph", [])
            if n.get("op") == "dropout"]


def copy_params(model, spec, tensors):
    """Copies the spec's parameters into the module; returns None or an error.
    With torch_param names (level 2) by state_dict key, module parameters the
    spec lacks set to NaN; without (level 1) in order of model.parameters()."""
    import torch
    params = [t for t in spec["inputs"] if t["role"] == "param"]
    # level 3: a plain tensor attribute forward reads (self.h0 = torch.randn(...))
    for t in [t for t in params if "torch_attr" in t]:
        cur = getattr(model, t["torch_attr"], None)
        if not isinstance(cur, torch.Tensor):
            return "param %s: the module has no tensor attribute %s" % (t["name"], t["torch_attr"])
        src = tensors[t["name"]]
        setattr(model, t["torch_attr"], src.reshape(cur.shape).to(cur.dtype).clone())
    params = [t for t in params if "torch_attr" not in t]
    if not params:
        return None
    named = dict(model.named_parameters())
    if all("torch_param" in t for t in params):
        sd = model.state_dict()
        # A parameter the spec lacks must be one forward never reads (26's
        # bias): NaN, so that a read shows in the output.
        with torch.no_grad():
            for name in sorted(set(named) - set(t["torch_param"] for t in params)):
                named[name].fill_(float("nan"))
        pairs = []
        for t in params:
            if t["torch_param"] not in sd:
                return "param %s: no %s in the module's state_dict" % (t["name"], t["torch_param"])
            pairs.append((t, sd[t["torch_param"]]))
    else:
        mparams = list(model.parameters())
        if len(params) != len(mparams):
            return "%d spec params, %d module params" % (len(params), len(mparams))
        pairs = list(zip(params, mparams))
    with torch.no_grad():
        for t, mp in pairs:
            src = tensors[t["name"]]
            if tuple(src.shape) != tuple(mp.shape):
                # only size-1 dims may differ: 0-dim parameters are shape [1] in the spec
                if [x for x in src.shape if x != 1] != [x for x in mp.shape if x != 1]:
                    return "param %s shape %s, module %s" % (t["name"], tuple(src.shape), tuple(mp.shape))
                src = src.reshape(mp.shape)
            mp.copy_(src)
    return None


class MaskedDropout:
    """Within `with`, torch.nn.functional.dropout (what nn.Dropout calls)
    multiplies by the problem's mask inputs, in the graph's order, as the graph
    defines it: x * mask / (1 - p). Raises if the module's dropouts and the
    graph's disagree (count, p or shape). Dropout with p = 0 is the identity
    and has no mask (level 3's models)."""

    def __init__(self, spec, tensors):
        self.masks = [(tensors[name], p) for name, p in mask_nodes(spec)]
        self.used = 0

    def dropout(self, x, p=0.5, training=True, inplace=False):
        if not training or float(p) == 0.0:
            return x  # p = 0 is the identity: the graph has no node (level 3)
        if self.used >= len(self.masks):
            raise RuntimeError("the module calls dropout %d times, the graph has %d"
                               % (self.used + 1, len(self.masks)))
        mask, gp = self.masks[self.used]
        self.used += 1
        if abs(float(p) - gp) > 1e-12:
            raise RuntimeError("dropout p %g, the graph's %g" % (p, gp))
        if tuple(mask.shape) != tuple(x.shape):
            raise RuntimeError("dropout on shape %s, mask %s" % (tuple(x.shape), tuple(mask.shape)))
        return x * mask.to(device=x.device, dtype=x.dtype) / (1.0 - gp)

    def __enter__(self):
        import torch.nn.functional as F
        self.real = F.dropout
        F.dropout = self.dropout
        return self

    def __exit__(self, *exc):
        import torch.nn.functional as F
        F.dropout = self.real
        if exc[0] is None and self.used != len(self.masks):
            raise RuntimeError("the module called dropout %d times, the graph has %d"
                               % (self.used, len(self.masks)))
        return False


def _has(obj, name):
    """hasattr for torch.backends, whose modules may raise other than
    AttributeError (torch 1.13's cuda.matmul: AssertionError)."""
    try:
        getattr(obj, name)
        return True
    except Exception:  # noqa: BLE001
        return False


class TF32RestoreError(RuntimeError):
    """What follows in this process would run with TF32 off."""


class NoTF32:
    """TF32 off for cuBLAS matmuls and cuDNN within `with`, the previous
    settings restored after: torch.backends.cuda.matmul.allow_tf32 and
    torch.backends.cudnn.allow_tf32 = False, through torch >= 2.9's
    fp32_precision = "ieee" where it exists (the legacy flags are deprecated
    there, and a process that mixes the two APIs gets RuntimeErrors)."""

    def __enter__(self):
        import torch
        b = torch.backends
        if _has(b.cuda.matmul, "fp32_precision") and _has(b.cudnn, "conv"):
            self.objs = [b.cuda.matmul, b.cudnn.conv] + ([b.cudnn.rnn] if _has(b.cudnn, "rnn") else [])
            self.saved = [o.fp32_precision for o in self.objs]
            for o in self.objs:
                o.fp32_precision = "ieee"
        else:
            self.objs = None
            self.saved = (b.cuda.matmul.allow_tf32, b.cudnn.allow_tf32)
            b.cuda.matmul.allow_tf32 = False
            b.cudnn.allow_tf32 = False
        return self

    def __exit__(self, *exc):
        import torch
        b = torch.backends
        try:
            if self.objs is not None:
                for o, v in zip(self.objs, self.saved):
                    o.fp32_precision = v
                now = [o.fp32_precision for o in self.objs]
            else:
                b.cuda.matmul.allow_tf32, b.cudnn.allow_tf32 = self.saved
                now = (b.cuda.matmul.allow_tf32, b.cudnn.allow_tf32)
        except Exception as e:  # noqa: BLE001
            raise TF32RestoreError("TF32 settings not restored: %s: %s" % (type(e).__name__, e))
        if list(now) != list(self.saved):
            raise TF32RestoreError("TF32 settings not restored: %s, wanted %s" % (now, self.saved))
        return False
