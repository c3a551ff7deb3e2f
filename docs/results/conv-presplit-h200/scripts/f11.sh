#!/bin/sh
# GPU call 12: level-3 graphs with 1x1 convs: as batched GEMMs on the mma.sync
# GEMM core (-p, conv_pw 1) against the mma conv core (-o, conv_pw 0), same run.
set -u
tar -xJf build-gpu/bundle.tar.xz
export LD_LIBRARY_PATH=$PWD/gpu-bundle/lib BUILD=gpu-bundle KFORGE_ROOT=$PWD KFORGE=$PWD/gpu-bundle/kforge
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
t0=$(date +%s)
LEVEL=3 sh tools/level2/graph_kernels.sh eval gpuwork/e14 "$OUT/f11.jsonl" 330 gpu-bundle 2>&1 | tail -n 1
echo "done $(($(date +%s) - t0))s"
