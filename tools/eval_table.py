#!/usr/bin/env python3
"""Markdown table of kfeval results (JSON lines) of level-2 kernels against
PyTorch baselines (KernelBench's JSON layout), with geomeans and fast_1.

    eval_table.py RESULTS.jsonl EAGER.json [NOTF32.json] [--compile COMPILE.json] [--level 2]
                  [--label t=tensor-core --label f=fp32]

Each line's "file" ends in -<label>.cu (gpuwork/l2/<problem>-t.cu); the best
correct median per problem counts. Speedup = baseline mean / kernel median."""
import argparse
import json
import math
import os
import re


def geomean(a):
    return math.exp(sum(math.log(x) for x in a) / len(a)) if a else float("nan")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("results")
    ap.add_argument("eager")
    ap.add_argument("notf32", nargs="?")
    ap.add_argument("--compile", help="torch.compile baselines: a best-vs-compile column and geomean")
    ap.add_argument("--level", type=int, default=2)
    ap.add_argument("--label", action="append", default=[], help="x=name: the -x.cu files' variant name")
    a = ap.parse_args()
    names = dict(l.split("=", 1) for l in a.label)
    lv = "level%d" % a.level
    eager = json.load(open(a.eager))[lv]
    notf = json.load(open(a.notf32))[lv] if a.notf32 else {}
    comp = json.load(open(a.compile)).get(lv, {}) if a.compile else {}
    by_num = {int(k.split("_")[0]): k for k in eager}
    per = {}
    for line in open(a.results):
        r = json.loads(line)
        m = re.search(r"-(\w+)\.cu$", r.get("file", ""))
        var = m.group(1) if m else "?"
        num = int(r["problem"].split("/")[1][:3])
        per.setdefault(num, {})[var] = r
    variants = sorted({v for d in per.values() for v in d})
    head = ["#", "problem", "eager ms"] + (["notf32 ms"] if notf else []) + \
        ["%s ms" % names.get(v, v) for v in variants] + ["best vs eager"] + \
        (["best vs notf32"] if notf else []) + (["best vs compile"] if comp else [])
    print("| " + " | ".join(head) + " |")
    print("|" + "---:|" * 2 + "---:|" * (len(head) - 2))
    sp = {v: [] for v in variants}
    best, bestn, bestc, correct = [], [], [], 0
    for num in sorted(per):
        k = by_num.get(num)
        e = eager[k]["mean"] if k else None
        n = notf.get(k, {}).get("mean") if k else None
        c = comp.get(k, {}).get("mean") if k else None
        cells, ms_best = [], None
        for v in variants:
            r = per[num].get(v)
            if r and r.get("status") == "correct" and r.get("time_median_ms"):
                ms = r["time_median_ms"]
                cells.append("%.3f" % ms)
                ms_best = ms if ms_best is None else min(ms_best, ms)
                if e:
                    sp[v].append(e / ms)
            else:
                cells.append(r.get("status", "—") if r else "—")
        if ms_best:
            correct += 1
            if e:
                best.append(e / ms_best)
            if n:
                bestn.append(n / ms_best)
            if c:
                bestc.append(c / ms_best)
        row = [str(num), os.path.splitext(k or "?")[0].split("_", 1)[-1], "%.3f" % e if e else "—"]
        if notf:
            row.append("%.3f" % n if n else "—")
        row += cells + ["%.2fx" % (e / ms_best) if e and ms_best else "—"]
        if notf:
            row.append("%.2fx" % (n / ms_best) if n and ms_best else "—")
        if comp:
            row.append("%.2fx" % (c / ms_best) if c and ms_best else "—")
        print("| " + " | ".join(row) + " |")
    print()
    print("Problems with a correct kernel: %d of %d." % (correct, len(per)))
    for v in variants:
        print("%s: %d correct, geomean %.3fx eager, fast_1 %d%%" % (
            names.get(v, v), len(sp[v]), geomean(sp[v]), round(100 * sum(s > 1 for s in sp[v]) / len(per))))
    print("best per problem: geomean %.3fx eager, fast_1 %d%% (of %d)" % (
        geomean(best), round(100 * sum(s > 1 for s in best) / len(per)), len(per)))
    if notf:
        print("best per problem vs eager with TF32 off: geomean %.3fx, fast_1 %d%%" % (
            geomean(bestn), round(100 * sum(s > 1 for s in bestn) / len(per))))
    if comp:
        print("best per problem vs torch.compile: geomean %.3fx, fast_1 %d%% (%d with a compile time)" % (
            geomean(bestc), round(100 * sum(s > 1 for s in bestc) / len(per)), len(bestc)))


if __name__ == "__main__":
    main()
