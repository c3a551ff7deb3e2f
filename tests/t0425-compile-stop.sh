#!/bin/sh
# A stop signal (Slurm's SIGTERM to every process of a job, a kill of the
# process tree) that reaches an NVRTC compile child is not the candidate's
# verdict: NVRTC catches SIGTERM and returns an empty failure, which once was
# recorded as a compile_error. Now the child holds the signal while NVRTC
# runs and ends by it afterwards: "interrupted" (nothing recorded) or, for a
# compile that hits its wall limit first, compile_timeout.
. "$KF_ROOT/tests/lib.sh"

KFC="$KF_BUILD/tests/kfcompile"
if ! "$KFC" --exe "$KFORGE" "$KF_ROOT/tests/candidates/relu_ok.cu" 2>&1 | grep -q ': ok '; then
	skip "NVRTC not available: compile stop"
	exit 0
fi
"$KFC" --exe "$KFORGE" --timeout 4 "$KF_ROOT/tests/candidates/compile_forever.cu" >out.txt 2>&1 &
pid=$!
# Signal the child once NVRTC is busy inside the compile.
i=0
while [ $i -lt 100 ] && ! pgrep -P "$pid" -f "__compile" >/dev/null 2>&1; do sleep 0.05; i=$((i + 1)); done
sleep 0.5
pkill -TERM -P "$pid" -f "__compile"
wait "$pid"
sed 's/^/# /' out.txt
check "a SIGTERM mid-compile is no compile_error verdict" \
	sh -c "grep -Eq 'compile interrupted|compile_timeout' out.txt && ! grep -q ': compile_error' out.txt"
