#!/usr/bin/env python3
"""Checks problems/gen/level3/faketorch.py's decompositions against direct
definitions: tiny modules using einsum, einops.rearrange, Tensor.unfold,
indexing, masked_fill with a tril mask, F.normalize and
nn.MultiheadAttention are traced, their graphs evaluated with
problems/gen/level2/graph_eval.py on random values, and compared with the same
computation written out with loops over indices here (no graph, no
faketorch). Prints "ok NAME" / "not ok NAME ..." and a summary; exit 0 when
all agree."""
import itertools
import math
import os
import random
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "..", "problems", "gen", "level2"))
sys.path.insert(0, os.path.join(HERE, "..", "..", "problems", "gen", "level3"))
import gen  # noqa: E402  (problems/gen/level3/gen.py)
import graph_eval as ge  # noqa: E402

TOL = 1e-9


def module(init, fwd, inputs, init_args="[]"):
    return ("import math\nimport torch\nimport torch.nn as nn\nimport torch.nn.functional as F\n"
            "from einops import rearrange\n\n"
            "class Model(nn.Module):\n    def __init__(self):\n        super().__init__()\n%s\n"
            "    def forward(self, %s):\n%s\n\n"
            "def get_inputs():\n    return [%s]\n\ndef get_init_inputs():\n    return %s\n" % (
                init or "        pass", ", ".join(n for n, _ in inputs), fwd,
                ", ".join("torch.rand(%s)" % ", ".join(map(str, s)) for _, s in inputs), init_args))


def run(text, rng):
    spec, _ = gen.build(1, "1_Check.py", text)
    vals = {}
    for t in spec["inputs"]:
        n = 1
        for d in t["shape"]:
            n *= d
        vals[t["name"]] = ge.Tensor(t["shape"], [rng.uniform(-1.0, 1.0) for _ in range(n)])
    return ge.evaluate(spec, vals), vals


def at(t, idx):
    return t.data[ge.flat(idx, t.strides())]


def naive_einsum(eq, ts):
    lhs, out = eq.replace(" ", "").split("->")
    specs = lhs.split(",")
    dims = {}
    for s, t in zip(specs, ts):
        dims.update(zip(s, t.shape))
    letters = sorted(dims)
    acc = {}
    for asg in itertools.product(*[range(dims[c]) for c in letters]):
        env = dict(zip(letters, asg))
        p = 1.0
        for s, t in zip(specs, ts):
            p *= at(t, [env[c] for c in s])
        k = tuple(env[c] for c in out)
        acc[k] = acc.get(k, 0.0) + p
    shape = [dims[c] for c in out]
    return shape, [acc[k] for k in itertools.product(*[range(d) for d in shape])]


CASES = []


def case(f):
    CASES.append(f)
    return f


def einsum_case(name, eq, shapes):
    def f(rng):
        ins = [("a%d" % k, s) for k, s in enumerate(shapes)]
        text = module(None, "        return torch.einsum(%r, %s)" % (eq, ", ".join(n for n, _ in ins)), ins)
        y, v = run(text, rng)
        return naive_einsum(eq, [v[n] for n, _ in ins]), y
    f.__name__ = name
    case(f)


# Mamba2's four einsums (level-3 48, 49) at tiny sizes, and two others
einsum_case("einsum_mamba_diag", "bclhn,bcshn,bhcls,bcshp->bclhp",
            [(2, 2, 3, 2, 2), (2, 2, 3, 2, 2), (2, 2, 2, 3, 3), (2, 2, 3, 2, 2)])
einsum_case("einsum_mamba_states", "bclhn,bhcl,bclhp->bchpn", [(2, 2, 3, 2, 2), (2, 2, 2, 3), (2, 2, 3, 2, 3)])
einsum_case("einsum_mamba_chunk", "bhzc,bchpn->bzhpn", [(2, 2, 3, 3), (2, 3, 2, 2, 2)])
einsum_case("einsum_mamba_off", "bclhn,bchpn,bhcl->bclhp", [(2, 2, 3, 2, 2), (2, 2, 2, 3, 2), (2, 2, 2, 3)])
einsum_case("einsum_matmul_T", "ij,kj->ik", [(3, 4), (2, 4)])


@case
def rearrange_blocks(rng):
    ins = [("x", (2, 6, 2, 3))]
    text = module(None, "        y = rearrange(x, 'b (c l) ... -> b c l ...', l=3)\n"
                        "        return rearrange(y, 'b c l h p -> b h (c l) p')", ins)
    y, v = run(text, rng)
    x = v["x"]
    out = [at(x, (b, c * 3 + l, h, p)) for b in range(2) for h in range(2) for c in range(2) for l in range(3)
           for p in range(3)]
    return ([2, 2, 6, 3], out), y


@case
def unfold_patches(rng):
    ins = [("img", (2, 3, 4, 6))]
    text = module(None, "        p = 2\n        return img.unfold(2, p, p).unfold(3, p, p).reshape(img.shape[0], -1, p*p*img.shape[1])",
                  ins)
    y, v = run(text, rng)
    x = v["img"]
    # unfold: [B, C, H/p, W/p, p, p], flattened in that order, then viewed
    flat = [at(x, (b, c, i * 2 + u, j * 2 + w)) for b in range(2) for c in range(3) for i in range(2)
            for j in range(3) for u in range(2) for w in range(2)]
    return ([2, 6, 12], flat), y


@case
def index_split(rng):
    ins = [("x", (3, 4, 5))]
    text = module(None, "        a, b = x.split([2, 3], dim=-1)\n        c = x.chunk(2, 1)[1]\n"
                        "        return a[:, -1, None] + b[..., 1:3].sum(-1, keepdim=True) + c[1:, 0, :2].mean()", ins)
    y, v = run(text, rng)
    x = v["x"]
    cm = sum(at(x, (i, 2, k)) for i in (1, 2) for k in (0, 1)) / 4.0
    # a[:, -1, None] is [3, 1, 2], the sum [3, 4, 1]: they broadcast to [3, 4, 2]
    out = [at(x, (i, 3, k)) + at(x, (i, j, 3)) + at(x, (i, j, 4)) + cm for i in range(3) for j in range(4)
           for k in range(2)]
    return ([3, 4, 2], out), y


@case
def strided_pad(rng):
    ins = [("x", (2, 5, 6, 3))]
    text = module(None, "        y = F.pad(x, [0, 0, 2, 1, 1, 2], 'constant', 0)\n"
                        "        return y[:, 1:-1, 0::2, :] + y[:, 2::3, 1::2, :].mean()", ins)
    y, v = run(text, rng)
    x = v["x"]

    def p(b, h, w, c):     # the padded tensor: H by 1 and 2, W by 2 and 1
        h, w = h - 1, w - 2
        return at(x, (b, h, w, c)) if 0 <= h < 5 and 0 <= w < 6 else 0.0
    m = sum(p(b, h, w, c) for b in range(2) for h in (2, 5) for w in (1, 3, 5, 7) for c in range(3)) / 48.0
    out = [p(b, h, w, c) + m for b in range(2) for h in range(1, 7) for w in range(0, 9, 2) for c in range(3)]
    return ([2, 6, 5, 3], out), y


@case
def constants_roll_take(rng):
    """Swin V2's pattern: an index table from arange/meshgrid, rows taken
    by it, a roll, and a mask built from region labels by slice assignment."""
    ins = [("x", (2, 4, 4, 3)), ("t", (9, 3))]
    init = ("        c = torch.stack(torch.meshgrid([torch.arange(2), torch.arange(2)]))\n"
            "        f = torch.flatten(c, 1)\n"
            "        r = (f[:, :, None] - f[:, None, :]).permute(1, 2, 0).contiguous()\n"
            "        r[:, :, 0] += 1\n        r[:, :, 1] += 1\n        r[:, :, 0] *= 3\n"
            "        self.register_buffer('idx', r.sum(-1))\n"
            "        m = torch.zeros((1, 4, 4, 1))\n        m[:, 2:, :, :] = 1\n        m[:, :, 3:, :] += 2\n"
            "        d = m.view(1, 16) - m.view(16, 1)\n"
            "        self.register_buffer('mask', d.masked_fill(d != 0, -100.0).masked_fill(d == 0, 0.0))")
    text = module(init, "        y = torch.roll(x, shifts=(-1, 1), dims=(1, 2)).view(2, 16, 3)\n"
                        "        b = t[self.idx.view(-1)].view(4, 4, 3).sum(-1)\n"
                        "        return y @ y.transpose(1, 2) + self.mask + b.sum()", ins)
    y, v = run(text, rng)
    x, t = v["x"], v["t"]
    pos = [(h, w) for h in range(4) for w in range(4)]
    lab = [(1 if h >= 2 else 0) + (2 if w >= 3 else 0) for h, w in pos]
    rolled = [[at(x, (b, (h + 1) % 4, (w - 1) % 4, c)) for (h, w) in pos for c in range(3)] for b in range(2)]
    bs = 0.0
    for i in range(4):
        for j in range(4):
            k = ((i // 2 - j // 2) + 1) * 3 + (i % 2 - j % 2) + 1
            bs += sum(t.data[k * 3 + c] for c in range(3))
    out = []
    for b in range(2):
        for p in range(16):
            for q in range(16):
                dot = sum(rolled[b][p * 3 + c] * rolled[b][q * 3 + c] for c in range(3))
                out.append(dot + (0.0 if lab[p] == lab[q] else -100.0) + bs)
    return ([2, 16, 16], out), y


@case
def causal_softmax(rng):
    ins = [("x", (2, 4, 4))]
    init = ("        self.register_buffer('bias', torch.tril(torch.ones(6, 6)).view(1, 6, 6))")
    text = module(init, "        T = x.size(-1)\n        att = x.masked_fill(self.bias[:, :T, :T] == 0, float('-inf'))\n"
                        "        return F.softmax(att, dim=-1)", ins)
    y, v = run(text, rng)
    x = v["x"]
    out = []
    for b in range(2):
        for i in range(4):
            row = [math.exp(at(x, (b, i, j))) if j <= i else 0.0 for j in range(4)]
            s = sum(row)
            out += [r / s for r in row]
    return ([2, 4, 4], out), y


@case
def normalize(rng):
    ins = [("x", (2, 3, 4))]
    text = module(None, "        return F.normalize(x)", ins)
    y, v = run(text, rng)
    x = v["x"]
    out = []
    for b in range(2):
        for c in range(3):
            for k in range(4):
                n = math.sqrt(sum(at(x, (b, cc, k)) ** 2 for cc in range(3)))
                out.append(at(x, (b, c, k)) / max(n, 1e-12))
    return ([2, 3, 4], out), y


@case
def multihead_attention(rng):
    L, N, E, H = 3, 2, 4, 2
    ins = [("x", (L, N, E))]
    text = module("        self.attn = nn.MultiheadAttention(%d, %d)" % (E, H),
                  "        return self.attn(x, x, x)[0]", ins)
    y, v = run(text, rng)
    x, W, Bi = v["x"], v["attn_in_proj_weight"], v["attn_in_proj_bias"]
    Wo, Bo = v["attn_out_proj_weight"], v["attn_out_proj_bias"]
    hd = E // H

    def proj(l, n, r):     # row r of the packed in_proj applied to x[l, n]
        return Bi.data[r] + sum(W.data[r * E + k] * at(x, (l, n, k)) for k in range(E))
    out = {}
    for n in range(N):
        for h in range(H):
            q = [[proj(l, n, h * hd + d) for d in range(hd)] for l in range(L)]
            k = [[proj(l, n, E + h * hd + d) for d in range(hd)] for l in range(L)]
            vv = [[proj(l, n, 2 * E + h * hd + d) for d in range(hd)] for l in range(L)]
            for i in range(L):
                sc = [sum(q[i][d] * k[j][d] for d in range(hd)) / math.sqrt(hd) for j in range(L)]
                m = max(sc)
                w = [math.exp(s - m) for s in sc]
                z = sum(w)
                for d in range(hd):
                    out[(i, n, h * hd + d)] = sum(w[j] / z * vv[j][d] for j in range(L))
    res = []
    for i in range(L):
        for n in range(N):
            for e in range(E):
                res.append(Bo.data[e] + sum(Wo.data[e * E + c] * out[(i, n, c)] for c in range(E)))
    return ([L, N, E], res), y


def main():
    rng = random.Random(7)
    failed = 0
    for f in CASES:
        try:
            (shape, want), got = f(rng)
            bad = list(got.shape) != list(shape) or len(want) != len(got.data) or any(
                abs(a - b) > TOL * (1 + abs(b)) for a, b in zip(got.data, want))
            msg = "" if not bad else " shape %s want %s, max diff %g" % (
                list(got.shape), shape, max((abs(a - b) for a, b in zip(got.data, want)), default=0))
        except Exception as e:  # noqa
            bad, msg = True, " %s: %s" % (type(e).__name__, e)
        failed += bad
        print("%s %s%s" % ("not ok" if bad else "ok", f.__name__, msg))
    print("checked %d decompositions, %d failed" % (len(CASES), failed))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
