#!/bin/sh
# The graph template's kernels of every level-2 problem (LEVEL=3: level 3;
# eval takes LEVEL=1 for level-1 kernels, e.g. matmul_tce's),
# rendered here and evaluated on a GPU through one engine
# (docs/results/level2-builtin-h200 (git history: 5fd28ee)).
#   tools/graph_kernels.sh render DIR [BUILD]      DIR/<problem>-t.cu (tensor cores), -f.cu (fp32),
#                                                  -d.cu (f64, specs flagged ill_conditioned only)
#     VARIANTS="t d" renders only those.
#   tools/graph_kernels.sh eval DIR OUT.jsonl [SECONDS] [BUILD]   every DIR/*.cu; needs a GPU
# BUILD: a build or gpu-bundle directory (default build).
set -u
LEVEL=${LEVEL:-2}
case $LEVEL in 1 | 2 | 3) ;; *) echo "graph_kernels.sh: LEVEL is 1, 2 or 3" >&2; exit 2 ;; esac
cmd=${1:?render or eval}
dir=${2:?directory}
case $cmd in
render)
	b=${3:-build}
	bad=0
	mkdir -p "$dir"
	for d in problems/level$LEVEL/*/; do
		n=$(basename "$d")
		for v in 't {"fuse":1,"tc":1}' 'f {"fuse":1}' 'd {"fuse":1,"f64":1}'; do
			case " ${VARIANTS:-t f d} " in *" ${v%% *} "*) ;; *) continue ;; esac
			[ "${v%% *}" = d ] && ! grep -q '"ill_conditioned"' "$d/spec.json" && continue
			if ! "$b/tests/builtin_emit" render "$d/spec.json" graph "${v#* }" >"$dir/$n-${v%% *}.cu" \
				2>"$dir/.err"; then
				echo "$n-${v%% *}: $(tail -n 1 "$dir/.err")" >&2
				rm -f "$dir/$n-${v%% *}.cu"
				bad=$((bad + 1))
			fi
		done
	done
	rm -f "$dir/.err"
	[ "$bad" -eq 0 ] || { echo "graph_kernels.sh: $bad kernel(s) not rendered" >&2; exit 1; } ;;
eval)
	out=${3:?results file}
	limit=${4:-400}
	b=${5:-build}
	set --
	for f in "$dir"/*.cu; do
		n=$(basename "$f" .cu)
		set -- "$@" "level$LEVEL/${n%-*}" "$f"
	done
	timeout "$limit" "$b/tests/kfeval" --kforge "$b/kforge" --db "${TMPDIR:-/tmp}/graph-kernels.db" \
		--max-timing-s 0.3 --timeout 60 "$@" >"$out"
	echo "kfeval exit $?: $(wc -l <"$out") results in $out" ;;
*)
	echo "usage: graph_kernels.sh render DIR | eval DIR OUT.jsonl [SECONDS]" >&2
	exit 2 ;;
esac
