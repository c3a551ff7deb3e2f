#!/bin/sh
# Reference outputs kept for several problems at once. A search with three
# problems in flight and no affinity (KFORGE_AFFINITY_STREAK=0: first come,
# first served) makes the worker switch problems again and again; each
# (problem, seed) reference is still computed once (env.refs_run), and
# every kernel is judged against its own problem's references (a keep
# matched to the wrong problem fails the comparison: the shapes differ).
. "$KF_ROOT/tests/lib.sh"
export KFORGE_ROOT="$KF_ROOT"
export KFORGE_AFFINITY_STREAK=0
expect_exit 0 "a short search of three matmul problems, 3 jobs, no affinity" \
	"$KFORGE" search --problems 10,14,16 --proposer builtin --rounds 1 --ideas 4 --impls 2 --seed 1 --jobs 3
cat >q.py <<'PY'
import json, sqlite3, sys
db = sqlite3.connect(sys.argv[1])
rows = db.execute("select problem_id, status, env, protocol_params from evals order by created_at").fetchall()
per, loads = {}, 0
for p, st, env, proto in rows:
    e, pr = json.loads(env), json.loads(proto)
    # the alive draw applies to recurrent models only (docs/engine.md): not these
    seeds = pr["check_trials"] + pr.get("extra_trials", 0) * len([d for d in pr.get("dists", []) if d != "alive"])
    # fresh input sets of the timed phase (collect-v3) get their own
    # reference in every evaluation: not kept, never a check seed's
    fresh = len((e.get("timed_sets") or {}).get("fresh") or [])
    per.setdefault(p, []).append((st, e.get("refs_run") - fresh, seeds, fresh))
    loads += e.get("problem_loaded") is True
print("# %d evaluations of %d problems, %d of them loaded their problem" % (len(rows), len(per), loads))
for p, v in sorted(per.items()):
    print("#", p, "statuses", sorted(set(x[0] for x in v)), "check refs run", [x[1] for x in v],
          "fresh", [x[3] for x in v])
what = sys.argv[2]
if what == "switched":
    assert len(per) == 3 and loads > len(per) + 3
elif what == "correct":
    assert all(x[0] == "correct" for v in per.values() for x in v) and len(rows) >= 15
elif what == "once":
    assert all(sum(x[1] for x in v) == v[0][2] for v in per.values())
    assert all(x[3] >= 1 for v in per.values() for x in v)
PY
check "the problems alternated on the worker (over 6 problem loads for 3 problems)" python3 q.py "$KFORGE_DB" switched
check "every kernel correct against its own problem's references" python3 q.py "$KFORGE_DB" correct
check "each problem's references computed once per check seed (and fresh sets' every time)" python3 q.py "$KFORGE_DB" once
