#!/bin/sh
# kforge report: one problem's search (header, statistics, rounds, best
# kernel with its idea), the run summary, --json, --gpus; kernels that
# failed verification are never "best".
. "$KF_ROOT/tests/lib.sh"
SF="$KF_BUILD/tests/searchfake"
for i in 1 2; do
	d="root/problems/level1/00${i}_P$i"
	mkdir -p "$d"
	printf 'extern "C" __global__ void ref() { }\n/*@launch\nref<<<1, 1>>>();\n@*/\n// %d\n' "$i" >"$d/reference.cu"
	fixture_problem "$d"
done
DB="$T_TMP/kforge.db"
check "a search to report on" sh -c "'$SF' --db '$DB' --root root --rounds 2 --k 2 --m 2 --seed 5 >/dev/null"
q() { sqlite3 "$DB" "$1"; }
# store text is printed Markdown-escaped, as the site's reports print it:
# md_re ID gives the ERE of an escaped id ('_' and '-' get a backslash)
md_re() { printf '%s' "$1" | sed 's/[_-]/\\\\&/g'; }

expect_exit 0 "report of one problem" "$KFORGE" report 1
contains "header names the problem" "$T_TMP/out" '^- Problem: level1/001\\_P1 \(P1\)'
contains "header names the GPU" "$T_TMP/out" '^- GPU: Fake GPU'
contains "header names the model" "$T_TMP/out" '^- Model: fake\\-model'
contains "header gives the rounds" "$T_TMP/out" '^- Rounds: 2 \(branch'
n=$(q "select count(*) from candidates where problem_id='level1/001_P1'")
contains "kernels generated counts every candidate" "$T_TMP/out" "^- Kernels generated: $n\$"
ok_n=$(q "select count(*) from candidates where problem_id='level1/001_P1' and status='correct'")
contains "correct count" "$T_TMP/out" "^- Correct: $ok_n "
contains "one line per round (0, 1, 2)" "$T_TMP/out" '^\| 2 \| '
best=$(q "select c.id from candidates c join evals e on e.kernel_hash=c.kernel_hash and e.problem_id=c.problem_id where c.problem_id='level1/001_P1' and c.status='correct' order by e.time_mean_ms, c.id limit 1")
contains "the best kernel is the fastest correct one" "$T_TMP/out" "^- ID: $(md_re "$best")\$"
idea=$(q "select text from ideas where id=(select idea_id from candidates where id='$best')")
if [ -n "$idea" ]; then check "its idea in full" grep -qxF -- "$(printf '%s' "$idea" | sed 's/[][\\`*_{}()#+!|~"'"'"'-]/\\&/g; s/&/\&amp;/g; s/</\&lt;/g; s/>/\&gt;/g')" "$T_TMP/out"; else contains "reference kernel noted" "$T_TMP/out" "reference kernel"; fi
contains "speedup and runtime" "$T_TMP/out" '^- Runtime: [0-9.]+ ms'

expect_exit 0 "report --source" "$KFORGE" report 1 --source
check "prints the best kernel's source in a cuda fence" sh -c "grep -q '^\`\`\`cuda\$' '$T_TMP/out' && grep -q '^/\*@launch' '$T_TMP/out'"
expect_exit 0 "report by name, as JSON" "$KFORGE" report P1 --json
check "JSON parses and has the same best" sh -c "python3 -c 'import json,sys; d=json.load(open(\"$T_TMP/out\")); sys.exit(d[\"best\"][\"id\"] != \"$best\")'"

# The best kernel fails verification on the run's GPU: it is excluded.
h=$(q "select kernel_hash from candidates where id='$best'")
e=$(q "select id from evals where kernel_hash='$h' and problem_id='level1/001_P1'")
q "insert into verifications(id,eval_id,kernel_hash,problem_id,gpu_name,protocol,verdict,failed_check,env,kforge_version,created_at) values('vf1','$e','$h','level1/001_P1','Fake GPU','verify-v1','failed','nondeterministic','{}','t','t')"
expect_exit 0 "report after a failed verification" "$KFORGE" report 1
lacks "the failed kernel is no longer best" "$T_TMP/out" "^- ID: $best\$"
contains "it is listed as excluded" "$T_TMP/out" "^Excluded \(failed verification, or passed with a review flag\): .*$(md_re "$best")"
# The latest verification decides: a later verify-v2 pass supersedes the
# verify-v1 failure, and a later failure a pass.
q "insert into verifications(id,eval_id,kernel_hash,problem_id,gpu_name,protocol,verdict,env,kforge_version,created_at) values('vf2','$e','$h','level1/001_P1','Fake GPU','verify-v2','verified','{}','t','u')"
expect_exit 0 "report after a later verify-v2 pass" "$KFORGE" report 1
contains "the kernel is best again" "$T_TMP/out" "^- ID: $(md_re "$best")\$"
lacks "and no longer excluded" "$T_TMP/out" "^Excluded \(failed verification, or passed with a review flag\): .*$(md_re "$best")"
# A pass with a review flag is no verified result (issue 37): excluded again.
q "update verifications set review_flags='[\"faster_than_roofline_floor\"]' where id='vf2'"
expect_exit 0 "report after a flagged pass" "$KFORGE" report 1
lacks "a flagged kernel is not best" "$T_TMP/out" "^- ID: $(md_re "$best")\$"
contains "it is listed as excluded" "$T_TMP/out" "^Excluded \(failed verification, or passed with a review flag\): .*$(md_re "$best")"
q "update verifications set review_flags='[]' where id='vf2'"
q "update verifications set created_at='s' where id='vf2'"
expect_exit 0 "report when the pass is the older verdict" "$KFORGE" report 1
lacks "the later failure excludes it" "$T_TMP/out" "^- ID: $best\$"

# Cross-GPU table: verified kernels on two GPUs.
h2=$(q "select kernel_hash from candidates where problem_id='level1/002_P2' and status='correct' limit 1")
for g in H100 H200; do
	t=$( [ $g = H100 ] && echo 2.0 || echo 1.0 )
	q "insert into evals(id,kernel_hash,problem_id,gpu_name,protocol,protocol_params,status,time_mean_ms,created_at) values('ev$g','$h2','level1/002_P2','$g','verify-v1','{}','correct',$t,'t')"
	q "insert into baselines(problem_id,gpu_name,variant,mean_ms,imported_at) values('level1/002_P2','$g','eager',4.0,'t')"
	q "insert into verifications(id,eval_id,kernel_hash,problem_id,gpu_name,protocol,verdict,env,kforge_version,created_at) values('v$g','ev$g','$h2','level1/002_P2','$g','verify-v1','verified','{}','t','t')"
done
expect_exit 0 "report --gpus" "$KFORGE" report --gpus
contains "a column per GPU" "$T_TMP/out" '^\| Problem \| Fake GPU \| H100 \| H200 \|'
contains "speedups per GPU (4/2 and 4/1)" "$T_TMP/out" '^\| level1/002\\_P2 \| - \| 2\.00x \| 4\.00x \|'
q "insert into verifications(id,eval_id,kernel_hash,problem_id,gpu_name,protocol,verdict,failed_check,env,kforge_version,created_at) values('vH200b','evH200','$h2','level1/002_P2','H200','verify-v2','failed','output_mismatch','{}','t','u')"
expect_exit 0 "report --gpus after a later failure on the H200" "$KFORGE" report --gpus
contains "the H200 cell is empty, the H100's stays" "$T_TMP/out" '^\| level1/002\\_P2 \| - \| 2\.00x \| - \|'
expect_exit 0 "pack with the later failure" "$KFORGE" pack --version 0.0.1 -o dist
mkdir -p x && tar -xf dist/kforge-kernelbench-0.0.1.tar.zst -C x 2>/dev/null ||
	zstd -dc dist/kforge-kernelbench-0.0.1.tar.zst | tar -xf - -C x
check "the dataset's verified_gpus agree (H100 only)" python3 - "$h2" x/sft.jsonl <<'PY'
import json, sys
rows = [json.loads(l) for l in open(sys.argv[2])]
g = [r["verified_gpus"] for r in rows if r["kernel_hash"] == sys.argv[1]]
assert g and all(v == ["H100"] for v in g), g
PY
q "delete from verifications where id='vH200b'"
expect_exit 0 "report --gpus --json" "$KFORGE" report --gpus --json
contains "JSON lists the GPUs" "$T_TMP/out" '"H200"'

expect_exit 0 "run summary" "$KFORGE" report
contains "one line per problem" "$T_TMP/out" '^\| level1/002\\_P2 \| [0-9]+ \|'
expect_exit 2 "an unknown problem is a usage error" "$KFORGE" report Nope
check "one line naming it" test "$(cat "$T_TMP/err")" = "kforge: report: unknown problem 'Nope'"
expect_exit 2 "number and name must agree" "$KFORGE" report 9_P2.py
contains "suggests the closest" "$T_TMP/err" "unknown problem '9_P2.py'; did you mean 'level1/002_P2'\?$"
for p in 2_P2.py level1/2_P2 2_P2; do
	expect_exit 0 "report $p (KernelBench's name)" "$KFORGE" report $p
	contains "reports level1/002_P2" "$T_TMP/out" '^# Search report: level1/002\\_P2$'
done
expect_exit 2 "--gpus with a problem is a usage error" "$KFORGE" report 1 --gpus
expect_exit 1 "no store" "$KFORGE" --db "$T_TMP/none.db" report
expect_exit 1 "verify with no store" "$KFORGE" --db "$T_TMP/none.db" verify
contains "says there is no store" "$T_TMP/err" "no store at"
check "and creates none" test ! -e "$T_TMP/none.db"
