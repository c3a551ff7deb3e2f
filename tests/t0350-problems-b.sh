#!/bin/sh
# probsB's problems (matmul, conv, pool: 1-4, 6-18, 41-46, 50, 54-87): the
# generated files are current, every spec passes problems/gen/level1/check_specs.py
# (which itself rejects broken specs), and every reference.cu compiles with
# NVRTC (or nvcc) for sm_90 when the CUDA toolkit is here.
. "$KF_ROOT/tests/lib.sh"

P="$KF_ROOT/problems/level1"
NUMS="1 2 3 4 6 7 8 9 10 11 12 13 14 15 16 17 18 41 42 43 44 45 46 50"
n=54; while [ $n -le 87 ]; do NUMS="$NUMS $n"; n=$((n + 1)); done

dirs=""
for n in $NUMS; do
	d=$(ls -d "$P"/$(printf %03d "$n")_* 2>/dev/null | head -n 1)
	if [ -n "$d" ] && [ -f "$d/spec.json" ] && [ -f "$d/reference.py" ] && [ -f "$d/reference.cu" ]; then
		dirs="$dirs $d"
	else
		nok "problem $n has spec.json, reference.py and reference.cu"
	fi
done
ok "problem directories present"

if ! command -v python3 >/dev/null 2>&1; then
	skip "python3 not installed: spec checks"
else
	check "generated files are current (gen.py --check)" python3 "$KF_ROOT/problems/gen/level1/gen_b.py" --check
	expect_exit 0 "check_specs passes on the 58 specs" python3 "$KF_ROOT/problems/gen/level1/check_specs.py" \
		--families matmul,conv,pool $dirs
	contains "58 checked" "$T_TMP/out" "checked 58 specs, 0 bad"

	# The checker must catch broken specs: one mutation each.
	mutate() { # name, python statement on spec s, expected message
		rm -rf m && mkdir m && cp -r "$P"/073_conv_transposed_3D_* m/ && d=$(ls -d m/*)
		python3 - "$d/spec.json" "$2" <<'PY'
import json, sys
p = sys.argv[1]; s = json.load(open(p)); exec(sys.argv[2]); json.dump(s, open(p, "w"))
PY
		expect_exit 1 "check_specs rejects: $1" python3 "$KF_ROOT/problems/gen/level1/check_specs.py" "$d"
		contains "message for $1" "$T_TMP/out" "$3"
	}
	mutate "wrong output size" 's["sizes"]["out_depth"] = 64' "PyTorch gives 63"
	mutate "wrong init bound" 's["inputs"][1]["dist"]["high"] = 0.5' "not U"
	mutate "wrong min_bytes" 's["min_bytes"] += 4' "min_bytes"
	mutate "unknown size in a shape" 's["inputs"][0]["shape"][0] = "batch"' "unknown size 'batch'"
	mutate "zero size" 's["sizes"]["stride"] = 0' "size stride = 0"
	mutate "unknown dtype" 's["outputs"][0]["dtype"] = "float64"' "dtype"
	mutate "missing field" 'del s["flops"]' "missing field flops"
	mutate "ignored quirk (groups 4 on 73)" 's["attrs"]["groups"] = 4' "weight shape|output"
fi

# Compile with NVRTC (as the engine does) through problems/gen/level1/nvrtc_check.py;
# fall back to nvcc two at a time; skip clearly without either.
NVCC=${CUDA_HOME:-/usr/local/cuda}/bin/nvcc
if command -v python3 >/dev/null 2>&1 && python3 "$KF_ROOT/problems/gen/level1/nvrtc_check.py" \
	"$P"/001_*/reference.cu >/dev/null 2>&1; then
	files=""
	for d in $dirs; do files="$files $d/reference.cu"; done
	expect_exit 0 "NVRTC compiles every reference.cu for sm_90" python3 \
		"$KF_ROOT/problems/gen/level1/nvrtc_check.py" $files
	contains "58 compiled" "$T_TMP/out" "compiled 58 files, 0 failed"
	sed 's/acc\[r\]\[c\] = 0.0;/acc[r][c] = nosuch;/' "$P"/001_*/reference.cu >broken.cu
	expect_exit 1 "NVRTC rejects a broken reference" python3 "$KF_ROOT/problems/gen/level1/nvrtc_check.py" broken.cu
	contains "with the compiler's message" "$T_TMP/out" "identifier \"nosuch\" is undefined"
elif [ -x "$NVCC" ]; then
	mkdir cubin
	# Two at a time; each writes NAME.cubin or NAME.log.
	for d in $dirs; do echo "$d"; done | xargs -P 2 -I{} sh -c \
		'b=$(basename "$1"); "$2" -arch=sm_90 --cubin -Werror all-warnings -o "cubin/$b.cubin" "$1/reference.cu" >"cubin/$b.log" 2>&1' _ {} "$NVCC"
	for d in $dirs; do
		b=$(basename "$d")
		if [ -s "cubin/$b.cubin" ]; then ok "nvcc compiles $b/reference.cu"; else nok "nvcc compiles $b/reference.cu"; sed 's/^/# /' "cubin/$b.log" | head -n 10; fi
	done
	sed 's/acc\[r\]\[c\] = 0.0;/acc[r][c] = nosuch;/' "$P"/001_*/reference.cu >broken.cu
	check_fail "nvcc rejects a broken reference" "$NVCC" -arch=sm_90 --cubin -o broken.cubin broken.cu
else
	skip "neither NVRTC nor nvcc found: reference.cu compile checks"
fi
