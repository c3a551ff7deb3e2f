#!/bin/sh
# Ninth session's inputs (after render2.sh, which makes gpuwork/f2): f3, the 25
# level-2 renderings whose text changed since the last H200 run (g4.sh, g8.sh);
# n4, level 3's once 0 (-a) / once 1 (-b) pairs for the nets call 1 had not
# reached, and ResNet18 again (g6.sh).
E=build-dev/tests/builtin_emit
set -eu
rm -rf gpuwork/f3 gpuwork/n4; mkdir -p gpuwork/f3 gpuwork/n4
for p in 002 003 005 015 016 020 026 034 036 038 042 044 045 049 050 058 060 072 074 078 089 091 093 096 100; do
	cp gpuwork/f2/${p}_*-t.cu gpuwork/f3/
done
for p in 009 018 028 029 032; do
	d=$(ls -d problems/level3/${p}_*); n=$(basename "$d")
	"$E" render "$d/spec.json" graph '{"fuse":1,"tc":1,"once":0}' >"gpuwork/n4/$n-a.cu"
	"$E" render "$d/spec.json" graph '{"fuse":1,"tc":1}' >"gpuwork/n4/$n-b.cu"
done
echo "f3 $(ls gpuwork/f3 | wc -l) n4 $(ls gpuwork/n4 | wc -l)"
