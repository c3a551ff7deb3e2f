#!/bin/sh
# Checks where every input, parameter and step matters (docs/engine.md: "The
# alive draw", "Sensitivity trials", "Degenerate outputs"), on the GPU, one
# engine each (tests/helpers/kfeval):
# - before (the extra draws of the old protocols: normal and wide only, no
#   sensitivity trials) the truncated recurrence, the kernel that ignores
#   h0/c0 and the partial-fingerprint cache are all `correct`;
# - under verify-v4 (kfeval --verify) each adversarial candidate gets its
#   status (line 2 of the file) and the honest LSTM is correct, its
#   sensitivity trials agreeing with the CPU oracle (tests/t0367): the
#   first 128 steps reach h_n on the alive draw, not on the spec's; the
#   GPU reference on the alive draw is the oracle's; kforge verify names
#   level2/33's gemm_bias as without influence;
# - the collector's protocol (collect-v3, with the alive draw) rejects the
#   recurrence shortcuts too; a kernel that would turn to zeros after 8
#   launches (47) never does, its counter restored before every launch block.
# The cost: each evaluation's wall time, reference runs and the sensitivity
# trials' time (env.sensitivity.ms) are printed as "# cost" lines.
# Timing is bounded (--max-timing-s 2, after --verify, which sets every
# field): the LSTM kernels take 35-240 ms a launch, and 500 timed trials of
# them cost minutes while testing nothing more.
. "$KF_ROOT/tests/lib.sh"
export KFORGE_ROOT="$KF_ROOT"
A="$KF_ROOT/tests/candidates/adversarial"
SHORTCUTS="41_partial_fingerprint.cu 42_truncated_recurrence.cu 43_ignores_initial_state.cu"

args() {
	for f in "$@"; do
		printf '%s\n%s\n' "$(sed -n '1s|^// problem: ||p' "$A/$f")" "$A/$f"
	done
}
# has TEXT PATTERN: TEXT (details quote freely) matches
has() { printf '%s\n' "$1" | grep -Eq -- "$2"; }
# status and failed_check of line N of FILE
got() { sed -n "$2p" "$1" | python3 -c 'import json,sys; d=json.load(sys.stdin); print(d.get("status"), d.get("failed_check") or "", "|", (d.get("detail") or d.get("engine_error") or "")[:300])'; }

# before: the old extra draws, no sensitivity trials
# shellcheck disable=SC2046,SC2086
"$KF_BUILD/tests/kfeval" --verify --max-timing-s 2 --dists normal,uniform_wide,edges --no-sensitivity --kforge "$KFORGE" \
	--db "$T_TMP/before.db" --timeout 20 --force $(args $SHORTCUTS) >before.jsonl 2>before.err
check "kfeval ran (before)" test $? -eq 0
sed 's/^/# before: /' before.jsonl | cut -c1-400
n=0
for f in $SHORTCUTS; do
	n=$((n + 1))
	g=$(got before.jsonl $n)
	check "before: $f is accepted ($g)" test "${g%% *}" = correct
done

# after: verify-v4
ALL="$SHORTCUTS 44_honest_lstm_hn.cu 45_degenerate_zeros.cu 46_almost_zeros.cu"
# shellcheck disable=SC2046,SC2086
"$KF_BUILD/tests/kfeval" --verify --max-timing-s 2 --kforge "$KFORGE" --db "$T_TMP/after.db" --timeout 20 --force \
	$(args $ALL) >after.jsonl 2>after.err
check "kfeval ran (verify-v4)" test $? -eq 0
sed 's/^/# after: /' after.jsonl | cut -c1-600
tail -n 5 after.err | sed 's/^/# /'
n=0
for f in $ALL; do
	n=$((n + 1))
	want=$(sed -n '2s|^// expect: ||p' "$A/$f")
	g=$(got after.jsonl $n)
	case "$want" in
	correct) check "$f: correct ($g)" test "${g%% *}" = correct ;;
	*) check "$f: $want ($g)" test "$(echo "$g" | cut -d' ' -f1-2)" = "$want" ;;
	esac
	case "$f" in
	42_* | 43_*) check "$f: the alive draw is the one that fails" has "$g" alive ;;
	esac
done

# the honest LSTM's sensitivity trials, and the cost of each evaluation
cat >cost.py <<'PY'
import json, sqlite3, sys
db = sqlite3.connect(sys.argv[1])
for line in open(sys.argv[2]):
    d = json.loads(line)
    row = db.execute("select env, status from evals where kernel_hash = ? order by created_at desc limit 1",
                     (d.get("kernel", ""),)).fetchone()
    if not row:
        continue
    env = json.loads(row[0] or "{}")
    s = env.get("sensitivity") or {}
    print("# cost %s %s: %s, wall %.0f ms, refs_run %s, sensitivity %s pairs in %.0f ms (kernel %.1f ms), phases %s" % (
        sys.argv[3], d["file"].rsplit("/", 1)[-1], row[1], d.get("wall_ms") or 0, env.get("refs_run"),
        s.get("pairs_run"), s.get("ms") or 0, s.get("kernel_ms") or 0, json.dumps(env.get("phases_ms"))))
    if d["file"].endswith("44_honest_lstm_hn.cu") and s:
        for k in ("influence", "no_influence", "skipped"):
            for x in s.get(k, []):
                print("%s %s" % (k, x if isinstance(x, str) else x["tensor"]))
        print("draws %s: sampled %s of %s" % (s.get("draws"), s.get("sampled"), s.get("trials")))
PY
python3 cost.py "$T_TMP/after.db" after.jsonl verify-v4 >sens.txt
sed 's/^\([^#]\)/# \1/' sens.txt
# 27 tensors and the region, on both draws: 56 trials, up to 32 of them
# sampled (fewer only if the references are slow: a 60 s budget)
contains "the honest LSTM's trials: both draws, of 56" sens.txt "^draws spec, alive: sampled [0-9]+ of 56$"
# as the CPU oracle says (t0367): the first 128 steps reach h_n on the
# alive draw only (the region trials are always among those sampled)
contains "the first 128 steps reach h_n on the alive draw" sens.txt "^influence x\[time steps 0\.\.128 of 512\] \(alive\)$"
contains "and not on the spec's" sens.txt "^no_influence x\[time steps 0\.\.128 of 512\]$"

# the collector's protocol: the alive draw rejects the recurrence shortcuts
# shellcheck disable=SC2046,SC2086
"$KF_BUILD/tests/kfeval" --max-timing-s 2 --kforge "$KFORGE" --db "$T_TMP/collect.db" --timeout 20 --force \
	$(args 42_truncated_recurrence.cu 43_ignores_initial_state.cu 44_honest_lstm_hn.cu 47_lazy_degenerate.cu) \
	>collect.jsonl 2>collect.err
check "kfeval ran (collect-v3)" test $? -eq 0
sed 's/^/# collect: /' collect.jsonl | cut -c1-400
check "collect-v3: the truncated recurrence is incorrect" sh -c "test \"\$(sed -n 1p collect.jsonl | grep -c '\"status\":\"incorrect\"')\" = 1"
check "collect-v3: the zero initial state is incorrect" sh -c "test \"\$(sed -n 2p collect.jsonl | grep -c '\"status\":\"incorrect\"')\" = 1"
check "collect-v3: the honest LSTM is correct" sh -c "test \"\$(sed -n 3p collect.jsonl | grep -c '\"status\":\"correct\"')\" = 1"
g=$(got collect.jsonl 4)
check "collect-v3: a launch counter in a module variable (47) is restored every block: honest, correct ($g)" \
	has "$g" '^correct '
python3 cost.py "$T_TMP/collect.db" collect.jsonl collect-v3 | grep '^# cost'

# The alive draw's inputs are the same on the GPU (worker fill + set ranges)
# as on the CPU (problem/inputs.c): the GPU reference on them agrees with the
# CPU oracle, as `problems check` shows for the spec's draw.
"$KFORGE" problems inputs level3/36 --alive --samples 64 --out cpu >cpu.log 2>&1
"$KFORGE" problems inputs level3/36 --alive --samples 64 --gpu-reference --out gpu >gpu.log 2>&1
check "both samples written" test -s cpu/oracle/out.json -a -s gpu/oracle/out.json
tail -n 3 gpu.log | sed 's/^/# /'
check "on the alive draw the GPU reference is the CPU oracle's (fp32 tolerance)" python3 -c '
import json, sys
a = json.load(open("cpu/oracle/out.json")); b = json.load(open("gpu/oracle/out.json"))
assert a["index"] == b["index"]
bad = [(x, y) for x, y in zip(a["value"], b["value"]) if not abs(x - y) <= 1e-4 + 1e-4 * abs(x)]
print("# %d of %d sampled values differ; first: %s" % (len(bad), len(a["value"]), bad[:2]))
sys.exit(1 if bad else 0)'

# kforge verify end to end: the built-in kernel of level2/33 is verified and
# the report names the linear's bias (which the training-mode BatchNorm
# subtracts) as without influence, as the spec says (no claim contradicted).
"$KF_BUILD/tests/builtin_emit" render "$KF_ROOT/problems/level2/033_Gemm_Scale_BatchNorm/spec.json" graph '{}' >b33.cu 2>b33.err
check "the built-in kernel of level2/33 renders" test -s b33.cu
expect_exit 0 "collect check passes it" "$KFORGE" eval level2/33 b33.cu --json
"$KFORGE" verify --problems level2/33 --top 1 --no-category --no-sanitizer --json >v33.json 2>v33.err
check "verify exits 0" test $? -eq 0
sed 's/^/# /' v33.json | head -n 20
check "verified, with gemm_bias under no_influence" python3 -c '
import json, sys
r = json.load(open("v33.json"))
sys.exit(0 if r and r[0]["verdict"] == "verified" and "gemm_bias" in r[0].get("no_influence", []) else 1)'
c=$(python3 -c 'import sqlite3,sys; print(sqlite3.connect(sys.argv[1]).execute("select env from verifications where problem_id like ?", ("%033_Gemm%",)).fetchone()[0])' "$KFORGE_DB" |
	python3 -c 'import json,sys; s=json.load(sys.stdin).get("sensitivity", {}); print(len(s.get("claims_contradicted", ["?"])), s.get("ms"))')
check "no claim of the spec contradicted, and the trials' time recorded ($c)" sh -c "echo '$c' | grep -q '^0 [0-9]'"
echo "# cost level2/33 verify-v4 sensitivity: $c (contradicted, ms)"
