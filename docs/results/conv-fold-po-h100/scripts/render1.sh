#!/bin/sh
# Renders GPU call 1's kernels. c1: level-1 conv family shortlist; n2: level-2
# conv_po 0/1 pairs; n3: level-3 once 0/1 pairs. Needs /tmp/v01.db (zstd -d
# docs/results/level1-builtin-v0.1.0/kforge-merged.db.zst -o /tmp/v01.db; in git history: c943289). It ran
# before PO became the default (w was PO 0 then: add "PO":0 to reproduce) and
# with convt_phase's dropped `st` option (s1-s4 no longer render).
E=build-dev/tests/builtin_emit
set -u
rm -rf gpuwork/c1 gpuwork/n2 gpuwork/n3; mkdir -p gpuwork/c1 gpuwork/n2 gpuwork/n3
r() { # problemdir template params tag dir
	n=$(basename "$1"); "$E" render "$1/spec.json" "$2" "$3" >"$5/$n-$4.cu" 2>/dev/null || rm -f "$5/$n-$4.cu"; }
sqlite3 -separator ' ' /tmp/v01.db "select c.problem_id, c.template_id, c.params, min(e.time_median_ms) from candidates c join evals e on e.kernel_hash=c.kernel_hash and e.problem_id=c.problem_id where e.status='correct' and e.gpu_name like '%H100%' and c.problem_id between 'level1/050' and 'level1/088' and c.problem_id not like 'level1/05_Arg%' and c.problem_id not like 'level1/053%' group by c.problem_id order by c.problem_id" | grep -v 'level1/05[123]_' | awk '{print $1, $2, $3}' > gpuwork/v01best.txt
while read -r pid t pp; do
	d=problems/$pid; r "$d" "$t" "$pp" v gpuwork/c1
	r "$d" conv_tce '{"core":"wgmma","split":"3xtf32"}' w gpuwork/c1
done < gpuwork/v01best.txt
for p in 072 073 075 077 079 081; do
	d=$(ls -d problems/level1/${p}_*)
	r "$d" conv_tce '{"core":"wgmma","split":"3xtf32","PO":1}' p gpuwork/c1
	r "$d" convt_phase '{"cot":4,"block":256,"st":1}' s1 gpuwork/c1
	r "$d" convt_phase '{"cot":8,"block":256,"st":1}' s2 gpuwork/c1
	r "$d" convt_phase '{"cot":4,"block":512,"st":1}' s3 gpuwork/c1
	r "$d" convt_phase '{"cot":8,"block":512,"st":1}' s4 gpuwork/c1
	r "$d" convt_phase '{"cot":8,"block":256}' o2 gpuwork/c1
done
for d in problems/level2/*/; do
	n=$(basename "$d")
	r "$d" graph '{"fuse":1,"tc":1}' a gpuwork/n2
	r "$d" graph '{"fuse":1,"tc":1,"conv_po":1}' b gpuwork/n2
	if cmp -s "gpuwork/n2/$n-a.cu" "gpuwork/n2/$n-b.cu"; then rm -f "gpuwork/n2/$n-a.cu" "gpuwork/n2/$n-b.cu"; fi
done
for p in 009 011 012 007 018 028 029 032; do
	d=$(ls -d problems/level3/${p}_*)
	r "$d" graph '{"fuse":1,"tc":1,"once":0}' a gpuwork/n3
	r "$d" graph '{"fuse":1,"tc":1}' b gpuwork/n3
	n=$(basename "$d"); cmp -s "gpuwork/n3/$n-a.cu" "gpuwork/n3/$n-b.cu" && echo "$n: once makes no difference"
done
echo "c1 $(ls gpuwork/c1 | wc -l) n2 $(ls gpuwork/n2 | wc -l) n3 $(ls gpuwork/n3 | wc -l)"
