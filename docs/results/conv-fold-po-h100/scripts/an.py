#!/usr/bin/env python3
"""Tables of docs/results/conv-fold-po-h100/README.md from its kfeval files:
  an.py family FILE   level-1 conv family: best tagged kernel per problem vs H100 eager
  an.py ab FILE A B   two tags of the same problems (A/B), geomeans vs H100 eager"""
import collections, json, math, sys

BASE = "problems/baselines/NVIDIA_H100_80GB_HBM3/baseline_time_torch.json"


def eager(level):
    b = json.load(open(BASE))["level%d" % level]
    return {int(k.split("_")[0]): v["median"] for k, v in b.items()}


def load(f):
    res = collections.defaultdict(dict)
    for l in open(f):
        r = json.loads(l)
        lvl, name = r["problem"].split("/")
        tag = r["file"].rsplit("-", 1)[1][:-3]
        res[(int(lvl[5:]), int(name[:3]), name)][tag] = (r["status"], r.get("time_median_ms"))
    return res


def family(f):
    e, res, logs = eager(1), load(f), []
    print("| # | problem | eager ms | " + " | ".join(["v ms", "w ms", "o2 ms"]) + " | best | vs eager |")
    print("|---:|---|---:|---:|---:|---:|---|---:|")
    for (lvl, p, name), tags in sorted(res.items()):
        ok = {t: v[1] for t, v in tags.items() if v[0] == "correct"}
        best = min(ok, key=ok.get)
        sp = e[p] / ok[best]
        logs.append(math.log(sp))
        cell = lambda t: ("%.3f" % ok[t]) if t in ok else (tags[t][0] if t in tags else "")
        print("| %03d | %s | %.3f | %s | %s | %s | %s | %.2fx |" % (
            p, name[4:40], e[p], cell("v"), cell("w"), cell("o2"), best, sp))
    print("\n%d problems, geomean %.3fx eager, %d faster than eager" % (
        len(logs), math.exp(sum(logs) / len(logs)), sum(1 for x in logs if x > 0)))


def ab(f, a, b):
    res = load(f)
    lvl = next(iter(res))[0]
    e, la, lb, r = eager(lvl), [], [], []
    for (lv, p, name), tags in sorted(res.items()):
        if tags.get(a, ("",))[0] != "correct" or tags.get(b, ("",))[0] != "correct":
            if a in tags or b in tags:
                print("# %03d: %s %s" % (p, tags.get(a), tags.get(b)))
            continue
        la.append(math.log(e[p] / tags[a][1]))
        lb.append(math.log(e[p] / tags[b][1]))
        r.append(tags[a][1] / tags[b][1])
    g = lambda v: math.exp(sum(v) / len(v))
    print("%d problems: %s %.3fx eager, %s %.3fx; %s over %s %.3fx (%.2f to %.2f)" % (
        len(r), a, g(la), b, g(lb), b, a, g([math.log(x) for x in r]), min(r), max(r)))


if __name__ == "__main__":
    if sys.argv[1] == "family":
        family(sys.argv[2])
    else:
        ab(sys.argv[2], sys.argv[3], sys.argv[4])
