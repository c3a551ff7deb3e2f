#!/bin/sh
# The site's HTML validates with html-validate (pinned in tests/package.json,
# installed under tests/node_modules with npm ci when npm is here).
. "$(dirname "$0")/lib.sh" 2>/dev/null || . "$KF_ROOT/tests/lib.sh"

HV="$KF_ROOT/tests/node_modules/.bin/html-validate"
if [ ! -x "$HV" ] && command -v npm >/dev/null 2>&1; then
	(cd "$KF_ROOT/tests" && npm ci --no-audit --no-fund --silent >"$T_TMP/npm.log" 2>&1) ||
		sed 's/^/# npm: /' "$T_TMP/npm.log" | tail -n 5
fi
if [ ! -x "$HV" ]; then
	skip "html-validate unavailable (no npm, or npm ci failed offline): HTML not validated"
	exit 0
fi

python3 "$KF_ROOT/tests/tools/synthstore.py" --kernels 60 --problems 3 --seed 5 --hostile --out fx.db 2>/dev/null
mkdir dist && printf x >dist/kforge-v1.tar.gz
expect_exit 0 "site renders" "$KFORGE" site --db fx.db -o public --dist dist
# Every page type; kernels sampled (they share one template).
set -- public/index.html public/methodology.html public/downloads.html \
	public/problems/*.html public/categories/*.html $(ls public/kernels/*/*.html | head -n 10)
"$HV" --config "$KF_ROOT/tests/.htmlvalidate.json" "$@" >hv.out 2>&1
rc=$?
if [ "$rc" -eq 0 ]; then ok "html-validate: $# pages valid"; else nok "html-validate: $# pages"; head -n 40 hv.out | sed 's/^/# /'; fi
# The validator itself must reject bad markup (the check can fail).
printf '<!DOCTYPE html><html lang="en"><head><title>x</title></head><body><p id="a"></p><p id="a"><div></p></body></html>\n' >bad.html
check_fail "html-validate rejects invalid HTML" "$HV" --config "$KF_ROOT/tests/.htmlvalidate.json" bad.html
