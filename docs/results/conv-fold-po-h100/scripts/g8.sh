#!/bin/sh
# Session 9: the 25 level-2 default renderings not yet timed on an H200 (f3) on an H200 only; on another card it stops at once.
set -u
g=$(nvidia-smi --query-gpu=name,driver_version --format=csv,noheader); echo "$g"
case $g in *H200*) ;; *) echo "not an H200: nothing run"; exit 0 ;; esac
tar -xJf build-gpu/bundle.tar.xz
export LD_LIBRARY_PATH=$PWD/gpu-bundle/lib BUILD=gpu-bundle KFORGE_ROOT=$PWD KFORGE=$PWD/gpu-bundle/kforge
t0=$(date +%s)
LEVEL=2 sh tools/level2/graph_kernels.sh eval gpuwork/f3 "$OUT/f3-h200.jsonl" 150 gpu-bundle 2>&1 | tail -n 1
echo "f3 $(($(date +%s) - t0))s"
