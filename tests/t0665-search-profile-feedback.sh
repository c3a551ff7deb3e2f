#!/bin/sh
# Profiles in the search (issue 41): with --profile-feedback the run's
# configuration says so and the LLM's prompts carry the seed kernels'
# profiles (implement) and the best kernel's (ideas), short, as stored in
# llm_calls.request; without it they do not. The built-in proposer puts
# the ideas that the best kernel's limiter asks for first and its record
# says so. No GPU here: a trigger in the store gives every evaluation a
# profile as the engine's profiler would (compile-only evaluations).
. "$KF_ROOT/tests/lib.sh"
. "$KF_ROOT/tests/llm-lib.sh"
export KFORGE_ROOT="$KF_ROOT"
need_nvrtc "compile-only searches cannot run"
q() { sqlite3 "$1" "$2"; }
# profiled DB: a store whose evaluations get a memory-limited profile of
# two kernels, one with a name that is not plain text
profiled() {
	"$KFORGE" --db "$1" store migrate >/dev/null 2>&1 || "$KFORGE" --db "$1" store init >/dev/null
	q "$1" "CREATE TRIGGER fake_profiler AFTER INSERT ON evals BEGIN
	  INSERT OR REPLACE INTO profiles VALUES (NEW.id, NEW.kernel_hash, NEW.problem_id, 'GPU G', 'memory',
	    2, 0.0123, 33554432, 33554432, 91.2, 3.1, 18.0, 0.0, 78.3, 40.0, 'test', '2026-01-01T00:00:00Z');
	  INSERT OR REPLACE INTO profile_kernels VALUES (NEW.id, 0, 'relu_f32', 0.0061, 1, 1, 90.0, 3.0, 18.0, 0.0,
	    78.0, 16, 0, 256, 4096, 'memory');
	  INSERT OR REPLACE INTO profile_kernels VALUES (NEW.id, 1, 'evil' || char(27) || '[2J', 0.0062, 1, 1, 90.0,
	    3.0, 18.0, 0.0, 78.0, 18, 1024, 256, 4096, 'memory');
	END"
}
ARGS="--problems 19 --compile-only --strategy revise --rounds 2 -m 1 --proposer llm"

start_mock pf
profiled pf.db
expect_exit 0 "a revise search with --profile-feedback" "$KFORGE" --db pf.db search $ARGS --profile-feedback
check "every evaluation has its profile (the fake profiler)" \
	test "$(q pf.db 'select count(*) from evals where id not in (select eval_id from profiles)')" = 0
check "the option is in the run's configuration, with profiling" \
	test "$(q pf.db "select json_extract(config, '\$.profile_feedback') || json_extract(config, '\$.profile') from runs")" = 11
check "a revise turn's implement prompt carries its seed's profile" test "$(q pf.db "
	select count(*) from llm_calls where purpose = 'implement' and round >= 1
	and instr(request, 'Its profile (hardware counters') > 0
	and instr(request, 'limiter memory; kernel time 0.0123 ms over 2 launches; DRAM 91% (read 33.6 MB, write 33.6 MB); L2 hit 3%; SM 18%; tensor 0%; occupancy 78%') > 0
	and instr(request, '- evil??2J: 0.0062 ms, 18 registers, shared 1.02 KB, memory-limited') > 0")" -ge 1
check "... and its ideas prompt the best kernel's" test "$(q pf.db "
	select count(*) from llm_calls where purpose = 'ideas' and round >= 1
	and instr(request, 'Profile of the fastest kernel so far (kernel_') > 0
	and instr(request, 'limiter memory; kernel time') > 0")" -ge 1
check "no escape byte of a kernel name reaches a prompt" \
	test "$(q pf.db "select count(*) from llm_calls where instr(request, '\\u001b') > 0 or instr(request, char(27)) > 0")" = 0
check "the profile's text is short" test "$(q pf.db "
	select max(length(substr(request, instr(request, 'limiter memory;'), instr(request, 'memory-limited\\n\\n') - instr(request, 'limiter memory;'))))
	from llm_calls where instr(request, 'limiter memory;') > 0")" -le 600

profiled off.db
expect_exit 0 "the same search without the option" "$KFORGE" --db off.db search $ARGS
check "... is another run, without the keys" \
	test "$(q off.db "select coalesce(json_extract(config, '\$.profile_feedback'), 'none') from runs")" = none
check "... and no prompt carries a profile" \
	test "$(q off.db "select count(*) from llm_calls where instr(request, 'limiter memory') > 0 or instr(request, 'profile') > 0")" = 0
stop_mock

# The built-in proposer: the best kernel (the reference) is memory-limited.
# Round 1 leads with the template's best-known plan (kernels/plans.c); the
# limiter ranks the ideas after it.
profiled b.db
expect_exit 0 "a built-in search over profiled kernels" "$KFORGE" --db b.db search \
	--problems 19 --compile-only --rounds 1 -k 3 -m 1 --proposer builtin
check "its ideas call says the limiter chose them, after the plan" test "$(q b.db "
	select count(*) from llm_calls where purpose = 'ideas' and round = 1
	and json_extract(response, '\$.why') like 'limiter memory (profile of kernel_%): memory and async ideas first'
	and json_extract(response, '\$.ideas[0].plan') = 1
	and json_extract(response, '\$.ideas[1].why') like 'limiter memory (profile of kernel_%'")" = 1
check "... and the other ideas are memory or async ones" test "$(q b.db "
	select count(*) || ' ' || sum(not exists (select 1 from idea_categories c
	where c.idea_id = i.id and c.category in ('memory', 'async'))) from ideas i where i.round = 1
	and i.text not like 'Start from the template''s best-known plan%'")" = "2 0"
"$KFORGE" --db plain.db search --problems 19 --compile-only --rounds 1 -k 2 -m 1 --proposer builtin >/dev/null 2>&1
check "without profiles the record has no limiter" test "$(q plain.db "
	select count(*) from llm_calls where purpose = 'ideas' and (json_extract(response, '\$.why') is not null
	or instr(request, 'limiter') > 0)")" = 0
