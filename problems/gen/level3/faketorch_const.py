"""Constant tensors with values for faketorch: what a module computes in
__init__ from torch.arange, meshgrid, zeros and slice assignment (Swin V2's
relative-position tables and shifted-window masks). A constant carries its
values (a flat list) and, where it came from other constants by an
operation the graph has, that operation (its recipe). Used in forward it
becomes graph nodes: a `const` node with its values when it is small (at
most MAX_LITERAL values) or has no recipe, else its recipe over its
operands; used as an index it becomes a `take` node."""
import itertools
import math
import struct

import faketorch as ft

MAX_LITERAL = 4096      # values a const node carries (reference.cu holds them as literals)


def numel(shape):
    n = 1
    for d in shape:
        n *= d
    return n


def strides(shape):
    s, acc = [], 1
    for d in reversed(shape):
        s.append(acc)
        acc *= d
    return list(reversed(s))


def f32(v):
    """v rounded to float32, as PyTorch holds a float32 constant."""
    try:
        return struct.unpack("<f", struct.pack("<f", v))[0]
    except OverflowError:
        return math.copysign(math.inf, v)


def make(shape, vals, dtype="float32", recipe=None):
    t = ft.Tensor(tuple(shape), dtype, origin="constant")
    t.vals = [f32(v) for v in vals] if dtype == "float32" else list(vals)
    t.recipe = recipe
    return t


def is_num(t):
    return isinstance(t, ft.Tensor) and t.vals is not None


def from_dist(t):
    """A torch.zeros / ones / full made in __init__, as values."""
    if t.dist is None or t.dist.get("kind") != "constant":
        ft.fail("a drawn tensor used as a constant")
    return make(t.shape, [float(t.dist["value"])] * numel(t.shape), t.dtype)


def arange(a, b=None, step=1, dtype=None, **k):
    if b is None:
        a, b = 0, a
    v = []
    x = a
    while (step > 0 and x < b) or (step < 0 and x > b):
        v.append(float(x))
        x += step
    return make([len(v)], v, "float32" if dtype == "float32" or any(isinstance(q, float) for q in (a, b, step))
                else "int64")


def meshgrid(*ts, indexing="ij"):
    if len(ts) == 1 and isinstance(ts[0], (list, tuple)):
        ts = tuple(ts[0])
    if indexing != "ij":
        ft.fail("meshgrid indexing %r" % indexing)
    shape = [t.shape[0] for t in ts]
    out = []
    for k, t in enumerate(ts):
        out.append(make(shape, [t.vals[c[k]] for c in itertools.product(*[range(d) for d in shape])], t.dtype))
    return tuple(out)


def stack(ts, dim=0):
    r = len(ts[0].shape) + 1
    d = dim + r if dim < 0 else dim
    shape = list(ts[0].shape[:d]) + [len(ts)] + list(ts[0].shape[d:])
    vals = []
    for c in itertools.product(*[range(x) for x in shape]):
        t = ts[c[d]]
        vals.append(t.vals[sum(a * b for a, b in zip(c[:d] + c[d + 1:], strides(t.shape)))])
    return make(shape, vals, ts[0].dtype)


def view(t, shape):
    return make(shape, t.vals, t.dtype, ("reshape", [t], {}))


def permute(t, perm):
    osh = [t.shape[p] for p in perm]
    st = strides(t.shape)
    vals = [t.vals[sum(c * st[p] for c, p in zip(oc, perm))] for oc in itertools.product(*[range(d) for d in osh])]
    return make(osh, vals, t.dtype, ("permute", [t], {"perm": list(perm)}))


def positions(t, idx):
    """Basic indexing: (result shape, flat source positions)."""
    if not isinstance(idx, tuple):
        idx = (idx,)
    r = len(t.shape)
    n_real = sum(1 for i in idx if i is not None and i is not Ellipsis)
    full = []
    for i in idx:
        full += [slice(None)] * (r - n_real) if i is Ellipsis else [i]
    full += [slice(None)] * (r - sum(1 for i in full if i is not None))
    axes, shape, d = [], [], 0
    for i in full:
        if i is None:
            shape.append(1)
            continue
        n = t.shape[d]
        if isinstance(i, int):
            axes.append([i + n if i < 0 else i])
        elif isinstance(i, slice):
            rg = list(range(*i.indices(n)))
            axes.append(rg)
            shape.append(len(rg))
        else:
            ft.fail("constant indexed by %r" % (i,))
        d += 1
    st = strides(t.shape)
    pos = [sum(a * b for a, b in zip(c, st)) for c in itertools.product(*axes)]
    return shape, pos


def getitem(t, idx):
    shape, pos = positions(t, idx)
    return make(shape, [t.vals[p] for p in pos], t.dtype)


def setitem(t, idx, v):
    if t.vals is None:
        u = from_dist(t)
        t.vals, t.dist = u.vals, None
    shape, pos = positions(t, idx)
    src = broadcast_to(v, shape)
    for p, x in zip(pos, src):
        t.vals[p] = x
    t.recipe = None


def broadcast_to(v, shape):
    if not is_num(v):
        return [float(ft.scalar_of(v))] * numel(shape)
    return [v.vals[i] for i in bindex(v.shape, shape)]


def bindex(ishape, oshape):
    """Flat positions in ishape for every element of oshape (broadcast)."""
    al = [1] * (len(oshape) - len(ishape)) + list(ishape)
    st = strides(al)
    return [sum(0 if a == 1 else c * s for c, a, s in zip(oc, al, st))
            for oc in itertools.product(*[range(d) for d in oshape])]


FNS = {"add": lambda a, b: a + b, "sub": lambda a, b: a - b, "mul": lambda a, b: a * b,
       "div": lambda a, b: a / b if b else (math.copysign(math.inf, a) if a else math.nan),
       "pow": lambda a, b: a ** b}


def binary(fn, a, b, swap=False):
    f = FNS[fn]
    if not is_num(a):
        a = from_dist(a) if isinstance(a, ft.Tensor) else a
    if isinstance(b, ft.Tensor) and not is_num(b):
        b = from_dist(b)
    if not is_num(b):
        c = float(b)
        g = (lambda x: f(c, x)) if swap else (lambda x: f(x, c))
        attrs = {"fn": fn, "const": c}
        if swap:
            attrs["swap"] = True
        return make(a.shape, [g(x) for x in a.vals], a.dtype, ("binary", [a], attrs))
    x, y = (b, a) if swap else (a, b)
    shape = ft.bshape(x.shape, y.shape)
    xi, yi = bindex(x.shape, shape), bindex(y.shape, shape)
    return make(shape, [f(x.vals[i], y.vals[j]) for i, j in zip(xi, yi)], a.dtype, ("binary", [x, y], {"fn": fn}))


UNARY = {"sign": lambda x: (x > 0) - (x < 0), "log2": math.log2, "abs": abs, "log": math.log, "exp": math.exp,
         "neg": lambda x: -x, "sqrt": math.sqrt}


def unary(fn, t):
    if not is_num(t):
        t = from_dist(t)
    vals = [float(UNARY[fn](x)) for x in t.vals]
    rec = ("act", [t], {"fn": fn}) if fn in ("abs", "log", "exp", "neg", "sqrt") else None
    return make(t.shape, vals, t.dtype, rec)


def compare(fn, t, c):
    c = float(c)
    f = {"ne": lambda x: x != c, "eq": lambda x: x == c}[fn]
    return make(t.shape, [1.0 if f(x) else 0.0 for x in t.vals], "bool", ("compare", [t], {"fn": fn, "const": c}))


def masked_fill(t, mask, v):
    v = float(v)
    mi = bindex(mask.shape, t.shape)
    return make(t.shape, [v if mask.vals[m] else x for x, m in zip(t.vals, mi)], t.dtype,
                ("masked_fill", [t, mask], {"value": v}))


def reduce_sum(t, dims, keepdim):
    r = len(t.shape)
    ds = sorted(d + r if d < 0 else d for d in dims)
    kept = [s for i, s in enumerate(t.shape) if i not in ds]
    acc = {}
    for c, x in zip(itertools.product(*[range(d) for d in t.shape]), t.vals):
        k = tuple(v for i, v in enumerate(c) if i not in ds)
        acc[k] = acc.get(k, 0.0) + x
    shape = [1 if i in ds else s for i, s in enumerate(t.shape)] if keepdim else (kept or [1])
    return make(shape, [acc[k] for k in itertools.product(*[range(d) for d in kept])], t.dtype,
                ("reduce", [t], {"fn": "sum", "dims": ds, "keepdim": bool(keepdim)}))


def materialize(t):
    """The constant as a graph tensor (in forward)."""
    if t.name is not None:
        return t
    n = numel(t.shape)
    if n <= MAX_LITERAL or t.recipe is None:
        if n > MAX_LITERAL:
            ft.fail("a constant of %d values built without graph operations (over %d)" % (n, MAX_LITERAL))
        g = ft.T.node("const", [], list(t.shape) or [1], values=[float(x) for x in t.vals])
    else:
        op, ins, attrs = t.recipe
        g = ft.T.node(op, [materialize(x) for x in ins], list(t.shape) or [1], **attrs)
    t.name = g.name
    return t


def take(x, idx):
    """x[idx] along dim 0 with a constant integer index tensor."""
    ii = [int(v) for v in idx.vals]
    if any(v != int(v) for v in idx.vals) or any(not 0 <= v < x.shape[0] for v in ii):
        ft.fail("index tensor out of range for %s" % list(x.shape))
    return ft.T.node("take", [x], list(idx.shape) + list(x.shape[1:]), index=ii)
