#!/bin/sh
# Session 9 call 1 (H200): every level-2 default rendering (f2), then g0520 with its sampled thirds.
set -u
tar -xJf build-gpu/bundle.tar.xz
export LD_LIBRARY_PATH=$PWD/gpu-bundle/lib BUILD=gpu-bundle KFORGE_ROOT=$PWD KFORGE=$PWD/gpu-bundle/kforge
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
t0=$(date +%s)
LEVEL=2 sh tools/level2/graph_kernels.sh eval gpuwork/f2 "$OUT/f2.jsonl" 330 gpu-bundle 2>&1 | tail -n 1
echo "f2 $(($(date +%s) - t0))s"
left=$((570 - ($(date +%s) - t0)))
timeout $left tests/run-tests.sh --gpu g0520 >"$OUT/test-gpu.log" 2>&1
echo "tests rc $? $(($(date +%s) - t0))s"
cp gpu-bundle/test-logs/g0520*.log "$OUT/" 2>/dev/null
tail -5 "$OUT/test-gpu.log"
