#!/bin/sh
# Merging stores: A+B = B+A = (A+B)+B; honest differences settled by rule
# (store_merge.h), real conflicts reported and never resolved silently.
. "$KF_ROOT/tests/lib.sh"
DUMP="python3 $KF_ROOT/tests/tools/dbdump.py"

mk() { # db, sql
	"$KFORGE" --db "$1" store init >/dev/null || return 1
	sqlite3 "$1" "PRAGMA foreign_keys=ON; $2"
}
P="INSERT INTO problems(id,level,number,name,spec,spec_sha256) VALUES('level1/019_ReLU',1,19,'ReLU','{}','aa');"
K1="INSERT INTO kernels VALUES('k1','src1',4,'2026-01-01T00:00:00Z');"
K2="INSERT INTO kernels VALUES('k2','src2',4,'2026-01-01T00:00:00Z');"
K3="INSERT INTO kernels VALUES('k3','src3',4,'2026-01-02T00:00:00Z');"
E() { echo "INSERT INTO evals(id,kernel_hash,problem_id,gpu_name,protocol,protocol_params,status,time_mean_ms,created_at) VALUES('$1','$2','level1/019_ReLU','$3','collect-v1','{}','correct',$4,'2026-01-01T00:00:00Z');"; }
G() { echo "INSERT INTO gpus(name,arch,sm_count,memory_bytes,peak_bw_gbs,driver,first_seen) VALUES('$1','sm_90',132,80000000000,$2,'$3','$4');"; }
mk A.db "$P $K1 $K2 $(E e1 k1 H100 1.5) $(E e2 k2 H100 2.5) $(G H100 3000 580.1 2026-01-02)"
mk B.db "$P $K2 $K3 $(E e2 k2 H100 2.5) $(E e3 k3 H200 1.0) $(G H100 3100 580.0 2026-01-03) $(G H200 4300 580.1 2026-01-01)"

expect_exit 0 "merge A B" "$KFORGE" merge A.db B.db -o AB.db
contains "reports rows added and deduplicated" "$T_TMP/out" "rows added, [1-9][0-9]* identical rows deduplicated"
expect_exit 0 "merge B A" "$KFORGE" merge B.db A.db -o BA.db
expect_exit 0 "merge (A+B) B" "$KFORGE" merge AB.db B.db -o ABB.db
$DUMP AB.db >ab.txt; $DUMP BA.db >ba.txt; $DUMP ABB.db >abb.txt
check "A+B = B+A" cmp -s ab.txt ba.txt
check "A+B = (A+B)+B" cmp -s ab.txt abb.txt
check "kernels deduplicated by content (3 kernels)" grep -q '^== kernels (3 rows)' ab.txt
check "evals kept per GPU (3 evals)" grep -q '^== evals (3 rows)' ab.txt
check "gpus ceiling is the maximum" sh -c "test \"\$(sqlite3 AB.db \"select peak_bw_gbs from gpus where name='H100'\")\" = 3100.0"
check "gpus first_seen is the earliest" sh -c "test \"\$(sqlite3 AB.db \"select first_seen from gpus where name='H100'\")\" = 2026-01-02"
check "merged store passes integrity_check" sh -c "\"$KFORGE\" --db AB.db store check >/dev/null"
# Same rows, same bytes: the packs of A+B and B+A are identical.
expect_exit 0 "pack A+B" "$KFORGE" --db AB.db pack --version 1.0.0 -o packAB
expect_exit 0 "pack B+A" "$KFORGE" --db BA.db pack --version 1.0.0 -o packBA
check "A+B and B+A pack to the same tarball" cmp -s packAB/kforge-kernelbench-1.0.0.tar.zst packBA/kforge-kernelbench-1.0.0.tar.zst

# A conflict: the same problem id with another spec (no rule settles it).
mk C.db "INSERT INTO problems(id,level,number,name,spec,spec_sha256) VALUES('level1/019_ReLU',1,19,'ReLU','{\"x\":1}','bb'); $K1"
expect_exit 4 "a conflicting store fails the merge with exit 4" "$KFORGE" merge A.db C.db -o AC.db
contains "the conflict names table, key and columns" "$T_TMP/err" "problems level1/019_ReLU: differs in spec spec_sha256"
check "no output written on conflict" test ! -e AC.db
check "no temporary files left" sh -c "! ls AC.db.tmp* 2>/dev/null | grep -q ."
expect_exit 1 "existing output is not overwritten" "$KFORGE" merge A.db B.db -o AB.db
expect_exit 0 "--force replaces it" "$KFORGE" merge A.db B.db -o AB.db --force
echo garbage >bad.db
expect_exit 1 "a file that is not a store is refused" "$KFORGE" merge A.db bad.db -o X.db

# --- Honest stores that differ (issue 22: merge broke on them) ---
# order_free NAME A B: A+B = B+A = (A+B)+B = (A+B)+A, and the result is a sound store.
order_free() {
	n=$1; a=$2; b=$3
	rm -f "$n-ab.db" "$n-ba.db" "$n-abb.db" "$n-aba.db"
	expect_exit 0 "$n: merge A B" "$KFORGE" merge "$a" "$b" -o "$n-ab.db"
	cp "$T_TMP/out" "$n-ab.out"; cp "$T_TMP/err" "$n-ab.err"
	expect_exit 0 "$n: merge B A" "$KFORGE" merge "$b" "$a" -o "$n-ba.db"
	expect_exit 0 "$n: merge (A+B) B" "$KFORGE" merge "$n-ab.db" "$b" -o "$n-abb.db"
	expect_exit 0 "$n: merge (A+B) A" "$KFORGE" merge "$n-ab.db" "$a" -o "$n-aba.db"
	for x in ab ba abb aba; do $DUMP "$n-$x.db" >"$n-$x.txt"; done
	check "$n: A+B = B+A" cmp -s "$n-ab.txt" "$n-ba.txt"
	check "$n: A+B = (A+B)+B = (A+B)+A" sh -c "cmp -s $n-ab.txt $n-abb.txt && cmp -s $n-ab.txt $n-aba.txt"
	check "$n: integrity and foreign keys hold" sh -c "\"$KFORGE\" --db $n-ab.db store check | grep -q '0 violation'"
}
q() { sqlite3 "$1" "$2"; }

# One kernel, seen at two dates: the earliest date is kept.
mk D1.db "$P $K1"
mk D2.db "$P INSERT INTO kernels VALUES('k1','src1',4,'2025-12-31T00:00:00Z');"
order_free kdate D1.db D2.db
check "kernel: the earliest created_at is kept" test "$(q kdate-ab.db "select created_at from kernels where hash='k1'")" = 2025-12-31T00:00:00Z

# One kernel measured in two stores (same GPU model, same protocol): one
# evaluation is kept, with its own trials; a failure beats 'correct'.
T() { echo "INSERT INTO eval_trials(eval_id,kind,idx,seed,time_ms,ok) VALUES('$1','time',$2,7,$3,1);"; }
EV() { echo "INSERT INTO evals(id,kernel_hash,problem_id,gpu_name,protocol,protocol_params,status,time_mean_ms,created_at) VALUES('$1','k1','level1/019_ReLU','H100','collect-v1','{}','$2',$3,'$4');"; }
mk M1.db "$P $K1 $(EV e1 correct 1.5 2026-01-01T00:00:00Z) $(T e1 0 1.4) $(T e1 1 1.6)"
mk M2.db "$P $K1 $(EV e1 correct 1.2 2026-01-02T00:00:00Z) $(T e1 0 1.1) $(T e1 1 1.3) $(T e1 2 1.2)"
order_free meas M1.db M2.db
check "evals: the earliest measurement is kept" test "$(q meas-ab.db "select time_mean_ms from evals where id='e1'")" = 1.5
check "evals: its own trials go with it (2, not 3 or 5)" test "$(q meas-ab.db "select count(*)||':'||sum(time_ms) from eval_trials where eval_id='e1'")" = "2:3.0"
contains "the summary counts rows settled by rule" meas-ab.out "[1-9][0-9]* settled by rule"
mk M3.db "$P $K1 $(EV e1 incorrect NULL 2026-01-03T00:00:00Z)"
order_free disagree M1.db M3.db
check "evals: a failure beats 'correct', whatever the dates" test "$(q disagree-ab.db "select status from evals where id='e1'")" = incorrect
check "evals: the failing one's trials only (none)" test "$(q disagree-ab.db "select count(*) from eval_trials where eval_id='e1'")" = 0
contains "a status disagreement is listed" disagree-ab.err "evals e1 .*: correct in one store, incorrect in the other; kept the failure"
contains "and counted" disagree-ab.out "1 evaluation\\(s\\) correct in one store only"

# Profiles follow their evaluation (no conflict): the kept evaluation's
# store's profile, with its kernels and only those; for the same
# evaluation in both, the earlier profile, or the only one.
PR() { echo "INSERT INTO profiles(eval_id,kernel_hash,problem_id,gpu_name,limiter,launches,kernel_ms,cost_ms,tool,created_at) VALUES('e1','k1','level1/019_ReLU','H100','$1',$2,1.0,10,'t','$3');"; }
PK() { echo "INSERT INTO profile_kernels(eval_id,idx,name,duration_ms,limiter) VALUES('e1',$1,'$2',0.5,'$3');"; }
mk P1.db "$P $K1 $(EV e1 correct 1.5 2026-01-01T00:00:00Z) $(PR memory 1 2026-01-04T00:00:00Z) $(PK 0 a memory)"
mk P2.db "$P $K1 $(EV e1 correct 1.2 2026-01-02T00:00:00Z) $(PR compute 2 2026-01-03T00:00:00Z) $(PK 0 b compute) $(PK 1 c compute)"
order_free prof P1.db P2.db
check "profiles: the kept evaluation's own (memory, kernel a)" test "$(q prof-ab.db "select p.limiter||':'||group_concat(k.name) from profiles p join profile_kernels k using (eval_id)")" = "memory:a"
mk P3.db "$P $K1 $(EV e1 correct 1.5 2026-01-01T00:00:00Z)"
order_free prof_lost P3.db P2.db
check "profiles: none where the kept evaluation had none" test "$(q prof_lost-ab.db "select count(*) from profiles")$(q prof_lost-ab.db "select count(*) from profile_kernels")" = 00
mk P4.db "$P $K1 $(EV e1 correct 1.5 2026-01-01T00:00:00Z) $(PR compute 2 2026-01-03T00:00:00Z) $(PK 0 b compute) $(PK 1 c compute)"
order_free prof_same P1.db P4.db
check "profiles: the same evaluation keeps the earlier profile, whole" test "$(q prof_same-ab.db "select p.limiter||':'||group_concat(k.name) from profiles p join profile_kernels k using (eval_id)")" = "compute:b,c"
order_free prof_one P3.db P1.db
check "profiles: the same evaluation gets the only profile" test "$(q prof_one-ab.db "select limiter from profiles")" = memory

# Verifications: the latest; baselines: the faster.
V() { echo "INSERT INTO verifications(id,eval_id,kernel_hash,problem_id,gpu_name,protocol,verdict,env,kforge_version,created_at) VALUES('v1','e1','k1','level1/019_ReLU','H100','verify-v2','$1','{}','$2','$3');"; }
B() { echo "INSERT INTO baselines(problem_id,gpu_name,variant,mean_ms,imported_at) VALUES('level1/019_ReLU','H100','eager',$1,'$2');"; }
mk V1.db "$P $K1 $(EV e1 correct 1.5 2026-01-01T00:00:00Z) $(V verified a 2026-01-05T00:00:00Z) $(B 2.0 2026-01-01T00:00:00Z)"
mk V2.db "$P $K1 $(EV e1 correct 1.5 2026-01-01T00:00:00Z) $(V failed b 2026-01-06T00:00:00Z) $(B 1.9 2026-01-02T00:00:00Z)"
order_free verif V1.db V2.db
check "verifications: the latest is kept" test "$(q verif-ab.db "select verdict||kforge_version from verifications")" = failedb
check "baselines: the faster is kept" test "$(q verif-ab.db "select mean_ms from baselines")" = 1.9

# Two executions of one run configuration (same run id): both kept, the
# later renamed with every row and reference of its own.
R() { echo "INSERT INTO runs(id,created_at,finished_at,status,strategy,proposer,seed,config,kforge_version) VALUES('run_x','$1','$2','finished','branch','builtin',1,'{}','$3');"; }
CALL="INSERT INTO llm_calls(id,run_id,problem_id,round,purpose,proposer,request,created_at) VALUES('call_1','run_x','level1/019_ReLU',1,'ideas','builtin','{}','t');"
ID="INSERT INTO ideas(id,run_id,problem_id,round,text,source,parent_ids,llm_call_id,created_at) VALUES('idea_1','run_x','level1/019_ReLU',1,'tile it','builtin','[]','call_1','t'),('idea_2','run_x','level1/019_ReLU',2,'and unroll','builtin','[\"idea_1\"]',NULL,'t'); INSERT INTO idea_categories VALUES('idea_1','memory','catalogue');"
CA() { echo "INSERT INTO candidates(id,run_id,problem_id,round,idea_id,impl_index,kernel_hash,parent_ids,status,created_at) VALUES('cand_0','run_x','level1/019_ReLU',0,NULL,0,'k1','[]','correct','t'),('cand_1','run_x','level1/019_ReLU',1,'idea_1',0,'$1','[\"cand_0\"]','correct','t'); INSERT INTO rounds VALUES('run_x','level1/019_ReLU',1,'done','t','t','cand_1');"; }
mk R1.db "$P $K1 $K2 $(R 2026-02-01T00:00:00Z 2026-02-01T01:00:00Z v1) $CALL $ID $(CA k2)"
mk R2.db "$P $K1 $K3 $(R 2026-02-03T00:00:00Z 2026-02-03T01:00:00Z v2) $CALL $ID $(CA k3)"
order_free runs R1.db R2.db
check "runs: both executions kept" test "$(q runs-ab.db "select count(*) from runs")" = 2
NEWID=$(q runs-ab.db "select id from runs where created_at='2026-02-03T00:00:00Z'")
check "runs: the earlier keeps its id" test "$(q runs-ab.db "select created_at from runs where id='run_x'")" = 2026-02-01T00:00:00Z
check "runs: the later is run_x~HASH" sh -c "echo '$NEWID' | grep -Eq '^run_x~[0-9a-f]{8}$'"
S=${NEWID#run_x}
check "runs: the later's candidate, idea, call and round renamed with it" test \
  "$(q runs-ab.db "select c.id||' '||c.idea_id||' '||c.parent_ids||' '||c.kernel_hash from candidates c where run_id='$NEWID' and round=1")" = "cand_1$S idea_1$S [\"cand_0$S\"] k3"
check "runs: idea parents and categories follow" test \
  "$(q runs-ab.db "select i.parent_ids||' '||i2.llm_call_id||' '||(select count(*) from idea_categories where idea_id='idea_1$S') from ideas i, ideas i2 where i.id='idea_2$S' and i2.id='idea_1$S'")" = "[\"idea_1$S\"] call_1$S 1"
check "runs: the round's best candidate follows" test "$(q runs-ab.db "select best_candidate from rounds where run_id='$NEWID'")" = "cand_1$S"
contains "the renaming is listed" runs-ab.err "runs run_x: two executions .* the later is run_x~"

# Copies of one execution, one further on: unioned, the more advanced rows kept.
mk C1.db "$P $K1 $K2 INSERT INTO runs(id,created_at,status,strategy,proposer,seed,config,kforge_version) VALUES('run_x','2026-02-01T00:00:00Z','running','branch','builtin',1,'{}','v1'); INSERT INTO candidates(id,run_id,problem_id,round,impl_index,kernel_hash,status,created_at) VALUES('cand_0','run_x','level1/019_ReLU',0,0,'k1','pending','t');"
mk C2.db "$P $K1 $K2 $(R 2026-02-01T00:00:00Z 2026-02-01T01:00:00Z v1) INSERT INTO candidates(id,run_id,problem_id,round,impl_index,kernel_hash,status,created_at) VALUES('cand_0','run_x','level1/019_ReLU',0,0,'k1','correct','t'),('cand_9','run_x','level1/019_ReLU',1,0,'k2','correct','t');"
order_free copies C1.db C2.db
check "copies: one run, finished" test "$(q copies-ab.db "select count(*)||status from runs")" = 1finished
check "copies: the evaluated candidate beats the pending one" test "$(q copies-ab.db "select group_concat(status) from (select status from candidates order by id)")" = correct,correct

# End to end: two searches of problem 19 with seeds 1 and 2 share the
# reference kernel and its evaluation; the same seed run twice collides on
# the run id. Both merge, in any order.
SF="$KF_BUILD/tests/searchfake"
for sd in 1 2; do
	"$SF" --db "s$sd.db" --root "$KF_ROOT" --problems 19 --proposer builtin --rounds 2 --k 2 --m 1 --seed $sd >"s$sd.out" 2>&1
	check "search of problem 19 with seed $sd finishes" grep -q ' finished ' "s$sd.out"
done
sleep 1
"$SF" --db s1b.db --root "$KF_ROOT" --problems 19 --proposer builtin --rounds 2 --k 2 --m 1 --seed 1 >s1b.out 2>&1
check "the same search again, into another store, finishes" grep -q ' finished ' s1b.out
check "the two seeds share a kernel" test "$(sqlite3 s1.db "attach 's2.db' as b; select count(*) from kernels k join b.kernels j on j.hash = k.hash")" -ge 1
order_free seeds s1.db s2.db
order_free again s1.db s1b.db
check "again: both executions of the run are kept" test "$(q again-ab.db "select count(*) from runs")" = 2
# Search sessions (schema v6): one per invocation, carried once by id, following a renamed run.
check "seeds: each search's session is carried" test "$(q seeds-ab.db "select count(*) from search_sessions")" = 2
check "again: merged twice, still one session per execution" test \
	"$(q again-abb.db "select count(*) from search_sessions")/$(q again-aba.db "select count(distinct id) from search_sessions")" = 2/2
# (by the session's id: its started_at and the run's created_at, whole
# seconds taken apart, once crossed a second under load)
check "again: the later execution's session follows its renamed run" test \
	"$(q again-ab.db "select count(*) from search_sessions s join runs r on r.id = s.run_id where r.id like 'run_%~%' and s.id = '$(q s1b.db "select id from search_sessions")'")" = 1
expect_exit 0 "merge the merged store into itself again" "$KFORGE" merge again-ab.db s1b.db s1.db -o again-3.db
check "... sessions still 2" test "$(q again-3.db "select count(*) from search_sessions")" = 2

# The committed stores of docs/results (real H200 searches of one
# configuration by two kforge versions; the v0.1.0 release and its search).
if command -v zstd >/dev/null 2>&1; then
	W=$KF_ROOT/docs/results/worker-keeps-bench
	zstd -qdf "$W/h200-8-problems-new-0ae9dc2.db.zst" -o wk-new.db && zstd -qdf "$W/h200-8-problems-old-6e31534.db.zst" -o wk-old.db
	order_free committed wk-old.db wk-new.db
	check "committed: the merged store holds both runs' candidates" test "$(q committed-ab.db "select count(*) from candidates")" = \
		"$(($(q wk-old.db "select count(*) from candidates") + $(q wk-new.db "select count(*) from candidates")))"
else
	skip "zstd missing: the committed stores are not merged"
fi
