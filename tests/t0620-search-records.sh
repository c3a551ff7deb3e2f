#!/bin/sh
# What the search records: lineage, categories, the proposer calls with
# their request hash, content-addressed kernels, budgets, the revise
# strategy's repairs; the same rows whatever the number of threads.
. "$KF_ROOT/tests/lib.sh"
SF="$KF_BUILD/tests/searchfake"
DUMP="python3 $KF_ROOT/tests/tools/dbdump.py"
EXCL="--exclude runs.created_at --exclude runs.finished_at --exclude rounds.started_at
 --exclude rounds.finished_at --exclude llm_calls.created_at --exclude llm_calls.latency_ms --exclude llm_calls.attempts
 --exclude ideas.created_at --exclude candidates.created_at
 --exclude search_sessions"
for i in 1 2 3; do
	d="root/problems/level1/00${i}_P$i"
	mkdir -p "$d"
	printf 'extern "C" __global__ void ref() { }\n/*@launch\nref<<<1, 1>>>();\n@*/\n// %d\n' "$i" >"$d/reference.cu"
	fixture_problem "$d"
done
q() { sqlite3 "$1" "$2"; }

check "branch search, 1 thread" sh -c "'$SF' --db b1.db --root root --rounds 3 --k 3 --m 2 --jobs 1 >/dev/null"
check "branch search, 3 threads" sh -c "'$SF' --db b3.db --root root --rounds 3 --k 3 --m 2 --jobs 3 >/dev/null"
$DUMP $EXCL b1.db >b1.txt; $DUMP $EXCL b3.db >b3.txt
check "the same rows whatever the number of threads" cmp -s b1.txt b3.txt

check "K ideas per round per problem (3 problems x 3 rounds x 3)" test "$(q b1.db 'select count(*) from ideas')" = 27
check "M implementations per idea plus the reference" test "$(q b1.db 'select count(*) from candidates')" = $((27 * 2 + 3))
check "round 0 is the reference, with no idea" test "$(q b1.db "select count(*) from candidates where round = 0 and idea_id is null and id like 'kernel_r0_ref_%'")" = 3
check "kernel ids show round, idea, implementation and hash" \
	test "$(q b1.db "select count(*) from candidates c where c.round > 0 and c.id = 'kernel_r' || c.round || '_' || c.idea_id || '_' || c.impl_index || '_' || coalesce(substr(c.kernel_hash, 1, 6), 'none')")" = 54
check "every idea has a category" test "$(q b1.db 'select count(*) from ideas where id not in (select idea_id from idea_categories)')" = 0
check "unlabelled ideas are classified by keyword" test "$(q b1.db "select count(*) from idea_categories where method = 'keyword'")" -gt 0
check "labelled ideas keep the model's label" test "$(q b1.db "select count(*) from idea_categories where method = 'model'")" -gt 0
check "later rounds' kernels name their parent kernels" \
	test "$(q b1.db "select count(*) from candidates where round = 2 and parent_ids = '[]'")" = 0
check "parents are earlier candidates of the same problem" \
	test "$(q b1.db "select count(*) from candidates c, json_each(c.parent_ids) p left join candidates x on x.id = p.value where x.id is null or x.problem_id != c.problem_id or x.round >= c.round")" = 0
check "ideas after round 1 name their parent ideas" \
	test "$(q b1.db "select count(*) from ideas where round = 3 and parent_ids != '[]'")" -gt 0
check "every proposer call is recorded (1 ideas + K implement per round)" \
	test "$(q b1.db 'select count(*) from llm_calls')" = $((3 * 3 * (1 + 3)))
check "request_sha256 is the hash of the recorded request" \
	python3 -c "
import sqlite3, hashlib, sys
db = sqlite3.connect('b1.db')
bad = [i for i, r, h in db.execute('select id, request, request_sha256 from llm_calls') if hashlib.sha256(r.encode()).hexdigest() != h]
sys.exit(1 if bad else 0)"
check "tokens recorded" test "$(q b1.db 'select sum(prompt_tokens) from llm_calls')" = 3600
check "candidates link their call" test "$(q b1.db 'select count(*) from candidates where round > 0 and llm_call_id is null')" = 0
check "identical kernels are stored once" test "$(q b1.db 'select count(*) from kernels')" -lt "$(q b1.db 'select count(*) from candidates where kernel_hash is not null')"
check "malformed responses are recorded as format_error with no kernel" \
	test "$(q b1.db "select count(*) from candidates where status = 'format_error' and kernel_hash is null and detail like '%no %cuda block%'")" -gt 0
check "failures keep the check and detail" test "$(q b1.db "select count(*) from candidates where status = 'incorrect' and detail like 'output_mismatch:%'")" -gt 0
check "every round is done with its best candidate" \
	test "$(q b1.db "select count(*) from rounds where status != 'done' or (best_candidate is null and exists (select 1 from candidates c where c.run_id = rounds.run_id and c.problem_id = rounds.problem_id and c.round = rounds.round and c.status = 'correct'))")" = 0
check "the run is finished" test "$(q b1.db 'select status from runs')" = finished

# Budgets per problem.
check "search with --impls 5" sh -c "'$SF' --db bud.db --root root --rounds 5 --k 3 --m 2 --impls 5 >/dev/null"
check "no problem has more than 5 implementations" test "$(q bud.db 'select max(n) from (select count(*) n from candidates group by problem_id)')" -le 5
check "a budget ends the search as finished" test "$(q bud.db 'select status from runs')" = finished
check "search with --calls 3" sh -c "'$SF' --db calls.db --root root --rounds 5 --k 2 --m 2 --calls 3 >/dev/null"
check "no problem made more than 3 proposer calls" test "$(q calls.db 'select max(n) from (select count(*) n from llm_calls group by problem_id)')" = 3

# Revise: a line of kernels, failures repaired with the failure fed back.
check "revise search" sh -c "'$SF' --db rev.db --root root --strategy revise --rounds 12 --seed 4 >/dev/null"
check "one kernel per turn" test "$(q rev.db 'select max(n) from (select count(*) n from candidates group by problem_id, round)')" = 1
check "failed kernels are repaired" test "$(q rev.db "select count(*) from llm_calls where purpose = 'repair'")" -gt 0
check "a repair's parent is the previous turn's kernel" \
	test "$(q rev.db "select count(*) from candidates c join llm_calls l on l.id = c.llm_call_id, json_each(c.parent_ids) p join candidates x on x.id = p.value where l.purpose = 'repair' and x.round = c.round - 1 and x.status not in ('correct')")" = "$(q rev.db "select count(*) from llm_calls where purpose = 'repair'")"
check "each repair follows a failure" \
	test "$(q rev.db "select count(*) from candidates c where c.round > 0 and exists (select 1 from candidates x where x.problem_id = c.problem_id and x.round = c.round - 1 and x.status != 'correct') and c.llm_call_id not in (select id from llm_calls where purpose = 'repair')")" = 0

# Model output that is not UTF-8 is kept, not refused, as UTF-8 with U+FFFD
# for those bytes (the dataset's JSON must carry it); candidate files made
# from it are UTF-8 too (bytes that are not are the engine's format error,
# tests/t0450).
check "search whose ideas are not valid UTF-8" sh -c "'$SF' --db utf.db --root root --rounds 1 --k 2 --m 1 --bad-utf8 >/dev/null"
check "ideas and responses are kept, U+FFFD for the bytes" python3 -c "
import sqlite3, sys
db = sqlite3.connect('utf.db'); db.text_factory = bytes
t = [r[0] for r in db.execute('select text from ideas')]
r = [r[0] for r in db.execute(\"select response from llm_calls where purpose = 'ideas'\")]
fffd = ' \ufffd\ufffd\ufffd'.encode()
sys.exit(0 if t and r and all(fffd in x and x.decode() for x in t + r) else 1)"
check "candidate files made from them are UTF-8" python3 -c "
import sqlite3, sys
db = sqlite3.connect('utf.db'); db.text_factory = bytes
k = [r[0] for r in db.execute('select source from kernels')]
ok = all(x.decode('utf-8') is not None for x in k) and any(' \ufffd\ufffd\ufffd'.encode() in x for x in k)
sys.exit(0 if ok else 1)"
