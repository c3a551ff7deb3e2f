#!/bin/sh
# Allocation and error discipline (issue 40, item 4):
# - one allocation-failure policy: core/xalloc.c holds the only abort() for
#   it; elsewhere abort() stays only as a listed invariant whose line says
#   "/* invariant: why */";
# - error classes are codes (KF_ENOGPU, ...): no branching on the text of
#   an error buffer (strstr(err.s, "no GPU")).
# Lists each offence as file:line.
. "$KF_ROOT/tests/lib.sh"

DIRS="core problem oracle store engine kernels collector verifier dataset site cli"
# The invariants (file and count); each such line carries its comment.
INVARIANTS="core/sha256.c:1 oracle/oracle_graph.c:1 oracle/oracle_graph_l3.c:1
oracle/oracle_graph_conv.c:1 store/store.c:1 cli/opt.c:1 kernels/builtin_util.c:1"

# c_files ROOT: the product's C files under ROOT, relative
c_files() {
	(cd "$1" && for d in $DIRS; do [ -d "$d" ] && find "$d" \( -name '*.c' -o -name '*.h' \) -print; done) |
		sort
}
# aborts ROOT: "file:line: why" for each abort() call that breaks the policy
aborts() {
	c_files "$1" | while read -r f; do
		[ "$f" = core/xalloc.c ] && continue
		grep -nE '(^|[^_[:alnum:]])abort[[:space:]]*\([[:space:]]*\)' "$1/$f" |
			grep -vE '^[0-9]+:[[:space:]]*(/\*|\*|//)' | sed "s|^|$f:|"
	done | awk -v inv="$INVARIANTS" '
		BEGIN { n = split(inv, l, "[ \n]+"); for (i = 1; i <= n; i++) { split(l[i], p, ":"); allow[p[1]] = p[2] } }
		{
			split($0, p, ":"); f = p[1]
			if (!(f in allow)) { print p[1] ":" p[2] ": abort() outside core/xalloc.c (use xmalloc & co., or list an invariant)"; next }
			if ($0 !~ /\/\* invariant: /) { print p[1] ":" p[2] ": an invariant abort() without its /* invariant: */ comment"; next }
			if (++seen[f] > allow[f]) print p[1] ":" p[2] ": more abort() invariants than the " allow[f] " listed"
		}'
}
# strstr_err ROOT: "file:line" for each string test on an error buffer's text
strstr_err() {
	c_files "$1" | while read -r f; do
		grep -nE '\b(strstr|strcasestr|strcmp|strncmp|memcmp)[[:space:]]*\([[:space:]]*[[:alnum:]_]*(err|\be)[[:alnum:]_]*[[:space:]]*(\.|->)[[:space:]]*s\b' "$1/$f" |
			sed "s|^\([0-9]*\):.*|$f:\1|"
	done
}

# unchecked ROOT: "file:line" for each malloc/calloc/realloc/strdup/strndup
# whose result is not tested for NULL within the next lines (xmalloc & co.
# never return NULL; a tested one fails with an error of its own). The
# files in UNCHECKED_LEFT are left to their owners: kernels/ (in another
# change) and the compile code whose sources key the kept NVRTC results.
UNCHECKED_LEFT="engine/compile.c engine/candidate.c engine/compile_child.c
kernels/graph/builtin_graph_csum.c kernels/graph/builtin_graph_dedup.c"
unchecked() {
	c_files "$1" | grep '\.c$' | (cd "$1" && python3 -c '
import re, sys
call = r"(?<![\w])(malloc|calloc|realloc|strdup|strndup)\("
for f in sys.stdin.read().split():
    if f == "core/xalloc.c":
        continue
    L = open(f, errors="replace").read().split("\n")
    for i, t in enumerate(L):
        if not re.search(call, t) or re.match(r"\s*(/\*|\*|//)", t):
            continue
        if re.search(r"!\s*\(\s*[\w\->.\[\]]+\s*=\s*(malloc|calloc|realloc|strdup|strndup)\(", t):
            continue
        m = re.search(r"([\w\->.\[\]*]+)\s*=\s*(?:\([^()]*\)\s*)?(malloc|calloc|realloc|strdup|strndup)\(", t)
        v = m.group(1).lstrip("*") if m else None
        ctx = "\n".join(L[i:i + 5])
        if v and re.search(r"!\s*" + re.escape(v) + r"\b|" + re.escape(v) + r"\s*==\s*NULL", ctx):
            continue
        print("%s:%d" % (f, i + 1))
')
}

# The checks find what they must: planted bad shapes, and pass the good ones.
mkdir -p fake/engine fake/oracle fake/cli fake/kernels/graph fake/core
cat >fake/engine/bad.c <<'E'
	char *p = malloc(n);
	if (!p)
		abort();
	default: abort();
	/* a comment about abort() is not a call */
E
cat >fake/oracle/oracle_graph.c <<'E'
	abort(); /* invariant: the parser makes only the ops above */
	abort(); /* invariant: a second one, not listed */
E
cat >fake/cli/opt.c <<'E'
	abort();
E
cat >fake/core/xalloc.c <<'E'
	abort();
E
cat >fake/cli/cmd.c <<'E'
			ret = strstr(err.s, "no CUDA driver") || strstr(err.s, "no GPU") ? -3 : -1;
		rc = cli_fail(strstr(err.s, "GPU") || strstr(err.s, "driver") ? EXIT_NOGPU :
	if (strstr(ferr->s, "timed out"))
	if (!strcmp(e.s, "x"))
	has_markers = strstr(l.s, "/*@launch") != NULL;
	if (strstr(report, pat[i]))
E
cat >fake/kernels/graph/g.c <<'E'
		if (!rc || !strstr(err->s ? err->s : "", "bytes of source"))
E
aborts fake >fake-aborts.txt
contains "a bare allocation check's abort() is found" fake-aborts.txt '^engine/bad\.c:3: abort\(\) outside'
contains "an unlisted switch default abort() is found" fake-aborts.txt '^engine/bad\.c:4: abort\(\) outside'
lacks "a comment that names abort() is not a call" fake-aborts.txt '^engine/bad\.c:5:'
lacks "a listed invariant with its comment passes" fake-aborts.txt '^oracle/oracle_graph\.c:1:'
contains "an invariant past the listed count is found" fake-aborts.txt '^oracle/oracle_graph\.c:2: more abort'
contains "a listed file's abort() without the comment is found" fake-aborts.txt '^cli/opt\.c:1: an invariant abort\(\) without'
lacks "core/xalloc.c is the policy's own" fake-aborts.txt '^core/xalloc\.c'
strstr_err fake >fake-strstr.txt
contains "strstr on err.s is found" fake-strstr.txt '^cli/cmd\.c:1$'
contains "the verify shape is found" fake-strstr.txt '^cli/cmd\.c:2$'
contains "strstr on ferr->s is found" fake-strstr.txt '^cli/cmd\.c:3$'
contains "strcmp on e.s is found" fake-strstr.txt '^cli/cmd\.c:4$'
contains "the graph emitter's shape is found" fake-strstr.txt '^kernels/graph/g\.c:1$'
lacks "strstr on a source or a report is not" fake-strstr.txt '^cli/cmd\.c:[56]$'

mkdir -p fake/site
cat >fake/site/alloc.c <<'E'
	xs = calloc(n + 1, sizeof(double));
	t = xcalloc(n, sizeof(*t));
	p->dir = strdup(dir);
	if (!p->dir)
		return kf_err(err, "out of memory");
	if (!(order = malloc(n)))
		return -1;
	/* strdup(s) in a comment */
E
unchecked fake >fake-unchecked.txt
contains "an unchecked calloc is found" fake-unchecked.txt '^site/alloc\.c:1$'
lacks "xcalloc and checked allocations are not" fake-unchecked.txt '^site/alloc\.c:[2-8]$'

# The tree itself.
aborts "$KF_ROOT" >aborts.txt
if [ -s aborts.txt ]; then
	nok "abort() only in core/xalloc.c and the listed invariants ($(wc -l <aborts.txt) found)"
	sed 's/^/#   /' aborts.txt | head -n 40
else
	ok "abort() only in core/xalloc.c and the listed invariants"
fi
check "core/xalloc.c aborts in one place" test "$(grep -c 'abort()' "$KF_ROOT/core/xalloc.c")" -eq 1
for e in $INVARIANTS; do
	f=${e%:*}
	check "the listed invariant file $f has its invariant" grep -q 'abort(); /\* invariant: ' "$KF_ROOT/$f"
done
unchecked "$KF_ROOT" >unchecked-all.txt
contains "the allocation scan ran over the tree (it sees the files left)" unchecked-all.txt '^engine/compile_child\.c:'
grep -vE "^($(echo $UNCHECKED_LEFT | sed 's/ /|/g')):" unchecked-all.txt >unchecked.txt
if [ -s unchecked.txt ]; then
	nok "every raw allocation is checked, else xmalloc & co. ($(wc -l <unchecked.txt) found)"
	sed 's/^/#   /' unchecked.txt | head -n 40
else
	ok "every raw allocation is checked, else xmalloc & co."
fi
strstr_err "$KF_ROOT" >strstr.txt
if [ -s strstr.txt ]; then
	nok "no branching on an error buffer's text ($(wc -l <strstr.txt) found)"
	sed 's/^/#   /' strstr.txt | head -n 40
else
	ok "no branching on an error buffer's text"
fi
