#!/bin/sh
# Checked and timed launches cannot be told apart (collect-v3): the check
# seeds are secret and fresh for every engine (two evaluations of one
# kernel draw different ones, none of the public collect-v1 seeds), the
# search's checks include a normal and a wide-uniform draw (and the alive
# draw, which ReLU has no parameter for: skipped), every timed
# trial's outputs are compared, and an honest kernel is never under the
# speed-of-light floor that would reject it.
. "$KF_ROOT/tests/lib.sh"
A="$KF_ROOT/tests/candidates/adversarial"
for i in 1 2; do
	expect_exit 0 "eval $i of an honest ReLU" "$KFORGE" eval 19 "$A/20_honest_relu_vec4.cu" --force --json
	cp "$T_TMP/out" e$i.json
done
cat >q.py <<'PY'
import json, sqlite3, sys
db = sqlite3.connect(sys.argv[1])
what = sys.argv[2]
evals = [r[0] for r in db.execute("select id from evals where protocol = 'collect-v3'")]
assert len(evals) == 1, evals   # --force replaces the row: the second evaluation's
e = evals[0]
checks = [r for r in db.execute("select seed, ok from eval_trials where eval_id=? and kind='check' order by idx", (e,))]
timed = [r for r in db.execute("select seed, ok, max_abs_err from eval_trials where eval_id=? and kind='time'", (e,))]
print("# check seeds", [c[0] for c in checks], "timed trials", len(timed))
if what == "checks":
    assert len(checks) == 7 and all(c[1] == 1 for c in checks)
    assert not any(1000 <= c[0] < 1005 for c in checks)      # not collect-v1's public seeds
elif what == "timed":
    assert timed and all(t[1] == 1 and t[2] is not None for t in timed)
    # Timed inputs: replays of two check sets, one of another distribution,
    # and fresh sets no launch had seen (env.timed_sets), none a check's.
    env = json.loads(db.execute("select env from evals where id=?", (e,)).fetchone()[0])
    ts = env["timed_sets"]
    fresh = {f["seed"] for f in ts["fresh"]}
    print("# timed_sets", ts, env.get("fresh_note"))
    assert len(fresh) == 2 and not fresh & {c[0] for c in checks}, ts
    assert {t[0] for t in timed} <= {c[0] for c in checks} | fresh
    assert sum(1 for t in timed if t[0] in fresh) == 2
    assert len(ts["by_dist"]) == 2 and "0" in ts["by_dist"], ts
    assert 0.7 <= ts["replay_over_fresh"] <= 2.0, ts
elif what == "protocol":
    p = json.loads(db.execute("select protocol_params from evals where id=?", (e,)).fetchone()[0])
    assert p.get("seeds") == "secret" and "seed0" not in p and p["dists"] == ["normal", "uniform_wide", "alive"], p
    assert p.get("fresh_sets") == 2 and p.get("timed_mix") is True and p.get("version") == 3, p
PY
check "7 check trials (5 + normal + wide-uniform), none with a public seed" python3 q.py "$KFORGE_DB" checks
check "every timed trial's outputs compared, 2 on fresh sets, the rest replays of two distributions" python3 q.py "$KFORGE_DB" timed
check "the protocol says the seeds are secret (no seed0 in the key)" python3 q.py "$KFORGE_DB" protocol
# The second evaluation (--force) drew other seeds than the first.
n=$(python3 - "$KFORGE_DB" <<'PY'
import sqlite3, sys
db = sqlite3.connect(sys.argv[1])
print(db.execute("select count(distinct seed) from eval_trials where kind='check'").fetchone()[0])
PY
)
check "the stored evaluation's seeds are this engine's own ($n distinct)" test "$n" -eq 7
python3 - e1.json e2.json >seeds.txt <<'PY'
import json, sys
a, b = (json.load(open(f)) for f in sys.argv[1:3])
print(a["status"], b["status"], a["time_median_ms"], b["time_median_ms"], a["sol_ms"], a["time_min_ms"])
PY
read st1 st2 m1 m2 sol tmin <seeds.txt
check "both correct ($st1 $st2)" test "$st1 $st2" = "correct correct"
check "the honest kernel clears the speed-of-light floor ($tmin ms > $sol ms)" \
	python3 -c "import sys; sys.exit(0 if 0 < float('$sol') < float('$tmin') else 1)"
# Two engines, two draws: the trials of a fresh store differ from those of the first.
KFORGE_DB="$T_TMP/other.db" "$KFORGE" eval 19 "$A/20_honest_relu_vec4.cu" --json >o.json 2>/dev/null
check "another engine drew other secret seeds" python3 - "$KFORGE_DB" "$T_TMP/other.db" <<'PY'
import sqlite3, sys
s = [set(r[0] for r in sqlite3.connect(p).execute("select seed from eval_trials where kind='check'")) for p in sys.argv[1:3]]
print("#", sorted(s[0])[:3], sorted(s[1])[:3])
sys.exit(0 if s[0] and s[1] and not (s[0] & s[1]) else 1)
PY
# Parameters PyTorch initialises to constants (LayerNorm's weight 1, bias 0)
# are drawn at random on the extra draws: a kernel that assumes them fails.
expect_exit 4 "a LayerNorm that ignores its weight and bias fails collect-v3" \
	"$KFORGE" eval 40 "$KF_ROOT/tests/candidates/verify/layernorm_no_affine.cu" --json
contains "on an extra draw" "$T_TMP/out" '"detail": *"check trial [0-9]+ \(seed [0-9]+, (normal|uniform_wide)'
