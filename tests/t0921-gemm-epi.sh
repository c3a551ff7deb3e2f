#!/bin/sh
# gemm_epi_emit (kernels/emit/builtin_gemm_epi*.c), the fp32-accurate tensor-core
# GEMM with a fused epilogue: shapes (edges off the tiles, K from 1 to 2^20,
# batches, broadcast operands), the four layouts, both cores, both splits,
# mma tilings and epilogues render, pass the launch check and compile with
# NVRTC for sm_90a without spills (the mma core for sm_80 too); two GEMMs
# share one candidate; K slices move the epilogue to the sum kernel; what is
# not supported is refused (exit 1) and bad arguments are errors (exit 2).
# The template matmul_tce applies to exactly the level-1 products it should
# and its kernels compile; emulated on the host at 130 x 197 x 300 (wgmma and
# mma.sync through tests/tools/emulate_shim_tc.h) with both cores and splits
# they match the oracle, and kernels broken on purpose do not. Runs on the
# CPU; tests/gpu/g0510 runs them.
. "$KF_ROOT/tests/lib.sh"

G="$KF_BUILD/tests/gemm_emit"
E="$KF_BUILD/tests/builtin_emit"
need_emulator

mkdir -p fix c
python3 - "$KF_ROOT" <<'PY'
import json, glob, sys
s = json.load(open(glob.glob(sys.argv[1] + "/problems/level1/001_*/spec.json")[0]))
s["id"] = "gfix"
s["inputs"].append({"name": "bias", "role": "input", "dtype": "float32", "shape": ["N"],
                    "dist": {"kind": "uniform", "low": 0.0, "high": 1.0}})
json.dump(s, open("fix/gfix.json", "w"))
PY

# gen FILE ARGS...: one candidate from gemm_emit, every one rendered; make
# test compiles every other one, rotating with the core (rot), so each case
# compiles with two of the four cores (NVRTC time; make test-long: all)
i=0 rot=0
mkdir -p r
gen() {
	i=$((i + 1))
	{ echo "// problem: gfix"; "$G" "$@"; } >"r/$i.cu" 2>"r/$i.err" || nok "gemm_emit $* (exit $?: $(cat "r/$i.err"))"
	every_nth $((i + rot)) 2 1 && cp "r/$i.cu" "c/$i.cu"
	return 0
}
WG='{"core":"wgmma"}'
WG3='{"core":"wgmma","split":"3xtf32","STAGES":3}'
MM='{"core":"mma"}'
MM3='{"core":"mma","split":"3xtf32"}'
MT1='{"core":"mma","BM":64,"BN":64,"WM":2,"WN":2,"STAGES":3}'
MT2='{"core":"mma","BM":256,"BN":64,"WM":4,"WN":2,"split":"3xtf32"}'
MT3='{"core":"mma","BM":64,"BN":256,"WM":2,"WN":4,"STAGES":2}'
AUTO='{"core":"auto"}'
# M N K triples: the tile-aligned square, edges in every dim, K = 1, K odd,
# a tiny output with a huge K (K slices), tall-skinny, N = 1
for tp in "$WG" "$WG3" "$MM" "$MM3"; do
	rot=$((rot + 1))
	for lay in "0 0" "1 0" "0 1" "1 1"; do
		set -- $lay
		gen g 1 4096 4096 4096 "$1" "$2" 0 0 "$tp"
		gen g 3 130 67 33 "$1" "$2" 0 0 "$tp" bias
		gen g 1 257 255 2949 "$1" "$2" 0 0 "$tp" full
	done
	gen g 1 1 1 1 0 0 0 0 "$tp"
	gen g 1 256 256 1048576 0 0 0 0 "$tp" full
	gen g 4 100 128 7 0 1 1 0 "$tp" bias
	gen g 5 64 96 1000 1 0 0 1 "$tp" full
	gen g 1 32768 32 4 0 0 0 0 "$tp"
	gen g 2 511 1 513 0 0 0 0 "$tp" bias
done
for tp in "$MT1" "$MT2" "$MT3" "$AUTO"; do
	rot=$((rot + 1))
	gen g 2 1000 999 1001 0 0 0 0 "$tp" full
	gen g 1 777 333 64 1 1 0 0 "$tp"
done
gen g 1 32 4096 4096 0 0 0 0 "$AUTO"
gen g 1 256 256 65536 0 0 0 0 '{"SPLIT":3}' bias
gen g 1 300 300 300 0 0 0 0 '{"core":"mma","SPLIT":5}' full
# Operands at an element offset (the graph's arena, `arena + OFFSET`): only
# launch arguments, K slices too
export GEMM_EMIT_A="A + 64" GEMM_EMIT_C="C + 128"
gen g 3 130 67 33 0 0 0 0 "$WG" bias
contains "operands may be NAME + OFFSET" "r/$i.cu" '^g<<<.*>>>\(A \+ 64, B, C \+ 128, bias, 130, 67, 33\);$'
gen g 1 256 256 65536 0 0 0 0 '{"SPLIT":3}' bias
contains "  the sum kernel's output too" "r/$i.cu" '^g_sum<<<.*>>>\(g_part, C \+ 128, bias, '
for bad in "A + x" "A + -1" "A+64" "A + " "1A + 2" "A - 3" "A + 1 + 2"; do
	export GEMM_EMIT_A="$bad"
	expect_exit 2 "an operand \"$bad\" is an error" "$G" g 1 64 64 64 0 0 0 0
done
unset GEMM_EMIT_A GEMM_EMIT_C
# Two GEMMs in one candidate (the shared helpers are guarded): wgmma then mma.
"$G" ga 1 200 300 400 0 1 0 0 "$WG" bias >two1.cu
"$G" gb 2 100 50 60 1 0 0 0 "$MM3" full >two2.cu
{
	echo "// problem: gfix"
	sed '/^\/\*@launch/,$d' two1.cu
	sed '/^\/\*@launch/,$d' two2.cu
	echo "/*@launch"
	sed -n '/^\/\*@launch/,/^@\*\//p' two1.cu two2.cu | grep -v '^/\*@launch\|^@\*/'
	echo "@*/"
} >c/two.cu
set -- c/*.cu
total=$#
"$KF_BUILD/tests/kfcompile" --exe "$KFORGE" --arch sm_90a --fixtures fix --pool "$(par_jobs)" \
	--timeout 300 --cpu 300 c/*.cu >nvrtc.out 2>&1
good=$(grep -c '\.cu: ok' nvrtc.out)
check "$good of $total GEMMs pass the launch check and compile for sm_90a" \
	test "$good" -eq "$total" -a "$total" -ge "$(long_tier && echo 70 || echo 35)"
grep '\.cu: ' nvrtc.out | grep -v '\.cu: ok' | head -n 5 | sed 's/^/# /'
lacks "none spills registers" nvrtc.out 'spill_(st|ld) [1-9]'
contains "both GEMMs of one candidate are kernels of it" nvrtc.out 'c/two.cu: ok .*kernel g[ab] .*kernel g[ab] '

# The mma core is sm_80+ (no sm_90a features).
mkdir -p c80
for f in two2; do { echo "// problem: gfix"; cat "$f.cu"; } >c80/$f.cu; done
"$G" g 1 257 255 2949 1 1 0 0 "$MT1" full >c80/x.cu.body && { echo "// problem: gfix"; cat c80/x.cu.body; } >c80/x.cu
"$KF_BUILD/tests/kfcompile" --exe "$KFORGE" --arch sm_80 --fixtures fix --pool "$(par_jobs)" \
	--timeout 300 --cpu 300 c80/*.cu >nvrtc80.out 2>&1
check "the mma core compiles for sm_80" test "$(grep -c '\.cu: ok' nvrtc80.out)" -eq 2

# K slices: a scratch of SPLIT partials and a sum kernel that runs the
# epilogue (the GEMM kernel then has none of the epilogue's parameters).
"$G" s 1 256 256 1048576 0 0 0 0 "$WG" bias >split.cu
contains "a long K is sliced into scratch" split.cu '^scratch float s_part\[[0-9]+\];'
contains "the GEMM writes the partials" split.cu '^s<<<dim3\(2, 2, [0-9]+\), 256, [0-9]+>>>\(A, B, s_part, 256, 256, 1048576\);'
contains "the sum kernel gets C and the epilogue's arguments" split.cu '^s_sum<<<256, 256>>>\(s_part, C, bias, 65536, 256, 65536\);'
contains "and runs the epilogue" split.cu 'kf_c\[i\] = s_epi\(\(float\)acc'
"$G" u 1 4096 4096 4096 0 0 0 0 "$WG" bias >one.cu
contains "an unsliced GEMM takes the epilogue's parameters" one.cu '^u<<<dim3\(32, 32, 1\), 256, 168960>>>\(A, B, C, bias, 4096, 4096, 4096\);'
lacks "and has no scratch" one.cu 'scratch'
contains "the epilogue code is in the emitted function" one.cu 'v \+= bias\[n\];'
contains "A [M][K], K % 4 == 0: 16-byte copies of A" one.cu 'kfg_cp16\(sa \+ r \* 128'
"$G" t 1 512 512 512 1 1 0 0 "$WG" >tt.cu
contains "B [N][K] with K % 4 == 0 keeps its tile K-contiguous" tt.cu 'kfg_load_b_nk<BKS>'
contains "A [K][M] is copied 4 bytes at a time" tt.cu 'kfg_cp4\(sa \+ r \* 128 .*gk \* M \+ gr'

# Refusals (exit 1, nothing printed) and errors (exit 2).
refuse() { d=$1; shift; expect_exit 1 "refused: $d" "$G" "$@"; check "  and nothing emitted for $d" test ! -s "$T_TMP/out"; }
refuse "M = 0" g 1 0 64 64 0 0 0 0
refuse "K = 0" g 1 64 64 0 0 0 0 0
refuse "batch = 0" g 0 64 64 64 0 0 0 0
refuse "batch over grid.z" g 70000 64 64 64 0 0 0 0
refuse "K over 2^24" g 1 64 64 20000000 0 0 0 0
refuse "an unknown core" g 1 64 64 64 0 0 0 0 '{"core":"simt"}'
refuse "an unknown split" g 1 64 64 64 0 0 0 0 '{"split":"tf32"}'
refuse "a wgmma tile other than 128 x 128" g 1 64 64 64 0 0 0 0 '{"core":"wgmma","BM":64}'
refuse "an mma tile of 96" g 1 64 64 64 0 0 0 0 '{"core":"mma","BM":96}'
refuse "a warp tile too large" g 1 64 64 64 0 0 0 0 '{"core":"mma","BM":256,"BN":256,"WM":2,"WN":2}'
refuse "512 threads (too few registers for the accumulators)" g 1 64 64 64 0 0 0 0 '{"core":"mma","BM":256,"BN":128,"WM":4,"WN":4}'
refuse "STAGES 9" g 1 64 64 64 0 0 0 0 '{"STAGES":9}'
refuse "SPLIT -1" g 1 64 64 64 0 0 0 0 '{"SPLIT":-1}'
refuse "a string tile" g 1 64 64 64 0 0 0 0 '{"BM":"128"}'
contains "  the reason is given" "$T_TMP/err" 'gemm_epi: '
expect_exit 2 "a kernel name that is not an identifier is an error" "$G" 9g 1 64 64 64 0 0 0 0
expect_exit 2 "an epilogue parameter without a type is an error" "$G" g 1 64 64 64 0 0 0 0 '{}' 'p:, e0'
expect_exit 2 "an epilogue parameter named n (an index) is an error" "$G" g 1 64 64 64 0 0 0 0 '{}' 'p:, float n'
contains "  saying why" "$T_TMP/err" 'not v, b, m or n'
expect_exit 0 "two typed parameters are fine" "$G" g 1 64 64 64 0 0 0 0 '{}' 'p: , const float* __restrict__ x0,float nn'
contains "  and become the epilogue function's" "$T_TMP/out" 'g_epi\(float v, long long b, long long m, long long n , const float\* __restrict__ x0,float nn\)'

# matmul_tce: exactly the level-1 products but matrix-vector (4) and the
# diagonal one (12); defaults (wgmma) and the mma core; triangular masks.
spec_of() { ls "$KF_ROOT"/problems/level1/"$(printf %03d "$1")"_*/spec.json; }
got=""
mkdir -p tce
for n in $(seq 1 100); do
	"$E" render "$(spec_of "$n")" matmul_tce >/dev/null 2>&1 && got="$got $n"
done
check "matmul_tce applies to exactly$got" test "$got" = " 1 2 3 6 7 8 9 10 11 13 14 15 16 17 18"
# make test compiles the wgmma kernels of every other problem and the mma
# ones of the others (NVRTC time; make test-long: both for all)
mkdir -p tcr
j=0
for n in $got; do
	p=$(printf p%03d "$n")
	cp "$(spec_of "$n")" "fix/$p.json"
	{ echo "// problem: $p"; "$E" render "$(spec_of "$n")" matmul_tce; } >"tcr/$p-wg.cu"
	{ echo "// problem: $p"; "$E" render "$(spec_of "$n")" matmul_tce '{"core":"mma"}'; } >"tcr/$p-mma.cu"
	j=$((j + 1))
	every_nth "$j" 2 1 && cp "tcr/$p-wg.cu" tce/
	every_nth $((j + 1)) 2 1 && cp "tcr/$p-mma.cu" tce/
done
set -- tce/*.cu
ntce=$#
"$KF_BUILD/tests/kfcompile" --exe "$KFORGE" --arch sm_90a --fixtures fix --pool "$(par_jobs)" \
	--timeout 300 --cpu 300 tce/*.cu >tce.out 2>&1
check "the $ntce matmul_tce kernels of those problems compile for sm_90a" \
	test "$(grep -c '\.cu: ok' tce.out)" -eq "$ntce" -a "$ntce" -eq "$(long_tier && echo 30 || echo 15)"
grep '\.cu: ' tce.out | grep -v '\.cu: ok' | head -n 5 | sed 's/^/# /'
contains "the upper-triangular product masks its lower half" tcr/p014-wg.cu 'if \(m > n\) v = 0.0f;'
contains "the lower-triangular product its upper half" tcr/p015-mma.cu 'if \(m < n\) v = 0.0f;'
contains "the large-K product (6) slices K" tcr/p006-wg.cu '^mm_tce_sum<<<'
expect_exit 1 "matmul_tce refuses the matrix-vector product" "$E" render "$(spec_of 4)" matmul_tce

# Host emulation at sizes with edges in every dimension and several tiles.
SZ='{"M": 130, "N": 197, "K": 300, "m": 130, "n": 197, "k": 300, "batch_size": 2}'
small_level1 small "$SZ" 1 2 3 13 14 16 17 18
mkdir -p sm
: >emu.jobs
for n in 1 2 3 13 14 16 17 18; do
	s=$(ls small/problems/level1/"$(printf %03d "$n")"_*/spec.json)
	for v in wg:'{}' wg3:'{"split":"3xtf32"}' mma:'{"core":"mma"}'; do
		"$E" render "$s" matmul_tce "${v#*:}" >"sm/$n-${v%%:*}.cu" || nok "$n renders (${v%%:*}) at small sizes"
		printf '%s\0' "emu/$n-${v%%:*}" small "$n" "sm/$n-${v%%:*}.cu" >>emu.jobs
	done
done
# teeth: the A tile written unswizzled (read swizzled), the wgmma descriptor's
# 8-row stride halved
sed 's|kfg_cp16(sa + r \* 128 + ((q ^ (r \& 7)) << 4)|kfg_cp16(sa + r * 128 + (q << 4)|' sm/2-wg.cu >sm/swz.cu
check "the broken kernel writes A unswizzled" test "$(cmp -s sm/swz.cu sm/2-wg.cu; echo $?)" -eq 1
sed 's/(64ull << 32)/(32ull << 32)/' sm/2-wg.cu >sm/sbo.cu
check "the broken kernel's descriptor has another 8-row stride" test "$(cmp -s sm/sbo.cu sm/2-wg.cu; echo $?)" -eq 1
printf '%s\0' emu/swz small 2 sm/swz.cu emu/sbo small 2 sm/sbo.cu >>emu.jobs
export KF_EMU_SIZES="$SZ"
emulate_jobs emu.jobs
bad=0 k=0
for n in 1 2 3 13 14 16 17 18; do
	for v in wg wg3 mma; do
		k=$((k + 1))
		case $(cat "emu/$n-$v.res") in
		ok*) ;;
		*) bad=$((bad + 1)); echo "# $n-$v: $(cut -c1-200 "emu/$n-$v.res")" ;;
		esac
	done
done
check "$k emulated matmul_tce kernels (wgmma, wgmma 3xTF32, mma.sync) match the oracle ($bad failed)" \
	test "$bad" -eq 0 -a "$k" -eq 24
mismatch() { grep -Eq '^not ok .*[0-9]+ elements, [1-9][0-9]* bad' "$1"; }
for t in swz sbo; do
	echo "# $t: $(cut -c1-160 emu/$t.res)"
	check "a kernel broken on purpose ($t) fails the oracle" mismatch emu/$t.res
done
