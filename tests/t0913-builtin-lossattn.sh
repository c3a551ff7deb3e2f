#!/bin/sh
# The built-in loss and attention templates (94-100): every applicable
# catalogue idea renders, passes the launch check at full size, compiles
# with NVRTC for sm_90 and matches the CPU oracle when emulated at small
# sizes.
. "$KF_ROOT/tests/lib.sh"

need_emulator
# (make test: every other rendered kernel compiles, turning with the problem;
# make test-long: all)
python3 "$KF_ROOT/tests/tools/check_templates.py" "$KF_BUILD" "$KF_ROOT" "$T_TMP/ct" --impls 1 --every 2 --nvrtc-every "$(long_tier && echo 1 || echo 2)" \
	94 95 96 97 98 99 100 >"$T_TMP/out" 2>&1
contains "no built-in loss/attention kernel failed" "$T_TMP/out" "^[0-9]+ kernels, 0 failed$"
grep '^not ok' "$T_TMP/out" | head -n 10 | sed 's/^/# /'
for n in 094 095 096 097 098 099 100; do
	check "at least one kernel of $n was checked" grep -q "^ok $n-" "$T_TMP/out"
done

# attn_tce (97 on tensor cores: S = Q K^T / sqrt(d), a row softmax, O = P V)
# holds inline wgmma/mma PTX, which check_templates.py leaves out of its
# emulation: emulated here through tests/tools/emulate_shim_tc.h at sizes
# with edges in every dimension (130 rows and keys against 128-wide tiles,
# a 72-wide head against 32-deep K tiles), with both cores and splits, and
# a softmax that is 0.1% off must fail; at full size it compiles for sm_90a.
E="$KF_BUILD/tests/builtin_emit"
export KF_EMU_SIZES='{"batch_size": 2, "num_heads": 2, "sequence_length": 130, "embedding_dimension": 72}'
small_level1 small "$KF_EMU_SIZES" 97
s=$(ls small/problems/level1/097_*/spec.json)
mkdir -p at
: >at.jobs
for v in wg3:'{}' wg:'{"split":"tf32bf16"}' mma:'{"core":"mma"}'; do
	"$E" render "$s" attn_tce "${v#*:}" >"at/${v%%:*}.cu" || nok "attn_tce renders (${v%%:*}) at small sizes"
	printf '%s\0' "emu/${v%%:*}" small 97 "at/${v%%:*}.cu" >>at.jobs
done
sed 's/p\[j\] = expf(p\[j\] - mx) \* inv;/p[j] = expf(p[j] - mx) * inv * 1.001f;/' at/wg3.cu >at/off.cu
check "the broken softmax differs" test "$(cmp -s at/off.cu at/wg3.cu; echo $?)" -eq 1
printf '%s\0' emu/off small 97 at/off.cu >>at.jobs
emulate_jobs at.jobs
for v in wg3 wg mma; do
	contains "attn_tce ($v) matches the oracle at 2x2x130x72" "emu/$v.res" '^ok 097_.* 0 bad'
done
contains "attn_tce with a softmax 0.1% off does not" emu/off.res '^not ok 097_.*[0-9]+ elements, [1-9][0-9]* bad'
unset KF_EMU_SIZES
mkdir -p atf/fx
ln -s "$(ls -d "$KF_ROOT"/problems/level1/097_*)/spec.json" atf/fx/097_ScaledDotProductAttention.json
{ echo "// problem: 097_ScaledDotProductAttention"; "$E" render "$(ls "$KF_ROOT"/problems/level1/097_*/spec.json)" attn_tce '{}'; } >atf/wg3.cu
"$KF_BUILD/tests/kfcompile" --exe "$KFORGE" --arch sm_90a --timeout 300 --fixtures atf/fx atf/wg3.cu >atf.out 2>&1
contains "attn_tce at full size compiles for sm_90a without spills" atf.out '\.cu: ok .*att_qk.*spill_st 0 spill_ld 0'
lacks "... none at all" atf.out 'spill_(st|ld) [1-9]'
