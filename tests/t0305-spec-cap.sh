#!/bin/sh
# One cap for spec.json (8 MiB, PROBLEM_SPEC_MAX) in one reader: a valid
# spec over 1 MiB works in problems show, eval and search alike; one over
# 8 MiB is refused by each; a broken spec is listed as BROKEN by
# problems list, which lists every other problem and exits 4.
. "$KF_ROOT/tests/lib.sh"
need_nvrtc "compile-only evals cannot run"
R="$T_TMP/root"
mkdir -p "$R/problems/level1" "$R/templates"
cp -r "$KF_ROOT/templates/prompts" "$R/templates/" 2>/dev/null
for p in 019_ReLU 020_LeakyReLU 021_Sigmoid; do cp -r "$KF_ROOT/problems/level1/$p" "$R/problems/level1/"; done
# 019: 1.5 MiB of whitespace after the JSON (the largest level-3 spec is 949 KB)
S="$R/problems/level1/019_ReLU/spec.json"
head -c 1572864 /dev/zero | tr '\0' ' ' >>"$S"
check "the spec is over 1 MiB" test "$(stat -c %s "$S")" -gt 1048576
export KFORGE_ROOT="$R"
expect_exit 0 "problems show reads it" "$KFORGE" problems show 19
expect_exit 0 "eval --compile-only reads it" "$KFORGE" --db e.db eval 19 "$KF_ROOT/tests/candidates/relu_ok.cu" --compile-only
check "... and stores the spec whole" test "$(sqlite3 e.db "select length(spec) from problems where id = 'level1/019_ReLU'")" -gt 1048576
expect_exit 0 "search --compile-only reads it" "$KFORGE" --db s.db search --problems 19 --compile-only --rounds 1 -k 1 -m 1
contains "... and finishes" "$T_TMP/out" "finished: 1 problems"
# 020 over the cap: refused the same way everywhere, naming the cap
S2="$R/problems/level1/020_LeakyReLU/spec.json"
head -c 8500000 /dev/zero | tr '\0' ' ' >>"$S2"
expect_exit 1 "problems show refuses a spec over 8 MiB" "$KFORGE" problems show 20
contains "... naming the file and the cap" "$T_TMP/err" "020_LeakyReLU/spec.json.*8388608"
expect_exit 1 "eval refuses it" "$KFORGE" --db e.db eval 20 "$KF_ROOT/tests/candidates/relu_ok.cu" --compile-only
contains "... the same way" "$T_TMP/err" "020_LeakyReLU/spec.json.*8388608"
# 021: not JSON
printf '{"id": "level1/021_Sigmoid", ' >"$R/problems/level1/021_Sigmoid/spec.json"
expect_exit 4 "problems list with broken specs lists the rest, then exits 4" "$KFORGE" problems list
contains "the good problem is listed" "$T_TMP/out" "^level1/019_ReLU "
contains "the oversized one is listed as BROKEN" "$T_TMP/out" "^level1/020_LeakyReLU +BROKEN"
contains "the corrupt one is listed as BROKEN" "$T_TMP/out" "^level1/021_Sigmoid +BROKEN"
contains "the error says why" "$T_TMP/err" "021_Sigmoid/spec.json: invalid JSON"
contains "and how many" "$T_TMP/err" "2 problem spec\(s\) are broken"
expect_exit 4 "problems list --json too" "$KFORGE" problems list --json
check "--json: each with its status, the broken ones with their error" python3 -c "
import json
a = json.load(open('$T_TMP/out'))
st = {x['id']: x['status'] for x in a}
assert st == {'level1/019_ReLU': 'ok', 'level1/020_LeakyReLU': 'broken', 'level1/021_Sigmoid': 'broken'}, st
assert 'invalid JSON' in [x for x in a if x['id'] == 'level1/021_Sigmoid'][0]['error']
"
