#!/bin/sh
# GPU call 1: level-1 conv family shortlist (c1), level-2 conv_po A/B (n2),
# level-3 once A/B (n3).
set -u
tar -xJf build-gpu/bundle.tar.xz
export LD_LIBRARY_PATH=$PWD/gpu-bundle/lib BUILD=gpu-bundle KFORGE_ROOT=$PWD KFORGE=$PWD/gpu-bundle/kforge
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
t0=$(date +%s)
LEVEL=1 sh tools/level2/graph_kernels.sh eval gpuwork/c1 "$OUT/c1.jsonl" 260 gpu-bundle 2>&1 | tail -n 1
echo "c1 $(($(date +%s) - t0))s"
LEVEL=2 sh tools/level2/graph_kernels.sh eval gpuwork/n2 "$OUT/n2.jsonl" 150 gpu-bundle 2>&1 | tail -n 1
echo "n2 $(($(date +%s) - t0))s"
LEVEL=3 sh tools/level2/graph_kernels.sh eval gpuwork/n3 "$OUT/n3.jsonl" 150 gpu-bundle 2>&1 | tail -n 1
echo "done $(($(date +%s) - t0))s"
