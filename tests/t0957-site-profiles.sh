#!/bin/sh
# Profiles on the site and in reports (issue 41): a fixture store with
# recorded profiles (synthstore.py --add-profiles after kforge migrated it),
# checked against the raw tables by tests/tools/profcheck.py: the best
# kernel's profile, each kernel's diff against its parent (idea, speedup
# change, +/- lines, escaped), limiters before and after per category, and
# the report's profile summary and chain of ideas.
. "$(dirname "$0")/lib.sh" 2>/dev/null || . "$KF_ROOT/tests/lib.sh"

T="$KF_ROOT/tests/tools"
python3 "$T/synthstore.py" --kernels 150 --problems 5 --seed 3 --hostile --out fx.db 2>/dev/null
expect_exit 0 "the fixture store migrates to v5" "$KFORGE" store migrate --db fx.db
expect_exit 0 "profiles added to its correct evaluations" python3 "$T/synthstore.py" --add-profiles fx.db --seed 3
check "profiles recorded" test "$(sqlite3 fx.db 'SELECT COUNT(*) FROM profiles')" -gt 50

# Problem 2 has no profile at all.
sqlite3 fx.db "DELETE FROM profile_kernels WHERE eval_id IN (SELECT eval_id FROM profiles
  WHERE problem_id LIKE 'level1/002_%'); DELETE FROM profiles WHERE problem_id LIKE 'level1/002_%'"
# A known change, with markup in it, in a kernel of problem 1 that has a parent.
child=$(sqlite3 fx.db "SELECT c.id FROM candidates c JOIN candidates p ON p.id = json_extract(c.parent_ids, '\$[0]')
  WHERE c.problem_id LIKE 'level1/001_%' AND c.status = 'correct' AND p.status = 'correct' AND c.kernel_hash IN
  (SELECT kernel_hash FROM candidates GROUP BY kernel_hash HAVING COUNT(*) = 1) ORDER BY c.id LIMIT 1")
check "a correct kernel with a correct parent to plant a change in" test -n "$child"
sqlite3 fx.db "UPDATE kernels SET source = replace(source, '    float acc = 0.0f;', '    float acc = 0.0f;' || char(10) ||
  '    float planted = 1.0f; // <script>alert(1)</script> & done') WHERE hash = (SELECT kernel_hash FROM candidates WHERE id = '$child')"

expect_exit 0 "site renders" "$KFORGE" site --db fx.db -o public
python3 "$T/profcheck.py" fx.db public >check.out 2>&1
while IFS= read -r l; do
	case "$l" in
	"ok "*) ok "profcheck: $(echo "$l" | sed 's/^ok [0-9]* - //')" ;;
	"not ok "*) nok "profcheck: $(echo "$l" | sed 's/^not ok [0-9]* - //')" ;;
	"#"*) echo "$l" ;;
	esac
done <check.out
check "profcheck ran its checks" grep -q '^1\.\.[1-9]' check.out

p1=public/problems/level1-001_Square_matrix_multiplication_.html
p2=public/problems/level1-002_Standard_matrix_multiplication_.html
contains "problem 1 shows its best kernel's profile" "$p1" '<span class="badge lim" id="limiter">(memory|compute|latency|launch)</span>'
contains "  with the block-level figures" "$p1" '<th scope="row">L2 hit rate</th><td class="num">[0-9.]+%</td>'
contains "problem 2 (no profile) says so" "$p2" '<p id="profile-none">No profile recorded.</p>'
lacks "  and shows no profile table" "$p2" 'id="profile"'
awk -v c="data-candidate=\"$child\"" 'index($0, c) { on = 1 } on { print } on && /<\/details>/ { exit }' "$p1" >diff.html
contains "the planted kernel has a diff view" diff.html '<details class="kdiff"'
pid=$(sqlite3 fx.db "SELECT json_extract(parent_ids, '\$[0]') FROM candidates WHERE id = '$child'")
contains "  naming its parent" diff.html "data-parent=\"$pid\""
contains "  with the speedup change parent -> kernel" diff.html '<span class="sp-before">[0-9.]+×</span> → <span class="sp-after">[0-9.]+×</span>'
idea=$(sqlite3 fx.db "SELECT substr(i.text, 1, 20) FROM candidates c JOIN ideas i ON i.id = c.idea_id WHERE c.id = '$child'")
contains "  and the change in per cent" diff.html '<span class="badge (good|bad)">[+-][0-9.]+%</span>'
contains "  and the idea that produced it" diff.html "<strong>Idea:</strong> <p>$(printf '%s' "$idea" | sed 's/[][\.*^$()+?{}|]/\\&/g')"
contains "  the planted line as an addition, escaped" diff.html '<ins class="da">\+    float planted = 1\.0f; // &lt;script&gt;alert\(1\)&lt;/script&gt; &amp; done</ins>'
contains "  removed lines marked" diff.html '<del class="dd">-'
lacks "no markup from a kernel source reaches the page" "$p1" '<script>alert'
check "the problem page stays bounded" test "$(wc -c <"$p1")" -lt 1500000
contains "a category page shows limiters before and after" public/categories/memory.html '<table id="limiters"'

# kforge report PROBLEM: the profile summary and the chain of ideas.
expect_exit 0 "kforge report 1" "$KFORGE" --db fx.db report 1
cp "$T_TMP/out" rep.md
"$KFORGE" --db fx.db report 1 --json >rep.json
python3 - fx.db rep.json >want.txt <<'PY'
import json, sqlite3, sys
db = sqlite3.connect(sys.argv[1]); r = json.load(open(sys.argv[2]))
b = r["best"]; gpu = r["run"]["gpu_name"]; pid = r["problem"]["id"]
lim = db.execute("SELECT p.limiter FROM profiles p JOIN evals e ON e.id = p.eval_id WHERE e.status = 'correct'"
                 " AND p.kernel_hash = ? AND p.problem_id = ? AND p.gpu_name = ?"
                 " ORDER BY p.created_at DESC, p.eval_id DESC LIMIT 1", (b["kernel_hash"], pid, gpu)).fetchone()
print(lim[0] if lim else "none")
chain, cid = [], b["id"]
while cid and cid not in chain and len(chain) < 50:
    row = db.execute("SELECT parent_ids FROM candidates WHERE id = ?", (cid,)).fetchone()
    if not row: break
    chain.insert(0, cid)
    ps = json.loads(row[0]); cid = ps[0] if ps else None
for c in chain: print(c)
PY
lim=$(head -n 1 want.txt)
contains "the report has the profile summary" rep.md '^## Profile of the best kernel$'
contains "  with the best kernel's limiter" rep.md "^- limiter: \*\*$lim\*\*$"
contains "  and its kernels" rep.md '^\| k\\_[0-9a-f]{6}\\_0 \| [0-9.]+ (ms|µs) \|'
contains "the report has the chain of ideas" rep.md '^## Chain of ideas$'
sed -n '/^## Chain of ideas/,$p' rep.md | grep '^| [0-9]' | awk -F' [|] ' '{ gsub(/\\/, "", $3); print $3 }' >got-chain.txt
tail -n +2 want.txt >want-chain.txt
check "  its steps in order, root first ($(wc -l <want-chain.txt) steps)" cmp -s got-chain.txt want-chain.txt
check "  more than one step" test "$(wc -l <want-chain.txt)" -gt 1
expect_exit 0 "kforge report 2 (no profile)" "$KFORGE" --db fx.db report 2
contains "  says no profile was recorded" "$T_TMP/out" '^No profile recorded\.$'
r1=public/reports/level1-001_Square_matrix_multiplication_.md
contains "the site's report has the profile summary" "$r1" '^## Profile of the best kernel$'
contains "  and the chain of ideas" "$r1" '^\| 1 \| [0-9]+ \| '
contains "the site's report 2 has none" public/reports/level1-002_Standard_matrix_multiplication_.md '^No profile recorded\.$'
