#!/bin/sh
# make dataset with this kforge (scripts/dataset.sh, compile only, the tree's
# problem suite; seconds): a bad PROBLEMS or no GPU writes nothing; the
# dataset, site and release page hold exactly PROBLEMS; run again with
# nothing new, it gives the same tarball bytes, and a real change shows.
. "$KF_ROOT/tests/lib.sh"
export KFORGE_ROOT="$KF_ROOT" ROUNDS=1 K=1 M=1 JOBS=2 DB="$T_TMP/k.db" OUT="$T_TMP/dist"
unset KFORGE_LLM_BASE_URL PROPOSER MODEL COMPILE_ONLY NAME VERSION
DS="$KF_ROOT/scripts/dataset.sh"
tb=dist/kforge-kernelbench-custom-0.1.0.tar.zst
FORMS="level1, level2, level3; all; ids 1,5,23 or level2/12; ranges 1-10 or level2/3-7; names"

expect_exit 2 "PROBLEMS=level9 is a usage error" env COMPILE_ONLY=1 sh "$DS" level9
check "  one error line" test "$(wc -l <err)" -eq 1
contains "  it names the valid forms" err "no problems in level9 .*$FORMS"
lacks "  no 'run again to resume'" err "resume"
check "  nothing written (no store)" test ! -e k.db
expect_exit 2 "kforge search --problems level9: the same one line" \
	"$KFORGE" --db "$T_TMP/s.db" search --problems level9 --compile-only
check "  one line" test "$(wc -l <err)" -eq 1
contains "  with the forms" err "$FORMS"
expect_exit 2 "search --check refuses it too" "$KFORGE" --db "$T_TMP/s.db" search --problems level9 --check
expect_exit 0 "search --check of a good list" "$KFORGE" --db "$T_TMP/s.db" search --problems level2/1-2 --check --compile-only
contains "  says what it checked" out "ok: 2 problem\(s\), proposer builtin, compile only"
check "  and writes no store" test ! -e s.db

# A first make dataset PROBLEMS=level1 that failed for want of a GPU left
# level 1's baselines in the store: a later PROBLEMS=level2/1-2 packed 102
# problems. Now it stops before writing anything.
if "$KFORGE" gpu-info >/dev/null 2>&1; then
	skip "a GPU here: the no-GPU run cannot be tried"
else
	expect_exit 3 "PROBLEMS=level1 without a GPU stops with exit 3" sh "$DS" level1
	check "  before anything is written (no store)" test ! -e k.db
fi
expect_exit 0 "then COMPILE_ONLY=1 PROBLEMS=level2/1-2" env COMPILE_ONLY=1 sh "$DS" level2/1-2
n_probs() { "$KFORGE" dataset cat "$tb" data/problems.jsonl | wc -l; }
check "  the dataset holds 2 problems" test "$(n_probs)" -eq 2
check "  and baselines of those only" sh -c "! '$KFORGE' dataset cat '$tb' data/baselines.jsonl | grep -q level1/"
sha1=$(sha256sum <"$tb")
db1=$(sha256sum <k.db)
sleep 1
expect_exit 0 "the same again, with nothing new to do" env COMPILE_ONLY=1 sh "$DS" level2/1-2
check "  the same tarball bytes" test "$(sha256sum <"$tb")" = "$sha1"
check "  the store file unchanged" test "$(sha256sum <k.db)" = "$db1"

# A real change still reaches the tarball.
mkdir -p bl
echo '{"level2": {"1_Conv2D_ReLU_BiasAdd.py": {"mean": 1.25}}}' >bl/b.json
"$KFORGE" --db k.db baselines import bl/b.json --gpu "GPU G" --variant eager >/dev/null
expect_exit 0 "again after a new baseline" env COMPILE_ONLY=1 sh "$DS" level2/1-2
check "  another tarball" test "$(sha256sum <"$tb")" != "$sha1"
check "  holding the new baseline" sh -c "'$KFORGE' dataset cat '$tb' data/baselines.jsonl | grep -q 'GPU G'"

# The store now holds level2/1-2; PROBLEMS=level2/3 makes a dataset of level2/3.
expect_exit 0 "PROBLEMS=level2/3 on the same store" env COMPILE_ONLY=1 sh "$DS" level2/3
check "  the dataset holds that problem only" test "$(n_probs)" -eq 1
contains "  its id" dist/site/index.html "level2-003_"
check "  the site has one problem page" test "$(ls dist/site/problems | wc -l)" -eq 1
if command -v python3 >/dev/null 2>&1; then
	contains "  the release page counts one problem" dist/results.md "^- problems: 1 "
else
	skip "no python3: no release page"
fi
