#!/bin/sh
# The search's timing budgets on the GPU. With an eager baseline far below
# the kernel's time, a candidate stops its timed trials after 3 (the 4th,
# already queued, is recorded too; env.pruned says why), is still checked
# for correctness, and every timed trial's outputs are compared (ReLU's
# output is 6 GB): a kernel that counts launches to go lazy once timed
# cannot count them (its variables are restored before every launch block). With --prune-vs-eager 0 --max-timing 0 a
# candidate is timed in full (100 trials, every one compared).
. "$KF_ROOT/tests/lib.sh"
export KFORGE_ROOT="$KF_ROOT"
gpu=$("$KFORGE" gpu-info --json | python3 -c 'import json,sys; print(json.load(sys.stdin)[0]["name"])')
cat >eager.json <<'JSON'
{"level1": {"19_ReLU.py": {"mean": 0.0001, "std": 0.0, "num_trials": 100}}}
JSON
expect_exit 0 "a tiny eager baseline for ReLU on $gpu" "$KFORGE" baselines import eager.json --gpu "$gpu" --variant eager
expect_exit 0 "round 0 of ReLU with the default budgets" "$KFORGE" search --problems 19 --proposer builtin --rounds 0
expect_exit 0 "again without pruning or a time budget" "$KFORGE" search --problems 19 --proposer builtin --rounds 0 --prune-vs-eager 0 --max-timing 0
cat >q.py <<'PY'
import json, sqlite3, sys
db = sqlite3.connect(sys.argv[1])
rows = db.execute("select id, status, n_trials, env, protocol_params from evals order by created_at").fetchall()
print("# evals:", [(r[1], r[2]) for r in rows])
assert len(rows) == 2, rows
(pid, st, n, env, proto), (fid, st2, n2, env2, proto2) = rows
env, env2, proto, proto2 = json.loads(env), json.loads(env2), json.loads(proto), json.loads(proto2)
what = sys.argv[2]
if what == "pruned":
    p = env.get("pruned") or {}
    print("# pruned:", p)
    assert st == "correct" and n == 4 and proto.get("prune_vs_eager") == 3 and proto.get("max_timing_s") == 1
    assert p.get("decided_after") == 3 and p.get("mean_ms") > 3e-4 and abs(p.get("limit_ms") - 3e-4) < 1e-12
elif what == "last_checked":
    t = db.execute("select idx, ok, max_abs_err from eval_trials where eval_id=? and kind='time' order by idx", (pid,)).fetchall()
    print("# timed trials:", t)
    assert len(t) == 4 and all(x[1] == 1 and x[2] is not None for x in t)
elif what == "full":
    assert st2 == "correct" and n2 == 100 and "pruned" not in env2
    t = db.execute("select count(*) from eval_trials where eval_id=? and kind='time' and ok=1 and max_abs_err is not null", (fid,)).fetchone()[0]
    assert t == 100, t
    assert "prune_vs_eager" not in proto2 and "max_timing_s" not in proto2
PY
check "pruned after 3 timed trials (4 recorded), correct" python3 q.py "$KFORGE_DB" pruned
check "each of those trials had its outputs compared" python3 q.py "$KFORGE_DB" last_checked
check "without budgets: 100 timed trials, every one compared, nothing pruned" python3 q.py "$KFORGE_DB" full
# A kernel that counts its launches to go lazy once timed cannot count
# them: module variables are restored before every launch block (issue 37),
# so it does the work on every launch, pruned or not.
for i in 1 2 3; do
	"$KFORGE" eval 19 "$KF_ROOT/tests/candidates/adversarial/16_lazy_after_warmup.cu" --force --json \
		--prune-vs-eager 3 >lazy$i.json 2>lazy.err
	check "pruned, a kernel that counts its launches never goes lazy (run $i)" python3 - "$KFORGE_DB" lazy$i.json <<'PY'
import json, sqlite3, sys
d = json.load(open(sys.argv[2])); print('#', d['status'], d.get('failed_check'))
env = json.loads(sqlite3.connect(sys.argv[1]).execute(
    "select env from evals where id = ?", (d['eval_id'],)).fetchone()[0])
print('# globals_restored', env.get('globals_restored'))
sys.exit(0 if d['status'] == 'correct' and env.get('globals_restored', {}).get('n', 0) >= 1 else 1)
PY
done
