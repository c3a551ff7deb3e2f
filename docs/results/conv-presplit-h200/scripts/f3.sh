#!/bin/sh
# GPU call 3: the 63 conv-led level-2 problems with the new mish (-m, the
# default: two barriers a K tile) and SYNC 1 (-s, one barrier); the 8 mish
# problems as call 1 rendered them (-t); ncu sections of 001's conv kernel, both.
set -u
tar -xJf build-gpu/bundle.tar.xz
export LD_LIBRARY_PATH=$PWD/gpu-bundle/lib BUILD=gpu-bundle KFORGE_ROOT=$PWD KFORGE=$PWD/gpu-bundle/kforge
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
t0=$(date +%s)
LEVEL=2 sh tools/level2/graph_kernels.sh eval gpuwork/e4 "$OUT/f3.jsonl" 420 gpu-bundle 2>&1 | tail -n 1
echo "l2 $(($(date +%s) - t0))s"
NCU=$(which ncu || ls /opt/nvidia/nsight-compute/*/ncu /usr/local/cuda/bin/ncu 2>/dev/null | head -1)
for v in m s; do
  f=$(ls gpuwork/e4/001_*-$v.cu); p=level2/$(basename "$f" -$v.cu)
  timeout 60 "$NCU" --clock-control none -k 'regex:^g0_conv_tc$' -c 1 --section SpeedOfLight \
    --section ComputeWorkloadAnalysis --section WarpStateStats --section SchedulerStats --section InstructionStats \
    "$KFORGE" --db /tmp/p.db eval "$p" "$f" --quick --force > "$OUT/ncu-001-$v.txt" 2>&1
  echo "ncu $v rc $?"
done
echo "done $(($(date +%s) - t0))s"
