#!/bin/sh
# rend.sh EMIT LEVEL TEMPLATE PARAMS TAG DIR [FILTER]: render every problem of
# LEVEL with TEMPLATE and PARAMS into DIR/<problem>-TAG.cu; FILTER: keep only
# renderings whose text matches this grep pattern.
E=$1 L=$2 T=$3 P=$4 tag=$5 dir=$6 f=${7:-}
mkdir -p "$dir"
for d in problems/level$L/*/; do
	n=$(basename "$d")
	"$E" render "$d/spec.json" "$T" "$P" >"$dir/$n-$tag.cu" 2>/dev/null || { rm -f "$dir/$n-$tag.cu"; continue; }
	[ -z "$f" ] || grep -q "$f" "$dir/$n-$tag.cu" || rm -f "$dir/$n-$tag.cu"
done
ls "$dir" | grep -c -- "-$tag.cu"
