#!/bin/sh
# Include attacks never reach NVRTC and their messages never carry the
# contents of the file they name, even when the compile child is asked
# directly (the child re-runs the scan).
. "$KF_ROOT/tests/lib.sh"

KFC="$KF_BUILD/tests/kfcompile"
for f in "$KF_ROOT"/tests/candidates/inc_etc_passwd*.cu "$KF_ROOT"/tests/candidates/inc_splice.cu \
	"$KF_ROOT"/tests/candidates/inc_digraph.cu "$KF_ROOT"/tests/candidates/inc_after_comment.cu; do
	"$KFC" --exe "$KFORGE" --log "$f" >"$T_TMP/out" 2>&1
	contains "$(basename "$f"): refused before the compile" "$T_TMP/out" ": format_error: "
	lacks "$(basename "$f"): no line of /etc/passwd in the output" "$T_TMP/out" "root:"
done

# The child itself refuses (a second line of defence), exit 4, no content.
src='#include "/etc/passwd"
extern "C" __global__ void k() {}
'
len=$(printf '%s' "$src" | wc -c)
{ printf 'KFC1 1 %s\n--gpu-architecture=sm_90\n' "$len"; printf '%s' "$src"; } >"$T_TMP/req"
expect_exit 4 "kforge __compile refuses an include of /etc/passwd" "$KFORGE" __compile <"$T_TMP/req"
contains "and says why with line:col" "$T_TMP/err" '^1:10: `#include "/etc/passwd"` is not allowed'
lacks "without the file's contents" "$T_TMP/err" "root:"
lacks "and writes no reply" "$T_TMP/out" "KFR1"

# Malformed requests are refused (exit 3), not compiled.
printf 'KFC1 1 999\n-x\n' >"$T_TMP/req"
expect_exit 3 "a request with a wrong length is refused" "$KFORGE" __compile <"$T_TMP/req"
printf 'garbage' >"$T_TMP/req"
expect_exit 3 "a malformed request is refused" "$KFORGE" __compile <"$T_TMP/req"
expect_exit 0 "__compile --help works" "$KFORGE" __compile --help
