#!/bin/sh
# kforge eval without a GPU: --compile-only compiles and records kernels,
# compiles and evals rows (status not_run); a second eval is served from
# the store; --force evaluates again; format and compile errors get their
# statuses and exit 4; a GPU eval on a machine without one exits 3 with
# one line.
. "$KF_ROOT/tests/lib.sh"
export KFORGE_ROOT="$KF_ROOT"
C="$KF_ROOT/tests/candidates"
DB="$KFORGE_DB"
q() { sqlite3 "$DB" "$1"; }

need_nvrtc "compile-only evals cannot run"

expect_exit 0 "compile-only eval of an honest kernel exits 0" "$KFORGE" eval 19 "$C/relu_ok.cu" --compile-only
contains "prints status not_run" "$T_TMP/out" "^status: not_run"
contains "prints ptxas statistics" "$T_TMP/out" "relu_f32: [0-9]+ registers"
# Issue 36: eval says where it recorded (compile-only records too).
check "says where it recorded, on its last line" test "$(tail -n 1 "$T_TMP/out")" = \
	"recorded: evaluation $(q 'select substr(id, 1, 16) from evals') in $KFORGE_DB"
check "one kernels row" test "$(q 'select count(*) from kernels')" -eq 1
check "one ok compiles row for sm_90a (what an H100 or H200 runs)" test "$(q "select count(*) from compiles where status='ok' and arch='sm_90a'")" -eq 1
check "compile_kernels row with registers" test "$(q "select count(*) from compile_kernels where kernel_name='relu_f32' and registers > 0")" -eq 1
check "evals row not_run for level1/019_ReLU" test "$(q "select count(*) from evals where status='not_run' and problem_id='level1/019_ReLU'")" -eq 1
check "the problems row exists" test "$(q "select count(*) from problems where id='level1/019_ReLU'")" -eq 1
t1=$(q "select created_at || duration_ms from compiles")

expect_exit 0 "--db after the command" "$KFORGE" eval 19 "$C/relu_ok.cu" --compile-only --db "$T_TMP/after.db"
check "stores the eval there" test "$(sqlite3 "$T_TMP/after.db" "select count(*) from evals where status='not_run'")" -eq 1

# Issue 41: --profile changes nothing without a GPU (no profile, no error).
expect_exit 0 "compile-only eval with --profile exits 0" "$KFORGE" eval 19 "$C/relu_ok.cu" --compile-only --profile --json --db "$T_TMP/prof.db"
check "with --profile: not_run, profile null, no profiles row" python3 -c "
import json, sqlite3, sys
d = json.load(open('$T_TMP/out'))
n = sqlite3.connect('$T_TMP/prof.db').execute('select count(*) from profiles').fetchone()[0]
sys.exit(0 if d['status'] == 'not_run' and d['profile'] is None and n == 0 else 1)"

expect_exit 0 "the second eval exits 0" "$KFORGE" eval level1/019_ReLU "$C/relu_ok.cu" --compile-only --json
check "the second eval is served from the store" python3 -c "import json,sys; d=json.load(open('$T_TMP/out')); sys.exit(0 if d['cached'] and d['status']=='not_run' and len(d['eval_id'])==64 else 1)"
check "no second compile happened" test "$(q 'select created_at || duration_ms from compiles')" = "$t1"
check "still one evals row" test "$(q 'select count(*) from evals')" -eq 1
check "the JSON names the store" python3 -c "import json,sys; d=json.load(open('$T_TMP/out')); sys.exit(0 if d['store']=='$KFORGE_DB' and d['problem']=='level1/019_ReLU' else 1)"
for p in 19_ReLU.py level1/19_ReLU; do
	expect_exit 0 "eval $p (KernelBench's name)" "$KFORGE" eval $p "$C/relu_ok.cu" --compile-only
	contains "is problem level1/019_ReLU" "$T_TMP/out" "^problem: level1/019_ReLU "
	contains "says it was served from the store" "$T_TMP/out" \
		"^recorded: evaluation [0-9a-f]{16} in .*\(served from there; --force evaluates again\)$"
done
check "still one evals row after them" test "$(q 'select count(*) from evals')" -eq 1

# CRLF line ends and trailing blanks: the same kernel (content address).
sed 's/$/  \r/' "$C/relu_ok.cu" >crlf.cu
expect_exit 0 "CRLF variant" "$KFORGE" eval ReLU crlf.cu --compile-only --json
check "the CRLF variant is the same kernel, cached" python3 -c "import json,sys; d=json.load(open('$T_TMP/out')); sys.exit(0 if d['cached'] else 1)"

expect_exit 0 "--force evaluates again" "$KFORGE" eval 19 "$C/relu_ok.cu" --compile-only --force --json
check "forced result is not cached" python3 -c "import json,sys; d=json.load(open('$T_TMP/out')); sys.exit(0 if not d['cached'] else 1)"
check "still one evals row after --force" test "$(q 'select count(*) from evals')" -eq 1

expect_exit 0 "another architecture is another evaluation" "$KFORGE" eval 19 "$C/relu_ok.cu" --compile-only --arch sm_80
check "two evals rows (sm_90a, sm_80)" test "$(q 'select count(*) from evals')" -eq 2

expect_exit 4 "an #include of /etc/passwd is a format error (exit 4)" "$KFORGE" eval 19 "$C/inc_etc_passwd.cu" --compile-only
contains "status format_error" "$T_TMP/out" "^status: format_error"
contains "the error has line:col" "$T_TMP/out" "3:10:"
lacks "no file contents in the output" "$T_TMP/out" "root:x:0"
check "no file contents in the store" sh -c "! sqlite3 '$DB' 'select log, message from compiles; select detail from evals' | grep -q 'root:x:0'"
check "format_error compiles row" test "$(q "select count(*) from compiles where status='format_error'")" -eq 1

expect_exit 4 "a compile error exits 4" "$KFORGE" eval 19 "$C/compile_error.cu" --compile-only
contains "status compile_error" "$T_TMP/out" "^status: compile_error"
contains "the NVRTC log is shown" "$T_TMP/out" "error: expected a"
check "compile_error eval row with the log" test "$(q "select count(*) from evals where status='compile_error' and detail like '%expected a%'")" -eq 1

cat >badlaunch.cu <<'CU'
extern "C" __global__ void k(const float* x, float* y, long long n) { }
/*@launch
k<<<ceil_div(batch_size * dim, 256), 2048>>>(x, y, batch_size * dim);
@*/
CU
expect_exit 4 "a block over the device limit is a format error" "$KFORGE" eval 19 badlaunch.cu --compile-only
contains "format_error for the launch block" "$T_TMP/out" "^status: format_error"
contains "with the launch line" "$T_TMP/out" "^3:"

# Candidates are UTF-8 text: other bytes and NUL bytes are format errors
# with the position of the first (exit 4), recorded with U+FFFD in their
# place; never an SQL error.
printf 'extern "C" __global__ void k(const float* x, float* y, long long n) { /* caf\351 */ }\n/*@launch\nk<<<1, 1>>>(x, y, batch_size * dim);\n@*/\n' >latin1.cu
expect_exit 4 "a candidate that is not UTF-8 is a format error (exit 4)" "$KFORGE" eval 19 latin1.cu --compile-only
contains "status format_error" "$T_TMP/out" "^status: format_error"
contains "at the byte, LINE:COL" "$T_TMP/out" "^1:77: byte 0xE9 is not valid UTF-8"
lacks "not an SQL error" "$T_TMP/err" "syntax error|prepare"
check "its source is stored with U+FFFD" test "$(q "select count(*) from kernels where source like '%caf' || char(65533) || ' */%'")" -eq 1
expect_exit 4 "the same with --json" "$KFORGE" eval 19 latin1.cu --compile-only --json
check "the JSON says format_error" python3 -c "import json,sys; d=json.load(open('$T_TMP/out')); sys.exit(0 if d['status']=='format_error' and d['detail'].startswith('1:77: ') else 1)"
printf 'extern "C" __global__ void k(const float* x, float* y, long long n) { }\n\n  int a\0b;\n/*@launch\nk<<<1, 1>>>(x, y, batch_size * dim);\n@*/\n' >nul.cu
expect_exit 4 "a NUL byte is a format error (exit 4)" "$KFORGE" eval 19 nul.cu --compile-only
contains "status format_error" "$T_TMP/out" "^status: format_error"
contains "LINE:COL: NUL byte" "$T_TMP/out" "^3:8: NUL byte"
check "the NUL candidate is its own kernel (the bytes after NUL count)" test "$(q "select count(*) from kernels where source like '%a' || char(65533) || 'b;%'")" -eq 1
# A compile log echoes a line of three-byte characters; the detail keeps
# 4000 bytes of it, cut at a character's start (one of three is cut inside
# one without that).
for pad in 0 1 2; do
	python3 -c "
import sys
print('__device__ int f() { return undefined%s; } // %s' % ('x' * $pad, '\u20ac' * 1300))
print('extern \"C\" __global__ void k(const float* x, float* y, long long n) { }')
print('/*@launch\nk<<<1, 1>>>(x, y, batch_size * dim);\n@*/')" >euro$pad.cu
	expect_exit 4 "compile error with multibyte characters in the log ($pad)" "$KFORGE" eval 19 euro$pad.cu --compile-only --json
	check "its detail is JSON, without U+FFFD ($pad)" python3 -c "import json,sys; d=json.load(open('$T_TMP/out')); sys.exit(0 if d['status']=='compile_error' and '\ufffd' not in d['detail'] and d['detail'].endswith('\u20ac') else 1)"
done

expect_exit 2 "an unknown problem is a usage error" "$KFORGE" eval 9999 "$C/relu_ok.cu" --compile-only
expect_exit 2 "a missing FILE is a usage error" "$KFORGE" eval 19
expect_exit 2 "a bad --arch is a usage error" "$KFORGE" eval 19 "$C/relu_ok.cu" --compile-only --arch 90

if "$KFORGE" gpu-info >/dev/null 2>&1; then
	skip "a GPU is visible; the no-GPU exit does not apply"
else
	expect_exit 3 "eval without a GPU exits 3" "$KFORGE" eval 19 "$C/relu_ok.cu"
	check "in one line" test "$(wc -l <"$T_TMP/err")" -eq 1
	contains "naming the missing driver or GPU" "$T_TMP/err" "^kforge: (no CUDA driver found|no GPU visible)"
fi
# --quick-launches N (the verifier's sanitizer run): N launch blocks in all,
# the checks counted by the draws the problem has (alive only for recurrent
# models): ReLU 3 checks + 4 timed, an LSTM 4 checks + 3 timed.
qt() { sqlite3 "$1" "select json_extract(protocol_params, '$.timed_trials') from evals"; }
expect_exit 0 "eval --quick-launches 7, ReLU" "$KFORGE" --db q1.db eval 19 \
	"$KF_ROOT/tests/candidates/adversarial/20_honest_relu_vec4.cu" --compile-only --quick-launches 7
check "  4 timed launch blocks (no alive draw)" test "$(qt q1.db)" = 4
expect_exit 0 "eval --quick-launches 7, an LSTM" "$KFORGE" --db q2.db eval level3/36 \
	"$KF_ROOT/tests/candidates/adversarial/44_honest_lstm_hn.cu" --compile-only --quick-launches 7
check "  3 timed launch blocks (its alive draw is a check)" test "$(qt q2.db)" = 3
# The cubin's symbols decide on the CPU too: a device heap call is a
# compile error (engine/compile.c cubin_calls_heap).
expect_exit 4 "eval --compile-only of a kernel calling device malloc" "$KFORGE" --db h.db eval 19 \
	"$KF_ROOT/tests/candidates/adversarial/25_device_heap.cu" --compile-only
contains "  a compile error naming the heap" "$T_TMP/out" "calls device malloc/free"
