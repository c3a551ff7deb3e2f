#!/bin/sh
# Stores of an older schema: the published v0.1.0 store (schema v1; its rows
# of nine problems, tests/fixtures/v010-sample.db.zst, tests/tools/sample_store.py). store
# info prints the file's own version; pack, site, report and merge read it
# through a migrated copy, saying so, and never write it; store migrate
# upgrades it in place; writers (baselines import, search, verify) migrate
# it in place, saying so.
. "$KF_ROOT/tests/lib.sh"
if ! command -v zstd >/dev/null 2>&1; then
	skip "no zstd(1) to decompress tests/fixtures/v010-sample.db.zst"
	exit 0
fi
zstd -q -d "$KF_ROOT/tests/fixtures/v010-sample.db.zst" -o v1.db
chmod u+w v1.db
cp v1.db orig.db
check "the published store is schema v1" test "$(sqlite3 v1.db 'PRAGMA user_version')" = 1
export KFORGE_DB="$T_TMP/v1.db"
# the schema this kforge writes
V=$(sed -n 's/^#define STORE_SCHEMA_VERSION \([0-9]*\).*/\1/p' "$KF_ROOT/store/store.h")
MIG="migrated a copy of store $T_TMP/v1.db from schema v1 to v$V .*'kforge store migrate --db $T_TMP/v1.db'"

expect_exit 0 "store info" "$KFORGE" store info
contains "  prints the file's schema, v1, and the command that upgrades it" out \
	"^store $T_TMP/v1.db \(schema v1; this kforge's is v$V: 'kforge store migrate --db $T_TMP/v1.db' upgrades it\)"
expect_exit 0 "store info --json" "$KFORGE" store info --json
check "  schema_version 1, kforge_schema_version $V" python3 -c "import json,sys; j=json.load(open('out')); sys.exit(0 if j['schema_version']==1 and j['kforge_schema_version']==$V else 1)"

expect_exit 0 "pack reads it (it failed: llm_calls has 21 columns but 19 values)" \
	"$KFORGE" pack --version 0.1.0 -o d1
contains "  saying it read a migrated copy" err "$MIG"
check "  the store file is not written" cmp -s v1.db orig.db
expect_exit 0 "  and the tarball passes dataset verify" "$KFORGE" dataset verify d1/kforge-kernelbench-0.1.0.tar.zst
expect_exit 0 "site" "$KFORGE" site -o site --no-kernel-pages
contains "  says so" err "$MIG"
expect_exit 0 "report" "$KFORGE" report
contains "  says so" err "$MIG"
contains "  reports the run" out '^# Run run\\_'
expect_exit 0 "merge" "$KFORGE" merge v1.db -o merged.db
contains "  says so" err "migrated a copy of store v1.db from schema v1 to v$V .*'kforge store migrate --db v1.db'"
check "  the merged store is v$V" test "$(sqlite3 merged.db 'PRAGMA user_version')" = "$V"
check "none of them wrote the store" cmp -s v1.db orig.db

cp v1.db w.db
expect_exit 0 "a writer (baselines import) migrates in place" "$KFORGE" --db w.db baselines import \
	"$KF_ROOT/problems/baselines/NVIDIA_H200/baseline_time_torch.json" --gpu "NVIDIA H200" --variant eager --problems 1
contains "  saying so" err "^migrated store w.db from schema v1 to v$V$"
check "  now v$V" test "$(sqlite3 w.db 'PRAGMA user_version')" = "$V"

expect_exit 0 "store migrate" "$KFORGE" store migrate
contains "  says what it did" out "^migrated store $T_TMP/v1.db from schema v1 to v$V$"
check "  the file is v$V" test "$(sqlite3 v1.db 'PRAGMA user_version')" = "$V"
expect_exit 0 "  store check passes" "$KFORGE" store check
expect_exit 0 "  store info says v$V" "$KFORGE" store info
contains "  (its own version)" out "^store $T_TMP/v1.db \(schema v$V\)$"
expect_exit 0 "store migrate again" "$KFORGE" store migrate
contains "  has nothing to do" out "has schema v$V already"
expect_exit 0 "pack of the migrated store" "$KFORGE" pack --version 0.1.0 -o d2
lacks "  with no note" err "migrated"
check "  the same bytes as the pack through the copy" cmp -s d1/kforge-kernelbench-0.1.0.tar.zst d2/kforge-kernelbench-0.1.0.tar.zst
expect_exit 0 "  dataset verify passes" "$KFORGE" dataset verify d2/kforge-kernelbench-0.1.0.tar.zst

# A store newer than this kforge is refused.
cp orig.db new.db
sqlite3 new.db 'PRAGMA user_version = 99'
expect_exit 1 "a newer store is refused by pack" "$KFORGE" --db new.db pack --version 0.1.0 -o d3
contains "  naming both versions" err "schema v99, newer than this kforge \(v$V\)"

# verify writes its verdicts: it migrates in place too (here, without a GPU,
# before it stops with exit 3).
if "$KFORGE" gpu-info >/dev/null 2>&1; then
	skip "a GPU here: verify would run in earnest"
else
	cp orig.db vf.db
	expect_exit 3 "verify on a v1 store, no GPU" "$KFORGE" --db vf.db verify --top 1 --problems 1
	contains "  migrated it, saying so" err "^migrated store vf.db from schema v1 to v$V$"
fi
