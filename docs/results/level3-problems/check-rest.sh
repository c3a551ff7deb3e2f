#!/bin/sh
# `kforge problems check` (the GPU reference at full size against the CPU oracle)
# for the 31 level-3 problems problems-check-h100.txt does not have; any GPU.
# Several at once: the CPU oracle is the long part (cpu-times.txt: this 2-core
# machine's times for its sample). Needs build-gpu/bundle.tar.xz.
set -u
. scripts/gpu-env.sh
K=$KFORGE
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
# Longest oracle first; 044's (over 400 s at 256 samples here, 164 s at 16) with 32 samples.
L="044 005 002 018 043 033 012 011 014 025 026 031 016 041 029 027 046 047 036 037 040 007 020 028 019 022 023 024 017 032 049"
for p in $L; do echo "$p"; done | xargs -P "${JOBS:-4}" -I{} sh -c \
	'case {} in 044) s="--samples 32" ;; *) s= ;; esac
	timeout '"${EACH:-500}"' '"$K"' problems check $s level3/{} >"$OUT/pc-{}.txt" 2>&1; echo "level3/{} rc=$?" >>"$OUT/pc-{}.txt"'
cat "$OUT"/pc-*.txt >"$OUT/problems-check-rest.txt"; rm -f "$OUT"/pc-*.txt
grep -c " ok$" "$OUT/problems-check-rest.txt"; grep "rc=" "$OUT/problems-check-rest.txt" | grep -v "rc=0" || echo "every rc=0"
