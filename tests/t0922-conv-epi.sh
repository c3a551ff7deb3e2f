#!/bin/sh
# conv_epi_emit (kernels/emit/builtin_conv_epi*.c: implicit GEMM, transposed by
# phase; the mma.sync core by default, the sm_90a wgmma core with "core":
# "wgmma", the 3xTF32 wmma core with "core": "wmma") and its level-1
# template conv_tce: it applies to exactly the level-1 convolutions with 8
# or more output channels a group (not depthwise, not the separable pair);
# every one renders (defaults, the three cores, the catalogue ideas), passes
# the launch check at full size and compiles with NVRTC for sm_90a without
# spills (defaults for all; the wmma core, the wgmma core, other tilings and
# the ideas for a sixth to a third each; the mma core and a third of the
# level-2 graph's convs also for sm_80); emulated on the CPU at small sizes
# (forward: conv_small_root.py, transposed: emulate_convt.py; mma.sync and
# wgmma through tests/tools/emulate_shim_tc.h) with the three cores (the
# wgmma one also with one warpgroup a block on half the synthetic shapes) and
# other tilings, the kernels match the oracle; so do synthetic shapes (conv_epi_synth.py:
# groups, odd channel counts, strides, dilation, output padding, phases
# without taps, bias as the epilogue), rendered both by conv_tce and by
# conv_epi_emit itself (literal sizes, tests/helpers/convepi_emit), and the
# strided transposed ones with their phases fastest in grid.x (PO 1).
# Refusals, and kernels broken on purpose.
. "$KF_ROOT/tests/lib.sh"

TOOLS="$KF_ROOT/tests/tools"
E="$KF_BUILD/tests/builtin_emit"
CE="$KF_BUILD/tests/convepi_emit"
FWD="50 54 55 56 59 60 62 63 66 67 76 80 87"
TRN="57 58 61 64 65 68 69 70 71 72 73 74 75 77 78 79 81"
if [ ! -d "$KF_ROOT/problems/level1" ]; then
	skip "no problems/ in this tree"
	exit 0
fi
need_emulator

spec_of() { ls "$1"/problems/level1/"$(printf %03d "$2")"_*/spec.json; }

got=""
for n in $(seq 1 100); do
	"$E" render "$(spec_of "$KF_ROOT" "$n")" conv_tce >/dev/null 2>&1 && got="$got $n"
done
want=$(echo $FWD $TRN | tr ' ' '\n' | sort -n | tr '\n' ' ')
check "conv_tce applies to exactly$got" test "$(echo $got)" = "$(echo $want)"
for n in 82 83 84 85 86 19; do
	expect_exit 1 "conv_tce refuses problem $n (depthwise, separable, not a conv)" \
		"$E" render "$(spec_of "$KF_ROOT" "$n")" conv_tce
	contains "saying it does not apply" "$T_TMP/err" "does not apply"
done
for par in '{"BM": 48}' '{"BK": 12}' '{"CB": 64}' '{"WM": 3}' '{"BN": 24}' \
	'{"BM": 256, "BN": 256, "WM": 1, "WN": 1}' '{"core": "wmma", "BM": 48}' \
	'{"core": "wmma", "BN": 24}' '{"core": "tc"}' '{"core": 1}' '{"split": "tf32"}' \
	'{"STAGES": 6}' '{"STAGES": 1}' '{"BM": 256, "BN": 128}' '{"BM": 256, "STAGES": 5, "BN": 256}' \
	'{"core": "wgmma", "MW": 3}' '{"core": "wgmma", "STAGES": 6}' '{"core": "wgmma", "CB": 2}' \
	'{"core": "wgmma", "MW": 2, "STAGES": 5}' '{"core": "wgmma", "WG": 3}' '{"core": "wgmma", "WG": 1, "MW": 2}' '{"core": "wgmma", "PS": 2}'; do
	expect_exit 1 "conv_tce refuses parameters $par" "$E" render "$(spec_of "$KF_ROOT" 63)" conv_tce "$par"
	contains "with a reason" "$T_TMP/err" "conv_tce: "
done

# conv_epi_emit itself: unsupported shapes are 1 (exit 3), errors -1 (exit 1).
S='"groups": 1, "N": 2, "C_in": 16, "C_out": 32, "in": [10, 12], "kernel": [3, 3], "x": "x", "w": "w", "y": "y"'
expect_exit 0 "conv_epi_emit: a plain 2D convolution" "$CE" "{$S, \"out\": [8, 10], \"name\": \"k0\"}"
expect_exit 3 "conv_epi_emit: output extents that are not the convolution's" \
	"$CE" "{$S, \"out\": [8, 11], \"name\": \"k0\"}"
expect_exit 3 "conv_epi_emit: depthwise (1 output channel a group)" \
	"$CE" '{"groups": 16, "N": 2, "C_in": 16, "C_out": 16, "in": [10], "out": [8], "kernel": [3], "x": "x", "w": "w", "y": "y", "name": "k"}'
expect_exit 3 "conv_epi_emit: groups that do not divide the channels" \
	"$CE" '{"groups": 3, "N": 2, "C_in": 16, "C_out": 48, "in": [10], "out": [8], "kernel": [3], "x": "x", "w": "w", "y": "y", "name": "k"}'
expect_exit 1 "conv_epi_emit: no kernel name" "$CE" "{$S, \"out\": [8, 10], \"name\": \"1k\"}"
# Two convolutions in one candidate: the shared helpers once, distinct kernels.
"$CE" "{$S, \"out\": [8, 10], \"name\": \"ka\"}" | sed '/\/\*@launch/,$d' >two.cu
"$CE" "{$S, \"out\": [8, 10], \"name\": \"kb\", \"code\": \"v = fmaxf(v, 0.0f);\"}" >>two.cu
check "two conv_epi kernels in one file compile with NVRTC" sh -c \
	"'$KF_BUILD/tests/kfcompile' --exe '$KFORGE' two.cu | grep -q 'two.cu: ok.*kernel kb '"

W='"core": "wmma"'
ALT1="{$W, \"BM\": 32, \"BN\": 16, \"BK\": 8, \"WM\": 1, \"WN\": 1, \"CB\": 4}"
ALT2='{"BM": 64, "BN": 32, "STAGES": 2, "split": "3xtf32"}'
ALT3="{$W, \"BM\": 64, \"BN\": 32, \"BK\": 16, \"WM\": 2, \"WN\": 2, \"CB\": 8}"
ALT4='{"BM": 128, "BN": 64, "CB": 4, "STAGES": 3}'
ALT5="{$W, \"BM\": 256, \"BN\": 32, \"BK\": 16, \"WM\": 4, \"WN\": 1}"
ALT6='{"BM": 256, "BN": 32, "WM": 8, "WN": 1, "STAGES": 5}'
ALT7="{$W, \"BM\": 128, \"BN\": 128, \"BK\": 32, \"WM\": 2, \"WN\": 4}"
ALT8='{"BM": 64, "BN": 128, "WM": 2, "WN": 4, "CB": 8, "split": "3xtf32"}'
alt() {
	eval echo "\"\$ALT$(($1 % 8 + 1))\""
}

# Full size: defaults, one other tiling, the ideas; launch check + NVRTC.
mkdir -p full fix ideas
j=0
for n in $FWD $TRN; do
	s=$(spec_of "$KF_ROOT" "$n")
	p=$(printf p%03d "$n")
	cp "$s" "fix/$p.json"
	{ echo "// problem: $p"; "$E" render "$s" conv_tce; } >"full/$p-d.cu" || nok "problem $n renders"
	# the wmma core and the other tilings at full size for a twelfth of the
	# problems each (a third under make test-long; NVRTC time; all of them are
	# emulated below)
	if every_nth "$j" 12 3; then
		{ echo "// problem: $p"; "$E" render "$s" conv_tce "{$W}"; } >"full/$p-w.cu" ||
			nok "problem $n renders with the wmma core"
	elif every_nth $((j + 1)) 12 3; then
		{ echo "// problem: $p"; "$E" render "$s" conv_tce '{"core": "wgmma"}'; } >"full/$p-g.cu" ||
			nok "problem $n renders with the wgmma core"
	elif every_nth $((j + 2)) 12 3; then
		{ echo "// problem: $p"; "$E" render "$s" conv_tce "$(alt "$j")"; } >"full/$p-a.cu" ||
			nok "problem $n renders with $(alt "$j")"
	fi
	# the ideas of every twelfth problem (third; NVRTC time)
	every_nth "$j" 12 3 || { j=$((j + 1)); continue; }
	j=$((j + 1))
	rm -f ideas/*
	"$E" all "$s" ideas 1 1 >/dev/null 2>&1
	c=0
	for f in ideas/*-conv-tce-* ideas/*-convt-tce-*; do
		[ -f "$f" ] || continue
		{ echo "// problem: $p"; cat "$f"; } >"full/$p-$(basename "$f")"
		c=$((c + 1))
	done
	check "problem $n: the conv_tce ideas render ($c kernels)" test "$c" -ge 2
done
# NVRTC: every variant and idea rendered above, the defaults of every third
# problem (all under make test-long; all of them are emulated below)
set --
j=0
for f in full/*.cu; do
	case "$f" in
	*-d.cu) every_nth "$j" 3 1 && set -- "$@" "$f"; j=$((j + 1)) ;;
	*) set -- "$@" "$f" ;;
	esac
done
total=$#
"$KF_BUILD/tests/kfcompile" --exe "$KFORGE" --arch sm_90a --fixtures fix --pool "$(par_jobs)" --timeout 120 --cpu 120 \
	"$@" >nvrtc.out 2>&1
good=$(grep -c '\.cu: ok' nvrtc.out)
long_tier && want=50 || want=20
check "$good of $total conv_tce kernels pass the launch check and compile with NVRTC" \
	test "$good" -eq "$total" -a "$total" -ge "$want"
grep '\.cu: ' nvrtc.out | grep -v '\.cu: ok' | head -n 5 | sed 's/^/# /'
lacks "and none spills registers" nvrtc.out 'spill_st [1-9]'
# the mma.sync core (the default) for sm_80 as well; and the level-2
# graph's convs ("tc": 1, "mma": 1: both emitters on mma.sync) for sm_80
set -- full/*-w.cu
nw=$#
set -- full/*-g.cu
ng=$#
long_tier && nmin=5 || nmin=2
check "the defaults use the mma.sync core, wmma and wgmma when asked ($nw, $ng)" sh -c \
	"grep -l 'mma.sync' full/*-d.cu | wc -l | grep -qx 30 && ! grep -q 'wmma::\|wgmma' full/*-d.cu &&
	 grep -l 'wmma::mma_sync' full/*-w.cu | wc -l | grep -qx $nw && test $nw -ge $nmin &&
	 grep -l 'wgmma.mma_async' full/*-g.cu | wc -l | grep -qx $ng && test $ng -ge $nmin"
# for sm_80: a sixth of the defaults (all under make test-long)
set --
j=0
for f in full/*-d.cu; do
	every_nth $((j + 1)) 6 1 && set -- "$@" "$f"
	j=$((j + 1))
done
n80=$#
"$KF_BUILD/tests/kfcompile" --exe "$KFORGE" --arch sm_80 --fixtures fix --pool "$(par_jobs)" --timeout 120 \
	--cpu 120 "$@" >nvrtc80.out 2>&1
check "$n80 default kernels compile for sm_80 ($(grep -c '\.cu: ok' nvrtc80.out) ok)" \
	test "$(grep -c '\.cu: ok' nvrtc80.out)" -eq "$n80" -a "$n80" -ge 5
lacks "without spills" nvrtc80.out 'spill_st [1-9]'
mkdir -p l2 l2fix
# every twelfth of them (third; t0920 compiles them for sm_90a)
k2=0
for d in "$KF_ROOT"/problems/level2/*/; do
	b=$(basename "$d")
	grep -q '"op": *"conv"' "$d/spec.json" || continue
	k2=$((k2 + 1))
	every_nth $((k2 - 1)) 12 3 || continue
	{ echo "// problem: $b"; "$E" render "$d/spec.json" graph '{"tc": 1, "mma": 1}'; } >"l2/$b.cu" ||
		nok "level 2 $b renders"
	# a conv folded into its spatial sum (42, 44: builtin_graph_csum.c) runs no conv kernel
	if grep -q '_csum_dot' "l2/$b.cu"; then
		rm -f "l2/$b.cu"
		continue
	fi
	cp "$d/spec.json" "l2fix/$b.json"
done
set -- l2/*.cu
nl2=$#
"$KF_BUILD/tests/kfcompile" --exe "$KFORGE" --arch sm_80 --fixtures l2fix --pool "$(par_jobs)" --timeout 120 \
	--cpu 120 l2/*.cu >nvrtcl2.out 2>&1
check "the $nl2 level-2 graphs with a conv take the mma conv core and compile for sm_80" sh -c \
	"test $nl2 -ge $(long_tier && echo 10 || echo 4) && test \$(grep -c '\.cu: ok' nvrtcl2.out) -eq $nl2 &&
	 test \$(grep -l 'conv_epi (mma.sync' l2/*.cu | wc -l) -eq $nl2"
grep '\.cu: ' nvrtcl2.out | grep -v '\.cu: ok' | head -n 5 | sed 's/^/# /'

# Small sizes against the oracle: defaults for every forward problem and
# every eighth transposed one (the synthetic shapes below take the transposed
# paths at smaller sizes), the wgmma core for every other forward one and
# those transposed ones, the wmma core and another tiling for every sixth
# forward one (make test-long: every problem with the defaults and the wgmma
# core, the wmma core for all, another tiling for every third; make test
# takes the wmma core and other tilings through the transposed paths on the
# synthetic shapes, t3_cpg5 among them: the 3-D transposed 068 costs some
# 2 CPU-seconds an emulation).
# shellcheck disable=SC2086
python3 "$TOOLS/conv_small_root.py" "$KF_ROOT" small $FWD
mkdir -p sm
: >fwd.jobs
: >trn.jobs
j=0
for n in $FWD $TRN; do
	case " $FWD " in
	*" $n "*) s=$(spec_of small "$n") ;;
	*) # make test: every eighth transposed problem (their emulation is the
		# slow part, some 4 CPU seconds each; make test-long: all)
		if ! long_tier && [ $((j % 8)) -ne 2 ]; then j=$((j + 1)); continue; fi
		s=$(spec_of "$KF_ROOT" "$n") ;;
	esac
	for par in '{}' '{"core": "wgmma"}' "{$W}" "$(alt "$j")"; do
		k=$n-$(echo "$par" | cksum | cut -c1-6)
		"$E" render "$s" conv_tce "$par" >"sm/$k.cu"
		case " $FWD " in
		*" $n "*) printf '%s\0' "emu/$k" small "$n" "sm/$k.cu" >>fwd.jobs ;;
		*) printf '%s\0' "emu/$k" "$KF_ROOT" "$n" "sm/$k.cu" >>trn.jobs ;;
		esac
		# the wgmma core as well (make test: every other forward problem)
		if [ "$par" = '{}' ]; then
			case " $FWD " in
			*" $n "*) long_tier || [ $((j % 2)) -eq 0 ] || break ;;
			esac
			continue
		fi
		[ $((j % 3)) -ne 0 ] && [ "$par" = "{$W}" ] && break
		{ ! long_tier && [ $((j % 6)) -ne 0 ]; } && break
		case " $FWD " in
		*" $n "*) ;;
		*) long_tier || break ;;
		esac
	done
	j=$((j + 1))
done
emulate_jobs fwd.jobs
emulate_jobs --convt trn.jobs

# Synthetic shapes: conv_tce (defaults, one other tiling) and conv_epi_emit.
python3 "$TOOLS/conv_epi_synth.py" "$KF_ROOT" syn >syn.list
: >syn.jobs
mkdir -p synfix
j=0
while read -r name num dir; do
	s=$(ls "$dir"/problems/level1/*/spec.json)
	cp "$s" "synfix/$name.json"
	"$E" render "$s" conv_tce >"sm/$name-t.cu" || nok "$name renders"
	"$E" render "$s" conv_tce "{$W}" >"sm/$name-w.cu" || nok "$name renders with the wmma core"
	"$E" render "$s" conv_tce '{"core": "wgmma"}' >"sm/$name-g.cu" || nok "$name renders with the wgmma core"
	"$E" render "$s" conv_tce '{"core": "wgmma", "WG": 1}' >"sm/$name-h.cu" ||
		nok "$name renders with the wgmma core, one warpgroup a block"
	"$E" render "$s" conv_tce "$(alt "$j")" >"sm/$name-a.cu" || nok "$name renders with $(alt "$j")"
	# 3xTF32 on the wgmma core: x's small parts split once by its copy (PS)
	ps='{"core": "wgmma", "split": "3xtf32"}'
	"$E" render "$s" conv_tce "$ps" >"sm/$name-p.cu" || nok "$name renders with $ps"
	grep -q 'PS=1\|kf_pb' "sm/$name-p.cu" || nok "$name takes PS (or the pointwise GEMM) with $ps"
	"$CE" "$(cat "$dir/shape.json")" >"sm/$name-e.cu" || nok "$name: conv_epi_emit emits"
	i=0
	for v in t w g h a p e; do
		# make test-long: the other tiling for every other shape, one
		# warpgroup a block for the others (emulation time), each emulated
		# and compiled. make test: the mma core (t) and two others emulated,
		# two compiled, rotating: each variant emulated on three or more
		# shapes, compiled on two or more.
		emu=1 cc=1
		if long_tier; then
			{ [ $v = a ] && [ $((j % 2)) -eq 1 ]; } && emu=0
			{ [ $v = h ] && [ $((j % 2)) -eq 0 ]; } && emu=0
			cc=$emu
		else
			[ $v = t ] || [ $(((j - i + 13) % 6)) -eq 0 ] || [ $(((j - i + 16) % 6)) -eq 0 ] || emu=0
			[ $(((j - i + 7) % 7)) -eq 0 ] || [ $(((j - i + 10) % 7)) -eq 0 ] || cc=0
		fi
		[ $emu = 1 ] && printf '%s\0' "emu/$name-$v" "$dir" "$num" "sm/$name-$v.cu" >>syn.jobs
		[ $cc = 1 ] && { echo "// problem: $name"; cat "sm/$name-$v.cu"; } >"synfix/$name-$v.cu"
		i=$((i + 1))
	done
	j=$((j + 1))
done <syn.list
check "10 synthetic shapes" test "$(wc -l <syn.list)" -eq 10
s=$(ls syn/f2_pointwise/problems/level1/*/spec.json)
check "a 1x1 convolution on the wgmma core is a batched GEMM" grep -q 'kf_pb = b' sm/f2_pointwise-g.cu
"$E" render "$s" conv_tce '{"core": "wgmma", "PW": 0}' >pw0.cu
check "PW 0 keeps it on the conv core" sh -c "grep -q 'conv_epi (wgmma' pw0.cu && ! grep -q kf_pb pw0.cu"
# PO 1: a transposed conv's phases fastest in grid.x, on the wgmma and mma
# cores, for the four strided transposed shapes (emulated, not compiled here;
# make test: each core on two of them)
npo=0 ipo=0
for name in t1_stride3_op t2_groups_phase t3_cpg5 t2_stride_over_k; do
	read -r _ num dir <<EOS
$(grep "^$name " syn.list)
EOS
	s=$(ls "$dir"/problems/level1/*/spec.json)
	"$E" render "$s" conv_tce '{"core": "wgmma", "split": "3xtf32", "PO": 1}' >"sm/$name-o.cu" || nok "$name renders with PO 1"
	"$E" render "$s" conv_tce '{"core": "mma", "PO": 1}' >"sm/$name-q.cu" || nok "$name renders with PO 1 (mma)"
	for v in o q; do
		ipo=$((ipo + 1))
		grep -q 'const int ph = (int)(blockIdx.x % (FD \* FH \* FW));' "sm/$name-$v.cu" &&
			grep -q '^conv_tce<<<dim3(ceil_div(.*) \* [0-9]*, .*, 1), ' "sm/$name-$v.cu" && npo=$((npo + 1))
		# make test: o on the first and third shapes, q on the second and fourth
		long_tier || [ $((((ipo - 1) / 2 + (ipo - 1) % 2) % 2)) -eq 0 ] || continue
		printf '%s\0' "emu/$name-$v" "$dir" "$num" "sm/$name-$v.cu" >>syn.jobs
	done
done
check "PO 1 puts the phases in grid.x (8 renderings)" test "$npo" -eq 8
expect_exit 1 "PO 2 is refused" "$E" render "$s" conv_tce '{"PO": 2}'
"$E" render "$KF_ROOT/problems/level2/002_ConvTranspose2d_BiasAdd_Clamp_Scaling_Clamp_Divide/spec.json" graph \
	'{"tc": 1, "conv_po": 1}' >l2po.cu
check "the graph passes conv_po to its transposed convs" grep -q 'blockIdx.x % (FD \* FH \* FW)' l2po.cu
expect_exit 1 "conv_po 2 is refused" "$E" render \
	"$KF_ROOT/problems/level2/002_ConvTranspose2d_BiasAdd_Clamp_Scaling_Clamp_Divide/spec.json" graph '{"conv_po": 2}'
emulate_jobs syn.jobs
"$KF_BUILD/tests/kfcompile" --exe "$KFORGE" --arch sm_90a --fixtures synfix --pool "$(par_jobs)" --timeout 120 --cpu 120 \
	synfix/*.cu >synnvrtc.out 2>&1
set -- synfix/*.cu
nsyn=$#
check "the synthetic kernels pass the launch check and compile ($(grep -c '\.cu: ok' synnvrtc.out) of $nsyn)" \
	test "$(grep -c '\.cu: ok' synnvrtc.out)" -eq "$nsyn" -a "$nsyn" -eq "$(long_tier && echo 60 || echo 20)"
bad=0 k=0
for r in emu/*.res; do
	k=$((k + 1))
	case $(cat "$r") in
	ok*) ;;
	*) bad=$((bad + 1)); echo "# $r: $(cut -c1-200 "$r")" ;;
	esac
done
check "$k emulated conv_epi kernels match the oracle ($bad failed)" test "$bad" -eq 0 -a "$k" -ge 50

# Teeth: plain TF32 (no lo terms: the wmma core's two small products, the
# mma core's bf16 one), the mma core's A swizzle written one way and read
# another, a phase's input offset moved by one, the bias epilogue dropped,
# the wgmma core's gather unswizzled, its channels-last copy reading the
# padded channel count as the real one (groups of 3 channels), the odd
# channel of its accumulator pairs dropped, its one-warpgroup block
# splitting half of each A tile, its pre-split copy's small parts gathered
# from the wrong position or dropped, the pointwise GEMM's channel and
# position swapped: each must fail the oracle.
d=syn/t2_groups_phase
grep -v 'al\[i\], bh\[j\]\|ah\[i\], bl\[j\]' sm/t2_groups_phase-w.cu >nolo.cu
check "the broken kernel lost its lo terms" test "$(grep -c mma_sync nolo.cu)" -eq 1
grep -v 'kfg_mma_bf16(part' sm/t2_groups_phase-t.cu >nolomma.cu
check "the broken mma kernel lost its bf16 small products" test "$(grep -c 'kfg_mma_bf16(part' nolomma.cu)" -eq 0 \
	-a "$(grep -c 'kfg_mma_bf16(part' sm/t2_groups_phase-t.cu)" -eq 1
sed 's|aswz = ((lane \& 1) << 2) \| ((lane >> 1) \& 3)|aswz = (lane \& 1) << 2|' sm/f3_strided-t.cu >swz.cu
check "the broken mma kernel has its gather swizzle changed" test "$(cmp -s swz.cu sm/f3_strided-t.cu; echo $?)" -eq 1
sed 's|dd = TR ? (fd + PD - kd \* DD) / SD|dd = TR ? (fd + PD - kd * DD) / SD + 1|' sm/t3_cpg5-t.cu >phase.cu
check "the broken kernel has its phase offset moved" test "$(cmp -s phase.cu sm/t3_cpg5-t.cu; echo $?)" -eq 1
grep -v 'v += bias\[c\];' sm/f2_groups_cpg3-e.cu >nobias.cu
check "the broken kernel lost its epilogue" test "$(grep -c 'bias\[c\]' nobias.cu)" -eq 0
sed 's|(unsigned)((qc ^ (ar \& 7)) << 4)|(unsigned)(qc << 4)|' sm/f3_strided-g.cu >wgswz.cu
check "the broken wgmma kernel has its gather unswizzled" test "$(cmp -s wgswz.cu sm/f3_strided-g.cu; echo $?)" -eq 1
sed 's|(long long)(ch / cpg4) \* cpg + c|(long long)(ch / cpg4) * cpg4 + c|' sm/f2_groups_cpg3-g.cu >wgpad.cu
check "the broken wgmma kernel reads x past its group's channels" \
	test "$(cmp -s wgpad.cu sm/f2_groups_cpg3-g.cu; echo $?)" -eq 1
sed 's|Cs\[(nn + 1) \* CS + m\] = acc\[4 \* j + 2 + h\];||' sm/t2_groups_phase-g.cu >wgacc.cu
check "the broken wgmma kernel drops a column" test "$(cmp -s wgacc.cu sm/t2_groups_phase-g.cu; echo $?)" -eq 1
# one warpgroup a block: its 128 threads split the A tile as 256 would (half of it)
sed 's|kfg_split_tile<BF, \(.*\), NT>|kfg_split_tile<BF, \1, 256>|' sm/f3_strided-h.cu >wg1split.cu
check "the broken one-warpgroup kernel splits half its tile" test "$(grep -c 'NUNITS, 256>' wg1split.cu)" -ge 2
# the pre-split copy (PS): its small parts gathered from the wrong position;
# the copy writing zeros for them (x's low bits lost)
sed 's|in ? xsm + xo\[e\] + off : x|in ? xsm + off : x|' sm/f3_strided-p.cu >wgps.cu
check "the broken wgmma kernel gathers small parts from the wrong position" test "$(grep -c 'xsm + off :' wgps.cu)" -eq 1
sed 's/v\.\([xyzw]\) - kfg_trunc(v\.[xyzw])/0.0f/g; s/= v - kfg_trunc(v);/= 0.0f;/' sm/t2_groups_phase-p.cu >wgps0.cu
check "the broken wgmma kernel's copy drops x's small parts" test "$(grep -c 'v\.x - kfg_trunc(v\.x)\|= v - kfg_trunc(v);' wgps0.cu)" -eq 0 \
	-a "$(grep -c 'v\.x - kfg_trunc(v\.x)\|= v - kfg_trunc(v);' sm/t2_groups_phase-p.cu)" -eq 1
# PO 1 launched without the phases in grid.x: only the first tiles' phases
sed '/^conv_tce<<</s/, \([0-9]*\)) \* [0-9]*, /, \1), /' sm/t2_groups_phase-o.cu >ponoph.cu
check "the broken PO launch lost its phases" test "$(grep -c '^conv_tce<<<dim3(ceil_div(.*) \* [0-9]*, ' ponoph.cu)" -eq 0
# the pointwise GEMM's indices renamed the wrong way (bias by position)
sed 's/c = kf_pm, s = kf_pn;/c = kf_pn, s = kf_pm;/' sm/f2_pointwise-p.cu >pwidx.cu
check "the broken pointwise kernel swaps its channel and position" test "$(grep -c 'c = kf_pn, s = kf_pm' pwidx.cu)" -eq 1
printf '%s\0' emu/nolo "$d" 75 nolo.cu emu/nolomma "$d" 75 nolomma.cu emu/swz syn/f3_strided 54 swz.cu \
	emu/phase syn/t3_cpg5 72 phase.cu emu/nobias syn/f2_groups_cpg3 50 nobias.cu \
	emu/wgswz syn/f3_strided 54 wgswz.cu emu/wgpad syn/f2_groups_cpg3 50 wgpad.cu \
	emu/wgacc "$d" 75 wgacc.cu emu/wg1split syn/f3_strided 54 wg1split.cu \
	emu/wgps syn/f3_strided 54 wgps.cu emu/wgps0 "$d" 75 wgps0.cu emu/pwidx syn/f2_pointwise 50 pwidx.cu \
	emu/ponoph "$d" 75 ponoph.cu >teeth.jobs
emulate_jobs teeth.jobs
mismatch() { grep -Eq '^not ok .*[0-9]+ elements, [1-9][0-9]* bad' "$1"; }
for t in nolo nolomma swz phase nobias wgswz wgpad wgacc wg1split wgps wgps0 pwidx ponoph; do
	echo "# $t: $(cut -c1-160 emu/$t.res)"
	check "a kernel broken on purpose ($t) fails the oracle" mismatch emu/$t.res
done
