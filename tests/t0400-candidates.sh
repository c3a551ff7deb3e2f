#!/bin/sh
# The candidate front end on tests/candidates/*.cu: each file says on its
# second line what must happen (`// expect: ok`, `// expect: compile_error`,
# `// expect: compile_timeout`, or `// expect: format_error LINE:COL: REGEX`),
# checked through the launch plan (against tests/fixtures/problems/) and the
# sandboxed NVRTC compile (`kforge __compile`).
. "$KF_ROOT/tests/lib.sh"

KFC="$KF_BUILD/tests/kfcompile"
FIX="$KF_ROOT/tests/fixtures/problems"
if ! "$KFC" --exe "$KFORGE" "$KF_ROOT/tests/candidates/relu_ok.cu" >"$T_TMP/probe" 2>&1 ||
	grep -q "NVRTC not found" "$T_TMP/probe"; then
	HAVE_NVRTC=0
else
	HAVE_NVRTC=1
fi

for f in "$KF_ROOT"/tests/candidates/*.cu; do
	name=$(basename "$f")
	want=$(sed -n '2s|^// expect: ||p' "$f")
	status=${want%% *}
	case "$status" in
	ok | compile_error | compile_timeout)
		if [ "$HAVE_NVRTC" = 0 ]; then
			skip "$name: NVRTC not available"
			continue
		fi ;;
	esac
	# The compile-forever candidate gets short limits.
	"$KFC" --exe "$KFORGE" --fixtures "$FIX" --timeout 4 --cpu 4 "$f" >"$T_TMP/out" 2>"$T_TMP/err"
	rc=$?
	if [ "$rc" -ne 0 ]; then
		nok "$name: kfcompile exited $rc"
		sed 's/^/# /' "$T_TMP/out" "$T_TMP/err" | head -n 10
		continue
	fi
	case "$status" in
	ok) contains "$name: compiles" "$T_TMP/out" ": ok [0-9.]+ ms .*\[kernel " ;;
	compile_error) contains "$name: compile error" "$T_TMP/out" ": compile_error: " ;;
	compile_timeout) contains "$name: stopped by the limit" "$T_TMP/out" ": compile_timeout: " ;;
	format_error)
		pat=${want#format_error }
		contains "$name: $pat" "$T_TMP/out" ": format_error: $pat" ;;
	*) nok "$name: no expectation on line 2" ;;
	esac
done

# ptxas statistics come through: the tiled matmul uses static shared memory.
if [ "$HAVE_NVRTC" = 1 ]; then
	"$KFC" --exe "$KFORGE" --fixtures "$FIX" --plan "$KF_ROOT/tests/candidates/matmul_tiled_ok.cu" >"$T_TMP/out" 2>&1
	contains "matmul: registers and static smem from ptxas" "$T_TMP/out" "kernel sgemm_tiled regs [1-9][0-9]* smem 8448 "
	contains "matmul: the plan has a 2-D grid of 64x64 and 32x32 blocks" "$T_TMP/out" '"block":\[32,32,1\],"grid":\[64,64,1\]'
	contains "options are recorded" "$T_TMP/out" 'options \["--gpu-architecture=sm_90","-std=c\+\+17","-lineinfo","--ptxas-options=-v"\]'
	"$KFC" --exe "$KFORGE" --fixtures "$FIX" --plan "$KF_ROOT/tests/candidates/scratch_two_pass_ok.cu" >"$T_TMP/out" 2>&1
	contains "scratch: zeroed buffer of batch_size floats" "$T_TMP/out" '"scratch":\[\{"count":16,"elem_size":4,"name":"sums","zeroed":true\}\]'
	contains "scratch: float literal passed as float" "$T_TMP/out" '"kind":"float","size":4,"value":1\.0*0*[0-9]*e-0?5'
	"$KFC" --exe "$KFORGE" --fixtures "$FIX" --plan "$KF_ROOT/tests/candidates/launch_scalar_ok.cu" >"$T_TMP/out" 2>&1
	contains "scalars: the problem's negative_slope" "$T_TMP/out" '"kind":"float","size":4,"value":0\.01'
	contains "scalars: a negative double literal" "$T_TMP/out" '"kind":"float","size":8,"value":-1\.0*[0-9]*e-0?5'
	contains "unsigned parameter gets 4 bytes" "$T_TMP/out" '"kind":"int","size":4,"value":262144'
	# Fast math is an option, and recorded.
	"$KFC" --exe "$KFORGE" --fast-math "$KF_ROOT/tests/candidates/relu_ok.cu" >"$T_TMP/out" 2>&1
	contains "--use_fast_math recorded when asked" "$T_TMP/out" '"--use_fast_math"'
	# The fork child (no kforge executable) works too.
	"$KFC" "$KF_ROOT/tests/candidates/relu_ok.cu" >"$T_TMP/out" 2>&1
	contains "fork-without-exec child compiles" "$T_TMP/out" ": ok "
else
	skip "NVRTC not available: ptxas statistics"
fi
