#!/bin/sh
# GPU call 4: the final code. Level 2, all 100 (-t); level 3's 26 graphs whose
# convolutions take the mma.sync core (its store, row split and weight index
# changed); g0520 on a subset with both cores.
set -u
tar -xJf build-gpu/bundle.tar.xz
export LD_LIBRARY_PATH=$PWD/gpu-bundle/lib BUILD=gpu-bundle KFORGE_ROOT=$PWD KFORGE=$PWD/gpu-bundle/kforge
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
t0=$(date +%s)
LEVEL=2 sh tools/level2/graph_kernels.sh eval gpuwork/e5 "$OUT/f4l2.jsonl" 300 gpu-bundle 2>&1 | tail -n 1
echo "l2 $(($(date +%s) - t0))s"
LEVEL=3 sh tools/level2/graph_kernels.sh eval gpuwork/e6 "$OUT/f4l3.jsonl" 170 gpu-bundle 2>&1 | tail -n 1
echo "l3 $(($(date +%s) - t0))s"
export KF_ROOT=$PWD KF_BUILD=$PWD/gpu-bundle
CONV_EPI_CORES="wgmma mma" CONV_EPI_PROBLEMS="63 72 75" CONV_EPI_L2="11 100" \
  timeout 90 sh tests/gpu/g0520-conv-epi.sh > "$OUT/g0520.log" 2>&1; echo "g0520 rc $? $(grep -c '^ok' "$OUT/g0520.log") ok $(grep -c '^not ok' "$OUT/g0520.log") not ok"
echo "done $(($(date +%s) - t0))s"
