#!/bin/sh
# The CPU side of the adversarial suite: with --compile-only, candidates
# expected to fail before the GPU (format_error: includes, grid and shared
# memory limits; compile_error: static shared memory) get that status, and
# every other one compiles (not_run). The GPU side is tests/gpu/g0450.
. "$KF_ROOT/tests/lib.sh"
export KFORGE_ROOT="$KF_ROOT"
need_nvrtc
set --
for f in "$KF_ROOT"/tests/candidates/adversarial/*.cu; do
	set -- "$@" "$(sed -n '1s|^// problem: ||p' "$f")" "$f"
done
"$KF_BUILD/tests/kfeval" --kforge "$KFORGE" --db "$T_TMP/a.db" --compile-only "$@" >res.jsonl 2>err
check "kfeval ran" test $? -eq 0
n=0
while [ $# -gt 0 ]; do
	f=$2; shift 2; n=$((n + 1))
	want=$(sed -n '2s|^// expect: ||p' "$f"); want=${want%% *}
	case "$want" in format_error | compile_error) ;; *) want=not_run ;; esac
	got=$(sed -n "${n}p" res.jsonl | python3 -c "import json,sys; print(json.load(sys.stdin)['status'])")
	check "$(basename "$f"): $want (got $got)" test "$got" = "$want"
done
