#!/bin/sh
# kforge report prints model text (issue 39) as the site's Markdown reports
# do (md_escape): HTML inert, and no terminal control (ESC/CSI, OSC 8, BEL,
# C1, bidi overrides) reaches the terminal, with --source and --json too.
. "$KF_ROOT/tests/lib.sh"
SF="$KF_BUILD/tests/searchfake"
d="root/problems/level1/001_P1"
mkdir -p "$d"
printf 'extern "C" __global__ void ref() { }\n/*@launch\nref<<<1, 1>>>();\n@*/\n' >"$d/reference.cu"
fixture_problem "$d"
DB="$T_TMP/kforge.db"
check "a search to report on" sh -c "'$SF' --db '$DB' --root root --rounds 1 --k 2 --m 2 --seed 5 >/dev/null"
q() { sqlite3 "$DB" "$1"; }
# every idea, the model's name and every kernel carry the hostile text
H="char(27) || '[2J' || char(27) || ']8;;http://127.0.0.1/x' || char(7) || 'click' || char(27) || ']8;;' || char(7) || ' <script>alert(1)</script> ' || char(8238) || 'gnp.exe ' || char(155) || '31m *b* [l](u)'"
q "update ideas set text = 'Tile it. ' || $H"
q "update runs set model = 'm ' || $H"
# the best kernel (round 0's reference) gets an idea, so that both print one
q "update candidates set idea_id = (select min(id) from ideas) where idea_id is null"
q "update kernels set source = source || '// ' || $H || char(10)"
expect_exit 0 "report of the problem" "$KFORGE" report 1
contains "the idea is there" "$T_TMP/out" 'Tile it\.'
contains "HTML is escaped" "$T_TMP/out" '&lt;script&gt;alert\\\(1\\\)&lt;/script&gt;'
lacks "no raw <script>" "$T_TMP/out" '<script>'
cp "$T_TMP/out" report.md
expect_exit 0 "report --source" "$KFORGE" report 1 --source
cp "$T_TMP/out" source.md
expect_exit 0 "report --json" "$KFORGE" report 1 --json
cp "$T_TMP/out" report.json
expect_exit 0 "run summary" "$KFORGE" report
cp "$T_TMP/out" run.md
check "no control character, C1 or bidi override in any of them" python3 - report.md source.md report.json run.md <<'PY'
import re, sys
bad = re.compile(rb"[\x00-\x08\x0b-\x1f\x7f]|\xc2[\x80-\x9f]|\xe2\x80[\xaa-\xae]|\xe2\x81[\xa6-\xa9]")
hits = [f for f in sys.argv[1:] if bad.search(open(f, "rb").read())]
if hits:
    print("# " + " ".join(hits))
sys.exit(1 if hits else 0)
PY
expect_exit 0 "site" "$KFORGE" site -o site
check "the idea line is the site report's, byte for byte" python3 - report.md site/reports <<'PY'
import os, sys
rep = open(sys.argv[1], "rb").read().split(b"\n")
site = b"".join(open(os.path.join(sys.argv[2], f), "rb").read() for f in os.listdir(sys.argv[2]) if f.endswith(".md"))
idea = [l[len(b"- idea: "):] for l in site.split(b"\n") if l.startswith(b"- idea: ")]
assert idea and idea[0].startswith(b"Tile it"), idea
sys.exit(0 if idea[0] in rep else 1)
PY
