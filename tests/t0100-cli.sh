#!/bin/sh
# The CLI: help, version, command table, unknown commands and options,
# exit codes, and GPU-free behaviour.
. "$KF_ROOT/tests/lib.sh"

expect_exit 0 "--help exits 0" "$KFORGE" --help
cp "$T_TMP/out" "$T_TMP/help"
for c in problems baselines eval search verify merge pack dataset site report catalogue template slurm; do
	contains "--help lists $c" "$T_TMP/help" "^  $c "
	expect_exit 0 "$c --help exits 0" "$KFORGE" "$c" --help
	contains "$c --help shows its usage" "$T_TMP/out" "usage: kforge $c"
done
expect_exit 0 "--version exits 0" "$KFORGE" --version
contains "--version prints a version" "$T_TMP/out" '^kforge [0-9a-f]'

expect_exit 2 "unknown command exits 2" "$KFORGE" serach
contains "unknown command suggests the closest" "$T_TMP/err" "Did you mean 'search'"
expect_exit 2 "unknown global option exits 2" "$KFORGE" --nosuch
expect_exit 2 "unknown command option exits 2" "$KFORGE" store info --jsn
contains "unknown option suggests the closest" "$T_TMP/err" "Did you mean '--json'"
expect_exit 2 "no command exits 2" "$KFORGE"
expect_exit 2 "verify --sanitizer-timeout 0 is a usage error" "$KFORGE" verify --sanitizer-timeout 0
contains "and says the range" "$T_TMP/err" "1..86400"
expect_exit 2 "verify --sanitizer-timeout 5x is a usage error" "$KFORGE" verify --sanitizer-timeout 5x

# No GPU here (CI has none): a GPU command says so in one line.
if "$KFORGE" gpu-info >/dev/null 2>&1; then
	skip "a GPU is visible; the no-GPU checks do not apply"
else
	expect_exit 3 "gpu-info without a driver exits 3" "$KFORGE" gpu-info
	lines=$(wc -l <"$T_TMP/err")
	check "gpu-info says why in one line" test "$lines" -eq 1
	contains "gpu-info names the missing driver or GPU" "$T_TMP/err" "no CUDA driver found|no GPU visible"
fi

# The store: created on demand, --db and KFORGE_DB name it.
expect_exit 1 "store info on a missing store fails" "$KFORGE" --db "$T_TMP/none.db" store info
contains "and says there is no store" "$T_TMP/err" "no store"
