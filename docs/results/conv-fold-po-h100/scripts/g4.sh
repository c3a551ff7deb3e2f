#!/bin/sh
# GPU call 4 (H200): the 25 level-2 kernels whose text changed since the last
# H200 run (f3), then the GPU tests g0520 (a subset: wgmma core, level-1 72
# and 81, level-2 2 and 100), g0530 and g0700.
set -u
tar -xJf build-gpu/bundle.tar.xz
export LD_LIBRARY_PATH=$PWD/gpu-bundle/lib BUILD=gpu-bundle KFORGE_ROOT=$PWD KFORGE=$PWD/gpu-bundle/kforge
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
t0=$(date +%s)
LEVEL=2 sh tools/level2/graph_kernels.sh eval gpuwork/f3 "$OUT/f3.jsonl" 110 gpu-bundle 2>&1 | tail -n 1
echo "f3 $(($(date +%s) - t0))s"
CONV_EPI_CORES=wgmma CONV_EPI_PROBLEMS="72 81" CONV_EPI_L2="2 100" timeout 130 tests/run-tests.sh --gpu g0520 g0530 g0700 >"$OUT/test-gpu.log" 2>&1
echo "tests rc $? $(($(date +%s) - t0))s"
cp gpu-bundle/test-logs/g0520*.log "$OUT/" 2>/dev/null
tail -5 "$OUT/test-gpu.log"
