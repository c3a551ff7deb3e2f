#!/usr/bin/env python3
"""Checks a site rendered by `kforge site` against its store, computing the
expected numbers independently (in Python, from the raw tables):

    sitecheck.py STORE SITE_DIR

Prints TAP lines (ok / not ok) and exits non-zero on any failure. Checks:
every page exists, every relative link resolves, the overview counts, the
fast_p tables and geometric means per GPU, the leaderboard, each problem's
rounds and best kernels, each kernel page's evaluations, and that nothing
from the store became markup (no <script> but the index's site.js, no on* attributes)."""
import html.parser
import math
import os
import re
import sqlite3
import sys
import urllib.parse

N = 0
FAILED = 0


def check(cond, desc, detail=""):
    global N, FAILED
    N += 1
    if cond:
        print("ok %d - %s" % (N, desc))
    else:
        FAILED += 1
        print("not ok %d - %s" % (N, desc))
        for line in str(detail).splitlines()[:10]:
            print("#   " + line)


class Node:
    def __init__(self, tag, attrs, parent):
        self.tag, self.attrs, self.parent = tag, dict(attrs), parent
        self.children, self.text = [], []

    def all(self):
        yield self
        for c in self.children:
            yield from c.all()

    def find_all(self, tag=None, **attrs):
        for n in self.all():
            if tag and n.tag != tag:
                continue
            if all(n.attrs.get(k.replace("_", "-")) == v for k, v in attrs.items()):
                yield n

    def find(self, tag=None, **attrs):
        return next(self.find_all(tag, **attrs), None)

    def get_text(self):
        return "".join(self.text) + "".join(c.get_text() for c in self.children)


VOID = {"meta", "link", "br", "img", "input", "hr", "area", "base", "col", "source", "wbr"}


class Builder(html.parser.HTMLParser):
    def __init__(self):
        super().__init__(convert_charrefs=True)
        self.root = Node("#root", [], None)
        self.cur = self.root
        self.all_tags = []

    def handle_starttag(self, tag, attrs):
        n = Node(tag, attrs, self.cur)
        self.all_tags.append(n)
        self.cur.children.append(n)
        if tag not in VOID:
            self.cur = n

    def handle_startendtag(self, tag, attrs):
        n = Node(tag, attrs, self.cur)
        self.all_tags.append(n)
        self.cur.children.append(n)

    def handle_endtag(self, tag):
        n = self.cur
        while n is not self.root and n.tag != tag:
            n = n.parent
        if n is not self.root:
            self.cur = n.parent

    def handle_data(self, data):
        # keep order loosely: text of a node, children's text after
        t = Node("#text", [], self.cur)
        t.text.append(data)
        self.cur.children.append(t)


def parse(path):
    b = Builder()
    with open(path, encoding="utf-8") as f:
        b.feed(f.read())
    return b


def fmt_num(v):
    """site/html.c fmt_num: a speedup or ratio as the site prints it."""
    a = abs(v)
    if a >= 1000:
        return "%.0f" % v
    if a >= 100:
        return "%.1f" % v
    if a >= 0.01 or a == 0:
        return "%.2f" % v
    return "%.3g" % v


def slug(pid):
    out = []
    for i, c in enumerate(pid[:120]):
        if c.isascii() and (c.isalnum() or c in "_-"):
            out.append(c)
        elif c == "." and i > 0:
            out.append(c)
        elif c == "/":
            out.append("-")
        else:
            out.append("_")
    return "".join(out) or "_"


def close(a, b, rel=1e-9):
    if a is None or b is None:
        return a is None and b is None
    return abs(a - b) <= rel * max(1.0, abs(a), abs(b))


def fv(node, key="data-v"):
    v = node.attrs.get(key)
    return float(v) if v not in (None, "") else None


def best_kernels(db):
    """(problem, gpu) -> (hash, verdict, time_ms), by the documented rule."""
    ver = {}
    for h, p, g, verdict, eid, ts, vid in db.execute(
            "SELECT kernel_hash, problem_id, gpu_name, verdict, eval_id, created_at, id"
            " FROM verifications"):
        k = (h, p, g)
        if k not in ver or (ts, vid) > ver[k][2]:
            ver[k] = (verdict, eid, (ts, vid))
    etime = dict(db.execute("SELECT id, time_mean_ms FROM evals"))
    corr = {}
    for h, p, g, t in db.execute(
            "SELECT kernel_hash, problem_id, gpu_name, time_mean_ms FROM evals"
            " WHERE status = 'correct' AND time_mean_ms > 0"):
        k = (h, p, g)
        corr[k] = min(t, corr.get(k, t))
    elig = {}
    for (h, p, g), t in corr.items():
        v = ver.get((h, p, g))
        if v and v[0] == "failed":
            continue
        if v and v[0] == "verified" and etime.get(v[1]) and etime[v[1]] > 0:
            t = etime[v[1]]
        elig.setdefault((p, g), []).append((h, v[0] if v else None, t))
    best = {}
    for k, lst in elig.items():
        if any(x[1] == "verified" for x in lst):
            lst = [x for x in lst if x[1] == "verified"]
        best[k] = min(lst, key=lambda x: (x[2], x[0]))
    return best


def main():
    store, site = sys.argv[1], sys.argv[2]
    db = sqlite3.connect("file:%s?mode=ro" % store, uri=True)
    one = lambda q, *a: db.execute(q, a).fetchone()[0]
    problems = [r[0] for r in db.execute("SELECT id FROM problems ORDER BY id")]
    kernels = [r[0] for r in db.execute("SELECT hash FROM kernels")]
    base = {(p, g, v): m for p, g, v, m in db.execute(
        "SELECT problem_id, gpu_name, variant, mean_ms FROM baselines")}
    best = best_kernels(db)

    # 1. pages exist
    pages = ["index.html", "methodology.html", "downloads.html", "style.css",
             "reports/README.md"]
    pages += ["problems/%s.html" % slug(p) for p in problems]
    pages += ["reports/%s.md" % slug(p) for p in problems]
    pages += ["reports/%s.html" % slug(p) for p in problems] + ["reports/index.html", "site.js"]
    pages += ["categories/%s.html" % c for c in
              ("memory", "async", "precision", "compute", "parallelism", "control")]
    pages += ["kernels/%s/%s.html" % (h[:2], h) for h in kernels]
    missing = [p for p in pages if not os.path.isfile(os.path.join(site, p))]
    check(not missing, "all %d pages exist" % len(pages), "\n".join(missing[:10]))

    # 2. every HTML page: links resolve, nothing executable
    html_files = [os.path.join(dp, f) for dp, _, fs in os.walk(site) for f in fs
                  if f.endswith(".html")]
    bad_links, bad_markup, parsed = [], [], {}
    for path in html_files:
        b = parse(path)
        rel = os.path.relpath(path, site)
        parsed[rel] = b
        for n in b.all_tags:
            # the one script is the site's own site.js (sorting, filtering)
            own_js = (n.tag == "script" and n.attrs.get("src") == "site.js" and rel == "index.html"
                      and not n.get_text().strip())
            if n.tag in ("script", "iframe", "object", "embed", "img") and not own_js:
                bad_markup.append("%s: <%s>" % (rel, n.tag))
            for k, v in n.attrs.items():
                if k.lower().startswith("on"):
                    bad_markup.append("%s: %s= on <%s>" % (rel, k, n.tag))
                if k in ("href", "src") and v:
                    if v.startswith(("http:", "https:", "javascript:", "data:", "/")):
                        if v.startswith(("javascript:", "data:", "/")):
                            bad_links.append("%s: %s" % (rel, v))
                        continue
                    target = urllib.parse.unquote(v.split("#")[0])
                    if target and not os.path.exists(os.path.join(os.path.dirname(path), target)):
                        bad_links.append("%s: %s" % (rel, v))
    check(not bad_links, "every relative link resolves (%d pages)" % len(html_files),
          "\n".join(bad_links[:10]))
    check(not bad_markup, "no script, img or on* attribute anywhere", "\n".join(bad_markup[:10]))
    hostile = one("SELECT COUNT(*) FROM ideas WHERE text LIKE '%<img%' OR text LIKE '%</script>%'")
    if hostile:
        texts = [parsed[r].root.get_text() for r in parsed if r.startswith("problems/")]
        check(any("<img src=x onerror=alert(1)>" in t or "</script>" in t for t in texts),
              "hostile idea text appears as text on problem pages")

    # 3. overview numbers
    idx = parsed["index.html"].root
    want = {
        "problems": len(problems), "kernels": len(kernels),
        "candidates": one("SELECT COUNT(*) FROM candidates"),
        "ideas": one("SELECT COUNT(*) FROM ideas"),
        "compiled": one("SELECT COUNT(*) FROM candidates WHERE status NOT IN"
                        " ('pending','format_error','compile_error')"),
        "correct": one("SELECT COUNT(*) FROM candidates WHERE status = 'correct'"),
        # the latest verdict of each (kernel, problem, GPU), the documented rule
        "verified": one("SELECT COUNT(*) FROM (SELECT verdict, ROW_NUMBER() OVER (PARTITION BY"
                        " kernel_hash, problem_id, gpu_name ORDER BY created_at DESC, id) AS rn"
                        " FROM verifications) WHERE rn = 1 AND verdict = 'verified'"),
        "llm_calls": one("SELECT COUNT(*) FROM llm_calls"),
    }
    got = {n.attrs["data-k"]: fv(n) for n in idx.find_all("dd") if "data-k" in n.attrs}
    check(all(got.get(k) == v for k, v in want.items()), "overview counts match the store",
          "want %r\ngot  %r" % (want, got))
    vtext = idx.find("dd", data_k="verified").get_text().strip()
    nv = one("SELECT COUNT(*) FROM (SELECT DISTINCT kernel_hash, problem_id, gpu_name"
             " FROM verifications)")
    check(vtext == "%s / %s" % (format(want["verified"], ","), format(nv, ",")),
          "verified out of the kernel-GPU pairs with a verdict", vtext)
    pct = idx.find("dd", data_k="correct").get_text().strip()
    check(pct == "%.1f%%" % (100.0 * want["correct"] / want["candidates"]),
          "correct rate shown as a percentage", pct)

    # 4. fast_p and geometric means per GPU
    gpus = sorted({g for (_, g) in best})
    tables = {t.attrs["data-gpu"]: t for t in idx.find_all("table") if
              "fastp" in t.attrs.get("class", "")}
    check(set(gpus) <= set(tables), "a fast_p table per GPU with results",
          "%r vs %r" % (gpus, list(tables)))
    for g in gpus:
        t = tables.get(g)
        if not t:
            continue
        for variant, col in (("eager", 1), ("compile", 2)):
            sp = []
            for p in problems:
                b = best.get((p, g))
                bm = base.get((p, g, variant))
                sp.append(None if not b else (bm / b[2] if bm else float("nan")))
            errs = []
            for row in t.find_all("tr"):
                if "data-p" not in row.attrs:
                    continue
                pv = float(row.attrs["data-p"])
                n = sum(1 for s in sp if s is not None and (pv == 0 or (s == s and s > pv)))
                tds = [c for c in row.children if c.tag == "td"]
                gotv = fv(tds[col - 1])
                if not close(gotv, n / len(problems)):
                    errs.append("p=%g: want %r got %r" % (pv, n / len(problems), gotv))
            check(not errs, "fast_p vs %s on %s" % (variant, g), "\n".join(errs))
            vals = [s for s in sp if s is not None and s == s and s > 0]
            geo = math.exp(sum(map(math.log, vals)) / len(vals)) if vals else None
            cell = t.find("td", **{"class": "num geo-%s" % variant})
            check(cell is not None and close(fv(cell), geo, 1e-9),
                  "geometric mean speedup vs %s on %s" % (variant, g),
                  "want %r got %r" % (geo, cell and fv(cell)))

    # 5. leaderboard cells
    errs = []
    for row in idx.find("table", id="leaderboard-table").find_all("tr"):
        p = row.attrs.get("data-problem")
        if not p:
            continue
        for td in row.find_all("td"):
            g = td.attrs.get("data-gpu")
            if not g:
                continue
            b = best.get((p, g))
            bm = base.get((p, g, "eager"))
            w = bm / b[2] if b and bm else None
            if not close(fv(td), w):
                errs.append("%s %s: want %r got %r" % (p, g, w, fv(td)))
    check(not errs, "leaderboard speedups match the best kernels", "\n".join(errs[:10]))

    # 6. problem pages: rounds, best per GPU, lineage points on the chart
    for p in problems:
        page = parsed.get("problems/%s.html" % slug(p))
        if not page:
            continue
        root = page.root
        rows = {}
        for run, rnd, corr in db.execute(
                "SELECT run_id, round, SUM(status = 'correct') FROM candidates"
                " WHERE problem_id = ? GROUP BY run_id, round", (p,)):
            rows[(run, rnd)] = corr
        got = {}
        for tr in root.find("table", id="rounds").find_all("tr"):
            if "data-round" in tr.attrs:
                tds = [c for c in tr.children if c.tag == "td"]
                got[(tr.attrs["data-run"], int(tr.attrs["data-round"]))] = int(fv(tds[4]))
        check(got == rows, "%s: per-round correct counts" % p,
              "want %r\ngot %r" % (sorted(rows.items())[:5], sorted(got.items())[:5]))
        card = root.find("dd", **{"data-k": "rounds"})
        check(card is not None and int(card.attrs["data-v"]) == len(rows),
              "%s: the rounds card counts rounds with candidates (%d)" % (p, len(rows)),
              "got %r" % (card and card.attrs.get("data-v")))
        errs = []
        for tr in root.find("table", id="best").find_all("tr"):
            g = tr.attrs.get("data-gpu")
            if not g:
                continue
            b = best.get((p, g))
            tds = [c for c in tr.children if c.tag == "td"]
            h = tds[1].get_text().strip()
            if not b or h != b[0] or not close(fv(tds[3]), b[2]):
                errs.append("%s: want %r got %s %r" % (g, b, h, fv(tds[3])))
            verdict = "verified" if b and b[1] == "verified" else "unverified"
            if tds[2].get_text().strip() != verdict:
                errs.append("%s: verdict %r" % (g, tds[2].get_text()))
        nbest = sum(1 for (pp, _) in best if pp == p)
        check(not errs and len([t for t in root.find("table", id="best").find_all("tr")
                                if "data-gpu" in t.attrs]) == nbest,
              "%s: best kernel per GPU (%d)" % (p, nbest), "\n".join(errs))
        svg = root.find("svg", id="trajectory")
        check(svg is not None and svg.find("title") is not None and
              "round" in svg.get_text(), "%s: trajectory chart with title and axis label" % p)

    # 7. kernel pages: one row per evaluation, times as stored
    sample = sorted(kernels)[:: max(1, len(kernels) // 25)]
    errs = []
    for h in sample:
        page = parsed.get("kernels/%s/%s.html" % (h[:2], h))
        if not page:
            errs.append("%s: no page" % h)
            continue
        want = sorted((g, pr, t) for g, pr, t in db.execute(
            "SELECT gpu_name, protocol, time_mean_ms FROM evals WHERE kernel_hash = ?", (h,)))
        got = []
        for tr in page.root.find_all("tr"):
            if "data-protocol" in tr.attrs:
                tds = [c for c in tr.children if c.tag == "td"]
                got.append((tr.attrs["data-gpu"], tr.attrs["data-protocol"], fv(tds[5])))
        got.sort()
        if len(got) != len(want) or any(a[:2] != b[:2] or not close(a[2], b[2])
                                         for a, b in zip(got, want)):
            errs.append("%s: want %r got %r" % (h, want, got))
        src = one("SELECT source FROM kernels WHERE hash = ?", h)
        code = page.root.find("pre", **{"class": "src"})
        shown = code.get_text() if code else ""
        norm = lambda s: re.sub(r"[\x00-\x08\x0b\x0c\x0e-\x1f\x7f]", "\ufffd", s)
        if shown != norm(src):
            errs.append("%s: source text differs from the store" % h)
    check(not errs, "kernel pages: evaluations and source (%d sampled)" % len(sample),
          "\n".join(errs[:10]))

    print("1..%d" % N)
    return 1 if FAILED else 0


if __name__ == "__main__":
    sys.exit(main())
