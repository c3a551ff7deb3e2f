#!/bin/sh
# GPU call 2 (H100): every level-2 problem (f2) and the level-1 conv family shortlist (c2).
set -u
tar -xJf build-gpu/bundle.tar.xz
export LD_LIBRARY_PATH=$PWD/gpu-bundle/lib BUILD=gpu-bundle KFORGE_ROOT=$PWD KFORGE=$PWD/gpu-bundle/kforge
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
t0=$(date +%s)
LEVEL=2 sh tools/level2/graph_kernels.sh eval gpuwork/f2 "$OUT/f2.jsonl" 330 gpu-bundle 2>&1 | tail -n 1
echo "f2 $(($(date +%s) - t0))s"
LEVEL=1 sh tools/level2/graph_kernels.sh eval gpuwork/c2 "$OUT/c2.jsonl" 200 gpu-bundle 2>&1 | tail -n 1
echo "done $(($(date +%s) - t0))s"
