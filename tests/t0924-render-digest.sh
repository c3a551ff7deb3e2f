#!/bin/sh
# The built-in templates render the same kernels, byte for byte: for a fixed
# sample of problems (levels 1-3, every template family and idea kind the
# sample reaches) each default rendering and each idea's first two
# implementations (tests/tools/render_digest.sh) hash as recorded in
# tests/fixtures/render-digest-sample.txt. Refactors of the emitters and of
# kernels/cuda/*.cuh must keep it; a change meant to alter a kernel
# regenerates the fixture with the command printed on failure and says so in
# its commit. The long tier (make test-long) hashes all 250 problems'
# renderings against one sha256 in tests/fixtures/render-digest-all.sha256.
# The sections of kernels/cuda/*.cuh and the C code's references to them
# match one to one, each call gives exactly its section's placeholders
# (tests/tools/cuh_keys.py), and no two .cuh files share a name (the
# generated headers are named by it).
. "$KF_ROOT/tests/lib.sh"

E="$KF_BUILD/tests/builtin_emit"
FIX="$KF_ROOT/tests/fixtures/render-digest-sample.txt"
ALL="$KF_ROOT/tests/fixtures/render-digest-all.sha256"
DIGEST="$KF_ROOT/tests/tools/render_digest.sh"

# refs ROOT, secs ROOT: "cuh section" for each reference in kernels/ C code,
# for each section of kernels/cuda/*.cuh (a repeated one twice)
refs() {
	grep -rhoE 'bt_cuh_(section|fill)\([^,]+, *[a-z0-9_]+_cuh, *"[a-z0-9_]+"' "$1/kernels" |
		sed -E 's/.*, *([a-z0-9_]+)_cuh, *"([a-z0-9_]+)"$/\1 \2/' | sort -u
}
secs() {
	for f in "$1"/kernels/cuda/*.cuh; do
		sed -n "s|^//@ \([a-z0-9_]*\)\$|$(basename "$f" .cuh) \1|p" "$f"
	done | sort
}
refs "$KF_ROOT" >refs.txt
secs "$KF_ROOT" >secs.txt
check "the C code names $(wc -l <refs.txt) sections, each once in kernels/cuda, and uses all" \
	sh -c '[ -s refs.txt ] && cmp refs.txt secs.txt'
diff refs.txt secs.txt | head -n 5 | sed 's/^/#   /'
# the comparison finds a planted unused section and a repeated one
mkdir -p fake/kernels/cuda
printf '\tbt_cuh_section(s, a_cuh, "one");\n\tbt_cuh_fill(s, a_cuh, "two", "K", v, NULL);\n' >fake/kernels/x.c
printf '// a\n//@ one\nx\n//@ two\n@K@\n' >fake/kernels/cuda/a.cuh
refs fake >f.refs && secs fake >f.secs
check "a matching fake passes" cmp -s f.refs f.secs
printf '//@ three\n' >>fake/kernels/cuda/a.cuh
secs fake >f.secs
check_fail "an unused section is found" cmp -s f.refs f.secs
sed -i '/^\/\/@ three$/d' fake/kernels/cuda/a.cuh
printf '//@ one\n' >>fake/kernels/cuda/a.cuh
secs fake >f.secs
check_fail "a repeated section is found" cmp -s f.refs f.secs
if command -v python3 >/dev/null 2>&1; then
	python3 "$KF_ROOT/tests/tools/cuh_keys.py" "$KF_ROOT" >keys.out
	check "every bt_cuh_fill gives its section's placeholders, bt_cuh_section none" \
		test ! -s keys.out
	sed 's/^/#   /' keys.out | head -n 5
	printf '//@ three\n@K@ @J@\n' >>fake/kernels/cuda/a.cuh
	printf '\tbt_cuh_fill(s, a_cuh, "three", "K", v, NULL);\n' >>fake/kernels/x.c
	python3 "$KF_ROOT/tests/tools/cuh_keys.py" fake >keys.out
	contains "a placeholder without value is found" keys.out 'three gives \[.K.\], the section has \[.J., .K.\]'
else
	skip "python3 missing: placeholders not checked"
fi
dups=$(find "$KF_ROOT" -path "$KF_ROOT/build*" -prune -o -name '*.cuh' -print | xargs -n1 basename |
	sort | uniq -d)
check "no two .cuh files share a name${dups:+ ($dups)}" test -z "$dups"

# the sample: a tree of links to the problems the fixture names
mkdir -p sample
cut -d' ' -f1 "$FIX" | uniq | while read -r p; do
	mkdir -p "sample/$(dirname "$p")"
	ln -s "$KF_ROOT/problems/$p" "sample/$p"
done
n=$(ls -d sample/level*/* | wc -l)
check "the sample names $n >= 12 problems over levels 1-3" \
	sh -c "[ $n -ge 12 ] && ls -d sample/level1/* sample/level2/* sample/level3/* >/dev/null"

sh "$DIGEST" "$E" sample >digest.txt
regen="sh tests/tools/render_digest.sh $KF_BUILD/tests/builtin_emit problems | grep -E '^($(cut -d' ' -f1 "$FIX" | uniq | paste -sd'|')) ' > tests/fixtures/render-digest-sample.txt"
# same P DIGEST: P's renderings in DIGEST are the fixture's (none missing)
same() {
	grep "^$1 " "$FIX" | sort >want
	grep "^$1 " "$2" | sort >got
	[ -s got ] && cmp -s want got
}
for p in $(cut -d' ' -f1 "$FIX" | uniq); do
	if same "$p" digest.txt; then
		ok "$p: $(wc -l <got) renderings as recorded"
	else
		nok "$p: renderings differ from the fixture"
		diff want got | head -n 10 | sed 's/^/#   /'
		changed=1
	fi
done
if [ -n "${changed:-}" ]; then
	echo "# an intended change regenerates the fixture (from the repository root):"
	echo "#   $regen"
fi
# the comparison tells one changed rendering apart
p=$(grep -v unsupported digest.txt | head -n 1 | cut -d' ' -f1)
awk -v p="$p" '!d && $1 == p && $3 != "unsupported" { $3 = "0000000000000000"; d = 1 } 1' \
	digest.txt >changed.txt
check_fail "one changed rendering of $p is a difference" same "$p" changed.txt

if long_tier; then
	sh "$DIGEST" "$E" "$KF_ROOT/problems" >all.txt
	got=$(sort all.txt | sha256sum | cut -c1-64)
	if [ "$got" = "$(cut -c1-64 "$ALL")" ]; then
		ok "all $(wc -l <all.txt) renderings of the 250 problems hash as recorded"
	else
		nok "the renderings of the 250 problems changed (sha256 $got)"
		echo "# to see which: render the base commit's tree and diff the digests, e.g."
		echo "#   git worktree add /tmp/kf-base BASE && make -C /tmp/kf-base test-build"
		echo "#   sh tests/tools/render_digest.sh /tmp/kf-base/build/tests/builtin_emit problems >base.txt"
		echo "#   sh tests/tools/render_digest.sh build/tests/builtin_emit problems >new.txt; diff base.txt new.txt"
		echo "# an intended change records the new one:"
		echo "#   sh tests/tools/render_digest.sh build/tests/builtin_emit problems | sort | sha256sum >tests/fixtures/render-digest-all.sha256"
	fi
else
	skip "the 250 problems' renderings: long tier (make test-long)"
fi
