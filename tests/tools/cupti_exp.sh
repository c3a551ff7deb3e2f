#!/bin/sh
# CUPTI records on the GPU: kforge ($KX, default the bundle's) re-verifies 40-62 on a copy
# of the store (one worker) and runs a 4-job search of 20 problems in a fresh store.
set -u
ROOT=$(cd "$(dirname "$0")/../.." && pwd); cd "$ROOT" || exit 1
R=${OUT:-/tmp}/cupti; mkdir -p "$R"
[ -d gpu-bundle ] || tar -xJf build-gpu/bundle.tar.xz
export LD_LIBRARY_PATH="$ROOT/gpu-bundle/lib" KFORGE_ROOT="$ROOT"
K=${KX:-$ROOT/gpu-bundle/kforge}
cp build-gpu/kforge.db /tmp/v.db
python3 - /tmp/v.db <<'PY'
import sqlite3, sys
db = sqlite3.connect(sys.argv[1])
ids = [r[0] for r in db.execute("select id from evals where protocol='verify-v1' and cast(substr(problem_id,8,3) as int) between 40 and 62")]
db.execute("delete from verifications where cast(substr(problem_id,8,3) as int) between 40 and 62")
for i in ids:
    db.execute("delete from eval_trials where eval_id=?", (i,))
    db.execute("delete from evals where id=?", (i,))
db.commit(); print("deleted", len(ids))
PY
s0=$(date +%s)
timeout "${T_V:-150}" "$K" --db /tmp/v.db verify --top 1 --problems "$(seq -s, 40 62)" --no-category --no-sanitizer --max-timing 1 >"$R/verify.txt" 2>&1
echo "verify: exit $? in $(($(date +%s) - s0)) s" | tee -a "$R/steps.txt"
s0=$(date +%s)
timeout "${T_S:-170}" "$K" --db /tmp/s.db search --problems "$(seq -s, 20 29),$(seq -s, 44 53)" --proposer builtin \
  --rounds 2 --ideas 4 --impls 2 --seed 1 --jobs 4 >"$R/search.txt" 2>&1
echo "search: exit $? in $(($(date +%s) - s0)) s" | tee -a "$R/steps.txt"
python3 - /tmp/v.db /tmp/s.db >"$R/summary.txt" <<'PY'
import sqlite3, sys, json, collections
for path, proto in ((sys.argv[1], 'verify-v1'), (sys.argv[2], 'collect-v1')):
    db = sqlite3.connect(path)
    rows = db.execute("select problem_id, created_at, cupti_mean_ms is null, env from evals where protocol=? and status='correct' order by created_at", (proto,)).fetchall()
    c = collections.Counter()
    for pid, at, miss, env in rows:
        e = json.loads(env or '{}')
        late = e.get('cupti_late')
        c['evals'] += 1; c['missing'] += miss
        if late: c['late_sync_evals'] += late.get('after_sync', 0) > 0; c['late_wait_evals'] += late.get('after_wait', 0) > 0
        print(proto, pid[7:10], at[11:19], 'X' if miss else '.', e.get('cupti_note', ''), json.dumps(late) if late else '', json.dumps(e.get('cupti_diag')) if e.get('cupti_diag') else '')
    print(path, dict(c))
PY
xz -T16 -3 -c /tmp/s.db >"$R/s.db.xz"; xz -T16 -3 -c /tmp/v.db >"$R/v.db.xz"
tail -3 "$R/summary.txt"
