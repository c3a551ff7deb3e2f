#!/bin/sh
# kforge store check: a store with a damaged page fails the check (exit 4)
# with SQLite's integrity report, not an error (exit 1); a missing store
# stays an error.
. "$KF_ROOT/tests/lib.sh"

"$KFORGE" --db s.db store init >/dev/null
sqlite3 s.db "PRAGMA journal_mode = DELETE; WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM c WHERE x < 3000)
 INSERT INTO kernels SELECT printf('h%d', x), printf('%0200d', x), 200, 'now' FROM c;" >/dev/null
check "the store has over 100 pages" test "$(stat -c %s s.db)" -gt 409600
expect_exit 0 "a sound store passes" "$KFORGE" --db s.db store check
contains "... integrity ok" "$T_TMP/out" "^integrity_check: ok$"
# Page 61 (from byte 60 * 4096) overwritten with 0xff: a b-tree page of kernels.
cp s.db bad.db
head -c 4096 /dev/zero | tr '\0' '\377' | dd of=bad.db bs=4096 seek=60 count=1 conv=notrunc 2>/dev/null
expect_exit 4 "a store with a damaged page fails the check" "$KFORGE" --db bad.db store check
contains "... with the integrity report" "$T_TMP/out" "^integrity_check: \*\*\* in database main \*\*\*"
contains "... naming the page" "$T_TMP/out" "Page 61"
contains "... and why the check stopped" "$T_TMP/out" "malformed"
lacks "... and no error line" "$T_TMP/err" "kforge: "
expect_exit 1 "no store: an error, not a verdict" "$KFORGE" --db nothere.db store check
