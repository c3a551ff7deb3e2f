#!/bin/sh
# Session 9 call 3: on an H200, level 2's default renderings (f2) and the level-1
# conv shortlist (c2); on an H100, the rest of level 3's once A/B (n4).
set -u
tar -xJf build-gpu/bundle.tar.xz
export LD_LIBRARY_PATH=$PWD/gpu-bundle/lib BUILD=gpu-bundle KFORGE_ROOT=$PWD KFORGE=$PWD/gpu-bundle/kforge
g=$(nvidia-smi --query-gpu=name --format=csv,noheader); echo "$g"
t0=$(date +%s)
case $g in
*H200*)
	LEVEL=2 sh tools/level2/graph_kernels.sh eval gpuwork/f2 "$OUT/f2-h200.jsonl" 330 gpu-bundle 2>&1 | tail -n 1
	echo "f2 $(($(date +%s) - t0))s"
	LEVEL=1 sh tools/level2/graph_kernels.sh eval gpuwork/c2 "$OUT/c2-h200.jsonl" $((560 - ($(date +%s) - t0))) gpu-bundle 2>&1 | tail -n 1 ;;
*)
	LEVEL=3 sh tools/level2/graph_kernels.sh eval gpuwork/n4 "$OUT/n4.jsonl" 400 gpu-bundle 2>&1 | tail -n 1 ;;
esac
echo "done $(($(date +%s) - t0))s"
