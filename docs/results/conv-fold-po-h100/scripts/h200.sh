#!/bin/sh
# What issue 21 still needs from an H200 (run only there; on another card it stops
# at once): every level-2 default rendering with the current code (gpuwork/f2 from
# render2.sh: the last H200 figure, 1.452x, predates PO and the fold), and level-3
# 030 SwinTransformerV2's eager and TF32-off baselines (030 landed after the H200
# baseline runs). Needs build-gpu/bundle.tar.xz (BUILD=build-dev sh scripts/gpu-bundle.sh).
# Afterwards, here: merge the level3 "30_..." rows of $OUT/bl/NVIDIA_H200/*.json into
# problems/baselines/NVIDIA_H200/; f2-h200.jsonl against that directory's eager times.
set -u
g=$(nvidia-smi --query-gpu=name,driver_version --format=csv,noheader); echo "$g"
case $g in *H200*) ;; *) echo "not an H200: nothing run"; exit 0 ;; esac
. scripts/gpu-env.sh
t0=$(date +%s)
python3 tools/torch_baseline.py --level 3 --problems 30 --variant eager,eager_notf32 \
	--out "$OUT/bl" --record "$OUT/bl-record.json" 2>&1 | tail -n 3
echo "baselines $(($(date +%s) - t0))s"
LEVEL=2 sh tools/level2/graph_kernels.sh eval gpuwork/f2 "$OUT/f2-h200.jsonl" $((560 - ($(date +%s) - t0))) gpu-bundle 2>&1 | tail -n 1
echo "f2 $(($(date +%s) - t0))s"
