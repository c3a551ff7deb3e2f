#!/bin/sh
# kforge site: renders a fixture store (synthetic, seeded, with hostile
# strings, a problem verified nowhere and a problem with no candidates) and
# checks the pages against the store with tests/tools/sitecheck.py.
. "$(dirname "$0")/lib.sh" 2>/dev/null || . "$KF_ROOT/tests/lib.sh"

T="$KF_ROOT/tests/tools"
python3 "$T/synthstore.py" --kernels 150 --problems 5 --seed 3 --hostile --out fx.db 2>/dev/null
check "fixture store generated" test -s fx.db
expect_exit 0 "synthstore's store passes kforge store check" "$KFORGE" --db fx.db store check
# Problem 5 is verified nowhere: its best kernels must show as unverified.
# A sixth problem has no candidates at all.
sqlite3 fx.db "DELETE FROM verifications WHERE problem_id LIKE 'level1/005_%';
INSERT INTO problems(id, level, number, name, spec, spec_sha256)
  VALUES('level1/099_Empty<b>', 1, 99, 'Empty <img src=x onerror=alert(1)>', '{}', 'x');"

# A verified kernel failed an older protocol: the latest verdict counts, once.
sqlite3 fx.db "INSERT INTO verifications(id, eval_id, kernel_hash, problem_id, gpu_name, protocol, verdict,
  failed_check, review_flags, env, kforge_version, created_at)
  SELECT 'old-' || id, eval_id, kernel_hash, problem_id, gpu_name, 'verify-v0', 'failed', 'nan', '[]', '{}',
  kforge_version, '2000-01-01T00:00:00Z' FROM verifications WHERE verdict = 'verified' ORDER BY id LIMIT 3"

# A round that had no candidates (a proposer out of untried ideas) is not counted.
sqlite3 fx.db "INSERT INTO rounds SELECT run_id, problem_id, 1 + MAX(round), 'done', started_at, finished_at, NULL
  FROM rounds WHERE problem_id = (SELECT MIN(problem_id) FROM candidates) GROUP BY run_id, problem_id"

# A huge compile log is cut on the page, not copied whole.
big=$(sqlite3 fx.db "SELECT kernel_hash FROM compiles WHERE status = 'ok' ORDER BY kernel_hash LIMIT 1")
sqlite3 fx.db "UPDATE compiles SET log = 'ptxas é' || printf('%.*c', 200000, 'x') WHERE kernel_hash = '$big'"

# One evaluation whose timing the search's prune_vs_eager stopped early.
pr=$(sqlite3 fx.db "SELECT id FROM evals WHERE status = 'correct' AND n_trials > 0 ORDER BY id LIMIT 1")
prk=$(sqlite3 fx.db "SELECT kernel_hash FROM evals WHERE id = '$pr'")
sqlite3 fx.db "UPDATE evals SET n_trials = 4, env = json_set(coalesce(env, '{}'), '\$.pruned',
  json('{\"decided_after\":3,\"mean_ms\":9.0,\"limit_ms\":3.0}')) WHERE id = '$pr'"

mkdir dist && printf 'tarball bytes' >dist/kforge-level1-v1.tar.zst && printf x >dist/notes.txt
expect_exit 0 "site renders" "$KFORGE" site --db fx.db -o public --dist dist
contains "summary line counts pages" "$T_TMP/out" "^site: public: [0-9]+ pages \(6 problems, 150 kernels\), 6 reports"
python3 "$T/sitecheck.py" fx.db public >check.out 2>&1
sed 's/^ok [0-9]* - /ok - sitecheck: /; s/^not ok [0-9]* - /not ok - sitecheck: /' check.out |
	grep -E '^(not )?ok|^#' | while IFS= read -r l; do echo "$l"; done >check.tap
while IFS= read -r l; do
	case "$l" in
	"ok - "*) ok "${l#ok - }" ;;
	"not ok - "*) nok "${l#not ok - }" ;;
	*) echo "$l" ;;
	esac
done <check.tap
check "sitecheck ran its checks" grep -q '^1\.\.[1-9]' check.out

check "Mustache tags from the store stay text" grep -rqF '{{#evil}}{{{raw}}}' public/kernels
check "control characters from the store become U+FFFD" grep -rqF 'ctl&#xFFFD;&#xFFFD;&#xFFFD;[31m&#xFFFD; end' public/kernels
check "no control character reaches any file" sh -c "! grep -rlP '[\\x01-\\x08\\x0b\\x0c\\x0e-\\x1f\\x7f]' public"
kp="public/kernels/$(echo "$big" | cut -c1-2)/$big.html"
contains "a huge compile log is cut" "$kp" 'more bytes not shown'
pp="public/kernels/$(echo "$prk" | cut -c1-2)/$prk.html"
contains "a pruned evaluation shows its trials and says so" "$pp" '<td class="num">4, pruned</td>'
check "only that one is marked pruned" test "$(grep -rl ', pruned</td>' public/kernels | wc -l)" -eq 1
check "the kernel page stays small" test "$(wc -c <"$kp")" -lt 120000
contains "unverified best kernels are marked so" public/problems/level1-005_Matrix_scalar_multiplication.html 'badge warn">unverified'
contains "problem without candidates has a page" public/problems/level1-099_Empty_b_.html 'No correct kernel'
lacks "its hostile name is not markup" public/problems/level1-099_Empty_b_.html '<img'
contains "hostile name shown as text" public/index.html 'level1/099_Empty&lt;b&gt;'
contains "downloads lists the tarball" public/downloads.html 'kforge-level1-v1.tar.zst'
want=$(printf 'tarball bytes' | sha256sum | cut -d' ' -f1)
contains "downloads shows its SHA-256" public/downloads.html "$want"
lacks "downloads skips other files" public/downloads.html 'notes.txt'
contains "methodology rendered from Markdown" public/methodology.html '<h2>How the numbers were made</h2>'
contains "methodology lists protocols" public/methodology.html 'collect-v1'
contains "report header" public/reports/level1-001_Square_matrix_multiplication_.md '^# level1/001\\_Square\\_matrix\\_multiplication\\_$'
contains "report has per-round lines" public/reports/level1-001_Square_matrix_multiplication_.md '^- run run\\-3\\-builtin, round 1: [0-9]+ candidates'
contains "report has the best kernel's source" public/reports/level1-001_Square_matrix_multiplication_.md '^```cuda$'
lacks "reports hold no raw HTML from the store" public/reports/level1-099_Empty_b_.md '<img|<b>'
contains "dark scheme in the stylesheet" public/style.css 'prefers-color-scheme: dark'
# The one script: site.js on the index (sorting, filtering), never inline.
check "no inline JavaScript, no script but the index's site.js" sh -c \
	"test \"\$(grep -rho '<script[^>]*>[^<]*' public --include=*.html | sort -u)\" = '<script src=\"site.js\" defer>'"
contains "the index loads site.js" public/index.html '<script src="site.js" defer></script>'
check "site.js is in the site" test -s public/site.js
contains "the leaderboard is complete without it: a row per problem" public/index.html \
	'data-problem="level1/099_Empty&lt;b&gt;"'
contains "a long name breaks at its underscores, full name on hover" public/index.html \
	'title="level1/001_Square_matrix_multiplication_">level1/<wbr>001_<wbr>Square_<wbr>'

# Reports: HTML pages (cmark), the Markdown kept beside them.
rp=public/reports/level1-001_Square_matrix_multiplication_
contains "the report is an HTML page" $rp.html '<h1>level1/001_Square_matrix_multiplication_</h1>'
contains "its statistics are a list" $rp.html '<li>candidates: [0-9]+</li>'
contains "its kernel is a code block" $rp.html '<pre><code class="language-cuda">'
contains "a hostile problem id is text in its HTML report" public/reports/level1-099_Empty_b_.html \
	'<h1>level1/099_Empty&lt;b&gt;</h1>'
lacks "no raw HTML from the store in the HTML reports" public/reports/level1-099_Empty_b_.html '<img|<b>'
contains "the problem page links the HTML report" public/problems/level1-001_Square_matrix_multiplication_.html \
	'href="../reports/level1-001_Square_matrix_multiplication_.html">Report</a>'
contains "the nav links the reports' HTML index" public/index.html 'href="reports/index.html">Reports<'
contains "the reports' index links HTML reports" public/reports/index.html \
	'href="level1-001_Square_matrix_multiplication_.html"'

# Downloads: the tarball is copied into the site and linked, or linked at --base-url.
check "the tarball is in the site" cmp dist/kforge-level1-v1.tar.zst public/downloads/kforge-level1-v1.tar.zst
contains "downloads links the copy" public/downloads.html 'href="downloads/kforge-level1-v1.tar.zst"'
check "other files are not copied" test ! -e public/downloads/notes.txt
# A symlink in --dist: the site gets the file it names, not a link that
# would dangle in downloads/.
mkdir sdist && cp dist/kforge-level1-v1.tar.zst sdist/kforge-real-v1.tar.zst &&
	ln -s kforge-real-v1.tar.zst sdist/kforge-latest-v1.tar.zst
expect_exit 0 "site with a symlinked tarball in --dist" "$KFORGE" site --db fx.db -o slinked --dist sdist --no-kernel-pages
check "... downloads/ holds a file, not a symlink" sh -c 'test -f slinked/downloads/kforge-latest-v1.tar.zst && test ! -L slinked/downloads/kforge-latest-v1.tar.zst'
check "... with the tarball's bytes" cmp dist/kforge-level1-v1.tar.zst slinked/downloads/kforge-latest-v1.tar.zst
expect_exit 0 "site with --base-url" "$KFORGE" site --db fx.db -o based --dist dist --no-kernel-pages \
	--base-url https://example.org/rel/
contains "--base-url links the tarball there" based/downloads.html 'href="https://example.org/rel/kforge-level1-v1.tar.zst"'
contains "and still shows its SHA-256" based/downloads.html "$want"
check "nothing is copied then" test ! -e based/downloads
expect_exit 2 "--base-url must be http(s)" "$KFORGE" site --db fx.db -o based2 --dist dist --base-url 'javascript:alert(1)'

# A compile-only store (candidates compiled, none run on a GPU): "not checked", not
# 0% correct; no GPU column or fast_p table for the empty GPU name; sane chart axes.
cp fx.db co.db
sqlite3 co.db "UPDATE candidates SET status = 'not_run' WHERE status NOT IN ('format_error', 'compile_error');
  DELETE FROM verifications; DELETE FROM eval_trials;
  UPDATE evals SET status = 'not_run', gpu_name = '', time_mean_ms = NULL;
  UPDATE runs SET gpu_name = ''"
expect_exit 0 "site of a compile-only store" "$KFORGE" --db co.db site -o cosite --no-kernel-pages
contains "the overview says not checked" cosite/index.html 'data-k="correct" data-v="0">not checked<'
lacks "no 0.0% correct anywhere on the index" cosite/index.html '<td class="num"( data-v="[^"]*")?>0\.0%</td></tr>'
contains "the problem page says not checked" cosite/problems/level1-001_Square_matrix_multiplication_.html \
	'data-k="correct" data-v="0">not checked<'
contains "so does the report" cosite/reports/level1-001_Square_matrix_multiplication_.md '^- correct: not checked'
lacks "no fast_p table for a nameless GPU" cosite/index.html '<caption>(, level|</caption>)'
contains "fast_p says why it is missing" cosite/index.html 'id="fastp-none"'
lacks "a store with GPUs has no such note" public/index.html 'id="(fastp|gpus)-none"'
lacks "no negative axis on any chart" cosite/index.html 'class="tk"[^>]*>-'
contains "round bests: none without a correct kernel" cosite/index.html 'no round has a correct kernel'

# Round bests count correct kernels only: a round whose best is an incorrect kernel is no win.
cp fx.db rb.db
sqlite3 rb.db "UPDATE rounds SET best_candidate = (SELECT c.id FROM candidates c WHERE c.run_id = rounds.run_id
  AND c.problem_id = rounds.problem_id AND c.round = rounds.round AND c.status <> 'correct' ORDER BY c.id LIMIT 1)
  WHERE rowid IN (SELECT rowid FROM rounds ORDER BY rowid LIMIT 4)"
expect_exit 0 "site with incorrect round bests" "$KFORGE" --db rb.db site -o rbsite --no-kernel-pages
for cat in memory async precision compute parallelism control; do
	n=$(sqlite3 rb.db "SELECT COUNT(*) FROM rounds x JOIN candidates bc ON bc.id = x.best_candidate
	  JOIN idea_categories y ON y.idea_id = bc.idea_id WHERE y.category = '$cat' AND bc.status = 'correct'")
	contains "round bests of $cat: $n, correct kernels only" rbsite/index.html \
		"<tr data-category=\"$cat\">.*<td class=\"num\">$n</td></tr>"
done

# A GPU without torch.compile baselines: its fast_p against compile is "—", not 0%.
cp fx.db nocomp.db
sqlite3 nocomp.db "DELETE FROM baselines WHERE variant = 'compile' AND gpu_name LIKE '%H200%'"
expect_exit 0 "site without compile baselines on one GPU" "$KFORGE" --db nocomp.db site -o nocomp
sed -n '/data-gpu="NVIDIA H200"/,/<\/table>/p' nocomp/index.html >h200.html
sed -n '/data-gpu="NVIDIA H100/,/<\/table>/p' nocomp/index.html >h100.html
contains "its fast_0.5 row shows a dash against compile" h200.html 'fast_0.5</th><td[^>]*>[^<]*</td><td[^>]*>—</td>'
contains "and so does fast_0" h200.html 'fast_0</th><td[^>]*>[^<]*</td><td[^>]*>—</td>'
contains "the other GPU keeps its compile figures" h100.html 'fast_0.5</th><td[^>]*>[^<]*</td><td[^>]*>[0-9.]+%</td>'

# A degenerate problem (spec "degenerate") is left out of fast_p and marked.
cp fx.db degen.db
dp=$(sqlite3 fx.db "SELECT problem_id FROM evals WHERE status = 'correct' AND gpu_name LIKE '%H100%' ORDER BY problem_id LIMIT 1")
sqlite3 degen.db "UPDATE problems SET spec = json_set(spec, '\$.degenerate', 'constant output') WHERE id = '$dp'"
expect_exit 0 "site with a degenerate problem" "$KFORGE" --db degen.db site -o degen
fast0() { # HTML GPU: the eager fast_0 value of that GPU's table
	sed -n "/data-gpu=\"$2/,/<\/table>/p" "$1" | sed -n 's/.*data-p="0"><th scope="row">fast_0<\/th><td class="num" data-v="\([^"]*\)".*/\1/p'
}
a0=$(fast0 public/index.html "NVIDIA H100")
b0=$(fast0 degen/index.html "NVIDIA H100")
check "fast_0 on the H100 leaves it out: $a0 of 6 -> $b0 of 5" python3 -c "
import sys; a, b = float(sys.argv[1]), float(sys.argv[2])
sys.exit(0 if abs(b - (a * 6 - 1) / 5) < 1e-9 else 1)" "$a0" "$b0"
contains "the caption says so" degen/index.html '<caption>NVIDIA H100[^<]* \(without 1 degenerate problem\)</caption>'
contains "the leaderboard marks it" degen/index.html "data-problem=\"$dp\".*badge\" title=\"constant output\">degenerate<"
lacks "no mark without the flag" public/index.html '>degenerate</span>'
sqlite3 degen.db "UPDATE problems SET spec = json_set(spec, '\$.ill_conditioned', 'fp32 rounding') WHERE id = '$dp'"
expect_exit 0 "site with an ill-conditioned problem" "$KFORGE" --db degen.db site -o ill
contains "the leaderboard marks it too" ill/index.html "data-problem=\"$dp\".*badge\" title=\"fp32 rounding\">ill-conditioned<"

# The release page (scripts/results_md.py): its figures come from the store.
printf '## What this run shows\n\nA note from a file.\n' >notes.md
"$KFORGE" --db fx.db report --gpus >cross.md 2>/dev/null
expect_exit 0 "results page renders" python3 "$KF_ROOT/scripts/results_md.py" fx.db --version 9.9 \
	--tarball dist/kforge-level1-v1.tar.zst --search-seconds 60 --notes notes.md --cross-gpu cross.md -o res.md
contains "it names the tarball's SHA-256" res.md "SHA-256 \`$want\`"
ncand=$(sqlite3 fx.db "SELECT count(*) FROM candidates")
contains "it counts the store's candidates" res.md "^- candidates: $ncand \("
contains "the run's line gives its budget" res.md '^- run `run[-_][0-9a-z-]+`: .*rounds [0-9]+, ideas [0-9]+, impls [0-9]+'
contains "a fast_p row per GPU against eager" res.md '^\| NVIDIA H100 80GB HBM3 \| search \| eager \| [0-9]+% \|'
contains "a per-family table against torch.compile" res.md '^### Geometric-mean speedup against torch.compile, per family, level 1'
contains "the notes file is included" res.md '^A note from a file\.$'
contains "the cross-GPU table is included" res.md '^\| Problem \| '
expect_exit 0 "results page of a store without H200 compile baselines" python3 "$KF_ROOT/scripts/results_md.py" \
	nocomp.db --version 9.9 -o res2.md
sed -n '/against torch.compile, per family/,/^$/p' res2.md >comp.md
lacks "no H200 column against torch.compile there" comp.md 'H200'
# eager with TF32 off gets fast_p rows of its own (a store migrated to v3)
cp fx.db nf.db
echo '{}' >empty.json
"$KFORGE" --db nf.db baselines import empty.json --gpu X --variant eager >/dev/null
sqlite3 nf.db "INSERT INTO baselines(problem_id,gpu_name,variant,mean_ms,imported_at) SELECT problem_id, gpu_name, 'eager_notf32', mean_ms * 2, imported_at FROM baselines WHERE variant = 'eager'"
expect_exit 0 "results page with eager_notf32 baselines" python3 "$KF_ROOT/scripts/results_md.py" nf.db --version 9.9 -o res3.md
contains "a fast_p row against eager_notf32" res3.md '^\| NVIDIA H100 80GB HBM3 \| search \| eager_notf32 \| [0-9]+% \|'

# Levels 2 and 3 (tests/tools/levelstore.py: figures known by construction), H100 search.
# Level 2: 2.5x, 0.5x and an incorrect-only problem count; the degenerate 10x does not:
# fast_0 2/3, fast_1..2 1/3, geomean sqrt(2.5 * 0.5) = 1.118 (with it: 3/4, 2/4, 2.321).
# Against KernelBench's H100 eager (8 and 1 ms): 5x, 0.5x, geomean 1.581.
# Level 3: 3x, 0.8x (ill-conditioned: counted, marked), a kernel correct under collect-v1 but
# incorrect under collect-v2 (not correct): fast_0 2/3, geomean sqrt(3 * 0.8) = 1.549.
"$KFORGE" --db lv.db store init >/dev/null
python3 "$T/levelstore.py" lv.db kb
expect_exit 0 "results page of a level 1-3 store" python3 "$KF_ROOT/scripts/results_md.py" lv.db \
	--version 9.9.0 --kernelbench kb -o lv.md
contains "its title names the levels" lv.md '^# kforge levels 1-3 dataset v9\.9\.0: built-in proposer$'
sed -n '/^## Level 2$/,/^## Level 3$/p' lv.md >lv2.md
sed -n '/^## Level 3$/,/^## Search throughput$/p' lv.md >lv3.md
contains "a level-2 section counts its problems" lv2.md '^- problems: 4 \(1 degenerate, .*\); with a correct kernel in the search: 3$'
contains "level-2 fast_p leaves the degenerate problem out" lv2.md \
	'^\| NVIDIA H100 80GB HBM3 \| search \| eager \| 67% \| 33% \| 33% \| 33% \| 1\.118 \| 2 \|$'
contains "level-2 fast_p against eager with TF32 off" lv2.md '^\| NVIDIA H100 80GB HBM3 \| search \| eager_notf32 \| 67% \| 33% \| 33% \| 33% \| 5\.000 \| 1 \|$'
contains "level-2 fast_p against torch.compile" lv2.md '^\| NVIDIA H100 80GB HBM3 \| search \| compile \| 67% \| 33% \| 0% \| 0% \| 1\.250 \| 1 \|$'
contains "level-2 against KernelBench's H100 numbers" lv2.md \
	'^\| NVIDIA H100 80GB HBM3 \| search \| KernelBench H100 eager \| 67% \| 33% \| 33% \| 33% \| 1\.581 \| 2 \|$'
contains "the degenerate problem is listed apart with its speedup" lv2.md '^\| level2/023_Conv_Mean \| constant: .* \| correct, 10\.000x \|$'
contains "level-2 categories: memory" lv2.md '^\| memory \| NVIDIA H100 80GB HBM3 \| 3 \| 3 \| 3 \| 1 \| 2 \| 1\.118 \(2\) \|$'
lacks "no level-3 problem in level 2" lv2.md 'level3/'
lacks "no per-family table (level 1's families) in level 2" lv2.md 'per family'
contains "level-3 fast_p: the latest collect protocol decides" lv3.md \
	'^\| NVIDIA H100 80GB HBM3 \| search \| eager \| 67% \| 33% \| 33% \| 33% \| 1\.549 \| 2 \|$'
contains "the ill-conditioned problem is marked" lv3.md '^\| level3/002_Deep \| fp32 rounding over 100 layers \| correct, 0\.800x \|$'
lacks "no degenerate table without one" lv3.md 'Degenerate problems'
# Below eager, why (levelstore.py: the GPU's ceilings, the problems' flops and bytes).
contains "a level-2 problem below eager names the gap and the kernel's limiter" lv2.md \
	'^\| level2/002_Gemm_Softmax \| H100 80GB HBM3 \| search \| 0\.500x \| 50% \| 100% \| compute \| gap: the kernel reaches 50% of the floor, eager 100%; the kernel is compute-bound \|$'
contains "a level-3 problem with both at the floor says so" lv3.md \
	'^\| level3/002_Deep \| H100 80GB HBM3 \| search \| 0\.800x \| 80% \| 100% \| - \| roofline floor reached by both \|$'
contains "a level-1 problem whose eager beats the fp32 roofline says so" lv.md \
	'^\| level1/019_ReLU \| H100 80GB HBM3 \| search \| 0\.500x \| 75% \| 150% \| - \| eager runs faster than the fp32 roofline allows'
lacks "a problem faster than eager is not listed below it" lv2.md '^\| level2/001_Conv_ReLU \| H100'
# the same ReLU memory-bound (4.5e9 bytes over 3000 GB/s: a 1.5 ms floor, its flops 1e9):
# eager past that floor is a stream beating the measured copy, not TF32
cp lv.db lvm.db
sqlite3 lvm.db "UPDATE problems SET flops = 1e9, min_bytes = 4.5e9 WHERE id = 'level1/019_ReLU'"
expect_exit 0 "results page with a memory-bound ReLU" python3 "$KF_ROOT/scripts/results_md.py" lvm.db \
	--version 9.9.0 -o lvm.md
contains "a memory-bound problem whose eager passes the copy's floor says so" lvm.md \
	'^\| level1/019_ReLU \| H100 80GB HBM3 \| search \| 0\.500x \| 75% \| 150% \| - \| memory-bound: eager streams past the measured copy.s bandwidth \(150% of its floor\), the kernel reaches 75% \|$'
# Where each model's time goes (level 3): the CUPTI profile of its best kernel. MLP's 1 ms
# kernel: 4 launches, 0.8 ms inside them (20% between), gemm 0.6 of it (two nodes), relu 0.15,
# add 0.05.
cp lv.db lvprof.db
sqlite3 lvprof.db "INSERT INTO profiles(eval_id, kernel_hash, problem_id, gpu_name, limiter, launches,
  kernel_ms, cost_ms, tool, created_at) SELECT id, kernel_hash, problem_id, gpu_name, 'latency', 4, 0.8,
  5, 'cupti-range-profiler', created_at FROM evals WHERE problem_id = 'level3/001_MLP' AND status = 'correct';
  INSERT INTO profile_kernels(eval_id, idx, name, duration_ms, limiter)
  SELECT p.eval_id, k.i, k.n, k.d, 'latency' FROM profiles p, (SELECT 0 i, 'g0_gemm' n, 0.4 d UNION ALL
  SELECT 1, 'g1_relu', 0.15 UNION ALL SELECT 2, 'g2_gemm', 0.2 UNION ALL SELECT 3, 'g3_add', 0.05) k"
expect_exit 0 "results page with a level-3 profile" python3 "$KF_ROOT/scripts/results_md.py" lvprof.db \
	--version 9.9.0 -o lvprof.md
sed -n '/^## Level 3$/,/^## Search throughput$/p' lvprof.md >lvprof3.md
contains "a model's time split: launches, inside kernels, between them, shares by operation" lvprof3.md \
	'^\| level3/001_MLP \| H100 80GB HBM3 \| search \| 3\.000x \| 1\.000 \| 4 \| 0\.800 \| 20% \| gemm 75%, relu 19%, add 6% \| latency \|$'
contains "  and a line over the level's models" lvprof3.md \
	'^1 of 3 models profiled; launches per forward: median 4, most 4 \(level3/001_MLP\)\.$'
lacks "no time split without a profile" lv.md '^### Where the time goes'
sed -n '/^## Level 2$/,/^## Level 3$/p' lvprof.md >lvprof2.md
lacks "  nor for level 2" lvprof2.md '^### Where the time goes'
# A problem below eager on both the search's and a verification's timing is one row: the
# verified kernel's (its verification timed it 0.8x the search's time: 0.625x eager).
cp lv.db lvv.db
sqlite3 lvv.db "INSERT INTO evals(id, kernel_hash, problem_id, gpu_name, protocol, protocol_params, status,
  time_mean_ms, env, created_at)
  SELECT 'v-' || id, kernel_hash, problem_id, gpu_name, 'verify-v4', protocol_params, 'correct',
  time_mean_ms * 0.8, env, created_at FROM evals WHERE problem_id = 'level1/019_ReLU' AND status = 'correct'
  ORDER BY time_mean_ms LIMIT 1;
  INSERT INTO verifications(id, eval_id, kernel_hash, problem_id, gpu_name, protocol, verdict, review_flags,
  sanitizer, env, kforge_version, created_at)
  SELECT 'vv', id, kernel_hash, problem_id, gpu_name, 'verify-v4', 'verified', '[]', '{}', '{}', 'x',
  '2030-01-01T00:00:00Z' FROM evals WHERE id LIKE 'v-%'"
expect_exit 0 "results page with a verified kernel below eager" python3 "$KF_ROOT/scripts/results_md.py" lvv.db \
	--version 9.9.0 -o lvv.md
contains "the verified kernel's row" lvv.md '^\| level1/019_ReLU \| H100 80GB HBM3 \| verified \| 0\.625x \|'
lacks "no search row beside it" lvv.md '^\| level1/019_ReLU \| H100 80GB HBM3 \| search \| 0\.500x \|'
# The release's goals (--goals): per level, the target, the measured figure, met or not.
cat >goals.json <<'EOF'
{"levels": {"2": {"eager_geomean": 1.0, "fast_1": 0.5, "compile_geomean": 1.2, "evals_per_min": 60, "gpu_busy": 0.8},
            "3": {"eager_geomean": 1.2, "correct": 1.0, "gpu_busy": 0.8}}}
EOF
expect_exit 0 "results page with goals" python3 "$KF_ROOT/scripts/results_md.py" lv.db --version 9.9.0 \
	--goals goals.json -o lvg.md
sed -n '/^## Goals$/,/^## Level 1$/p' lvg.md >goals.md
contains "a level-2 geomean goal met" goals.md '^\| level 2 \| geomean speedup against PyTorch eager \| 1x \| 1\.118 \(2 problems\) \| yes \|$'
contains "a level-2 fast_1 goal not met, with the figure" goals.md '^\| level 2 \| fast_1 against eager .* \| 50% \| 33% \(1 of 3\) \| \*\*no\*\* \|$'
contains "torch.compile" goals.md '^\| level 2 \| geomean speedup against torch\.compile \| 1\.2x \| 1\.250 \(1 problem\) \| yes \|$'
contains "the sessions' rate, met at the bound" goals.md '^\| level 2 \| evaluations per GPU-minute .* \| 60 \| 60\.0 \| yes \|$'
contains "level 3's busy fraction not met" goals.md '^\| level 3 \| GPU busy fraction .* \| 80% \| 25\.0% \| \*\*no\*\* \|$'
contains "level 3's correct problems not met" goals.md '^\| level 3 \| problems with a correct kernel .* \| 100% \| 67% \(2 of 3\) \| \*\*no\*\* \|$'
lacks "no goals section without --goals" lv.md '^## Goals$'
# a store whose searches ran without a GPU (compile only) measures no time goal:
# level 2's 60 evaluations in 60 s are compiles, not evaluations per GPU-minute
cp lv.db lvco.db
sqlite3 lvco.db "DELETE FROM eval_trials; DELETE FROM verifications; DELETE FROM gpus;
  UPDATE candidates SET status = 'not_run'; DELETE FROM evals;
  UPDATE runs SET gpu_name = ''; UPDATE search_sessions SET gpu_name = NULL"
expect_exit 0 "results page with goals of a compile-only store" python3 "$KF_ROOT/scripts/results_md.py" \
	lvco.db --version 9.9.0 --goals goals.json -o lvco.md
contains "  the rate goal is not measured" lvco.md \
	'^\| level 2 \| evaluations per GPU-minute .* \| 60 \| not measured \| not measured \|$'
contains "  nor the busy fraction" lvco.md '^\| level 3 \| GPU busy fraction .* \| 80% \| not measured \| not measured \|$'
contains "  and the page says why" lvco.md \
	'^- \*\*level 2, evaluations per GPU-minute .*: the store.s searches of level 2 ran without a GPU \(compile only\)$'
contains "  its candidates: correct not checked, not 0" lvco.md '^- candidates: [0-9]+, compiled: [0-9]+, correct: not checked$'
lacks "  (never 0 correct)" lvco.md '(correct: 0$|\(0 correct\))'
contains "  its categories the same" lvco.md '^\| [a-z]+ \| none \(compile only\) \| [0-9]+ \| [0-9]+ \| - \| - \| - \| - \(0\) \|$'
echo '{"levels": {"2": {"correct": 1.0}, "4": {"correct": 1.0}}}' >goals4.json
expect_exit 0 "results page with goals of a level not in the store" python3 "$KF_ROOT/scripts/results_md.py" \
	lv.db --version 9.9.0 --goals goals4.json -o lv4.md
contains "  one line says it is not here" lv4.md '^Level 4: not in this store; its goals are measured on its own page\.$'
lacks "  and it has no rows" lv4.md '^\| level 4 \|'
# what stands in the way of each goal not met, from the same store
contains "fast_1 not met: the problem below eager, why, and how many more it needs" goals.md \
	'^- \*\*level 2, fast_1 against eager .*: 1 of 2 problems at or below eager: 1 with a gap to the floor \(002 0\.500x\); 1 more past eager would meet it \(the nearest: 002 0\.500x\)$'
contains "correct not met: the problem with no correct kernel" goals.md \
	'^- \*\*level 3, problems with a correct kernel .*: 1 with no correct kernel .* \(003\)$'
contains "busy not met: the kernels' time, no phases recorded" goals.md \
	'^- \*\*level 3, GPU busy fraction .*: of 120 s of search wall time, the kernels ran 30 s; the store.s evaluations record no phase times$'
lacks "a goal met has no obstacle" goals.md '^- \*\*level 2, geomean speedup against PyTorch eager'
cp lv.db lvp.db
sqlite3 lvp.db "UPDATE evals SET env = json_set(COALESCE(env, '{}'), '\$.phases_ms',
  json('{\"refs\": 10000, \"checks\": 5000, \"timing\": 20000}'), '\$.refs_run', 3) WHERE problem_id LIKE 'level3/%'"
expect_exit 0 "results page with goals and the evaluations' phase times" python3 "$KF_ROOT/scripts/results_md.py" \
	lvp.db --version 9.9.0 --goals goals.json -o lvp.md
contains "  busy not met: where the search's time went" lvp.md \
	'^- \*\*level 3, GPU busy fraction .*: of 120 s of search wall time, the worker.s 4 evaluations took 140 s: reference runs 40 s \(12 runs, in 4 evaluations; 3 of the runs in a problem.s later evaluations: .*\), checks 20 s, timed trials 80 s; the candidates. checked and timed launches themselves ran 30 s'
echo '{"levels": {"2": {"speed": 2}}}' >badgoals.json
expect_exit 1 "an unknown goal is refused" python3 "$KF_ROOT/scripts/results_md.py" lv.db --version 9.9.0 \
	--goals badgoals.json -o bad.md
contains "  naming the kinds it knows" "$T_TMP/err" "want one of eager_geomean"
expect_exit 0 "the v0.2.0 goals (docs/results/goals-v0.2.0.json) load" python3 "$KF_ROOT/scripts/results_md.py" \
	lv.db --version 0.2.0 --goals "$KF_ROOT/docs/results/goals-v0.2.0.json" -o g020.md
check "  a goal row per level and kind (3 x 6)" test "$(sed -n '/^## Goals$/,/^## Level 1$/p' g020.md | grep -c '^| level [123] | ')" -eq 18
contains "level 1 keeps its own section" lv.md '^\| NVIDIA H100 80GB HBM3 \| search \| eager \| 100% \| 50% \| 50% \| 0% \| 1\.000 \| 2 \|$'
# Search throughput per level from the store's search sessions (schema v6; levelstore.py):
# level 2: 60 evaluations in 60 s, trials of 48 s; level 3: 30 in 120 s, 30 s; level 1's
# trials lie outside every session; a compile-only level-1 session: 10 in 30 s.
sed -n '/^## Search throughput$/,/^## /p' lv.md >lvtp.md
contains "throughput names its source: the sessions" lvtp.md '^- source: the store.s 3 search session\(s\) \(`search_sessions`'
contains "level 2: 60.0 evaluations per GPU-minute, 80.0% busy" lvtp.md \
	'^\| level 2 \| NVIDIA H100 80GB HBM3 \| 1 \| 60 s \| 60 \| \*\*60\.0\*\* \| 10 \| 48\.0 s \| \*\*80\.0%\*\* \|$'
contains "level 3: 15.0 per GPU-minute, 25.0% busy" lvtp.md \
	'^\| level 3 \| NVIDIA H100 80GB HBM3 \| 1 \| 120 s \| 30 \| \*\*15\.0\*\* \| 8 \| 30\.0 s \| \*\*25\.0%\*\* \|$'
contains "all levels: 30.0 per GPU-minute, 43.3% busy (level 1's trials left out)" lvtp.md \
	'^\| all levels \| NVIDIA H100 80GB HBM3 \| 2 \| 180 s \| 90 \| \*\*30\.0\*\* \| 18 \| 78\.0 s \| \*\*43\.3%\*\* \|$'
contains "a compile-only session: per minute, no busy figure" lvtp.md \
	'^\| level 1 \| none \(compile only\) \| 1 \| 30 s \| 10 \| \*\*20\.0\*\* \| - \| - \| - \|$'
# A store without sessions (before v6): --search-seconds, and the page says so.
cp lv.db lvold.db
sqlite3 lvold.db "DROP TABLE search_sessions"
expect_exit 0 "results page of a store without sessions, --search-seconds 600" python3 \
	"$KF_ROOT/scripts/results_md.py" lvold.db --version 9.9.0 --search-seconds 600 -o lvold.md
contains "it names --search-seconds as the source" lvold.md '^- source: `--search-seconds 600` \(the store records no search sessions'
contains "and its figures: 11 evaluations in 10 minutes" lvold.md '^- search wall time on the GPU: 600 s; \*\*1\.1 candidates per GPU-minute'
lacks "no session table there" lvold.md '^\| all levels \|'
expect_exit 0 "results page of a store without sessions or --search-seconds" python3 \
	"$KF_ROOT/scripts/results_md.py" lvold.db --version 9.9.0 -o lvold2.md
contains "says there are no figures" lvold2.md '^- no search sessions in the store \(schema before v6\) and no `--search-seconds`'
# The site of that store: a fast_p table per GPU and level, level 2's without its
# degenerate problem (fast_0 2/3, geomean 1.118 as above), none over all levels.
expect_exit 0 "site of a level 1-3 store" "$KFORGE" --db lv.db site -o lvsite --no-kernel-pages
contains "a fast_p table per level" lvsite/index.html \
	'<caption>NVIDIA H100 80GB HBM3, level 2 \(without 1 degenerate problem\)</caption>'
contains "level 3's too" lvsite/index.html '<caption>NVIDIA H100 80GB HBM3, level 3</caption>'
sed -n '/data-gpu="NVIDIA H100 80GB HBM3" data-level="2"/,/<\/table>/p' lvsite/index.html >lv2.html
contains "level 2's fast_0 leaves the degenerate problem out" lv2.html \
	'data-p="0"><th scope="row">fast_0</th><td class="num" data-v="0\.666666'
contains "level 2's geomean" lv2.html 'class="num geo-eager" data-v="1\.118'
lacks "no table over every level" lvsite/index.html 'data-gpu="NVIDIA H100 80GB HBM3">'
contains "the chart names the level" lvsite/index.html 'NVIDIA H100 80GB HBM3, level 2'
# The same page from the packed dataset (its kforge.db).
expect_exit 0 "pack the level 1-3 store" "$KFORGE" --db lv.db pack --version 9.9.0 -o lvdist
expect_exit 0 "results page from the tarball" python3 "$KF_ROOT/scripts/results_md.py" \
	lvdist/kforge-kernelbench-9.9.0.tar.zst --version 9.9.0 --kernelbench kb -o lvt.md
check "it gives the same page" cmp lv.md lvt.md
# A pack of some problems holds the sessions that worked on them, no other.
expect_exit 0 "pack two level-2 problems" "$KFORGE" --db lv.db pack --version 9.9.0 \
	--problems level2/001_Conv_ReLU,level2/002_Gemm_Softmax -o lv2dist
"$KFORGE" dataset cat lv2dist/kforge-kernelbench-9.9.0.tar.zst kforge.db >lv2pack.db
check "its store holds level 2's session only" test "$(sqlite3 lv2pack.db "select group_concat(id) from search_sessions")" = session_level2


# Replacing: a kforge site is replaced whole; anything else is refused.
echo stale >public/stale.html
expect_exit 0 "re-render over the previous site (trailing slash)" "$KFORGE" site --db fx.db -o public/ --no-kernel-pages
check "previous site replaced as a whole" test ! -e public/stale.html
check "no staging directory left" sh -c '! ls -d public.tmp-* public.old-* 2>/dev/null'
mkdir mine && echo precious >mine/file
expect_exit 1 "refuses a directory that is not a kforge site" "$KFORGE" site --db fx.db -o mine
contains "error says why" "$T_TMP/err" "not a kforge site"
check "the directory is untouched" grep -qx precious mine/file
expect_exit 1 "missing store fails" "$KFORGE" site --db nope.db -o out2
contains "error names the store" "$T_TMP/err" "nope.db"
check "no output left behind" test ! -e out2
mkdir tpl && cp "$KF_ROOT"/templates/site/* tpl/ && printf '{{#broken}}\n' >tpl/kernel.mustache
expect_exit 1 "broken template fails" "$KFORGE" site --db fx.db -o out3 --templates tpl
contains "error names the template" "$T_TMP/err" "kernel.mustache:1"
check "failed build leaves nothing" sh -c '! ls -d out3 out3.tmp-* 2>/dev/null'
mkdir ds && cp fx.db ds/kforge.db
printf -- '---\nlicense: cc-by-4.0\n---\n# The card\n\nRows: **42** <script>alert(1)</script>\n\n| file | rows |\n|---|---:|\n| `sft.jsonl` | 81 |\n' >ds/README.md
expect_exit 0 "--from-dataset finds the store" "$KFORGE" site --from-dataset ds -o out4 --no-kernel-pages
check "dataset site has an index" test -s out4/index.html
contains "the dataset card is on the downloads page" out4/downloads.html '<strong>42</strong>'
contains "the card's table is a table" out4/downloads.html '<td><code>sft.jsonl</code></td><td class="num">81</td>'
lacks "card front matter left out" out4/downloads.html 'license: cc-by'
lacks "card raw HTML dropped" out4/downloads.html '<script'
rm ds/kforge.db && touch ds/a.db ds/b.db
expect_exit 1 "--from-dataset with two stores is refused" "$KFORGE" site --from-dataset ds -o out5
contains "error says so" "$T_TMP/err" "several stores"
expect_exit 2 "unknown option exits 2" "$KFORGE" site --bogus
expect_exit 0 "--help" "$KFORGE" site --help
contains "help names --dist" "$T_TMP/out" "--dist DIR"
"$KFORGE" --db empty.db store init >/dev/null
expect_exit 0 "an empty store renders" "$KFORGE" site --db empty.db -o out6
contains "empty index says there is nothing" out6/index.html 'data-k="kernels" data-v="0"'
