#!/usr/bin/env python3
"""Compares measured PyTorch baselines with KernelBench's published ones: a
Markdown table per problem of eager, eager_notf32 and torch.compile means
(tools/torch_baseline.py's files) against KernelBench's H100_Modal numbers,
as ratios measured / KernelBench, with geometric means. No torch needed.

    compare_baselines.py MEASURED_DIR --kernelbench DIR [--prefix H100_Modal_]
                         [--level 2] [-o OUT.md]

MEASURED_DIR holds baseline_time_torch.json, baseline_time_torch_notf32.json
and baseline_time_torch_compile_inductor_default.json (any may be missing);
DIR (KernelBench's files, an input) holds PREFIX + the eager and compile
names. A ratio over 1: the measurement is slower than
KernelBench's. notf32/eager: what turning TF32 off costs here."""
import argparse
import json
import math
import os
import re
import sys

FILES = {"eager": "baseline_time_torch.json",
         "eager_notf32": "baseline_time_torch_notf32.json",
         "compile": "baseline_time_torch_compile_inductor_default.json"}
MAX_BYTES = 64 << 20


def load(path, level):
    """{kernelbench file: mean ms} of one level, {} when the file is absent."""
    if not os.path.exists(path):
        return {}
    if os.path.getsize(path) > MAX_BYTES:
        raise ValueError("%s: over %d bytes" % (path, MAX_BYTES))
    with open(path) as f:
        try:
            doc = json.load(f)
        except ValueError as e:
            raise ValueError("%s: %s" % (path, e))
    lv = doc.get("level%d" % level, {}) if isinstance(doc, dict) else {}
    out = {}
    for k, v in (lv.items() if isinstance(lv, dict) else []):
        m = v.get("mean") if isinstance(v, dict) else None
        if isinstance(m, (int, float)) and not isinstance(m, bool) and m > 0 and math.isfinite(m):
            out[k] = float(m)
    return out


def number(key):
    m = re.match(r"(\d+)_", key)
    return int(m.group(1)) if m else 1 << 30


def geomean(xs):
    xs = [x for x in xs if x and x > 0]
    return math.exp(sum(math.log(x) for x in xs) / len(xs)) if xs else None


def fmt_ms(x):
    return "—" if x is None else "%.4g" % x


def fmt_ratio(x):
    return "—" if x is None else "%.3f" % x


def ratio(a, b):
    return a / b if a is not None and b is not None else None


def table(meas, kb):
    """The Markdown lines: meas and kb are {variant: {file: ms}}."""
    keys = sorted(set().union(*meas.values(), *kb.values()), key=lambda k: (number(k), k))
    cols = [("eager/KB", lambda r: ratio(r["eager"], r["kb_eager"])),
            ("notf32/KB", lambda r: ratio(r["eager_notf32"], r["kb_eager"])),
            ("notf32/eager", lambda r: ratio(r["eager_notf32"], r["eager"])),
            ("compile/KB", lambda r: ratio(r["compile"], r["kb_compile"])),
            ("compile/eager", lambda r: ratio(r["compile"], r["eager"]))]
    lines = ["| # | problem | eager ms | notf32 ms | compile ms | KB eager ms | KB compile ms | " +
             " | ".join(c for c, _ in cols) + " |",
             "|---:|---|" + "---:|" * (5 + len(cols))]
    per_col = [[] for _ in cols]
    for k in keys:
        r = {v: meas[v].get(k) for v in FILES}
        r["kb_eager"], r["kb_compile"] = kb["eager"].get(k), kb["compile"].get(k)
        cells = []
        for i, (_, f) in enumerate(cols):
            x = f(r)
            if x is not None:
                per_col[i].append(x)
            cells.append(fmt_ratio(x))
        name = re.sub(r"^\d+_", "", k[:-3] if k.endswith(".py") else k)
        lines.append("| %s | %s | %s | %s | %s | %s | %s | %s |" % (
            number(k) if number(k) < 1 << 30 else "", name, fmt_ms(r["eager"]), fmt_ms(r["eager_notf32"]),
            fmt_ms(r["compile"]), fmt_ms(r["kb_eager"]), fmt_ms(r["kb_compile"]), " | ".join(cells)))
    lines.append("| | **geomean** (problems) | | | | | | " +
                 " | ".join("**%s** (%d)" % (fmt_ratio(geomean(xs)), len(xs)) for xs in per_col) + " |")
    return lines, len(keys)


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("measured", help="directory of the measured baseline_time_torch*.json")
    ap.add_argument("--kernelbench", required=True, help="directory of KernelBench's files (an input)")
    ap.add_argument("--prefix", default="H100_Modal_", help="file-name prefix of KernelBench's files")
    ap.add_argument("--level", type=int, default=2)
    ap.add_argument("-o", "--out", help="write the Markdown here (default: stdout)")
    args = ap.parse_args()
    try:
        meas = {v: load(os.path.join(args.measured, f), args.level) for v, f in FILES.items()}
        kb = {v: load(os.path.join(args.kernelbench, args.prefix + FILES[v]), args.level)
              for v in ("eager", "compile")}
    except (OSError, ValueError) as e:
        print("compare_baselines.py: %s" % e, file=sys.stderr)
        return 1
    if not any(meas.values()):
        print("compare_baselines.py: no level-%d baselines in %s" % (args.level, args.measured), file=sys.stderr)
        return 1
    rows, n = table(meas, kb)
    counts = ", ".join("%s %d" % (v, len(meas[v])) for v in FILES)
    head = ["# Level-%d PyTorch baselines against KernelBench's %s numbers" % (args.level, args.prefix.strip("_")),
            "",
            "Means in ms; ratios measured / KernelBench (over 1: slower here). Measured: %s (%s); "
            "KernelBench: eager %d, compile %d. Geomeans over the problems with both numbers."
            % (os.path.basename(os.path.normpath(args.measured)), counts, len(kb["eager"]), len(kb["compile"])),
            ""]
    text = "\n".join(head + rows) + "\n"
    if args.out:
        with open(args.out + ".tmp", "w") as f:
            f.write(text)
        os.replace(args.out + ".tmp", args.out)
    else:
        sys.stdout.write(text)
    print("compare_baselines.py: %d problems" % n, file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
