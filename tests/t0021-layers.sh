#!/bin/sh
# The folders are layers (docs/architecture.md, "The map"): a file may
# include from its own folder and the folders below it, never from one
# above. Lowest first:
#   core problem oracle store engine kernels collector verifier dataset site cli
# (kernels/emit and kernels/graph are kernels). Lists each offence as
# file:line, and fails on a source folder the order does not place.
. "$KF_ROOT/tests/lib.sh"

LAYERS="core problem oracle store engine kernels collector verifier dataset site cli"

# offences ROOT: "file:line: folder includes higher/..." for each upward include
offences() {
	(cd "$1" && find . -path ./build -prune -o -path './build-*' -prune -o -path ./tests -prune -o \
		-path ./problems -prune -o -path ./gpu-bundle -prune -o \
		\( -name '*.c' -o -name '*.h' -o -name '*.cuh' -o -name '*.inc' \) -print |
		sed 's|^\./||' | sort | while read -r f; do
			grep -nE '^[[:space:]]*#[[:space:]]*include[[:space:]]+"[a-z]+/' "$f" |
				sed -E "s|^([0-9]+):[^\"]*\"([a-z]+)/.*|$f:\1 \2|"
		done) | awk -v layers="$LAYERS" '
		BEGIN { n = split(layers, l, " "); for (i = 1; i <= n; i++) rank[l[i]] = i }
		{
			split($1, p, "/"); own = p[1]; inc = $2
			if (!(own in rank)) { print $1 ": folder " own " has no place in the layer order"; next }
			if (!(inc in rank)) next   # not a source folder (gen/ headers of the build)
			if (rank[inc] > rank[own]) print $1 ": " own " includes " inc " (a higher layer)"
		}'
}

# the check finds what it must: a planted upward include, a folder with no place
mkdir -p fake/core fake/store fake/newroom
printf '#include "store/store.h"\n' >fake/core/a.c
printf '#include "core/buf.h"\n#include "store/store.h"\n' >fake/store/b.c
printf '#include "core/buf.h"\n' >fake/newroom/c.c
offences fake >fake.out
contains "a planted include from core/ to store/ is found" fake.out '^core/a\.c:1: core includes store'
lacks "an include of the same or a lower layer is not" fake.out '^store/b\.c'
contains "a source folder outside the order is found" fake.out '^newroom/c\.c:1: folder newroom has no place'

offences "$KF_ROOT" >offences.txt
check "the tree has source files in every layer" sh -c 'for d in $0; do ls "$1/$d"/*.[ch] >/dev/null 2>&1 || exit 1; done' \
	"$LAYERS" "$KF_ROOT"
if [ -s offences.txt ]; then
	nok "no include from a lower layer to a higher one ($(wc -l <offences.txt) found)"
	sed 's/^/#   /' offences.txt | head -n 40
else
	ok "no include from a lower layer to a higher one"
fi
# the Makefile builds the same folders (cli aside), in the same order
mk=$(sed -n '/^LIB_DIRS :=/,/[^\\]$/p' "$KF_ROOT/Makefile" | tr -d '\\' | sed 's/LIB_DIRS :=//' |
	tr -s ' \t\n' ' ' | tr ' ' '\n' | grep -v '/' | tr '\n' ' ' | sed 's/^ *//; s/ *$//')
check "the Makefile's LIB_DIRS are the layers in order ($mk)" test "$mk cli" = "$LAYERS"
# each folder says what it is, who owns it and what it may include, at the
# top of its main header
for h in core/buf.h problem/problem.h oracle/oracle.h store/store.h engine/engine.h kernels/kernels.h \
	collector/search.h verifier/verify.h dataset/dataset.h site/site.h cli/cli.h; do
	contains "$h opens with its folder's paragraph" "$KF_ROOT/$h" "^/\* ${h%%/*}/: "
done
