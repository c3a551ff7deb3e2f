#!/bin/sh
# GPU call 2: KF 2 (two K tiles summed in the tensor cores between FADDs) on
# the 63 conv-led level-2 problems (-k); level 1's 30 conv_tce problems on the
# wgmma core, 3xTF32, new (-n) and 0c727d6 (-o); g0520 with the new code.
set -u
tar -xJf build-gpu/bundle.tar.xz
export LD_LIBRARY_PATH=$PWD/gpu-bundle/lib BUILD=gpu-bundle KFORGE_ROOT=$PWD KFORGE=$PWD/gpu-bundle/kforge
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
t0=$(date +%s)
LEVEL=2 sh tools/level2/graph_kernels.sh eval gpuwork/e2 "$OUT/f2k.jsonl" 200 gpu-bundle 2>&1 | tail -n 1
echo "l2 $(($(date +%s) - t0))s"
LEVEL=1 sh tools/level2/graph_kernels.sh eval gpuwork/e3 "$OUT/f2l1.jsonl" 220 gpu-bundle 2>&1 | tail -n 1
echo "l1 $(($(date +%s) - t0))s"
export KF_ROOT=$PWD KF_BUILD=$PWD/gpu-bundle
CONV_EPI_CORES=wgmma timeout 120 sh tests/gpu/g0520-conv-epi.sh > "$OUT/g0520.log" 2>&1; echo "g0520 rc $? $(grep -c '^ok' "$OUT/g0520.log") ok $(grep -c '^not ok' "$OUT/g0520.log") not ok"
echo "done $(($(date +%s) - t0))s"
