"""reference.cu from a level-2 operator graph (docs/graph-ir.md): plain
kernels, one or two per node, computing in double. Elementwise nodes: one
thread per output element. Reductions, softmax, norm statistics and
adaptive pools: one block per output value (a row, a statistic), its
threads striding over the elements, then a fixed-order tree in shared
memory. Intermediates live in `scratch double` buffers, reused once dead
(elementwise nodes write over an operand that dies with them); a reshape
is the same buffer seen with another shape. The last node writes the output
as float. Python 3.11 stdlib only."""
import re

from refcu3 import Level3Ops
from shapes import GT, conv_channels, conv_code, pad3, prod

EW_BLOCK = 256
MAX_SCRATCH_BYTES = 8 << 30     # the engine's limit on all scratch buffers together
# the launch block's limits as level 2 was generated (engine/launch.h then)
LEVEL2_LIMITS = {"steps": 64, "scratch": 16, "arena": False}


class CodegenError(Exception):
    pass


def lit(v):
    """A double literal."""
    r = repr(float(v))
    if r in ("inf", "-inf", "nan"):
        raise CodegenError("non-finite constant %s" % r)
    return r


def pow2(n, lo=32, hi=256):
    b = lo
    while b < n and b < hi:
        b *= 2
    return b


def act_expr(n, a):
    """The act node's value of double `a` (statements allowed: returns (pre, expr))."""
    fn = n["fn"]
    if fn == "relu":
        return "", "%s < 0.0 ? 0.0 : %s" % (a, a)
    if fn == "leaky_relu":
        return "", "%s > 0.0 ? %s : %s * %s" % (a, a, a, lit(n["negative_slope"]))
    if fn == "gelu":
        return "", "0.5 * %s * (1.0 + erf(%s * 0.70710678118654752440))" % (a, a)
    if fn == "gelu_tanh":
        return "", ("0.5 * %s * (1.0 + tanh(0.79788456080286535588 * (%s + 0.044715 * %s * %s * %s)))"
                    % (a, a, a, a, a))
    if fn == "sigmoid":
        return "", "1.0 / (1.0 + exp(-%s))" % a
    if fn == "tanh":
        return "", "tanh(%s)" % a
    if fn == "silu":
        return "", "%s / (1.0 + exp(-%s))" % (a, a)
    if fn == "mish":    # x tanh(softplus(x)), softplus with beta 1, threshold 20
        return "", "%s * tanh(%s > 20.0 ? %s : log1p(exp(%s)))" % (a, a, a, a)
    if fn == "softplus":
        b, t = lit(n["beta"]), lit(n["threshold"])
        return "", "%s * %s > %s ? %s : log1p(exp(%s * %s)) / %s" % (b, a, t, a, b, a, b)
    if fn in ("hardswish", "hardsigmoid"):
        pre = ("    double r6 = %s + 3.0;              /* relu6(x + 3) */\n"
               "    if (r6 < 0.0) r6 = 0.0;\n    if (r6 > 6.0) r6 = 6.0;\n" % a)
        return pre, ("%s * r6 / 6.0" % a) if fn == "hardswish" else "r6 / 6.0"
    if fn in ("hardtanh", "clamp"):
        lo = n.get("min_val" if fn == "hardtanh" else "min")
        hi = n.get("max_val" if fn == "hardtanh" else "max")
        pre = "    double c = %s;\n" % a
        if lo is not None:
            pre += "    if (c < %s) c = %s;\n" % (lit(lo), lit(lo))
        if hi is not None:
            pre += "    if (c > %s) c = %s;\n" % (lit(hi), lit(hi))
        return pre, "c"
    if fn == "elu":
        return "", "%s > 0.0 ? %s : %s * expm1(%s)" % (a, a, lit(n["alpha"]), a)
    simple = {"exp": "exp(%s)", "log": "log(%s)", "abs": "fabs(%s)", "neg": "-%s", "sqrt": "sqrt(%s)",
              "rsqrt": "1.0 / sqrt(%s)", "square": "%s * %s", "identity": "%s"}
    if fn in simple:
        return "", simple[fn].replace("%s", a)
    raise CodegenError("act %s" % fn)


def binary_expr(fn, a, b):
    if fn in ("add", "sub", "mul", "div"):
        return "%s %s %s" % (a, {"add": "+", "sub": "-", "mul": "*", "div": "/"}[fn], b)
    if fn == "max":     # NaN propagates, as torch.maximum
        return "(%s != %s || %s != %s) ? %s + %s : (%s > %s ? %s : %s)" % (a, a, b, b, a, b, a, b, a, b)
    if fn == "min":
        return "(%s != %s || %s != %s) ? %s + %s : (%s < %s ? %s : %s)" % (a, a, b, b, a, b, a, b, a, b)
    if fn == "pow":
        return "pow(%s, %s)" % (a, b)
    raise CodegenError("binary %s" % fn)


def decompose(var, shape, prefix, indent="    "):
    """Lines that split flat index `var` of `shape` into prefix0.."""
    r = len(shape)
    if r == 1:
        return "%sconst long long %s0 = %s;\n" % (indent, prefix, var)
    out = "%slong long %s_t = %s;\n" % (indent, prefix, var)
    for j in range(r - 1, 0, -1):
        out += "%sconst long long %s%d = %s_t %% %dLL; %s_t /= %dLL;\n" % (
            indent, prefix, j, prefix, shape[j], prefix, shape[j])
    out += "%sconst long long %s0 = %s_t;\n" % (indent, prefix, prefix)
    return out


def coord_lines(var, shape, dims, prefix, indent="    "):
    """Lines defining prefix<j> = coordinate j of flat `var` in `shape`, for j in dims."""
    st = strides(shape)
    out = ""
    for j in sorted(dims):
        e = var if st[j] == 1 else "%s / %dLL" % (var, st[j])
        if j > 0:
            e = "(%s) %% %dLL" % (e, shape[j]) if st[j] != 1 else "%s %% %dLL" % (e, shape[j])
        out += "%sconst long long %s%d = %s;\n" % (indent, prefix, j, e)
    return out


def strides(shape):
    s, acc = [], 1
    for d in reversed(shape):
        s.append(acc)
        acc *= d
    return list(reversed(s))


def bcast_index(oshape, ishape, prefix):
    """The flat index into a broadcast operand from output coordinates."""
    if list(ishape) == list(oshape):
        return "i"
    if prod(ishape) == 1:
        return "0"
    r = len(oshape)
    al = [1] * (r - len(ishape)) + list(ishape)
    st = strides(al)
    terms = ["%s%d * %dLL" % (prefix, j, st[j]) if st[j] != 1 else "%s%d" % (prefix, j)
             for j in range(r) if al[j] != 1]
    return " + ".join(terms)


def view(shape, red):
    """Merged (size, stride, reduced) dims of a contiguous tensor: a reduction
    over `red` (a set of dims). Size-1 dims vanish."""
    st = strides(shape)
    dims = [(shape[j], st[j], j in red) for j in range(len(shape)) if shape[j] != 1]
    out = []
    for d in dims:
        if out and out[-1][2] == d[2] and out[-1][1] == d[0] * d[1]:
            out[-1] = (out[-1][0] * d[0], d[1], d[2])
        else:
            out.append(d)
    return out


def red_loops(vw, src, ctype):
    """Code for one block per output over view vw: `base` from the block's
    output index, then a strided loop body header reading `v`."""
    kept = [d for d in vw if not d[2]]
    redd = [d for d in vw if d[2]]
    R = prod(d[0] for d in redd)
    head = "    const long long o = blockIdx.x;\n"
    if kept:
        head += decompose("o", [d[0] for d in kept], "k")
        head += "    const long long base = %s;\n" % " + ".join(
            "k%d * %dLL" % (j, d[1]) if d[1] != 1 else "k%d" % j for j, d in enumerate(kept))
    else:
        head += "    const long long base = 0;\n"
    idx = " + ".join("r%d * %dLL" % (j, d[1]) if d[1] != 1 else "r%d" % j for j, d in enumerate(redd)) or "0"
    loop = ("    for (long long r = threadIdx.x; r < %dLL; r += blockDim.x) {\n" % R +
            decompose("r", [d[0] for d in redd], "r", "        ") +
            "        const double v = (double)%s[base + %s];\n" % (src, idx))
    return head, loop, R, prod(d[0] for d in kept)


HELPERS = {
    "sum": r'''/* Block-wide reductions over blockDim.x (a power of two) threads in a fixed
 * order (deterministic); every thread gets the result. */
static __device__ double block_sum(double v, double* sh)
{
    sh[threadIdx.x] = v;
    __syncthreads();
    for (unsigned s = blockDim.x / 2; s > 0; s >>= 1) {
        if (threadIdx.x < s) sh[threadIdx.x] += sh[threadIdx.x + s];
        __syncthreads();
    }
    const double r = sh[0];
    __syncthreads();
    return r;
}
''',
}
for _fn, _cmp in (("max", ">"), ("min", "<")):
    HELPERS[_fn] = (
        "/* NaN propagates, as in PyTorch */\n"
        "static __device__ double %s_nan(double a, double b) { return (a %s b || a != a) ? a : b; }\n\n"
        "static __device__ double block_%s(double v, double* sh)\n{\n"
        "    sh[threadIdx.x] = v;\n    __syncthreads();\n"
        "    for (unsigned s = blockDim.x / 2; s > 0; s >>= 1) {\n"
        "        if (threadIdx.x < s) sh[threadIdx.x] = %s_nan(sh[threadIdx.x], sh[threadIdx.x + s]);\n"
        "        __syncthreads();\n    }\n"
        "    const double r = sh[0];\n    __syncthreads();\n    return r;\n}\n") % (_fn, _cmp, _fn, _fn)

NEG_INF = "(double)__int_as_float((int)0xff800000)"
POS_INF = "(double)__int_as_float(0x7f800000)"


class Gen(Level3Ops):
    def __init__(self, spec, nodes, float_tensors=(), limits=None):
        self.spec = spec
        self.limits = limits or LEVEL2_LIMITS
        self.float_tensors = set(float_tensors)   # intermediates kept in float (size)
        self.nodes = nodes
        self.shape = {}
        self.ctype = {}
        for t in spec["inputs"]:
            self.shape[t["name"]] = resolve(t["shape"], spec["sizes"])
            self.ctype[t["name"]] = "bool" if t["dtype"] == "bool" else "float"
        for n in nodes:
            self.shape[n["out"]] = n["shape"]
        self.kernels, self.launches = [], []
        self.seen = {}
        self.helpers = set()
        self.store = {}       # tensor -> buffer (spec name, or scratch bufK)
        self.bufs = []        # [capacity elements]
        self.btype = []       # "double", or "float" for float_tensors
        self.free = []

    # ---- buffers
    def plan(self):
        """Buffers by liveness: a tensor's buffer is free after its last use."""
        alias = {}
        for n in self.nodes:
            if n["op"] == "reshape" and n["out"] != "out":
                alias[n["out"]] = alias.get(n["in"][0], n["in"][0])
        self.alias = alias
        root = lambda t: alias.get(t, t)
        last = {}
        for i, n in enumerate(self.nodes):
            for t in n["in"]:
                last[root(t)] = i
        self.last = last
        self.root = root

    def take(self, numel, i, inplace_from=(), ty="double"):
        """A scratch buffer of type ty for a new tensor of `numel` elements at node i."""
        for t in inplace_from:
            r = self.root(t)
            b = self.store.get(r)
            if b and b.startswith("buf") and self.last.get(r) == i and prod(self.shape[r]) == numel \
                    and b not in self.free and self.btype[int(b[3:])] == ty:
                return b
        fit = [b for b in self.free if self.btype[int(b[3:])] == ty]
        if fit:
            fit.sort(key=lambda b: (self.bufs[int(b[3:])] < numel, abs(self.bufs[int(b[3:])] - numel)))
            b = fit[0]
            self.free.remove(b)
            k = int(b[3:])
            self.bufs[k] = max(self.bufs[k], numel)
            return b
        self.bufs.append(numel)
        self.btype.append(ty)
        return "buf%d" % (len(self.bufs) - 1)

    def release_after(self, i, keep=()):
        for r, b in list(self.store.items()):
            if b.startswith("buf") and self.last.get(r, -1) == i and r not in keep and b not in self.free \
                    and not any(self.store.get(k) == b for k in keep):
                self.free.append(b)

    def ref(self, t):
        """(buffer, ctype) holding tensor t."""
        r = self.root(t)
        b = self.store[r]
        return b, (self.btype[int(b[3:])] if b.startswith("buf") else self.ctype.get(r, "float"))

    # ---- emission
    def kernel(self, name, params, body, grid, block, args, comment):
        ps = ",\n    ".join(params)
        if self.limits.get("dedup"):
            # one function for kernels that differ only in name and integer
            # constants (level 3): the constants become arguments
            params, body, extra = lift(params, body)
            args = list(args) + extra
            ps = ",\n    ".join(params)
            key = (ps, body)
            if key in self.seen:
                self.launches.append((self.seen[key], grid, block, list(args)))
                return
            self.seen[key] = name
        self.kernels.append("/* %s */\nextern \"C\" __global__ void %s(%s)\n{\n%s}\n" % (comment, name, ps, body))
        self.launches.append((name, grid, block, list(args)))

    def generate(self):
        self.plan()
        self.find_attention()
        for t in self.spec["inputs"]:
            self.store[t["name"]] = t["name"]
        for i, n in enumerate(self.nodes):
            op = n["op"]
            final = n["out"] == "out"
            numel = prod(n["shape"])
            if op == "reshape" and not final:
                continue
            if i in self.fused:
                self.release_after(i)
                continue
            if i in self.attn:
                op = "attention"
            ew = op in ("act", "binary", "dropout", "norm")
            if final:
                self.store["out"] = "out"
            else:
                self.store[n["out"]] = self.take(numel, i, n["in"][:1] if ew else (),
                                                 "float" if n["out"] in self.float_tensors else "double")
            getattr(self, "emit_" + op)(i, n)
            self.release_after(i, keep=(n["out"],))
        return self.render()

    def out_decl(self, n):
        b = self.store[n["out"]]
        return b, ("float" if b == "out" else self.btype[int(b[3:])])

    def cast(self, n):
        return "(float)" if self.out_decl(n)[1] == "float" else ""

    def ew_head(self, numel):
        return ("    const long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x;\n"
                "    if (i >= %dLL) return;\n" % numel)

    def emit_act(self, i, n):
        src, ct = self.ref(n["in"][0])
        ob, ot = self.out_decl(n)
        pre, e = act_expr(n, "a")
        numel = prod(n["shape"])
        body = self.ew_head(numel) + "    const double a = (double)x[i];\n" + pre
        body += "    out[i] = %s(%s);\n" % (self.cast(n), e)
        self.kernel("n%d_%s" % (i, n["fn"]), ["const %s* x" % ct, "%s* out" % ot], body,
                    "ceil_div(%d, %d)" % (numel, EW_BLOCK), EW_BLOCK, [src, ob],
                    "%s: %s" % (n["out"], n["fn"]))

    def emit_binary(self, i, n):
        numel = prod(n["shape"])
        ob, ot = self.out_decl(n)
        oshape = n["shape"]
        ins = n["in"]
        params, args = [], []
        body = self.ew_head(numel)
        idx = [bcast_index(oshape, self.shape[t], "c") for t in ins]
        used = {int(w[1:]) for x in idx for w in x.replace("*", " ").replace("+", " ").split()
                if w.startswith("c") and w[1:].isdigit()}
        body += coord_lines("i", oshape, used, "c")
        for k, t in enumerate(ins):
            src, ct = self.ref(t)
            nm = "ab"[k]
            params.append("const %s* %s_in" % (ct, nm))
            args.append(src)
            body += "    const double %s = (double)%s_in[%s];\n" % (nm, nm, idx[k])
        if len(ins) == 1:
            c = lit(n["const"])
            e = binary_expr(n["fn"], c, "a") if n.get("swap") else binary_expr(n["fn"], "a", c)
        else:
            e = binary_expr(n["fn"], "a", "b")
        body += "    out[i] = %s(%s);\n" % (self.cast(n), e)
        params.append("%s* out" % ot)
        args.append(ob)
        self.kernel("n%d_%s" % (i, n["fn"]), params, body, "ceil_div(%d, %d)" % (numel, EW_BLOCK),
                    EW_BLOCK, args, "%s: %s%s" % (n["out"], n["fn"], " with %s" % n["const"] if len(ins) == 1 else ""))

    def emit_dropout(self, i, n):
        numel = prod(n["shape"])
        src, ct = self.ref(n["in"][0])
        msrc, mct = self.ref(n["in"][1])
        ob, ot = self.out_decl(n)
        p = n["p"]
        body = self.ew_head(numel)
        body += "    const double a = (double)x[i];\n"
        body += "    out[i] = %s(a * (mask[i] ? 1.0 : 0.0) / (1.0 - %s));\n" % (self.cast(n), lit(p))
        self.kernel("n%d_dropout" % i, ["const %s* x" % ct, "const %s* mask" % mct, "%s* out" % ot], body,
                    "ceil_div(%d, %d)" % (numel, EW_BLOCK), EW_BLOCK, [src, msrc, ob],
                    "%s: dropout p = %s, x * mask / (1 - p)" % (n["out"], p))

    def emit_reshape(self, i, n):
        # only the final node: a copy into the output (a view elsewhere)
        numel = prod(n["shape"])
        src, ct = self.ref(n["in"][0])
        body = self.ew_head(numel) + "    out[i] = (float)x[i];\n"
        self.kernel("n%d_copy" % i, ["const %s* x" % ct, "float* out"], body,
                    "ceil_div(%d, %d)" % (numel, EW_BLOCK), EW_BLOCK, [src, "out"],
                    "out: the reshaped result (same elements)")

    def emit_linear(self, i, n):
        xs = self.shape[n["in"][0]]
        K = xs[-1]
        N = n["shape"][-1]
        M = prod(xs) // K
        src, ct = self.ref(n["in"][0])
        ob, ot = self.out_decl(n)
        wsrc, wct = self.ref(n["in"][1])
        params = ["const %s* x" % ct, "const %s* weight" % wct]
        args = [src, wsrc]
        if len(n["in"]) > 2:
            bsrc, bct = self.ref(n["in"][2])
            params.append("const %s* bias" % bct)
            args.append(bsrc)
        params.append("%s* out" % ot)
        args.append(ob)
        bias = len(n["in"]) > 2
        cast = self.cast(n)
        desc = "%s = x (%d x %d) @ weight^T (%d x %d)%s" % (n["out"], M, K, N, K, " + bias" if bias else "")
        if not GT.fits(M, N):
            raise CodegenError("%s: %d rows are over the tiled GEMM's grid" % (n["out"], M))
        epi = lambda acc: ["out[m * %dLL + n] = %s(%s%s);" % (N, cast, acc, " + (double)bias[n]" if bias else "")]
        body = GT.body(M, lambda m, k: "x[%s * %dLL + %s]" % (m, K, k),
                       lambda k, n_: "weight[%s * %dLL + %s]" % (n_, K, k), True, False, epi,
                       ("%dLL" % M, "%dLL" % N, "%dLL" % K))
        self.kernel("n%d_linear" % i, params, body, GT.grid(M, N), GT.THREADS, args,
                    desc + ": tiles through shared memory, each output's k summed in order")

    def emit_conv(self, i, n):
        xs = self.shape[n["in"][0]]
        nd = n["dims"]
        tr = n["transposed"]
        ci, co = xs[1], n["shape"][1]
        src, ct = self.ref(n["in"][0])
        ob, ot = self.out_decl(n)
        wsrc, wct = self.ref(n["in"][1])
        params = ["const %s* x" % ct, "const %s* weight" % wct]
        args = [src, wsrc]
        bias = len(n["in"]) > 2
        if bias:
            bsrc, bct = self.ref(n["in"][2])
            params.append("const %s* bias" % bct)
            args.append(bsrc)
        params.append("%s* out" % ot)
        args.append(ob)
        geo = [("NB", xs[0]), ("CI", ci), ("CO", co), ("GROUPS", n["groups"])]
        for tag, vals in (("I", pad3(xs[2:], 1)), ("O", pad3(n["shape"][2:], 1)), ("K", pad3(n["kernel"], 1)),
                          ("S", pad3(n["stride"], 1)), ("P", pad3(n["padding"], 0)),
                          ("DIL", pad3(n["dilation"], 1))):
            for ax, v in zip("DHW", vals):
                geo.append((tag + ax, v))
        body = "    /* geometry; spatial axes padded to three */\n"
        for k in range(0, len(geo), 6):
            body += "    const int %s;\n" % ", ".join("%s = %d" % g for g in geo[k:k + 6])
        numel = prod(n["shape"])
        R = conv_channels(co // n["groups"], numel)
        cast = self.cast(n)
        body += conv_code(tr, "weight", R, lambda acc, c, o: ["out[%s] = %s(%s%s);" % (
            o, cast, acc, " + (double)bias[%s]" % c if bias else "")])
        self.kernel("n%d_conv%s" % (i, "_transpose" if tr else ""), params, body,
                    "ceil_div(%d, %d)" % (numel // R, EW_BLOCK), EW_BLOCK, args,
                    "%s: Conv%s%dd%s, %d output channel(s) of one position per thread, double accumulation%s" % (
                        n["out"], "Transpose" if tr else "", nd, "" if not bias else " + bias", R,
                        "; transposed: out[o] gathers x[i] where o = i*S - P + k*DIL" if tr else ""))

    def emit_pool(self, i, n):
        xs = self.shape[n["in"][0]]
        src, ct = self.ref(n["in"][0])
        ob, ot = self.out_decl(n)
        dil = n.get("dilation", [1] * n["dims"])
        geo = []
        for tag, vals in (("I", pad3(xs[2:], 1)), ("O", pad3(n["shape"][2:], 1)), ("K", pad3(n["kernel"], 1)),
                          ("S", pad3(n["stride"], 1)), ("P", pad3(n["padding"], 0)), ("DIL", pad3(dil, 1))):
            for ax, v in zip("DHW", vals):
                geo.append((tag + ax, v))
        numel = prod(n["shape"])
        body = "    /* geometry; spatial axes padded to three */\n"
        for k in range(0, len(geo), 6):
            body += "    const int %s;\n" % ", ".join("%s = %d" % g for g in geo[k:k + 6])
        body += ("    const long long idx = blockIdx.x * (long long)blockDim.x + threadIdx.x;\n"
                 "    if (idx >= %dLL) return;\n"
                 "    long long t = idx;\n"
                 "    const int ow = (int)(t %% OW); t /= OW;\n"
                 "    const int oh = (int)(t %% OH); t /= OH;\n"
                 "    const int od = (int)(t %% OD); t /= OD;\n"
                 "    const long long nc = t;   /* n * C + c */\n"
                 "    const %s* xp = x + nc * ((long long)ID * IH * IW);\n"
                 "    const int d0 = od * SD - PD, h0 = oh * SH - PH, w0 = ow * SW - PW;\n") % (numel, ct)
        if n["kind"] == "max":
            body += ("    double m = %s;\n"
                     "    for (int kd = 0; kd < KD; ++kd) {\n"
                     "        const int id = d0 + kd * DILD;\n"
                     "        if (id < 0 || id >= ID) continue;\n"
                     "        for (int kh = 0; kh < KH; ++kh) {\n"
                     "            const int ih = h0 + kh * DILH;\n"
                     "            if (ih < 0 || ih >= IH) continue;\n"
                     "            for (int kw = 0; kw < KW; ++kw) {\n"
                     "                const int iw = w0 + kw * DILW;\n"
                     "                if (iw < 0 || iw >= IW) continue;\n"
                     "                const double v = (double)xp[((long long)id * IH + ih) * IW + iw];\n"
                     "                if (v > m || v != v) m = v;   /* NaN propagates, as in PyTorch */\n"
                     "            }\n        }\n    }\n"
                     "    out[idx] = %sm;\n") % (NEG_INF, self.cast(n))
            what = "MaxPool%dd (padding never wins)" % n["dims"]
        else:
            if not n["count_include_pad"]:
                raise CodegenError("avg pool without count_include_pad")
            body += ("    /* divisor: the window clipped to the padded extent [-P, I + P) */\n"
                     "    const int d1 = min(d0 + KD, ID + PD), h1 = min(h0 + KH, IH + PH), w1 = min(w0 + KW, IW + PW);\n"
                     "    const double divisor = (double)(d1 - d0) * (h1 - h0) * (w1 - w0);\n"
                     "    double s = 0.0;\n"
                     "    for (int id = max(d0, 0); id < min(d1, ID); ++id)\n"
                     "        for (int ih = max(h0, 0); ih < min(h1, IH); ++ih)\n"
                     "            for (int iw = max(w0, 0); iw < min(w1, IW); ++iw)\n"
                     "                s += (double)xp[((long long)id * IH + ih) * IW + iw];\n"
                     "    out[idx] = %s(s / divisor);\n") % self.cast(n)
            what = "AvgPool%dd (count_include_pad)" % n["dims"]
        self.kernel("n%d_%spool" % (i, n["kind"]), ["const %s* x" % ct, "%s* out" % ot], body,
                    "ceil_div(%d, %d)" % (numel, EW_BLOCK), EW_BLOCK, [src, ob],
                    "%s: %s, one thread per output" % (n["out"], what))

    def emit_adaptive_avg_pool(self, i, n):
        xs = self.shape[n["in"][0]]
        src, ct = self.ref(n["in"][0])
        ob, ot = self.out_decl(n)
        self.helpers.add("sum")
        osz, isz = n["shape"][2:], xs[2:]
        nd = len(osz)
        outs = prod(n["shape"])
        # the largest bin decides the block size
        big = prod(max(-(-((o + 1) * s) // os_) - (o * s) // os_ for o in range(os_)) for s, os_ in zip(isz, osz))
        bs = pow2(big)
        body = "    __shared__ double sh[%d];\n" % bs
        body += "    const long long o = blockIdx.x;\n"
        body += decompose("o", n["shape"], "c")
        body += "    /* bins: floor(i * S / O) .. ceil((i + 1) * S / O) */\n"
        for j in range(nd):
            s, os_ = isz[j], osz[j]
            body += ("    const long long lo%d = c%d * %dLL / %dLL, hi%d = ((c%d + 1) * %dLL + %dLL) / %dLL;\n"
                     % (j, j + 2, s, os_, j, j + 2, s, os_ - 1, os_))
        body += "    const long long n%s;\n" % ", n".join("%d = hi%d - lo%d" % (j, j, j) for j in range(nd))
        body += "    const long long count = %s;\n" % " * ".join("n%d" % j for j in range(nd))
        body += "    const long long base = (c0 * %dLL + c1) * %dLL;\n" % (xs[1], prod(isz))
        body += "    double s = 0.0;\n"
        body += "    for (long long r = threadIdx.x; r < count; r += blockDim.x) {\n"
        body += "        long long u = r;\n"
        for j in range(nd - 1, 0, -1):
            body += "        const long long b%d = lo%d + u %% n%d; u /= n%d;\n" % (j, j, j, j)
        body += "        const long long b0 = lo0 + u;\n"
        st = strides(isz)
        body += "        s += (double)x[base + %s];\n" % " + ".join("b%d * %dLL" % (j, st[j]) for j in range(nd))
        body += "    }\n    s = block_sum(s, sh);\n"
        body += "    if (threadIdx.x == 0) out[o] = %s(s / (double)count);\n" % self.cast(n)
        self.kernel("n%d_adaptive_avg_pool" % i, ["const %s* x" % ct, "%s* out" % ot], body, str(outs), bs,
                    [src, ob], "%s: AdaptiveAvgPool to %s, one block per output" % (n["out"], osz))

    def emit_reduce(self, i, n):
        xs = self.shape[n["in"][0]]
        src, ct = self.ref(n["in"][0])
        ob, ot = self.out_decl(n)
        r = len(xs)
        red = set(d + r if d < 0 else d for d in n["dims"])
        vw = view(xs, red)
        head, loop, R, outs = red_loops(vw, "x", ct)
        if outs != prod(n["shape"]):
            raise CodegenError("reduce: %d outputs, shape %s" % (outs, n["shape"]))
        bs = pow2(R)
        fn = n["fn"]
        body = "    __shared__ double sh[%d];\n" % bs + head
        c = self.cast(n)
        self.helpers |= {"sum"} if fn in ("sum", "mean") else {fn} if fn in ("max", "min") else {"sum", "max"}
        if fn in ("sum", "mean"):
            body += "    double s = 0.0;\n" + loop + "        s += v;\n    }\n    s = block_sum(s, sh);\n"
            res = "s" if fn == "sum" else "s / %d.0" % R
        elif fn in ("max", "min"):
            body += "    double m = %s;\n" % (NEG_INF if fn == "max" else POS_INF)
            body += loop + "        m = %s_nan(m, v);\n    }\n    m = block_%s(m, sh);\n" % (fn, fn)
            res = "m"
        elif fn == "logsumexp":
            body += "    double m = %s;\n" % NEG_INF
            body += loop + "        m = max_nan(m, v);\n    }\n    m = block_max(m, sh);\n"
            body += "    const double shift = (m == %s || m == %s) ? 0.0 : m;   /* as PyTorch */\n" % (NEG_INF, POS_INF)
            body += "    double s = 0.0;\n" + loop + "        s += exp(v - shift);\n    }\n    s = block_sum(s, sh);\n"
            res = "log(s) + shift"
        else:
            raise CodegenError("reduce %s" % fn)
        body += "    if (threadIdx.x == 0) out[o] = %s(%s);\n" % (c, res)
        self.kernel("n%d_%s" % (i, fn), ["const %s* x" % ct, "%s* out" % ot], body, str(outs), bs, [src, ob],
                    "%s: %s over dims %s of %s (%d values each), one block per output" % (
                        n["out"], fn, sorted(red), xs, R))

    def emit_softmax(self, i, n):
        xs = self.shape[n["in"][0]]
        src, ct = self.ref(n["in"][0])
        ob, ot = self.out_decl(n)
        self.helpers |= {"sum", "max"}
        d = n["dim"] + len(xs) if n["dim"] < 0 else n["dim"]
        D, inner = xs[d], prod(xs[d + 1:])
        rows = prod(xs) // D
        bs = pow2(D)
        body = "    __shared__ double sh[%d];\n" % bs
        body += "    const long long row = blockIdx.x;     /* (outer, inner) */\n"
        body += "    const long long base = (row / %dLL) * %dLL + row %% %dLL;\n" % (inner, D * inner, inner)
        body += "    double m = %s;\n" % NEG_INF
        body += "    for (long long j = threadIdx.x; j < %dLL; j += blockDim.x)\n" % D
        body += "        m = max_nan(m, (double)x[base + j * %dLL]);\n" % inner
        body += "    m = block_max(m, sh);\n    double s = 0.0;\n"
        body += "    for (long long j = threadIdx.x; j < %dLL; j += blockDim.x)\n" % D
        body += "        s += exp((double)x[base + j * %dLL] - m);\n" % inner
        body += "    s = block_sum(s, sh);\n"
        body += "    for (long long j = threadIdx.x; j < %dLL; j += blockDim.x)\n" % D
        if n.get("log"):
            body += "        out[base + j * %dLL] = %s((double)x[base + j * %dLL] - m - log(s));\n" % (inner, self.cast(n), inner)
        else:
            body += "        out[base + j * %dLL] = %s(exp((double)x[base + j * %dLL] - m) / s);\n" % (inner, self.cast(n), inner)
        self.kernel("n%d_%ssoftmax" % (i, "log_" if n.get("log") else ""), ["const %s* x" % ct, "%s* out" % ot],
                    body, str(rows), bs, [src, ob],
                    "%s: softmax over dim %d of %s, one block per row" % (n["out"], d, xs))

    def emit_norm(self, i, n):
        xs = self.shape[n["in"][0]]
        src, ct = self.ref(n["in"][0])
        kind = n["kind"]
        self.helpers.add("sum")
        N, C = xs[0], xs[1] if len(xs) > 1 else 1
        S = prod(xs[2:])
        if kind == "batch":
            vshape, red = [N, C, S], {0, 2}
            stat = "c1"
        elif kind == "group":
            G = n["groups"]
            vshape, red = [N, G, (C // G) * S], {2}
            stat = "c0 * %dLL + c1 / %dLL" % (G, C // G)
        elif kind == "instance":
            vshape, red = [N * C, S], {1}
            stat = "c0 * %dLL + c1" % C
        elif kind == "layer":
            inner = prod(xs[len(xs) - n["normalized_ndim"]:])
            vshape, red = [prod(xs) // inner, inner], {1}
            stat = "i / %dLL" % inner
        else:
            raise CodegenError("norm %s" % kind)
        vw = view(vshape, red)
        head, loop, R, nstat = red_loops(vw, "x", ct)
        # statistics: mean and biased variance, two passes
        sb = self.take(2 * nstat, i)
        bs = pow2(R)
        body = "    __shared__ double sh[%d];\n" % bs + head
        body += "    double s = 0.0;\n" + loop + "        s += v;\n    }\n"
        body += "    const double mean = block_sum(s, sh) / %d.0;\n" % R
        body += "    double q = 0.0;\n" + loop + "        q += (v - mean) * (v - mean);\n    }\n"
        body += "    const double var = block_sum(q, sh) / %d.0;\n" % R
        body += "    if (threadIdx.x == 0) {\n        stats[2 * o] = mean;\n        stats[2 * o + 1] = var;\n    }\n"
        self.kernel("n%d_norm_stats" % i, ["const %s* x" % ct, "double* stats"], body, str(nstat), bs, [src, sb],
                    "%s: %s norm statistics (mean, biased variance) of %d values each, one block per statistic"
                    % (n["out"], kind, R))
        # apply
        ob, ot = self.out_decl(n)
        numel = prod(xs)
        params, args = ["const %s* x" % ct, "const double* stats"], [src, sb]
        body = self.ew_head(numel)
        if kind != "layer":
            body += coord_lines("i", xs[:2] + [S], {1} if kind == "batch" else {0, 1}, "c")
        body += "    const long long st = %s;\n" % stat
        body += "    double y = ((double)x[i] - stats[2 * st]) / sqrt(stats[2 * st + 1] + %s);\n" % lit(n["eps"])
        pidx = "c1" if kind != "layer" else "i %% %dLL" % prod(xs[len(xs) - n["normalized_ndim"]:])
        if len(n["in"]) > 1:
            wsrc, wct = self.ref(n["in"][1])
            params.append("const %s* weight" % wct)
            args.append(wsrc)
            body += "    y *= (double)weight[%s];\n" % pidx
        if len(n["in"]) > 2:
            bsrc, bct = self.ref(n["in"][2])
            params.append("const %s* bias" % bct)
            args.append(bsrc)
            body += "    y += (double)bias[%s];\n" % pidx
        body += "    out[i] = %sy;\n" % self.cast(n)
        params.append("%s* out" % ot)
        args.append(ob)
        self.kernel("n%d_norm_apply" % i, params, body, "ceil_div(%d, %d)" % (numel, EW_BLOCK), EW_BLOCK, args,
                    "%s: (x - mean) / sqrt(var + eps)%s" % (n["out"], " * weight + bias" if len(n["in"]) > 2 else ""))
        self.free.append(sb)

    def render(self):
        lim = self.limits
        arena = len(self.bufs) > lim["scratch"] and lim.get("arena")
        if len(self.bufs) > lim["scratch"] and not arena:
            raise CodegenError("%d scratch buffers (the launch block allows %d)" % (len(self.bufs), lim["scratch"]))
        steps = count_steps(self.launches)
        if steps > lim["steps"]:
            raise CodegenError("%d launches (the launch block allows %d)" % (steps, lim["steps"]))
        total = sum(c * (8 if t == "double" else 4) for c, t in zip(self.bufs, self.btype))
        if total > MAX_SCRATCH_BYTES:
            raise CodegenError("scratch %d bytes over the engine's 8 GiB" % total)
        out = ""
        for h in ("sum", "max", "min"):
            if h in self.helpers:
                out += HELPERS[h] + "\n"
        out += "\n".join(self.kernels)
        if arena:
            # more buffers than the launch block declares: regions of one
            # scratch array per type, passed as `arena + offset`
            where, size = {}, {"double": 0, "float": 0}
            for k, (c, t) in enumerate(zip(self.bufs, self.btype)):
                where["buf%d" % k] = (t, size[t])
                size[t] += c
            aname = {"double": "arena", "float": "arenaf"}
            launch = ["scratch %s %s[%d];" % (t, aname[t], size[t]) for t in ("double", "float") if size[t]]

            def arg(a):
                if a not in where:
                    return a
                t, off = where[a]
                return aname[t] + (" + %d" % off if off else "")
        else:
            launch = ["scratch %s buf%d[%d];" % (t, k, c) for k, (c, t) in enumerate(zip(self.bufs, self.btype))]

            def arg(a):
                return a
        launch += launch_lines(self.launches, arg, "")
        return out, "\n".join(launch), total


GEO_LINE = re.compile(r"^(    const int )([A-Z][^;]*);$", re.M)
LIFT_MAX_ARGS = 60       # the launch block allows 64 arguments


def lift(params, body):
    """(params, body, extra args): the integer constants of a kernel body
    (geometry `const int NB = 128, ...` lines, `123LL` literals, `/ 123.0`
    divisors) as parameters, so that kernels differing only in sizes share
    one function. Unchanged when the arguments would pass the limit."""
    vals = []

    def geo(m):
        parts = []
        for item in m.group(2).split(", "):
            nm, _, v = item.partition(" = ")
            if v.isdigit():
                vals.append(("int", v))
                parts.append("%s = lc%d" % (nm, len(vals) - 1))
            else:
                parts.append(item)
        return m.group(1) + ", ".join(parts) + ";"

    def ll(m):
        vals.append(("long long", m.group(1)))
        return "lc%d" % (len(vals) - 1)

    def dbl(m):
        vals.append(("double", m.group(1) + ".0"))
        return "lc%d" % (len(vals) - 1)
    b = GEO_LINE.sub(geo, body)
    b = re.sub(r"\b(\d+)LL\b", ll, b)
    b = re.sub(r"(?<![\w.])(\d{2,})\.0\b", dbl, b)
    if not vals or len(params) + len(vals) > LIFT_MAX_ARGS:
        return params, body, []
    return params + ["%s lc%d" % (t, k) for k, (t, _) in enumerate(vals)], b, [v for _, v in vals]


def count_steps(launches):
    n = 0
    for l in launches:
        n += 1 + (count_steps(l[3]) if l[0] == "for" else 0)
    return n


def launch_lines(launches, arg, ind):
    """The launch block's statements; ("for", var, count, body) is a loop."""
    out = []
    for l in launches:
        if l[0] == "for":
            _, var, count, body = l
            out.append("%sfor (int %s = 0; %s < %d; ++%s) {" % (ind, var, var, count, var))
            out += launch_lines(body, arg, ind + "    ")
            out.append(ind + "}")
        else:
            name, grid, block, args = l
            out.append("%s%s<<<%s, %d>>>(%s);" % (ind, name, grid, block, ", ".join(arg(a) for a in args)))
    return out


def resolve(shape, sizes):
    return [sizes[d] if isinstance(d, str) else d for d in shape]


def generate(spec, nodes, header, limits=None):
    """(reference.cu text, float intermediates). Intermediates are double; when
    they would not fit the engine's scratch limit, the largest are float (as
    PyTorch stores them), largest first, until they fit."""
    big = sorted((n for n in nodes if n["out"] != "out" and n["op"] != "reshape"),
                 key=lambda n: -prod(n["shape"]))
    for k in range(len(big) + 1):
        fl = [n["out"] for n in big[:k]]
        try:
            code, launch, _ = Gen(spec, nodes, fl, limits).generate()
        except CodegenError as e:
            if "8 GiB" not in str(e):
                raise
            continue
        if fl:
            header += ("// Scratch limit: %s kept in float (rounded once, as PyTorch stores them); the\n"
                       "// arithmetic is double.\n" % ", ".join(fl))
        return header + code + "\n/*@launch\n" + launch + "\n@*/\n", fl
    raise CodegenError("scratch over the engine's 8 GiB even in float")
