#!/bin/sh
# A kernel whose verification passed with a review flag is no verified
# result (issue 37): the site leaves it out of the best kernels, fast_p and
# the geomeans, and lists it apart with the flag as the reason; the results
# page (scripts/results_md.py) does the same.
. "$(dirname "$0")/lib.sh" 2>/dev/null || . "$KF_ROOT/tests/lib.sh"

T="$KF_ROOT/tests/tools"
python3 "$T/synthstore.py" --kernels 40 --problems 3 --seed 5 --out fx.db 2>/dev/null
check "fixture store generated" test -s fx.db
G="NVIDIA H100 80GB HBM3"
expect_exit 0 "site renders" "$KFORGE" site --db fx.db -o pub1
# The best kernel of the first leaderboard problem on the H100, verified.
P=$(grep -o 'data-problem="[^"]*"' pub1/index.html | head -n 1 | sed 's/data-problem="//; s/"$//')
K=$(python3 - "$P" "$G" <<'PY'
import re, sys
h = open("pub1/index.html").read()
row = h[h.index('data-problem="%s"' % sys.argv[1]):]
row = row[:row.index("</tr>")]
m = re.search(r'data-gpu="%s"[^>]*>(?:<span class="pair">)?<a href="kernels/../([0-9a-f]{64})\.html"' % re.escape(sys.argv[2]), row)
print(m.group(1) if m else "")
PY
)
check "the leaderboard links $P's best kernel on the H100 (${K%????????????????????????????????????????????????????})" test -n "$K"
contains "it shows as verified" pub1/index.html "kernels/../$K.html\">[0-9.]*×</a> · [0-9.]*×(</span>)? <span class=\"badge good\">verified"
geo() { python3 -c '
import re, sys
h = open(sys.argv[1]).read()
t = h[h.index("<table class=\"fastp\" data-gpu=\"%s\"" % sys.argv[2]):]
print(re.search(r"geo-eager\" data-v=\"([^\"]*)\"", t).group(1))' "$1" "$G"; }
fp1=$(geo pub1/index.html)
# Its latest verification raises a flag.
sqlite3 fx.db "UPDATE verifications SET review_flags = '[\"faster_than_roofline_floor\"]'
  WHERE id = (SELECT id FROM verifications WHERE kernel_hash = '$K' AND problem_id = '$P'
  AND gpu_name = '$G' ORDER BY created_at DESC, id LIMIT 1)"
expect_exit 0 "site renders with the flag" "$KFORGE" site --db fx.db -o pub2
check "the flagged kernel is no longer $P's best on the H100" python3 - "$P" "$G" "$K" <<'PY'
import re, sys
h = open("pub2/index.html").read()
row = h[h.index('data-problem="%s"' % sys.argv[1]):]
row = row[:row.index("</tr>")]
m = re.search(r'data-gpu="%s"[^>]*>(.*?)</td>' % re.escape(sys.argv[2]), row)
print("# cell:", m.group(1)[:200] if m else None)
sys.exit(0 if m and sys.argv[3] not in m.group(1) else 1)
PY
contains "it is listed apart, with its flag as the reason" pub2/index.html \
	"data-kernel=\"$K\">.*<td class=\"flag-reason\">faster_than_roofline_floor</td>"
contains "under a heading that says it is not counted" pub2/index.html 'Flagged kernels \(not counted\)'
check "no flagged section without flags" sh -c '! grep -q "id=\"flagged\"" pub1/index.html'
fp2=$(geo pub2/index.html)
check "the H100's geomean changed without it ($fp1 -> $fp2)" test -n "$fp1" -a "$fp1" != "$fp2"
check "the overview counts it as not verified" python3 - <<'PY'
import re
a = re.search(r'data-k="verified" data-v="(\d+)"', open("pub1/index.html").read()).group(1)
b = re.search(r'data-k="verified" data-v="(\d+)"', open("pub2/index.html").read()).group(1)
print("# verified", a, "->", b)
raise SystemExit(0 if int(b) == int(a) - 1 else 1)
PY
# The results page: not in the verified views, listed apart.
python3 "$KF_ROOT/scripts/results_md.py" fx.db --version t >results.md 2>results.err
check "results_md.py ran" test -s results.md
contains "results page lists the flagged kernel apart" results.md "$(echo "$K" | cut -c1-12).*faster_than_roofline_floor"
