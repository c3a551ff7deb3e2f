"""Reads a KernelBench level-2 module (its text) into the operator graph of
docs/graph-ir.md: the module-level constants, get_init_inputs bound to
__init__, the layers and parameters __init__ builds, and forward's statement
chain, each call translated to graph nodes with their shapes.

parse(text, small=None) -> Module. `small` maps module-level names to values
that replace theirs where they are assigned (the shrunk copies for host
emulation): everything derived from them (tuples, conv output sizes) follows.
Python 3.11 stdlib only."""
import ast
import math



class ParseError(Exception):
    pass


def fail(node, msg):
    raise ParseError("line %d: %s" % (getattr(node, "lineno", 0), msg))


# A value known at parse time, with the module-level name it was read from
# (an int or float), or a tuple of such names (a shape tuple).
class V:
    def __init__(self, value, sym=None):
        self.value, self.sym = value, sym

    def names(self):
        s = self.sym
        if s is None:
            return []
        if isinstance(s, tuple):
            return [x for x in s if x]
        return [s]


# ------------------------------------------------------------ module level

def literal(node, env, syms=None):
    """Evaluates a constant expression over module-level names: V."""
    if isinstance(node, ast.Constant):
        return V(node.value)
    if isinstance(node, ast.Name):
        if node.id not in env:
            fail(node, "unknown name %s" % node.id)
        return V(env[node.id], (syms or {}).get(node.id, node.id))
    if isinstance(node, (ast.Tuple, ast.List)):
        parts = [literal(e, env, syms) for e in node.elts]
        sym = tuple(p.sym if isinstance(p.sym, str) else None for p in parts)
        return V(tuple(p.value for p in parts), sym)
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.USub):
        return V(-literal(node.operand, env, syms).value)
    if isinstance(node, ast.BinOp):
        a, b = literal(node.left, env, syms).value, literal(node.right, env, syms).value
        ops = {ast.Add: lambda: a + b, ast.Sub: lambda: a - b, ast.Mult: lambda: a * b,
               ast.Div: lambda: a / b, ast.FloorDiv: lambda: a // b}
        if type(node.op) in ops:
            return V(ops[type(node.op)]())
    fail(node, "not a constant expression: %s" % ast.unparse(node))


def module_env(tree, small):
    """Module-level assignments in order; `small` overrides at assignment.
    syms: a tuple-valued name -> the names of its elements."""
    env, stmts, syms = {}, [], {}
    for st in tree.body:
        if not isinstance(st, ast.Assign):
            continue
        lv = literal(st.value, env, syms)
        val = lv.value
        assigned = []
        for tgt in st.targets:
            if isinstance(tgt, ast.Name):
                assigned.append((tgt.id, val, lv.sym if isinstance(lv.sym, tuple) else tgt.id))
            elif isinstance(tgt, ast.Tuple):
                if not isinstance(val, tuple) or len(val) != len(tgt.elts):
                    fail(st, "cannot unpack")
                assigned += [(e.id, v, e.id) for e, v in zip(tgt.elts, val)]
            else:
                fail(st, "unsupported assignment target")
        for name, v, sym in assigned:
            if small and name in small:
                v = small[name]
            env[name] = v
            syms[name] = sym
        stmts.append((st, [n for n, _, _ in assigned]))
    return env, stmts, syms


def function(tree, name, cls=None):
    body = tree.body
    if cls:
        body = [n for n in tree.body if isinstance(n, ast.ClassDef) and n.name == cls]
        if not body:
            raise ParseError("no class %s" % cls)
        body = body[0].body
    for n in body:
        if isinstance(n, ast.FunctionDef) and n.name == name:
            return n
    raise ParseError("no function %s" % name)


def returned_list(fn):
    for st in fn.body:
        if isinstance(st, ast.Return):
            if not isinstance(st.value, (ast.List, ast.Tuple)):
                fail(st, "%s does not return a list" % fn.name)
            return st.value.elts
    fail(fn, "%s returns nothing" % fn.name)


def dotted(node):
    parts = []
    while isinstance(node, ast.Attribute):
        parts.append(node.attr)
        node = node.value
    if isinstance(node, ast.Name):
        parts.append(node.id)
        return ".".join(reversed(parts))
    return None


# ------------------------------------------------------------ layers

# Constructor signatures (PyTorch's positional order and defaults).
def _sig(*names, **defaults):
    return list(names), defaults

CONV_SIG = _sig("in_channels", "out_channels", "kernel_size", "stride", "padding", "dilation",
                "groups", "bias", stride=1, padding=0, dilation=1, groups=1, bias=True)
CONVT_SIG = _sig("in_channels", "out_channels", "kernel_size", "stride", "padding", "output_padding",
                 "groups", "bias", "dilation", stride=1, padding=0, output_padding=0, groups=1,
                 bias=True, dilation=1)
SIGS = {
    "Linear": _sig("in_features", "out_features", "bias", bias=True),
    "Conv1d": CONV_SIG, "Conv2d": CONV_SIG, "Conv3d": CONV_SIG,
    "ConvTranspose1d": CONVT_SIG, "ConvTranspose2d": CONVT_SIG, "ConvTranspose3d": CONVT_SIG,
    "MaxPool1d": _sig("kernel_size", "stride", "padding", "dilation", "return_indices", "ceil_mode",
                      stride=None, padding=0, dilation=1, return_indices=False, ceil_mode=False),
    "AvgPool1d": _sig("kernel_size", "stride", "padding", "ceil_mode", "count_include_pad",
                      stride=None, padding=0, ceil_mode=False, count_include_pad=True),
    "AdaptiveAvgPool1d": _sig("output_size"),
    "BatchNorm1d": _sig("num_features", "eps", "momentum", "affine", "track_running_stats",
                        eps=1e-5, momentum=0.1, affine=True, track_running_stats=True),
    "InstanceNorm1d": _sig("num_features", "eps", "momentum", "affine", "track_running_stats",
                           eps=1e-5, momentum=0.1, affine=False, track_running_stats=False),
    "GroupNorm": _sig("num_groups", "num_channels", "eps", "affine", eps=1e-5, affine=True),
    "LayerNorm": _sig("normalized_shape", "eps", "elementwise_affine", "bias", eps=1e-5,
                      elementwise_affine=True, bias=True),
    "ReLU": _sig("inplace", inplace=False), "Tanh": _sig(), "Sigmoid": _sig(), "Mish": _sig("inplace", inplace=False),
    "Hardswish": _sig("inplace", inplace=False),
    "GELU": _sig("approximate", approximate="none"),
    "LeakyReLU": _sig("negative_slope", "inplace", negative_slope=0.01, inplace=False),
    "Hardtanh": _sig("min_val", "max_val", "inplace", min_val=-1.0, max_val=1.0, inplace=False),
    "Softmax": _sig("dim", dim=None),
    "Dropout": _sig("p", "inplace", p=0.5, inplace=False),
}
for _d in "23":
    SIGS["MaxPool%sd" % _d] = SIGS["MaxPool1d"]
    SIGS["AvgPool%sd" % _d] = SIGS["AvgPool1d"]
    SIGS["AdaptiveAvgPool%sd" % _d] = SIGS["AdaptiveAvgPool1d"]
    SIGS["BatchNorm%sd" % _d] = SIGS["BatchNorm1d"]
    SIGS["InstanceNorm%sd" % _d] = SIGS["InstanceNorm1d"]

# Arguments whose module-level names are sizes (integers) or scalars (floats).
SIZE_ARGS = {"in_channels", "out_channels", "kernel_size", "stride", "padding", "dilation", "groups",
             "output_padding", "in_features", "out_features", "num_features", "num_groups",
             "num_channels", "normalized_shape", "output_size", "dim"}
SCALAR_ARGS = {"eps", "negative_slope", "min_val", "max_val", "p"}


class Layer:
    def __init__(self, attr, cls, args):
        self.attr, self.cls, self.args = attr, cls, args   # args: name -> V

    def a(self, name):
        return self.args[name].value


class Param:
    """nn.Parameter: shape (values), dim names, distribution, how."""

    def __init__(self, attr, shape, names, dist, init):
        self.attr, self.shape, self.names, self.dist, self.init = attr, shape, names, dist, init


def tup(v, n):
    return list(v) if isinstance(v, (tuple, list)) else [v] * n


# ------------------------------------------------------------ the module

class Module:
    def __init__(self):
        self.env = {}          # module-level name -> value
        self.stmts = []        # (ast.Assign, [names])
        self.roles = {}        # module-level name -> set of "size", "scalar", "init"
        self.init_args = {}    # __init__ parameter -> value (defaults filled)
        self.init_syms = {}    # __init__ parameter -> V
        self.layers = {}       # attr -> Layer
        self.params = {}       # attr -> Param (registration order)
        self.plain = {}        # attr -> V
        self.order = []        # attrs in __init__ order
        self.inputs = []       # (name, shape, dim names, dist)
        self.tensors = {}      # graph tensor -> (shape, dim names)
        self.nodes = []
        self.used_params = []  # spec tensors of parameters, registration order later
        self.masks = []        # dropout masks: (name, shape, names, p)
        self.notes = []
        self.docstring = ""

    def role(self, v, role):
        for n in v.names():
            self.roles.setdefault(n, set()).add(role)


def parse(text, small=None):
    tree = ast.parse(text)
    m = Module()
    m.env, m.stmts, m.syms = module_env(tree, small)
    cls = [n for n in tree.body if isinstance(n, ast.ClassDef) and n.name == "Model"]
    if not cls:
        raise ParseError("no class Model")
    m.docstring = ast.get_docstring(cls[0]) or ""
    init = function(tree, "__init__", "Model")
    fwd = function(tree, "forward", "Model")
    # get_init_inputs bound to __init__'s parameters
    vals = [literal(e, m.env, m.syms) for e in returned_list(function(tree, "get_init_inputs"))]
    params = [a.arg for a in init.args.args[1:]]
    defaults = init.args.defaults
    dflt = dict(zip(params[len(params) - len(defaults):], defaults))
    if len(vals) > len(params):
        fail(init, "get_init_inputs has more values than __init__ takes")
    scope = {}
    for i, p in enumerate(params):
        if i < len(vals):
            scope[p] = vals[i]
        elif p in dflt:
            scope[p] = V(literal(dflt[p], {}).value)
        else:
            fail(init, "no value for __init__ parameter %s" % p)
        m.init_args[p] = scope[p].value
    m.init_syms = scope
    for st in init.body:
        read_init_stmt(m, st, scope)
    # get_inputs: forward's tensors
    fargs = [a.arg for a in fwd.args.args[1:]]
    gi = returned_list(function(tree, "get_inputs"))
    if len(gi) != len(fargs):
        fail(fwd, "get_inputs gives %d tensors, forward takes %d" % (len(gi), len(fargs)))
    for name, e in zip(fargs, gi):
        if not (isinstance(e, ast.Call) and dotted(e.func) in ("torch.rand", "torch.randn")):
            fail(e, "get_inputs: only torch.rand/torch.randn")
        dims = [literal(a, m.env, m.syms) for a in e.args]
        for d in dims:
            m.role(d, "size")
            for n in ast.walk(e):
                if isinstance(n, ast.Name) and n.id in m.env:
                    m.roles.setdefault(n.id, set()).add("size")
        shape = [d.value for d in dims]
        names = [d.sym if isinstance(d.sym, str) else None for d in dims]
        dist = ({"kind": "uniform", "low": 0.0, "high": 1.0} if dotted(e.func) == "torch.rand"
                else {"kind": "normal", "mean": 0.0, "std": 1.0})
        m.inputs.append((name, shape, names, dist))
        m.tensors[name] = (shape, names)
    from forward import translate_forward
    translate_forward(m, fwd)
    return m


def read_init_stmt(m, st, scope):
    if isinstance(st, ast.Expr) and isinstance(st.value, ast.Call):
        if dotted(st.value.func) in ("super.__init__",) or "__init__" in ast.unparse(st.value.func):
            return
        fail(st, "unsupported statement in __init__")
    if not (isinstance(st, ast.Assign) and len(st.targets) == 1 and
            isinstance(st.targets[0], ast.Attribute) and dotted(st.targets[0].value) == "self"):
        fail(st, "unsupported statement in __init__: %s" % ast.unparse(st))
    attr, val = st.targets[0].attr, st.value
    m.order.append(attr)
    fn = dotted(val.func) if isinstance(val, ast.Call) else None
    if fn and fn.startswith("nn.") and fn[3:] in SIGS:
        m.layers[attr] = bind_layer(m, attr, fn[3:], val, scope)
    elif fn == "nn.Parameter":
        m.params[attr] = make_param(m, attr, val.args[0], scope)
    else:
        m.plain[attr] = init_value(m, val, scope)


def init_value(m, node, scope):
    """A value in __init__: a parameter's V, a literal, or arithmetic."""
    if isinstance(node, ast.Name):
        if node.id not in scope:
            fail(node, "unknown name %s" % node.id)
        return scope[node.id]
    if isinstance(node, (ast.Tuple, ast.List)):
        parts = [init_value(m, e, scope) for e in node.elts]
        return V(tuple(p.value for p in parts), tuple(p.sym if isinstance(p.sym, str) else None for p in parts))
    if isinstance(node, ast.Constant):
        return V(node.value)
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.USub):
        return V(-init_value(m, node.operand, scope).value)
    fail(node, "unsupported value in __init__: %s" % ast.unparse(node))


def bind_layer(m, attr, cls, call, scope):
    names, defaults = SIGS[cls]
    args = {}
    if len(call.args) > len(names):
        fail(call, "too many arguments for nn.%s" % cls)
    for n, e in zip(names, call.args):
        args[n] = init_value(m, e, scope)
    for kw in call.keywords:
        if kw.arg not in names:
            fail(call, "nn.%s has no argument %s" % (cls, kw.arg))
        args[kw.arg] = init_value(m, kw.value, scope)
    for n in names:
        if n not in args:
            if n not in defaults:
                fail(call, "nn.%s needs %s" % (cls, n))
            args[n] = V(defaults[n])
    for n, v in args.items():
        sym_src = v
        # the names an __init__ parameter came from
        if n in SIZE_ARGS:
            m.role(sym_src, "size")
        elif n in SCALAR_ARGS:
            m.role(sym_src, "scalar")
        else:
            m.role(sym_src, "other")
    return Layer(attr, cls, args)


def make_param(m, attr, node, scope):
    """nn.Parameter(torch.randn(shape) [* c]), torch.ones/zeros, torch.tensor(v)."""
    scale = 1.0
    if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Mult):
        c = node.right if isinstance(node.left, ast.Call) else node.left
        node = node.left if isinstance(node.left, ast.Call) else node.right
        scale = float(init_value(m, c, scope).value)
    if not isinstance(node, ast.Call):
        fail(node, "unsupported nn.Parameter initialiser")
    fn = dotted(node.func)
    if fn == "torch.tensor":
        v = init_value(m, node.args[0], scope)
        m.role(v, "init")
        return Param(attr, [1], [None], {"kind": "constant", "value": float(v.value) * scale},
                     "torch.tensor(%r): a 0-dim parameter, stored with shape [1]" % v.value)
    if len(node.args) == 1:
        sh = init_value(m, node.args[0], scope)
    else:
        sh = init_value(m, ast.Tuple(elts=node.args), scope)
    m.role(sh, "size")
    shape = list(sh.value) if isinstance(sh.value, tuple) else [sh.value]
    names = list(sh.sym) if isinstance(sh.sym, tuple) else [sh.sym if isinstance(sh.sym, str) else None]
    if fn == "torch.randn":
        dist = {"kind": "normal", "mean": 0.0, "std": scale}
        init = "torch.randn" + (" * %r" % scale if scale != 1.0 else "") + ": N(0, %r)" % scale
    elif fn in ("torch.ones", "torch.zeros"):
        dist = {"kind": "constant", "value": (1.0 if fn == "torch.ones" else 0.0) * scale}
        init = fn
    elif fn == "torch.rand":
        dist = {"kind": "uniform", "low": 0.0, "high": scale}
        init = "torch.rand"
    else:
        fail(node, "unsupported nn.Parameter initialiser %s" % fn)
    return Param(attr, shape, names, dist, init)
