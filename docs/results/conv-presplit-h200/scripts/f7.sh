#!/bin/sh
# GPU call 7: the final text (the 32-bit row split inlined in the wgmma core;
# the mma.sync core's store and row split as at 0c727d6): level 2's 63
# conv-led problems (-t); AlexNet, GoogLeNet, VGG16/19 final (-f) and 0c727d6 (-o).
set -u
tar -xJf build-gpu/bundle.tar.xz
export LD_LIBRARY_PATH=$PWD/gpu-bundle/lib BUILD=gpu-bundle KFORGE_ROOT=$PWD KFORGE=$PWD/gpu-bundle/kforge
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
t0=$(date +%s)
LEVEL=2 sh tools/level2/graph_kernels.sh eval gpuwork/e9 "$OUT/f7l2.jsonl" 250 gpu-bundle 2>&1 | tail -n 1
echo "l2 $(($(date +%s) - t0))s"
LEVEL=3 sh tools/level2/graph_kernels.sh eval gpuwork/e10 "$OUT/f7l3.jsonl" 200 gpu-bundle 2>&1 | tail -n 1
echo "done $(($(date +%s) - t0))s"
