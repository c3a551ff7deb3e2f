#!/bin/sh
# kforge template render: partials, parents, escaping, errors and exit codes.
. "$(dirname "$0")/lib.sh" 2>/dev/null || . "$KF_ROOT/tests/lib.sh"

mkdir -p parts/sub
printf '<h1>{{title}}</h1>\n<ul>\n{{#items}}\n  {{>sub/item}}\n{{/items}}\n</ul>\n{{^items}}none{{/items}}\n' >page.mustache
printf '<li>{{name}}: {{{raw}}} {{n}}</li>\n' >parts/sub/item.mustache
printf '{{<layout}}{{$body}}body of {{title}}{{/body}}{{/layout}}\n' >child.mustache
printf '<main>{{$body}}default{{/body}}</main>\n' >parts/layout.mustache
cat >data.json <<'JSON'
{"title": "A & B", "items": [{"name": "<x>", "raw": "<b>", "n": 1.5}, {"name": "y", "raw": "", "n": 7}]}
JSON

expect_exit 0 "render with partials from --partials" "$KFORGE" template render page.mustache data.json --partials parts
{ sleep 0.5; "$KFORGE" template render page.mustache data.json --partials parts 2>pipe.err; echo $? >pipe.rc; } | true
check "into a pipe its reader closed: exit 0, quietly (issue 36)" sh -c 'grep -qx 0 pipe.rc && test ! -s pipe.err'
cat >want <<'EOF2'
<h1>A &amp; B</h1>
<ul>
  <li>&lt;x&gt;: <b> 1.5</li>
  <li>y:  7</li>
</ul>

EOF2
check "output is exact" cmp -s "$T_TMP/out" want
expect_exit 0 "parent template with a block" "$KFORGE" template render child.mustache data.json --partials parts
check "block overrides the parent's default" grep -qx '<main>body of A &amp; B</main>' "$T_TMP/out"
echo '{"items": []}' | "$KFORGE" template render page.mustache - --partials parts >stdin.out 2>&1
contains "data from stdin; inverted section" stdin.out '^none$'

# The root context may be any JSON value (the Mustache spec's implicit iterator).
printf '{{.}}|{{#.}}<{{.}}>{{/.}}|{{^.}}none{{/.}}\n' >it.mustache
for pair in '"w<x>":w&lt;x&gt;|<w&lt;x&gt;>|' '42:42|<42>|' '1.5:1.5|<1.5>|' 'true:true|<true>|' \
	'null:||none' '[1,2]:|<1><2>|' '[]:||none'; do
	printf '%s\n' "${pair%%:*}" >root.json
	expect_exit 0 "data that is ${pair%%:*} renders" "$KFORGE" template render it.mustache root.json
	check "... as the root context" test "$(cat "$T_TMP/out")" = "${pair#*:}"
done
printf '"from stdin"' | "$KFORGE" template render it.mustache - >stdin2.out 2>&1
contains "a string from stdin is the root context" stdin2.out '^from stdin\|<from stdin>\|$'
printf '{"a": 1, "a": 2}' >dup.json
expect_exit 1 "data with a duplicate key is refused" "$KFORGE" template render it.mustache dup.json
contains "... naming the data file" "$T_TMP/err" "dup.json: invalid JSON.*duplicate"

printf '{{>../secret}}\n' >escape.mustache
expect_exit 1 "partial name with .. is refused" "$KFORGE" template render escape.mustache data.json --partials parts
contains "error says refused" "$T_TMP/err" "refused"

printf 'ok\n  {{#open}}\n' >broken.mustache
expect_exit 1 "unclosed section exits 1" "$KFORGE" template render broken.mustache data.json
contains "error names file, line and column" "$T_TMP/err" "broken.mustache:2:3: unclosed section 'open'"

printf '{"title": ' >bad.json
expect_exit 1 "bad JSON exits 1" "$KFORGE" template render page.mustache bad.json --partials parts
contains "error names the data file" "$T_TMP/err" "bad.json"
expect_exit 1 "missing template exits 1" "$KFORGE" template render nope.mustache data.json
contains "error names the template" "$T_TMP/err" "nope.mustache"
expect_exit 1 "--partials must be a directory" "$KFORGE" template render page.mustache data.json --partials nodir

expect_exit 2 "unknown option exits 2" "$KFORGE" template render page.mustache data.json --bogus
contains "unknown option named" "$T_TMP/err" "unknown option '--bogus'"
expect_exit 2 "missing arguments exit 2" "$KFORGE" template render page.mustache
expect_exit 2 "unknown subcommand exits 2" "$KFORGE" template draw page.mustache data.json
expect_exit 0 "--help exits 0" "$KFORGE" template --help
contains "help shows the synopsis" "$T_TMP/out" "template render TEMPLATE DATA.json"
