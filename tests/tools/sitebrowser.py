#!/usr/bin/env python3
"""Browser test of a rendered site: drives Debian's chromium through
chromedriver, speaking the W3C WebDriver protocol over HTTP on 127.0.0.1
with urllib (no pip packages). Loads the index, a problem page and a kernel
page from file://, reads tables and charts through the DOM, compares them
with the store (expected values computed by sitecheck.py's rules), and
saves screenshots (light and dark colour scheme).

    sitebrowser.py STORE SITE_DIR ARTIFACT_DIR [COMPILE_ONLY_SITE_DIR]

At 1280 px it checks a problem page's profile and diff view (visible,
styled, no horizontal scrolling; screenshot site-problem-diff.png), and
the leaderboard (no cell clipped, no horizontal
scrolling, names with their full text on hover), that clicking a header
sorts the rows and the filter hides rows, that every link of every page
resolves (files and #anchors), the HTML reports and the downloads; with a
fourth argument, that a compile-only store's site says "not checked" and
draws sane axes.

TAP lines on stdout; exit 0 when every check passed."""
import base64
import json
import os
import re
import socket
import subprocess
import sys
import time
import urllib.parse
import urllib.request
from html.parser import HTMLParser

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import sitecheck  # noqa: E402

N = 0
FAILED = 0


def check(cond, desc, detail=""):
    global N, FAILED
    N += 1
    print(("ok %d - %s" if cond else "not ok %d - %s") % (N, desc))
    if not cond:
        FAILED += 1
        for line in str(detail).splitlines()[:10]:
            print("#   " + line)


class Driver:
    def __init__(self, chromedriver, chromium):
        s = socket.socket()
        s.bind(("127.0.0.1", 0))
        self.port = s.getsockname()[1]
        s.close()
        self.proc = subprocess.Popen([chromedriver, "--port=%d" % self.port],
                                     stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        self.base = "http://127.0.0.1:%d" % self.port
        for _ in range(100):
            try:
                self.req("GET", "/status")
                break
            except OSError:
                time.sleep(0.1)
        caps = {"capabilities": {"alwaysMatch": {
            "browserName": "chrome",
            "goog:chromeOptions": {
                "binary": chromium,
                "args": ["--headless=new", "--no-sandbox", "--disable-gpu",
                         "--disable-dev-shm-usage", "--window-size=1280,1600",
                         "--allow-file-access-from-files"]}}}}
        r = self.req("POST", "/session", caps)
        self.sid = r["value"]["sessionId"]

    def req(self, method, path, body=None):
        data = json.dumps(body).encode() if body is not None else None
        rq = urllib.request.Request(self.base + path, data=data, method=method,
                                    headers={"Content-Type": "application/json"})
        with urllib.request.urlopen(rq, timeout=60) as f:
            return json.loads(f.read().decode())

    def s(self, method, path, body=None):
        return self.req(method, "/session/%s%s" % (self.sid, path), body)["value"]

    def get(self, url):
        self.s("POST", "/url", {"url": url})

    def js(self, script, *args):
        return self.s("POST", "/execute/sync", {"script": script, "args": list(args)})

    def screenshot(self, path):
        png = base64.b64decode(self.s("GET", "/screenshot"))
        with open(path, "wb") as f:
            f.write(png)
        return len(png)

    def click(self, css):
        el = self.s("POST", "/element", {"using": "css selector", "value": css})
        eid = list(el.values())[0]
        self.s("POST", "/element/%s/click" % eid, {})

    def type(self, css, text):
        el = self.s("POST", "/element", {"using": "css selector", "value": css})
        eid = list(el.values())[0]
        self.s("POST", "/element/%s/value" % eid, {"text": text})

    def size(self, w, h):
        self.s("POST", "/window/rect", {"width": w, "height": h})

    def dark(self, on):
        self.s("POST", "/goog/cdp/execute", {"cmd": "Emulation.setEmulatedMedia", "params": {
            "features": [{"name": "prefers-color-scheme", "value": "dark" if on else "light"}]}})

    def quit(self):
        try:
            self.req("DELETE", "/session/%s" % self.sid)
        finally:
            self.proc.terminate()
            self.proc.wait(10)


READ_TABLE = """
const t = document.querySelector(arguments[0]);
if (!t) return null;
return Array.from(t.querySelectorAll('tbody tr')).map(r => ({
  attrs: Object.fromEntries(Array.from(r.attributes).map(a => [a.name, a.value])),
  cells: Array.from(r.children).map(c => ({text: c.textContent.trim(),
    v: c.getAttribute('data-v'), gpu: c.getAttribute('data-gpu')}))}));
"""


def close(a, b):
    return sitecheck.close(a, b, 1e-9)


def num(v):
    return float(v) if v not in (None, "") else None


class Links(HTMLParser):
    def __init__(self):
        super().__init__()
        self.links, self.ids, self.scripts = [], set(), []

    def handle_starttag(self, tag, attrs):
        a = dict(attrs)
        for k in ("id", "name"):
            if a.get(k):
                self.ids.add(a[k])
        for k in ("href", "src"):
            if a.get(k) is not None:
                self.links.append(a[k])
        if tag == "script":
            self.scripts.append(a.get("src"))


def check_links(site, desc):
    """Every href and src of every HTML page: a file of the site, and an
    #anchor that exists in it."""
    pages, bad = {}, []
    for dp, _, fs in os.walk(site):
        for f in fs:
            if f.endswith(".html"):
                p = Links()
                with open(os.path.join(dp, f), encoding="utf-8") as fh:
                    p.feed(fh.read())
                pages[os.path.normpath(os.path.join(dp, f))] = p
    n = 0
    for path, p in pages.items():
        for v in p.links:
            n += 1
            if v.startswith(("http://", "https://")):
                continue
            if not v or v.startswith(("/", "javascript:", "data:")) or ":" in v.split("/")[0]:
                bad.append("%s: %r" % (os.path.relpath(path, site), v))
                continue
            f, _, frag = v.partition("#")
            target = os.path.normpath(os.path.join(os.path.dirname(path), urllib.parse.unquote(f))) if f else path
            if not os.path.isfile(target):
                bad.append("%s: %s (no file)" % (os.path.relpath(path, site), v))
            elif frag and (target not in pages or frag not in pages[target].ids):
                bad.append("%s: %s (no anchor)" % (os.path.relpath(path, site), v))
    check(n and not bad, "%s: every link of %d pages resolves (%d links)" % (desc, len(pages), n),
          "\n".join(bad[:10]))
    return pages


LAYOUT = """
const t = document.querySelector('#leaderboard-table');
const vw = document.documentElement.clientWidth, bad = [];
const box = t.parentElement;
if (t.scrollWidth > box.clientWidth) bad.push('table ' + t.scrollWidth + ' > its box ' + box.clientWidth);
if (document.documentElement.scrollWidth > vw) bad.push('page scrolls: ' + document.documentElement.scrollWidth + ' > ' + vw);
t.querySelectorAll('th, td').forEach(c => {
  const r = c.getBoundingClientRect();
  if (r.left < 0 || r.right > vw + 0.5) bad.push('cell outside the viewport: ' + c.textContent.trim().slice(0, 40) + ' ' + r.left + '..' + r.right);
  c.querySelectorAll('*').forEach(e => {
    const q = e.getBoundingClientRect();
    if (q.width && (q.left < r.left - 0.5 || q.right > r.right + 0.5))
      bad.push('content clipped from its cell: ' + e.textContent.trim().slice(0, 40) + ' ' + q.left + '..' + q.right + ' in ' + r.left + '..' + r.right);
  });
});
return bad;
"""

COLUMN = """
const t = document.querySelector('#leaderboard-table');
return Array.from(t.tBodies[0].rows).filter(r => !r.hidden && r.offsetParent !== null)
  .map(r => [r.getAttribute('data-problem'), r.cells[arguments[0]].getAttribute('data-v')]);
"""


def board_checks(d, site, art):
    d.size(1280, 900)
    d.get("file://%s/index.html" % site)
    vw = d.js("return document.documentElement.clientWidth")
    bad = d.js(LAYOUT)
    check(not bad, "leaderboard at 1280 px (viewport %d): no cell clipped, no horizontal scrolling" % vw,
          "\n".join(bad[:10]))
    gpu_cols = d.js("return Array.from(document.querySelectorAll('#leaderboard-table thead th'))"
                    ".map((h, i) => [i, h.textContent.trim()])")
    tips = d.js("return Array.from(document.querySelectorAll('#leaderboard-table tbody tr')).map("
                "r => [r.getAttribute('data-problem'), r.querySelector('td a').getAttribute('title')])")
    check(tips and all(a == b for a, b in tips), "every problem name has its full id on hover",
          repr(tips[:3]))
    out = d.js("return Array.from(document.querySelectorAll('#fastp-chart g:not([data-series]) text'))"
               ".map(t => { const b = t.getBBox(); return [t.textContent, b.x, b.x + b.width]; })"
               ".filter(x => x[1] < 0 || x[2] > 640)")
    n = d.js("return document.querySelectorAll('#fastp-chart g:not([data-series]) text').length")
    check(n >= 4 and not out, "the fast_p chart's legend (%d entries) stays inside the chart" % n, repr(out))
    d.js("document.querySelector('#leaderboard').scrollIntoView()")
    d.screenshot(os.path.join(art, "site-leaderboard.png"))
    # sorting: a speedup column, both ways, empty values last; then by name
    col = next((i for i, h in gpu_cols if "eager" in h), None)
    ok_sort = False
    if col is not None and d.js("return !!document.querySelector('#leaderboard-table thead th button')"):
        d.click("#leaderboard-table thead th:nth-child(%d) button" % (col + 1))
        up = d.js(COLUMN, col)
        d.click("#leaderboard-table thead th:nth-child(%d) button" % (col + 1))
        down = d.js(COLUMN, col)
        vals = lambda rows: [float(v) for _, v in rows if v not in (None, "")]
        ok_sort = (vals(up) == sorted(vals(up)) and vals(down) == sorted(vals(down), reverse=True)
                   and len(set(vals(up))) > 1)
        aria = d.js("return document.querySelector('#leaderboard-table thead th:nth-child(%d)')"
                    ".getAttribute('aria-sort')" % (col + 1))
        ok_sort = ok_sort and aria == "descending"
    check(ok_sort, "clicking a speedup header sorts the rows (ascending, then descending)",
          "column %r" % col)
    ok_name = False
    if d.js("return !!document.querySelector('#leaderboard-table thead th.pname button')"):
        d.click("#leaderboard-table thead th.pname button")
        names = [p for p, _ in d.js(COLUMN, 1)]
        ok_name = names == sorted(names, key=str.lower) and len(names) > 1
    check(ok_name, "clicking the Problem header sorts by name")
    # filter: a word of one name
    rows = [p for p, _ in d.js(COLUMN, 0)]
    word = None
    for p in rows:
        for w in p.replace("/", "_").split("_"):
            if len(w) > 3 and sum(w.lower() in q.lower() for q in rows) == 1:
                word = w
                break
        if word:
            break
    ok_filter = False
    if word and d.js("return !!document.querySelector('#leaderboard-table-filter')"):
        d.type("#leaderboard-table-filter", word)
        shown = [p for p, _ in d.js(COLUMN, 0)]
        ok_filter = shown == [p for p in rows if word.lower() in p.lower()] and len(shown) < len(rows)
    check(ok_filter, "the filter box hides the rows that do not match %r" % word)


def report_checks(d, site, art, pid):
    d.get("file://%s/index.html" % site)
    nav = d.js("return Array.from(document.querySelectorAll('nav a')).filter("
               "a => a.textContent == 'Reports').map(a => a.getAttribute('href'))")
    check(nav == ["reports/index.html"], "the Reports link opens an HTML page", repr(nav))
    d.get("file://%s/problems/%s.html" % (site, sitecheck.slug(pid)))
    href = d.js("return Array.from(document.querySelectorAll('main a')).filter("
                "a => a.textContent == 'Report').map(a => a.href)")
    check(len(href) == 1 and href[0].endswith(".html"), "the problem page links its HTML report",
          repr(href))
    if not href:
        return
    d.get(href[0])
    h1 = d.js("return document.querySelector('main h1') && document.querySelector('main h1').textContent")
    lists = d.js("return document.querySelectorAll('main li').length")
    raw = d.js("const m = document.querySelector('main').cloneNode(true);"
               " m.querySelectorAll('pre').forEach(p => p.remove());"
               " return /^#|\\|---|```/m.test(m.textContent)")
    code = d.js("return document.querySelectorAll('main pre code').length")
    check(h1 == pid and lists > 3 and code == 1 and not raw,
          "the report is rendered HTML (heading, lists, the kernel in a code block, no raw Markdown)",
          "h1 %r, %d list items, %d code blocks, raw Markdown %r" % (h1, lists, code, raw))
    evil = d.js("return document.querySelectorAll('main script, main img, main iframe, main [onerror]').length")
    check(evil == 0, "no markup from the store in the report")
    d.screenshot(os.path.join(art, "site-report.png"))


def download_checks(d, site):
    import hashlib
    d.get("file://%s/downloads.html" % site)
    rows = d.js("return Array.from(document.querySelectorAll('#downloads tbody tr')).map(r => ["
                "r.querySelector('a') && r.querySelector('a').getAttribute('href'),"
                " r.querySelector('code.hash').textContent])")
    errs = []
    for href, hexd in rows:
        f = os.path.join(site, urllib.parse.unquote(href or ""))
        if not href or not os.path.isfile(f):
            errs.append("%r: no file" % href)
        elif hashlib.sha256(open(f, "rb").read()).hexdigest() != hexd:
            errs.append("%s: SHA-256 differs from %s" % (href, hexd))
    check(rows and not errs, "downloads link the tarballs, their SHA-256 shown (%d)" % len(rows),
          "\n".join(errs))


def compile_only_checks(d, co, art):
    d.get("file://%s/index.html" % co)
    got = d.js("return document.querySelector('#overview [data-k=correct]').textContent.trim()")
    cells = d.js("return Array.from(document.querySelectorAll('#leaderboard-table tbody tr td:last-child,"
                 " #proposers tbody td:last-child, #categories-table tbody td:nth-child(5)'))"
                 ".map(c => c.textContent.trim())")
    check(got == "not checked" and cells and all(c in ("not checked", "—") for c in cells),
          "compile-only: correctness says 'not checked', not 0%", "%r %r" % (got, cells[:6]))
    bests = d.js("return Array.from(document.querySelectorAll('#categories-table tbody td:last-child'))"
                 ".map(c => +c.textContent)")
    bars = d.js("return document.querySelectorAll('#cat-bests rect.bar').length")
    check(bests and not any(bests) and bars == 0, "compile-only: no round best (no correct kernel)",
          "%r, %d bars" % (bests, bars))
    notes = d.js("return ['#gpus-none', '#fastp-none'].filter(q => document.querySelector(q))")
    check(len(notes) == 2, "compile-only: the index says there is no GPU and no fast_p", repr(notes))
    d.screenshot(os.path.join(art, "site-compile-only.png"))
    bad = []
    pages = [os.path.join(dp, f) for dp, _, fs in os.walk(co) for f in fs
             if f.endswith(".html") and "/kernels/" not in os.path.join(dp, f)]
    for path in sorted(pages):
        d.get("file://" + path)
        ticks = d.js("return Array.from(document.querySelectorAll('svg.chart, figure.chart svg')).map("
                     "s => [s.id, s.querySelector('.al') ? Array.from(s.querySelectorAll('.al')).map("
                     "t => t.textContent) : [], Array.from(s.querySelectorAll('text.tk')).map(t => t.textContent)])")
        for sid, labels, tk in ticks:
            nums = []
            for t in tk:
                try:
                    nums.append(float(t.replace("×", "")))
                except ValueError:
                    pass
            pct = any("%" in l for l in labels)
            if any(v < 0 for v in nums) or (pct and any(v > 100 for v in nums)):
                bad.append("%s #%s: ticks %r" % (os.path.relpath(path, co), sid, tk))
        if "/problems/" in path:
            c = d.js("return document.querySelector('[data-k=correct]').textContent.trim()")
            rc = d.js("return Array.from(document.querySelectorAll('#rounds tbody tr')).map("
                      "r => r.children[4].textContent.trim())")
            links = d.js("return document.querySelectorAll('#rounds tbody a').length")
            if c != "not checked" or any(x != "not checked" for x in rc) or links:
                bad.append("%s: correct %r, rounds %r, %d round-best links" % (
                    os.path.relpath(path, co), c, rc, links))
    check(not bad, "compile-only: every chart's axis is sane (no negative ticks, %% <= 100), every"
          " problem page says 'not checked' (%d pages)" % len(pages), "\n".join(bad[:10]))
    check_links(co, "compile-only site")


DIFF_LAYOUT = """
const vw = document.documentElement.clientWidth, bad = [];
const d = document.querySelector('#diff-1'), pre = d && d.querySelector('pre.diff');
if (!d || !d.open) return ['#diff-1 missing or closed'];
if (!pre) return ['#diff-1 has no pre.diff'];
for (const e of [d, pre, document.querySelector('#profile')]) {
  if (!e) { bad.push('missing element'); continue; }
  const r = e.getBoundingClientRect();
  if (!(r.width > 100 && r.height > 20)) bad.push((e.id || e.className) + ' not visible: ' + r.width + 'x' + r.height);
  if (r.left < 0 || r.right > vw + 0.5) bad.push((e.id || e.className) + ' outside the viewport: ' + r.left + '..' + r.right);
}
if (document.documentElement.scrollWidth > vw) bad.push('page scrolls: ' + document.documentElement.scrollWidth + ' > ' + vw);
const ins = pre.querySelectorAll('ins'), del = pre.querySelectorAll('del');
const more = d.querySelector('.diff-more');
if (!more && (ins.length != +d.dataset.added || del.length != +d.dataset.removed))
  bad.push('lines: ' + ins.length + '+ ' + del.length + '- vs ' + d.dataset.added + ' ' + d.dataset.removed);
if (ins.length && getComputedStyle(ins[0]).backgroundColor == getComputedStyle(pre).backgroundColor)
  bad.push('added lines are not highlighted');
if (ins.length && del.length && getComputedStyle(ins[0]).backgroundColor == getComputedStyle(del[0]).backgroundColor)
  bad.push('added and removed lines look the same');
if (ins.length && getComputedStyle(ins[0]).display != 'block') bad.push('a diff line is not a line');
for (const e of ins) if (!e.textContent.startsWith('+')) { bad.push('an added line without +'); break; }
return bad;
"""


def png_size(path):
    with open(path, "rb") as f:
        head = f.read(24)
    if head[:8] != b"\x89PNG\r\n\x1a\n":
        return None
    return int.from_bytes(head[16:20], "big"), int.from_bytes(head[20:24], "big")


def diff_checks(d, site, art, db, pid):
    """The problem page's profile and diff view at 1280 px, and a screenshot."""
    d.size(1280, 900)
    d.get("file://%s/problems/%s.html" % (site, sitecheck.slug(pid)))
    n = d.js("return document.querySelectorAll('details.kdiff').length")
    lim = d.js("const e = document.querySelector('#limiter'); return e ? e.textContent : null")
    check(lim in ("memory", "compute", "latency", "launch"), "%s: the profile's limiter badge (%s)" % (pid, lim))
    bad = d.js(DIFF_LAYOUT)
    vw = d.js("return document.documentElement.clientWidth")
    check(n > 0 and not bad, "%s: the diff view (%d diffs) at 1280 px (viewport %d): visible, styled,"
          " inside the viewport, no horizontal scrolling" % (pid, n, vw), "\n".join(bad[:10]))
    # a closed one opens on a click on its summary
    if n > 1:
        d.click("#diff-2 summary")
        check(d.js("return document.querySelector('#diff-2').open"), "a closed diff opens on a click")
    d.js("document.querySelector('#diff-1').scrollIntoView()")
    path = os.path.join(art, "site-problem-diff.png")
    size = d.screenshot(path)
    wh = png_size(path)
    check(size > 20000 and wh and 1000 <= wh[0] <= 1400 and wh[1] >= 500,
          "screenshot of the diff view saved (%d bytes, %r): not blank, of a sensible size" % (size, wh))


def main():
    store, site, art = sys.argv[1], os.path.abspath(sys.argv[2]), sys.argv[3]
    co = os.path.abspath(sys.argv[4]) if len(sys.argv) > 4 else None
    os.makedirs(art, exist_ok=True)
    import sqlite3
    db = sqlite3.connect("file:%s?mode=ro" % store, uri=True)
    best = sitecheck.best_kernels(db)
    base = {(p, g, v): m for p, g, v, m in db.execute(
        "SELECT problem_id, gpu_name, variant, mean_ms FROM baselines")}
    d = Driver(os.environ.get("CHROMEDRIVER", "chromedriver"),
               os.environ.get("CHROMIUM", "/usr/bin/chromium"))
    try:
        # index
        d.get("file://%s/index.html" % site)
        title = d.js("return document.title")
        check(title.startswith("kforge results"), "index loads from file://", title)
        font = d.js("return getComputedStyle(document.body).fontFamily")
        check("system-ui" in font, "the stylesheet applies (relative link)", font)
        rows = d.js(READ_TABLE, "#leaderboard-table")
        errs = []
        for r in rows or []:
            p = r["attrs"].get("data-problem")
            for c in r["cells"]:
                if not c["gpu"]:
                    continue
                b = best.get((p, c["gpu"]))
                bm = base.get((p, c["gpu"], "eager"))
                want = bm / b[2] if b and bm else None
                if not close(num(c["v"]), want):
                    errs.append("%s %s: want %r got %r" % (p, c["gpu"], want, c["v"]))
                if want is not None and not c["text"].startswith(sitecheck.fmt_num(want)):
                    errs.append("%s %s: shows %r for %r" % (p, c["gpu"], c["text"], want))
        check(rows and not errs, "leaderboard table holds the best speedups (%d rows)"
              % len(rows or []), "\n".join(errs[:8]))
        bars = d.js("return Array.from(document.querySelectorAll('#cat-correct rect.bar'))"
                    ".map(b => [b.getAttribute('data-label'), +b.getAttribute('data-value')])")
        want = {}
        for cat, n, c in db.execute(
                "SELECT ic.category, COUNT(c.id), SUM(c.status = 'correct') FROM idea_categories ic"
                " LEFT JOIN candidates c ON c.idea_id = ic.idea_id GROUP BY ic.category"):
            want[cat] = 100.0 * c / n if n else 0
        errs = ["%s: want %r got %r" % (k, want.get(k, 0), v) for k, v in bars
                if not sitecheck.close(v, want.get(k, 0), 1e-9)]
        check(len(bars) == 6 and not errs, "category chart bars hold the correct rates",
              "%r\n%s" % (bars, "\n".join(errs)))
        pts = d.js("return Array.from(document.querySelectorAll('#fastp-chart g[data-series]'))"
                   ".map(g => [g.getAttribute('data-series'), Array.from(g.querySelectorAll("
                   "'circle')).map(c => [+c.getAttribute('data-x'), +c.getAttribute('data-y')])])")
        tab = d.js("return Array.from(document.querySelectorAll('table.fastp')).map(t => ["
                   "t.getAttribute('data-gpu'), Array.from(t.querySelectorAll('tbody tr')).map("
                   "r => [+r.getAttribute('data-p'), +r.children[1].getAttribute('data-v')])])")
        want = {g: [[p, v * 100] for p, v in rows] for g, rows in tab}
        got = {g: c for g, c in pts if g in want}
        errs = ["%s: %r vs %r" % (g, got.get(g), w) for g, w in want.items()
                if len(got.get(g, [])) != len(w) or
                any(a[0] != b[0] or not close(a[1], b[1]) for a, b in zip(got[g], w))]
        check(want and not errs, "fast_p chart plots the fast_p tables (%d GPUs)" % len(want),
              "\n".join(errs))
        light_bg = d.js("return getComputedStyle(document.documentElement).backgroundColor")
        n = d.screenshot(os.path.join(art, "site-index.png"))
        check(n > 10000, "screenshot of the index saved (%d bytes)" % n)
        d.dark(True)
        dark_bg = d.js("return getComputedStyle(document.documentElement).backgroundColor")
        check(dark_bg != light_bg, "dark colour scheme changes the page",
              "%s vs %s" % (light_bg, dark_bg))
        d.screenshot(os.path.join(art, "site-index-dark.png"))
        d.dark(False)

        # a problem page: the one with the most rounds
        pid = db.execute("SELECT problem_id FROM rounds GROUP BY problem_id"
                         " ORDER BY COUNT(*) DESC, problem_id LIMIT 1").fetchone()[0]
        d.get("file://%s/problems/%s.html" % (site, sitecheck.slug(pid)))
        rows = d.js(READ_TABLE, "#rounds")
        want = {(r, n): c for r, n, c in db.execute(
            "SELECT run_id, round, SUM(status = 'correct') FROM candidates WHERE problem_id = ?"
            " GROUP BY run_id, round", (pid,))}
        got = {(r["attrs"]["data-run"], int(r["attrs"]["data-round"])): int(r["cells"][4]["v"])
               for r in rows or []}
        check(got == want, "%s: rounds table holds the per-round counts" % pid,
              "want %r\ngot %r" % (sorted(want.items())[:4], sorted(got.items())[:4]))
        pts = d.js("const g = document.querySelector('#trajectory g[data-series=\"lineage of the"
                   " best kernel\"]'); if (!g) return [];"
                   " return Array.from(g.querySelectorAll('circle')).map(c => ["
                   " c.querySelector('title').textContent, +c.getAttribute('data-x'),"
                   " +c.getAttribute('data-y')]);")
        errs = []
        for cid, x, y in pts:
            row = db.execute(
                "SELECT c.round, (SELECT b.mean_ms FROM baselines b WHERE b.problem_id ="
                " c.problem_id AND b.gpu_name = r.gpu_name AND b.variant = 'eager') /"
                " (SELECT MIN(e.time_mean_ms) FROM evals e WHERE e.kernel_hash = c.kernel_hash"
                " AND e.problem_id = c.problem_id AND e.gpu_name = r.gpu_name AND e.status ="
                " 'correct' AND e.protocol NOT LIKE 'verify%') FROM candidates c JOIN runs r"
                " ON r.id = c.run_id WHERE c.id = ?", (cid,)).fetchone()
            if not row or row[0] != x or not close(y, row[1]):
                errs.append("%s: want %r got %r" % (cid, row, (x, y)))
        li = d.js("return document.querySelectorAll('#lineage li').length")
        check(pts and li == len(pts) and not errs,
              "%s: trajectory chart plots the lineage (%d points)" % (pid, len(pts)),
              "%d list items\n%s" % (li, "\n".join(errs[:5])))
        bests = d.js(READ_TABLE, "#best")
        errs = []
        for r in bests or []:
            g = r["attrs"]["data-gpu"]
            b = best.get((pid, g))
            if not b or r["cells"][1]["text"] != b[0] or not close(num(r["cells"][3]["v"]), b[2]):
                errs.append("%s: want %r got %r" % (g, b, r["cells"][1]["text"]))
        check(bests and not errs, "%s: best kernel per GPU" % pid, "\n".join(errs))
        n = d.screenshot(os.path.join(art, "site-problem.png"))
        check(n > 10000, "screenshot of the problem page saved")

        # the best kernel's page, reached through the link
        href = d.js("return document.querySelector('#best tbody a').href")
        d.get(href)
        h = href.rsplit("/", 1)[1][:-5]
        rows = d.js("return Array.from(document.querySelectorAll('table.evals tbody tr'))"
                    ".map(r => [r.getAttribute('data-gpu'), r.getAttribute('data-protocol'),"
                    " +r.children[5].getAttribute('data-v')])")
        want = sorted(db.execute("SELECT gpu_name, protocol, time_mean_ms FROM evals"
                                 " WHERE kernel_hash = ?", (h,)).fetchall())
        got = sorted(tuple(r) for r in rows)
        check(len(got) == len(want) and all(a[:2] == tuple(b[:2]) and
                                             (b[2] is None or close(a[2], b[2]))
                                             for a, b in zip(got, want)),
              "kernel page: evaluations per GPU", "want %r\ngot %r" % (want, got))
        src = d.js("return document.querySelector('pre.src code').textContent")
        want_src = db.execute("SELECT source FROM kernels WHERE hash = ?", (h,)).fetchone()[0]
        want_src = re.sub(r"[\x00-\x08\x0b\x0c\x0e-\x1f\x7f]", "\ufffd", want_src)
        check(src == want_src.replace("\r", ""), "kernel page: highlighted source reads as stored")
        spans = d.js("return document.querySelectorAll('pre.src span.k').length")
        check(spans > 0, "kernel page: source is highlighted (%d keywords)" % spans)
        n = d.screenshot(os.path.join(art, "site-kernel.png"))
        check(n > 10000, "screenshot of the kernel page saved")

        diff_checks(d, site, art, db, pid)
        board_checks(d, site, art)
        report_checks(d, site, art, pid)
        download_checks(d, site)
        check_links(site, "site")
        if co:
            compile_only_checks(d, co, art)
    finally:
        d.quit()
    print("1..%d" % N)
    return 1 if FAILED else 0


if __name__ == "__main__":
    sys.exit(main())
