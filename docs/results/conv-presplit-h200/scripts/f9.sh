#!/bin/sh
# GPU call 9: level 1's 087 (1x1 conv) as a batched GEMM on the wgmma GEMM
# core (-p) against the mma conv core it fell back to (-n), same run.
set -u
tar -xJf build-gpu/bundle.tar.xz
export LD_LIBRARY_PATH=$PWD/gpu-bundle/lib BUILD=gpu-bundle KFORGE_ROOT=$PWD KFORGE=$PWD/gpu-bundle/kforge
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
t0=$(date +%s)
LEVEL=1 sh tools/level2/graph_kernels.sh eval gpuwork/e13 "$OUT/f9.jsonl" 150 gpu-bundle 2>&1 | tail -n 1
echo "done $(($(date +%s) - t0))s"
