#!/bin/sh
# Search sessions (schema v6, issue 42): every `kforge search` invocation
# that runs its problems records one row of search_sessions at its end, with
# the run's status: its GPU (NULL compile-only), wall time, the problems it
# took and their levels, its fresh evaluations and candidate rows, its jobs.
# A stopped invocation records one too and its resume another; a run
# already finished records none.
. "$KF_ROOT/tests/lib.sh"
SF="$KF_BUILD/tests/searchfake"
q() { sqlite3 "$1" "$2"; }
fixture_problem root/problems/level1/001_P1
fixture_problem root/problems/level2/001_P2

"$SF" --db a.db --root root --problems level1/1,level2/1 --rounds 2 --k 2 --m 2 --seed 3 --jobs 2 >a.out 2>&1
check "a search of two problems finishes" grep -q ' finished ' a.out
check "it recorded one session" test "$(q a.db "select count(*) from search_sessions")" = 1
check "on its GPU, finished, with its jobs, problems and levels" test \
	"$(q a.db "select gpu_name||'|'||status||'|'||jobs||'|'||problems||'|'||levels from search_sessions")" = \
	'Fake GPU|finished|2|["level1/001_P1","level2/001_P2"]|[1,2]'
check "its candidates are the run's candidate rows" test \
	"$(q a.db "select candidates = (select count(*) from candidates) and candidates > 0 from search_sessions")" = 1
check "it counts the evaluations it made (those with a kernel)" test \
	"$(q a.db "select evaluations = (select count(*) from candidates where status != 'format_error') from search_sessions")" = 1
check "its window and wall time" test \
	"$(q a.db "select started_at >= (select created_at from runs) and started_at <= ended_at and wall_s > 0 from search_sessions")" = 1
"$SF" --db a.db --root root --problems level1/1,level2/1 --rounds 2 --k 2 --m 2 --seed 3 >a2.out 2>&1
check "the finished search again" grep -q 'finished .*(resumed)' a2.out
check "records no session: nothing ran" test "$(q a.db "select count(*) from search_sessions")" = 1

# Stopped on its wall-time budget, then resumed: one session each; every
# candidate row was made by one of them.
"$SF" --db b.db --root root --problems level1/1,level2/1 --rounds 6 --k 3 --m 2 --seed 5 --jobs 1 --delay-ms 40 --wall 0.4 >b1.out 2>&1
check "a search stopped on its budget" grep -q ' stopped ' b1.out
check "records its session, stopped, with the problem it worked on" test \
	"$(q b.db "select count(*)||' '||status||' '||json_array_length(problems) from search_sessions")" = "1 stopped 1"
check "its levels: those problems'" test "$(q b.db "select levels from search_sessions")" = "[1]"
"$SF" --db b.db --root root --resume >b2.out 2>&1
check "resumed, it finishes" grep -q ' finished' b2.out
check "a second session, finished" test \
	"$(q b.db "select group_concat(status, ' ') from (select status from search_sessions order by started_at, status desc)")" = "stopped finished"
check "the sessions' candidates add up to the run's" test \
	"$(q b.db "select sum(candidates) = (select count(*) from candidates) from search_sessions")" = 1
check "each session has its own id" test "$(q b.db "select count(distinct id) from search_sessions")" = 2

# Compile-only, the real kforge: no GPU name; evaluations are the engine's fresh ones.
if have_nvrtc; then
	export KFORGE_ROOT="$KF_ROOT"
	expect_exit 0 "a compile-only search" "$KFORGE" --db c.db search --problems 19 --compile-only --rounds 1 \
		-k 2 -m 1 --proposer builtin --jobs 1
	check "records a session without a GPU" test \
		"$(q c.db "select count(*)||' '||(gpu_name is null)||' '||status||' '||levels||' '||jobs from search_sessions")" = "1 1 finished [1] 1"
	check "its evaluations are the store's evaluations" test \
		"$(q c.db "select evaluations = (select count(*) from evals) and evaluations > 0 from search_sessions")" = 1
	check "its candidates the store's candidates" test \
		"$(q c.db "select candidates = (select count(*) from candidates) from search_sessions")" = 1
	expect_exit 0 "store check passes" "$KFORGE" --db c.db store check
	expect_exit 0 "store info lists the table" "$KFORGE" --db c.db store info
	contains "... with its one row" "$T_TMP/out" "search_sessions +1$"
else
	skip "no NVRTC here: compile-only searches cannot run"
fi
