#!/usr/bin/env python3
"""Writes the Markdown results page of a dataset release from its store.

  scripts/results_md.py STORE --version 0.1.0 --tarball DIST/kforge-kernelbench-0.1.0.tar.zst
                      [--search-seconds S] [--kernelbench DIR|none] [--screens DIR]
                      [--commands FILE] [--notes FILE.md] [--cross-gpu REPORT.md] [--kforge PATH]
                      [--goals GOALS.json]
                      [-o OUT.md]

STORE is a store file, an unpacked dataset (its kforge.db) or a dataset tarball.
Every figure comes from the store (python3's sqlite3, read-only), a section per level
(1, 2, 3: whichever the search covered):
- fast_p (p = 0, 1, 1.5, 2) per GPU against PyTorch eager, eager with TF32 off and
  torch.compile where the store has that baseline, and on an H100 against KernelBench's
  published H100 times (--kernelbench); for the search's own measurements (collect-vN, the
  latest N a kernel has) and for verified kernels (their latest verification);
- problems whose spec is "degenerate" (a constant output passes) are left out of fast_p and
  the geomeans and listed apart, as on the site; "ill_conditioned" ones are counted and marked;
- geometric-mean speedup over problems with a correct kernel, per family (level 1) and
  per idea category (the best kernel whose idea has that category);
- per category: kernels made, compiled, correct, and how many beat their problem's
  reference kernel (round 0) and PyTorch eager;
- every problem whose best kernel is slower than PyTorch eager, with why: both at the
  roofline floor, eager beyond the fp32 roofline, or the gap named (each side's share of
  the floor, and the kernel's limiter where the store has its profile);
- level 3 (whole models): where each model's time goes, from the CUPTI profile of its best
  kernel where the store has one: launches per forward, the time inside kernels and between
  them, and the kernels' shares by operation;
- search throughput, per level and over all levels, per GPU, from the store's search
  sessions (schema v6: one per `kforge search` invocation): evaluations per GPU-minute, and
  the GPU busy fraction (kernel time of the check and timed trials of the evaluations each
  session made, over the sessions' wall time); for an older store without sessions, from
  --search-seconds (the page says which);
- with --goals, the release's goals first: per level and goal, the target, the measured
  figure and whether it is met;
- the tarball's size and SHA-256.
fast_0 is the fraction of problems with a correct kernel (KernelBench's definition). A
level's problems are those the search covered (rounds, candidates or evaluations), else all
of that level in the store.
"""
import argparse
import hashlib
import json
import math
import os
import re
import shutil
import sqlite3
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from compare_baselines import load as kb_load  # noqa: E402

FAMILIES = ["elementwise", "rowsoftmax", "reduce", "norm", "loss", "scan", "matmul", "conv",
            "pool", "attention"]
CATS = ["memory", "async", "precision", "compute", "parallelism", "control"]
PS = [0, 1, 1.5, 2]
VARIANTS = [("eager", "eager"), ("eager_notf32", "eager_notf32"), ("compile", "compile"),
            ("kb_eager", "KernelBench H100 eager"), ("kb_compile", "KernelBench H100 compile")]
KB_FILES = {"kb_eager": "H100_Modal_baseline_time_torch.json",
            "kb_compile": "H100_Modal_baseline_time_torch_compile_inductor_default.json"}


def family(number, fam, name):
    """collector/catalogue.c family_of_problem, in Python."""
    fam, name = fam or "", name or ""
    if number == 5 or "elementwise" in fam or "activation" in fam:
        return "elementwise"
    if "softmax" in fam or "Softmax" in name:
        return "rowsoftmax"
    for key, f in (("reduc", "reduce"), ("arg", "reduce"), ("norm", "norm"), ("loss", "loss"),
                   ("scan", "scan"), ("cum", "scan"), ("matmul", "matmul"), ("gemm", "matmul"),
                   ("matvec", "matmul"), ("conv", "conv"), ("pool", "pool"),
                   ("attention", "attention")):
        if key in fam:
            return f
    return "other"


def geomean(v):
    v = [x for x in v if x and x > 0 and math.isfinite(x)]
    return math.exp(sum(math.log(x) for x in v) / len(v)) if v else float("nan")


def fmt(x, d=3):
    return "-" if x is None or (isinstance(x, float) and not math.isfinite(x)) else ("%.*f" % (d, x))


def pct(n, d):
    return "%.0f%%" % (100.0 * n / d) if d else "-"


def row(cells):
    return "| " + " | ".join(cells) + " |"


def head(w, cols):
    w(row(cols))
    w("|" + "---|" * len(cols))


def collect_version(protocol):
    m = re.match(r"collect-v(\d+)$", protocol or "")
    return int(m.group(1)) if m else -1


def levels_label(levels):
    if len(levels) == 1:
        return "level-%d" % levels[0]
    if levels == list(range(levels[0], levels[-1] + 1)):
        return "levels %d-%d" % (levels[0], levels[-1])
    return "levels " + ", ".join(str(x) for x in levels)


def tar_member(tarball, member, kforge, out=None):
    """One file of a dataset tarball: its bytes, or written to the file object out.
    `kforge dataset cat` (libarchive, so no zstd(1) is needed) when a kforge is given,
    else GNU tar."""
    if kforge:
        cmd = [kforge, "dataset", "cat", tarball, member]
    else:
        cmd = ["tar", "--zstd" if tarball.endswith(".zst") else "-z", "-xOf", tarball, member]
    r = subprocess.run(cmd, check=True, stdout=out or subprocess.PIPE, stderr=subprocess.PIPE)
    return r.stdout


def pack_name_opt(tarball, version):
    """pack's --name for a tarball kforge-NAME-VERSION.tar.*, "" for the default name."""
    m = re.match(r"kforge-(.+)-%s\.tar\.(zst|gz)$" % re.escape(version), os.path.basename(tarball))
    return " --name %s" % m.group(1) if m and m.group(1) != "kernelbench" else ""


def open_store(path, tmp, kforge=None):
    """The store file of STORE: itself, DIR/kforge.db, or a tarball's kforge.db."""
    if os.path.isdir(path):
        path = os.path.join(path, "kforge.db")
    elif path.endswith((".tar.zst", ".tar.gz", ".tgz")):
        tarball, path = path, os.path.join(tmp, "kforge.db")
        with open(path, "wb") as f:
            tar_member(tarball, "kforge.db", kforge, f)
    if not os.path.isfile(path):
        raise OSError("%s: no store there" % path)
    db = sqlite3.connect("file:%s?mode=ro" % path, uri=True)
    db.row_factory = sqlite3.Row
    return db


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("store", help="a store, an unpacked dataset directory or a dataset tarball")
    ap.add_argument("--version", required=True)
    ap.add_argument("--tarball")
    ap.add_argument("--search-seconds", type=float, default=0,
                    help="wall seconds the search ran on the GPU (summed over resumed calls)")
    ap.add_argument("--kernelbench", default=None,
                    help="directory of KernelBench's H100_Modal_*.json (default or 'none': no comparison)")
    ap.add_argument("--screens", help="directory of index.png and problem.png, relative to -o")
    ap.add_argument("--commands", help="a file with the commands that reproduce the run")
    ap.add_argument("--notes", help="a Markdown file: what the run shows and does not")
    ap.add_argument("--cross-gpu", help="the output of `kforge report --gpus` on the store")
    ap.add_argument("--goals", help="a JSON file of the release's goals (see goals_section): the page "
                    "says, per goal, the measured figure and whether it is met")
    ap.add_argument("--kforge", help="the kforge that reads the tarball (`kforge dataset cat`); "
                    "default: GNU tar, which needs zstd(1) for a .tar.zst")
    ap.add_argument("-o", "--out")
    a = ap.parse_args()
    tmp = tempfile.mkdtemp(prefix="results_md.")
    try:
        db = open_store(a.store, tmp, a.kforge)
        text = render(a, db)
        db.close()
    except (OSError, sqlite3.Error, subprocess.CalledProcessError, ValueError) as e:
        print("results_md: %s" % e, file=sys.stderr)
        return 1
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    if a.out:
        with open(a.out + ".tmp", "w") as f:
            f.write(text)
        os.replace(a.out + ".tmp", a.out)
    else:
        sys.stdout.write(text)
    return 0


def render(a, db):
    q = lambda sql, *p: db.execute(sql, p).fetchall()  # noqa: E731

    probs = {}
    for r in q("SELECT id, level, number, name, family, kernelbench_file, spec FROM problems"):
        try:
            spec = json.loads(r["spec"] or "{}")
        except ValueError:
            spec = {}
        spec = spec if isinstance(spec, dict) else {}
        flag = lambda k: spec[k] if isinstance(spec.get(k), str) else None  # noqa: E731
        probs[r["id"]] = {"level": r["level"], "number": r["number"], "name": r["name"],
                          "file": r["kernelbench_file"], "degenerate": flag("degenerate"),
                          "ill": flag("ill_conditioned"),
                          "family": family(r["number"], r["family"], r["name"])}
    searched = {r[0] for r in q("SELECT problem_id FROM rounds UNION SELECT problem_id FROM candidates "
                                "UNION SELECT problem_id FROM evals")}
    levels = sorted({p["level"] for pid, p in probs.items() if pid in searched}) or \
        sorted({p["level"] for p in probs.values()})
    scope = {}
    for lv in levels:
        ids = [pid for pid, p in probs.items() if p["level"] == lv]
        scope[lv] = sorted([pid for pid in ids if pid in searched] or ids,
                           key=lambda pid: probs[pid]["number"])

    base = {}
    for r in q("SELECT problem_id, gpu_name, variant, mean_ms FROM baselines"):
        base[(r["problem_id"], r["gpu_name"], r["variant"])] = r["mean_ms"]
    kbdir = a.kernelbench
    kb = {}
    if kbdir and kbdir != "none" and os.path.isdir(kbdir):
        for v, f in KB_FILES.items():
            for lv in levels:
                for file, ms in kb_load(os.path.join(kbdir, f), lv).items():
                    kb[(lv, file, v)] = ms
    else:
        kbdir = None

    def baseline(pid, gpu, variant):
        if variant.startswith("kb_"):
            p = probs[pid]
            return kb.get((p["level"], p["file"], variant)) if "H100" in gpu else None
        return base.get((pid, gpu, variant))

    # A kernel's verdict on a GPU: its latest verification's (core/store_verify.h KF_VERDICTS).
    latest = ("(SELECT * FROM (SELECT *, ROW_NUMBER() OVER (PARTITION BY kernel_hash, problem_id,"
              " gpu_name ORDER BY created_at DESC, id) AS vrn FROM verifications) WHERE vrn = 1)")
    failed = {(r["kernel_hash"], r["gpu_name"]) for r in
              q("SELECT kernel_hash, gpu_name FROM %s WHERE verdict = 'failed'" % latest)}
    # A verification that passed with a review flag is no verified result
    # (core/store_verify.h KF_FLAGGED_VERDICT): left out like a failed one, listed apart.
    flagged_rows = q("SELECT problem_id, gpu_name, kernel_hash, review_flags FROM %s WHERE verdict = "
                     "'verified' AND json_valid(COALESCE(review_flags, '[]'))"
                     " AND json_array_length(COALESCE(review_flags, '[]')) > 0"
                     " ORDER BY problem_id, gpu_name, kernel_hash" % latest)
    flagged = {(r["kernel_hash"], r["gpu_name"]) for r in flagged_rows}
    failed |= flagged
    verified = {(r["kernel_hash"], r["gpu_name"]) for r in
                q("SELECT kernel_hash, gpu_name FROM %s WHERE verdict = 'verified'" % latest)} - flagged
    vprotos = [r["protocol"] for r in q("SELECT DISTINCT protocol FROM %s ORDER BY 1" % latest)]
    # The search's measurement of a kernel: its evaluation under the latest collect-vN.
    sev = {}
    for r in q("SELECT kernel_hash, problem_id, gpu_name, protocol, status, time_mean_ms FROM evals "
               "WHERE protocol LIKE 'collect-%'"):
        k = (r["kernel_hash"], r["problem_id"], r["gpu_name"])
        if k not in sev or collect_version(r["protocol"]) > collect_version(sev[k]["protocol"]):
            sev[k] = r
    sprotos = sorted({r["protocol"] for r in sev.values()})
    runs = q("SELECT * FROM runs ORDER BY created_at")
    gpus = sorted({r["name"] for r in q("SELECT name FROM gpus")} |
                  {k[2] for k in sev if k[2]})
    out = []
    w = out.append

    props = []
    for r in runs:
        p = "built-in proposer" if r["proposer"] == "builtin" else \
            "%s proposer%s" % (r["proposer"], " (%s)" % r["model"] if r["model"] else "")
        if p not in props:
            props.append(p)
    w("# kforge %s dataset v%s: %s\n" % (levels_label(levels) if levels else "empty", a.version,
                                       ", ".join(props) or "no search"))
    w("Generated by `scripts/results_md.py` from the store; every figure below comes from it.\n")
    for r in runs:
        cfg = json.loads(r["config"] or "{}")
        budget = ", ".join("%s %g" % (label, cfg[k]) for k, label in
                           (("rounds", "rounds"), ("k", "ideas"), ("m", "impls"),
                            ("top_k", "top_k"), ("max_timing_s", "max_timing_s"),
                            ("prune_vs_eager", "prune_vs_eager")) if k in cfg)
        w("- run `%s`: proposer %s, seed %s, GPU %s, %s, protocol %s, kforge %s, status %s" %
          (r["id"], r["proposer"], r["seed"], r["gpu_name"] or "none (compile only)",
           budget or "default budget", cfg.get("protocol", "collect-v1"), r["kforge_version"],
           r["status"]))
    w("- problems: %d%s; GPUs in the store: %s\n" %
      (sum(len(v) for v in scope.values()),
       " (%s)" % ", ".join("level %d: %d" % (lv, len(scope[lv])) for lv in levels) if levels else "",
       ", ".join(gpus) or "none"))

    def best_times(gpu, only_verified):
        """problem -> (time_ms, kernel_hash) of its fastest correct kernel: as the search
        timed it, or (only_verified) as timed by the verification that verified it."""
        best = {}
        if only_verified:
            rows = q("SELECT v.problem_id, v.kernel_hash, e.time_mean_ms FROM %s v JOIN evals e"
                     " ON e.id = v.eval_id WHERE v.gpu_name = ? AND v.verdict = 'verified'"
                     " AND e.time_mean_ms > 0" % latest, gpu)
        else:
            rows = [r for k, r in sev.items() if k[2] == gpu and r["status"] == "correct" and
                    (r["time_mean_ms"] or 0) > 0]
        for r in rows:
            k = (r["kernel_hash"], gpu)
            if k in failed or (only_verified and k not in verified):
                continue
            if r["problem_id"] not in best or r["time_mean_ms"] < best[r["problem_id"]][0]:
                best[r["problem_id"]] = (r["time_mean_ms"], r["kernel_hash"])
        return best

    def speedups(best, gpu, variant):
        s = {}
        for pid, (t, _) in best.items():
            b = baseline(pid, gpu, variant)
            if b:
                s[pid] = b / t
        return s

    views = []
    for gpu in gpus:
        for ver, label in ((False, "search"), (True, "verified")):
            best = best_times(gpu, ver)
            if best:
                views.append((gpu, label, best))

    if flagged_rows:
        w("## Flagged kernels (not counted)\n")
        w("Their verification passed but raised a review flag: no verified result; left out of "
          "fast_p, the geomeans and the best kernels until verified again without one.\n")
        w("| problem | GPU | kernel | flags |\n| --- | --- | --- | --- |")
        for r in flagged_rows:
            w("| %s | %s | `%s` | %s |" % (r["problem_id"], r["gpu_name"], r["kernel_hash"][:12],
                                         ", ".join(json.loads(r["review_flags"] or "[]"))))
        w("")

    if a.goals:
        goals_section(w, a, q, levels, scope, probs, views, speedups, runs)

    for lv in levels:
        level_section(w, lv, scope[lv], probs, views, speedups, q, sev, failed, baseline,
                      sprotos, vprotos, kbdir)

    throughput(w, a, q, runs, sev)
    tail(w, a)
    return "\n".join(out) + "\n"


def level_section(w, lv, pids, probs, views, speedups, q, sev, failed, baseline, sprotos,
                  vprotos, kbdir):
    inscope = set(pids)
    degen = [p for p in pids if probs[p]["degenerate"]]
    ill = [p for p in pids if probs[p]["ill"]]
    counted = [p for p in pids if not probs[p]["degenerate"]]
    cand = q("SELECT problem_id, status, kernel_hash FROM candidates")
    cand = [r for r in cand if r["problem_id"] in inscope]
    compiled = sum(1 for r in cand if r["kernel_hash"] and
                   r["status"] not in ("format_error", "compile_error", "pending"))
    correct_p = {r["problem_id"] for r in cand if r["status"] == "correct"}
    w("## Level %d\n" % lv)
    # a compile-only search ran nothing: correctness not checked, not 0
    ran = any(r["status"] not in ("not_run", "pending", "format_error", "compile_error") for r in cand)
    w("- problems: %d (%d degenerate, left out of fast_p and the geomeans; %d ill-conditioned, "
      "counted and marked); with a correct kernel in the search: %s" %
      (len(pids), len(degen), len(ill), len(correct_p) if ran else "not checked (none run)"))
    w("- candidates: %d, compiled: %d, correct: %s\n" %
      (len(cand), compiled, sum(1 for r in cand if r["status"] == "correct") if ran else "not checked"))

    w("### fast_p, level %d\n" % lv)
    w("fast_p: the fraction of the %d level-%d problems%s with a correct kernel more than p times "
      "faster than the baseline (fast_0: correct at all). Search: the collector's measurement "
      "(%s: 100 timed trials, fewer where the run's max_timing_s or prune_vs_eager cut them); "
      "verified: kernels whose latest verification on that GPU passed (%s), timed there (500 "
      "trials, or max_timing_s). KernelBench H100: its published H100_Modal times%s.\n" %
      (len(counted), lv, " (degenerate ones left out)" if degen else "", ", ".join(sprotos) or "collect-v2",
       ", ".join(vprotos) or "none", " (%s)" % os.path.basename(os.path.normpath(kbdir))
       if kbdir else ", not available here"))
    rows = []
    for gpu, label, best in views:
        lbest = {p: v for p, v in best.items() if p in inscope and not probs[p]["degenerate"]}
        if not lbest:
            continue
        for variant, vlabel in VARIANTS:
            sp = speedups(lbest, gpu, variant)
            if not sp:
                continue
            cells = []
            for p in PS:
                n = len(lbest) if p == 0 else sum(1 for v in sp.values() if v > p)
                cells.append(pct(n, len(counted)))
            rows.append("| %s | %s | %s | %s | %s | %d |" % (gpu, label, vlabel, " | ".join(cells),
                                                          fmt(geomean(sp.values())), len(sp)))
    if rows:
        w("| GPU | kernels | baseline | " + " | ".join("fast_%g" % p for p in PS) +
          " | geomean speedup | problems with baseline |")
        w("|---|---|---|" + "---|" * len(PS) + "---|---|")
        for r in rows:
            w(r)
    else:
        w("No correct timed kernel of level %d with a baseline (a compile-only search runs none)." % lv)
    w("")

    def marks(title, ids, key, why):
        if not ids:
            return
        w("### %s, level %d\n" % (title, lv))
        w(why + "\n")
        head(w, ["problem", "why"] + ["%s %s vs eager" % (g.replace("NVIDIA ", ""), l)
                                      for g, l, _ in views])
        for p in ids:
            cells = []
            for gpu, label, best in views:
                if p not in best:
                    cells.append("-")
                    continue
                sp = speedups({p: best[p]}, gpu, "eager")
                cells.append("correct, %sx" % fmt(sp[p]) if p in sp else "correct")
            w(row([p, probs[p][key].replace("|", "\\|").replace("\n", " ")] + cells))
        w("")

    marks("Degenerate problems", degen, "degenerate",
          "A constant output passes these problems' checks, so they are reported here and not "
          "in fast_p or the geomeans (as on the site).")
    marks("Ill-conditioned problems", ill, "ill",
          "PyTorch's own fp32 forward misses the exact result here; they are counted in fast_p.")

    # Families are level 1's (collector/catalogue.c); levels 2 and 3 are all "graph".
    fams = [f for f in FAMILIES if any(probs[p]["family"] == f for p in counted)] if lv == 1 else []
    if fams:
        def family_table(title, views, variant):
            w("### Geometric-mean speedup against %s, per family, level %d\n" % (title, lv))
            head(w, ["family", "problems"] + ["%s %s" % (g.replace("NVIDIA ", ""), l)
                                              for g, l, _ in views])
            for f in fams:
                fp = [p for p in counted if probs[p]["family"] == f]
                cells = []
                for gpu, label, best in views:
                    sp = speedups({p: best[p] for p in fp if p in best}, gpu, variant)
                    cells.append("%s (%d)" % (fmt(geomean(sp.values())), len(sp)))
                w(row([f, str(len(fp))] + cells))

        family_table("PyTorch eager", views, "eager")
        w("\n(n): problems with a correct kernel and a baseline.\n")
        cviews = [(g, l, b) for g, l, b in views
                  if speedups({p: b[p] for p in counted if p in b}, g, "compile")]
        if cviews:
            family_table("torch.compile", cviews, "compile")
            w("")

    below_eager(w, lv, counted, probs, views, speedups, q)
    if lv == 3:
        time_split(w, lv, counted, probs, views, speedups, q)
    categories(w, lv, inscope, counted, q, sev, failed, baseline)


REACHED = 0.8   # a side at this share of the roofline floor or more has reached it


def slower_why(q):
    """f(problem, gpu, kernel, kernel ms, eager ms) -> (kernel share of the roofline floor,
    eager's, the kernel's profiled limiter, why the kernel is slower, and the kind of reason:
    "floor" (both at it), "tf32" (eager past the fp32 roofline), "gap" or "none")."""
    peaks = {r["name"]: (r["peak_bw_gbs"], r["peak_fp32_tflops"])
             for r in q("SELECT name, peak_bw_gbs, peak_fp32_tflops FROM gpus")}
    work = {r["id"]: (r["flops"], r["min_bytes"]) for r in q("SELECT id, flops, min_bytes FROM problems")}
    lim = {}
    if has_table(q, "profiles"):  # schema v5 on
        lim = {(r["kernel_hash"], r["problem_id"], r["gpu_name"]): r["limiter"] for r in
               q("SELECT kernel_hash, problem_id, gpu_name, limiter FROM profiles ORDER BY created_at")}

    def why(p, gpu, kh, t, eager):
        bw, tf = peaks.get(gpu, (None, None))
        flops, nbytes = work.get(p, (None, None))
        mem = nbytes / (bw * 1e9) * 1e3 if bw and nbytes else 0
        comp = flops / (tf * 1e12) * 1e3 if tf and flops else 0
        floor = max(mem, comp) or None
        lm = lim.get((kh, p, gpu))
        if not floor:
            return (None, None, lm, "no roofline for it in the store (the problem's flops and "
                    "bytes, or the GPU's ceilings)", "none")
        ke, ee = floor / t, floor / eager
        # Past a memory floor is no TF32: the measured copy is slower than
        # a read-mostly stream (an H200: 3951 GB/s copy, 4605 GB/s read).
        if ee > 1.0 and mem >= comp:
            return (ke, ee, lm, "memory-bound: eager streams past the measured copy's bandwidth "
                    "(%.0f%% of its floor), the kernel %s" %
                    (100 * ee, "too: roofline floor reached by both" if ke >= REACHED
                     else "reaches %.0f%%" % (100 * ke)), "floor" if ke >= REACHED else "gap")
        if ee > 1.0:
            return (ke, ee, lm, "eager runs faster than the fp32 roofline allows: TF32 tensor "
                    "cores, or less work than the problem's flops count; the kernel keeps fp32 "
                    "accuracy", "tf32")
        if ke >= REACHED and ee >= REACHED:
            return ke, ee, lm, "roofline floor reached by both", "floor"
        w = "gap: the kernel reaches %.0f%% of the floor, eager %.0f%%" % (100 * ke, 100 * ee)
        if lm:
            w += "; the kernel is %s-bound" % lm
        return ke, ee, lm, w, "gap"
    return why


def best_picks(counted, probs, views, speedups):
    """[((problem, GPU), (kernels label, kernel hash, kernel ms, eager ms, speedup))] of each
    problem's best kernel per GPU as the site takes it (the verified one where that GPU
    verified one, else the search's), in the views' GPU order, then by problem number."""
    pick = {}
    for gpu, label, best in views:
        sp = speedups({p: best[p] for p in counted if p in best}, gpu, "eager")
        for p in sp:
            if label == "verified" or (p, gpu) not in pick:
                pick[(p, gpu)] = (label, best[p][1], best[p][0], best[p][0] * sp[p], sp[p])
    gorder = {g: i for i, g in enumerate(dict.fromkeys(v[0] for v in views))}
    return sorted(pick.items(), key=lambda kv: (gorder[kv[0][1]], probs[kv[0][0]]["number"]))


def below_eager(w, lv, counted, probs, views, speedups, q):
    # One row per problem and GPU (best_picks).
    rows = [(p, gpu) + v[:4] for (p, gpu), v in best_picks(counted, probs, views, speedups)
            if v[4] < 1.0]
    if not rows:
        return
    why_of = slower_why(q)
    w("### Below PyTorch eager, level %d\n" % lv)
    w("Problems whose best correct kernel is slower than eager, and why: one row per GPU, "
      "the verified kernel where that GPU verified one, else the search's. The floor is the time "
      "the GPU's measured ceilings allow (the problem's minimum bytes over the peak bandwidth, "
      "its flops over the peak fp32 rate, whichever is longer); a side at %d%% of it or more "
      "has reached it. The limiter is the kernel's profile's, where the store has one.\n"
      % (REACHED * 100))
    head(w, ["problem", "GPU", "kernels", "speedup vs eager", "kernel % of floor",
             "eager % of floor", "limiter", "why"])
    for p, gpu, label, kh, t, eager in rows:
        ke, ee, lm, why, _ = why_of(p, gpu, kh, t, eager)
        w(row([p, gpu.replace("NVIDIA ", ""), label, "%sx" % fmt(eager / t),
               "%.0f%%" % (100 * ke) if ke else "-", "%.0f%%" % (100 * ee) if ee else "-",
               lm or "-", why]))
    w("")


def op_of(name):
    """A launched kernel's operation: its function name without the graph emitter's node
    prefix ("g12_conv_tc" -> "conv_tc")."""
    return re.sub(r"^g\d+_", "", name) or name


def time_split(w, lv, counted, probs, views, speedups, q):
    """Where each model's time goes (issue 42, item 1): the CUPTI profile of its best kernel
    (one launch block of the forward, each kernel serialized), against its event-timed mean."""
    if not has_table(q, "profiles"):
        return
    prof = {}
    for r in q("SELECT eval_id, kernel_hash, problem_id, gpu_name, launches, kernel_ms, limiter "
               "FROM profiles ORDER BY created_at"):
        prof[(r["kernel_hash"], r["problem_id"], r["gpu_name"])] = r
    rows = []
    for (p, gpu), (label, kh, t, eager, sp) in best_picks(counted, probs, views, speedups):
        pr = prof.get((kh, p, gpu))
        if not pr:
            continue
        ops = {}
        for k in q("SELECT name, duration_ms FROM profile_kernels WHERE eval_id = ?", pr["eval_id"]):
            ops[op_of(k["name"])] = ops.get(op_of(k["name"]), 0.0) + (k["duration_ms"] or 0.0)
        rows.append((p, gpu, label, t, sp, pr, ops))
    if not rows:
        return
    w("### Where the time goes, per model, level %d\n" % lv)
    w("The CUPTI profile of each model's best kernel (the verified one where that GPU verified "
      "one, else the search's), where the store has one: its launches per forward, the time "
      "inside its kernels (each kernel timed alone by the profiler), the rest of the event-timed "
      "mean (launch gaps and idle time between kernels), and the operations with the largest "
      "shares of the kernels' time (the kernel function's name without its graph node). The "
      "limiter is the profile's.\n")
    head(w, ["problem", "GPU", "kernels", "speedup vs eager", "time (ms)", "launches",
             "in kernels (ms)", "between kernels", "largest shares", "limiter"])
    for p, gpu, label, t, sp, pr, ops in rows:
        tot = sum(ops.values())
        top = sorted(ops.items(), key=lambda kv: -kv[1])[:3]
        inside = pr["kernel_ms"] if pr["kernel_ms"] is not None else (tot or None)
        gap = max(0.0, t - inside) / t if inside is not None and t > 0 else None
        w(row([p, gpu.replace("NVIDIA ", ""), label, "%sx" % fmt(sp), fmt(t), str(pr["launches"]),
               fmt(inside) if inside is not None else "-",
               "%.0f%%" % (100 * gap) if gap is not None else "-",
               ", ".join("%s %.0f%%" % (o, 100 * d / tot) for o, d in top) if tot > 0 else "-",
               pr["limiter"]]))
    nl = sorted(r[5]["launches"] for r in rows)
    w("\n%d of %d models profiled; launches per forward: median %d, most %d (%s).\n" %
      (len({r[0] for r in rows}), len(counted), nl[len(nl) // 2], nl[-1],
       next(r[0] for r in rows if r[5]["launches"] == nl[-1])))


def categories(w, lv, inscope, counted, q, sev, failed, baseline):
    w("### Per idea category, level %d\n" % lv)
    w("A kernel belongs to every category of its idea; each GPU the search measured on has its "
      "rows. *beat reference*: faster than its problem's round-0 kernel (the reference as a "
      "candidate; the fastest, where several runs made one); *beat eager*: faster than "
      "PyTorch eager. Geomean: over the problems (not degenerate), the best kernel of the "
      "category against eager.\n")
    rows = [r for r in q("SELECT DISTINCT c.problem_id, c.kernel_hash, c.status, ic.category FROM "
                         "candidates c JOIN idea_categories ic ON ic.idea_id = c.idea_id")
            if r["problem_id"] in inscope]
    refs = [r for r in q("SELECT problem_id, kernel_hash FROM candidates WHERE round = 0 AND "
                         "kernel_hash IS NOT NULL") if r["problem_id"] in inscope]
    sgpus = sorted({k[2] for k in sev if k[1] in inscope and k[2]}) or [None]
    w("| category | GPU | kernels | compiled | correct | beat reference | beat eager | "
      "geomean vs eager (problems) |")
    w("|---|---|---|---|---|---|---|---|")
    for gpu in sgpus:
        ref_t = {}
        for r in refs:
            e = sev.get((r["kernel_hash"], r["problem_id"], gpu))
            # Several runs, several round-0 kernels: the fastest, whatever the row order.
            if e and e["status"] == "correct" and e["time_mean_ms"]:
                p = r["problem_id"]
                ref_t[p] = min(ref_t.get(p, e["time_mean_ms"]), e["time_mean_ms"])
        for cat in CATS:
            rs = [r for r in rows if r["category"] == cat]
            comp = sum(1 for r in rs if r["kernel_hash"] and
                       r["status"] not in ("format_error", "compile_error", "pending"))
            ok = []
            for r in rs:
                e = sev.get((r["kernel_hash"], r["problem_id"], gpu)) if gpu else None
                if e and e["status"] == "correct" and e["time_mean_ms"] and \
                        (r["kernel_hash"], gpu) not in failed:
                    ok.append((r["problem_id"], e["time_mean_ms"]))
            beat_ref = sum(1 for p, t in ok if p in ref_t and t < ref_t[p])
            beat_eager = sum(1 for p, t in ok if (baseline(p, gpu, "eager") or 0) > t)
            bestc = {}
            for p, t in ok:
                if p in counted and (p not in bestc or t < bestc[p]):
                    bestc[p] = t
            sp = [baseline(p, gpu, "eager") / t for p, t in bestc.items() if baseline(p, gpu, "eager")]
            # compile only: nothing ran, so correct and faster are not checked, not 0
            run = lambda v: str(v) if gpu else "-"  # noqa: E731
            w("| %s | %s | %d | %d | %s | %s | %s | %s (%d) |" %
              (cat, gpu or "none (compile only)", len(rs), comp, run(len(ok)), run(beat_ref), run(beat_eager),
               fmt(geomean(sp)), len(sp)))
    w("")


def throughput(w, a, q, runs, sev):
    sgpu = runs[-1]["gpu_name"] if runs else None
    w("## Search throughput\n")
    ev = q("SELECT e.id, e.env FROM evals e WHERE e.protocol LIKE 'collect-%' AND e.gpu_name = ?", sgpu)
    kern = q("SELECT sum(t.time_ms) AS ms, count(*) AS n FROM eval_trials t JOIN evals e ON "
             "e.id = t.eval_id WHERE e.protocol LIKE 'collect-%' AND e.gpu_name = ?", sgpu)[0]
    ncand = q("SELECT count(*) AS n, sum(status = 'correct') AS ok FROM candidates")[0]
    harness, no_refs, n_refs, counted = [], [], 0, False
    for r in ev:
        try:
            env = json.loads(r["env"] or "{}")
        except ValueError:
            env = {}
        h = env.get("harness_ms")
        if h:
            harness.append(h)
            refs = (env.get("phases_ms") or {}).get("refs", 0)
            # refs_run: the worker's count (kforge after 6e31534); before, the phase's time
            counted = counted or isinstance(env.get("refs_run"), int)
            n_refs += env["refs_run"] > 0 if isinstance(env.get("refs_run"), int) else refs >= 1.0
            no_refs.append(h - refs)
    harness.sort()
    no_refs.sort()
    w("- candidates: %d (%s); evaluations on %s by the search: %d" %
      (ncand["n"], "%d correct" % (ncand["ok"] or 0) if sgpu else "none run: not checked",
       sgpu or "no GPU (compile only)", len(ev)))
    sessions = search_sessions(q)
    if sessions:
        session_table(w, q, sessions, a)
    elif a.search_seconds > 0:
        w("- source: `--search-seconds %g` (the store records no search sessions: schema before v6, "
          "or no search since)" % a.search_seconds)
        w("- search wall time on the GPU: %.0f s; **%.1f candidates per GPU-minute** (evaluated "
          "ones: a candidate that re-renders a kernel its problem already has reuses that "
          "kernel's evaluation)" % (a.search_seconds, len(ev) / (a.search_seconds / 60.0)))
        w("- GPU busy fraction (kernel time of %d check and timed runs, %.0f s, over the wall "
          "time): **%.1f%%**" % (kern["n"], (kern["ms"] or 0) / 1000.0,
                                 100.0 * (kern["ms"] or 0) / 1000.0 / a.search_seconds))
    else:
        w("- no search sessions in the store (schema before v6) and no `--search-seconds`: "
          "no figures per GPU-minute")
    if harness:
        w("- harness overhead per evaluation (wall minus kernel time): median %.0f ms; "
          "%d of %d evaluations computed reference outputs (the rest found them kept%s); "
          "without that phase: median %.0f ms" %
          (harness[len(harness) // 2], n_refs, len(harness),
           "" if counted else "; this kforge kept one problem's at a time, since 5ec8049 "
           "the worker keeps several problems'", no_refs[len(no_refs) // 2]))
    w("")


def has_table(q, name):
    """Whether the store has table name (older schemas lack the newer ones)."""
    return bool(q("SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = ?", name))


def search_sessions(q):
    """The store's search sessions (schema v6), oldest first; [] for an older store."""
    if not has_table(q, "search_sessions"):
        return []
    return q("SELECT * FROM search_sessions ORDER BY started_at, id")


def session_groups(q, sessions):
    """{(gpu, level or "all"): {n, wall, evals, kern: {eval id: (ms, trials)}}} over the
    sessions (a session over one level counts there and under "all"), and how many
    sessions covered several levels (or none)."""
    groups, mixed = {}, 0
    for s in sessions:
        try:
            lv = json.loads(s["levels"] or "[]")
        except ValueError:
            lv = []
        evs = {}
        if s["gpu_name"]:
            for r in q("SELECT e.id, (SELECT sum(t.time_ms) FROM eval_trials t WHERE t.eval_id = e.id) AS ms,"
                       " (SELECT count(*) FROM eval_trials t WHERE t.eval_id = e.id) AS n FROM evals e"
                       " WHERE e.gpu_name = ? AND e.protocol LIKE 'collect-%' AND e.created_at >= ?"
                       " AND e.created_at <= ? AND EXISTS (SELECT 1 FROM candidates c WHERE c.run_id = ?"
                       " AND c.kernel_hash = e.kernel_hash AND c.problem_id = e.problem_id)",
                       s["gpu_name"], s["started_at"], s["ended_at"], s["run_id"]):
                evs[r["id"]] = (r["ms"] or 0.0, r["n"])
        scopes = [lv[0]] if isinstance(lv, list) and len(lv) == 1 and isinstance(lv[0], int) else []
        mixed += not scopes
        for scope in scopes + ["all"]:
            g = groups.setdefault((s["gpu_name"] or "", scope),
                                  {"n": 0, "wall": 0.0, "evals": 0, "kern": {}})
            g["n"] += 1
            g["wall"] += s["wall_s"] or 0.0
            g["evals"] += s["evaluations"] or 0
            g["kern"].update(evs)
    return groups, mixed


def session_table(w, q, sessions, a):
    """Throughput per level (sessions whose problems lie in one level) and over all levels,
    per GPU: the sessions' wall time and evaluation counts; the GPU's busy time is the
    check and timed trials of the collect-% evaluations a session made (its run's
    candidates' kernels, created within its window), each evaluation counted once."""
    groups, mixed = session_groups(q, sessions)
    w("- source: the store's %d search session(s) (`search_sessions`: one per `kforge search` "
      "invocation, with its wall time and evaluation count)%s; GPU busy: the check and timed "
      "trials' time of the collect evaluations each session made over its wall time%s" %
      (len(sessions), "; %d over several levels (or none) count under all levels only" % mixed
       if mixed else "",
       "; `--search-seconds` not used" if a.search_seconds > 0 else ""))
    w("- goal for a default search: at least 60 evaluations per GPU-minute, the GPU busy at least 80%\n")
    w("| scope | GPU | sessions | wall time | evaluations | per GPU-minute | trials | kernel time | GPU busy |")
    w("| --- | --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: |")
    order = lambda k: (k[0], k[1] == "all", k[1] if k[1] != "all" else 0)  # noqa: E731
    for gpu, scope in sorted(groups, key=order):
        g = groups[(gpu, scope)]
        ms = sum(v[0] for v in g["kern"].values())
        nt = sum(v[1] for v in g["kern"].values())
        rate = "**%.1f**" % (g["evals"] / (g["wall"] / 60.0)) if g["wall"] > 0 else "-"
        busy = "**%.1f%%**" % (100.0 * ms / 1000.0 / g["wall"]) if gpu and g["wall"] > 0 else "-"
        w("| %s | %s | %d | %.0f s | %d | %s | %s | %s | %s |" %
          ("level %d" % scope if scope != "all" else "all levels", gpu or "none (compile only)",
           g["n"], g["wall"], g["evals"], rate, nt if gpu else "-",
           "%.1f s" % (ms / 1000.0) if gpu else "-", busy))
    w("")


TIME_GOALS = ("evals_per_min", "gpu_busy")
GOAL_KINDS = {
    # key: (label, how the measured figure reads, larger is better)
    "eager_geomean": "geomean speedup against PyTorch eager",
    "compile_geomean": "geomean speedup against torch.compile",
    "fast_1": "fast_1 against eager (fraction of the level's problems)",
    "correct": "problems with a correct kernel (fraction)",
    "evals_per_min": "evaluations per GPU-minute (search sessions)",
    "gpu_busy": "GPU busy fraction (search sessions)",
}


def load_goals(path):
    """{level: {kind: target}} from {"levels": {"1": {kind: number, ...}, ...}}; bounded."""
    with open(path, "rb") as f:
        raw = f.read(65537)
    if len(raw) > 65536:
        raise ValueError("%s: over 64 KiB" % path)
    g = json.loads(raw.decode("utf-8"))
    out = {}
    levels = g.get("levels") if isinstance(g, dict) else None
    if not isinstance(levels, dict):
        raise ValueError("%s: no \"levels\" object" % path)
    for lv, goals in levels.items():
        if not re.fullmatch(r"[1-9]", lv) or not isinstance(goals, dict):
            raise ValueError("%s: level %r is not 1-9 with an object of goals" % (path, lv))
        for k, v in goals.items():
            if k not in GOAL_KINDS or isinstance(v, bool) or not isinstance(v, (int, float)) or \
                    not math.isfinite(v) or v < 0:
                raise ValueError("%s: level %s: %r: want one of %s with a number >= 0" %
                                 (path, lv, k, ", ".join(GOAL_KINDS)))
        out[int(lv)] = goals
    return out


def goals_section(w, a, q, levels, scope, probs, views, speedups, runs):
    goals = load_goals(a.goals)
    gpu = runs[-1]["gpu_name"] if runs and runs[-1]["gpu_name"] else (views[0][0] if views else None)
    # The verified kernels where the GPU has them, else the search's.
    view = next((v for v in views if v[0] == gpu and v[1] == "verified"), None) or \
        next((v for v in views if v[0] == gpu), None)
    sview = next((v for v in views if v[0] == gpu and v[1] == "search"), None)
    sessions = search_sessions(q)
    groups = session_groups(q, sessions)[0] if sessions else {}
    w("## Goals\n")
    w("The release's goals (%s), each against its measured figure on %s (%s kernels; "
      "throughput from the store's search sessions). A goal that is not met says so, and "
      "\"What stands in the way\" below says why.\n" %
      (os.path.basename(a.goals), gpu or "no GPU", view[1] if view else "no"))
    w("| level | goal | target | measured | met |")
    w("|---|---|--:|--:|---|")
    first, lines, why_of = {}, [], slower_why(q)
    absent = [lv for lv in sorted(goals) if not scope.get(lv)]
    for lv in sorted(goals):
        if not scope.get(lv):
            continue   # another store's page (one line below)
        counted = [p for p in scope.get(lv, []) if not probs[p]["degenerate"]]
        best = {p: view[2][p] for p in counted if view and p in view[2]}
        for kind, target in goals[lv].items():
            got, shown = None, "not measured"
            if kind in ("eager_geomean", "compile_geomean") and best:
                sp = speedups(best, gpu, "eager" if kind == "eager_geomean" else "compile")
                if sp:
                    got = geomean(sp.values())
                    shown = "%s (%d problem%s)" % (fmt(got), len(sp), "" if len(sp) == 1 else "s")
            elif kind == "fast_1" and counted and view:
                sp = speedups(best, gpu, "eager")
                n = sum(1 for v in sp.values() if v > 1)
                got = n / len(counted)
                shown = "%s (%d of %d)" % (pct(n, len(counted)), n, len(counted))
            elif kind == "correct" and counted and view:
                got = len(best) / len(counted)
                shown = "%s (%d of %d)" % (pct(len(best), len(counted)), len(best), len(counted))
            elif kind in ("evals_per_min", "gpu_busy") and gpu and (gpu, lv) in groups:
                # per GPU-minute: a compile-only search (no GPU) measures neither
                g = groups[(gpu, lv)]
                if g["wall"] > 0:
                    if kind == "evals_per_min":
                        got = g["evals"] / (g["wall"] / 60.0)
                        shown = "%.1f" % got
                    else:
                        got = sum(v[0] for v in g["kern"].values()) / 1000.0 / g["wall"]
                        shown = "%.1f%%" % (100 * got)
            frac = kind in ("fast_1", "correct", "gpu_busy")
            tshown = "%.0f%%" % (100 * target) if frac else ("%gx" % target if "geomean" in kind else "%g" % target)
            met = "not measured" if got is None else ("yes" if got >= target - 1e-12 else "**no**")
            w(row(["level %d" % lv, GOAL_KINDS[kind], tshown, shown, met]))
            if met != "yes" and counted:
                # the time goals share one obstacle, fast_1 the eager geomean's
                group = "time" if kind in TIME_GOALS else "below" if kind in ("eager_geomean", "fast_1") else None
                said = first.get((lv, group))
                why = "the same as for %s above" % said if said else goal_obstacle(
                    q, kind, target, lv, gpu, view, sview, counted, best, speedups, groups, why_of)
                if kind == "fast_1" and view:
                    sp = speedups(best, gpu, "eager")
                    near = sorted(((s, p) for p, s in sp.items() if s <= 1.0), reverse=True)
                    need = max(0, math.ceil(target * len(counted) - 1e-9) - sum(v > 1 for v in sp.values()))
                    why += "; %d more past eager would meet it (the nearest: %s)" % (
                        need, listed(["%s %sx" % (short(p), fmt(s)) for s, p in near], 6))
                if group and kind != "fast_1":
                    first.setdefault((lv, group), GOAL_KINDS[kind].split(" (")[0])
                lines.append("- **level %d, %s** (%s, goal %s): %s" % (lv, GOAL_KINDS[kind], shown,
                                                                        tshown, why))
    if absent:
        w("\nLevel%s %s: not in this store; %s goals are measured on %s own page%s." % (
            "s" if len(absent) > 1 else "", " and ".join(str(x) for x in absent),
            "their" if len(absent) > 1 else "its", "their" if len(absent) > 1 else "its",
            "s" if len(absent) > 1 else ""))
    w("")
    if lines:
        w("### What stands in the way\n")
        w("For each goal not met, from the same store: the problems that hold it back and why "
          "(the table \"Below PyTorch eager\" has every one), or where a search's time went.\n")
        w("\n".join(lines) + "\n")


def short(p):
    """level1/047_Sum_reduction_over_a_dimension -> 047"""
    return p.split("/")[-1].split("_")[0]


def listed(items, n=12):
    return ", ".join(items[:n]) + (", and %d more" % (len(items) - n) if len(items) > n else "")


def goal_obstacle(q, kind, target, lv, gpu, view, sview, counted, best, speedups, groups, why_of):
    """What keeps one goal of level lv from its target on gpu, in a sentence or two."""
    if kind in TIME_GOALS:
        g = groups.get((gpu, lv)) if gpu else None
        if not gpu and groups.get(("", lv)):
            return "the store's searches of level %d ran without a GPU (compile only)" % lv
        if not g or g["wall"] <= 0:
            return "no search session of level %d on %s in the store" % (lv, gpu or "any GPU")
        ids = list(g["kern"])
        ph, nref, runs, later, seen = {}, 0, 0, 0, set()
        rows = []
        for i in range(0, len(ids), 500):
            chunk = ids[i:i + 500]
            rows += q("SELECT problem_id, created_at, env FROM evals WHERE id IN (%s)" %
                      ",".join("?" * len(chunk)), *chunk)
        for r in sorted(rows, key=lambda r: r["created_at"]):
            try:
                env = json.loads(r["env"] or "{}")
            except ValueError:
                continue
            for k, v in (env.get("phases_ms") or {}).items():
                if isinstance(v, (int, float)):
                    ph[k] = ph.get(k, 0.0) + v
            n = env.get("refs_run") or 0
            n = n if isinstance(n, int) else 0
            nref += n > 0
            runs += n
            # a problem's later evaluations find its references kept, unless
            # the worker evicted them (or is a new one)
            later += n if r["problem_id"] in seen else 0
            seen.add(r["problem_id"])
        kern = sum(v[0] for v in g["kern"].values()) / 1000.0
        work = sum(ph.values()) / 1000.0
        if not ph:
            return ("of %.0f s of search wall time, the kernels ran %.0f s; the store's "
                    "evaluations record no phase times" % (g["wall"], kern))
        sec = lambda k: ph.get(k, 0.0) / 1000.0  # noqa: E731
        return ("of %.0f s of search wall time, the worker's %d evaluations took %.0f s: "
                "reference runs %.0f s (%d runs, in %d evaluations; %d of the runs in a problem's "
                "later evaluations: references the worker had evicted, or a restarted worker's), checks %.0f s, timed trials "
                "%.0f s; the candidates' checked and timed launches themselves ran %.0f s of "
                "that (the GPU busy time; the rest is output fills, L2 flushes and fresh input "
                "sets around them); %.0f s went outside the worker (compiles and proposals the "
                "GPU waited for)" %
                (g["wall"], len(ids), work, sec("refs"), runs, nref, later,
                 sec("checks") + sec("post_checks"), sec("timing"), kern, max(0.0, g["wall"] - work)))
    if not view:
        return "no kernels timed on %s for level %d in the store" % (gpu or "a GPU", lv)
    if kind == "correct":
        miss = sorted((p for p in counted if p not in best), key=short)
        # problems the search solved that this GPU has not verified yet
        unver = [p for p in miss if view[1] == "verified" and sview and p in sview[2]]
        none = [p for p in miss if p not in unver]
        out = []
        if unver:
            out.append("%d with a correct kernel in the search, not yet verified on this GPU (%s)" %
                       (len(unver), listed([short(p) for p in unver])))
        if none:
            out.append("%d with no correct kernel (none passed the search's checks, or those that "
                       "did failed their verification) (%s)" % (len(none), listed([short(p) for p in none])))
        return "; ".join(out)
    variant = "compile" if kind == "compile_geomean" else "eager"
    sp = speedups(best, gpu, variant)
    below = sorted(((s, p) for p, s in sp.items() if s <= 1.0), reverse=True)
    if kind == "compile_geomean":
        return "%d of %d problems at or below torch.compile (%s)" % (
            len(below), len(sp), listed(["%s %sx" % (short(p), fmt(s)) for s, p in sorted(below)]))
    kinds = {}
    for s, p in below:
        t, kh = best[p]
        k = why_of(p, gpu, kh, t, t * s)[4]
        kinds.setdefault(k, []).append("%s %sx" % (short(p), fmt(s)))
    label = {"floor": "at the roofline floor with eager", "tf32": "where eager runs past the fp32 "
             "roofline (TF32 tensor cores; the kernels keep fp32 accuracy)",
             "gap": "with a gap to the floor", "none": "with no roofline in the store"}
    parts = ["%d %s (%s)" % (len(v), label[k], listed(sorted(v))) for k, v in
             sorted(kinds.items(), key=lambda kv: ["tf32", "gap", "floor", "none"].index(kv[0]))]
    head_ = "%d of %d problems at or below eager: %s" % (len(below), len(sp), "; ".join(parts))
    if kind == "eager_geomean" and below:
        lifted = math.exp(sum(math.log(max(s, 1.0)) for s in sp.values()) / len(sp))
        head_ += ". At eager's time, those %d would put the geomean at %sx" % (len(below), fmt(lifted))
    return head_


def tail(w, a):
    if a.notes:
        w(open(a.notes).read().strip() + "\n")
    if a.cross_gpu:
        w("## Cross-GPU: best verified kernel per problem (`kforge report --gpus`)\n")
        w("Speedup against PyTorch eager on each GPU; \"-\": not verified there.\n")
        w(open(a.cross_gpu).read().strip() + "\n")
    if a.tarball:
        h = hashlib.sha256()
        with open(a.tarball, "rb") as f:
            for chunk in iter(lambda: f.read(1 << 20), b""):
                h.update(chunk)
        w("## Dataset tarball\n")
        w("- `%s`: %d bytes, SHA-256 `%s`" % (os.path.basename(a.tarball),
                                              os.path.getsize(a.tarball), h.hexdigest()))
        # The tarball names the kforge that packed it (provenance.json), so the same bytes
        # come from that kforge only.
        try:
            prov = json.loads(tar_member(a.tarball, "provenance.json", a.kforge))
            by = prov.get("packed_by", "").split()[-1]
        except (subprocess.CalledProcessError, ValueError, IndexError, OSError) as e:
            print("results_md: no packing kforge from %s's provenance.json: %s" % (a.tarball, e),
                  file=sys.stderr)
            by = ""
        if by:
            w("- packed by kforge `%s` (`provenance.json` records it, so only that kforge gives "
              "these bytes): `git worktree add /tmp/kf %s && make -C /tmp/kf kforge && "
              "/tmp/kf/build/kforge --db merged.db pack%s --version %s -o dist`"
              % (by, by.replace("-dirty", ""), pack_name_opt(a.tarball, a.version), a.version))
        w("")
    if a.screens:
        w("## Site\n")
        w("![index](%s/index.png)\n" % a.screens)
        w("![a problem page](%s/problem.png)\n" % a.screens)
    if a.commands:
        w("## Reproduce\n")
        w("```sh\n%s\n```\n" % open(a.commands).read().strip())


if __name__ == "__main__":
    sys.exit(main())
