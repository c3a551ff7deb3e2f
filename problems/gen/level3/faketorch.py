"""A symbolic stand-in for torch, torch.nn and torch.nn.functional (and
einops.rearrange) that traces a KernelBench module into the operator graph
of docs/graph-ir.md. The module's own Python runs: its loops, helpers,
nn.Sequential/ModuleList. Tensors carry a shape and a dtype, no values;
every layer or function call appends graph nodes. Anything not modelled
raises TraceError naming the call and the module's line.

    trace(text) -> Trace

Python 3.11 stdlib only."""
import math
import sys
import types

FNAME = "<kernelbench>"


class TraceError(Exception):
    pass


def where():
    """The KernelBench text's innermost line on the stack."""
    f = sys._getframe(1)
    while f:
        if f.f_code.co_filename == FNAME:
            return "line %d" % f.f_lineno
        f = f.f_back
    return "line ?"


def fail(msg):
    raise TraceError("%s: %s" % (where(), msg))


def prod(xs):
    r = 1
    for x in xs:
        r *= x
    return r


def tup(v, n):
    return list(v) if isinstance(v, (tuple, list)) else [v] * n


def as_shape(args):
    if len(args) == 1 and isinstance(args[0], (tuple, list)):
        args = tuple(args[0])
    out = []
    for a in args:
        if not isinstance(a, int) or isinstance(a, bool):
            fail("shape %r: integer sizes only" % (args,))
        out.append(a)
    return tuple(out)


def bshape(a, b):
    r = max(len(a), len(b))
    a = (1,) * (r - len(a)) + tuple(a)
    b = (1,) * (r - len(b)) + tuple(b)
    out = []
    for x, y in zip(a, b):
        if x != y and 1 not in (x, y):
            fail("shapes %s and %s do not broadcast" % (a, b))
        out.append(max(x, y))
    return tuple(out)


def ndim(d, r):
    if d < -r or d >= max(r, 1):
        fail("dim %d of a %d-D tensor" % (d, r))
    return d + r if d < 0 else d


# ------------------------------------------------------------------ the trace

class Trace:
    def __init__(self):
        self.nodes = []
        self.count = 0
        self.inputs = []      # forward's tensors and drawn inputs: Tensor
        self.forwarding = False
        self.notes = []
        self.masks = 0
        self.randn = 0

    def node(self, op, ins, shape, dtype="float32", **attrs):
        if not self.forwarding:
            fail("%s outside forward (a computed constant tensor)" % op)
        ins = [fc.materialize(t) if t.vals is not None else t for t in ins]
        for t in ins:
            if t.name is None:
                fail("%s on a tensor without a graph name (%s)" % (op, t.origin))
        name = "t%d" % self.count
        self.count += 1
        n = {"out": name, "op": op, "in": [t.name for t in ins], "shape": list(shape)}
        n.update(attrs)
        self.nodes.append(n)
        return Tensor(shape, dtype, name=name)


T = None     # the current Trace


# ------------------------------------------------------------------ tensors

class Tensor:
    """A graph tensor (name), an input/parameter (name, role), or in
    __init__ a drawn one (dist) or a constant pattern (const)."""

    def __init__(self, shape, dtype="float32", name=None, dist=None, const=None, origin=""):
        self.shape = Size(shape)
        self.dtype = dtype
        self.name = name
        self.dist = dist
        self.const = const
        self.origin = origin
        self.device = "cuda"
        self.requires_grad = False
        self.vals = None        # a constant's values (faketorch_const)
        self.recipe = None

    # ---- metadata
    def size(self, d=None):
        return self.shape if d is None else self.shape[ndim(d, len(self.shape))]

    def dim(self):
        return len(self.shape)

    ndim = property(dim)

    def numel(self):
        return prod(self.shape)

    def to(self, *a, **k):
        return self

    def contiguous(self, *a, **k):
        return self

    cuda = cpu = detach = clone_meta = contiguous

    def type_as(self, other):
        return self

    def float(self):
        return self

    def item(self):
        fail("item(): a value the trace does not know")

    def __bool__(self):
        fail("the truth value of a tensor (data-dependent control flow)")

    def __len__(self):
        return self.shape[0]

    def __iter__(self):
        fail("iterating over a tensor")

    def __repr__(self):
        return "Tensor(%s, %s)" % (list(self.shape), self.name or self.origin)

    # ---- views
    def view(self, *shape):
        if len(shape) == 1 and isinstance(shape[0], str):
            fail("view(dtype)")
        shape = list(as_shape(shape))
        n = self.numel()
        if shape.count(-1) > 1:
            fail("view %s: two -1" % shape)
        if -1 in shape:
            rest = prod(d for d in shape if d != -1)
            if rest == 0 or n % rest:
                fail("view %s of %s" % (shape, list(self.shape)))
            shape[shape.index(-1)] = n // rest
        if prod(shape) != n:
            fail("view %s of %s" % (shape, list(self.shape)))
        if tuple(shape) == tuple(self.shape):
            return self
        if self.vals is not None:
            return fc.view(self, shape)
        if self.const is not None:
            return self.const.view(self, shape)
        return T.node("reshape", [self], shape, self.dtype)

    reshape = view

    def view_as(self, o):
        return self.view(*o.shape)

    reshape_as = view_as

    def flatten(self, start_dim=0, end_dim=-1):
        r = len(self.shape)
        if r == 0:
            return self.view(1)
        s, e = ndim(start_dim, r), ndim(end_dim, r)
        sh = list(self.shape[:s]) + [prod(self.shape[s:e + 1])] + list(self.shape[e + 1:])
        return self.view(*sh)

    def unsqueeze(self, d):
        d = d + len(self.shape) + 1 if d < 0 else d
        sh = list(self.shape)
        sh.insert(d, 1)
        return self.view(*sh)

    def squeeze(self, d=None):
        sh = list(self.shape)
        if d is None:
            sh = [x for x in sh if x != 1]
        else:
            for dd in sorted([ndim(x, len(sh)) for x in tup(d, 1)], reverse=True):
                if sh[dd] == 1:
                    del sh[dd]
        return self.view(*sh)

    def permute(self, *perm):
        perm = [ndim(p, len(self.shape)) for p in as_shape(perm)]
        if sorted(perm) != list(range(len(self.shape))):
            fail("permute %s of a %d-D tensor" % (perm, len(self.shape)))
        if perm == list(range(len(perm))):
            return self
        if self.vals is not None:
            return fc.permute(self, perm)
        sh = [self.shape[p] for p in perm]
        # moving only size-1 dims is a reshape
        if [p for p in perm if self.shape[p] != 1] == [p for p in range(len(perm)) if self.shape[p] != 1]:
            return self.view(*sh)
        return T.node("permute", [self], sh, self.dtype, perm=perm)

    def transpose(self, a, b):
        r = len(self.shape)
        perm = list(range(r))
        a, b = ndim(a, r), ndim(b, r)
        perm[a], perm[b] = perm[b], perm[a]
        return self.permute(*perm)

    @property
    def T(self):
        return self.permute(*reversed(range(len(self.shape))))

    def expand(self, *shape):
        shape = as_shape(shape)
        sh = [s if n == -1 else n for s, n in zip((1,) * (len(shape) - len(self.shape)) + tuple(self.shape), shape)]
        if list(sh) == list(self.shape):
            return self
        return T.node("expand", [self], bshape(self.shape, sh), self.dtype)

    def expand_as(self, o):
        return self.expand(*o.shape)

    def repeat(self, *reps):
        reps = as_shape(reps)
        if all(r == 1 for r in reps) and len(reps) == len(self.shape):
            return self
        fail("repeat %s" % (reps,))

    def __getitem__(self, idx):
        if self.vals is not None:
            return fc.getitem(self, idx)
        if is_t(idx) and idx.vals is not None:
            return fc.take(self, idx)
        return index(self, idx)

    def __setitem__(self, idx, v):
        if self.name is not None or T.forwarding:
            fail("assignment into a tensor (only constants made in __init__)")
        fc.setitem(self, idx, v)

    def unfold(self, d, size, step):
        """Tensor.unfold with step == size (non-overlapping windows): a view
        [.., n / size, .., size] with the window dim last."""
        r = len(self.shape)
        d = ndim(d, r)
        if step != size or self.shape[d] % size:
            fail("unfold(%d, %d, %d) of %s: overlapping or ragged windows" % (d, size, step, list(self.shape)))
        sh = list(self.shape[:d]) + [self.shape[d] // size, size] + list(self.shape[d + 1:])
        y = self.view(*sh)
        perm = list(range(d + 1)) + list(range(d + 2, r + 1)) + [d + 1]
        return y.permute(*perm)

    def chunk(self, n, dim=0):
        d = ndim(dim, len(self.shape))
        step = -(-self.shape[d] // n)
        return tuple(self.narrow(d, s, min(step, self.shape[d] - s)) for s in range(0, self.shape[d], step))

    def split(self, size, dim=0):
        d = ndim(dim, len(self.shape))
        if isinstance(size, int):
            size = [min(size, self.shape[d] - s) for s in range(0, self.shape[d], size)]
        if sum(size) != self.shape[d]:
            fail("split %s of %d" % (size, self.shape[d]))
        out, s = [], 0
        for k in size:
            out.append(self.narrow(d, s, k))
            s += k
        return tuple(out)

    def narrow(self, d, start, length):
        sl = [slice(None)] * len(self.shape)
        sl[d] = slice(start, start + length)
        return index(self, tuple(sl))

    def unbind(self, dim=0):
        d = ndim(dim, len(self.shape))
        return tuple(index(self, (slice(None),) * d + (i,)) for i in range(self.shape[d]))

    # ---- arithmetic
    def __add__(self, o):
        return binary("add", self, o)

    def __radd__(self, o):
        return binary("add", self, o)

    def __sub__(self, o):
        return binary("sub", self, o)

    def __rsub__(self, o):
        return binary("sub", self, o, swap=True)

    def __mul__(self, o):
        return binary("mul", self, o)

    def __rmul__(self, o):
        return binary("mul", self, o)

    def __truediv__(self, o):
        return binary("div", self, o)

    def __rtruediv__(self, o):
        return binary("div", self, o, swap=True)

    def __pow__(self, o):
        if o == 2:
            return act(self, "square")
        if o == 0.5:
            return act(self, "sqrt")
        return binary("pow", self, o)

    def __neg__(self):
        if self.dist is not None:
            return self
        return act(self, "neg")

    def __matmul__(self, o):
        return matmul(self, o)

    def _inplace(self, r):
        if r.shape != self.shape:
            fail("in-place result %s into %s" % (list(r.shape), list(self.shape)))
        self.name, self.const, self.dist = r.name, r.const, r.dist
        self.vals, self.recipe, self.dtype = r.vals, r.recipe, r.dtype
        return self

    def __iadd__(self, o):
        return self._inplace(binary("add", self, o))

    def __isub__(self, o):
        return self._inplace(binary("sub", self, o))

    def __imul__(self, o):
        return self._inplace(binary("mul", self, o))

    def __itruediv__(self, o):
        return self._inplace(binary("div", self, o))

    def add_(self, o):
        return self.__iadd__(o)

    def mul_(self, o):
        return self.__imul__(o)

    def copy_(self, o):
        return self._inplace(o)

    def __eq__(self, o):
        if self.vals is not None and isinstance(o, (int, float)):
            return fc.compare("eq", self, o)
        if self.const is not None and isinstance(o, (int, float)):
            return self.const.compare(self, o)
        fail("== on a tensor")

    def __ne__(self, o):
        if self.vals is not None and isinstance(o, (int, float)):
            return fc.compare("ne", self, o)
        fail("!= on a tensor")

    __hash__ = object.__hash__

    def __invert__(self):
        if self.const is not None:
            return self.const.invert(self)
        fail("~ on a tensor")

    def masked_fill(self, mask, value):
        return masked_fill(self, mask, value)

    def matmul(self, o):
        return matmul(self, o)

    def bmm(self, o):
        return matmul(self, o)

    # ---- elementwise methods and reductions
    def relu(self):
        return act(self, "relu")

    def relu_(self):
        return self._inplace(act(self, "relu"))

    def sigmoid(self):
        return act(self, "sigmoid")

    def tanh(self):
        return act(self, "tanh")

    def exp(self):
        return act(self, "exp")

    def log(self):
        return act(self, "log")

    def abs(self):
        return act(self, "abs")

    def sqrt(self):
        return act(self, "sqrt")

    def clamp(self, min=None, max=None):
        return clamp(self, min, max)

    def clamp_min(self, v):
        return clamp(self, v, None)

    def sum(self, dim=None, keepdim=False):
        if self.vals is not None:
            return fc.reduce_sum(self, dims_of(dim, len(self.shape)), keepdim)
        return reduce(self, "sum", dim, keepdim)

    def mean(self, dim=None, keepdim=False):
        return reduce(self, "mean", dim, keepdim)

    def max(self, dim=None, keepdim=False):
        if dim is None:
            return reduce(self, "max", None, False)
        fail("max(dim) returns indices too: not modelled")

    def amax(self, dim=None, keepdim=False):
        return reduce(self, "max", dim, keepdim)

    def softmax(self, dim):
        return softmax(self, dim)

    def norm(self, p=2, dim=None, keepdim=False):
        return vnorm(self, p, dim, keepdim)

    def cumsum(self, dim):
        return cumsum(self, dim)


class Snapshot:
    """A spec tensor as it was named (in-place ops in forward rebind the
    Tensor object to later nodes: copy_ into a parameter)."""

    def __init__(self, t):
        self.__dict__.update({k: v for k, v in t.__dict__.items()})
        self.shape = tuple(t.shape)


class Size(tuple):
    def numel(self):
        return prod(self)


def is_t(x):
    return isinstance(x, Tensor)


# ------------------------------------------------------------------ constants

class Tri:
    """A constant lower/upper-triangular pattern over the last two dims:
    value `on` where j - i <= diag (lower) or j - i >= diag (upper), else
    `off` (torch.tril/triu of ones, compared, inverted, sliced from the
    top-left corner, viewed with leading 1s)."""

    def __init__(self, lower, diag, on, off):
        self.lower, self.diag, self.on, self.off = lower, diag, on, off

    def make(self, shape, dtype):
        return Tensor(shape, dtype, const=self, origin="constant triangle")

    def view(self, t, shape):
        if list(shape[-2:]) != list(t.shape[-2:]) or prod(shape[:-2]) != 1:
            fail("view %s of a constant triangle %s" % (shape, list(t.shape)))
        return self.make(shape, t.dtype)

    def slice(self, t, shape, starts):
        if any(starts[-2:]):
            fail("a constant triangle sliced away from its corner")
        return self.make(shape, t.dtype)

    def compare(self, t, v):
        return Tri(self.lower, self.diag, self.on == v, self.off == v).make(t.shape, "bool")

    def invert(self, t):
        return Tri(self.lower, self.diag, not self.on, not self.off).make(t.shape, "bool")

    def filled(self):
        """(where, diagonal): the region where the mask is true."""
        if self.on and not self.off:
            return ("lower", self.diag) if self.lower else ("upper", self.diag)
        if self.off and not self.on:
            return ("upper", self.diag + 1) if self.lower else ("lower", self.diag - 1)
        fail("a constant mask that is all true or all false")


# ------------------------------------------------------------------ functions

def scalar_of(v):
    if is_t(v) and v.vals is not None and len(v.vals) == 1:
        return float(v.vals[0])
    if isinstance(v, bool) or not isinstance(v, (int, float)):
        fail("expected a number, got %r" % (v,))
    return float(v)


def binary(fn, a, b, swap=False):
    if a.vals is not None and (not is_t(b) or b.vals is not None or b.dist is not None) or \
            is_t(b) and b.vals is not None and a.dist is not None and not T.forwarding:
        return fc.binary(fn, a, b, swap)
    if a.dist is not None and not T.forwarding:
        # arithmetic on a drawn tensor in __init__: a scaled distribution
        return scale_dist(a, fn, b, swap)
    if not is_t(b):
        c = scalar_of(b)
        if fn == "mul" and c == 1.0 or fn in ("add", "sub") and c == 0.0 and not swap or fn == "div" and c == 1.0 and not swap:
            return a
        attrs = {"fn": fn, "const": c}
        if swap:
            attrs["swap"] = True
        return T.node("binary", [a], a.shape, **attrs)
    if b.const is not None:
        fail("arithmetic with a constant tensor")
    ins = [b, a] if swap else [a, b]
    return T.node("binary", ins, bshape(a.shape, b.shape), fn=fn)


def scale_dist(a, fn, b, swap):
    d = dict(a.dist)
    if fn == "mul" and not is_t(b) and d["kind"] == "normal":
        d["std"] *= b
        d["mean"] *= b
    elif fn == "mul" and not is_t(b) and d["kind"] == "constant":
        d["value"] *= b
    elif fn == "mul" and not is_t(b) and d["kind"] == "uniform":
        d["low"], d["high"] = sorted((d["low"] * b, d["high"] * b))
    else:
        fail("%s on a drawn tensor in __init__" % fn)
    return Tensor(a.shape, a.dtype, dist=d, origin=a.origin + " * %r" % b)


def act(x, fn, inplace=False, **attrs):
    r = T.node("act", [x], x.shape, fn=fn, **attrs)
    return x._inplace(r) if inplace else r


def clamp(x, lo=None, hi=None):
    attrs = {}
    if lo is not None:
        attrs["min"] = scalar_of(lo)
    if hi is not None:
        attrs["max"] = scalar_of(hi)
    return act(x, "clamp", **attrs)


def dims_of(dim, r):
    if dim is None:
        return list(range(r))
    return sorted(ndim(d, r) for d in tup(dim, 1))


def reduce(x, fn, dim, keepdim):
    r = len(x.shape)
    ds = dims_of(dim, r)
    if keepdim:
        sh = [1 if i in ds else s for i, s in enumerate(x.shape)]
    else:
        sh = [s for i, s in enumerate(x.shape) if i not in ds] or [1]
    return T.node("reduce", [x], sh, fn=fn, dims=ds, keepdim=bool(keepdim))


def softmax(x, dim, log=False):
    if dim is None:
        fail("softmax without dim")
    return T.node("softmax", [x], x.shape, dim=ndim(dim, len(x.shape)), log=log)


def vnorm(x, p, dim, keepdim):
    """torch.norm / Tensor.norm (p = 2): sqrt(sum(x^2))."""
    if p != 2:
        fail("norm with p = %r" % p)
    return act(reduce(act(x, "square"), "sum", dim, keepdim), "sqrt")


def cumsum(x, dim):
    return T.node("cumsum", [x], x.shape, dim=ndim(dim, len(x.shape)))


def masked_fill(x, mask, value):
    if x.vals is not None and is_t(mask) and mask.vals is not None:
        return fc.masked_fill(x, mask, value)
    if is_t(mask) and mask.vals is not None:
        v = float(value)
        val = v if math.isfinite(v) else ("-inf" if v < 0 else "inf")
        return T.node("masked_fill", [x, mask], x.shape, value=val)
    if not is_t(mask) or mask.const is None or not isinstance(mask.const, Tri):
        fail("masked_fill with a mask that is not a constant triangle")
    if list(mask.shape[-2:]) != list(x.shape[-2:]):
        fail("masked_fill: mask %s on %s" % (list(mask.shape), list(x.shape)))
    wh, dg = mask.const.filled()
    v = float(value)
    val = v if math.isfinite(v) else ("-inf" if v < 0 else "inf")
    return T.node("masked_fill", [x], x.shape, where=wh, diagonal=dg, value=val)


def matmul(a, b):
    if len(a.shape) < 1 or len(b.shape) < 1:
        fail("matmul of a 0-D tensor")
    if len(a.shape) == 1 or len(b.shape) == 1:
        fail("matmul with a 1-D operand")
    if a.shape[-1] != b.shape[-2]:
        fail("matmul %s @ %s" % (list(a.shape), list(b.shape)))
    batch = bshape(a.shape[:-2], b.shape[:-2])
    return T.node("matmul", [a, b], list(batch) + [a.shape[-2], b.shape[-1]])


def concat(ts, dim=0):
    ts = list(ts)
    if not ts:
        fail("cat of nothing")
    r = len(ts[0].shape)
    d = ndim(dim, r)
    for t in ts:
        if len(t.shape) != r or any(t.shape[i] != ts[0].shape[i] for i in range(r) if i != d):
            fail("cat of %s on dim %d" % ([list(t.shape) for t in ts], d))
    if len(ts) == 1:
        return ts[0]
    sh = list(ts[0].shape)
    sh[d] = sum(t.shape[d] for t in ts)
    return T.node("concat", ts, sh, dim=d)


def stack(ts, dim=0):
    ts = list(ts)
    if all(t.vals is not None for t in ts):
        return fc.stack(ts, dim)
    r = len(ts[0].shape) + 1
    d = dim + r if dim < 0 else dim
    return concat([t.unsqueeze(d) for t in ts], d)


def index(x, idx):
    """Basic indexing: ints, slices (step 1), None, Ellipsis. A slice that
    keeps a dim whole is free; others are `slice` nodes (one per dim), ints
    drop their dim (a reshape), None adds one."""
    if not isinstance(idx, tuple):
        idx = (idx,)
    r = len(x.shape)
    n_real = sum(1 for i in idx if i is not None and i is not Ellipsis)
    if sum(1 for i in idx if i is Ellipsis) > 1 or n_real > r:
        fail("index %r of %s" % (idx, list(x.shape)))
    full = []
    for i in idx:
        if i is Ellipsis:
            full += [slice(None)] * (r - n_real)
        else:
            full.append(i)
    full += [slice(None)] * (r - sum(1 for i in full if i is not None))
    cur, d = x, 0
    final = []          # result shape
    starts = []
    for i in full:
        if i is None:
            final.append(1)
            continue
        n = x.shape[d]
        if isinstance(i, bool) or not isinstance(i, (int, slice)):
            fail("index %r (only ints, slices, None and ...)" % (i,))
        if isinstance(i, int):
            k = i + n if i < 0 else i
            if not 0 <= k < n:
                fail("index %d of a dim of %d" % (i, n))
            lo, hi, keep = k, k + 1, False
            st = 1
        else:
            lo, hi, st = i.indices(n)
            if st < 1:
                fail("slice with step %d" % st)
            hi = max(hi, lo)
            keep = True
        starts.append(lo)
        m = len(range(lo, hi, st))
        if (lo, hi, st) != (0, n, 1):
            if cur.const is not None:
                if st != 1:
                    fail("a constant sliced with a step")
            else:
                sh = list(cur.shape)
                sh[d] = m
                cur = T.node("slice", [cur], sh, cur.dtype, dim=d, start=lo, stop=lo + (m - 1) * st + 1 if m else lo,
                             step=st)
        if keep:
            final.append(m)
        d += 1
    if cur.const is not None:
        sh = [hi for hi in final]
        return cur.const.slice(cur, sh if sh else [1], [0] * (len(sh) - len(starts)) + starts)
    return cur.view(*final) if final else cur.view(1)


def pad(x, p, mode="constant", value=0.0):
    if mode != "constant" or value != 0:
        fail("pad mode %s value %r" % (mode, value))
    p = list(p)
    r = len(x.shape)
    before = [0] * r
    after = [0] * r
    for k in range(len(p) // 2):
        before[r - 1 - k] = p[2 * k]
        after[r - 1 - k] = p[2 * k + 1]
    if any(v < 0 for v in before + after):
        fail("negative padding")
    sh = [s + a + b for s, a, b in zip(x.shape, before, after)]
    return T.node("pad", [x], sh, before=before, after=after)


def dropout_node(x, p):
    if p == 0.0:
        return x
    T.masks += 1
    nm = "dropout_mask" if T.masks == 1 else "dropout_mask%d" % T.masks
    m = Tensor(x.shape, "bool", name=nm, dist={"kind": "bernoulli", "p": 1.0 - p}, origin="mask")
    m.role = "mask"
    m.p = p
    T.inputs.append(Snapshot(m))
    return T.node("dropout", [x, m], x.shape, p=p)


# ------------------------------------------------------------------ creation

def drawn(shape, kind, **kw):
    dist = {"kind": kind}
    dist.update(kw)
    return Tensor(as_shape(shape), dist=dist, origin="torch.%s" % {"uniform": "rand", "normal": "randn",
                                                                  "constant": "full"}[kind])


def t_rand(*shape, **kw):
    return forward_input(drawn(shape, "uniform", low=0.0, high=1.0))


def t_randn(*shape, **kw):
    return forward_input(drawn(shape, "normal", mean=0.0, std=1.0))


def forward_input(t):
    """torch.rand/randn inside forward: a fresh random tensor each call,
    made deterministic as an input drawn by the input generator."""
    if T.forwarding:
        T.randn += 1
        t.name = "randn%d" % T.randn if T.randn > 1 else "randn"
        t.role = "drawn"
        T.inputs.append(Snapshot(t))
    return t


def t_zeros(*shape, **kw):
    t = drawn(shape, "constant", value=0.0)
    t.origin = "torch.zeros"
    return const_in_forward(t)


def t_ones(*shape, **kw):
    t = drawn(shape, "constant", value=1.0)
    t.origin = "torch.ones"
    if kw.get("dtype") is bool or kw.get("dtype") == "bool":
        t.dtype = "bool"
    return const_in_forward(t)


def const_in_forward(t):
    """A constant made in forward may build a mask (tril); as an operand
    of a node it fails there (no graph name)."""
    return t


def t_zeros_like(x, **kw):
    if T.forwarding:
        return T.node("binary", [x], x.shape, fn="mul", const=0.0)
    return t_zeros(*x.shape)


def t_tril(x, diagonal=0):
    if x.dist != {"kind": "constant", "value": 1.0}:
        fail("tril of something other than ones")
    return Tri(True, diagonal, 1.0 if x.dtype != "bool" else True, 0.0 if x.dtype != "bool" else False).make(x.shape, x.dtype)


def t_triu(x, diagonal=0):
    if x.dist != {"kind": "constant", "value": 1.0}:
        fail("triu of something other than ones")
    return Tri(False, diagonal, 1.0 if x.dtype != "bool" else True, 0.0 if x.dtype != "bool" else False).make(x.shape, x.dtype)


class Number(float):
    """An element of a constant made in __init__ (torch.linspace(...)[k].item())."""

    def item(self):
        return float(self)


def t_linspace(a, b, n, **k):
    if T.forwarding:
        fail("torch.linspace inside forward")
    return [Number(a + (b - a) * i / (n - 1) if n > 1 else a) for i in range(n)]


def unary_fn(fn):
    """torch.exp, log, abs, sign, log2: an act node in forward, values on
    constants made in __init__."""
    def f(x):
        if x.vals is not None or x.dist is not None and not T.forwarding:
            if x.dist is not None and x.vals is None and x.dist.get("kind") != "constant":
                fail("torch.%s of a drawn tensor in __init__" % fn)
            return fc.unary(fn, x)
        if fn in ("sign", "log2"):
            fail("torch.%s in forward is not modelled" % fn)
        return act(x, fn)
    return f


def t_tensor(v, **k):
    if isinstance(v, (list, tuple)):
        fail("torch.tensor of a list")
    return fc.make((), [float(v)])


def roll(x, shifts, dims):
    shifts, dims = tup(shifts, 1), tup(dims, 1)
    r = len(x.shape)
    ds = [ndim(d, r) for d in dims]
    sh = [s % x.shape[d] for s, d in zip(shifts, ds)]
    if not any(sh):
        return x
    return T.node("roll", [x], x.shape, shifts=sh, dims=ds)


def t_flatten(x, start_dim=0, end_dim=-1):
    return x.flatten(start_dim, end_dim)


def t_max(x, dim=None, keepdim=False):
    return x.max(dim, keepdim)


def t_sum(x, dim=None, keepdim=False):
    return x.sum(dim, keepdim)


def t_mean(x, dim=None, keepdim=False):
    return x.mean(dim, keepdim)


class Unmodelled:
    """torch.X that faketorch lacks: calling it (or X.Y...) fails, naming it."""

    def __init__(self, name):
        self.name = name

    def __call__(self, *a, **k):
        fail("%s is not modelled" % self.name)

    def __getattr__(self, k):
        if k.startswith("__"):
            raise AttributeError(k)
        return Unmodelled("%s.%s" % (self.name, k))


def unsupported(name):
    return Unmodelled(name)


class Mod(types.ModuleType):
    """A fake module: attributes not given raise a clear error when called."""

    def __getattr__(self, k):
        if k.startswith("__"):
            raise AttributeError(k)
        return unsupported("%s.%s" % (self.__name__, k))


def make_torch():
    import faketorch_nn as fnn
    import faketorch_shape as fshape
    torch = Mod("torch")
    F = Mod("torch.nn.functional")
    nn = fnn.make_nn(F)
    torch.nn = nn
    torch.Tensor = Tensor
    torch.Size = Size
    torch.float32 = torch.float = "float32"
    torch.bool = "bool"
    torch.long = torch.int64 = "int64"
    torch.inf = math.inf
    torch.pi = math.pi
    torch.rand, torch.randn = t_rand, t_randn
    torch.zeros, torch.ones, torch.zeros_like = t_zeros, t_ones, t_zeros_like
    torch.tril, torch.triu = t_tril, t_triu
    torch.cat = torch.concat = concat
    torch.stack = stack
    torch.flatten = t_flatten
    torch.matmul = torch.bmm = matmul
    torch.einsum = fshape.einsum
    torch.cumsum = cumsum
    torch.max, torch.sum, torch.mean = t_max, t_sum, t_mean
    torch.relu = lambda x: act(x, "relu")
    torch.exp = unary_fn("exp")
    torch.log = unary_fn("log")
    torch.sign = unary_fn("sign")
    torch.log2 = unary_fn("log2")
    torch.tanh = lambda x: act(x, "tanh")
    torch.sigmoid = lambda x: act(x, "sigmoid")
    torch.abs = unary_fn("abs")
    torch.arange = fc.arange
    torch.meshgrid = fc.meshgrid
    torch.tensor = t_tensor
    torch.roll = roll
    torch.sqrt = lambda x: act(x, "sqrt")
    torch.clamp = lambda x, min=None, max=None: clamp(x, min, max)
    torch.linspace = t_linspace
    torch.pow = lambda x, e: x ** e if is_t(x) else fail("pow of a number by a tensor")
    torch.softmax = lambda x, dim: softmax(x, dim)
    torch.no_grad = fnn.NoGrad
    torch.is_tensor = is_t
    torch.device = lambda *a, **k: "cuda"
    torch.manual_seed = lambda *a: None
    torch.backends = Mod("torch.backends")
    F.relu = lambda x, inplace=False: act(x, "relu", inplace)
    F.relu6 = lambda x, inplace=False: act(x, "hardtanh", inplace, min_val=0.0, max_val=6.0)
    F.gelu = lambda x, approximate="none": act(x, "gelu_tanh" if approximate == "tanh" else "gelu")
    F.sigmoid = lambda x: act(x, "sigmoid")
    F.tanh = lambda x: act(x, "tanh")
    F.silu = lambda x, inplace=False: act(x, "silu", inplace)
    F.softmax = lambda x, dim=None, **k: softmax(x, dim)
    F.log_softmax = lambda x, dim=None, **k: softmax(x, dim, log=True)
    F.linear = fnn.f_linear
    F.pad = pad
    F.normalize = fnn.f_normalize
    F.max_pool2d = fnn.f_max_pool2d
    F.avg_pool2d = fnn.f_avg_pool2d
    F.adaptive_avg_pool2d = fnn.f_adaptive_avg_pool2d
    F.dropout = lambda x, p=0.5, training=True, inplace=False: dropout_node(x, p) if training else x
    nn.functional = F
    torch.nn.functional = F
    numpy = Mod("numpy")
    numpy.log2, numpy.sqrt, numpy.pi = math.log2, math.sqrt, math.pi
    einops = Mod("einops")
    einops.rearrange = fshape.rearrange
    return {"torch": torch, "torch.nn": nn, "torch.nn.functional": F, "einops": einops, "numpy": numpy}


# ------------------------------------------------------------------ driver

def trace(text):
    """Runs the KernelBench text with the fake torch: the Model built from
    get_init_inputs(), forward traced on get_inputs()'s tensors."""
    global T
    import faketorch_nn as fnn
    T = Trace()
    mods = make_torch()
    saved = {k: sys.modules.get(k) for k in mods}
    sys.modules.update(mods)
    try:
        code = compile(text, FNAME, "exec")
        env = {"__name__": "kernelbench"}
        exec(code, env)
        init_args = list(env["get_init_inputs"]())
        model = env["Model"](*init_args)
        ins = env["get_inputs"]()
        T.model = model
        T.env = env
        T.init_args = init_args
        import inspect
        argn = list(inspect.signature(model.forward).parameters)
        fnn.name_params(model, set(argn))
        if len(ins) > len(argn):
            raise TraceError("get_inputs gives %d tensors, forward takes %d" % (len(ins), len(argn)))
        for nm, t in zip(argn, ins):
            if not is_t(t) or t.dist is None:
                raise TraceError("get_inputs: %s is not a drawn tensor" % nm)
            t.name, t.role = nm, "input"
            T.inputs.append(Snapshot(t))
        T.forwarding = True
        y = model(*ins)
        T.forwarding = False
        if isinstance(y, (tuple, list)):
            raise TraceError("forward returns %d values (one output tensor expected)" % len(y))
        if not is_t(y) or y.name is None:
            raise TraceError("forward does not return a graph tensor")
        T.result = y
        return T
    except TraceError:
        raise
    except Exception as e:     # the model's own code failed on the fake torch
        tb, line = e.__traceback__, "?"
        while tb:
            if tb.tb_frame.f_code.co_filename == FNAME:
                line = tb.tb_lineno
            tb = tb.tb_next
        raise TraceError("line %s: %s: %s" % (line, type(e).__name__, e)) from e
    finally:
        for k, v in saved.items():
            if v is None:
                sys.modules.pop(k, None)
            else:
                sys.modules[k] = v



import faketorch_const as fc  # noqa: E402  (it reads this module's names at call time)
