#!/bin/sh
# Problem identity is never logic (issue 40, item 2): the engine, the
# oracle, the templates and the search decide on what the spec names
# ("family", "attrs"), never on its KernelBench number. problem/ owns the
# number (ids, names, the index); elsewhere it may only be printed. Lists
# each offence as file:line: a bt_number call, a "number" JSON read, or
# ->number/.number compared, switched on, or copied into a variable.
. "$KF_ROOT/tests/lib.sh"

DIRS="kernels collector oracle engine"

# offences ROOT: "file:line: text" for each line that decides on a number
offences() {
	(cd "$1" && for d in $DIRS; do
		[ -d "$d" ] && find "$d" \( -name '*.c' -o -name '*.h' -o -name '*.inc' -o -name '*.cuh' \) -print
	done | sort | while read -r f; do
		grep -nE 'bt_number|"number"|(->|\.)number[[:space:]]*(==|!=|<|>)|(==|!=|<|>)[[:space:]]*[[:alnum:]_]*(->|\.)number\b|switch[[:space:]]*\([^)]*number|[^=!<>]=[[:space:]]*[[:alnum:]_]*(->|\.)number\b' "$f" |
			grep -vE '^[0-9]+:[[:space:]]*(/\*|\*|//)' | sed "s|^|$f:|"
	done)
}

# the check finds what it must: each kind of planted line, and no message
mkdir -p fake/kernels fake/collector fake/oracle fake/engine fake/problem
cat >fake/kernels/a.c <<'EOF'
	if (bt_number(spec) == 4)
	switch (p->number) {
	json_int_t num = json_integer_value(json_object_get(spec, "number"));
	return k && k->number != 4;
	if (19 == p->number)
	int n = p->number;
	return kf_err(err, "problem %d is not supported", p->number);
	/* level 1's number 4 is matrix-vector: k->number == 4 */
EOF
printf '\tif (c.number < 10)\n' >fake/oracle/b.c
printf '\tif (p->number == 4)\n' >fake/problem/c.c
offences fake >fake.out
contains "a bt_number call is found" fake.out '^kernels/a\.c:1:'
contains "a switch on ->number is found" fake.out '^kernels/a\.c:2:'
contains "a \"number\" JSON read is found" fake.out '^kernels/a\.c:3:'
contains "->number != is found" fake.out '^kernels/a\.c:4:'
contains "a reversed comparison is found" fake.out '^kernels/a\.c:5:'
contains "a copy into a variable is found" fake.out '^kernels/a\.c:6:'
lacks "a message that prints the number is not" fake.out '^kernels/a\.c:7:'
lacks "a comment is not" fake.out '^kernels/a\.c:8:'
contains ".number < in oracle/ is found" fake.out '^oracle/b\.c:1:'
lacks "problem/ may use the number" fake.out '^problem/'

offences "$KF_ROOT" >offences.txt
check "the scanned folders exist" sh -c 'for d in $0; do test -d "$1/$d" || exit 1; done' "$DIRS" "$KF_ROOT"
if [ -s offences.txt ]; then
	nok "no decision on a problem's number in $DIRS ($(wc -l <offences.txt) found)"
	sed 's/^/#   /' offences.txt | head -n 40
else
	ok "no decision on a problem's number in $DIRS"
fi
