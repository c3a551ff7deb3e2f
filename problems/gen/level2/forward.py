"""forward()'s statements -> graph nodes (docs/graph-ir.md), with shape
inference and the names of the dims that stay named (batch_size,
out_channels...). Used by parse.py."""
import ast

from parse import ParseError, V, dotted, fail, tup
from shapes import conv_out, convt_out, pool_out, prod


class T:
    """A tensor of the graph (an input, a parameter, or a node's out)."""

    def __init__(self, name):
        self.name = name


class C:
    """A number known at parse time (v: the V it was read from, for roles)."""

    def __init__(self, value, v=None):
        self.value, self.v = value, v


def sym(v):
    return v.sym if isinstance(v.sym, str) else None


class Pair:
    """torch.max/min(x, dim=...): (values, indices); only values is used."""

    def __init__(self, t):
        self.t = t


class Transposed:
    def __init__(self, t):
        self.t = t


ACTS = {  # torch / F name -> (act fn, extra attrs from args)
    "relu": "relu", "sigmoid": "sigmoid", "tanh": "tanh", "mish": "mish",
    "hardswish": "hardswish", "gelu": "gelu", "softplus": "softplus",
    "leaky_relu": "leaky_relu", "hardtanh": "hardtanh", "exp": "exp", "abs": "abs",
}
LAYER_ACTS = {"ReLU": "relu", "Tanh": "tanh", "Sigmoid": "sigmoid", "Mish": "mish",
              "Hardswish": "hardswish", "GELU": "gelu", "LeakyReLU": "leaky_relu",
              "Hardtanh": "hardtanh"}
BINOPS = {ast.Add: "add", ast.Sub: "sub", ast.Mult: "mul", ast.Div: "div"}


class Fwd:
    def __init__(self, m):
        self.m = m
        self.scope = {}

    # ---- graph
    def shape(self, t):
        return self.m.tensors[t.name][0]

    def names(self, t):
        return self.m.tensors[t.name][1]

    def add(self, node, op, ins, shape, names, **attrs):
        m = self.m
        if any(d <= 0 for d in shape):
            fail(node, "%s gives an empty shape %s" % (op, shape))
        name = "t%d" % len(m.nodes)
        n = {"out": name, "op": op, "in": [t.name for t in ins], "shape": list(shape)}
        n.update(attrs)
        m.nodes.append(n)
        m.tensors[name] = (list(shape), list(names))
        return T(name)

    def param(self, attr):
        m = self.m
        p = m.params[attr]
        if attr not in m.tensors:
            m.tensors[attr] = (list(p.shape), list(p.names))
            m.used_params.append(attr)
        return T(attr)

    def layer_param(self, layer, which, shape, names):
        m = self.m
        name = "%s_%s" % (layer.attr, which)
        if name not in m.tensors:
            m.tensors[name] = (list(shape), list(names))
            m.used_params.append(name)
        return T(name)

    # ---- expressions
    def const(self, node, role=None):
        v = self.expr(node)
        if not isinstance(v, C):
            fail(node, "a constant is needed: %s" % ast.unparse(node))
        if role and v.v is not None:
            self.m.role(v.v, role)
        return v.value

    def tensor(self, node):
        v = self.expr(node)
        if not isinstance(v, T):
            fail(node, "a tensor is needed: %s" % ast.unparse(node))
        return v

    def expr(self, node):
        m = self.m
        if isinstance(node, ast.Constant):
            return C(node.value)
        if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.USub):
            v = self.expr(node.operand)
            if isinstance(v, C):
                return C(-v.value)
            return self.add(node, "act", [v], self.shape(v), self.names(v), fn="neg")
        if isinstance(node, ast.Name):
            if node.id in self.scope:
                return self.scope[node.id]
            if node.id in m.env and not isinstance(m.env[node.id], tuple):
                note = "forward() reads the module-level global %s (not an attribute)." % node.id
                if note not in m.notes:
                    m.notes.append(note)
                return C(m.env[node.id], V(m.env[node.id], node.id))
            fail(node, "unknown name %s" % node.id)
        if isinstance(node, (ast.Tuple, ast.List)):
            return C(tuple(self.const(e) for e in node.elts))
        if isinstance(node, ast.Attribute):
            if dotted(node.value) == "self":
                a = node.attr
                if a in m.params:
                    return self.param(a)
                if a in m.plain:
                    return C(m.plain[a].value, m.plain[a])
                if a in m.layers:
                    return m.layers[a]
                fail(node, "unknown attribute self.%s" % a)
            base = self.expr(node.value)
            if node.attr == "T" and isinstance(base, T):
                return Transposed(base)
            if node.attr == "shape" and isinstance(base, T):
                return C(tuple(self.shape(base)))
            if node.attr == "values" and isinstance(base, Pair):
                return base.t
            if node.attr == "device":
                return C(None)
            fail(node, "unsupported attribute .%s" % node.attr)
        if isinstance(node, ast.Subscript):
            base = self.expr(node.value)
            if isinstance(base, Pair) and isinstance(node.slice, ast.Constant) and node.slice.value == 0:
                return base.t
            fail(node, "unsupported subscript")
        if isinstance(node, ast.BinOp):
            if type(node.op) not in BINOPS:
                fail(node, "unsupported operator")
            return self.binary(node, BINOPS[type(node.op)], self.expr(node.left), self.expr(node.right))
        if isinstance(node, ast.Call):
            return self.call(node)
        fail(node, "unsupported expression %s" % ast.unparse(node))

    def binary(self, node, fn, a, b):
        if isinstance(a, C) and isinstance(b, C):
            fail(node, "constant arithmetic")
        for c in (a, b):
            if isinstance(c, C) and c.v is not None:
                self.m.role(c.v, "scalar")
        if isinstance(b, C):
            return self.add(node, "binary", [a], self.shape(a), self.names(a), fn=fn,
                            const=float(b.value))
        if isinstance(a, C):
            return self.add(node, "binary", [b], self.shape(b), self.names(b), fn=fn,
                            const=float(a.value), swap=True)
        sa, sb = self.shape(a), self.shape(b)
        na, nb = self.names(a), self.names(b)
        r = max(len(sa), len(sb))
        sa2, sb2 = [1] * (r - len(sa)) + sa, [1] * (r - len(sb)) + sb
        na2, nb2 = [None] * (r - len(na)) + na, [None] * (r - len(nb)) + nb
        shape, names = [], []
        for x, y, nx, ny in zip(sa2, sb2, na2, nb2):
            if x != y and x != 1 and y != 1:
                fail(node, "shapes %s and %s do not broadcast" % (sa, sb))
            d = max(x, y)
            shape.append(d)
            cands = [n for n, v in ((nx, x), (ny, y)) if v == d and n]
            exact = [n for n in cands if not n.startswith("~")]
            names.append((exact or cands or [None])[0])
        return self.add(node, "binary", [a, b], shape, names, fn=fn)

    def kw(self, node, names, defaults=None):
        """Binds a call's arguments (after the first) to names."""
        out = dict(defaults or {})
        for n, e in zip(names, node.args[1:]):
            out[n] = e
        for k in node.keywords:
            out[k.arg] = k.value
        return out

    def dims_arg(self, node, x):
        d = self.const(node, "size")
        ds = list(d) if isinstance(d, tuple) else [d]
        r = len(self.shape(x))
        return [x_ + r if x_ < 0 else x_ for x_ in ds]

    def call(self, node):
        fn = dotted(node.func)
        f = node.func
        # a layer of the module
        if isinstance(f, ast.Attribute) and dotted(f.value) == "self" and f.attr in self.m.layers:
            if len(node.args) != 1:
                fail(node, "a layer takes one tensor")
            return self.apply_layer(node, self.m.layers[f.attr], self.tensor(node.args[0]))
        # methods on tensors
        if isinstance(f, ast.Attribute) and fn not in FUNCS and not (fn or "").startswith(("torch.", "F.")):
            base = self.expr(f.value)
            return self.method(node, f.attr, base)
        short = fn
        for p in ("torch.nn.functional.", "F.", "torch."):
            if fn and fn.startswith(p):
                short = fn[len(p):]
                break
        if short in FUNCS:
            return FUNCS[short](self, node)
        fail(node, "unsupported call %s" % fn)

    # ---- tensor methods
    def method(self, node, name, x):
        if name in ("clone", "detach", "contiguous"):
            return x
        if not isinstance(x, T):
            fail(node, "method .%s on a non-tensor" % name)
        sh, nm = self.shape(x), self.names(x)
        if name == "unsqueeze":
            d = self.const(node.args[0])
            d = d + len(sh) + 1 if d < 0 else d
            return self.add(node, "reshape", [x], sh[:d] + [1] + sh[d:], nm[:d] + [None] + nm[d:])
        if name == "squeeze":
            d = self.const(node.args[0])
            d = d + len(sh) if d < 0 else d
            if sh[d] != 1:
                return x      # PyTorch: squeezing a dim that is not 1 is a no-op
            return self.add(node, "reshape", [x], sh[:d] + sh[d + 1:], nm[:d] + nm[d + 1:])
        if name == "view" or name == "reshape":
            dims = [self.const(a) for a in node.args]
            if len(dims) == 1 and isinstance(dims[0], tuple):
                dims = list(dims[0])
            if dims.count(-1) == 1:
                rest = prod(d for d in dims if d != -1)
                dims[dims.index(-1)] = prod(sh) // rest
            if prod(dims) != prod(sh):
                fail(node, "view %s of %s" % (dims, sh))
            return self.add(node, "reshape", [x], dims, reshape_names(sh, nm, dims))
        if name in ("mean", "sum"):
            return reduce_call(self, node, name, x, 0)
        fail(node, "unsupported method .%s" % name)

    # ---- layers
    def apply_layer(self, node, L, x):
        cls, sh, nm = L.cls, self.shape(x), self.names(x)
        m = self.m
        if cls == "Linear":
            K, N = L.a("in_features"), L.a("out_features")
            if sh[-1] != K:
                fail(node, "Linear(%d, ...) on %s" % (K, sh))
            nsym, ksym = sym(L.args["out_features"]), sym(L.args["in_features"])
            ins = [x, self.layer_param(L, "weight", [N, K], [nsym, ksym])]
            if L.a("bias"):
                ins.append(self.layer_param(L, "bias", [N], [nsym]))
            return self.add(node, "linear", ins, sh[:-1] + [N], nm[:-1] + [nsym])
        if cls.startswith("Conv"):
            transposed = "Transpose" in cls
            nd = int(cls[-2])
            if len(sh) != nd + 2:
                fail(node, "%s on a %d-D tensor" % (cls, len(sh)))
            ci, co, g = L.a("in_channels"), L.a("out_channels"), L.a("groups")
            if sh[1] != ci or ci % g or co % g:
                fail(node, "%s channels %d/%d groups %d on %s" % (cls, ci, co, g, sh))
            k, s, p, d = (tup(L.a(n), nd) for n in ("kernel_size", "stride", "padding", "dilation"))
            op = tup(L.a("output_padding"), nd) if transposed else [0] * nd
            if transposed:
                outs = [convt_out(n, *a) for n, a in zip(sh[2:], zip(k, s, p, d, op))]
                wshape = [ci, co // g] + k
            else:
                outs = [conv_out(n, *a) for n, a in zip(sh[2:], zip(k, s, p, d))]
                wshape = [co, ci // g] + k
            csym, isym = sym(L.args["out_channels"]), sym(L.args["in_channels"])
            wn = ([isym, csym if g == 1 else None] if transposed else [csym, isym if g == 1 else None]) + [None] * nd
            ins = [x, self.layer_param(L, "weight", wshape, wn)]
            if L.a("bias"):
                ins.append(self.layer_param(L, "bias", [co], [csym]))
            return self.add(node, "conv", ins, sh[:1] + [co] + outs, nm[:1] + [csym] + derived(nm[2:]),
                            dims=nd, kernel=k, stride=s, padding=p, dilation=d, groups=g,
                            transposed=transposed, output_padding=op)
        if cls.startswith(("MaxPool", "AvgPool")):
            nd = int(cls[-2])
            kind = "max" if cls.startswith("Max") else "avg"
            k = tup(L.a("kernel_size"), nd)
            s = tup(L.a("stride") if L.a("stride") is not None else L.a("kernel_size"), nd)
            p = tup(L.a("padding"), nd)
            d = tup(L.a("dilation"), nd) if kind == "max" else [1] * nd
            ceil = bool(L.a("ceil_mode"))
            if len(sh) != nd + 2:
                fail(node, "%s on %s" % (cls, sh))
            outs = [pool_out(n, *a, ceil) for n, a in zip(sh[2:], zip(k, s, p, d))]
            attrs = dict(kind=kind, dims=nd, kernel=k, stride=s, padding=p)
            if kind == "max":
                attrs.update(dilation=d, ceil_mode=ceil)
            else:
                attrs.update(ceil_mode=ceil, count_include_pad=bool(L.a("count_include_pad")))
            return self.add(node, "pool", [x], sh[:2] + outs, nm[:2] + derived(nm[2:]), **attrs)
        if cls.startswith("AdaptiveAvgPool"):
            nd = int(cls[-2])
            return adaptive(self, node, x, tup(L.a("output_size"), nd))
        if cls.startswith(("BatchNorm", "InstanceNorm")) or cls in ("GroupNorm", "LayerNorm"):
            return self.norm(node, L, x)
        if cls in LAYER_ACTS:
            fnm = LAYER_ACTS[cls]
            attrs = {}
            if cls == "LeakyReLU":
                attrs["negative_slope"] = float(L.a("negative_slope"))
            if cls == "Hardtanh":
                attrs.update(min_val=float(L.a("min_val")), max_val=float(L.a("max_val")))
            if cls == "GELU" and L.a("approximate") == "tanh":
                fnm = "gelu_tanh"
            return self.add(node, "act", [x], sh, nm, fn=fnm, **attrs)
        if cls == "Softmax":
            d = L.a("dim")
            return self.add(node, "softmax", [x], sh, nm, dim=d + len(sh) if d < 0 else d, log=False)
        if cls == "Dropout":
            return dropout(self, node, x, float(L.a("p")))
        fail(node, "unsupported layer %s" % cls)

    def norm(self, node, L, x):
        cls, sh, nm = L.cls, self.shape(x), self.names(x)
        m = self.m
        eps = float(L.a("eps"))
        ins = [x]
        if cls.startswith("BatchNorm"):
            nf = L.a("num_features")
            if len(sh) < 2 or sh[1] != nf:
                fail(node, "%s(%d) on %s" % (cls, nf, sh))
            attrs = dict(kind="batch")
            if L.a("affine"):
                ins += [self.layer_param(L, "weight", [nf], [nm[1]]), self.layer_param(L, "bias", [nf], [nm[1]])]
        elif cls.startswith("InstanceNorm"):
            nf = L.a("num_features")
            attrs = dict(kind="instance")
            if sh[1] != nf:
                if L.a("affine"):
                    fail(node, "%s(%d) with affine on %s" % (cls, nf, sh))
                m.notes.append("%s(%d) is applied to a tensor with %d channel%s (%s): without affine "
                               "parameters PyTorch only warns, and normalizes each (n, c) over the "
                               "remaining dims." % (cls, nf, sh[1], "s" if sh[1] != 1 else "",
                                                     "x".join(map(str, sh))))
            if L.a("affine"):
                ins += [self.layer_param(L, "weight", [nf], [nm[1]]), self.layer_param(L, "bias", [nf], [nm[1]])]
        elif cls == "GroupNorm":
            G, C = L.a("num_groups"), L.a("num_channels")
            if sh[1] != C or C % G:
                fail(node, "GroupNorm(%d, %d) on %s" % (G, C, sh))
            attrs = dict(kind="group", groups=G)
            if L.a("affine"):
                ins += [self.layer_param(L, "weight", [C], [nm[1]]), self.layer_param(L, "bias", [C], [nm[1]])]
        else:
            ns = L.a("normalized_shape")
            ns = list(ns) if isinstance(ns, (tuple, list)) else [ns]
            k = len(ns)
            if sh[-k:] != ns:
                fail(node, "LayerNorm(%s) on %s" % (ns, sh))
            attrs = dict(kind="layer", normalized_ndim=k)
            if k == 1 and len(sh) > 2:
                m.notes.append("LayerNorm(%d) normalizes the LAST dim of the %s tensor (of size %d, equal "
                               "to out_channels by coincidence of the sizes), not the channels."
                               % (ns[0], "x".join(map(str, sh)), sh[-1]))
            if L.a("elementwise_affine"):
                ins.append(self.layer_param(L, "weight", ns, nm[-k:]))
                if L.a("bias"):
                    ins.append(self.layer_param(L, "bias", ns, nm[-k:]))
        return self.add(node, "norm", ins, sh, nm, eps=eps, **attrs)


def derived(names):
    """Spatial dims a conv or pool changed: "~height" (from height)."""
    return ["~" + n.lstrip("~") if n else None for n in names]


def reshape_names(sh, nm, dims):
    """Names survive a reshape that only inserts or removes 1s, and on the
    leading dims a flatten keeps."""
    a = [(d, n) for d, n in zip(sh, nm) if d != 1]
    if [d for d in dims if d != 1] == [d for d, _ in a]:
        it = iter(a)
        return [next(it)[1] if d != 1 else None for d in dims]
    out = [None] * len(dims)
    for i, (d, n) in enumerate(zip(sh, nm)):
        if i >= len(dims) - 1 or dims[i] != d:
            break
        out[i] = n
    return out


def adaptive(self, node, x, osz):
    sh, nm = self.shape(x), self.names(x)
    nd = len(osz)
    osz = [sh[2 + i] if o is None else o for i, o in enumerate(osz)]
    return self.add(node, "adaptive_avg_pool", [x], sh[:2] + osz, nm[:2] + derived(nm[2:]), output_size=osz)


def dropout(self, node, x, p):
    m = self.m
    name = "dropout_mask" if not m.masks else "dropout_mask%d" % (len(m.masks) + 1)
    m.masks.append((name, self.shape(x), self.names(x), p))
    m.tensors[name] = (self.shape(x), self.names(x))
    return self.add(node, "dropout", [x, T(name)], self.shape(x), self.names(x), p=p)


def reduce_call(self, node, fn, x, first):
    """torch.sum/mean/logsumexp(x, dim, keepdim) and x.sum/mean(dim, keepdim)."""
    args = list(node.args[first:])
    kw = {k.arg: k.value for k in node.keywords}
    dim = kw.get("dim", args[0] if args else None)
    keep = kw.get("keepdim", args[1] if len(args) > 1 else None)
    keep = bool(self.const(keep)) if keep is not None else False
    if dim is None:
        fail(node, "a reduction over every dim")
    dims = self.dims_arg(dim, x)
    return reduce_node(self, node, fn, x, dims, keep)


def reduce_node(self, node, fn, x, dims, keep):
    sh, nm = self.shape(x), self.names(x)
    dims = sorted(set(dims))
    if keep:
        shape = [1 if i in dims else d for i, d in enumerate(sh)]
        names = [None if i in dims else n for i, n in enumerate(nm)]
    else:
        shape = [d for i, d in enumerate(sh) if i not in dims]
        names = [n for i, n in enumerate(nm) if i not in dims]
    if not shape:
        fail(node, "a reduction to a scalar")
    return self.add(node, "reduce", [x], shape, names, fn=fn, dims=dims, keepdim=keep)


# ---- torch / F functions: (self, node) -> value

def f_act(name):
    def f(self, node):
        x = self.tensor(node.args[0])
        sh, nm = self.shape(x), self.names(x)
        attrs = {}
        if name == "leaky_relu":
            a = self.kw(node, ["negative_slope"])
            attrs["negative_slope"] = float(self.const(a["negative_slope"], "scalar")) if "negative_slope" in a else 0.01
        elif name == "hardtanh":
            a = self.kw(node, ["min_val", "max_val"])
            attrs["min_val"] = float(self.const(a["min_val"], "scalar")) if "min_val" in a else -1.0
            attrs["max_val"] = float(self.const(a["max_val"], "scalar")) if "max_val" in a else 1.0
        elif name == "softplus":
            a = self.kw(node, ["beta", "threshold"])
            attrs["beta"] = float(self.const(a["beta"], "scalar")) if "beta" in a else 1.0
            attrs["threshold"] = float(self.const(a["threshold"], "scalar")) if "threshold" in a else 20.0
        elif name == "gelu":
            a = self.kw(node, ["approximate"])
            if "approximate" in a and self.const(a["approximate"]) == "tanh":
                return self.add(node, "act", [x], sh, nm, fn="gelu_tanh")
        elif len(node.args) > 1 or node.keywords:
            fail(node, "%s with arguments" % name)
        return self.add(node, "act", [x], sh, nm, fn=name, **attrs)
    return f


def f_clamp(self, node):
    x = self.tensor(node.args[0])
    a = self.kw(node, ["min", "max"])
    attrs = {}
    for k in ("min", "max"):
        if k in a:
            v = self.const(a[k], "scalar")
            if v is not None:
                attrs[k] = float(v)
    return self.add(node, "act", [x], self.shape(x), self.names(x), fn="clamp", **attrs)


def f_minmax(fn):
    """torch.min(x, other) (elementwise) or torch.min(x, dim[, keepdim])."""
    def f(self, node):
        x = self.tensor(node.args[0])
        if len(node.args) >= 2:
            other = self.expr(node.args[1])
            if isinstance(other, T) or isinstance(node.args[1], ast.Call):
                return self.binary(node, fn, x, other)
        a = self.kw(node, ["dim", "keepdim"])
        if "dim" not in a:
            fail(node, "torch.%s over every element" % fn)
        dims = self.dims_arg(a["dim"], x)
        keep = bool(self.const(a["keepdim"])) if "keepdim" in a else False
        return Pair(reduce_node(self, node, fn, x, dims, keep))
    return f


def f_tensor(self, node):
    v = self.expr(node.args[0])
    if not isinstance(v, C):
        fail(node, "torch.tensor of a tensor")
    return C(float(v.value), v.v)


def f_softmax(self, node):
    x = self.tensor(node.args[0])
    a = self.kw(node, ["dim"])
    d = self.dims_arg(a["dim"], x)[0]
    return self.add(node, "softmax", [x], self.shape(x), self.names(x), dim=d, log=False)


def f_matmul(self, node):
    a, b = self.expr(node.args[0]), self.expr(node.args[1])
    if isinstance(a, T) and isinstance(b, Transposed) and len(self.shape(b.t)) == 2:
        w = b.t
        N, K = self.shape(w)
        if self.shape(a)[-1] != K:
            fail(node, "matmul shapes")
        return self.add(node, "linear", [a, w], self.shape(a)[:-1] + [N], self.names(a)[:-1] + [self.names(w)[0]])
    fail(node, "matmul: only x @ W.T (a linear without bias)")


def f_multiply(self, node):
    return self.binary(node, "mul", self.expr(node.args[0]), self.expr(node.args[1]))


def f_adaptive(self, node):
    x = self.tensor(node.args[0])
    o = self.const(node.args[1])
    nd = len(self.shape(x)) - 2
    return adaptive(self, node, x, tup(o, nd))


FUNCS = {k: f_act(v) for k, v in ACTS.items()}
FUNCS.update({
    "clamp": f_clamp, "min": f_minmax("min"), "max": f_minmax("max"), "tensor": f_tensor,
    "softmax": f_softmax, "matmul": f_matmul, "multiply": f_multiply, "mul": f_multiply,
    "adaptive_avg_pool1d": f_adaptive, "adaptive_avg_pool2d": f_adaptive, "adaptive_avg_pool3d": f_adaptive,
    "sum": lambda self, node: reduce_call(self, node, "sum", self.tensor(node.args[0]), 1),
    "mean": lambda self, node: reduce_call(self, node, "mean", self.tensor(node.args[0]), 1),
    "logsumexp": lambda self, node: reduce_call(self, node, "logsumexp", self.tensor(node.args[0]), 1),
})


def translate_forward(m, fn):
    f = Fwd(m)
    for name, *_ in m.inputs:
        f.scope[name] = T(name)
    ret = None
    for st in fn.body:
        if isinstance(st, ast.Expr) and isinstance(st.value, ast.Constant):
            continue      # docstring
        if isinstance(st, ast.Assign) and len(st.targets) == 1:
            tgt = st.targets[0]
            v = f.expr(st.value)
            if isinstance(tgt, ast.Name):
                f.scope[tgt.id] = v
            elif isinstance(tgt, ast.Tuple) and isinstance(v, C) and isinstance(v.value, tuple):
                for e, x in zip(tgt.elts, v.value):
                    f.scope[e.id] = C(x)
            else:
                fail(st, "unsupported assignment")
        elif isinstance(st, ast.Return):
            ret = f.expr(st.value)
            break
        else:
            fail(st, "unsupported statement in forward: %s" % ast.unparse(st))
    if not isinstance(ret, T) or not m.nodes or m.nodes[-1]["out"] != ret.name:
        raise ParseError("forward must return the result of its last operation")
    # the output tensor is named "out"
    last = m.nodes[-1]
    m.tensors["out"] = m.tensors.pop(last["out"])
    last["out"] = "out"
