#!/bin/sh
# The dataset loads where users load it: every config of the card loads with
# Arrow's JSON reader (what Hugging Face `datasets` uses): one JSON type per
# field across all rows, no config on an empty file, one default config,
# reals as the shortest text that reads back to the same double. Over a
# compile-only dataset of level 1, 2 and 3 problems picked for the spec
# fields that mix shapes, a store with every problem of problems/, and the
# published v0.1.0 store (its rows of nine problems: tests/fixtures/v010-sample.db.zst), and that
# store with recorded profiles (the profiles config). tests/tools/arrow_schema.py infers each config's
# schema as Arrow does (python3 stdlib); where a venv with pinned pyarrow and
# datasets can be made (KF_VENV_DIR/venv-arrow), both load every config too
# (all in one run of the venv's Python, at the end).
. "$KF_ROOT/tests/lib.sh"
TOOL="python3 $KF_ROOT/tests/tools/arrow_schema.py"
# kforge's cards: strict, with features, batches as small as datasets
# would cut a big file's (tests/tools/arrow_load.py loads that way too)
KTOOL="$TOOL --need-features --chunk 16384"
V010="$KF_ROOT/tests/fixtures/v010-sample.db.zst"
PINS="pyarrow==18.1.0 datasets==3.2.0 huggingface_hub==0.27.0"
export HF_HOME="$T_TMP/hf" HF_DATASETS_OFFLINE=1 HF_HUB_OFFLINE=1

# untar TARBALL DIR
untar() { mkdir -p "$2" && tar --zstd -xf "$1" -C "$2"; }

# ---- the stdlib inference itself: what Arrow unifies and what it refuses
mkdir fx && cd fx || exit 1
printf '{"a":1,"s":{"x":null},"l":[]}\n{"a":2.5,"s":{"y":"q"},"l":[[1]]}\n{"a":null,"s":null,"l":null}\n' >good.jsonl
printf '{"k":[5,7]}\n{"k":3}\n' >list_scalar.jsonl
printf '{"s":["n",11]}\n' >str_num.jsonl
printf '{"p":"x"}\n{"p":["x"]}\n' >str_list.jsonl
: >empty.jsonl
printf '{"c":[null,null]}\n{"c":[1.5]}\n' >lead_null.jsonl
printf '{"t":1}\n{"t":1.5}\n' >int_real.jsonl
printf '{"r":3.8798629999999998}\n' >long_real.jsonl
# a field of an object that only a later batch of `datasets` sees
for i in $(seq 50); do echo '{"o":{"a":1}}'; done >later.jsonl
for i in $(seq 50); do echo '{"o":{"a":1,"b":2}}'; done >>later.jsonl
{
	echo '---'; echo 'configs:'
	for c in good list_scalar str_num str_list empty lead_null int_real long_real later; do
		printf -- '- config_name: %s\n  data_files:\n  - split: train\n    path: %s.jsonl\n' "$c" "$c"
		[ "$c" = good ] && echo '  default: true'
	done
	echo '---'
} >README.md
cd "$T_TMP" || exit 1
expect_exit 1 "the inference refuses the conflicts Arrow refuses" $TOOL --arrow-only fx
contains "... a list against a number" out "^list_scalar .*Column\(/k\) changed from array to number in row 1"
contains "... a number in a list of strings" out "^str_num .*Column\(/s/\[\]\) changed from string to number in row 0"
contains "... a list against a string" out "^str_list .*Column\(/p\) changed from string to array in row 1"
contains "... an empty file" out "^empty .*Empty JSON file"
lacks "... and unifies null, int with real, nested objects, empty lists" out "^good "
lacks "... widening integers to reals, as Arrow does" out "^int_real "
expect_exit 1 "stricter by default" $TOOL fx
contains "... a list starting with null (apache/arrow#51305)" out "^lead_null .*starts with null"
contains "... integers and reals in one field" out "^int_real .*mixes integers and reals"
contains "... a real not in its shortest form" out "^long_real .*3.8798629999999998 \(shortest: 3.879863\)"
lacks "... a field that only a later batch has: not in one batch" out "^later "
expect_exit 1 "... but in batches of 500 bytes" $TOOL --chunk 500 fx
contains "... as datasets reads it" out "^later .*Column\(/o/b\) is in a later batch, not in the first"

# ---- pinned pyarrow and datasets, made once and kept with the test cache
# (KF_VENV_DIR: tests/run-tests.sh, outside the clone; else the build tree)
VENV="${KF_VENV_DIR:-$KF_BUILD}/venv-arrow"
arrow_why=""
# (kept where pyarrow imports and datasets is there: importing datasets
# takes over a second, and the loads below do)
if [ "$(cat "$VENV/.pins" 2>/dev/null)" != "$PINS" ] || ! "$VENV/bin/python" -c \
	'import importlib.util, sys, pyarrow; sys.exit(importlib.util.find_spec("datasets") is None)' 2>/dev/null; then
	rm -rf "$VENV"
	if ! python3 -m venv "$VENV" >venv.log 2>&1; then
		arrow_why="python3 -m venv failed: $(tail -n 1 venv.log)"
	elif ! timeout 300 "$VENV/bin/pip" install -q --disable-pip-version-check $PINS >venv.log 2>&1; then
		arrow_why="pip install $PINS failed: $(grep -v '^ *$' venv.log | tail -n 1)"
	else
		echo "$PINS" >"$VENV/.pins"
	fi
fi
# The loads with pyarrow and datasets run at the end, all in one run of the
# venv's Python (tests/tools/arrow_load.py --jobs: importing datasets takes
# over a second a run). arrow_job DESC load|run ARGS...: one, a check
# named DESC that passes where it exits 0. arrow_load DESC DIR: every
# config of DIR loads with pyarrow and datasets.
mkdir arrow
arrow_n=0
arrow_job() {
	arrow_n=$((arrow_n + 1))
	printf '%s\n' "$1" >"arrow/$arrow_n.desc"
	shift
	echo "arrow/$arrow_n.out $*" >>arrow/jobs
}
arrow_load() { arrow_job "$1" load --chunksize 16384 "$2"; }
# the fixtures above: pyarrow and datasets refuse what the inference
# refuses (checked at the end)
echo "arrow/fx.out load fx" >>arrow/jobs
cat >later.py <<'PY'
import sys, datasets
datasets.disable_progress_bars()
try:
    datasets.load_dataset('json', data_files='fx/later.jsonl', chunksize=500, split='train')
except Exception as e:
    sys.exit('cast' not in str(e.__cause__))
sys.exit(1)
PY
arrow_job "datasets too refuses a field first seen in a later batch" run later.py

# ---- a compile-only dataset of level 1, 2 and 3 problems
if ! have_nvrtc; then
	skip "NVRTC not available: no compile-only dataset"
else
	# conv kernel_size as int and as tuple, stride None, numeric and named
	# dimensions, dist.post as a name and as a list, graph dims as int and
	# list, a graph value "-inf", hardtanh_max as 1 and as 1.0, num_heads
	# as int and as list
	P="13,45,50,56,98,level2/3,level2/8,level2/10,level2/30,level3/30,level3/31,level3/43"
	expect_exit 0 "compile-only dataset (scripts/dataset.sh)" env COMPILE_ONLY=1 ROUNDS=1 K=1 M=1 JOBS=2 \
		KFORGE="$KFORGE" KFORGE_ROOT="$KF_ROOT" DB="$T_TMP/co.db" OUT="$T_TMP/co" \
		sh "$KF_ROOT/scripts/dataset.sh" "$P"
	TZ=co/kforge-kernelbench-custom-0.1.0.tar.zst
	check "the specs mix shapes in the store" python3 - co.db <<'PY'
import json, sqlite3, sys
specs = [json.loads(r[0]) for r in sqlite3.connect(sys.argv[1]).execute("SELECT spec FROM problems")]
def kinds(get):
    out = set()
    for s in specs:
        for v in get(s):
            out.add(type(v).__name__)
    return out
need = {
    "kernel_size": (kinds(lambda s: [s["init_args"]["kernel_size"]] if "kernel_size" in s["init_args"] else []), {"int", "list"}),
    "dims": (kinds(lambda s: [d for t in s["inputs"] for d in t["shape"]]), {"int", "str"}),
    "post": (kinds(lambda s: [t["dist"]["post"] for t in s["inputs"] if "post" in t["dist"]]), {"str", "list"}),
    "graph dims": (kinds(lambda s: [n["dims"] for n in s["attrs"].get("graph", []) if "dims" in n]), {"int", "list"}),
    "graph value": (kinds(lambda s: [n["value"] for n in s["attrs"].get("graph", []) if "value" in n]), {"float", "str"}),
    "hardtanh_max": (kinds(lambda s: [s["init_args"]["hardtanh_max"]] if "hardtanh_max" in s["init_args"] else []), {"int", "float"}),
}
bad = [k for k, (got, want) in need.items() if not want <= got]
print(bad) if bad else None
sys.exit(1 if bad else 0)
PY
	expect_exit 0 "kforge dataset verify passes" "$KFORGE" dataset verify "$TZ"
	untar "$TZ" co/x
	expect_exit 0 "every config of the compile-only dataset has one Arrow schema" $KTOOL co/x
	sed 's/^/# /' out | tail -n 20
	lacks "no config on the empty sft.jsonl" co/x/README.md "path: sft.jsonl"
	lacks "... nor on the empty verifications" co/x/README.md "path: data/verifications.jsonl"
	check "the first config with rows is the default" sh -c \
		"grep -A4 '^- config_name: problems' co/x/README.md | grep -qx '  default: true'"
	check "the card still counts the empty files" grep -q '^| `sft.jsonl` | 0 |' co/x/README.md
	lacks "no GPU name \"\" (compile-only rows have null)" co/x/data/evaluations.jsonl '"gpu_name":""'
	contains "... evaluations, runs, trajectories: null" co/x/data/runs.jsonl '"gpu_name":null'
	check "compiles.options is a list" python3 -c "
import json, sys
rows = [json.loads(l) for l in open('co/x/data/compiles.jsonl')]
sys.exit(not rows or not all(isinstance(r['options'], list) for r in rows))"
	check "spec shapes: init_args lists, dimensions strings, post lists" python3 -c "
import json, sys
for l in open('co/x/data/problems.jsonl'):
    s = json.loads(l)['spec']
    assert all(v is None or isinstance(v, list) for v in s['init_args'].values()), s['id']
    assert all(isinstance(d, str) for t in s['inputs'] + s['outputs'] for d in t['shape']), s['id']
    assert all(isinstance(t['dist']['post'], list) for t in s['inputs'] if 'post' in t['dist']), s['id']
    if s['id'] == 'level1/056_conv_standard_2D__asymmetric_input__asymmetric_kernel':
        assert s['init_args']['kernel_size'] == [5, 7], s['init_args']
    if s['id'] == 'level1/050_conv_standard_2D__square_input__square_kernel':
        assert s['inputs'][1]['shape'] == ['out_channels', 'in_channels', '11', '11'], s['inputs'][1]
"
	arrow_load "pyarrow and datasets load every config of the compile-only dataset" co/x
	mkdir co2
	"$KFORGE" --db co.db pack --name kernelbench-custom --version 0.1.0 --problems "$P" -o co2 >/dev/null 2>&1
	check "packing again gives the same bytes" cmp -s "$TZ" co2/kforge-kernelbench-custom-0.1.0.tar.zst
fi

# ---- every problem of problems/ (specs only: no search needed)
"$KFORGE" --db all.db store init >/dev/null
check "a store with every problem" python3 - all.db "$KF_ROOT/problems" <<'PY'
import glob, hashlib, json, os, sqlite3, sys
db = sqlite3.connect(sys.argv[1])
for f in sorted(glob.glob(os.path.join(sys.argv[2], "level*", "*", "spec.json"))):
    text = open(f, "rb").read()
    s = json.loads(text)
    ref = os.path.join(os.path.dirname(f), "reference.py")
    db.execute("INSERT INTO problems VALUES(?,?,?,?,?,?,?,?,?,?,?,?)",
               (s["id"], s["level"], s["number"], s["name"], s.get("kernelbench_file"), s.get("family"),
                s.get("op"), text.decode(), hashlib.sha256(text).hexdigest(),
                open(ref).read() if os.path.exists(ref) else None,
                float(s.get("flops", 0)), float(s.get("min_bytes", 0))))
db.commit()
sys.exit(0 if db.execute("SELECT count(*) FROM problems").fetchone()[0] >= 250 else 1)
PY
expect_exit 0 "pack it" "$KFORGE" --db all.db pack --version 0.1.0 -o all
untar all/kforge-kernelbench-0.1.0.tar.zst all/x
expect_exit 0 "every problem's spec fits one Arrow schema" $KTOOL all/x
sed 's/^/# /' out | tail -n 20
contains "... problems is the only config (the rest is empty)" out "^1 configs, 0 problems"
arrow_load "pyarrow and datasets load the problems" all/x

# ---- the published v0.1.0 store (a sample of its rows)
if ! command -v zstd >/dev/null 2>&1; then
	skip "zstd missing: the committed v0.1.0 store is not checked"
else
	zstd -qdc "$V010" >v010.db
	# schema v1: pack reads a migrated copy (t0710)
	expect_exit 0 "pack the v0.1.0 store" "$KFORGE" --db v010.db pack --version 0.1.0 -o v010
	expect_exit 0 "kforge dataset verify passes" "$KFORGE" dataset verify v010/kforge-kernelbench-0.1.0.tar.zst
	untar v010/kforge-kernelbench-0.1.0.tar.zst v010/x
	expect_exit 0 "every config of the v0.1.0 dataset has one Arrow schema" $KTOOL v010/x
	sed 's/^/# /' out | tail -n 20
	contains "... all 15 configs" out "^15 configs, 0 problems"
	check "the default is sft" sh -c "grep -A4 '^- config_name: sft' v010/x/README.md | grep -qx '  default: true'"
	# without the card's types, `datasets` would cast each batch to the first's
	mkdir v010/nofeat && ln -s ../x/sft.jsonl ../x/pairs.jsonl ../x/data v010/nofeat/
	sed '/^dataset_info:/,/^---$/{/^---$/!d}' v010/x/README.md >v010/nofeat/README.md
	expect_exit 1 "without dataset_info its batches would not cast to the first" $TOOL --chunk 16384 v010/nofeat
	contains "... e.g. evaluations" out "^evaluations .*in a later batch"
	# make test loads the superset below (the same rows with profiles and sessions);
	# make test-long loads this one and the profiles one on their own too
	if long_tier; then
		arrow_load "pyarrow and datasets load every config of the v0.1.0 dataset" v010/x
	else
		skip "pyarrow and datasets load the v0.1.0 dataset on its own (make test-long; its rows load below)"
	fi

	# ---- the same store with recorded profiles (issue 41): a config of its own
	zstd -qdc "$V010" >prof.db
	expect_exit 0 "migrate a copy to the schema with profiles" "$KFORGE" --db prof.db store migrate
	check "record profiles: whole reals, nulls, a profile without kernels" python3 - prof.db <<'PY'
import sqlite3, sys
db = sqlite3.connect(sys.argv[1])
ev = db.execute("SELECT id, kernel_hash, problem_id, gpu_name FROM evals WHERE gpu_name <> '' ORDER BY id LIMIT 3").fetchall()
if len(ev) < 3:
    sys.exit(1)
P = "INSERT INTO profiles VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?)"
K = "INSERT INTO profile_kernels VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?)"
# REAL columns given Python ints (2, 80): the store holds reals
db.execute(P, ev[0] + ("memory", 2, 2, 1 << 33, 4096, 80, 12.5, 20, 0, 55.25, 40, "cupti-test", "2026-01-01T00:00:00Z"))
db.execute(K, (ev[0][0], 0, "relu_f32", 1, 1 << 33, 4096, 80, 12.5, 20, 0, 55.25, 32, 0, 256, 4096, "memory"))
db.execute(K, (ev[0][0], 1, "scale_f32", 0.5, None, None, None, None, None, None, None, 18, 1024, 128, 8, "launch"))
db.execute(P, ev[1] + ("compute", 1, 0.25, None, None, None, None, 90.5, 75, 30, 41.5, "cupti-test", "2026-01-01T00:00:00Z"))
db.execute(K, (ev[1][0], 0, "gemm", 0.25, 1000, 10, 1.5, 99, 90.5, 75, 30, 128, 49152, 256, 132, "compute"))
db.execute(P, ev[2] + ("launch", 7, None, None, None, None, None, None, None, None, 3, "cupti-test", "2026-01-01T00:00:00Z"))
db.commit()
PY
	expect_exit 0 "pack it" "$KFORGE" --db prof.db pack --version 0.1.0 -o prof
	expect_exit 0 "kforge dataset verify passes" "$KFORGE" dataset verify prof/kforge-kernelbench-0.1.0.tar.zst
	untar prof/kforge-kernelbench-0.1.0.tar.zst prof/x
	expect_exit 0 "every config, profiles too, has one Arrow schema" $KTOOL --print prof/x
	sed 's/^/# /' out | grep -v '^# [a-z_]*: struct' | tail -n 20
	contains "... 16 configs: profiles is one" out "^16 configs, 0 problems"
	contains "... one type per field: integers int64, reals double, kernels a list of structs" out \
		"^profiles: struct<cost_ms: double, created_at: string, dram_pct: double, dram_read_bytes: int64, dram_write_bytes: int64, eval_id: string, gpu_name: string, kernel_hash: string, kernel_ms: double, kernels: list<struct<block_threads: int64, dram_pct: double, dram_read_bytes: int64, dram_write_bytes: int64, duration_ms: double, grid_blocks: int64, idx: int64, l2_hit_pct: double, limiter: string, name: string, occupancy_pct: double, registers: int64, shared_bytes: int64, sm_pct: double, tensor_pct: double>>, l2_hit_pct: double, launches: int64, limiter: string, occupancy_pct: double, problem_id: string, sm_pct: double, tensor_pct: double, tool: string>$"
	contains "... whole reals written as reals" prof/x/data/profiles.jsonl '"kernel_ms":2.0,'
	contains "... a profile without kernels has []" prof/x/data/profiles.jsonl '"kernels":\[\],"l2_hit_pct":null'
	check "the card declares the profiles config and its features" sh -c \
		"grep -q '^- config_name: profiles\$' prof/x/README.md && grep -A3 '^- config_name: profiles\$' prof/x/README.md | grep -q 'path: data/profiles.jsonl'"
	check "schema.json describes every field" python3 -c "
import json, sys
f = json.load(open('prof/x/schema.json'))['files']['data/profiles.jsonl']['fields']
sys.exit(not (f['kernels']['type'] == 'array' and f['launches']['type'] == 'integer'
              and f['kernel_ms']['type'] == 'number' and f['kernel_ms']['nullable']
              and all(v['description'] != '(not documented)' for v in f.values())))"
	lacks "the v0.1.0 dataset (no profiles) has no profiles config" v010/x/README.md "config_name: profiles"
	if long_tier; then
		arrow_load "pyarrow and datasets load every config of the dataset with profiles" prof/x
	else
		skip "pyarrow and datasets load the dataset with profiles on its own (make test-long; its rows load below)"
	fi
	cat >proftypes.py <<'PY'
import sys, datasets
datasets.disable_progress_bars()
d = datasets.load_dataset('prof/x', 'profiles', split='train')
f = d.features
k = f['kernels'][0] if isinstance(f['kernels'], list) else f['kernels'].feature
ok = (d.num_rows == 3 and f['launches'].dtype == 'int64' and f['kernel_ms'].dtype == 'float64'
      and f['limiter'].dtype == 'string' and k['registers'].dtype == 'int64'
      and k['duration_ms'].dtype == 'float64' and k['name'].dtype == 'string'
      and d[0]['kernel_ms'] == 2.0 and d[0]['kernels'][0]['dram_read_bytes'] == 1 << 33
      and d[2]['kernels'] == [])
print(f) if not ok else None
sys.exit(0 if ok else 1)
PY
	arrow_job "datasets types the profiles config as the card says" run proftypes.py

	# ---- and with search sessions (schema v6, issue 42): a config of its own, one type per
	# field: a whole wall time a real, a compile-only session's GPU null, its lists empty, a
	# level list with text in it (no kforge writes one) cleaned
	cp prof.db sess.db
	check "record three search sessions" python3 - sess.db <<'PY'
import sqlite3, sys
db = sqlite3.connect(sys.argv[1])
run = db.execute("SELECT id FROM runs ORDER BY id LIMIT 1").fetchone()[0]
S = "INSERT INTO search_sessions VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?)"
db.execute(S, ("s1", run, "NVIDIA H100 80GB HBM3", "2026-01-01T00:00:00Z", "2026-01-01T00:01:00Z", 60,
               "stopped", '["level1/019_ReLU"]', "[1]", 60, 61, 4, "test"))
db.execute(S, ("s2", run, None, "2026-01-02T00:00:00Z", "2026-01-02T00:00:01Z", 0.5, "finished", "[]", "[]",
               0, 0, 1, "test"))
db.execute(S, ("s3", run, "", "2026-01-03T00:00:00Z", "2026-01-03T00:00:01Z", 1.25, "failed",
               '["level1/019_ReLU", 7]', '[1, "2"]', 1, 1, 1, "test"))
db.commit()
PY
	expect_exit 0 "pack it" "$KFORGE" --db sess.db pack --version 0.1.0 -o sess
	expect_exit 0 "kforge dataset verify passes" "$KFORGE" dataset verify sess/kforge-kernelbench-0.1.0.tar.zst
	untar sess/kforge-kernelbench-0.1.0.tar.zst sess/x
	expect_exit 0 "every config, search_sessions too, has one Arrow schema" $KTOOL --print sess/x
	contains "... 17 configs: search_sessions is one" out "^17 configs, 0 problems"
	contains "... one type per field: lists of strings and of integers, wall_s double" out \
		"^search_sessions: struct<candidates: int64, ended_at: string, evaluations: int64, gpu_name: string, id: string, jobs: int64, kforge_version: string, levels: list<int64>, problems: list<string>, run_id: string, started_at: string, status: string, wall_s: double>$"
	contains "... a whole wall time written as a real" sess/x/data/search_sessions.jsonl '"id":"s1",.*"wall_s":60\.0\}'
	contains "... no GPU: null, no levels: []" sess/x/data/search_sessions.jsonl '"gpu_name":null,"id":"s2",.*"levels":\[\],"problems":\[\]'
	contains "... the odd list elements left out" sess/x/data/search_sessions.jsonl '"gpu_name":null,"id":"s3",.*"levels":\[1\],"problems":\["level1/019_ReLU"\]'
	check "the card declares the search_sessions config" sh -c \
		"grep -A3 '^- config_name: search_sessions\$' sess/x/README.md | grep -q 'path: data/search_sessions.jsonl'"
	check "schema.json describes every field" python3 -c "
import json, sys
f = json.load(open('sess/x/schema.json'))['files']['data/search_sessions.jsonl']['fields']
sys.exit(not (f['wall_s']['type'] == 'number' and f['levels']['type'] == 'json' and f['gpu_name']['nullable']
              and all(v['description'] != '(not documented)' for v in f.values())))"
	lacks "the dataset with profiles (no sessions) has no search_sessions config" prof/x/README.md "config_name: search_sessions"
	arrow_load "pyarrow and datasets load every config of the dataset with search sessions" sess/x
fi

# ---- pyarrow and datasets: every load and check above, in one Python
if [ -n "$arrow_why" ]; then
	skip "pyarrow agrees with the inference (pyarrow/datasets could not be installed: $arrow_why)"
	k=0
	while [ $k -lt $arrow_n ]; do
		k=$((k + 1))
		skip "$(cat "arrow/$k.desc") (pyarrow/datasets could not be installed: $arrow_why)"
	done
	exit 0
fi
"$VENV/bin/python" "$KF_ROOT/tests/tools/arrow_load.py" --jobs arrow/jobs >arrow/log 2>&1 ||
	sed 's/^/# arrow_load: /' arrow/log | tail -n 20
for c in list_scalar str_num str_list empty lead_null; do
	contains "pyarrow and datasets refuse $c too" arrow/fx.out "^FAIL $c "
done
contains "... and load good" arrow/fx.out "^ok good rows=3 \(datasets\)"
k=0
while [ $k -lt $arrow_n ]; do
	k=$((k + 1))
	if [ "$(cat "arrow/$k.out.rc" 2>/dev/null)" = 0 ]; then
		ok "$(cat "arrow/$k.desc")"
	else
		nok "$(cat "arrow/$k.desc")"
		grep -v '^ok ' "arrow/$k.out" | head -n 20 | sed 's/^/#   /'
		tail -n 5 "arrow/$k.out.err" | sed 's/^/#   /'
	fi
done
