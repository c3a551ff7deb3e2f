#!/bin/sh
# GPU calls 2-3: f2, every level-2 problem's default tensor-core rendering
# ({"fuse":1,"tc":1}); c2, the level-1 conv family shortlist (v: the v0.1.0
# search's best template and parameters, w: conv_tce wgmma 3xTF32, o2: convt_phase
# cot 8 for the strided transposed convs).
E=build-dev/tests/builtin_emit
set -u
rm -rf gpuwork/f2 gpuwork/c2; mkdir -p gpuwork/f2 gpuwork/c2
r() { n=$(basename "$1"); "$E" render "$1/spec.json" "$2" "$3" >"$5/$n-$4.cu" 2>/dev/null || rm -f "$5/$n-$4.cu"; }
for d in problems/level2/*/; do r "$d" graph '{"fuse":1,"tc":1}' t gpuwork/f2; done
while read -r pid t pp; do
	d=problems/$pid
	case ${pid#level1/} in
	054* | 059* | 070* | 071* | 074* | 075* | 076* | 079* | 081* | 08[2-6]*) r "$d" "$t" "$pp" v gpuwork/c2 ;;
	esac
	r "$d" conv_tce '{"core":"wgmma","split":"3xtf32"}' w gpuwork/c2
done <"$(dirname "$0")/v01best.txt"
for p in 072 073 075 077 079 081; do
	r "$(ls -d problems/level1/${p}_*)" convt_phase '{"cot":8,"block":256}' o2 gpuwork/c2
done
echo "f2 $(ls gpuwork/f2 | wc -l) c2 $(ls gpuwork/c2 | wc -l)"
