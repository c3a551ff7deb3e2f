#!/bin/sh
# Baselines: importing KernelBench-layout JSON into the store, listing,
# re-importing (replace), and skipping unknown files.
. "$KF_ROOT/tests/lib.sh"

# the problems' rows come from loaded problems: valid ones
mkdir -p root/templates
for p in 019_ReLU 023_Softmax; do
	fixture_problem "root/problems/level1/$p"
done
export KFORGE_ROOT="$T_TMP/root"
cat >eager.json <<'JSON'
{"level1": {"19_ReLU.py": {"mean": 2.5, "std": 0.1, "min": 2.4, "max": 2.9, "num_trials": 100,
  "hardware": "NVIDIA H100 80GB HBM3", "device": "cuda:0"},
  "23_Softmax.py": {"mean": 10.0, "std": 0.5, "min": 9.0, "max": 12.0, "num_trials": 100},
  "999_Nothing.py": {"mean": 1.0}}}
JSON
expect_exit 0 "import eager baselines" "$KFORGE" baselines import eager.json --gpu "NVIDIA H100 80GB HBM3" --variant eager
contains "reports two imported" "$T_TMP/out" "imported 2 eager"
contains "names the skipped file" "$T_TMP/err" "999_Nothing.py"
expect_exit 0 "list as JSON" "$KFORGE" baselines list --json
check "two rows listed" python3 -c "import json,sys; r=json.load(open('$T_TMP/out')); sys.exit(0 if len(r)==2 and r[0]['mean_ms']==2.5 else 1)"
sed 's/"mean": 2.5/"mean": 3.5/' eager.json >eager2.json
expect_exit 0 "re-import replaces" "$KFORGE" baselines import eager2.json --gpu "NVIDIA H100 80GB HBM3" --variant eager
"$KFORGE" baselines list --json >list.json
check "the new mean replaced the old" python3 -c "import json,sys; r=json.load(open('list.json')); sys.exit(0 if len(r)==2 and r[0]['mean_ms']==3.5 else 1)"
# eager with TF32 off (tools/torch_baseline.py --variant eager_notf32) is a variant of its own
sed 's/"mean": 2.5/"mean": 4.5/' eager.json >notf32.json
expect_exit 0 "import eager_notf32 baselines" "$KFORGE" baselines import notf32.json --gpu "NVIDIA H100 80GB HBM3" --variant eager_notf32
contains "reports them as eager_notf32" "$T_TMP/out" "imported 2 eager_notf32"
"$KFORGE" baselines list --json >list3.json
check "kept beside eager, not replacing it" python3 -c "import json,sys; r=json.load(open('list3.json')); m={(x['problem_id'],x['variant']):x['mean_ms'] for x in r}; sys.exit(0 if len(r)==4 and m[('level1/019_ReLU','eager')]==3.5 and m[('level1/019_ReLU','eager_notf32')]==4.5 else 1)"
expect_exit 2 "import without --variant is a usage error" "$KFORGE" baselines import eager.json --gpu X
expect_exit 1 "a bad variant is refused" "$KFORGE" baselines import eager.json --gpu X --variant fast
echo '{"level1": ' >bad.json
expect_exit 1 "malformed JSON fails with the file name" "$KFORGE" baselines import bad.json --gpu X --variant eager
contains "error names the file" "$T_TMP/err" "bad.json"
expect_exit 0 "help lists eager_notf32" "$KFORGE" baselines import --help
contains "among the variants" "$T_TMP/out" "eager_notf32"
check "no host path stored" sh -c "! sqlite3 '$KFORGE_DB' 'select source from baselines' | grep -q /"

# KernelBench's file names can keep a trailing underscore that the problem's
# directory drops (1_Square_matrix_multiplication_.py -> 001_Square_matrix_
# multiplication): found by number, checked against the spec's file name.
cp -r "$KF_ROOT/problems/level1/001_Square_matrix_multiplication" root/problems/level1/
cat >under.json <<'JSON'
{"level1": {"1_Square_matrix_multiplication_.py": {"mean": 2.0, "std": 0.1, "num_trials": 100}}}
JSON
expect_exit 0 "import a file name with a trailing underscore" "$KFORGE" baselines import under.json --gpu "NVIDIA H100 80GB HBM3" --variant eager
contains "it is imported" "$T_TMP/out" "imported 1 eager"

# --problems (make dataset passes PROBLEMS): the others' baselines and problems rows stay out.
export KFORGE_DB="$T_TMP/only.db"
expect_exit 0 "import only the listed problems" "$KFORGE" baselines import eager.json --gpu G --variant eager --problems Softmax
contains "reports one imported" "$T_TMP/out" "imported 1 eager"
check "only that problem's row" test "$(sqlite3 "$KFORGE_DB" 'SELECT group_concat(problem_id) FROM baselines')" = level1/023_Softmax
check "and no problems row of the others" test "$(sqlite3 "$KFORGE_DB" 'SELECT group_concat(id) FROM problems')" = level1/023_Softmax
expect_exit 0 "a level takes its problems" "$KFORGE" baselines import eager.json --gpu G --variant eager --problems level1
contains "both imported" "$T_TMP/out" "imported 2 eager"
expect_exit 2 "an unknown problem is a usage error" "$KFORGE" baselines import eager.json --gpu G --variant eager --problems level1/77
contains "it says which" "$T_TMP/err" "77"

# An import of rows the store holds already writes nothing: make dataset run
# twice packs the same bytes (issue 36). The second import is a second later,
# so a fresh imported_at would show.
export KFORGE_DB="$T_TMP/same.db"
"$KFORGE" baselines import eager.json --gpu G --variant eager >/dev/null 2>&1
before=$(sha256sum <"$KFORGE_DB")
at=$(sqlite3 "$KFORGE_DB" 'SELECT group_concat(imported_at) FROM baselines')
sleep 1
expect_exit 0 "re-import the same file" "$KFORGE" baselines import eager.json --gpu G --variant eager
contains "  says nothing changed" "$T_TMP/out" "imported 2 eager baseline\(s\) for G \(0 new or changed, 2 already in the store\)"
check "  the store file is byte-identical" test "$(sha256sum <"$KFORGE_DB")" = "$before"
check "  imported_at kept" test "$(sqlite3 "$KFORGE_DB" 'SELECT group_concat(imported_at) FROM baselines')" = "$at"
mkdir v2 && sed 's/"mean": 10.0/"mean": 11.0/' eager.json >v2/eager.json
expect_exit 0 "import with one mean changed" "$KFORGE" baselines import v2/eager.json --gpu G --variant eager
contains "  one row changed" "$T_TMP/out" "\(1 new or changed, 1 already in the store\)"
check "  the new mean is stored" test "$(sqlite3 "$KFORGE_DB" "SELECT mean_ms FROM baselines WHERE problem_id = 'level1/023_Softmax'")" = 11.0
check "  and the store changed" test "$(sha256sum <"$KFORGE_DB")" != "$before"

# tools/sample_check.sh's draw (issue 42's sample check): N distinct problems of the level,
# the same for the same seed, another for another seed; bad arguments are refused.
S="$KF_ROOT/tools/sample_check.sh"
d1=$(cd "$KF_ROOT" && KFORGE_ROOT="$KF_ROOT" SAMPLE_ONLY=1 sh "$S" 2 20 7 600)
d2=$(cd "$KF_ROOT" && KFORGE_ROOT="$KF_ROOT" SAMPLE_ONLY=1 sh "$S" 2 20 7 600)
d3=$(cd "$KF_ROOT" && KFORGE_ROOT="$KF_ROOT" SAMPLE_ONLY=1 sh "$S" 2 20 8 600)
check "sample_check draws 20 distinct level-2 numbers" test "$(printf %s "$d1" | tr , '\n' | sort -un | awk '$1 >= 1 && $1 <= 100' | wc -l)" -eq 20
check "  the same for the same seed" test "$d1" = "$d2"
check "  another for another seed" test "$d1" != "$d3"
check "  all 50 of level 3 when N is over its size" test "$(cd "$KF_ROOT" && KFORGE_ROOT="$KF_ROOT" SAMPLE_ONLY=1 sh "$S" 3 80 1 600 | tr , '\n' | sort -un | wc -l)" -eq 50
expect_exit 2 "sample_check refuses a level 4" sh "$S" 4 20 7 600
expect_exit 2 "sample_check refuses a non-integer seed" sh "$S" 1 20 x 600
