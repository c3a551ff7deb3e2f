#!/bin/sh
# GPU call 1 (2026-11-27, sixth session): level 2 whole with the conv core's
# pre-split copy (PS 1), position-fixed store and 32-bit row split (-t), and
# the 63 conv-led problems rendered by the previous commit 0c727d6 (-o), same run.
set -u
tar -xJf build-gpu/bundle.tar.xz
export LD_LIBRARY_PATH=$PWD/gpu-bundle/lib BUILD=gpu-bundle KFORGE_ROOT=$PWD KFORGE=$PWD/gpu-bundle/kforge
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
t0=$(date +%s)
LEVEL=2 sh tools/level2/graph_kernels.sh eval gpuwork/e1 "$OUT/f1.jsonl" 540 gpu-bundle 2>&1 | tail -n 1
echo "done $(($(date +%s) - t0))s"
