#!/bin/sh
# The built-in proposer once a problem's untried ideas run out: the rest of
# a round revisits the tried ideas that did best (those that gave a correct
# kernel; one that has no parameter points left is revisited once, to apply
# them to a better base), and no implementation re-renders one of its seed
# kernels, any kernel its problem had in an earlier round, or one an earlier
# idea of the same round made (the round's implementations run concurrently).
# Searches with the real proposer and a fake engine.
. "$KF_ROOT/tests/lib.sh"
SF="$KF_BUILD/tests/searchfake"
E="$KF_BUILD/tests/builtin_emit"
S="$KF_ROOT/problems/level1/004_Matrix_vector_multiplication/spec.json"

# 042 and 048: ideas of one round whose points render the same kernel.
expect_exit 0 "a 3-round search of 004, 019, 001, 042 and 048 with the built-in proposer" \
	"$SF" --db "$T_TMP/k.db" --root "$KF_ROOT" --problems 4,19,1,42,48 --rounds 3 --k 4 --m 2 --proposer builtin
q() { sqlite3 "$T_TMP/k.db" "$1"; }
check "004 round 1: its four untried ideas" sh -c \
	"test \"\$(sqlite3 '$T_TMP/k.db' \"select count(*) from ideas i join candidates c on c.idea_id=i.id where c.problem_id like 'level1/004%' and c.round=1 and i.text not like 'Revisit %' group by c.problem_id\")\" -ge 4"
check "004 round 2: every idea is a revisit, and the record counts them" sh -c \
	"test \"\$(sqlite3 '$T_TMP/k.db' \"select count(*) from llm_calls where problem_id like 'level1/004%' and purpose='ideas' and round=2 and json_extract(response,'\$.revisits')>=1 and json_extract(response,'\$.revisits')=json_array_length(json_extract(response,'\$.ideas')) and json_extract(response,'\$.applicable_untried')=0\")\" = 1"
check "revisits go best first (their recorded speedups descend)" python3 - "$T_TMP/k.db" <<'PY'
import json, sqlite3, sys
db = sqlite3.connect(sys.argv[1])
n = 0
for (r,) in db.execute("select response from llm_calls where purpose='ideas'"):
    v = [i["best_speedup"] for i in json.loads(r)["ideas"] if i.get("revisit")]
    n += len(v)
    assert v == sorted(v, reverse=True), v
assert n >= 3, n
PY
check "no candidate re-renders a kernel its problem had in an earlier round" sh -c \
	"test \"\$(sqlite3 '$T_TMP/k.db' \"select count(*) from candidates a join candidates b on a.run_id=b.run_id and a.problem_id=b.problem_id and a.kernel_hash=b.kernel_hash and b.round<a.round\")\" = 0"
check "the implement records count the points skipped as known kernels" sh -c \
	"test \"\$(sqlite3 '$T_TMP/k.db' \"select sum(json_extract(response,'\$.skipped_known')) from llm_calls where purpose='implement'\")\" -ge 1"
check "no two candidates of a round share a kernel" sh -c \
	"test \"\$(sqlite3 '$T_TMP/k.db' \"select count(*) from candidates a join candidates b on a.run_id=b.run_id and a.problem_id=b.problem_id and a.kernel_hash=b.kernel_hash and b.round=a.round and a.id<b.id\")\" = 0"
check "the implement records count the points skipped as made earlier in the round" sh -c \
	"test \"\$(sqlite3 '$T_TMP/k.db' \"select sum(json_extract(response,'\$.skipped_round')) from llm_calls where purpose='implement'\")\" -ge 1"
check "an implement request names the round's ideas before it" sh -c \
	"test \"\$(sqlite3 '$T_TMP/k.db' \"select count(*) from llm_calls where purpose='implement' and json_array_length(json_extract(request,'\$.round_ideas_before'))=3\")\" -ge 1"
check "no kernel of round 1 or later is one of its own seeds again" sh -c \
	"test \"\$(sqlite3 '$T_TMP/k.db' \"select count(*) from candidates c, json_each(c.parent_ids) p join candidates pc on pc.id=p.value where c.kernel_hash=pc.kernel_hash and c.round>=1\")\" = 0"
check "004 round 3: nothing left, and the record says why" sh -c \
	"sqlite3 '$T_TMP/k.db' \"select json_extract(response,'\$.note') from llm_calls where problem_id like 'level1/004%' and purpose='ideas' and round=3\" | grep -q 'no tried one has parameter points left'"

H='[{"idea":"mm-warp-per-row","kernels":1,"correct":1,"best_speedup":1.05},
{"idea":"mv-multirow","kernels":2,"correct":2,"best_speedup":0.9},
{"idea":"mv-mlp","kernels":2,"correct":2,"best_speedup":1.5},
{"idea":"mv-split-k","kernels":2,"correct":0,"best_speedup":0}]'
expect_exit 0 "ideas after a round that tried all four" "$E" ideas "$S" 4 1 "$H"
check "revisits best first; the idea with no correct kernel is left out" sh -c \
	"printf 'mv-mlp revisit\nmm-warp-per-row revisit\nmv-multirow revisit\n' | cmp -s - '$T_TMP/out'"
expect_exit 0 "K=1" "$E" ideas "$S" 1 1 "$H"
check "K bounds the revisits" sh -c "printf 'mv-mlp revisit\n' | cmp -s - '$T_TMP/out'"
H2='[{"idea":"mm-warp-per-row","kernels":1,"correct":1,"best_speedup":2.0},
{"idea":"mm-warp-per-row","kernels":1,"correct":1,"best_speedup":2.0},
{"idea":"mv-mlp","kernels":1,"correct":1,"best_speedup":1.5},
{"idea":"mv-mlp","kernels":1,"correct":1,"best_speedup":1.2},
{"idea":"mv-multirow","kernels":2,"correct":2,"best_speedup":0.9},
{"idea":"mv-split-k","kernels":2,"correct":2,"best_speedup":3.0},
{"idea":"mv-split-k","kernels":2,"correct":2,"best_speedup":0.5}]'
expect_exit 0 "after one revisit of a 1-point idea" "$E" ideas "$S" 4 1 "$H2"
check "revisited ideas with no points left are not offered again; one with points left and one tried once are" sh -c \
	"printf 'mv-mlp revisit\nmv-multirow revisit\n' | cmp -s - '$T_TMP/out' || { sed 's/^/# /' '$T_TMP/out'; false; }"
