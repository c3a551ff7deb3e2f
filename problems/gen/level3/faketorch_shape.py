"""einsum and einops.rearrange for faketorch: decompositions into permute,
reshape, batched matmul, broadcast products and sums (docs/graph-ir.md,
"Level 3"). tests/tools/check_faketorch.py checks them against index loops."""
import faketorch as ft


def einsum(eq, *ops):
    """Two-operand einsum as permutes, reshapes and one batched matmul."""
    if len(ops) == 1 and isinstance(ops[0], (list, tuple)):
        ops = tuple(ops[0])
    lhs, out = eq.replace(" ", "").split("->")
    specs = lhs.split(",")
    if len(specs) != len(ops) or len(ops) < 2:
        ft.fail("einsum %r" % eq)
    cur, cspec = ops[0], specs[0]
    for k in range(1, len(ops)):
        rest = "".join(specs[k + 1:]) + out
        cur, cspec = einsum2(cspec, cur, specs[k], ops[k], rest)
    # final: keep out's letters (sum any others), in out's order
    extra = [c for c in cspec if c not in out]
    if extra:
        cur = ft.reduce(cur, "sum", [cspec.index(c) for c in extra], False)
        cspec = "".join(c for c in cspec if c not in extra)
    return cur.permute(*[cspec.index(c) for c in out])


def einsum2(sa, a, sb, b, keep):
    """a (letters sa) times b (sb), summing letters not in `keep`: the
    result's letters are batch + a-only + b-only."""
    for s, t in ((sa, a), (sb, b)):
        if len(s) != len(t.shape) or len(set(s)) != len(s):
            ft.fail("einsum operand %r for shape %s" % (s, list(t.shape)))
    dim = {}
    for s, t in ((sa, a), (sb, b)):
        for c, n in zip(s, t.shape):
            if dim.setdefault(c, n) != n:
                ft.fail("einsum letter %s: %d and %d" % (c, dim[c], n))
    # letters only in one operand and not kept: sum them first
    for s, t, o in ((sa, a, sb), (sb, b, sa)):
        gone = [c for c in s if c not in o and c not in keep]
        if gone:
            ft.fail("einsum: letter(s) %s summed out of one operand" % gone)
    batch = [c for c in sa if c in sb and c in keep]
    contr = [c for c in sa if c in sb and c not in keep]
    ao = [c for c in sa if c not in sb]
    bo = [c for c in sb if c not in sa]
    sz = lambda cs: ft.prod(dim[c] for c in cs)  # noqa: E731
    A = a.permute(*[sa.index(c) for c in batch + ao + contr]).view(*([dim[c] for c in batch] + [sz(ao), sz(contr)]))
    B = b.permute(*[sb.index(c) for c in batch + contr + bo]).view(*([dim[c] for c in batch] + [sz(contr), sz(bo)]))
    if not contr:
        # nothing summed: a broadcast product
        A = a.permute(*[sa.index(c) for c in batch + ao]).view(*([dim[c] for c in batch + ao] + [1] * len(bo)))
        B = b.permute(*[sb.index(c) for c in batch + bo]).view(*([dim[c] for c in batch] + [1] * len(ao) +
                                                                  [dim[c] for c in bo]))
        return ft.binary("mul", A, B), "".join(batch + ao + bo)
    if not batch:
        A, B = A.view(1, sz(ao), sz(contr)), B.view(1, sz(contr), sz(bo))
    C = ft.matmul(A, B).view(*[dim[c] for c in batch + ao + bo] or [1])
    return C, "".join(batch + ao + bo)


def rearrange(x, pattern, **axes):
    """einops.rearrange for patterns of plain letters and parenthesised
    groups, `...` allowed once on each side."""
    lhs, rhs = [s.strip() for s in pattern.split("->")]

    def parse(side):
        out, i, toks = [], 0, side.replace("(", " ( ").replace(")", " ) ").split()
        while i < len(toks):
            if toks[i] == "(":
                j = toks.index(")", i)
                out.append(toks[i + 1:j])
                i = j + 1
            else:
                out.append([toks[i]])
                i += 1
        return out
    L, R = parse(lhs), parse(rhs)
    nell = len(x.shape) - (len(L) - (1 if ["..."] in L else 0))
    sizes = dict(axes)
    flat_in = []
    for d, g in zip_ell(L, x.shape, nell):
        if g == ["..."]:
            for k, n in enumerate(d):
                sizes["...%d" % k] = n
                flat_in.append("...%d" % k)
            continue
        unknown = [c for c in g if c not in sizes]
        known = ft.prod(sizes[c] for c in g if c in sizes)
        if len(unknown) > 1 or d % known:
            ft.fail("rearrange %r: cannot split %d" % (pattern, d))
        if unknown:
            sizes[unknown[0]] = d // known
        elif known != d:
            ft.fail("rearrange %r: %d is not %d" % (pattern, d, known))
        flat_in += g
    y = x.view(*[sizes[c] for c in flat_in])
    flat_out = []
    for g in R:
        if g == ["..."]:
            flat_out += ["...%d" % k for k in range(nell)]
        else:
            flat_out += g
    y = y.permute(*[flat_in.index(c) for c in flat_out])
    osh = []
    for g in R:
        if g == ["..."]:
            osh += [sizes["...%d" % k] for k in range(nell)]
        else:
            osh.append(ft.prod(sizes[c] for c in g))
    return y.view(*osh)


def zip_ell(groups, shape, nell):
    i = 0
    for g in groups:
        if g == ["..."]:
            yield tuple(shape[i:i + nell]), g
            i += nell
        else:
            yield shape[i], g
            i += 1
