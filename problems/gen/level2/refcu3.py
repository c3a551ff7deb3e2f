"""The level-3 node kinds of reference.cu (problems/gen/level2/refcu.py's Gen
inherits them): data movement (permute, expand, slice, pad, concat),
matmul, cumsum, masked_fill, the recurrent layers (a loop over time in the
launch block) and the fused attention chain. Same conventions as refcu.py:
double arithmetic, one thread per output element unless said otherwise.
Python 3.11 stdlib only."""
import refcu as R     # refcu imports this module first: its names are read at call time
from shapes import GT, prod


RNN_UNITS = 32   # (batch, unit) pairs per recurrent step block (a thread per gate each)


class Level3Ops:

    def gather(self, i, n, what, index_lines, cond=None, fill="0.0"):
        """One thread per output element: out[i] = x[src] (or fill where
        `cond` is false); index_lines define `src` from coordinates c<j>."""
        src, ct = self.ref(n["in"][0])
        ob, ot = self.out_decl(n)
        numel = prod(n["shape"])
        body = self.ew_head(numel) + index_lines
        if cond:
            body += "    out[i] = %s((%s) ? (double)x[src] : %s);\n" % (self.cast(n), cond, fill)
        else:
            body += "    out[i] = %s(double)x[src];\n" % self.cast(n)
        self.kernel("n%d_%s" % (i, n["op"]), ["const %s* x" % ct, "%s* out" % ot], body,
                    "ceil_div(%d, %d)" % (numel, R.EW_BLOCK), R.EW_BLOCK, [src, ob], "%s: %s" % (n["out"], what))

    def emit_permute(self, i, n):
        xs = self.shape[n["in"][0]]
        perm = n["perm"]
        st = R.strides(xs)
        lines = R.decompose("i", n["shape"], "c")
        lines += "    const long long src = %s;\n" % " + ".join(
            "c%d * %dLL" % (j, st[p]) for j, p in enumerate(perm) if xs[p] != 1)
        self.gather(i, n, "permute %s of %s" % (perm, xs), lines)

    def emit_expand(self, i, n):
        xs = self.shape[n["in"][0]]
        idx = R.bcast_index(n["shape"], xs, "c")
        used = {int(w[1:]) for w in idx.replace("*", " ").replace("+", " ").split()
                if w.startswith("c") and w[1:].isdigit()}
        lines = R.coord_lines("i", n["shape"], used, "c") + "    const long long src = %s;\n" % idx
        self.gather(i, n, "broadcast %s to %s" % (xs, n["shape"]), lines)

    def emit_slice(self, i, n):
        xs = self.shape[n["in"][0]]
        d, lo, st = n["dim"], n["start"], n.get("step", 1)
        inner = prod(xs[d + 1:])
        w = n["shape"][d]
        lines = ("    const long long o = i / %dLL, r = i %% %dLL;   /* (outer, slice * inner) */\n"
                 "    const long long k = r / %dLL, e = r %% %dLL;\n"
                 "    const long long src = o * %dLL + (%dLL + k * %dLL) * %dLL + e;\n"
                 % (w * inner, w * inner, inner, inner, xs[d] * inner, lo, st, inner))
        self.gather(i, n, "dim %d [%d:%d:%d] of %s" % (d, lo, n["stop"], st, xs), lines)

    def emit_pad(self, i, n):
        xs = self.shape[n["in"][0]]
        st = R.strides(xs)
        lines = R.decompose("i", n["shape"], "c")
        conds, terms = [], []
        for j, (b, a) in enumerate(zip(n["before"], n["after"])):
            e = "c%d - %d" % (j, b) if b else "c%d" % j
            if b or a:
                lines += "    const long long p%d = %s;\n" % (j, e)
                conds.append("p%d >= 0 && p%d < %dLL" % (j, j, xs[j]))
                e = "p%d" % j
            if xs[j] != 1:
                terms.append("(%s) * %dLL" % (e, st[j]))
        cond = " && ".join(conds) or "true"
        lines += "    const bool inside = %s;\n" % cond
        lines += "    const long long src = inside ? %s : 0;\n" % (" + ".join(terms) or "0")
        self.gather(i, n, "zero padding %s / %s of %s" % (n["before"], n["after"], xs), lines, "inside")

    def array(self, ctype, vals, what):
        """A file-scope constant array of vals (one per content), its name."""
        if not hasattr(self, "arrays"):
            self.arrays = {}
        key = (ctype, tuple(vals))
        if key not in self.arrays:
            name = "const_%s%d" % (ctype[0], len(self.arrays))
            fmt = R.lit if ctype == "double" else str
            rows = [", ".join(fmt(v) for v in vals[k:k + 8]) for k in range(0, len(vals), 8)]
            self.kernels.append("/* %s */\n__device__ const %s %s[%d] = {\n    %s\n};\n" % (
                what, ctype, name, len(vals), ",\n    ".join(rows)))
            self.arrays[key] = name
        return self.arrays[key]

    def emit_const(self, i, n):
        ob, ot = self.out_decl(n)
        numel = prod(n["shape"])
        arr = self.array("double", n["values"], "constant values (a table the module computes in __init__)")
        body = self.ew_head(numel) + "    out[i] = %s%s[i];\n" % (self.cast(n), arr)
        self.kernel("n%d_const" % i, ["%s* out" % ot], body, "ceil_div(%d, %d)" % (numel, R.EW_BLOCK), R.EW_BLOCK,
                    [ob], "%s: a constant %s" % (n["out"], n["shape"]))

    def emit_take(self, i, n):
        xs = self.shape[n["in"][0]]
        inner = prod(xs[1:])
        arr = self.array("int", n["index"], "row indices (a constant index tensor of the module)")
        lines = "    const long long src = (long long)%s[i / %dLL] * %dLL + i %% %dLL;\n" % (arr, inner, inner, inner)
        self.gather(i, n, "rows of %s by a constant index" % xs, lines)

    def emit_roll(self, i, n):
        xs = self.shape[n["in"][0]]
        st = R.strides(xs)
        lines = R.decompose("i", n["shape"], "c")
        sh = dict(zip(n["dims"], n["shifts"]))
        terms = []
        for j, d in enumerate(xs):
            e = "c%d" % j
            if j in sh:
                e = "((c%d + %dLL) %% %dLL)" % (j, d - sh[j], d)
            if d != 1:
                terms.append("%s * %dLL" % (e, st[j]))
        lines += "    const long long src = %s;\n" % (" + ".join(terms) or "0")
        self.gather(i, n, "roll by %s over dims %s" % (n["shifts"], n["dims"]), lines)

    def emit_compare(self, i, n):
        src, ct = self.ref(n["in"][0])
        ob, ot = self.out_decl(n)
        numel = prod(n["shape"])
        op = {"ne": "!=", "eq": "=="}[n["fn"]]
        body = self.ew_head(numel) + "    out[i] = %s((double)x[i] %s %s ? 1.0 : 0.0);\n" % (
            self.cast(n), op, R.lit(n["const"]))
        self.kernel("n%d_compare" % i, ["const %s* x" % ct, "%s* out" % ot], body,
                    "ceil_div(%d, %d)" % (numel, R.EW_BLOCK), R.EW_BLOCK, [src, ob],
                    "%s: x %s %s as 1 / 0" % (n["out"], op, n["const"]))

    def emit_masked_fill(self, i, n):
        if len(n["in"]) == 2:
            return self.masked_fill_by(i, n)
        sh = n["shape"]
        r = len(sh)
        lines = R.coord_lines("i", sh, {r - 2, r - 1}, "c")
        lines += "    const long long src = i;\n"
        d = n["diagonal"]
        cmp = ">=" if n["where"] == "upper" else "<="
        v = n["value"]
        fill = R.NEG_INF if v == "-inf" else R.POS_INF if v == "inf" else R.lit(v)
        self.gather(i, n, "fill %s where col - row %s %d" % (v, cmp, d), lines,
                    "!(c%d - c%d %s %dLL)" % (r - 1, r - 2, cmp, d), fill)

    def emit_cumsum(self, i, n):
        xs = self.shape[n["in"][0]]
        d = n["dim"]
        D, inner = xs[d], prod(xs[d + 1:])
        lines = prod(xs) // D
        src, ct = self.ref(n["in"][0])
        ob, ot = self.out_decl(n)
        body = self.ew_head(lines)
        body += "    const long long base = (i / %dLL) * %dLL + i %% %dLL;\n" % (inner, D * inner, inner)
        body += "    double s = 0.0;\n"
        body += "    for (long long j = 0; j < %dLL; ++j) {\n" % D
        body += "        s += (double)x[base + j * %dLL];\n" % inner
        body += "        out[base + j * %dLL] = %ss;\n    }\n" % (inner, self.cast(n))
        self.kernel("n%d_cumsum" % i, ["const %s* x" % ct, "%s* out" % ot], body,
                    "ceil_div(%d, %d)" % (lines, R.EW_BLOCK), R.EW_BLOCK, [src, ob],
                    "%s: cumsum over dim %d of %s, one thread per line, in order" % (n["out"], d, xs))

    def emit_concat(self, i, n):
        """One copy kernel (per operand type) taking up to 8 operands with
        their widths along the dim; a concat of more is several launches."""
        d = n["dim"]
        sh = n["shape"]
        ob, ot = self.out_decl(n)
        outer, inner = prod(sh[:d]), prod(sh[d + 1:])
        groups, off = [], 0
        for t in n["in"]:
            src, ct = self.ref(t)
            w = self.shape[t][d]
            if not groups or groups[-1][0] != ct or len(groups[-1][2]) == 8:
                groups.append((ct, off, []))
            groups[-1][2].append((src, w))
            off += w
        for ct, goff, ops in groups:
            width = sum(w for _, w in ops)
            ops = ops + [(ops[0][0], 0)] * (8 - len(ops))
            body = ("    const long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x;\n"
                    "    if (i >= rows * width * inner) return;\n"
                    "    const long long o = i / (width * inner), r = i %% (width * inner);\n"
                    "    const long long e = r %% inner, cg = r / inner;\n"
                    "    long long c = cg;\n"
                    "    const long long ws[8] = { w0, w1, w2, w3, w4, w5, w6, w7 };\n"
                    "    const %s* xs[8] = { x0, x1, x2, x3, x4, x5, x6, x7 };\n"
                    "    int k = 0;\n"
                    "    while (c >= ws[k]) { c -= ws[k]; ++k; }\n"
                    "    out[(o * total + off + cg) * inner + e] = %s(double)xs[k][(o * ws[k] + c) * inner + e];\n"
                    % (ct, "(float)" if ot == "float" else ""))
            params = ["const %s* x%d" % (ct, k) for k in range(8)] + ["long long w%d" % k for k in range(8)]
            params += ["%s* out" % ot, "long long rows", "long long inner", "long long total", "long long off",
                       "long long width"]
            args = [p for p, _ in ops] + [str(w) for _, w in ops] + [ob, str(outer), str(inner), str(sh[d]),
                                                                     str(goff), str(width)]
            self.kernel("concat8_%s_%s" % (ct, ot), params, body,
                        "ceil_div(%d, %d)" % (outer * width * inner, R.EW_BLOCK), R.EW_BLOCK, args,
                        "concatenation along a dim: up to 8 operands of widths w0.. into out at offset off")

    def emit_matmul(self, i, n):
        a, b = n["in"]
        ash, bsh = self.shape[a], self.shape[b]
        sh = n["shape"]
        r = len(sh)
        K, N = ash[-1], bsh[-1]
        M = sh[-2]
        asrc, act_ = self.ref(a)
        bsrc, bct = self.ref(b)
        ob, ot = self.out_decl(n)
        numel = prod(sh)
        batch = numel // (M * N)
        cast = self.cast(n)

        def base(s):
            al = [1] * (r - len(s)) + list(s)
            st = R.strides(al)
            return " + ".join(["c%d * %dLL" % (j, st[j]) for j in range(r - 2) if al[j] != 1] or ["0"])
        params = ["const %s* a" % act_, "const %s* b" % bct, "%s* out" % ot]
        if not GT.fits(M, N, batch):
            raise R.CodegenError("%s: a %d x %d product %d times is over the tiled GEMM's grid" % (n["out"], M, N, batch))
        pre = ""
        if r > 2:
            pre = R.decompose("(long long)blockIdx.z", sh[:-2], "c")
        pre += "    const long long abase = %s, bbase = %s;\n" % (base(ash), base(bsh))
        pre += "    const long long obase = (long long)blockIdx.z * %dLL;\n" % (M * N)
        epi = lambda acc: ["out[obase + m * %dLL + n] = %s%s;" % (N, cast, acc)]
        body = GT.body(M, lambda m, k: "a[abase + %s * %dLL + %s]" % (m, K, k),
                       lambda k, n_: "b[bbase + %s * %dLL + %s]" % (k, N, n_), True, True, epi,
                       ("%dLL" % M, "%dLL" % N, "%dLL" % K), prelude=pre)
        self.kernel("n%d_matmul" % i, params, body, GT.grid(M, N, batch), GT.THREADS, [asrc, bsrc, ob],
                    "%s = a %s @ b %s: tiles through shared memory, each output's k summed in order"
                    % (n["out"], ash, bsh))

    def emit_rnn(self, i, n):
        """nn.LSTM/GRU/RNN: per layer and direction, the input's gate sums of
        every step at once (a tiled GEMM whose sums start from b_ih, as the
        step's did), then a loop over time in the launch block: a thread per
        (batch, hidden unit, gate) sums the hidden part of its gate, and the
        gate-0 thread of each (batch, unit) updates the state. The step reads
        the previous step's h from the layer's output sequence (so no thread
        overwrites what another reads), c from its own slot. Every sum keeps
        the one-thread loop's order: the same bits."""
        kind, L, H = n["kind"], n["layers"], n["hidden"]
        D = 2 if n["bidirectional"] else 1
        bf = n["batch_first"]
        xs = self.shape[n["in"][0]]
        T_, B = (xs[1], xs[0]) if bf else (xs[0], xs[1])
        G = {"lstm": 4, "gru": 3}.get(kind, 1)
        ins = list(n["in"][1:])
        h0 = ins.pop(0) if n["h0"] else None
        c0 = ins.pop(0) if n["c0"] else None
        per = 4 if n["bias"] else 2
        DH = D * H
        seq = [self.take(T_ * B * DH, i) for _ in range(min(L, 2))]
        cst = self.take(L * D * B * H, i) if kind == "lstm" else None
        hn = self.take(L * D * B * H, i)
        GH = G * H
        gxb = self.take(T_ * B * GH, i)    # one layer-direction's input gate sums, (t, b, gate row)
        launches = []
        for layer in range(L):
            y = seq[layer % 2]
            if layer == 0:
                src, sct = self.ref(n["in"][0])
                In = xs[2]
            else:
                src, sct = seq[(layer - 1) % 2], "double"
                In = DH
            for d in range(D):
                w = [self.ref(t) for t in ins[(layer * D + d) * per:(layer * D + d + 1) * per]]
                name = "n%d_%s_step_l%d_d%d" % (i, kind, layer, d)
                # the input's gate sums of every step: rows (t, b), columns the gate rows
                M_, xa = T_ * B, "x[%s * %dLL + %s]"
                if not GT.fits(M_, GH):
                    raise R.CodegenError("%s: %d steps x batch rows are over the tiled GEMM's grid" % (n["out"], M_))
                if layer == 0 and bf:     # x is (batch, time, input)
                    a_at = lambda m, k: "x[((%s %% %dLL) * %dLL + %s / %dLL) * %dLL + %s]" % (m, B, T_, m, B, In, k)
                else:
                    a_at = lambda m, k, xa=xa, In=In: xa % (m, In, k)
                init = (lambda m, n_: "(double)b_ih[%s]" % n_) if n["bias"] else None
                gparams = ["const %s* x" % sct, "const %s* w_ih" % w[0][1]] + (
                    ["const %s* b_ih" % w[2][1]] if n["bias"] else []) + ["double* gx"]
                gargs = [src, w[0][0]] + ([w[2][0]] if n["bias"] else []) + [gxb]
                gbody = GT.body(M_, a_at, lambda k, n_: "w_ih[%s * %dLL + %s]" % (n_, In, k), True, False,
                                lambda acc: ["gx[m * %dLL + n] = %s;" % (GH, acc)],
                                ("%dLL" % M_, "%dLL" % GH, "%dLL" % In), init=init)
                self.kernel("n%d_%s_x_l%d_d%d" % (i, kind, layer, d), gparams, gbody, GT.grid(M_, GH), GT.THREADS,
                            gargs, "%s: %s layer %d%s, the input's gate sums of all %d steps (b_ih + w_ih x), "
                            "tiled, each sum's k in order" % (n["out"], kind, layer, " backward" if d else "", T_))
                params = ["const double* gxs", "const %s* w_hh" % w[1][1]] + (
                    ["const %s* b_hh" % w[3][1]] if n["bias"] else [])
                args = [gxb, w[1][0]] + ([w[3][0]] if n["bias"] else [])
                if h0:
                    hb, hct = self.ref(h0)
                    params.append("const %s* h0" % hct)
                    args.append(hb)
                if c0:
                    cb, cct = self.ref(c0)
                    params.append("const %s* c0" % cct)
                    args.append(cb)
                params += ["double* y", "double* hn"] + (["double* cst"] if cst else []) + ["int ld", "int t"]
                args += [y, hn] + ([cst] if cst else []) + [str(layer * D + d), "t"]
                body = self.rnn_step(kind, T_, B, H, DH, d, G, n["bias"], h0, c0)
                self.kernel(name, params, body, "ceil_div(%d, %d)" % (B * H, RNN_UNITS), G * RNN_UNITS, args,
                            "%s: %s layer step, a thread per (batch, unit, gate), %d units a block" % (
                                n["out"], kind, RNN_UNITS))
                launches.append(self.launches.pop())
                self.launches.append(("for", "t", T_, [launches.pop()]))
        # the node's result from the last layer's sequence, h_n or c_n
        ob, ot = self.out_decl(n)
        which = n["output"]
        numel = prod(n["shape"])
        body = self.ew_head(numel)
        if which == "output":
            if bf:
                body += "    const long long b = i / %dLL, t = (i / %dLL) %% %dLL, k = i %% %dLL;\n" % (T_ * DH, DH, T_, DH)
                body += "    out[i] = %s(y[(t * %dLL + b) * %dLL + k]);\n" % (self.cast(n), B, DH)
            else:
                body += "    out[i] = %s(y[i]);\n" % self.cast(n)
            src = seq[(L - 1) % 2]
        else:
            body += "    out[i] = %s(y[i]);\n" % self.cast(n)
            src = hn if which == "h_n" else cst
        self.kernel("n%d_%s_%s" % (i, kind, which.replace("_", "")), ["const double* y", "%s* out" % ot], body,
                    "ceil_div(%d, %d)" % (numel, R.EW_BLOCK), R.EW_BLOCK, [src, ob],
                    "%s: the %s's %s" % (n["out"], kind, which))
        for b in seq + [hn, gxb] + ([cst] if cst else []):
            self.free.append(b)

    def rnn_step(self, kind, T_, B, H, DH, d, G, bias, h0, c0):
        U = RNN_UNITS
        body = ("    __shared__ double sgx[%d][%d], sgh[%d][%d];\n" % (G, U, G, U) +
                "    const int g = threadIdx.x / %d, u = threadIdx.x %% %d;   /* gate, unit of the block */\n" % (U, U) +
                "    const long long i = blockIdx.x * (long long)%d + u;\n" % U +
                "    const long long b = i / %dLL, j = i %% %dLL;\n" % (H, H))
        body += "    const long long tt = %s;   /* this step's time index */\n" % ("%d - t" % (T_ - 1) if d else "t")
        body += "    const long long tp = %s;   /* the previous step's */\n" % ("tt + 1" if d else "tt - 1")
        body += "    const long long hb = (tp * %dLL + b) * %dLL + %d;\n" % (B, DH, d * H)
        hprev = ("(t == 0 ? %s : y[hb + k])" % ("(double)h0[(ld * %dLL + b) * %dLL + k]" % (B, H) if h0 else "0.0"))
        body += "    if (i < %dLL) {\n" % (B * H)
        body += "        const long long r = g * %dLL + j;\n" % H
        body += "        double ah = %s;\n" % ("(double)b_hh[r]" if bias else "0.0")
        body += "        for (long long k = 0; k < %dLL; ++k)\n" % H
        body += "            ah += (double)w_hh[r * %dLL + k] * %s;\n" % (H, hprev)
        body += "        sgh[g][u] = ah;\n"
        body += "        sgx[g][u] = gxs[(tt * %dLL + b) * %dLL + r];\n" % (B, G * H)
        body += "    }\n    __syncthreads();\n"
        body += "    if (g != 0 || i >= %dLL) return;\n" % (B * H)
        body += "    double gx[%d], gh[%d];\n" % (G, G)
        body += "    for (int q = 0; q < %d; ++q) {\n" % G
        body += "        gx[q] = sgx[q][u];\n        gh[q] = sgh[q][u];\n    }\n"
        sig = "1.0 / (1.0 + exp(-(%s)))"
        hj = hprev.replace("k]", "j]").replace("hb + k", "hb + j")
        if kind == "lstm":   # gates i, f, g, o
            cprev = "(t == 0 ? %s : cst[ld * %dLL + i])" % (
                "(double)c0[(ld * %dLL + b) * %dLL + j]" % (B, H) if c0 else "0.0", B * H)
            body += "    const double ig = %s, fg = %s;\n" % (sig % "gx[0] + gh[0]", sig % "gx[1] + gh[1]")
            body += "    const double gg = tanh(gx[2] + gh[2]), og = %s;\n" % (sig % "gx[3] + gh[3]")
            body += "    const double c = fg * %s + ig * gg;\n" % cprev
            body += "    cst[ld * %dLL + i] = c;\n" % (B * H)
            body += "    const double h = og * tanh(c);\n"
        elif kind == "gru":  # gates r, z, n
            body += "    const double rg = %s, zg = %s;\n" % (sig % "gx[0] + gh[0]", sig % "gx[1] + gh[1]")
            body += "    const double ng = tanh(gx[2] + rg * gh[2]);\n"
            body += "    const double h = (1.0 - zg) * ng + zg * %s;\n" % hj
        else:
            e = "gx[0] + gh[0]"
            body += "    const double h = %s;\n" % ("tanh(%s)" % e if kind == "rnn_tanh" else "(%s) < 0.0 ? 0.0 : %s" % (e, e))
        body += "    y[(tt * %dLL + b) * %dLL + %d + j] = h;\n" % (B, DH, d * H)
        body += "    if (t == %d) hn[ld * %dLL + i] = h;\n" % (T_ - 1, B * H)
        return body

    def find_attention(self):
        """matmul(q, kT) -> * c -> softmax(-1) -> matmul(., v) chains whose
        score matrix passes limits["fuse_scores"] elements: the last node
        computes the chain in one kernel (the scores never stored)."""
        self.fused, self.attn = set(), {}
        big = self.limits.get("fuse_scores")
        if not big:
            return
        uses = {}
        for n in self.nodes:
            for t in n["in"]:
                uses[t] = uses.get(t, 0) + 1
        at = {n["out"]: k for k, n in enumerate(self.nodes)}
        for k, n in enumerate(self.nodes):
            if n["op"] != "matmul" or n["in"][0] not in at:
                continue
            sm = self.nodes[at[n["in"][0]]]
            if sm["op"] != "softmax" or sm.get("log") or sm["dim"] != len(sm["shape"]) - 1 or sm["in"][0] not in at:
                continue
            sc = self.nodes[at[sm["in"][0]]]
            if sc["op"] != "binary" or sc["fn"] != "mul" or len(sc["in"]) != 1 or sc["in"][0] not in at:
                continue
            mm = self.nodes[at[sc["in"][0]]]
            if mm["op"] != "matmul" or prod(mm["shape"]) <= big:
                continue
            a, b, v = mm["in"][0], mm["in"][1], n["in"][1]
            batch = [self.shape[t][:-2] for t in (a, b, v)] + [n["shape"][:-2]]
            if any(x != batch[0] for x in batch) or any(uses[t["out"]] != 1 for t in (mm, sc, sm)):
                continue
            self.fused |= {at[mm["out"]], at[sc["out"]], at[sm["out"]]}
            self.attn[k] = (a, b, v, sc["const"])
        # the chain's operands stay live until the fused node
        for k, (a, b, v, _) in self.attn.items():
            for t in (a, b, v):
                r = self.root(t)
                self.last[r] = max(self.last.get(r, -1), k)

    def emit_attention(self, i, n):
        a, b, v, c = self.attn[i]
        ash, bsh, vsh = self.shape[a], self.shape[b], self.shape[v]
        L, K, S, D = ash[-2], ash[-1], bsh[-1], vsh[-1]
        rows = prod(n["shape"]) // D
        (asrc, act_), (bsrc, bct), (vsrc, vct) = self.ref(a), self.ref(b), self.ref(v)
        ob, ot = self.out_decl(n)
        self.helpers |= {"sum", "max"}
        score = "%s * dot(q, kb + j, %d, %d)" % (R.lit(c), K, S)
        body = "    __shared__ double sh[256];\n"
        body += "    const long long row = blockIdx.x, bt = row / %dLL;\n" % L
        body += "    const %s* q = a + row * %dLL;\n" % (act_, K)
        body += "    const %s* kb = b + bt * %dLL;\n" % (bct, K * S)
        body += "    const %s* vb = v + bt * %dLL;\n" % (vct, S * D)
        body += "    double m = %s;\n" % R.NEG_INF
        body += "    for (long long j = threadIdx.x; j < %dLL; j += blockDim.x)\n" % S
        body += "        m = max_nan(m, %s);\n" % score
        body += "    m = block_max(m, sh);\n    double z = 0.0;\n"
        body += "    for (long long j = threadIdx.x; j < %dLL; j += blockDim.x)\n" % S
        body += "        z += exp(%s - m);\n" % score
        body += "    z = block_sum(z, sh);\n"
        body += "    double acc[%d];\n    for (int d = 0; d < %d; ++d) acc[d] = 0.0;\n" % (D, D)
        body += "    for (long long j = threadIdx.x; j < %dLL; j += blockDim.x) {\n" % S
        body += "        const double p = exp(%s - m) / z;\n" % score
        body += "        for (int d = 0; d < %d; ++d) acc[d] += p * (double)vb[j * %dLL + d];\n    }\n" % (D, D)
        body += "    for (int d = 0; d < %d; ++d) {\n" % D
        body += "        const double r = block_sum(acc[d], sh);\n"
        body += "        if (threadIdx.x == 0) out[row * %dLL + d] = %sr;\n    }\n" % (D, self.cast(n))
        dot = ("/* q . column j of k^T ([K, S] row-major) */\n"
               "template <class T, class U> static __device__ double dot(const T* q, const U* kj, int K, long long S)\n"
               "{\n    double s = 0.0;\n    for (int k = 0; k < K; ++k) s += (double)q[k] * (double)kj[k * S];\n"
               "    return s;\n}\n")
        if dot not in self.kernels:
            self.kernels.insert(0, dot)
        self.kernel("n%d_attention" % i, ["const %s* a" % act_, "const %s* b" % bct, "const %s* v" % vct,
                                         "%s* out" % ot], body, str(rows), 256, [asrc, bsrc, vsrc, ob],
                    "%s: softmax(%s * a @ b, last dim) @ v in one kernel, one block per row: the %s score "
                    "matrix is never stored (three passes over the keys: max, sum, weighted values)"
                    % (n["out"], c, "x".join(map(str, list(ash[:-1]) + [S]))))


    def masked_fill_by(self, i, n):
        """x where the mask operand (broadcast) is 0, value where it is not."""
        src, ct = self.ref(n["in"][0])
        msrc, mct = self.ref(n["in"][1])
        ob, ot = self.out_decl(n)
        sh = n["shape"]
        numel = prod(sh)
        idx = R.bcast_index(sh, self.shape[n["in"][1]], "c")
        used = {int(w[1:]) for w in idx.replace("*", " ").replace("+", " ").split()
                if w.startswith("c") and w[1:].isdigit()}
        v = n["value"]
        fill = R.NEG_INF if v == "-inf" else R.POS_INF if v == "inf" else R.lit(v)
        body = self.ew_head(numel) + R.coord_lines("i", sh, used, "c")
        body += "    out[i] = %s((double)mask[%s] != 0.0 ? %s : (double)x[i]);\n" % (self.cast(n), idx, fill)
        self.kernel("n%d_masked_fill" % i, ["const %s* x" % ct, "const %s* mask" % mct, "%s* out" % ot], body,
                    "ceil_div(%d, %d)" % (numel, R.EW_BLOCK), R.EW_BLOCK, [src, msrc, ob],
                    "%s: fill %s where the mask is set" % (n["out"], v))
