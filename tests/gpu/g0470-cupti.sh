#!/bin/sh
# CUPTI's kernel durations in a search: one worker loads and unloads many
# modules, and CUPTI may then report a kernel under the name of an earlier
# module's (on the H100 a quarter of a search's evaluations lost their CUPTI
# timing to it while records were matched by name). Records are matched by
# launch configuration: every correct evaluation keeps its CUPTI timing.
. "$KF_ROOT/tests/lib.sh"
export KFORGE_ROOT="$KF_ROOT"
expect_exit 0 "a short search of five elementwise and pooling problems, 4 jobs" \
	"$KFORGE" search --problems 25,29,44,45,46 --proposer builtin --rounds 2 --ideas 4 --impls 2 --seed 1 --jobs 4
cat >q.py <<'PY'
import json, sqlite3, sys
db = sqlite3.connect(sys.argv[1])
rows = db.execute("select problem_id, cupti_mean_ms, env from evals where status='correct'").fetchall()
miss = [(p, json.loads(e).get("cupti_note"), json.loads(e).get("cupti_diag")) for p, c, e in rows if c is None]
renamed = sum(json.loads(e).get("cupti_renamed", 0) > 0 for p, c, e in rows)
print("# %d correct evaluations, %d without CUPTI timing, %d with records CUPTI misnamed" % (len(rows), len(miss), renamed))
for m in miss[:5]:
    print("#", m)
assert len(rows) >= 40 and not miss
PY
check "every correct evaluation has its CUPTI timing" python3 q.py "$KFORGE_DB"
