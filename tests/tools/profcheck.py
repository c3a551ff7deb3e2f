#!/usr/bin/env python3
"""Checks the profile parts of a site rendered by `kforge site` against its
store, computing the expected values independently from the raw tables:

    profcheck.py STORE SITE_DIR

Prints TAP lines and exits non-zero on any failure. Checks: each problem
page's best-kernel profile (limiter, kernels listed, or "No profile
recorded."); each diff (parent = the first of the candidate's parent_ids,
the parent's and the kernel's speedup from their latest correct evaluation
on the run's GPU, +/- lines as counted, the idea's text); each category
page's limiters before and after."""
import json
import os
import sqlite3
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import sitecheck  # noqa: E402
from sitecheck import check, fmt_num, parse, slug  # noqa: E402

LIMITERS = ["memory", "compute", "latency", "launch"]


def latest_time(db, h, pid, gpu):
    r = db.execute("SELECT time_mean_ms FROM evals WHERE kernel_hash = ? AND problem_id = ?"
                   " AND gpu_name = ? AND status = 'correct' AND time_mean_ms > 0"
                   " ORDER BY created_at DESC, id DESC LIMIT 1", (h, pid, gpu)).fetchone()
    return r[0] if r else None


def eager(db, pid, gpu):
    r = db.execute("SELECT mean_ms FROM baselines WHERE problem_id = ? AND gpu_name = ?"
                   " AND variant = 'eager'", (pid, gpu)).fetchone()
    return r[0] if r else None


def profile_of(db, h, pid, gpu):
    """(eval_id, limiter) of the latest profile of a correct evaluation."""
    rows = db.execute("SELECT p.eval_id, p.limiter, p.created_at FROM profiles p, evals e"
                      " WHERE e.id = p.eval_id AND e.status = 'correct' AND p.kernel_hash = ?"
                      " AND p.problem_id = ? AND p.gpu_name = ?", (h, pid, gpu)).fetchall()
    rows.sort(key=lambda r: (r[2], r[0]), reverse=True)
    return rows[0][:2] if rows else None


def speed_s(e, t):
    return "—" if not e or not t else fmt_num(e / t) + "×"


def first_parent(text):
    try:
        v = json.loads(text)
        return v[0] if isinstance(v, list) and v and isinstance(v[0], str) else None
    except ValueError:
        return None


def main():
    db = sqlite3.connect(sys.argv[1])
    site = sys.argv[2]
    cand = {r[0]: r for r in db.execute(
        "SELECT c.id, c.problem_id, c.kernel_hash, c.parent_ids, r.gpu_name, c.idea_id"
        " FROM candidates c JOIN runs r ON r.id = c.run_id")}
    pages = 0
    for (pid,) in db.execute("SELECT id FROM problems ORDER BY id").fetchall():
        b = parse(os.path.join(site, "problems", slug(pid) + ".html"))
        root = b.root
        h3 = [n for n in root.find_all("h3") if n.get_text().startswith("The best kernel")]
        if h3:
            gpu = h3[0].get_text().split(" on ", 1)[1].replace("verified", "").replace("unverified", "").strip()
            meta = next(n for n in root.find_all("p") if n.attrs.get("class") == "meta"
                        and n.get_text().startswith("Kernel "))
            h = meta.find("code").get_text()
            want = profile_of(db, h, pid, gpu)
            prof = root.find("div", id="profile")
            if want:
                lim = root.find("span", id="limiter")
                nk = db.execute("SELECT COUNT(*) FROM profile_kernels WHERE eval_id = ?",
                                (want[0],)).fetchone()[0]
                tab = root.find("table", **{"class": "prof-kernels"})
                rows = list(tab.find("tbody").find_all("tr")) if tab else []
                check(prof is not None and prof.attrs.get("data-limiter") == want[1] and
                      lim is not None and lim.get_text() == want[1] and len(rows) == min(nk, 64),
                      "%s: the best kernel's profile on %s (limiter %s, %d kernels)" % (pid, gpu, want[1], nk),
                      "page: %r, %d kernel rows" % (lim and lim.get_text(), len(rows)))
                # Where the time goes: the kernels grouped by name, costliest first,
                # only when there are several names.
                groups = db.execute("SELECT name, COUNT(*), SUM(duration_ms) FROM profile_kernels"
                                    " WHERE eval_id = ? GROUP BY name ORDER BY SUM(duration_ms) DESC,"
                                    " MIN(idx)", (want[0],)).fetchall()
                gt = root.find("table", **{"class": "prof-by-name narrow"})
                got = [[td.get_text() for td in tr.find_all("td")][:2]
                       for tr in gt.find("tbody").find_all("tr")] if gt else []
                wantg = [[g[0], str(g[1])] for g in groups] if len(groups) > 1 else []
                check(got == wantg, "%s: where the time goes, by kernel name (%d names)" % (pid, len(groups)),
                      "page %r, want %r" % (got, wantg))
            else:
                check(prof is None and root.find("p", id="profile-none") is not None and
                      "No profile recorded." in root.find("p", id="profile-none").get_text(),
                      "%s: no profile of the best kernel on %s: the page says so" % (pid, gpu))
        diffs = list(root.find_all("details", **{"class": "kdiff"}))
        errs = []
        for d in diffs:
            cid, par = d.attrs.get("data-candidate"), d.attrs.get("data-parent")
            c = cand.get(cid)
            if not c or first_parent(c[3]) != par or par not in cand:
                errs.append("%s: parent %r is not its first parent" % (cid, par))
                continue
            p = cand[par]
            e = eager(db, pid, c[4])
            before = speed_s(e, latest_time(db, p[2], pid, c[4]))
            after = speed_s(e, latest_time(db, c[2], pid, c[4]))
            got = (d.find("span", **{"class": "sp-before"}).get_text(),
                   d.find("span", **{"class": "sp-after"}).get_text())
            if got != (before, after):
                errs.append("%s: speedups %r, want %r" % (cid, got, (before, after)))
            ins = len(list(d.find_all("ins")))
            dels = len(list(d.find_all("del")))
            more = any("more lines" in n.get_text() for n in d.find_all("p"))
            if not more and (str(ins) != d.attrs.get("data-added") or str(dels) != d.attrs.get("data-removed")):
                errs.append("%s: %d ins, %d del vs %r" % (cid, ins, dels, d.attrs))
            if c[5]:
                idea = db.execute("SELECT text FROM ideas WHERE id = ?", (c[5],)).fetchone()[0]
                words = [w for w in idea.split() if w.isalnum()][:3]
                txt = d.get_text()
                if not all(w in txt for w in words):
                    errs.append("%s: idea %r not shown" % (cid, words))
        check(not errs, "%s: %d diffs against the parent: parents, speedups, +/- lines, ideas" % (pid, len(diffs)),
              "\n".join(errs))
        pages += 1
    # limiter distribution per category, recomputed
    want = {}
    for cid, (c_id, pid, h, pids, gpu, idea) in cand.items():
        par = first_parent(pids)
        if not idea or not h or par not in cand or not cand[par][2] or not gpu:
            continue
        a = profile_of(db, h, pid, gpu)
        b = profile_of(db, cand[par][2], pid, gpu)
        if not a or not b:
            continue
        for (cat,) in db.execute("SELECT category FROM idea_categories WHERE idea_id = ?", (idea,)):
            w = want.setdefault(cat, {l: [0, 0] for l in LIMITERS})
            w[b[1]][0] += 1
            w[a[1]][1] += 1
    for cat in ["memory", "async", "precision", "compute", "parallelism", "control"]:
        root = parse(os.path.join(site, "categories", cat + ".html")).root
        t = root.find("table", id="limiters")
        if cat not in want:
            check(t is None and root.find("p", id="limiters-none") is not None,
                  "category %s: no profiles, and the page says so" % cat)
            continue
        got = {}
        for tr in (t.find("tbody").find_all("tr") if t else []):
            tds = [x for x in tr.find_all("td")]
            got[tr.attrs.get("data-limiter")] = [int(tds[1].get_text()), int(tds[2].get_text())]
        check(got == want[cat], "category %s: limiters before and after (%d kernels)"
              % (cat, sum(v[0] for v in want[cat].values())), "got %r\nwant %r" % (got, want[cat]))
    check(pages > 0, "problem pages checked: %d" % pages)
    print("1..%d" % sitecheck.N)
    return 1 if sitecheck.FAILED else 0


if __name__ == "__main__":
    sys.exit(main())
