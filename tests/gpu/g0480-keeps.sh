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
per, loads, pairs = {}, 0, {}
for p, st, env, proto in rows:
    e, pr = json.loads(env), json.loads(proto)
    # the alive draw applies to recurrent models only (docs/engine.md): not these
    seeds = pr["check_trials"] + pr.get("extra_trials", 0) * len([d for d in pr.get("dists", []) if d != "alive"])
    # fresh input sets of the timed phase (collect-v3): seeds secret to the
    # worker and the same for every evaluation of a problem there, so each
    # (seed, distribution) gets its reference once, in the first evaluation
    # that draws it
    fr = (e.get("timed_sets") or {}).get("fresh") or []
    pairs.setdefault(p, set()).update((x["seed"], x["dist"]) for x in fr)
    per.setdefault(p, []).append((st, e.get("refs_run"), seeds, len(fr)))
    loads += e.get("problem_loaded") is True
print("# %d evaluations of %d problems, %d of them loaded their problem" % (len(rows), len(per), loads))
for p, v in sorted(per.items()):
    print("#", p, "statuses", sorted(set(x[0] for x in v)), "refs run", [x[1] for x in v],
          "fresh", [x[3] for x in v], "distinct fresh sets", len(pairs[p]))
what = sys.argv[2]
if what == "switched":
    assert len(per) == 3 and loads > len(per) + 3
elif what == "correct":
    assert all(x[0] == "correct" for v in per.values() for x in v) and len(rows) >= 15
elif what == "once":
    assert all(sum(x[1] for x in v) == v[0][2] + len(pairs[p]) for p, v in per.items())
    assert all(x[3] >= 1 for v in per.values() for x in v)
elif what == "reused":
    assert all(len(pairs[p]) < sum(x[3] for x in v) for p, v in per.items())
PY
check "the problems alternated on the worker (over 6 problem loads for 3 problems)" python3 q.py "$KFORGE_DB" switched
check "every kernel correct against its own problem's references" python3 q.py "$KFORGE_DB" correct
check "each problem's references computed once per check seed and fresh set" python3 q.py "$KFORGE_DB" once
check "the fresh sets' references served later evaluations of the problem" python3 q.py "$KFORGE_DB" reused
