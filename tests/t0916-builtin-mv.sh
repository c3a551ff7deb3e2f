#!/bin/sh
# The built-in matmul extras (kernels/builtin_mv.c): every idea of the
# matrix-vector (4), large-K (6) and diagonal (12) problems, and of two
# tensor-core ones (1, 18), renders, passes the launch check and compiles
# with NVRTC; the gemv, diagmm, matmul_splitk and matmul_tc kernels match
# the CPU oracle in the host emulator (6 with a shorter K so it stays fast).
. "$KF_ROOT/tests/lib.sh"

TOOLS="$KF_ROOT/tests/tools"
need_emulator

# Render, launch-check and compile every idea (the emulation follows below:
# the generic matmul template's ideas on 4 and 6 are not this file's).
python3 "$TOOLS/check_templates.py" "$KF_BUILD" "$KF_ROOT" ct --impls 1 --no-emulate 4 6 12 1 18 >ct.out 2>&1
check "check_templates ran" test $? -eq 0
contains "0 failed" ct.out "^[0-9]+ kernels, 0 failed$"
grep '^not ok' ct.out | head -n 10 | sed 's/^/# /'
for n in 004 006 012 001 018; do
	check "problem $n has kernels" test -n "$(ls ct/$n/*.cu 2>/dev/null)"
done

# Problem 6 at K = 20000 (ragged K slices) in a private problems tree.
mkdir -p small/problems/level1
cp -r "$KF_ROOT"/problems/level1/006_* small/problems/level1/
python3 - small/problems/level1/006_*/spec.json <<'EOF'
import json, sys
p = sys.argv[1]; s = json.load(open(p)); s["sizes"]["K"] = 20000; json.dump(s, open(p, "w"))
EOF

# The emulations run in parallel (emulate_jobs), their results read in order.
: >emu.jobs
: >emu.files
i=0
for f in ct/004/004-mm-warp-per-row-0.cu ct/004/004-mv-*-0.cu ct/012/012-mm-diag-*-0.cu \
	ct/006/006-mm-split-k*-0.cu ct/006/006-mm-tc-split-k-0.cu ct/001/001-mm-3xtf32-0.cu \
	ct/001/001-mm-cpasync-0.cu ct/018/018-mm-tf32-0.cu; do
	[ -f "$f" ] || { nok "missing $f"; continue; }
	num=$(basename "$f" | cut -c1-3)
	root=$KF_ROOT
	[ "$num" = 006 ] && root=$T_TMP/small
	i=$((i + 1))
	printf '%s\0' "emu/$i" "$root" "$((1$num - 1000))" "$f" >>emu.jobs
	echo "$i $f" >>emu.files
done
emulate_jobs emu.jobs
bad=0 n=0
while read -r i f; do
	r=$(cat "emu/$i.res")
	n=$((n + 1))
	case $r in
	ok*) ;;
	*) bad=$((bad + 1)); echo "# $(basename "$f"): $r" ;;
	esac
done <emu.files
check "$n emulated kernels match the oracle ($bad did not)" test "$bad" -eq 0 -a "$n" -ge 12
