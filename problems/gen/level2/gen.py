#!/usr/bin/env python3
"""Generates problems/level2/ (KernelBench level 2, 100 problems) from the
KernelBench module files: spec.json (family "graph", attrs.graph the operator
graph of docs/graph-ir.md), reference.py (KernelBench's text, verbatim) and
reference.cu (plain double-precision kernels generated from the graph).

    python3 problems/gen/level2/gen.py [--root .] [--out DIR] [--kb DIR | --committed] [--check]
        [--small DIR [--small-channels IN,OUT]] [NUM...]

--kb: KernelBench's level2 directory of module files (an input, not part of
the tree); without it (or with --committed) the committed reference.py files
are the source. --out writes DIR/problems/level2/ instead of the root's.
--check regenerates into memory and fails when a committed file differs. --small DIR writes every problem at
small sizes (same structure: groups divide channels, output sizes follow) to
DIR/problems/level2/ for host emulation, reference.py's size lines rewritten;
--small-channels IN,OUT sets their channel counts (default 3,6: under the 8
output channels a group the tensor-core conv emitters take).
Python 3.11 stdlib only."""
import argparse
import ast
import glob
import json
import math
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)

import parse as P      # noqa: E402
import refcu           # noqa: E402
from shapes import prod, small_convs, taps_conv, taps_convt    # noqa: E402

LEVEL = 2
DSIZE = {"float32": 4, "bool": 1}

# Problems whose output does not depend on the inputs (with PyTorch's
# initialisation: norm weight 1, bias 0), or that a constant kernel passes
# under KernelBench's input distribution and the fp32 tolerance (9, 38).
DEGENERATE = {
    9: "constant in practice: with KernelBench's inputs (U[0, 1)) and initialisation each linear "
       "output is about N(0, 1/9) whatever in_features is, so (x - 2) * 1.5 is negative for all but "
       "~1e-9 of the elements and ReLU gives 0 (a kernel writing zeros passes; other input "
       "distributions, such as large magnitudes, do reach the positive side)",
    23: "the mean over all channels and positions of a GroupNorm output with weight 1 and bias 0 is "
        "the mean of the group means of normalized values: 0 for every sample",
    38: "below the tolerance: the softmax runs over 131072 positions of values clamped to [0, 1], so "
        "every output lies in [1/(131072 e), e/131072], under 2.1e-5, below the fp32 atol (1e-4): a "
        "kernel writing zeros passes",
    80: "max over dim 1 with keepdim leaves one value per row; subtracting its mean over that "
        "size-1 dim gives 0, and GELU(0) = 0",
    83: "min(x, 0) then clamp to [0, 1] pins every value to 0; dropout keeps 0",
}

# Inputs that cannot influence the output (docs/engine.md, "Sensitivity
# trials"): a bias added right before a training-mode BatchNorm (or an
# InstanceNorm) is subtracted again with the batch (instance) mean. Checked
# with the CPU oracle (`kforge problems sensitivity`, t0367); the verifier's
# sensitivity trials report these tensors as without influence.
_BN = "added per feature right before the training-mode BatchNorm, which subtracts it again with the batch mean"
NO_INFLUENCE = {
    17: {"conv_bias": "added per channel right before the InstanceNorm, which subtracts it again with "
                      "each instance's mean"},
    33: {"gemm_bias": _BN},
    39: {"gemm_bias": _BN},
    41: {"gemm_bias": _BN},
    73: {"conv_bias": _BN.replace("feature", "channel")},
    84: {"gemm_bias": _BN},
    97: {"matmul_bias": _BN},
}

# KernelBench quirks worth a note beyond what the parser states.
QUIRKS = {
    11: "height and width are assigned twice at module level (2048, then 32): the last assignment (32) "
        "holds. The `groups` argument is unused (the conv has groups 1).",
    18: "After the sum over dim 1 (keepdim) every later op (max, mean, two logsumexp) runs over a "
        "dim of size 1 and is the identity: out is the row sum of the linear layer.",
    19: "The `groups` argument is unused (the conv has groups 1).",
    22: "x + x doubles the scaled product before the clamp.",
    26: "The bias parameter is created but never used by forward.",
    28: "Named BMM, but it is a Linear layer; the instance norm runs on x.unsqueeze(1).unsqueeze(1), "
        "one (n, c) per row over the features.",
    36: "bias (1, 1, 1) broadcasts over the (N, 1, 1, W) result.",
    48: "scaling_factor (2) is passed but unused: self.scaling_factor is a randn parameter.",
    51: "The residual adds the (batch, 1) result to the input x itself (in_features wide); the "
        "logsumexp runs over a dim of size 1.",
    66: "Dropout in training mode: its mask is the input dropout_mask (docs/graph-ir.md).",
    72: "bias_shape is passed but unused.",
    75: "The (batch, 1) min broadcast against bias (1, out_features, 1, 1) gives a "
        "(1, out_features, batch, 1) output.",
    93: "Nearly degenerate: with KernelBench's initialisation the conv-transpose output plus 0.5 is "
        "about 0.5 +- 0.1, so min(x, 0) is 0 for all but a tiny fraction (~1e-5) of the elements; "
        "those few decide correctness.",
    96: "clamp_min 0 and clamp_max 1 are set in __init__ (not arguments).",
}

FLOPS_NOTE = ("flops: 2 per multiply-add of linear/conv (conv: taps on real, non-padding input "
              "elements), 1 per bias add, 1 per output element of elementwise nodes, 1 per window "
              "element read by pools (+1 per output for avg), 1 per input element of reductions, "
              "softmax and norms; min_bytes: inputs, parameters and the output, each once.")

# ---------------------------------------------------------------- small sizes

SMALL = {"batch_size": 3, "in_channels": 3, "out_channels": 6, "groups": 2, "num_groups": 2,
         "in_features": 20, "input_size": 20, "out_features": 320, "hidden_size": 320,
         "output_size": 320, "depth": 4, "D": 4, "height": 7, "H": 7, "width": 8, "W": 8}
SPATIAL = ("depth", "D", "height", "H", "width", "W")
SMALL_FIX = {   # a value may be a function of the small out_channels
    3: {"width": lambda oc: oc // 2},   # LayerNorm(out_channels) on the last dim: output width 2W
    34: {"W": lambda oc: oc // 2},      # the same: (W - 1) * 2 - 2 + 4 = 2W
    27: {"out_channels": 8},   # GroupNorm's default 4 groups
    45: {"hidden_size": 40, "output_size": 300},
}


def small_sizes(num, env_names, channels=None):
    small = dict(SMALL)
    if channels:   # --small-channels: enough for the tensor-core conv emitters
        small["in_channels"], small["out_channels"] = channels
    s = {k: v for k, v in small.items() if k in env_names}
    s.update({k: v(small["out_channels"]) if callable(v) else v for k, v in SMALL_FIX.get(num, {}).items()})
    return s


# ---------------------------------------------------------------- sources

def kb_files(root, kb, level=LEVEL):
    """{number: (file name, text)} from the KernelBench dir or the committed copies
    (problems/gen/level3/gen.py uses it with level 3)."""
    out = {}
    if kb:
        for f in glob.glob(os.path.join(kb, "*.py")):
            b = os.path.basename(f)
            if b.split("_")[0].isdigit():
                out[int(b.split("_")[0])] = (b, open(f).read())
        return out
    for d in glob.glob(os.path.join(root, "problems", "level%d" % level, "*")):
        sp, rp = os.path.join(d, "spec.json"), os.path.join(d, "reference.py")
        if os.path.exists(sp) and os.path.exists(rp):
            spec = json.load(open(sp))
            out[spec["number"]] = (spec["kernelbench_file"], open(rp).read())
    return out


# ---------------------------------------------------------------- spec

def jsonval(v):
    if isinstance(v, tuple):
        return [jsonval(x) for x in v]
    return v


def operation(m, name):
    doc = " ".join(m.docstring.split())
    if doc:
        return doc
    return name.replace("_", " ")


def node_flops(n, shape_of):
    op, out = n["op"], prod(n["shape"])
    ins = [shape_of[t] for t in n["in"]]
    if op == "linear":
        K = ins[0][-1]
        return 2 * out * K + (out if len(n["in"]) > 2 else 0)
    if op == "conv":
        xs, os_ = ins[0], n["shape"]
        g = n["groups"]
        sp = zip(xs[2:], os_[2:], n["kernel"], n["stride"], n["padding"], n["dilation"])
        if n["transposed"]:
            taps = prod(taps_convt(a, b, k, s, p, d) for a, b, k, s, p, d in sp)
            macs = xs[0] * xs[1] * (os_[1] // g) * taps
        else:
            taps = prod(taps_conv(a, b, k, s, p, d) for a, b, k, s, p, d in sp)
            macs = xs[0] * os_[1] * (xs[1] // g) * taps
        return 2 * macs + (out if len(n["in"]) > 2 else 0)
    if op == "pool":
        xs, os_ = ins[0], n["shape"]
        dil = n.get("dilation", [1] * n["dims"])
        taps = prod(taps_conv(a, b, k, s, p, d) for a, b, k, s, p, d in
                    zip(xs[2:], os_[2:], n["kernel"], n["stride"], n["padding"], dil))
        return xs[0] * xs[1] * taps + (out if n["kind"] == "avg" else 0)
    if op == "adaptive_avg_pool":
        return prod(ins[0]) + out
    if op in ("act", "binary", "dropout"):
        return out
    if op in ("reduce", "softmax", "norm"):
        return prod(ins[0])
    return 0


def affine_step(u, run, shape_of, N):
    """Is node u a step t -> a t + c of the running tensor run (neg,
    identity; add, sub, mul, div by a constant, or with N, by a one-element
    or an N-feature tensor)? The folds' steps (builtin_graph_lsum.c's
    gr_affine_step)."""
    others = [t for t in u["in"] if t != run]
    if u["op"] == "act":
        return u.get("fn") in ("neg", "identity") and u["in"] == [run]
    return (u["op"] == "binary" and u.get("fn") in ("add", "sub", "mul", "div") and
            u["in"].count(run) == 1 and len(others) <= (1 if N else 0) and
            (bool(others) or "const" in u) and
            not (u["fn"] == "div" and (u["in"][0] != run or u.get("swap"))) and
            all(prod(shape_of[t]) in (1, N) and shape_of[t][-1] in (1, N) for t in others))


def fold_flops(nodes, shape_of, flops):
    """FLOPs with every linear whose result reaches a sum or mean over its
    features only through affine steps (add, sub, mul, div by a constant,
    a one-element or a per-feature tensor; neg, identity) counted as the
    matrix-vector product it folds to: the weight's column sums (N K) and
    a dot product per row (2 M K). sum_j (a_j (x . W_j) + c_j) =
    x . (sum_j a_j W_j) + sum_j c_j; collector/builtin_graph_lsum.c does
    it. Likewise a conv summed over all its positions through steps by
    constants (builtin_graph_csum.c). (FLOPs, why), or None where nothing
    folds."""
    users = {}
    for n in nodes:
        for t in n["in"]:
            users.setdefault(t, []).append(n)
    saved, why = 0, []
    for n in nodes:
        if n["op"] != "linear":
            continue
        M, N = prod(n["shape"][:-1]), n["shape"][-1]
        K = shape_of[n["in"][0]][-1]
        run, chain = n["out"], [n]
        while len(users.get(run, [])) == 1:
            u = users[run][0]
            if affine_step(u, run, shape_of, N):
                pass
            elif (u["op"] == "reduce" and u.get("fn") in ("sum", "mean") and
                  [d % len(n["shape"]) for d in u["dims"]] == [len(n["shape"]) - 1]):
                chain.append(u)
                saved += sum(node_flops(c, shape_of) for c in chain) - (N * K + 2 * M * K)
                why.append("a linear summed over its features folds to a matrix-vector product "
                           "(the weight's column sums, then a dot product per row)")
                break
            else:
                break
            chain.append(u)
            run = u["out"]
    for i, n in enumerate(nodes):
        # a conv summed over all its positions, through steps by constants
        # (collector/builtin_graph_csum.c): x's sums per channel and class of
        # positions (N CI I), then per output channel each tap's weight times
        # the sums it reaches (N CO CIg T 2)
        if n["op"] != "conv":
            continue
        x, run, chain = shape_of[n["in"][0]], n["out"], [n]
        while len(users.get(run, [])) == 1:
            u = users[run][0]
            if affine_step(u, run, shape_of, None):
                chain.append(u)
                run = u["out"]
                continue
            if (u["op"] == "reduce" and u.get("fn") in ("sum", "mean") and u["in"] == [run] and
                    sorted(d % len(x) for d in u["dims"]) == list(range(2, len(x)))):
                chain.append(u)
                N, CI, CO = x[0], x[1], n["shape"][1]
                saved += (sum(node_flops(c, shape_of) for c in chain) -
                          (N * CI * prod(x[2:]) + N * CO * CI // n.get("groups", 1) * prod(n["kernel"]) * 2))
                why.append("a conv summed over all its positions folds to x's sums per channel and "
                           "class of positions times the weights of the taps that reach them")
            break
    return (flops - saved, "; ".join(dict.fromkeys(why))) if saved > 0 else None


def param_init(m, tname):
    """(dist, torch_param, init text) of a parameter tensor."""
    if tname in m.params:
        p = m.params[tname]
        return p.dist, tname, p.init
    attr, which = tname.rsplit("_", 1)
    L = m.layers[attr]
    cls = L.cls
    tp = "%s.%s" % (attr, which)
    if cls == "Linear" or cls.startswith("Conv"):
        if cls == "Linear":
            fan = L.a("in_features")
        else:
            nd = int(cls[-2])
            k = prod(P.tup(L.a("kernel_size"), nd))
            ch = L.a("out_channels") if "Transpose" in cls else L.a("in_channels")
            fan = ch // L.a("groups") * k
        b = 1.0 / math.sqrt(fan)
        how = ("kaiming_uniform(a=sqrt(5))" if which == "weight" else "bias init") + \
            ": U(-1/sqrt(fan_in), 1/sqrt(fan_in)), fan_in = %d" % fan
        return {"kind": "uniform", "low": -b, "high": b}, tp, how
    v = 1.0 if which == "weight" else 0.0
    return {"kind": "constant", "value": v}, tp, "%s %s: constant %g" % (cls, which, v)


def build(num, file, text, small=None):
    m = P.parse(text, small)
    name = file[len(str(num)) + 1:-3]
    env = m.env
    sizes, scalars = {}, {}
    for st, names in m.stmts:
        for n in names:
            v = env[n]
            roles = m.roles.get(n, set())
            if "size" in roles and isinstance(v, int) and not isinstance(v, bool) and v > 0:
                sizes[n] = v
            elif "scalar" in roles and isinstance(v, (int, float)) and not isinstance(v, bool):
                scalars[n] = float(v)
    out_shape, out_names = m.tensors["out"]

    def dimname(d, nm):
        if nm and not nm.startswith("~") and sizes.get(nm) == d:
            return nm
        if d == 1:
            return 1
        if nm and nm.startswith("~"):
            base = nm[1:]
            if sizes.get(base) == d:
                return base
            cand = "out_" + base
        else:
            cand = None
        if cand is None:
            return d
        k = 2
        while cand in sizes and sizes[cand] != d:
            cand = "out_%s%d" % (nm[1:], k)
            k += 1
        sizes[cand] = d
        return cand

    def named(shape, names):
        return [dimname(d, nm) for d, nm in zip(shape, names)]

    inputs = []
    for nm, shape, names, dist in m.inputs:
        inputs.append({"name": nm, "role": "input", "dtype": "float32", "shape": named(shape, names),
                       "dist": dist})
    for nm, shape, names, p in m.masks:
        inputs.append({"name": nm, "role": "input", "dtype": "bool", "shape": named(shape, names),
                       "dist": {"kind": "bernoulli", "p": 1.0 - p},
                       "init": "dropout mask: 1 (kept) with probability 1 - p = %r" % (1.0 - p)})
    order = []
    for attr in m.order:
        if attr in m.layers:
            order += [t for t in ("%s_weight" % attr, "%s_bias" % attr) if t in m.used_params]
        elif attr in m.params and attr in m.used_params:
            order.append(attr)
    unused = [a for a in m.order if a in m.params and a not in m.used_params]
    for t in order:
        shape, names = m.tensors[t]
        dist, tp, how = param_init(m, t)
        inputs.append({"name": t, "role": "param", "dtype": "float32", "shape": named(shape, names),
                       "dist": dist, "torch_param": tp, "init": how})
    outputs = [{"name": "out", "dtype": "float32", "shape": named(out_shape, out_names)}]
    shape_of = {t: s for t, (s, _) in m.tensors.items()}
    flops = sum(node_flops(n, shape_of) for n in m.nodes)
    min_bytes = sum(prod(shape_of[t["name"]]) * DSIZE[t["dtype"]] for t in inputs) + prod(out_shape) * 4
    notes = []
    kinds = {(n["op"], n.get("kind")) for n in m.nodes}
    if ("norm", "batch") in kinds:
        notes.append("KernelBench calls the module in training mode: BatchNorm normalizes with the batch "
                     "statistics (biased variance); running statistics do not affect the output.")
    if any(n["op"] == "dropout" for n in m.nodes):
        notes.append("Dropout in training mode is made deterministic by its mask input (bool, 1 with "
                     "probability 1 - p): out = x * mask / (1 - p).")
    if any(p.init.startswith("torch.tensor") and p.attr in m.used_params for p in m.params.values()):
        notes.append("nn.Parameter(torch.tensor(v)) is 0-dim in PyTorch; here it has shape [1] "
                     "(it broadcasts the same way).")
    if unused:
        notes.append("Unused parameter%s %s: not an input." % ("s" if len(unused) > 1 else "", ", ".join(unused)))
    notes += m.notes
    if num in QUIRKS:
        notes.append(QUIRKS[num])
    if any(n["op"] == "conv" for n in m.nodes):
        notes.append("PyTorch may run convolutions in TF32 (torch.backends.cudnn.allow_tf32 defaults "
                     "to True); cross-check with it off.")
    notes.append(FLOPS_NOTE)
    spec = {
        "id": "level%d/%03d_%s" % (LEVEL, num, name), "level": LEVEL, "number": num, "name": name,
        "kernelbench_file": file, "family": "graph", "operation": operation(m, name),
        "sizes": sizes, "scalars": scalars,
        "init_args": {k: jsonval(v) for k, v in m.init_args.items()},
        "inputs": inputs, "outputs": outputs, "tolerance": "fp32", "flops": flops,
        "min_bytes": min_bytes, "attrs": {"graph": m.nodes},
    }
    ff = fold_flops(m.nodes, shape_of, flops)
    if ff is not None:   # beside flops and min_bytes
        attrs = spec.pop("attrs")
        spec["floor_flops"] = ff[0]
        spec["floor_flops_why"] = ff[1] + ": the speed-of-light floor counts that"
        spec["attrs"] = attrs
    if num in DEGENERATE:
        spec["degenerate"] = DEGENERATE[num]
    if num in NO_INFLUENCE:
        names = {t["name"] for t in spec["inputs"]}
        if not set(NO_INFLUENCE[num]) <= names:
            raise ValueError("NO_INFLUENCE %d names %s, not inputs" % (num, sorted(set(NO_INFLUENCE[num]) - names)))
        spec["no_influence"] = NO_INFLUENCE[num]
    spec["notes"] = " ".join(notes)
    header = "// Generated by problems/gen/level2/gen.py (make problems): do not edit.\n"
    header += "// Reference for %s, from the operator graph\n" % spec["id"]
    header += "// in spec.json (docs/graph-ir.md):\n"
    for n in m.nodes:
        extra = {k: v for k, v in n.items() if k not in ("out", "op", "in", "shape")}
        ex = " ".join("%s=%s" % (k, json.dumps(v, separators=(",", ":"))) for k, v in extra.items())
        header += "//   %s = %s(%s)%s -> %s\n" % (n["out"], n["op"], ", ".join(n["in"]), " " + ex if ex else "",
                                                 "x".join(map(str, n["shape"])))
    header += ("// Plain kernels computing in double: one thread per element; reductions, softmax,\n"
               "// norm statistics and adaptive pools one block per output value with a fixed-order\n"
               "// tree. Intermediates in double scratch buffers (reused once dead); a reshape is a\n"
               "// view of the same buffer. The last node writes the float output.\n")
    cu, fl = refcu.generate(spec, m.nodes, header)
    if fl:
        spec["notes"] += (" reference.cu keeps %s in float scratch (the double versions would pass the "
                          "engine's 8 GiB scratch limit)." % ", ".join(fl))
    return spec, cu, m


def small_reference_py(text, m):
    """reference.py with its literal module-level assignments at m's values."""
    lines = text.split("\n")
    for st, names in reversed(m.stmts):
        if any(isinstance(n, ast.Name) for n in ast.walk(st.value)):
            continue          # derived (bias_shape = (out_channels, 1, 1)): follows
        full = ast.literal_eval(st.value)
        unpack = len(st.targets) == 1 and isinstance(st.targets[0], ast.Tuple)
        fulls = list(full) if unpack else [full] * len(names)
        vals = [m.env[n] for n in names]
        if vals == fulls:
            continue
        if unpack:
            new = ["%s = %r" % (", ".join(names), tuple(vals))]
        elif len(set(map(repr, vals))) == 1:
            new = ["%s = %r" % (" = ".join(names), vals[0])]
        else:
            new = ["%s = %r" % (n, v) for n, v in zip(names, vals)]
        lines[st.lineno - 1:st.end_lineno] = new
    return "\n".join(lines)


def build_small(num, file, text, channels=None):
    env_names = set()
    for st in ast.parse(text).body:
        if isinstance(st, ast.Assign):
            for t in st.targets:
                env_names |= {n.id for n in ast.walk(t) if isinstance(n, ast.Name)}
    s = small_sizes(num, env_names, channels)
    last = None
    for bump in range(12):
        t = dict(s)
        for k in SPATIAL:
            if k in t and k not in SMALL_FIX.get(num, {}):
                t[k] += bump
        try:
            spec, cu, m = build(num, file, text, t)
        except (P.ParseError, refcu.CodegenError) as e:
            last = e
            continue
        # constant-initialised parameters drawn around their value (as the
        # engine's extra draws do), so the checks see whether a kernel uses them
        for x in spec["inputs"]:
            if x["role"] == "param" and x["dist"]["kind"] == "constant":
                v = x["dist"]["value"]
                x["dist"] = {"kind": "uniform", "low": v - 0.5, "high": v + 0.5}
        return spec, cu, m, small_reference_py(text, m)
    raise P.ParseError("%d: no small sizes work: %s" % (num, last))


def write(path, text, check):
    if check:
        try:
            cur = open(path).read()
        except OSError:
            cur = None
        if cur != text:
            print("stale: " + path, file=sys.stderr)
            return 1
        return 0
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path + ".tmp", "w") as f:
        f.write(text)
    os.replace(path + ".tmp", path)
    return 0


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--root", default=os.path.normpath(os.path.join(HERE, "..", "..", "..")))
    ap.add_argument("--out", default=None, help="write DIR/problems/level2/ (default: the root's)")
    ap.add_argument("--kb", default=None, help="KernelBench's level2 directory (default: the committed files)")
    ap.add_argument("--committed", action="store_true", help="read the committed reference.py files")
    ap.add_argument("--check", action="store_true")
    ap.add_argument("--small", default=None)
    ap.add_argument("--small-channels", default=None,
                    help="IN,OUT: in_channels and out_channels at small sizes (default 3,6)")
    ap.add_argument("nums", nargs="*", type=int)
    a = ap.parse_args()
    chans = None
    if a.small_channels:
        try:
            chans = tuple(int(v) for v in a.small_channels.split(","))
        except ValueError:
            chans = ()
        if len(chans) != 2 or not all(1 <= v <= 64 for v in chans):
            print("--small-channels: IN,OUT, each 1..64", file=sys.stderr)
            return 2
    if a.small:
        small_convs()
    kb = None if a.committed else a.kb
    files = kb_files(a.root, kb)
    if not files:
        print("no KernelBench level-2 files (--kb DIR) and no committed problems", file=sys.stderr)
        return 1
    if not a.nums and len(files) != 100:
        print("expected 100 level-2 files, found %d" % len(files), file=sys.stderr)
        return 1
    bad = stale = 0
    for num in sorted(files):
        if a.nums and num not in a.nums:
            continue
        file, text = files[num]
        try:
            if a.small:
                spec, cu, m, py = build_small(num, file, text, chans)
                root = a.small
            else:
                spec, cu, m = build(num, file, text)
                py, root = text, a.root if a.check else a.out or a.root
        except (P.ParseError, refcu.CodegenError) as e:
            print("%s: %s" % (file, e), file=sys.stderr)
            bad += 1
            continue
        d = os.path.join(root, "problems", "level2", spec["id"].split("/")[1])
        files_out = {"spec.json": json.dumps(spec, indent=2) + "\n", "reference.py": py, "reference.cu": cu}
        for nm, t in files_out.items():
            stale += write(os.path.join(d, nm), t, a.check and not a.small)
    done = sum(1 for n in files if not a.nums or n in a.nums) - bad
    if not a.check:
        print("wrote %d problems%s" % (done, " (small) under " + a.small if a.small else ""))
    return 1 if bad or stale else 0


if __name__ == "__main__":
    sys.exit(main())
