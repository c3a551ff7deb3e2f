"""torch.nn for faketorch: nn.Module (submodules, parameters and buffers in
registration order, named as state_dict names them), the layers level 3
uses, each appending graph nodes when called, with PyTorch's default
parameter initialisation as distributions (docs/graph-ir.md, Parameters)."""
import math

import faketorch as ft
from faketorch import Tensor, fail, prod, tup

from shapes import conv_out, convt_out, pool_out


class NoGrad:
    def __enter__(self):
        return self

    def __exit__(self, *a):
        return False

    def __call__(self, f):
        return f


# ------------------------------------------------------------------ Module

class Module:
    def __init__(self, *a, **k):
        object.__setattr__(self, "_modules", {})
        object.__setattr__(self, "_parameters", {})
        object.__setattr__(self, "_buffers", {})
        object.__setattr__(self, "_tensors", {})
        object.__setattr__(self, "training", True)

    def __setattr__(self, k, v):
        if "_modules" not in self.__dict__:
            fail("assignment to self.%s before super().__init__()" % k)
        # a name keeps its place when reassigned in kind (state_dict order)
        kind = self._parameters if isinstance(v, Parameter) else self._modules if isinstance(v, Module) else None
        for d in (self._modules, self._parameters, self._tensors):
            if d is not kind:
                d.pop(k, None)
        if isinstance(v, Parameter):
            self._parameters[k] = v
        elif isinstance(v, Module):
            self._modules[k] = v
        elif isinstance(v, Tensor):
            if k in self._buffers:
                self._buffers[k] = v
            elif not ft.T.forwarding:
                self._tensors[k] = v
        object.__setattr__(self, k, v)

    def register_buffer(self, name, t, persistent=True):
        self._buffers[name] = t
        if t is not None:
            t.persistent = persistent
        object.__setattr__(self, name, t)

    def register_parameter(self, name, p):
        self.__setattr__(name, p)

    def add_module(self, name, m):
        self.__setattr__(name, m)

    def __call__(self, *a, **k):
        return self.forward(*a, **k)

    def forward(self, *a, **k):
        fail("%s.forward is not modelled" % type(self).__name__)

    def named_modules(self, prefix=""):
        yield prefix, self
        for k, m in self._modules.items():
            if m is not None:
                yield from m.named_modules(prefix + ("." if prefix else "") + k)

    def modules(self):
        for _, m in self.named_modules():
            yield m

    def children(self):
        return iter([m for m in self._modules.values() if m is not None])

    def named_parameters(self):
        seen = set()
        for p, m in self.named_modules():
            for k, t in m._parameters.items():
                if t is not None and id(t) not in seen:
                    seen.add(id(t))
                    yield p + ("." if p else "") + k, t

    def parameters(self):
        for _, t in self.named_parameters():
            yield t

    def apply(self, fn):
        for m in self.children():
            m.apply(fn)
        fn(self)
        return self

    def to(self, *a, **k):
        return self

    cuda = cpu = half = float = to

    def train(self, mode=True):
        for m in self.modules():
            object.__setattr__(m, "training", mode)
        return self

    def eval(self):
        return self.train(False)

    def zero_grad(self, *a):
        pass


class Parameter(Tensor):
    def __new__(cls, data=None, requires_grad=True):
        return Tensor.__new__(cls)

    def __init__(self, data=None, requires_grad=True):
        if isinstance(data, Tensor) and data.vals is not None and len(set(data.vals)) == 1:
            data = Tensor(data.shape, dist={"kind": "constant", "value": data.vals[0]}, origin="constant")
        if not isinstance(data, Tensor) or data.dist is None:
            fail("nn.Parameter of a tensor the trace cannot draw (%s)" % (getattr(data, "origin", data),))
        Tensor.__init__(self, data.shape, data.dtype, dist=dict(data.dist), origin=data.origin)
        self.init = data.origin


def name_params(model, taken):
    """Every parameter, buffer and plain tensor attribute gets its graph name
    (the state_dict key, dots as underscores; `_attr` appended where forward
    has an argument of that name) and its order."""
    ft.T.params = []
    seen, names = set(), {k: "forward's argument" for k in taken}
    for p, m in model.named_modules():
        for kind, d in (("param", m._parameters), ("buffer", m._buffers), ("attr", m._tensors)):
            for k, t in d.items():
                if t is None or id(t) in seen or t.name is not None:
                    continue
                if t.dist is None:
                    if t.const is not None or t.vals is not None:
                        continue      # a constant pattern: folded into the nodes that use it
                    fail("%s.%s: a tensor the trace cannot draw" % (p, k))
                seen.add(id(t))
                key = p + ("." if p else "") + k
                nm = key.replace(".", "_")
                if nm in taken:
                    nm += "_attr"
                if nm in names:
                    fail("parameters %s and %s have one name %s" % (names[nm], key, nm))
                names[nm] = key
                t.name, t.role = nm, "param"
                if kind == "attr" or kind == "buffer" and not getattr(t, "persistent", True):
                    t.torch_attr = key
                else:
                    t.torch_param = key
                ft.T.params.append(ft.Snapshot(t))


def param(shape, dist, init):
    p = Parameter(Tensor(shape, dist=dist, origin=init))
    return p


def kaiming(shape, fan, what):
    b = 1.0 / math.sqrt(fan)
    how = ("kaiming_uniform(a=sqrt(5))" if what == "weight" else "bias init") + \
        ": U(-1/sqrt(fan_in), 1/sqrt(fan_in)), fan_in = %d" % fan
    return param(shape, {"kind": "uniform", "low": -b, "high": b}, how)


def constant(shape, v, what):
    return param(shape, {"kind": "constant", "value": float(v)}, "%s: constant %g" % (what, v))


# ------------------------------------------------------------------ containers

class Sequential(Module):
    def __init__(self, *mods):
        Module.__init__(self)
        if len(mods) == 1 and isinstance(mods[0], dict):
            for k, m in mods[0].items():
                self.add_module(k, m)
        else:
            for i, m in enumerate(mods):
                self.add_module(str(i), m)

    def forward(self, x):
        for m in self._modules.values():
            x = m(x)
        return x

    def __iter__(self):
        return iter(self._modules.values())

    def __len__(self):
        return len(self._modules)

    def __getitem__(self, i):
        v = list(self._modules.values())
        if isinstance(i, slice):
            return Sequential(*v[i])
        return v[i]

    def append(self, m):
        self.add_module(str(len(self._modules)), m)
        return self


class ModuleList(Module):
    def __init__(self, mods=()):
        Module.__init__(self)
        for m in mods:
            self.append(m)

    def append(self, m):
        self.add_module(str(len(self._modules)), m)
        return self

    def extend(self, ms):
        for m in ms:
            self.append(m)
        return self

    def __iter__(self):
        return iter(self._modules.values())

    def __len__(self):
        return len(self._modules)

    def __getitem__(self, i):
        v = list(self._modules.values())
        return v[i]


class ModuleDict(Module):
    def __init__(self, mods=None):
        Module.__init__(self)
        for k, m in (mods or {}).items():
            self.add_module(k, m)

    def __getitem__(self, k):
        return self._modules[k]

    def __setitem__(self, k, m):
        self.add_module(k, m)

    def keys(self):
        return self._modules.keys()

    def items(self):
        return self._modules.items()

    def values(self):
        return self._modules.values()

    def __iter__(self):
        return iter(self._modules)


# ------------------------------------------------------------------ layers

class Linear(Module):
    def __init__(self, in_features, out_features, bias=True, **k):
        Module.__init__(self)
        self.in_features, self.out_features = in_features, out_features
        self.weight = kaiming((out_features, in_features), in_features, "weight")
        self.bias = kaiming((out_features,), in_features, "bias") if bias else None

    def forward(self, x):
        return f_linear(x, self.weight, self.bias)


def f_linear(input, weight, bias=None):
    x, w, b = input, weight, bias
    if x.shape[-1] != w.shape[1] or len(w.shape) != 2:
        fail("linear: x %s, weight %s" % (list(x.shape), list(w.shape)))
    ins = [x, w] + ([b] if b is not None else [])
    return ft.T.node("linear", ins, list(x.shape[:-1]) + [w.shape[0]])


class Identity(Module):
    def __init__(self, *a, **k):
        Module.__init__(self)

    def forward(self, x):
        return x


class _Conv(Module):
    nd, transposed = 2, False

    def __init__(self, in_channels, out_channels, kernel_size, stride=1, padding=0, *rest, **kw):
        Module.__init__(self)
        names = ["output_padding", "groups", "bias", "dilation"] if self.transposed else ["dilation", "groups", "bias"]
        a = dict(zip(names, rest))
        a.update(kw)
        nd = self.nd
        if isinstance(padding, str):
            fail("padding=%r" % padding)
        if a.get("padding_mode", "zeros") != "zeros":
            fail("padding_mode %s" % a["padding_mode"])
        self.ci, self.co = in_channels, out_channels
        self.k, self.s, self.p = tup(kernel_size, nd), tup(stride, nd), tup(padding, nd)
        self.d = tup(a.get("dilation", 1), nd)
        self.g = a.get("groups", 1)
        self.op = tup(a.get("output_padding", 0), nd)
        if in_channels % self.g or out_channels % self.g:
            fail("channels %d/%d with groups %d" % (in_channels, out_channels, self.g))
        if self.transposed:
            ws = (in_channels, out_channels // self.g) + tuple(self.k)
            fan = out_channels // self.g * prod(self.k)
        else:
            ws = (out_channels, in_channels // self.g) + tuple(self.k)
            fan = in_channels // self.g * prod(self.k)
        self.weight = kaiming(ws, fan, "weight")
        self.bias = kaiming((out_channels,), fan, "bias") if a.get("bias", True) else None

    def forward(self, x):
        sh = x.shape
        nd = self.nd
        if len(sh) != nd + 2 or sh[1] != self.ci:
            fail("Conv%s%dd(%d, %d) on %s" % ("Transpose" if self.transposed else "", nd, self.ci, self.co, list(sh)))
        if self.transposed:
            outs = [convt_out(n, k, s, p, d, o) for n, k, s, p, d, o in zip(sh[2:], self.k, self.s, self.p, self.d, self.op)]
        else:
            outs = [conv_out(n, k, s, p, d) for n, k, s, p, d in zip(sh[2:], self.k, self.s, self.p, self.d)]
        if any(o <= 0 for o in outs):
            fail("conv output %s" % outs)
        ins = [x, self.weight] + ([self.bias] if self.bias is not None else [])
        return ft.T.node("conv", ins, [sh[0], self.co] + outs, dims=nd, kernel=self.k, stride=self.s,
                         padding=self.p, dilation=self.d, groups=self.g, transposed=self.transposed,
                         output_padding=self.op if self.transposed else [0] * nd)


def conv_cls(nd, tr):
    return type("Conv%s%dd" % ("Transpose" if tr else "", nd), (_Conv,), {"nd": nd, "transposed": tr})


def pool(x, kind, nd, k, s, p, d=1, ceil=False, count_include_pad=True):
    k = tup(k, nd)
    s = tup(s if s is not None else k, nd)
    p, d = tup(p, nd), tup(d, nd)
    sh = x.shape
    if len(sh) != nd + 2:
        fail("%sPool%dd on %s" % (kind, nd, list(sh)))
    outs = [pool_out(n, kk, ss, pp, dd, ceil) for n, kk, ss, pp, dd in zip(sh[2:], k, s, p, d)]
    attrs = dict(kind=kind, dims=nd, kernel=k, stride=s, padding=p)
    if kind == "max":
        attrs.update(dilation=d, ceil_mode=bool(ceil))
    else:
        attrs.update(ceil_mode=bool(ceil), count_include_pad=bool(count_include_pad))
    return ft.T.node("pool", [x], list(sh[:2]) + outs, **attrs)


class _MaxPool(Module):
    nd = 2

    def __init__(self, kernel_size, stride=None, padding=0, dilation=1, return_indices=False, ceil_mode=False):
        Module.__init__(self)
        if return_indices:
            fail("MaxPool with return_indices")
        self.a = (kernel_size, stride, padding, dilation, ceil_mode)

    def forward(self, x):
        return pool(x, "max", self.nd, *self.a)


class _AvgPool(Module):
    nd = 2

    def __init__(self, kernel_size, stride=None, padding=0, ceil_mode=False, count_include_pad=True, divisor_override=None):
        Module.__init__(self)
        if divisor_override is not None:
            fail("AvgPool divisor_override")
        self.a = (kernel_size, stride, padding, ceil_mode, count_include_pad)

    def forward(self, x):
        k, s, p, c, cip = self.a
        return pool(x, "avg", self.nd, k, s, p, 1, c, cip)


def f_max_pool2d(x, kernel_size, stride=None, padding=0, dilation=1, ceil_mode=False, return_indices=False):
    return pool(x, "max", 2, kernel_size, stride, padding, dilation, ceil_mode)


def f_avg_pool2d(x, kernel_size, stride=None, padding=0, ceil_mode=False, count_include_pad=True):
    return pool(x, "avg", 2, kernel_size, stride, padding, 1, ceil_mode, count_include_pad)


def adaptive(x, osz, nd):
    osz = [s if o is None else o for s, o in zip(x.shape[2:], tup(osz, nd))]
    if len(x.shape) != nd + 2:
        fail("AdaptiveAvgPool%dd on %s" % (nd, list(x.shape)))
    if list(osz) == list(x.shape[2:]):
        return x
    return ft.T.node("adaptive_avg_pool", [x], list(x.shape[:2]) + list(osz), output_size=list(osz))


class _Adaptive(Module):
    nd = 2

    def __init__(self, output_size):
        Module.__init__(self)
        self.o = output_size

    def forward(self, x):
        return adaptive(x, self.o, self.nd)


def f_adaptive_avg_pool2d(x, output_size):
    return adaptive(x, output_size, 2)


class _BatchNorm(Module):
    def __init__(self, num_features, eps=1e-5, momentum=0.1, affine=True, track_running_stats=True, **k):
        Module.__init__(self)
        self.nf, self.eps = num_features, eps
        if affine:
            self.weight = constant((num_features,), 1.0, "BatchNorm weight")
            self.bias = constant((num_features,), 0.0, "BatchNorm bias")
        else:
            self.weight = self.bias = None

    def forward(self, x):
        if not self.training:
            fail("BatchNorm in eval mode (running statistics) is not modelled")
        if len(x.shape) < 2 or x.shape[1] != self.nf:
            fail("BatchNorm(%d) on %s" % (self.nf, list(x.shape)))
        ins = [x] + ([self.weight, self.bias] if self.weight is not None else [])
        return ft.T.node("norm", ins, x.shape, eps=float(self.eps), kind="batch")


class LayerNorm(Module):
    def __init__(self, normalized_shape, eps=1e-5, elementwise_affine=True, bias=True, **k):
        Module.__init__(self)
        self.ns = tup(normalized_shape, 1)
        self.eps = eps
        self.weight = constant(tuple(self.ns), 1.0, "LayerNorm weight") if elementwise_affine else None
        self.bias = constant(tuple(self.ns), 0.0, "LayerNorm bias") if elementwise_affine and bias else None

    def forward(self, x):
        k = len(self.ns)
        if list(x.shape[-k:]) != list(self.ns):
            fail("LayerNorm(%s) on %s" % (self.ns, list(x.shape)))
        ins = [x] + [t for t in (self.weight, self.bias) if t is not None]
        return ft.T.node("norm", ins, x.shape, eps=float(self.eps), kind="layer", normalized_ndim=k)


class GroupNorm(Module):
    def __init__(self, num_groups, num_channels, eps=1e-5, affine=True):
        Module.__init__(self)
        self.G, self.C, self.eps = num_groups, num_channels, eps
        self.weight = constant((num_channels,), 1.0, "GroupNorm weight") if affine else None
        self.bias = constant((num_channels,), 0.0, "GroupNorm bias") if affine else None

    def forward(self, x):
        if x.shape[1] != self.C or self.C % self.G:
            fail("GroupNorm(%d, %d) on %s" % (self.G, self.C, list(x.shape)))
        ins = [x] + ([self.weight, self.bias] if self.weight is not None else [])
        return ft.T.node("norm", ins, x.shape, eps=float(self.eps), kind="group", groups=self.G)


def act_cls(fn, **fixed):
    class A(Module):
        def __init__(self, *a, **k):
            Module.__init__(self)
            self.inplace = k.get("inplace", a[0] if a and isinstance(a[0], bool) else False)
            self.attrs = dict(fixed)
            if fn == "leaky_relu":
                self.attrs["negative_slope"] = float(k.get("negative_slope", a[0] if a else 0.01))
                self.inplace = k.get("inplace", a[1] if len(a) > 1 else False)
            self.fn = fn
            if fn == "gelu" and k.get("approximate", a[0] if a else "none") == "tanh":
                self.fn = "gelu_tanh"

        def forward(self, x):
            return ft.act(x, self.fn, self.inplace, **self.attrs)
    return A


class Softmax(Module):
    def __init__(self, dim=None):
        Module.__init__(self)
        self.d = dim

    def forward(self, x):
        return ft.softmax(x, self.d)


class Dropout(Module):
    def __init__(self, p=0.5, inplace=False):
        Module.__init__(self)
        self.p = float(p)

    def forward(self, x):
        return ft.dropout_node(x, self.p) if self.training else x


class Flatten(Module):
    def __init__(self, start_dim=1, end_dim=-1):
        Module.__init__(self)
        self.a = (start_dim, end_dim)

    def forward(self, x):
        return x.flatten(*self.a)


def f_normalize(x, p=2.0, dim=1, eps=1e-12):
    """x / max(||x||_p over dim, eps), as PyTorch."""
    n = ft.clamp(ft.vnorm(x, p, dim, True), eps, None)
    return x / n


# ------------------------------------------------------------------ recurrent

class _RNNBase(Module):
    kind = "lstm"
    gates = {"lstm": 4, "gru": 3, "rnn_tanh": 1, "rnn_relu": 1}

    def __init__(self, input_size, hidden_size, num_layers=1, *rest, **kw):
        Module.__init__(self)
        names = ["nonlinearity", "bias", "batch_first", "dropout", "bidirectional"] if self.kind.startswith("rnn") \
            else ["bias", "batch_first", "dropout", "bidirectional"]
        a = dict(zip(names, rest))
        a.update(kw)
        if self.kind.startswith("rnn") and a.get("nonlinearity", "tanh") == "relu":
            self.kind = "rnn_relu"
        if a.get("proj_size", 0):
            fail("LSTM proj_size")
        if float(a.get("dropout", 0.0)) != 0.0 and num_layers > 1:
            fail("dropout %r between recurrent layers (random: not modelled)" % a["dropout"])
        self.I, self.H, self.L = input_size, hidden_size, num_layers
        self.bias = a.get("bias", True)
        self.bf = bool(a.get("batch_first", False))
        self.bi = bool(a.get("bidirectional", False))
        G = self.gates[self.kind] * hidden_size
        b = 1.0 / math.sqrt(hidden_size)
        how = "U(-1/sqrt(hidden_size), 1/sqrt(hidden_size)), hidden_size = %d" % hidden_size
        dist = {"kind": "uniform", "low": -b, "high": b}
        self.order = []
        for layer in range(num_layers):
            for sfx in ("", "_reverse") if self.bi else ("",):
                insz = input_size if layer == 0 else hidden_size * (2 if self.bi else 1)
                for nm, sh in (("weight_ih", (G, insz)), ("weight_hh", (G, hidden_size))) + (
                        (("bias_ih", (G,)), ("bias_hh", (G,))) if self.bias else ()):
                    k = "%s_l%d%s" % (nm, layer, sfx)
                    setattr(self, k, param(sh, dict(dist), how))
                    self.order.append(k)

    def forward(self, x, hx=None):
        if len(x.shape) != 3:
            fail("%s on %s (batched 3-D input only)" % (self.kind, list(x.shape)))
        T_, B = (x.shape[1], x.shape[0]) if self.bf else (x.shape[0], x.shape[1])
        if x.shape[2] != self.I:
            fail("%s(input_size %d) on %s" % (self.kind, self.I, list(x.shape)))
        D = 2 if self.bi else 1
        hs = (D * self.L, B, self.H)
        h0 = c0 = None
        if self.kind == "lstm":
            if hx is not None:
                h0, c0 = hx
        else:
            h0 = hx
        for t in (h0, c0):
            if t is not None and tuple(t.shape) != hs:
                fail("initial state %s, expected %s" % (list(t.shape), list(hs)))
        ins = [x] + [t for t in (h0, c0) if t is not None] + [getattr(self, k) for k in self.order]
        attrs = dict(kind=self.kind, layers=self.L, hidden=self.H, bidirectional=self.bi,
                     batch_first=self.bf, bias=bool(self.bias), h0=h0 is not None, c0=c0 is not None)
        osh = [B, T_, D * self.H] if self.bf else [T_, B, D * self.H]
        out = ft.T.node("rnn", ins, osh, output="output", **attrs)
        hn = ft.T.node("rnn", ins, list(hs), output="h_n", **attrs)
        if self.kind == "lstm":
            cn = ft.T.node("rnn", ins, list(hs), output="c_n", **attrs)
            return out, (hn, cn)
        return out, hn


# ------------------------------------------------------------------ attention

class NonDynamicallyQuantizableLinear(Linear):
    pass


class MultiheadAttention(Module):
    """nn.MultiheadAttention with one packed in_proj (kdim = vdim = embed_dim):
    in_proj_weight xavier_uniform_, in_proj_bias and out_proj.bias 0."""

    def __init__(self, embed_dim, num_heads, dropout=0.0, bias=True, add_bias_kv=False, add_zero_attn=False,
                 kdim=None, vdim=None, batch_first=False, **k):
        Module.__init__(self)
        if add_bias_kv or add_zero_attn or kdim not in (None, embed_dim) or vdim not in (None, embed_dim):
            fail("MultiheadAttention with bias_kv, zero_attn or other kdim/vdim")
        if embed_dim % num_heads:
            fail("embed_dim %d, %d heads" % (embed_dim, num_heads))
        E = embed_dim
        self.E, self.H, self.p, self.bf = E, num_heads, float(dropout), batch_first
        b = math.sqrt(6.0 / (E + 3 * E))
        self.in_proj_weight = param((3 * E, E), {"kind": "uniform", "low": -b, "high": b},
                                    "xavier_uniform_: U(-b, b), b = sqrt(6 / (%d + %d))" % (E, 3 * E))
        self.in_proj_bias = constant((3 * E,), 0.0, "in_proj_bias") if bias else None
        self.out_proj = NonDynamicallyQuantizableLinear(E, E, bias=bias)
        if bias:
            self.out_proj.bias = constant((E,), 0.0, "out_proj.bias")

    def forward(self, query, key, value, key_padding_mask=None, need_weights=True, attn_mask=None,
                average_attn_weights=True, is_causal=False):
        if key_padding_mask is not None or attn_mask is not None or is_causal:
            fail("MultiheadAttention masks are not modelled")
        if self.bf:
            query, key, value = (t.transpose(0, 1) for t in (query, key, value))
        L, N, E = query.shape
        S = key.shape[0]
        H, hd = self.H, E // self.H
        if query is key and key is value:
            q, k, v = f_linear(query, self.in_proj_weight, self.in_proj_bias).chunk(3, -1)
        else:
            ws = self.in_proj_weight.chunk(3, 0)
            bs = self.in_proj_bias.chunk(3, 0) if self.in_proj_bias is not None else (None,) * 3
            q, k, v = (f_linear(t, w, b) for t, w, b in zip((query, key, value), ws, bs))
        q = q.reshape(L, N * H, hd).transpose(0, 1)
        k = k.reshape(S, N * H, hd).transpose(0, 1)
        v = v.reshape(S, N * H, hd).transpose(0, 1)
        att = ft.softmax(ft.matmul(q, k.transpose(1, 2)) * (1.0 / math.sqrt(hd)), -1)
        att = ft.dropout_node(att, self.p) if self.training else att
        o = ft.matmul(att, v).transpose(0, 1).reshape(L * N, E)
        o = self.out_proj(o).view(L, N, E)
        if self.bf:
            o = o.transpose(0, 1)
        w = att.view(N, H, L, S).mean(1) if need_weights and average_attn_weights else \
            att.view(N, H, L, S) if need_weights else None
        return o, w


class TransformerEncoderLayer(Module):
    def __init__(self, d_model, nhead, dim_feedforward=2048, dropout=0.1, activation="relu",
                 layer_norm_eps=1e-5, batch_first=False, norm_first=False, bias=True, **k):
        Module.__init__(self)
        if activation not in ("relu", "gelu"):
            fail("TransformerEncoderLayer activation %r" % (activation,))
        self.self_attn = MultiheadAttention(d_model, nhead, dropout, bias=bias, batch_first=batch_first)
        self.linear1 = Linear(d_model, dim_feedforward, bias)
        self.dropout = Dropout(dropout)
        self.linear2 = Linear(dim_feedforward, d_model, bias)
        self.norm_first = norm_first
        self.norm1 = LayerNorm(d_model, layer_norm_eps, bias=bias)
        self.norm2 = LayerNorm(d_model, layer_norm_eps, bias=bias)
        self.dropout1 = Dropout(dropout)
        self.dropout2 = Dropout(dropout)
        self.act = activation

    def sa(self, x):
        return self.dropout1(self.self_attn(x, x, x, need_weights=False)[0])

    def ff(self, x):
        return self.dropout2(self.linear2(self.dropout(ft.act(self.linear1(x), self.act))))

    def forward(self, src, src_mask=None, src_key_padding_mask=None, is_causal=False):
        if src_mask is not None or src_key_padding_mask is not None:
            fail("TransformerEncoderLayer masks are not modelled")
        x = src
        if self.norm_first:
            x = x + self.sa(self.norm1(x))
            return x + self.ff(self.norm2(x))
        x = self.norm1(x + self.sa(x))
        return self.norm2(x + self.ff(x))


class TransformerEncoder(Module):
    """num_layers copies of the layer. PyTorch deep-copies one initialised
    layer, so the copies start with equal parameters; here each copy is
    drawn on its own (the spec cannot tie tensors; the computation is
    the same for any values)."""

    def __init__(self, encoder_layer, num_layers, norm=None, **k):
        Module.__init__(self)
        import copy
        self.layers = ModuleList([copy.deepcopy(encoder_layer) for _ in range(num_layers)])
        self.norm = norm

    def forward(self, src, mask=None, src_key_padding_mask=None, is_causal=None):
        x = src
        for m in self.layers:
            x = m(x, mask, src_key_padding_mask)
        return self.norm(x) if self.norm is not None else x


# ------------------------------------------------------------------ nn namespace

def make_nn(F):
    nn = ft.Mod("torch.nn")
    nn.Module, nn.Parameter = Module, Parameter
    nn.Sequential, nn.ModuleList, nn.ModuleDict = Sequential, ModuleList, ModuleDict
    nn.Linear, nn.Identity, nn.Flatten = Linear, Identity, Flatten
    for nd in (1, 2, 3):
        setattr(nn, "Conv%dd" % nd, conv_cls(nd, False))
        setattr(nn, "ConvTranspose%dd" % nd, conv_cls(nd, True))
        setattr(nn, "MaxPool%dd" % nd, type("MaxPool%dd" % nd, (_MaxPool,), {"nd": nd}))
        setattr(nn, "AvgPool%dd" % nd, type("AvgPool%dd" % nd, (_AvgPool,), {"nd": nd}))
        setattr(nn, "AdaptiveAvgPool%dd" % nd, type("AdaptiveAvgPool%dd" % nd, (_Adaptive,), {"nd": nd}))
        setattr(nn, "BatchNorm%dd" % nd, type("BatchNorm%dd" % nd, (_BatchNorm,), {}))
    nn.LayerNorm, nn.GroupNorm = LayerNorm, GroupNorm
    nn.ReLU = act_cls("relu")
    nn.ReLU6 = act_cls("hardtanh", min_val=0.0, max_val=6.0)
    nn.GELU = act_cls("gelu")
    nn.Tanh, nn.Sigmoid, nn.SiLU = act_cls("tanh"), act_cls("sigmoid"), act_cls("silu")
    nn.Hardswish, nn.LeakyReLU = act_cls("hardswish"), act_cls("leaky_relu")
    nn.Softmax, nn.Dropout = Softmax, Dropout
    nn.MultiheadAttention = MultiheadAttention
    nn.TransformerEncoderLayer, nn.TransformerEncoder = TransformerEncoderLayer, TransformerEncoder
    nn.LSTM = type("LSTM", (_RNNBase,), {"kind": "lstm"})
    nn.GRU = type("GRU", (_RNNBase,), {"kind": "gru"})
    nn.RNN = type("RNN", (_RNNBase,), {"kind": "rnn_tanh"})
    init = ft.Mod("torch.nn.init")
    init.zeros_ = lambda t: set_const(t, 0.0)
    init.ones_ = lambda t: set_const(t, 1.0)
    init.constant_ = set_const
    init.normal_ = init_normal
    init.kaiming_normal_ = kaiming_normal
    init.xavier_uniform_ = xavier_uniform
    nn.init = init
    return nn


def set_const(t, v):
    t.dist = {"kind": "constant", "value": float(v)}
    t.init = "constant %g (nn.init)" % v
    return t


def fans(t):
    rf = prod(t.shape[2:])
    return t.shape[1] * rf, t.shape[0] * rf


def init_normal(t, mean=0.0, std=1.0):
    t.dist = {"kind": "normal", "mean": float(mean), "std": float(std)}
    t.init = "N(%g, %g) (nn.init.normal_)" % (mean, std)
    return t


def kaiming_normal(t, a=0, mode="fan_in", nonlinearity="leaky_relu"):
    if nonlinearity not in ("leaky_relu", "relu"):
        fail("kaiming_normal_ nonlinearity %s" % nonlinearity)
    gain = math.sqrt(2.0 / (1 + a * a)) if nonlinearity == "leaky_relu" else math.sqrt(2.0)
    fi, fo = fans(t)
    fan = fi if mode == "fan_in" else fo
    std = gain / math.sqrt(fan)
    t.dist = {"kind": "normal", "mean": 0.0, "std": std}
    t.init = "kaiming_normal_(mode=%s): N(0, sqrt(2) / sqrt(%d))" % (mode, fan)
    return t


def xavier_uniform(t, gain=1.0):
    fi, fo = fans(t)
    b = gain * math.sqrt(6.0 / (fi + fo))
    t.dist = {"kind": "uniform", "low": -b, "high": b}
    t.init = "xavier_uniform_: U(-b, b), b = sqrt(6 / (%d + %d))" % (fi, fo)
    return t
