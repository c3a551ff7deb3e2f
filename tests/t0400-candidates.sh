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
	# The compile-forever candidate gets short limits; the others room on a
	# loaded machine.
	lim=60
	[ "$status" = compile_timeout ] && lim=4
	"$KFC" --exe "$KFORGE" --fixtures "$FIX" --timeout $lim --cpu $lim "$f" >"$T_TMP/out" 2>"$T_TMP/err"
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

# The pool: several threads, jobs submitted together, all results back.
if [ "$HAVE_NVRTC" = 1 ]; then
	"$KFC" --exe "$KFORGE" --pool 2 --repeat 4 "$KF_ROOT/tests/candidates/relu_ok.cu" \
		"$KF_ROOT/tests/candidates/launch_two.cu" >"$T_TMP/out" 2>&1
	check "pool: exit 0" test $? -eq 0
	contains "pool: 4 compiles of one file, a median" "$T_TMP/out" "^median [0-9.]+ ms over 4 compiles \(pool of 2\)"
	contains "pool: format errors are reported without a compile" "$T_TMP/out" "launch_two.cu: format_error: 13:1"
fi

# Reuse: one device source compiles once per call; with KF_COMPILE_CACHE an
# ok result is kept for later calls with the same options and NVRTC (only
# an ok one). A private cache here, not the runner's.
if [ "$HAVE_NVRTC" = 1 ]; then
	C="$KF_ROOT/tests/candidates"
	cp "$C/relu_ok.cu" a.cu && cp "$C/relu_ok.cu" b.cu
	CC="$T_TMP/cc"
	mkdir -p "$CC"
	KF_COMPILE_CACHE="$CC" "$KFC" --exe "$KFORGE" a.cu b.cu >reuse1.out 2>&1
	check "reuse: both files of one source get a result, the same" sh -c \
		"test \"\$(sed -n 's/^a.cu: ok //p' reuse1.out)\" = \"\$(sed -n 's/^b.cu: ok //p' reuse1.out)\" &&
		 grep -q '^a.cu: ok .*kernel relu_f32' reuse1.out"
	check "reuse: from one compile" test "$(sed -n 1p "$CC/stats")" = "compiled 1 reused 0 same 1"
	KF_COMPILE_CACHE="$CC" "$KFC" --exe "$KFORGE" b.cu >reuse2.out 2>&1
	check "reuse: a later call takes the kept result" sh -c \
		"grep -q '^b.cu: ok .*kernel relu_f32' reuse2.out && test \"\$(sed -n 2p '$CC/stats')\" = 'compiled 0 reused 1 same 0'"
	KF_COMPILE_CACHE="$CC" "$KFC" --exe "$KFORGE" --arch sm_80 b.cu >reuse3.out 2>&1
	check "reuse: not for another architecture" sh -c \
		"grep -q '^b.cu: ok .*sm_80' reuse3.out && test \"\$(sed -n 3p '$CC/stats')\" = 'compiled 1 reused 0 same 0'"
	KF_COMPILE_CACHE="$CC" KFORGE_NVRTC=/nonexistent/libnvrtc.so "$KFC" --exe "$KFORGE" b.cu >reuse4.out 2>&1
	contains "reuse: not for another NVRTC" reuse4.out "^b.cu: sandbox_error: .*NVRTC not found"
	# a kernel under two problems' lines compiles once; another comment is
	# another source
	{ echo "// problem: pa"; cat "$C/relu_ok.cu"; } >pa.cu
	{ echo "// problem: pb"; cat "$C/relu_ok.cu"; } >pb.cu
	{ echo "// problems: pa"; cat "$C/relu_ok.cu"; } >pc.cu
	mkdir -p cc2
	KF_COMPILE_CACHE="$T_TMP/cc2" "$KFC" --exe "$KFORGE" pa.cu pb.cu pc.cu >reuse6.out 2>&1
	check "reuse: one kernel under two problem lines compiles once" sh -c \
		"test \"\$(grep -c '^p[abc].cu: ok ' reuse6.out)\" -eq 3 && test \"\$(cat cc2/stats)\" = 'compiled 2 reused 0 same 1'"
	KF_COMPILE_CACHE="$CC" "$KFC" --exe "$KFORGE" "$C/compile_error.cu" >/dev/null 2>&1
	KF_COMPILE_CACHE="$CC" "$KFC" --exe "$KFORGE" "$C/compile_error.cu" >reuse5.out 2>&1
	check "reuse: a compile error is compiled again, not kept" sh -c \
		"grep -q ': compile_error: ' reuse5.out && test \"\$(sed -n 6p '$CC/stats')\" = 'compiled 1 reused 0 same 0'"
	# kept across clones: the key names kforge's compile sources, not its path
	cp "$KFORGE" kforge-copy
	KF_COMPILE_CACHE="$CC" "$KFC" --exe "$T_TMP/kforge-copy" b.cu >reuse7.out 2>&1
	check "reuse: from another kforge of the same compile code" sh -c \
		"grep -q '^b.cu: ok .*kernel relu_f32' reuse7.out && test \"\$(tail -n 1 '$CC/stats')\" = 'compiled 0 reused 1 same 0'"
fi

# The CPU-time limit (the wall limit is the loop's 4 s above).
if [ "$HAVE_NVRTC" = 1 ]; then
	"$KFC" --exe "$KFORGE" --timeout 60 --cpu 3 "$KF_ROOT/tests/candidates/compile_forever.cu" >"$T_TMP/out" 2>&1
	contains "compile forever: stopped by the CPU-time limit" "$T_TMP/out" \
		"compile_timeout: compile hit the CPU-time limit \(3 s\)|compile_error: .*out of memory"
fi

# The address-space limit: the exponential template runs out of memory
# under 1.5 GiB and that is a compile error with NVRTC's message (not a
# crash of kforge). ASan builds lift the limit, so not there.
case "$KF_BUILD" in
*-san) skip "address-space limit is off under ASan" ;;
*)
	if [ "$HAVE_NVRTC" = 1 ]; then
		"$KFC" --exe "$KFORGE" --as-mib 1500 --timeout 30 --cpu 30 --log \
			"$KF_ROOT/tests/candidates/compile_forever.cu" >"$T_TMP/out" 2>&1
		contains "memory bomb: stopped by the address-space limit" "$T_TMP/out" \
			"compile_error: .*|out of memory|compile_timeout"
		lacks "memory bomb: kfcompile itself did not fail" "$T_TMP/out" "sandbox_error"
	fi ;;
esac
