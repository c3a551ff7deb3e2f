#!/bin/sh
# A/B throughput of two kforge builds on one GPU host: the same search into
# a fresh store with each, one after the other, then per run the wall time,
# evaluations per minute, GPU busy fraction (kernel time of the check and
# timed runs over the wall time) and the reference work (refs phase).
#   tests/tools/keep_bench.sh OLD_KFORGE NEW_KFORGE OUTDIR
# PROBS and SEARCH_ARGS as in gpu_session.sh.
set -u
old=$1 new=$2 out=$3
PROBS=${PROBS:-1,7,13,19,25,31,37,43,49,55,61,67,73,79,85,91,97}
SEARCH_ARGS=${SEARCH_ARGS:---rounds 1 --ideas 4 --impls 2 --seed 1 --jobs 4}
mkdir -p "$out"
for run in old new; do
	eval k=\$$run
	rm -f "$out/$run.db"
	t0=$(date +%s%N)
	# shellcheck disable=SC2086
	timeout "${T_RUN:-280}" "$k" --db "$out/$run.db" search --problems "$PROBS" --proposer builtin \
		$SEARCH_ARGS >"$out/$run.log" 2>&1
	rc=$?
	wall=$(awk -v a="$t0" -v b="$(date +%s%N)" 'BEGIN { printf "%.1f", (b - a) / 1e9 }')
	echo "$run: $("$k" --version | head -n 1), exit $rc, wall $wall s"
	python3 - "$out/$run.db" "$wall" <<'PY'
import json, sqlite3, sys
db = sqlite3.connect(sys.argv[1]); wall = float(sys.argv[2])
ev = db.execute("select env, status from evals where protocol LIKE 'collect-%'").fetchall()
kern = db.execute("select coalesce(sum(t.time_ms), 0) from eval_trials t join evals e on e.id = t.eval_id "
                  "where e.protocol LIKE 'collect-%'").fetchone()[0] / 1000.0
refs = sum((json.loads(e or "{}").get("phases_ms") or {}).get("refs", 0) for e, _ in ev) / 1000.0
nref = sum((json.loads(e or "{}").get("phases_ms") or {}).get("refs", 0) >= 1.0 for e, _ in ev)
ok = sum(s == "correct" for _, s in ev)
print("  evaluations %d (%d correct), %.1f per minute; kernel time %.1f s, GPU busy %.1f%%; "
      "refs phase %.1f s in %d evaluations" % (len(ev), ok, len(ev) / wall * 60, kern,
                                              100 * kern / wall, refs, nref))
PY
done
