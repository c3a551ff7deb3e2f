#!/bin/sh
# Regenerates problems/level{1,2,3}/ from the generators beside this script
# (make problems), or with --check regenerates them into a scratch directory
# and compares with the committed files, naming every file that differs,
# is missing or is extra; exit 1 on any difference.
#   problems/gen/problems.sh [--check] [--kernelbench DIR] [--root DIR] [--level 1,2,3]
# --kernelbench DIR: KernelBench's files, an input (not part of the tree):
#   DIR/level1.tsv (every level-1 shape is checked against it), DIR/level2/
#   and DIR/level3/ (the module files). Without it the committed
#   reference.py files of levels 2 and 3 are the source.
# --root DIR: the repository root (default: the one holding this script).
# --level LIST: only these levels (default 1,2,3).
set -u
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
check=0
kb=
levels=1,2,3
usage() { echo "usage: problems/gen/problems.sh [--check] [--kernelbench DIR] [--root DIR] [--level 1,2,3]" >&2; exit 2; }
while [ $# -gt 0 ]; do
	case $1 in
	--check) check=1 ;;
	--kernelbench) [ $# -ge 2 ] || usage; kb=$2; shift ;;
	--root) [ $# -ge 2 ] || usage; root=$2; shift ;;
	--level) [ $# -ge 2 ] || usage; levels=$2; shift ;;
	*) usage ;;
	esac
	shift
done
PY=${PYTHON:-python3}
want() { case ",$levels," in *",$1,"*) return 0 ;; *) return 1 ;; esac; }
case ",$levels," in *[!,123]*) usage ;; esac
if [ -n "$kb" ]; then
	for l in 2 3; do
		want $l || continue
		[ -d "$kb/level$l" ] || { echo "problems.sh: no $kb/level$l (--kernelbench DIR holds level2/, level3/)" >&2; exit 2; }
	done
fi
tmp=$(mktemp -d "${TMPDIR:-/tmp}/kforge-problems.XXXXXX") || exit 1
trap 'rm -rf "$tmp"' EXIT
out=$root
[ "$check" = 0 ] || { out=$tmp/tree; mkdir "$out"; }
# one generator: its errors go to stderr; a failure fails the run
bad=0
gen() {
	"$PY" "$@" --root "$root" --out "$out" >"$tmp/gen.log" 2>&1 || {
		echo "problems.sh: failed: $*" >&2
		sed 's/^/  /' "$tmp/gen.log" >&2
		bad=1
	}
	[ "$check" = 1 ] || cat "$tmp/gen.log"
}
tsv=
[ -n "$kb" ] && [ -f "$kb/level1.tsv" ] && tsv=$kb/level1.tsv
if want 1; then
	gen "$here/level1/gen_a.py"
	gen "$here/level1/gen_b.py" ${tsv:+--tsv "$tsv"}
fi
! want 2 || gen "$here/level2/gen.py" ${kb:+--kb "$kb/level2"}
! want 3 || gen "$here/level3/gen.py" ${kb:+--kb "$kb/level3"}
[ "$bad" = 0 ] || exit 1
[ "$check" = 1 ] || exit 0
# Compare the scratch tree with the committed one, file by file.
n=0
for l in 1 2 3; do
	want $l || continue
	l=level$l
	d=$(LC_ALL=C diff -rq "$out/problems/$l" "$root/problems/$l" 2>&1) || {
		printf '%s\n' "$d" | sed -e "s|$out/|generated: |g" -e "s|$root/||g" >&2
		n=$((n + $(printf '%s\n' "$d" | wc -l)))
	}
done
if [ "$n" -gt 0 ]; then
	echo "problems.sh: $n difference(s) between the generators and the committed problems (make problems)" >&2
	exit 1
fi
echo "problems.sh: every file of problems/level$(echo "$levels" | sed 's/,/, level/g') is what the generators write"
