#!/bin/sh
# make bench (GPU): every level-1 reference evaluated as a candidate, twice,
# with one engine (the second evaluation is the steady state of a search:
# references kept, context warm). Per candidate: compile ms, harness
# overhead ms (wall - kernel time over all its runs, as the worker measures
# it), kernel mean ms; then totals and medians.
#   BENCH_PROBLEMS="019 023" tests/bench.sh     a subset
#   BENCH_TIMEOUT=300                          stop after so many seconds (partial table)
#   BENCH_SLOW_MS=20                           no second evaluation above this kernel time
#   BENCH_MAX_TIMING_S=3                       timed trials stop after this much kernel time (>= 10)
#   BENCH_KEEP_DB=FILE                         keep the bench's store there (per-eval env, phases)
set -u
ROOT=$(cd "$(dirname "$0")/.." && pwd)
BUILD=${BUILD:-build}
KFORGE=${KFORGE:-$ROOT/$BUILD/kforge}
KFEVAL=${KFEVAL:-$ROOT/$BUILD/tests/kfeval}
export KFORGE_ROOT=${KFORGE_ROOT:-$ROOT}
if ! "$KFORGE" gpu-info >/dev/null 2>&1; then
	echo "bench: $("$KFORGE" gpu-info 2>&1 | head -n 1)"
	exit 3
fi
[ -x "$KFEVAL" ] || { echo "bench: $KFEVAL missing (make test-build)"; exit 1; }
TMP=$(mktemp -d "${TMPDIR:-/tmp}/kforge-bench.XXXXXX")
trap 'rm -rf "$TMP"' EXIT
set --
for d in "$ROOT"/problems/level1/*/; do
	n=$(basename "$d"); n=${n%%_*}
	if [ -n "${BENCH_PROBLEMS:-}" ]; then
		case " $BENCH_PROBLEMS " in *" $n "*) ;; *) continue ;; esac
	fi
	d=${d%/}
	[ -f "$d/reference.cu" ] && set -- "$@" "$n" "$d/reference.cu"
done
timeout "${BENCH_TIMEOUT:-0}" "$KFEVAL" --kforge "$KFORGE" --db "$TMP/bench.db" --force --repeat 2 --max-kernel-ms "${BENCH_SLOW_MS:-20}" --max-timing-s "${BENCH_MAX_TIMING_S:-3}" "$@" >"$TMP/res.jsonl" 2>"$TMP/err"
rc=$?
[ -n "${BENCH_KEEP_DB:-}" ] && cp "$TMP/bench.db" "$BENCH_KEEP_DB"
python3 - "$TMP/res.jsonl" <<'PY'
import json, statistics, sys
rows = [json.loads(l) for l in open(sys.argv[1]) if l.strip()]
first, second, seen = [], [], {}
print("%-44s %-9s %9s %10s %10s %11s %11s" % ("problem (reference as candidate)", "status", "compile", "harness1", "harness2", "kernel ms", "cupti ms"))
for r in rows:
    k = r.get("file")
    if "engine_error" in r:
        print("%-44s engine error: %s" % (r["problem"], r["engine_error"][:80])); continue
    (second if k in seen else first).append(r)
    seen.setdefault(k, []).append(r)
for k, rs in seen.items():
    a = rs[0]; b = rs[1] if len(rs) > 1 else {}
    name = k.split("/")[-2]
    print("%-44s %-9s %9.1f %10.1f %10s %11.4f %11.4f" % (name[:44], a["status"], a["compile_ms"] or 0, a["harness_ms"] or 0,
          "%.1f" % b["harness_ms"] if b.get("harness_ms") else "-", a["time_mean_ms"] or 0, a.get("cupti_mean_ms") or 0))
    if a["status"] != "correct":
        print("    %s" % (a.get("detail") or "")[:300].replace("\n", " "))
def med(rs, key):
    v = [r[key] for r in rs if r.get(key) is not None]
    return (statistics.median(v), sum(v), len(v)) if v else (0, 0, 0)
allh = [ (rs[1] if len(rs) > 1 else rs[0]) for rs in seen.values() ]
for label, rs in (("first evaluation (computes references)", first), ("steady state (second evaluation)", second),
                  ("per problem (second evaluation where made, else first)", allh)):
    c, ct, n = med(rs, "compile_ms"); h, ht, _ = med(rs, "harness_ms"); w, wt, _ = med(rs, "wall_ms")
    print("%s: %d candidates; compile median %.1f ms (total %.0f); harness overhead median %.1f ms (total %.0f); wall median %.1f ms (total %.0f)" % (label, n, c, ct, h, ht, w, wt))
    ph = [r["phases_ms"] for r in rs if r.get("phases_ms")]
    if ph:
        print("  worker phases, median ms (kernel time included in checks/timing): " +
              ", ".join("%s %.1f" % (k, statistics.median(p.get(k, 0) for p in ph)) for k in ph[0]))
print("correct: %d of %d" % (sum(1 for r in first if r["status"] == "correct"), len(first)))
PY
tail -n 5 "$TMP/err"
exit $rc
