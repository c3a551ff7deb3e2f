#!/bin/sh
# GPU call 6: VGG16/19 (level 3, mma.sync conv core): this code (-n), 0c727d6
# (-o), and -n with pieces put back textually: the old store (-A), and the
# 64-bit row split (-B), and the 64-bit weight index (-C), same run.
set -u
tar -xJf build-gpu/bundle.tar.xz
export LD_LIBRARY_PATH=$PWD/gpu-bundle/lib BUILD=gpu-bundle KFORGE_ROOT=$PWD KFORGE=$PWD/gpu-bundle/kforge
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
t0=$(date +%s)
LEVEL=3 sh tools/level2/graph_kernels.sh eval gpuwork/e8 "$OUT/f6.jsonl" 400 gpu-bundle 2>&1 | tail -n 1
echo "done $(($(date +%s) - t0))s"
