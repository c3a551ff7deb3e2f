#!/bin/sh
# GPU call 8 (H100): the final code. Level 2, all 100 (-t); level 1's 30
# conv_tce convolutions on the wgmma core, 3xTF32 (-n).
set -u
tar -xJf build-gpu/bundle.tar.xz
export LD_LIBRARY_PATH=$PWD/gpu-bundle/lib BUILD=gpu-bundle KFORGE_ROOT=$PWD KFORGE=$PWD/gpu-bundle/kforge
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
t0=$(date +%s)
LEVEL=2 sh tools/level2/graph_kernels.sh eval gpuwork/e11 "$OUT/f8l2.jsonl" 330 gpu-bundle 2>&1 | tail -n 1
echo "l2 $(($(date +%s) - t0))s"
LEVEL=1 sh tools/level2/graph_kernels.sh eval gpuwork/e12 "$OUT/f8l1.jsonl" 150 gpu-bundle 2>&1 | tail -n 1
echo "done $(($(date +%s) - t0))s"
