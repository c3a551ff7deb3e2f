#!/usr/bin/env python3
"""Evaluates a level-2 operator graph (docs/graph-ir.md) in pure Python,
float64, from a problem's spec.json and its inputs (.npy files as `kforge
problems inputs` writes them). Small sizes only (no vectorisation). It is
written apart from the reference generator (problems/gen/level2/refcu.py): loops
over coordinates, transposed convolutions as scatters, statistics grouped
by key, so that the two check each other.

    graph_eval.py SPEC.json INPUTS_DIR OUT.bin    # writes the output as float64

Python 3.11 stdlib only."""
import ast
import itertools
import json
import math
import os
import struct
import sys


class Tensor:
    def __init__(self, shape, data):
        self.shape = tuple(shape)
        self.data = data
        n = 1
        for d in self.shape:
            n *= d
        if n != len(data):
            raise ValueError("shape %s holds %d elements, got %d" % (self.shape, n, len(data)))

    def strides(self):
        s, acc = [], 1
        for d in reversed(self.shape):
            s.append(acc)
            acc *= d
        return tuple(reversed(s))


def numel(shape):
    n = 1
    for d in shape:
        n *= d
    return n


def coords(shape):
    return itertools.product(*[range(d) for d in shape])


def flat(c, st):
    return sum(a * b for a, b in zip(c, st))


# ---------------------------------------------------------------- .npy

def load_npy(path):
    raw = open(path, "rb").read()
    if raw[:6] != b"\x93NUMPY":
        raise ValueError("%s: not an .npy file" % path)
    hl = struct.unpack("<H", raw[8:10])[0]
    hdr = ast.literal_eval(raw[10:10 + hl].decode("latin1"))
    if hdr.get("fortran_order"):
        raise ValueError("%s: Fortran order" % path)
    shape, descr = tuple(hdr["shape"]), hdr["descr"]
    body = raw[10 + hl:]
    n = numel(shape)
    fmt = {"<f4": "f", "<f8": "d", "|b1": "?", "|u1": "B", "<i8": "q", "<i4": "i", "<f2": "e"}[descr]
    vals = struct.unpack("<%d%s" % (n, fmt), body[:n * struct.calcsize(fmt)])
    return Tensor(shape, [float(v) for v in vals])


# ---------------------------------------------------------------- ops

def broadcast(shapes):
    r = max(len(s) for s in shapes)
    al = [(1,) * (r - len(s)) + tuple(s) for s in shapes]
    out = []
    for ds in zip(*al):
        m = max(ds)
        if any(d not in (1, m) for d in ds):
            raise ValueError("shapes %s do not broadcast" % shapes)
        out.append(m)
    return tuple(out), al


def elementwise(ts, f):
    shape, al = broadcast([t.shape for t in ts])
    sts = []
    for t, a in zip(ts, al):
        st = Tensor(a, t.data).strides()
        sts.append(tuple(0 if d == 1 else s for d, s in zip(a, st)))
    out = []
    for c in coords(shape):
        out.append(f(*[t.data[flat(c, st)] for t, st in zip(ts, sts)]))
    return Tensor(shape, out)


def softplus(x, beta=1.0, threshold=20.0):
    return x if beta * x > threshold else math.log1p(math.exp(beta * x)) / beta


def relu6(x):
    return min(max(x, 0.0), 6.0)


def clamp(x, lo, hi):
    if lo is not None and x < lo:
        x = lo
    if hi is not None and x > hi:
        x = hi
    return x


def sigmoid(x):
    if x >= 0:
        return 1.0 / (1.0 + math.exp(-x))
    e = math.exp(x)
    return e / (1.0 + e)


def act_fn(n):
    fn = n["fn"]
    table = {
        "relu": lambda x: max(x, 0.0),
        "leaky_relu": lambda x: x if x > 0 else x * n["negative_slope"],
        "gelu": lambda x: 0.5 * x * (1.0 + math.erf(x / math.sqrt(2.0))),
        "gelu_tanh": lambda x: 0.5 * x * (1.0 + math.tanh(math.sqrt(2.0 / math.pi) * (x + 0.044715 * x ** 3))),
        "sigmoid": sigmoid,
        "tanh": math.tanh,
        "silu": lambda x: x * sigmoid(x),
        "mish": lambda x: x * math.tanh(softplus(x)),
        "softplus": lambda x: softplus(x, n.get("beta", 1.0), n.get("threshold", 20.0)),
        "hardswish": lambda x: x * relu6(x + 3.0) / 6.0,
        "hardsigmoid": lambda x: relu6(x + 3.0) / 6.0,
        "hardtanh": lambda x: clamp(x, n.get("min_val", -1.0), n.get("max_val", 1.0)),
        "clamp": lambda x: clamp(x, n.get("min"), n.get("max")),
        "elu": lambda x: x if x > 0 else n.get("alpha", 1.0) * math.expm1(x),
        "selu": lambda x: 1.0507009873554804934193349852946 * (
            x if x > 0 else 1.6732632423543772848170429916717 * math.expm1(x)),
        "exp": math.exp, "log": math.log, "abs": abs, "neg": lambda x: -x, "sqrt": math.sqrt,
        "rsqrt": lambda x: 1.0 / math.sqrt(x), "square": lambda x: x * x, "identity": lambda x: x,
    }
    if fn not in table:
        raise ValueError("act %s" % fn)
    return table[fn]


BIN = {"add": lambda a, b: a + b, "sub": lambda a, b: a - b, "mul": lambda a, b: a * b,
       "div": lambda a, b: a / b, "max": max, "min": min, "pow": lambda a, b: a ** b}


def op_binary(n, ins):
    f = BIN[n["fn"]]
    if len(ins) == 1:
        c = n["const"]
        g = (lambda a: f(c, a)) if n.get("swap") else (lambda a: f(a, c))
        return Tensor(ins[0].shape, [g(a) for a in ins[0].data])
    return elementwise(ins, f)


def op_linear(n, ins):
    x, w = ins[0], ins[1]
    b = ins[2] if len(ins) > 2 else None
    K = x.shape[-1]
    N = w.shape[0]
    M = numel(x.shape) // K
    out = []
    for m in range(M):
        row = x.data[m * K:(m + 1) * K]
        for j in range(N):
            wr = w.data[j * K:(j + 1) * K]
            s = math.fsum(a * c for a, c in zip(row, wr))
            out.append(s + (b.data[j] if b else 0.0))
    return Tensor(x.shape[:-1] + (N,), out)


def op_matmul(n, ins):
    a, b = ins
    M, K = a.shape[-2:]
    K2, N = b.shape[-2:]
    batch, _ = broadcast([a.shape[:-2], b.shape[:-2]])
    out = []
    for bc in coords(batch):
        def mat(t):
            pre = t.shape[:-2]
            al = (1,) * (len(batch) - len(pre)) + pre
            idx = tuple(0 if d == 1 else c for d, c in zip(al, bc))[len(batch) - len(pre):]
            off = flat(idx, Tensor(pre, [0] * numel(pre)).strides()) * t.shape[-2] * t.shape[-1] if pre else 0
            return t.data[off:off + t.shape[-2] * t.shape[-1]]
        A, B = mat(a), mat(b)
        for i in range(M):
            for j in range(N):
                out.append(math.fsum(A[i * K + k] * B[k * N + j] for k in range(K)))
    return Tensor(batch + (M, N), out)


def op_conv(n, ins):
    x, w = ins[0], ins[1]
    b = ins[2] if len(ins) > 2 else None
    nd, g = n["dims"], n["groups"]
    k, s, p, d = n["kernel"], n["stride"], n["padding"], n["dilation"]
    N, CI = x.shape[:2]
    osh = tuple(n["shape"])
    CO = osh[1]
    if list(w.shape[2:]) != list(k):
        raise ValueError("conv kernel %s, weight %s" % (k, w.shape))
    isp, osp = x.shape[2:], osh[2:]
    ist, ost, kst = (Tensor(t, [0] * numel(t)).strides() for t in (isp, osp, tuple(k)))
    nin, nout, nk = numel(isp), numel(osp), numel(k)
    cig, cog = CI // g, CO // g
    xd, wd = x.data, w.data
    out = [0.0] * numel(osh)
    if not n["transposed"]:
        # out[o] gathers x[o * s - p + k * d] over the taps inside the input
        pairs = []
        for oc in coords(osp):
            pr = []
            for kc in coords(k):
                ic = [oc[a] * s[a] - p[a] + kc[a] * d[a] for a in range(nd)]
                if all(0 <= v < isp[a] for a, v in enumerate(ic)):
                    pr.append((flat(ic, ist), flat(kc, kst)))
            pairs.append(pr)
        for nn_ in range(N):
            for co in range(CO):
                grp = co // cog
                bias = b.data[co] if b else 0.0
                for o in range(nout):
                    terms = []
                    for cj in range(cig):
                        xb = (nn_ * CI + grp * cig + cj) * nin
                        wb = (co * cig + cj) * nk
                        terms += [xd[xb + i] * wd[wb + kk] for i, kk in pairs[o]]
                    out[(nn_ * CO + co) * nout + o] = math.fsum(terms) + bias
        return Tensor(osh, out)
    # transposed: x[i] scatters into out[i * s - p + k * d] for the taps inside the output
    pairs = []
    for ic in coords(isp):
        pr = []
        for kc in coords(k):
            oc = [ic[a] * s[a] - p[a] + kc[a] * d[a] for a in range(nd)]
            if all(0 <= v < osp[a] for a, v in enumerate(oc)):
                pr.append((flat(oc, ost), flat(kc, kst)))
        pairs.append(pr)
    for nn_ in range(N):
        for ci in range(CI):
            grp = ci // cig
            xb = (nn_ * CI + ci) * nin
            for oj in range(cog):
                co = grp * cog + oj
                ob = (nn_ * CO + co) * nout
                wb = (ci * cog + oj) * nk
                for i in range(nin):
                    xv = xd[xb + i]
                    for o, kk in pairs[i]:
                        out[ob + o] += xv * wd[wb + kk]
    if b:
        for nn_ in range(N):
            for co in range(CO):
                ob = (nn_ * CO + co) * nout
                for o in range(nout):
                    out[ob + o] += b.data[co]
    return Tensor(osh, out)


def op_pool(n, ins):
    x = ins[0]
    nd = n["dims"]
    k, s, p = n["kernel"], n["stride"], n["padding"]
    d = n.get("dilation", [1] * nd)
    osh = tuple(n["shape"])
    xst = x.strides()
    out = []
    for oc in coords(osh):
        starts = [oc[2 + a] * s[a] - p[a] for a in range(nd)]
        vals = []
        for kc in coords(k):
            ic = [starts[a] + kc[a] * d[a] for a in range(nd)]
            if all(0 <= v < x.shape[2 + a] for a, v in enumerate(ic)):
                vals.append(x.data[flat(oc[:2] + tuple(ic), xst)])
        if n["kind"] == "max":
            out.append(max(vals))
        else:
            if n.get("count_include_pad", True):
                div = 1
                for a in range(nd):
                    div *= min(starts[a] + k[a], x.shape[2 + a] + p[a]) - starts[a]
            else:
                div = len(vals)
            out.append(math.fsum(vals) / div)
    return Tensor(osh, out)


def op_adaptive_avg_pool(n, ins):
    x = ins[0]
    osh = tuple(n["shape"])
    nd = len(osh) - 2
    xst = x.strides()
    out = []
    for oc in coords(osh):
        ranges = []
        for a in range(nd):
            S, O, i = x.shape[2 + a], osh[2 + a], oc[2 + a]
            ranges.append(range((i * S) // O, -((-(i + 1) * S) // O)))
        vals = [x.data[flat(oc[:2] + ic, xst)] for ic in itertools.product(*ranges)]
        out.append(math.fsum(vals) / len(vals))
    return Tensor(osh, out)


def groups_of(x, key):
    """{key(coords): [values]} in order."""
    out = {}
    for c, v in zip(coords(x.shape), x.data):
        out.setdefault(key(c), []).append(v)
    return out


def op_reduce(n, ins):
    x = ins[0]
    r = len(x.shape)
    dims = sorted(set(d + r if d < 0 else d for d in n["dims"]))
    key = lambda c: tuple(v for i, v in enumerate(c) if i not in dims)  # noqa: E731
    grp = groups_of(x, key)
    fn = n["fn"]

    def red(vs):
        if fn == "sum":
            return math.fsum(vs)
        if fn == "mean":
            return math.fsum(vs) / len(vs)
        if fn == "max":
            return max(vs)
        if fn == "min":
            return min(vs)
        if fn == "prod":
            return math.prod(vs)
        if fn == "logsumexp":
            m = max(vs)
            m = 0.0 if math.isinf(m) else m
            return m + math.log(math.fsum(math.exp(v - m) for v in vs))
        raise ValueError("reduce %s" % fn)
    kept = [d for i, d in enumerate(x.shape) if i not in dims]
    out = [red(grp[c]) for c in coords(kept)]
    return Tensor(n["shape"], out)


def op_softmax(n, ins):
    x = ins[0]
    r = len(x.shape)
    d = n["dim"] + r if n["dim"] < 0 else n["dim"]
    key = lambda c: c[:d] + c[d + 1:]  # noqa: E731
    grp = groups_of(x, key)
    stats = {}
    for kk, vs in grp.items():
        m = max(vs)
        stats[kk] = (m, math.fsum(math.exp(v - m) for v in vs))
    out = []
    for c, v in zip(coords(x.shape), x.data):
        m, s = stats[key(c)]
        out.append(v - m - math.log(s) if n.get("log") else math.exp(v - m) / s)
    return Tensor(x.shape, out)


def op_norm(n, ins):
    x = ins[0]
    w = ins[1] if len(ins) > 1 else None
    b = ins[2] if len(ins) > 2 else None
    kind = n["kind"]
    r = len(x.shape)
    if kind == "batch":
        key, pkey = (lambda c: c[1]), (lambda c: c[1])
    elif kind == "group":
        cpg = x.shape[1] // n["groups"]
        key, pkey = (lambda c: (c[0], c[1] // cpg)), (lambda c: c[1])
    elif kind == "instance":
        key, pkey = (lambda c: (c[0], c[1])), (lambda c: c[1])
    elif kind == "layer":
        k = n["normalized_ndim"]
        inner = Tensor(x.shape[r - k:], [0] * numel(x.shape[r - k:])).strides()
        key = lambda c: c[:r - k]  # noqa: E731
        pkey = lambda c: flat(c[r - k:], inner)  # noqa: E731
    else:
        raise ValueError("norm %s" % kind)
    stats = {}
    for kk, vs in groups_of(x, key).items():
        mean = math.fsum(vs) / len(vs)
        var = math.fsum((v - mean) ** 2 for v in vs) / len(vs)
        stats[kk] = (mean, var)
    out = []
    for c, v in zip(coords(x.shape), x.data):
        mean, var = stats[key(c)]
        y = (v - mean) / math.sqrt(var + n["eps"])
        if w:
            y *= w.data[pkey(c)]
        if b:
            y += b.data[pkey(c)]
        out.append(y)
    return Tensor(x.shape, out)


def op_dropout(n, ins):
    x, m = ins
    return Tensor(x.shape, [v * k / (1.0 - n["p"]) for v, k in zip(x.data, m.data)])


def op_reshape(n, ins):
    return Tensor(n["shape"], ins[0].data)


def op_permute(n, ins):
    x = ins[0]
    perm = n["perm"]
    osh = tuple(x.shape[p] for p in perm)
    st = x.strides()
    out = []
    for oc in coords(osh):
        ic = [0] * len(perm)
        for j, p in enumerate(perm):
            ic[p] = oc[j]
        out.append(x.data[flat(ic, st)])
    return Tensor(osh, out)


def op_concat(n, ins):
    d = n["dim"] + len(ins[0].shape) if n["dim"] < 0 else n["dim"]
    osh = tuple(n["shape"])
    out = []
    for oc in coords(osh):
        i = oc[d]
        for t in ins:
            if i < t.shape[d]:
                out.append(t.data[flat(oc[:d] + (i,) + oc[d + 1:], t.strides())])
                break
            i -= t.shape[d]
    return Tensor(osh, out)


def op_expand(n, ins):
    x = ins[0]
    osh = tuple(n["shape"])
    al = (1,) * (len(osh) - len(x.shape)) + tuple(x.shape)
    st = Tensor(al, x.data).strides()
    out = []
    for oc in coords(osh):
        out.append(x.data[sum(0 if d == 1 else c * s for c, d, s in zip(oc, al, st))])
    return Tensor(osh, out)


def op_slice(n, ins):
    x = ins[0]
    d = n["dim"]
    osh = tuple(n["shape"])
    st = x.strides()
    out = []
    for oc in coords(osh):
        ic = list(oc)
        ic[d] = n["start"] + ic[d] * n.get("step", 1)
        out.append(x.data[flat(ic, st)])
    return Tensor(osh, out)


def op_pad(n, ins):
    x = ins[0]
    osh = tuple(n["shape"])
    st = x.strides()
    out = []
    for oc in coords(osh):
        ic = [c - b for c, b in zip(oc, n["before"])]
        inside = all(0 <= c < s for c, s in zip(ic, x.shape))
        out.append(x.data[flat(ic, st)] if inside else 0.0)
    return Tensor(osh, out)


def op_cumsum(n, ins):
    x = ins[0]
    d = n["dim"]
    out = list(x.data)
    st = x.strides()
    for c in coords(x.shape):
        if c[d] > 0:
            prev = c[:d] + (c[d] - 1,) + c[d + 1:]
            out[flat(c, st)] += out[flat(prev, st)]   # coords in order: prev is done
    return Tensor(x.shape, out)


def op_const(n, ins):
    return Tensor(n["shape"], [float(v) for v in n["values"]])


def op_take(n, ins):
    x = ins[0]
    inner = numel(x.shape[1:])
    out = []
    for r in n["index"]:
        out += x.data[r * inner:(r + 1) * inner]
    return Tensor(n["shape"], out)


def op_roll(n, ins):
    x = ins[0]
    st = x.strides()
    sh = dict(zip(n["dims"], n["shifts"]))
    out = []
    for oc in coords(x.shape):
        ic = [(c - sh.get(j, 0)) % x.shape[j] for j, c in enumerate(oc)]
        out.append(x.data[flat(ic, st)])
    return Tensor(x.shape, out)


def op_compare(n, ins):
    c = n["const"]
    f = {"ne": lambda a: a != c, "eq": lambda a: a == c}[n["fn"]]
    return Tensor(ins[0].shape, [1.0 if f(a) else 0.0 for a in ins[0].data])


def op_masked_fill(n, ins):
    x = ins[0]
    v = {"-inf": -math.inf, "inf": math.inf}.get(n["value"], n["value"])
    if len(ins) == 2:
        m = elementwise([ins[1], Tensor(x.shape, [0.0] * len(x.data))], lambda a, b: a)
        return Tensor(x.shape, [float(v) if k != 0 else a for a, k in zip(x.data, m.data)])
    dg = n["diagonal"]
    out = []
    for c, a in zip(coords(x.shape), x.data):
        i, j = c[-2], c[-1]
        hit = j - i >= dg if n["where"] == "upper" else j - i <= dg
        out.append(float(v) if hit else a)
    return Tensor(x.shape, out)


def op_rnn(n, ins):
    """PyTorch's LSTM (gates i f g o), GRU (r z n) and Elman RNN, layer by
    layer, each direction over its own time order."""
    x = ins[0]
    rest = list(ins[1:])
    h0 = rest.pop(0) if n["h0"] else None
    c0 = rest.pop(0) if n["c0"] else None
    kind, L, H = n["kind"], n["layers"], n["hidden"]
    D = 2 if n["bidirectional"] else 1
    if n["batch_first"]:
        B, T = x.shape[0], x.shape[1]
        seq = [[x.data[(b * T + t) * x.shape[2]:(b * T + t + 1) * x.shape[2]] for b in range(B)] for t in range(T)]
    else:
        T, B = x.shape[0], x.shape[1]
        seq = [[x.data[(t * B + b) * x.shape[2]:(t * B + b + 1) * x.shape[2]] for b in range(B)] for t in range(T)]
    per = 4 if n["bias"] else 2
    sig = lambda v: 1.0 / (1.0 + math.exp(-v))  # noqa: E731
    hn, cn = [], []

    def mv(w, row, vec):
        k = len(vec)
        return math.fsum(w.data[row * k + c] * vec[c] for c in range(k))
    for layer in range(L):
        out = [[[0.0] * (D * H) for _ in range(B)] for _ in range(T)]
        for d in range(D):
            ws = rest[(layer * D + d) * per:(layer * D + d + 1) * per]
            w_ih, w_hh = ws[0], ws[1]
            b_ih = ws[2].data if per == 4 else [0.0] * (4 * H)
            b_hh = ws[3].data if per == 4 else [0.0] * (4 * H)
            ld = layer * D + d
            h = [[h0.data[(ld * B + b) * H + j] if h0 else 0.0 for j in range(H)] for b in range(B)]
            c = [[c0.data[(ld * B + b) * H + j] if c0 else 0.0 for j in range(H)] for b in range(B)]
            for t in (range(T - 1, -1, -1) if d else range(T)):
                for b in range(B):
                    xv, hv = seq[t][b], h[b]
                    gx = lambda g, j: b_ih[g * H + j] + mv(w_ih, g * H + j, xv)  # noqa: E731
                    gh = lambda g, j: b_hh[g * H + j] + mv(w_hh, g * H + j, hv)  # noqa: E731
                    nh, nc = [], []
                    for j in range(H):
                        if kind == "lstm":
                            i_, f_ = sig(gx(0, j) + gh(0, j)), sig(gx(1, j) + gh(1, j))
                            g_, o_ = math.tanh(gx(2, j) + gh(2, j)), sig(gx(3, j) + gh(3, j))
                            cc = f_ * c[b][j] + i_ * g_
                            nc.append(cc)
                            nh.append(o_ * math.tanh(cc))
                        elif kind == "gru":
                            r_, z_ = sig(gx(0, j) + gh(0, j)), sig(gx(1, j) + gh(1, j))
                            nn_ = math.tanh(gx(2, j) + r_ * gh(2, j))
                            nh.append((1.0 - z_) * nn_ + z_ * hv[j])
                        else:
                            v = gx(0, j) + gh(0, j)
                            nh.append(math.tanh(v) if kind == "rnn_tanh" else max(v, 0.0))
                    h[b] = nh
                    if kind == "lstm":
                        c[b] = nc
                    out[t][b][d * H:(d + 1) * H] = nh
            hn.append(h)
            cn.append(c)
        seq = out
    which = n["output"]
    if which == "h_n":
        data = [v for hh in hn for row in hh for v in row]
    elif which == "c_n":
        data = [v for cc in cn for row in cc for v in row]
    elif n["batch_first"]:
        data = [v for b in range(B) for t in range(T) for v in seq[t][b]]
    else:
        data = [v for t in range(T) for b in range(B) for v in seq[t][b]]
    return Tensor(n["shape"], data)


def op_act(n, ins):
    f = act_fn(n)
    return Tensor(ins[0].shape, [f(v) for v in ins[0].data])


OPS = {"linear": op_linear, "matmul": op_matmul, "conv": op_conv, "pool": op_pool,
       "adaptive_avg_pool": op_adaptive_avg_pool, "act": op_act, "binary": op_binary,
       "reduce": op_reduce, "softmax": op_softmax, "norm": op_norm, "dropout": op_dropout,
       "reshape": op_reshape, "permute": op_permute, "concat": op_concat,
       "expand": op_expand, "slice": op_slice, "pad": op_pad, "cumsum": op_cumsum, "masked_fill": op_masked_fill,
       "rnn": op_rnn, "const": op_const, "take": op_take, "roll": op_roll, "compare": op_compare}


def evaluate(spec, inputs):
    """inputs: name -> Tensor. Returns the output Tensor."""
    env = dict(inputs)
    for n in spec["attrs"]["graph"]:
        t = OPS[n["op"]](n, [env[i] for i in n["in"]])
        if list(t.shape) != list(n["shape"]):
            raise ValueError("%s: computed shape %s, node says %s" % (n["out"], t.shape, n["shape"]))
        env[n["out"]] = t
    return env[spec["outputs"][0]["name"]]


def load_inputs(spec, d):
    sizes = spec["sizes"]
    out = {}
    for t in spec["inputs"]:
        x = load_npy(os.path.join(d, t["name"] + ".npy"))
        want = tuple(sizes[s] if isinstance(s, str) else s for s in t["shape"])
        if x.shape != want:
            raise ValueError("%s: shape %s, spec %s" % (t["name"], x.shape, want))
        out[t["name"]] = x
    return out


def main():
    if len(sys.argv) != 4:
        sys.exit(__doc__)
    spec = json.load(open(sys.argv[1]))
    y = evaluate(spec, load_inputs(spec, sys.argv[2]))
    with open(sys.argv[3], "wb") as f:
        f.write(struct.pack("<%dd" % len(y.data), *y.data))
    return 0


if __name__ == "__main__":
    sys.exit(main())
