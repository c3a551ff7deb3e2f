#!/bin/sh
# Browser test: Debian's chromium (headless) through chromedriver loads the
# index, a problem page and a kernel page of a rendered fixture from
# file://, checks tables and charts through the DOM against the store, and
# saves screenshots under $KF_BUILD/test-artifacts/.
. "$(dirname "$0")/lib.sh" 2>/dev/null || . "$KF_ROOT/tests/lib.sh"

CHROMIUM=$(command -v chromium || command -v chromium-browser || true)
CHROMEDRIVER=$(command -v chromedriver || true)
if [ -z "$CHROMIUM" ] || [ -z "$CHROMEDRIVER" ]; then
	skip "chromium or chromedriver missing (Debian packages chromium, chromium-driver)"
	exit 0
fi
export CHROMIUM CHROMEDRIVER
# --wide: four GPUs and long level-2 names, the leaderboard's widest case.
python3 "$KF_ROOT/tests/tools/synthstore.py" --kernels 120 --problems 5 --seed 11 --hostile --wide --out fx.db 2>/dev/null
# Profiles (schema v5: added after kforge migrated the store) for the
# problem page's profile and diff view.
expect_exit 0 "the fixture migrates to v5" "$KFORGE" store migrate --db fx.db
python3 "$KF_ROOT/tests/tools/synthstore.py" --add-profiles fx.db --seed 11 2>/dev/null
mkdir dist && printf 'tarball bytes' >dist/kforge-t-1.0.tar.zst &&
	(cd dist && sha256sum kforge-t-1.0.tar.zst >kforge-t-1.0.tar.zst.sha256)
expect_exit 0 "site renders" "$KFORGE" site --db fx.db -o public --dist dist
# A compile-only store, made by the real search (no GPU needed).
co=
if "$KFORGE" --db co.db search --problems 1,level2/2 --rounds 1 --ideas 1 --impls 1 --proposer builtin \
	--compile-only >co.log 2>&1 && "$KFORGE" --db co.db site -o co-site >>co.log 2>&1; then
	co=co-site
else
	skip "a compile-only search failed here: the compile-only checks are left out"
	tail -n 5 co.log | sed 's/^/# /'
fi
ART="$KF_BUILD/test-artifacts"
rm -f "$ART"/site-*.png
timeout 400 python3 "$KF_ROOT/tests/tools/sitebrowser.py" fx.db public "$ART" $co >b.out 2>&1
rc=$?
while IFS= read -r l; do
	case "$l" in
	"ok "*) ok "browser: $(echo "$l" | sed 's/^ok [0-9]* - //')" ;;
	"not ok "*) nok "browser: $(echo "$l" | sed 's/^not ok [0-9]* - //')" ;;
	"#"*) echo "$l" ;;
	esac
done <b.out
if [ "$rc" -ne 0 ]; then nok "browser test exited $rc"; tail -n 15 b.out | sed 's/^/# /'; fi
for f in site-index site-index-dark site-problem site-problem-diff site-kernel site-leaderboard site-report ${co:+site-compile-only}; do
	check "screenshot $f.png kept" test -s "$ART/$f.png"
done
