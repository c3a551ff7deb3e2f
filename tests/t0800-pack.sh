#!/bin/sh
# kforge pack and dataset verify/diff: reproducible bytes, standard tools
# read the tarball, every line parses and fits schema.json, and verify
# catches a flipped byte, a missing file, a wrong count, a bad line.
. "$KF_ROOT/tests/lib.sh"
FIX="python3 $KF_ROOT/tests/tools/dsfixture.py"
"$KFORGE" store init >/dev/null && $FIX "$KFORGE_DB" --kernels 60 --problems 3 || { nok "fixture store"; exit 1; }
TZ=dist/kforge-kernelbench-1.0.0.tar.zst

expect_exit 0 "pack --version 1.0.0 --gz" "$KFORGE" pack --version 1.0.0 --gz
contains "prints path, size and sha256" "$T_TMP/out" "kforge-kernelbench-1.0.0.tar.zst  [0-9]+ bytes  sha256 [0-9a-f]{64}"
check "the tarball is there" test -s "$TZ"
check "a .sha256 file beside it, in sha256sum's format" sh -c 'cd dist && sha256sum --quiet -c kforge-kernelbench-1.0.0.tar.zst.sha256'
check "no staging or temporary files left" sh -c '! ls -A dist | grep -q "^\."'
mkdir again
expect_exit 0 "pack again into another directory" "$KFORGE" pack --version 1.0.0 --gz -o again
check "packing twice gives identical .tar.zst bytes" cmp -s "$TZ" again/kforge-kernelbench-1.0.0.tar.zst
check "packing twice gives identical .tar.gz bytes" cmp -s dist/kforge-kernelbench-1.0.0.tar.gz again/kforge-kernelbench-1.0.0.tar.gz
expect_exit 0 "pack with SOURCE_DATE_EPOCH" env SOURCE_DATE_EPOCH=1700000000 "$KFORGE" pack --version 1.0.0 -o sde
check "SOURCE_DATE_EPOCH sets the entries' time" sh -c "tar --zstd --full-time -tvf sde/kforge-kernelbench-1.0.0.tar.zst | head -n 1 | grep -q '2023-11-14 22:13:20'"
expect_exit 1 "a bad version is refused" "$KFORGE" pack --version 1.0 -o bad
expect_exit 1 "a bad name is refused" "$KFORGE" pack --version 1.0.0 --name '../x' -o bad
expect_exit 2 "--version is required" "$KFORGE" pack
expect_exit 2 "an unknown problem is a usage error" "$KFORGE" pack --version 1.0.0 --problems level1/001_ReLU,level1/999_Nope -o bad
contains "... naming it" "$T_TMP/err" "^kforge: pack: unknown problem 'level1/999_Nope'$"
expect_exit 2 "number and name must agree (issue 36)" "$KFORGE" pack --version 1.0.0 --problems 2_ReLU.py -o bad
contains "... suggesting the closest" "$T_TMP/err" "unknown problem '2_ReLU.py'; did you mean 'level1/001_ReLU'\?$"
check "... before writing anything" test ! -e bad

mkdir -p elsewhere/deeper && cp "$KFORGE_DB" elsewhere/deeper/other-name.db
expect_exit 0 "pack a copy of the store at another path" "$KFORGE" --db elsewhere/deeper/other-name.db pack --version 1.0.0 -o moved
check "same bytes: the store's path leaves no trace" cmp -s "$TZ" moved/kforge-kernelbench-1.0.0.tar.zst
# A store of schema v3 (before llm_calls.attempts, profiles and search_sessions), packed
# as it is (read-only, not migrated): the same dataset, attempts null, the tables it lacks empty.
cp "$KFORGE_DB" v3.db && sqlite3 v3.db "ALTER TABLE llm_calls DROP COLUMN attempts; DROP TABLE profile_kernels; DROP TABLE profiles; DROP TABLE search_sessions; PRAGMA user_version = 3"
expect_exit 0 "pack a store of an older schema" "$KFORGE" --db v3.db pack --version 1.0.0 -o v3
check "... not migrated by packing" test "$(sqlite3 v3.db 'PRAGMA user_version')" = 3
check "... the same bytes (no attempts were recorded)" cmp -s "$TZ" v3/kforge-kernelbench-1.0.0.tar.zst
# A writer holds the store open with a committed row still in the WAL.
cp "$KFORGE_DB" wal.db
python3 - <<'PY' &
import sqlite3, time, os
db = sqlite3.connect("wal.db", isolation_level=None)
db.execute("PRAGMA wal_autocheckpoint=0")
db.execute("INSERT INTO gpus(name, first_seen) VALUES('WAL GPU', '2026-11-20T00:00:00Z')")
open("wal.ready", "w").close()
while not os.path.exists("wal.done"):
    time.sleep(0.05)
PY
for i in $(seq 100); do [ -e wal.ready ] && break; sleep 0.05; done
check "the row sits in the WAL" test -s wal.db-wal
expect_exit 0 "pack while a writer holds the store" "$KFORGE" --db wal.db pack --version 1.0.0 -o walout
touch wal.done; wait
check "committed rows in the WAL are packed" sh -c "tar --zstd -xOf walout/kforge-kernelbench-1.0.0.tar.zst data/gpus.jsonl | grep -q 'WAL GPU'"

# Standard tools read it.
mkdir gnu
check "GNU tar extracts the .tar.zst" tar --zstd -xf "$TZ" -C gnu
check "entries sorted by path, SHA256SUMS last" sh -c "tar --zstd -tf $TZ >names && tail -n 1 names | grep -qx SHA256SUMS && head -n -1 names | LC_ALL=C sort -c"
check "owners are numeric 0/0, no user names" sh -c "tar --zstd -tvf $TZ | awk '{print \$2}' | sort -u | grep -qx '0/0'"
for f in README.md SHA256SUMS schema.json provenance.json kforge.db sft.jsonl pairs.jsonl \
	data/problems.jsonl data/evaluations.jsonl data/trajectories.jsonl data/llm_calls.jsonl; do
	check "contains $f" test -s "gnu/$f"
done
check "kernels/<problem>/<hash>.cu files" sh -c 'ls gnu/kernels/level1/001_ReLU/*.cu | grep -Eq "/[0-9a-f]{64}\.cu$"'
check "sha256sum -c SHA256SUMS passes" sh -c 'cd gnu && sha256sum --quiet -c SHA256SUMS'
check "SHA256SUMS covers every other file" sh -c 'cd gnu && test "$(find . -type f ! -name SHA256SUMS | wc -l)" = "$(wc -l <SHA256SUMS)"'
check "kforge.db is a sound store" sh -c 'test "$(sqlite3 gnu/kforge.db "PRAGMA integrity_check")" = ok'
check "kforge.db is not in WAL mode" sh -c 'test "$(sqlite3 gnu/kforge.db "PRAGMA journal_mode")" = delete'
check_fail "no local paths or host name in any file" grep -rqF -e "$T_TMP" -e "$(hostname)" gnu
check "card has Hugging Face front matter" sh -c 'head -n 1 gnu/README.md | grep -qx -- --- && grep -q "^license: cc-by-4.0" gnu/README.md && grep -q "^configs:" gnu/README.md && grep -q "path: sft.jsonl" gnu/README.md'
check "provenance names protocols and GPUs" python3 -c "
import json; p = json.load(open('gnu/provenance.json'))
assert 'collect-v1' in p['protocols'] and 'verify-v1' in p['protocols'], p['protocols']
assert [g['name'] for g in p['gpus']] == ['NVIDIA H100 80GB HBM3', 'NVIDIA H200']
assert p['drivers'] == ['580.65.06'] and p['last_created_at']"
check "Python tarfile extracts the .tar.gz" python3 -c "
import tarfile; t = tarfile.open('dist/kforge-kernelbench-1.0.0.tar.gz'); t.extractall('py', filter='data')"
check "Python tarfile reads the .tar.zst (through zstd -d)" sh -c "zstd -qdc $TZ | python3 -c '
import sys, tarfile; t = tarfile.open(fileobj=sys.stdin.buffer, mode=\"r|\"); t.extractall(\"pyz\", filter=\"data\")'"
check "both extract to the same files" diff -r py pyz
check "every JSONL line parses with Python json, objects, fields as schema.json says" python3 -c "
import json, glob
schema = json.load(open('py/schema.json'))['files']
files = glob.glob('py/**/*.jsonl', recursive=True); assert len(files) == 17, files
T = {'string': str, 'integer': int, 'number': (int, float), 'array': list, 'object': dict, 'boolean': bool}
for f in files:
    fields = schema[f[3:]]['fields']
    for n, line in enumerate(open(f, encoding='utf-8'), 1):
        o = json.loads(line); assert isinstance(o, dict)
        assert set(o) == set(fields), (f, n, set(o) ^ set(fields))
        for k, spec in fields.items():
            v = o[k]
            if v is None: assert spec['nullable'], (f, n, k)
            elif spec['type'] in T: assert isinstance(v, T[spec['type']]), (f, n, k, v)
    assert all(s['description'] != '(not documented)' for s in fields.values()), f"
check "sft: a chat per correct kernel, assistant answers with the kernel" python3 -c "
import json
rows = [json.loads(l) for l in open('py/sft.jsonl')]
assert rows and all(r['messages'][-1]['role'] == 'assistant' and '/*@launch' in r['messages'][-1]['content'] for r in rows)
assert all(r['per_gpu'] and r['time_mean_ms'] > 0 for r in rows)
assert any(r['verified_gpus'] == ['NVIDIA H100 80GB HBM3', 'NVIDIA H200'] for r in rows)
src = open('py/' + rows[0]['kernel_path']).read(); assert src in rows[0]['messages'][-1]['content']"
check "pairs: faster chosen over slower, correct over incorrect" python3 -c "
import json
rows = [json.loads(l) for l in open('py/pairs.jsonl')]
f = [r for r in rows if r['kind'] == 'faster_vs_slower']; c = [r for r in rows if r['kind'] == 'correct_vs_incorrect']
assert f and c
assert all(r['chosen_time_mean_ms'] * 1.05 <= r['rejected_time_mean_ms'] for r in f)
assert all(r['rejected_status'] != 'correct' for r in c)"
check "trajectories: best-so-far never gets worse, lineage ends at the best" python3 -c "
import json
for l in open('py/data/trajectories.jsonl'):
    t = json.loads(l); b = [r['best_so_far_time_ms'] for r in t['rounds'] if r['best_so_far_time_ms']]
    assert b == sorted(b, reverse=True), b
    assert t['lineage'][-1]['candidate_id'] == t['best']['candidate_id']"
check "evaluations carry per-trial values" python3 -c "
import json
e = [json.loads(l) for l in open('py/data/evaluations.jsonl')]
ok = [x for x in e if x['status'] == 'correct' and x['protocol'] == 'collect-v1']
assert ok and all(len(x['time_trials_ms']) == 10 and len(x['check_trials']) == 5 for x in ok)"

# Filters.
expect_exit 0 "pack --only-verified --problems" "$KFORGE" pack --version 1.1.0 --only-verified --problems level1/001_ReLU,level1/002_Softmax
expect_exit 0 "pack the same filter again" "$KFORGE" pack --version 1.1.0 --only-verified --problems level1/001_ReLU,level1/002_Softmax -o again
expect_exit 0 "the same filter by KernelBench's names (issue 36)" "$KFORGE" pack --version 1.1.0 --only-verified --problems 1_ReLU.py,level1/2_Softmax -o kbnames
check "a filtered pack is reproducible too" cmp -s dist/kforge-kernelbench-1.1.0.tar.zst again/kforge-kernelbench-1.1.0.tar.zst
check "and the same bytes by KernelBench's names" cmp -s dist/kforge-kernelbench-1.1.0.tar.zst kbnames/kforge-kernelbench-1.1.0.tar.zst
mkdir f && tar --zstd -xf dist/kforge-kernelbench-1.1.0.tar.zst -C f
check "the filtered kforge.db is sound, foreign keys hold" sh -c 'test "$(sqlite3 f/kforge.db "PRAGMA integrity_check")" = ok && test -z "$(sqlite3 f/kforge.db "PRAGMA foreign_key_check")"'
expect_exit 0 "dataset verify passes the filtered tarball" "$KFORGE" dataset verify dist/kforge-kernelbench-1.1.0.tar.zst
check "the card states the filter" grep -q "Packed with a filter: only kernels verified on at least one GPU; problems \`level1/001_ReLU\` \`level1/002_Softmax\`." f/README.md
check "--problems keeps only those problems" sh -c 'test "$(wc -l <f/data/problems.jsonl)" = 2'
check "--only-verified keeps only verified kernels" python3 -c "
import json, sqlite3
ks = {json.loads(l)['hash'] for l in open('f/data/kernels.jsonl')}
v = {r[0] for r in sqlite3.connect('f/kforge.db').execute(\"select kernel_hash from verifications where verdict='verified'\")}
assert ks and ks == v, (len(ks), len(v))"

# dataset verify
expect_exit 0 "dataset verify passes a fresh tarball" "$KFORGE" dataset verify "$TZ"
contains "verify says OK with counts" "$T_TMP/out" "OK \\([0-9]+ files, [0-9]+ JSONL lines checked\\)"
expect_exit 0 "dataset verify passes the .tar.gz" "$KFORGE" dataset verify dist/kforge-kernelbench-1.0.0.tar.gz
zstd -qdc "$TZ" >plain.tar
python3 - <<'PY'
import tarfile, io, hashlib
src = tarfile.open("plain.tar")
members = [(m, src.extractfile(m).read()) for m in src.getmembers()]
def write(name, edit=None, drop=None, resum=False):
    out = tarfile.open(name, "w", format=tarfile.PAX_FORMAT)
    files = {m.name: d for m, d in members if m.name != drop}
    if edit:
        files[edit[0]] = edit[1](files[edit[0]])
    if resum:
        files["SHA256SUMS"] = b"".join(b"%s  %s\n" % (hashlib.sha256(d).hexdigest().encode(), n.encode())
                                       for n, d in sorted(files.items()) if n != "SHA256SUMS")
    for m, _ in members:
        if m.name in files:
            d = files[m.name]; m.size = len(d); out.addfile(m, io.BytesIO(d))
    out.close()
def flip(d):
    b = bytearray(d); b[len(b) // 2] ^= 0x20; return bytes(b)
write("flipped.tar", edit=("data/kernels.jsonl", flip))
write("missing.tar", drop="data/ideas.jsonl")
write("count.tar", edit=("README.md", lambda d: d.replace(b"| `sft.jsonl` | ", b"| `sft.jsonl` | 9")), resum=True)
write("type.tar", edit=("data/runs.jsonl", lambda d: d.replace(b'"seed":1', b'"seed":"1"')), resum=True)
write("extra.tar", edit=("data/gpus.jsonl", lambda d: d.replace(b'{"arch"', b'{"zzz":1,"arch"', 1)), resum=True)
write("nonl.tar", edit=("data/gpus.jsonl", lambda d: d.rstrip(b"\n")), resum=True)
PY
expect_exit 4 "verify catches a flipped byte" "$KFORGE" dataset verify flipped.tar
contains "... and names the file" "$T_TMP/err" "data/kernels.jsonl: checksum mismatch"
expect_exit 4 "verify catches a missing file" "$KFORGE" dataset verify missing.tar
contains "... and names it" "$T_TMP/err" "data/ideas.jsonl is listed in SHA256SUMS but missing"
expect_exit 4 "verify catches a card count that is wrong" "$KFORGE" dataset verify count.tar
contains "... naming the file and both counts" "$T_TMP/err" "README.md says sft.jsonl has 9[0-9]+ rows; it has [0-9]+"
expect_exit 4 "verify catches a field of the wrong type" "$KFORGE" dataset verify type.tar
contains "... with file, line and field" "$T_TMP/err" "data/runs.jsonl:1: field \"seed\" is not of type integer"
expect_exit 4 "verify catches a field not in schema.json" "$KFORGE" dataset verify extra.tar
expect_exit 4 "verify catches a last line with no newline" "$KFORGE" dataset verify nonl.tar
contains "... naming the file" "$T_TMP/err" "data/gpus.jsonl: the last line has no newline"
head -c 1000 "$TZ" >trunc.tar.zst
expect_exit 4 "verify of a truncated tarball fails the check" "$KFORGE" dataset verify trunc.tar.zst
contains "... listing why" "$T_TMP/err" "trunc.tar.zst FAILED"
expect_exit 1 "verify of a missing file fails" "$KFORGE" dataset verify nothere.tar.zst

# dataset cat: one file of a tarball or an extracted directory, through libarchive
expect_exit 0 "dataset cat provenance.json" "$KFORGE" dataset cat "$TZ" provenance.json
check "... the same bytes GNU tar extracts" sh -c "tar --zstd -xOf '$TZ' provenance.json | cmp -s - '$T_TMP/out'"
{ sleep 0.5; "$KFORGE" dataset cat "$TZ" provenance.json 2>pipe.err; echo $? >pipe.rc; } | true
check "dataset cat into a pipe its reader closed: exit 0 (issue 36)" grep -qx 0 pipe.rc
check "... quietly" test ! -s pipe.err
"$KFORGE" dataset cat "$TZ" kforge.db >cat.db 2>/dev/null
check "dataset cat of the binary store, byte for byte" sh -c "tar --zstd -xOf '$TZ' kforge.db | cmp -s - cat.db"
"$KFORGE" dataset cat f data/runs.jsonl >cat.runs 2>/dev/null
check "dataset cat of an extracted directory" cmp -s cat.runs f/data/runs.jsonl
expect_exit 1 "dataset cat of a file not in it fails" "$KFORGE" dataset cat "$TZ" nothere.json
contains "... saying so" "$T_TMP/err" "no nothere.json in it"
tar -cf dir.tar -C f data
expect_exit 1 "dataset cat of a directory entry fails" "$KFORGE" dataset cat dir.tar data/
contains "... saying it is not a file" "$T_TMP/err" "data/ is not a regular file"
python3 - <<'PY'
import tarfile
t = tarfile.open("plain.tar")
m = t.getmember("kforge.db")
open("short.tar", "wb").write(open("plain.tar", "rb").read()[:m.offset_data + m.size // 2])
PY
expect_exit 1 "dataset cat of a truncated entry fails" "$KFORGE" dataset cat short.tar kforge.db
expect_exit 2 "dataset cat needs FILE and MEMBER" "$KFORGE" dataset cat "$TZ"
# The release page names the packing kforge without zstd(1): scripts/results_md.py
# reads provenance.json through `kforge dataset cat` (a zstd that fails stands in for none).
mkdir nozstd && printf '#!/bin/sh\nexit 1\n' >nozstd/zstd && chmod +x nozstd/zstd
env PATH="$T_TMP/nozstd:$PATH" python3 "$KF_ROOT/scripts/results_md.py" "$KFORGE_DB" --version 1.0.0 \
	--tarball "$TZ" --kforge "$KFORGE" --kernelbench none -o rk.md 2>rk.err
contains "results page: packed by, read with kforge" rk.md "^- packed by kforge \`"
contains "... with the command that packs the same bytes" rk.md "pack --version 1\.0\.0 -o dist"
"$KFORGE" pack --name custom-x --version 1.0.0 -o named >/dev/null 2>&1
python3 "$KF_ROOT/scripts/results_md.py" "$KFORGE_DB" --version 1.0.0 --tarball named/kforge-custom-x-1.0.0.tar.zst \
	--kforge "$KFORGE" --kernelbench none -o rn.md 2>rn.err
contains "... naming a pack's --name" rn.md "pack --name custom-x --version 1\.0\.0 -o dist"
env PATH="$T_TMP/nozstd:$PATH" python3 "$KF_ROOT/scripts/results_md.py" "$TZ" --version 1.0.0 --tarball "$TZ" \
	--kforge "$KFORGE" --kernelbench none -o rs.md 2>rs.err
check "results page of a tarball's store (read with kforge) is the store's" cmp -s rk.md rs.md
# The site and report of the packed store are the live store's (no row-order dependence).
"$KFORGE" dataset cat "$TZ" kforge.db >packed.db 2>/dev/null
"$KFORGE" site -o site-live >/dev/null 2>&1 && "$KFORGE" --db packed.db site -o site-packed >/dev/null 2>&1
check "the site of the tarball's store is the store's" diff -r -q site-live site-packed
"$KFORGE" report >rep-live.md 2>/dev/null && "$KFORGE" --db packed.db report >rep-packed.md 2>/dev/null
check "... and so is the report" cmp -s rep-live.md rep-packed.md
env PATH="$T_TMP/nozstd:$PATH" python3 "$KF_ROOT/scripts/results_md.py" "$KFORGE_DB" --version 1.0.0 \
	--tarball "$TZ" --kernelbench none -o rt.md 2>rt.err
lacks "... where GNU tar could not read it, none" rt.md "packed by kforge"

# dataset diff
expect_exit 0 "dataset diff A B" "$KFORGE" dataset diff "$TZ" dist/kforge-kernelbench-1.1.0.tar.zst
contains "diff: rows per file" "$T_TMP/out" "data/problems.jsonl +3 -> 2 +\\(-1\\)"
contains "diff: problems removed" "$T_TMP/out" "problem removed: level1/003_Matmul"
contains "diff: best speedups that moved" "$T_TMP/out" "best speedup level1/003_Matmul on NVIDIA H100 80GB HBM3: [0-9.]+x, gone"
expect_exit 0 "dataset diff A A" "$KFORGE" dataset diff "$TZ" "$TZ"
contains "diff of a tarball with itself: nothing moved" "$T_TMP/out" "best speedups moved: 0"
