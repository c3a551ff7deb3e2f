#!/usr/bin/env python3
"""Checks problem specs (docs/formats.md) without kforge's loader: every shape
resolves to positive sizes, min_bytes equals the tensors' bytes, flops > 0,
distributions are well formed, the launch block of reference.cu names known
kernels and tensors, reference.py defines the module API, and for the matmul,
conv and pool families the shapes agree with the spec's attrs (PyTorch's
output-size formulas, weight shapes, default-init bounds).

    python3 problems/gen/level1/check_specs.py [--families matmul,conv,pool] [DIR...]

Prints one line per problem with an error and exits 1 if there was any."""
import argparse, ast, glob, json, math, os, re, sys

DTYPES = {"float32": 4, "float16": 2, "bfloat16": 2, "int64": 8, "int32": 4, "bool": 1}
DISTS = {"uniform": ("low", "high"), "normal": ("mean", "std"), "randint": ("low", "high"),
         "bernoulli": ("p",), "sign": (), "constant": ("value",)}
POSTS = {"symmetrize", "triu", "tril", "scale_by_random", "softmax_lastdim"}
REQUIRED = ["id", "level", "number", "name", "kernelbench_file", "family", "operation", "sizes",
            "inputs", "outputs", "tolerance", "flops", "min_bytes"]
SCRATCH_TYPES = {"float": 4, "double": 8, "int": 4, "unsigned": 4, "long long": 8,
                 "unsigned long long": 8, "half": 2, "char": 1, "unsigned char": 1}

class Bad(Exception):
    pass

def need(cond, msg):
    if not cond:
        raise Bad(msg)

def prod(xs):
    r = 1
    for x in xs:
        r *= x
    return r

def resolve(shape, sizes, where):
    need(isinstance(shape, list), where + ": shape is not a list")
    out = []
    for s in shape:
        if isinstance(s, str):
            need(s in sizes, "%s: unknown size %r" % (where, s))
            out.append(sizes[s])
        else:
            need(isinstance(s, int) and not isinstance(s, bool), "%s: bad dim %r" % (where, s))
            out.append(s)
        need(out[-1] > 0, "%s: dim %r is not positive" % (where, s))
    return out

def conv_out(n, k, s, p, d):
    return (n + 2 * p - d * (k - 1) - 1) // s + 1

def convt_out(n, k, s, p, d, op):
    return (n - 1) * s - 2 * p + d * (k - 1) + op + 1

def check_matmul(spec, shp):
    a = spec["attrs"]
    ins = [t for t in spec["inputs"]]
    need(len(ins) == 2 and len(spec["outputs"]) == 1, "matmul: wants inputs A, B and one output")
    A, B, C = shp[ins[0]["name"]], shp[ins[1]["name"]], shp[spec["outputs"][0]["name"]]
    if a.get("diag"):
        need(len(A) == 1 and len(B) == 2 and A[0] == B[0] and C == B, "diag: shapes disagree")
        return
    if a.get("batched"):
        need(len(A) == 3 and len(B) == 3 and A[0] == B[0] and A[2] == B[1], "bmm: shapes disagree")
        need(C == [A[0], A[1], B[2]], "bmm: output shape")
        return
    K = A[0] if a.get("trans_a") else A[-1]
    M = [A[1]] if a.get("trans_a") else A[:-1]
    need(len(B) == 2, "matmul: B must be 2-D")
    KB, N = (B[1], B[0]) if a.get("trans_b") else (B[0], B[1])
    need(K == KB, "matmul: K of A (%d) != K of B (%d)" % (K, KB))
    need(C == M + [N], "matmul: output shape %s != %s" % (C, M + [N]))
    need(a.get("mask", "none") in ("none", "triu", "tril"), "matmul: bad mask")

def check_conv(spec, shp):
    a = spec["attrs"]
    x = shp["x"]
    nd = len(x) - 2
    for k in ("kernel", "stride", "padding", "dilation", "output_padding"):
        need(isinstance(a.get(k), list) and len(a[k]) == nd, "conv: attrs.%s must have %d entries" % (k, nd))
    need(all(v > 0 for v in a["kernel"] + a["stride"] + a["dilation"]), "conv: kernel/stride/dilation must be > 0")
    g = a["groups"]
    ci = x[1]
    need(ci % g == 0, "conv: in_channels % groups")
    out = shp[spec["outputs"][0]["name"]]
    params = [t for t in spec["inputs"] if t["role"] == "param"]
    w = shp[params[0]["name"]]
    if a.get("pointwise"):
        pw = shp[params[1]["name"]]
        need(w == [ci, 1] + a["kernel"] and g == ci, "separable: depthwise weight shape")
        need(pw == [out[1], ci, 1, 1], "separable: pointwise weight shape")
        fans = [prod(a["kernel"]), ci]
        co = ci
    elif a["transposed"]:
        need(w[0] == ci and w[2:] == a["kernel"], "conv_transpose: weight shape %s" % w)
        co = w[1] * g
        fans = [w[1] * prod(a["kernel"])]
    else:
        co = w[0]
        need(w[1] == ci // g and w[2:] == a["kernel"], "conv: weight shape %s" % w)
        need(co % g == 0, "conv: out_channels % groups")
        fans = [ci // g * prod(a["kernel"])]
    for i in range(nd):
        k, s, p, d, op = (a[f][i] for f in ("kernel", "stride", "padding", "dilation", "output_padding"))
        o = convt_out(x[2 + i], k, s, p, d, op) if a["transposed"] else conv_out(x[2 + i], k, s, p, d)
        need(out[2 + i] == o, "conv: output dim %d is %d, PyTorch gives %d" % (i, out[2 + i], o))
    need(out[0] == x[0] and (a.get("pointwise") or out[1] == co), "conv: output batch/channels")
    if a["bias"]:
        need(len(params) == 2 and shp[params[1]["name"]] == [co], "conv: bias shape")
        fans.append(fans[0])
    else:
        need(len(params) == (2 if a.get("pointwise") else 1), "conv: unexpected params")
    for t, fan in zip(params, fans):
        b = 1.0 / math.sqrt(fan)
        dd = t["dist"]
        need(dd["kind"] == "uniform" and abs(dd["high"] - b) < 1e-12 and abs(dd["low"] + b) < 1e-12,
             "conv: %s not U(-1/sqrt(%d), 1/sqrt(%d))" % (t["name"], fan, fan))

def check_pool(spec, shp):
    a = spec["attrs"]
    x = shp["x"]
    nd = len(x) - 2
    out = shp[spec["outputs"][0]["name"]]
    need(a["op"] in ("max", "avg"), "pool: op")
    for i in range(nd):
        k, s, p, d = (a[f][i] for f in ("kernel", "stride", "padding", "dilation"))
        need(p <= k // 2, "pool: padding must be at most half the kernel")
        num = x[2 + i] + 2 * p - d * (k - 1) - 1
        o = (-(-num // s) if a["ceil_mode"] else num // s) + 1
        if a["ceil_mode"] and (o - 1) * s >= x[2 + i] + p:
            o -= 1
        need(out[2 + i] == o, "pool: output dim %d is %d, PyTorch gives %d" % (i, out[2 + i], o))
    need(out[:2] == x[:2], "pool: output batch/channels")

FAMILY = {"matmul": check_matmul, "conv": check_conv, "pool": check_pool}

def split_args(s):
    """Splits on top-level commas."""
    out, depth, cur = [], 0, ""
    for ch in s:
        if ch == "," and depth == 0:
            out.append(cur.strip())
            cur = ""
            continue
        depth += (ch == "(") - (ch == ")")
        cur += ch
    if cur.strip():
        out.append(cur.strip())
    return out

def check_launch(src, spec, names):
    m = re.search(r"^/\*@launch\n(.*?)^@\*/", src, re.S | re.M)
    need(m and src.count("/*@launch") == 1, "reference.cu: wants exactly one launch block")
    kernels = set(re.findall(r'extern\s+"C"\s+__global__\s+void\s+(\w+)', src))
    need(kernels, "reference.cu: no extern \"C\" __global__ kernel")
    scratch = set()
    env = dict(spec["sizes"])
    env["ceil_div"] = lambda a, b: -(-a // b)
    for st in [s.strip() for s in m.group(1).split(";") if s.strip()]:
        st = re.sub(r"//.*", "", st).strip()
        sm = re.match(r"scratch\s+(?:zeroed\s+)?([a-z ]+?)\s+(\w+)\s*\[(.*)\]$", st)
        if sm:
            need(sm.group(1) in SCRATCH_TYPES, "launch: scratch type %r" % sm.group(1))
            need(eval(sm.group(3), {}, env) > 0, "launch: scratch size")
            scratch.add(sm.group(2))
            continue
        km = re.match(r"(\w+)<<<(.*?)>>>\((.*)\)$", st, re.S)
        need(km, "launch: cannot read %r" % st)
        need(km.group(1) in kernels, "launch: unknown kernel %s" % km.group(1))
        gb = split_args(km.group(2)) if "dim3" not in km.group(2) else []
        for e in gb:
            v = eval(e, {}, env)
            need(v > 0, "launch: grid/block %r not positive" % e)
        if len(gb) >= 2:
            need(eval(gb[0], {}, env) < 2 ** 31 and eval(gb[1], {}, env) <= 1024, "launch: grid/block limits")
        for arg in split_args(km.group(3)):
            if re.fullmatch(r"\w+", arg) and not arg.isdigit():
                need(arg in names or arg in scratch or arg in spec["sizes"], "launch: unknown name %s" % arg)
            else:
                eval(arg, {}, env)

def check_dir(d, families):
    p = os.path.join(d, "spec.json")
    with open(p) as f:
        spec = json.load(f)
    if families and spec.get("family") not in families:
        return None
    for k in REQUIRED:
        need(k in spec, "missing field %s" % k)
    base = os.path.basename(os.path.normpath(d))
    need(spec["id"] == "level%d/%s" % (spec["level"], base), "id %s does not match the directory" % spec["id"])
    need(base.startswith("%03d_" % spec["number"]), "directory number")
    need(spec["kernelbench_file"].startswith("%d_" % spec["number"]) and spec["kernelbench_file"].endswith(".py"),
         "kernelbench_file")
    sizes = spec["sizes"]
    for k, v in sizes.items():
        need(re.fullmatch(r"[A-Za-z_]\w*", k), "size name %r" % k)
        need(isinstance(v, int) and 0 < v < 2 ** 40, "size %s = %r" % (k, v))
    shp, total, names = {}, 0, set()
    for t in spec["inputs"] + spec["outputs"]:
        need(t["name"] not in names, "duplicate tensor %s" % t["name"])
        names.add(t["name"])
        need(t["dtype"] in DTYPES, "%s: dtype %r" % (t["name"], t["dtype"]))
        shp[t["name"]] = resolve(t["shape"], sizes, t["name"])
        total += prod(shp[t["name"]]) * DTYPES[t["dtype"]]
    for t in spec["inputs"]:
        need(t["role"] in ("input", "param"), "%s: role" % t["name"])
        dd = t["dist"]
        need(dd.get("kind") in DISTS, "%s: dist kind" % t["name"])
        for k in DISTS[dd["kind"]]:
            need(isinstance(dd.get(k), (int, float)), "%s: dist.%s" % (t["name"], k))
        if dd["kind"] == "uniform":
            need(dd["low"] < dd["high"], "%s: uniform low >= high" % t["name"])
        need(dd.get("post") in (None,) or dd["post"] in POSTS, "%s: dist.post" % t["name"])
    if spec["family"] in FAMILY:
        FAMILY[spec["family"]](spec, shp)
    need(spec["min_bytes"] == total, "min_bytes %s != %d (each input read, each output written once)"
         % (spec["min_bytes"], total))
    need(isinstance(spec["flops"], (int, float)) and spec["flops"] > 0, "flops must be > 0")
    need(spec["tolerance"] in ("fp32", "fp16", "bf16", "exact"), "tolerance")
    with open(os.path.join(d, "reference.cu")) as f:
        check_launch(f.read(), spec, names)
    with open(os.path.join(d, "reference.py")) as f:
        tree = ast.parse(f.read())
    defs = {n.name for n in tree.body if isinstance(n, (ast.FunctionDef, ast.ClassDef))}
    need({"Model", "get_inputs", "get_init_inputs"} <= defs, "reference.py: wants Model, get_inputs, get_init_inputs")
    return spec

def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--families", default="")
    ap.add_argument("dirs", nargs="*")
    a = ap.parse_args()
    here = os.path.dirname(os.path.abspath(__file__))
    dirs = a.dirs or sorted(glob.glob(os.path.join(here, "..", "..", "level1", "*")))
    fams = set(x for x in a.families.split(",") if x)
    bad = n = 0
    for d in dirs:
        try:
            if check_dir(d, fams) is not None:
                n += 1
        except (Bad, OSError, ValueError, KeyError, TypeError, SyntaxError, NameError) as e:
            bad += 1
            print("%s: %s: %s" % (d, type(e).__name__, e))
    print("checked %d specs, %d bad" % (n, bad))
    return 1 if bad else 0

if __name__ == "__main__":
    sys.exit(main())
