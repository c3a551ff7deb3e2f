#!/bin/sh
# GPU call 5: six level-3 graphs whose convolutions take the mma.sync core,
# rendered by this commit (-n) and by 0c727d6 (-o), same run.
set -u
tar -xJf build-gpu/bundle.tar.xz
export LD_LIBRARY_PATH=$PWD/gpu-bundle/lib BUILD=gpu-bundle KFORGE_ROOT=$PWD KFORGE=$PWD/gpu-bundle/kforge
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
t0=$(date +%s)
LEVEL=3 sh tools/level2/graph_kernels.sh eval gpuwork/e7 "$OUT/f5l3.jsonl" 400 gpu-bundle 2>&1 | tail -n 1
echo "done $(($(date +%s) - t0))s"
