#!/bin/sh
# Merging stores: A+B = B+A = (A+B)+B, conflicts reported and never
# resolved silently, gpus ceilings merged by rule.
. "$KF_ROOT/tests/lib.sh"
DUMP="python3 $KF_ROOT/tests/tools/dbdump.py"

mk() { # db, sql
	"$KFORGE" --db "$1" store init >/dev/null || return 1
	sqlite3 "$1" "PRAGMA foreign_keys=ON; $2"
}
P="INSERT INTO problems(id,level,number,name,spec,spec_sha256) VALUES('level1/019_ReLU',1,19,'ReLU','{}','aa');"
K1="INSERT INTO kernels VALUES('k1','src1',4,'2026-01-01T00:00:00Z');"
K2="INSERT INTO kernels VALUES('k2','src2',4,'2026-01-01T00:00:00Z');"
K3="INSERT INTO kernels VALUES('k3','src3',4,'2026-01-02T00:00:00Z');"
E() { echo "INSERT INTO evals(id,kernel_hash,problem_id,gpu_name,protocol,protocol_params,status,time_mean_ms,created_at) VALUES('$1','$2','level1/019_ReLU','$3','collect-v1','{}','correct',$4,'2026-01-01T00:00:00Z');"; }
G() { echo "INSERT INTO gpus(name,arch,sm_count,memory_bytes,peak_bw_gbs,driver,first_seen) VALUES('$1','sm_90',132,80000000000,$2,'$3','$4');"; }
mk A.db "$P $K1 $K2 $(E e1 k1 H100 1.5) $(E e2 k2 H100 2.5) $(G H100 3000 580.1 2026-01-02)"
mk B.db "$P $K2 $K3 $(E e2 k2 H100 2.5) $(E e3 k3 H200 1.0) $(G H100 3100 580.0 2026-01-03) $(G H200 4300 580.1 2026-01-01)"

expect_exit 0 "merge A B" "$KFORGE" merge A.db B.db -o AB.db
contains "reports rows added and deduplicated" "$T_TMP/out" "rows added, [1-9][0-9]* identical rows deduplicated"
expect_exit 0 "merge B A" "$KFORGE" merge B.db A.db -o BA.db
expect_exit 0 "merge (A+B) B" "$KFORGE" merge AB.db B.db -o ABB.db
$DUMP AB.db >ab.txt; $DUMP BA.db >ba.txt; $DUMP ABB.db >abb.txt
check "A+B = B+A" cmp -s ab.txt ba.txt
check "A+B = (A+B)+B" cmp -s ab.txt abb.txt
check "kernels deduplicated by content (3 kernels)" grep -q '^== kernels (3 rows)' ab.txt
check "evals kept per GPU (3 evals)" grep -q '^== evals (3 rows)' ab.txt
check "gpus ceiling is the maximum" sh -c "test \"\$(sqlite3 AB.db \"select peak_bw_gbs from gpus where name='H100'\")\" = 3100.0"
check "gpus first_seen is the earliest" sh -c "test \"\$(sqlite3 AB.db \"select first_seen from gpus where name='H100'\")\" = 2026-01-02"
check "merged store passes integrity_check" sh -c "\"$KFORGE\" --db AB.db store check >/dev/null"
# Same rows, same bytes: the packs of A+B and B+A are identical.
expect_exit 0 "pack A+B" "$KFORGE" --db AB.db pack --version 1.0.0 -o packAB
expect_exit 0 "pack B+A" "$KFORGE" --db BA.db pack --version 1.0.0 -o packBA
check "A+B and B+A pack to the same tarball" cmp -s packAB/kforge-kernelbench-1.0.0.tar.zst packBA/kforge-kernelbench-1.0.0.tar.zst

# A conflict: same eval id, other timing.
mk C.db "$P $K1 $(E e1 k1 H100 9.9)"
expect_exit 4 "a conflicting store fails the merge with exit 4" "$KFORGE" merge A.db C.db -o AC.db
contains "the conflict names table, key and column" "$T_TMP/err" "evals e1: differs in time_mean_ms"
check "no output written on conflict" test ! -e AC.db
check "no temporary files left" sh -c "! ls AC.db.tmp* 2>/dev/null | grep -q ."
expect_exit 1 "existing output is not overwritten" "$KFORGE" merge A.db B.db -o AB.db
expect_exit 0 "--force replaces it" "$KFORGE" merge A.db B.db -o AB.db --force
echo garbage >bad.db
expect_exit 1 "a file that is not a store is refused" "$KFORGE" merge A.db bad.db -o X.db
