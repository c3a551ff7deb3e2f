#!/bin/sh
# The search resumes exactly: a 3-problem search killed with SIGKILL at
# random points (>= 10 times) and resumed each time ends with the rows of
# an uninterrupted run with the same seed (made with 3 threads, the killed
# one with 1); the store passes
# integrity_check. Both strategies; compile-only too.
. "$KF_ROOT/tests/lib.sh"
SF="$KF_BUILD/tests/searchfake"
DUMP="python3 $KF_ROOT/tests/tools/dbdump.py"
# Wall-clock columns differ between runs by nature.
EXCL="--exclude runs.created_at --exclude runs.finished_at --exclude rounds.started_at
 --exclude rounds.finished_at --exclude llm_calls.created_at --exclude llm_calls.latency_ms --exclude llm_calls.attempts
 --exclude ideas.created_at --exclude candidates.created_at
 --exclude search_sessions"

mkfixture() { # root
	for i in 1 2 3; do
		n=$(printf %03d "$i")
		d="$1/problems/level1/${n}_P$i"
		mkdir -p "$d"
		printf 'extern "C" __global__ void ref(const float* x, float* y, long long n) { }\n/*@launch\nref<<<4, 256>>>(x, y, n);\n@*/\n// %s\n' \
			"$i" >"$d/reference.cu"
		echo "class Model: pass  # $i" >"$d/reference.py"
		fixture_problem "$d"
	done
}
mkfixture root

# kill_resume NAME ARGS...: reference run, then >= 10 kills and a final run.
kill_resume() {
	name=$1; shift
	"$SF" --db "$name-ref.db" --root root "$@" >"$name-ref.out" 2>&1
	check "$name: uninterrupted run finishes" grep -q ' finished ' "$name-ref.out"
	kills=0; mid=0; i=0; resumes=0
	while [ "$kills" -lt 12 ] && [ "$i" -lt 40 ]; do
		i=$((i + 1))
		# Once the run exists, resume it the way a user would: with no options.
		if [ -f "$name.db" ] && [ "$(sqlite3 "$name.db" 'select count(*) from runs' 2>/dev/null)" = 1 ]; then
			set -- --resume "$@"; resumes=$((resumes + 1))
		fi
		"$SF" --db "$name.db" --root root --delay-ms 25 --jobs 1 "$@" >"$name.out" 2>&1 &
		pid=$!
		# a random point: 0.02 to 0.22 s (creating the store alone takes ~0.1 s)
		sleep "0.$(awk -v s="$i$$" 'BEGIN{srand(s); printf "%03d", 20 + int(rand()*200)}')"
		if kill -9 "$pid" 2>/dev/null; then
			kills=$((kills + 1))
		fi
		wait "$pid" 2>/dev/null
		[ "$1" = --resume ] && shift
		[ "$(sqlite3 "$name.db" 'select status from runs' 2>/dev/null)" = finished ] && break
		mid=$((mid + 1))
	done
	"$SF" --db "$name.db" --root root --resume >"$name.out" 2>&1 ||
		"$SF" --db "$name.db" --root root "$@" >"$name.out" 2>&1
	check "$name: resumed run finishes" grep -q ' finished' "$name.out"
	if [ "$kills" -ge 10 ]; then ok "$name: killed $kills times ($mid mid-run, $resumes resumed with no options)"; else nok "$name: only $kills kills"; fi
	$DUMP $EXCL "$name-ref.db" >"$name-ref.txt"
	$DUMP $EXCL "$name.db" >"$name.txt"
	if cmp -s "$name-ref.txt" "$name.txt"; then
		ok "$name: same rows as the uninterrupted run"
	else
		nok "$name: rows differ"
		diff "$name-ref.txt" "$name.txt" | head -n 20 | sed 's/^/# /'
	fi
	check "$name: candidates were recorded" grep -q '^== candidates ([1-9]' "$name.txt"
	check "$name: integrity_check ok" sh -c "test \"\$(sqlite3 '$name.db' 'PRAGMA integrity_check')\" = ok"
	check "$name: foreign keys hold" sh -c "test -z \"\$(sqlite3 '$name.db' 'PRAGMA foreign_key_check')\""
}

kill_resume branch --rounds 5 --k 3 --m 2 --seed 7
kill_resume revise --strategy revise --rounds 12 --seed 11
kill_resume conly --compile-only --rounds 4 --k 3 --m 2 --seed 3
kill_resume budget --rounds 6 --k 3 --m 2 --impls 20 --calls 14 --seed 5

# Another seed gives another run (and other kernels); the same config is the same run.
"$SF" --db branch-ref.db --root root --rounds 5 --k 3 --m 2 --seed 7 >again.out 2>&1
check "the same search again is the same, finished run" grep -q 'finished .*(resumed)' again.out
"$SF" --db branch-ref.db --root root --rounds 5 --k 3 --m 2 --seed 8 >seed8.out 2>&1
check "another seed is a new run" sh -c "test \$(sqlite3 branch-ref.db 'select count(*) from runs') = 2"
check "another seed proposes other ideas" sh -c "test \$(sqlite3 branch-ref.db 'select count(distinct text) from ideas') -gt \$(sqlite3 branch-ref.db \"select count(distinct text) from ideas where run_id = (select id from runs order by rowid limit 1)\")"

# Wall time is per invocation and not part of the run's identity: a run
# stopped by it is continued by the next invocation, to the same rows.
"$SF" --db wall.db --root root --rounds 5 --k 3 --m 2 --seed 7 --delay-ms 60 --wall 0.3 >wall.out 2>&1
check "a wall-time limit stops the run" test "$(sqlite3 wall.db 'select status from runs')" = stopped
check "it stopped part-way" test "$(sqlite3 wall.db 'select count(*) from candidates')" -lt "$(sqlite3 branch.db 'select count(*) from candidates')"
"$SF" --db wall.db --root root --resume >wall.out 2>&1
check "resumed, it finishes" grep -q ' finished' wall.out
# (runs.config records the first invocation's wall-time limit)
$DUMP $EXCL --exclude runs.config wall.db >wall.txt
$DUMP $EXCL --exclude runs.config branch.db >branch-noconf.txt
check "with the rows of the uninterrupted run" cmp -s branch-noconf.txt wall.txt
