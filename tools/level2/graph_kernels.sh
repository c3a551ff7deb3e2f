#!/bin/sh
# The graph template's kernels of every level-2 problem, rendered here and
# evaluated on a GPU through one engine (docs/results/level2-builtin-h200).
#   tools/level2/graph_kernels.sh render DIR [BUILD]      DIR/<problem>-t.cu (tensor cores), -f.cu (fp32)
#   tools/level2/graph_kernels.sh eval DIR OUT.jsonl [SECONDS] [BUILD]   every DIR/*.cu; needs a GPU
# BUILD: a build or gpu-bundle directory (default build).
set -u
cmd=${1:?render or eval}
dir=${2:?directory}
case $cmd in
render)
	b=${3:-build}
	mkdir -p "$dir"
	for d in problems/level2/*/; do
		n=$(basename "$d")
		"$b/tests/builtin_emit" render "$d/spec.json" graph '{"fuse":1,"tc":1}' >"$dir/$n-t.cu" || exit 1
		"$b/tests/builtin_emit" render "$d/spec.json" graph '{"fuse":1}' >"$dir/$n-f.cu" || exit 1
	done ;;
eval)
	out=${3:?results file}
	limit=${4:-400}
	b=${5:-build}
	set --
	for f in "$dir"/*.cu; do
		n=$(basename "$f" .cu)
		set -- "$@" "level2/${n%-*}" "$f"
	done
	timeout "$limit" "$b/tests/kfeval" --kforge "$b/kforge" --db "${TMPDIR:-/tmp}/graph-kernels.db" \
		--max-timing-s 0.3 --timeout 60 "$@" >"$out"
	echo "kfeval exit $?: $(wc -l <"$out") results in $out" ;;
*)
	echo "usage: graph_kernels.sh render DIR | eval DIR OUT.jsonl [SECONDS]" >&2
	exit 2 ;;
esac
