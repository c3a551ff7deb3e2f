#!/bin/sh
# What issue 21 still needs from an H200 (run only there; on another card it stops
# at once): the 25 level-2 renderings not yet timed on an H200 (gpuwork/f3 from
# render2.sh then render3.sh), and level-3 030 SwinTransformerV2's eager and
# TF32-off baselines (030 landed after the H200 baseline runs). Needs
# build-gpu/bundle.tar.xz (BUILD=build-dev sh scripts/gpu-bundle.sh).
# Afterwards, here: merge the level3 "30_..." rows of $OUT/bl/NVIDIA_H200/*.json into
# problems/baselines/NVIDIA_H200/, and combine f3-h200.jsonl with the other 75
# kernels' H200 times (conv-presplit-h200, same bytes) in eval_table.py.
set -u
g=$(nvidia-smi --query-gpu=name,driver_version --format=csv,noheader); echo "$g"
case $g in *H200*) ;; *) echo "not an H200: nothing run"; exit 0 ;; esac
tar -xJf build-gpu/bundle.tar.xz
export LD_LIBRARY_PATH=$PWD/gpu-bundle/lib BUILD=gpu-bundle KFORGE_ROOT=$PWD KFORGE=$PWD/gpu-bundle/kforge
t0=$(date +%s)
python3 tools/torch_baseline.py --level 3 --problems 30 --variant eager,eager_notf32 \
	--out "$OUT/bl" --record "$OUT/bl-record.json" 2>&1 | tail -n 3
echo "baselines $(($(date +%s) - t0))s"
LEVEL=2 sh tools/level2/graph_kernels.sh eval gpuwork/f3 "$OUT/f3-h200.jsonl" 200 gpu-bundle 2>&1 | tail -n 1
echo "f3 $(($(date +%s) - t0))s"
