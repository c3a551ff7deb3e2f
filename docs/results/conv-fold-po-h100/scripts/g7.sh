#!/bin/sh
# Session 9 call 4: on an H200 first level 2's default renderings (f2); then, on
# either card, `make dataset`'s pipeline (scripts/dataset.sh) on ten level-3
# problems, 1 round, 1 idea, 1 kernel, TOP=1, verified without the sanitizer.
set -u
tar -xJf build-gpu/bundle.tar.xz
export LD_LIBRARY_PATH=$PWD/gpu-bundle/lib BUILD=gpu-bundle KFORGE_ROOT=$PWD KFORGE=$PWD/gpu-bundle/kforge
g=$(nvidia-smi --query-gpu=name,driver_version --format=csv,noheader); echo "$g"
t0=$(date +%s)
case $g in
*H200*)
	LEVEL=2 sh tools/level2/graph_kernels.sh eval gpuwork/f2 "$OUT/f2-h200.jsonl" 330 gpu-bundle 2>&1 | tail -n 1
	echo "f2 $(($(date +%s) - t0))s" ;;
esac
P=level3/1,level3/4,level3/9,level3/20,level3/24,level3/28,level3/35,level3/39,level3/44,level3/48
ROUNDS=1 K=1 M=1 TOP=1 JOBS=4 VERIFY_ARGS="--no-sanitizer --max-timing 1" DB=l3.db OUT=dist \
	timeout $((565 - ($(date +%s) - t0))) sh scripts/dataset.sh "$P" >"$OUT/dataset.log" 2>&1
echo "dataset rc $? $(($(date +%s) - t0))s"
tail -n 25 "$OUT/dataset.log"
xz -T4 -c l3.db >"$OUT/l3.db.xz"
tar -cJf "$OUT/dist.tar.xz" dist 2>/dev/null
