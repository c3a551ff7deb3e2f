#!/bin/sh
# torch.compile (inductor, default mode) baselines on the device.
#   [NPROC=4] sh tc.sh LEVEL PROBLEMS WARM_S BUDGET_S TAG
# Warm: NPROC processes compile a share of PROBLEMS each and run it once
# (--trials 1, results thrown away), filling inductor's on-disk caches
# (FX graph, AOTAutograd, Triton). Time: one process, alone on the GPU,
# compiles again (cache hits) and times 100 trials as always. The warm pass
# only moves compile work off the timed pass; the kernels are the same.
set -u
L=$1 P=$2 WARM=$3 BUDGET=$4 TAG=$5 N=${NPROC:-4}
export TORCHINDUCTOR_CACHE_DIR=/tmp/kf-inductor TRITON_CACHE_DIR=/tmp/kf-triton
export TORCHINDUCTOR_FX_GRAPH_CACHE=1 TORCHINDUCTOR_AUTOGRAD_CACHE=1
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
python3 -c 'import torch, triton; print("torch", torch.__version__, "triton", triton.__version__)'
t0=$(date +%s)
if [ "$WARM" -gt 0 ]; then
	list=$(python3 - "$L" "$P" "$N" <<'PY'
import sys; sys.path.insert(0, "tools"); import kfproblems, os
todo = kfproblems.problem_dirs(os.getcwd(), int(sys.argv[1]), sys.argv[2])
nums = [n for n, _ in todo]
print(" ".join(",".join(str(x) for x in nums[i::int(sys.argv[3])]) or "-" for i in range(int(sys.argv[3]))))
PY
)
	i=0
	for part in $list; do
		[ "$part" = - ] && continue
		TORCHINDUCTOR_COMPILE_THREADS=$((16 / N > 1 ? 16 / N : 1)) timeout "$WARM" python3 tools/torch_baseline.py --level "$L" \
			--problems "$part" --variant compile --trials 1 --warmup 1 --out /tmp/kf-warm \
			>"/tmp/warm$i.log" 2>&1 &
		i=$((i + 1))
	done
	wait
	echo "warm: $(($(date +%s) - t0)) s; $(cat /tmp/warm*.log | grep -c ' compile ') compiled"
	grep -h "error" /tmp/warm*.log | cut -c1-200 | head -20
fi
[ "$BUDGET" -gt 0 ] || exit 0
t1=$(date +%s)
python3 tools/torch_baseline.py --level "$L" --problems "$P" --variant compile \
	--time-budget "$BUDGET" --record "$OUT/rec-$TAG.json" --out "$OUT/base-$TAG" 2>&1 |
	grep -v "UserWarning\|warnings.warn" | tee "$OUT/log-$TAG.txt" | tail -n 3
echo "timed: $(($(date +%s) - t1)) s"
