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
python3 "$KF_ROOT/tests/tools/synthstore.py" --kernels 120 --problems 4 --seed 11 --hostile --out fx.db 2>/dev/null
expect_exit 0 "site renders" "$KFORGE" site --db fx.db -o public
ART="$KF_BUILD/test-artifacts"
rm -f "$ART"/site-*.png
timeout 240 python3 "$KF_ROOT/tests/tools/sitebrowser.py" fx.db public "$ART" >b.out 2>&1
rc=$?
while IFS= read -r l; do
	case "$l" in
	"ok "*) ok "browser: $(echo "$l" | sed 's/^ok [0-9]* - //')" ;;
	"not ok "*) nok "browser: $(echo "$l" | sed 's/^not ok [0-9]* - //')" ;;
	"#"*) echo "$l" ;;
	esac
done <b.out
if [ "$rc" -ne 0 ]; then nok "browser test exited $rc"; tail -n 15 b.out | sed 's/^/# /'; fi
for f in site-index site-index-dark site-problem site-kernel; do
	check "screenshot $f.png kept" test -s "$ART/$f.png"
done
