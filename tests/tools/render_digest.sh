#!/bin/sh
# The digest of every built-in rendering of every problem: each template's
# default rendering (or "unsupported") and each applicable idea's first two
# implementations (builtin_emit all). Two trees render the same kernels
# when their digests are equal (issue 40: moves and .cuh extraction keep
# every rendering byte-identical).
#   tests/tools/render_digest.sh BUILTIN_EMIT PROBLEMS_DIR > digest.txt
set -u
emit=$1 root=$2
ids="conv conv_dw conv_igemm conv_tc conv_tce convt convt_igemm convt_phase diagmm ew gemv graph
matmul matmul_splitk matmul_tc matmul_tce norm_rms norm_row norm_stats pool pool_tile reduce rowsoftmax scan"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
for spec in "$root"/level*/*/spec.json; do
	p=${spec#"$root"/}
	p=${p%/spec.json}
	for t in $ids; do
		if "$emit" render "$spec" "$t" '{}' >"$tmp/k.cu" 2>/dev/null; then
			echo "$p $t $(sha256sum <"$tmp/k.cu" | cut -c1-16)"
		else
			echo "$p $t unsupported"
		fi
	done
	rm -rf "$tmp/all" && mkdir "$tmp/all"
	"$emit" all "$spec" "$tmp/all" 2 1 >/dev/null 2>&1
	(cd "$tmp/all" && for f in *; do [ -f "$f" ] && echo "$p $f $(sha256sum <"$f" | cut -c1-16)"; done)
done
