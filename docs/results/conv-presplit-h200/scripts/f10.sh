#!/bin/sh
# GPU call 10: g0520 with the final code (wgmma core; 087 takes the pointwise GEMM).
set -u
tar -xJf build-gpu/bundle.tar.xz
export KF_ROOT=$PWD KF_BUILD=$PWD/gpu-bundle LD_LIBRARY_PATH=$PWD/gpu-bundle/lib BUILD=gpu-bundle KFORGE_ROOT=$PWD KFORGE=$PWD/gpu-bundle/kforge
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
t0=$(date +%s)
CONV_EPI_CORES=wgmma CONV_EPI_PROBLEMS="87 63 50 72" CONV_EPI_L2="1 4" \
  timeout 200 sh tests/gpu/g0520-conv-epi.sh > "$OUT/g0520-final.log" 2>&1; echo "g0520 rc $? $(grep -c '^ok' "$OUT/g0520-final.log") ok $(grep -c '^not ok' "$OUT/g0520-final.log") not ok"
echo "done $(($(date +%s) - t0))s"
