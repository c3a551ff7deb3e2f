#!/bin/sh
# The store owns all SQL (docs/architecture.md, The store): no C file
# outside store/store*.c|h holds SQL text or runs raw SQL through
# store_query*/store_exec. Lists each offence as file:line.
. "$KF_ROOT/tests/lib.sh"

# Raw SQL runners: only the store's own modules call them (comments aside).
calls() {
	grep -nE '\bstore_(query|query_one|query_all|query_int|exec)[[:space:]]*\(' "$1" |
		grep -vE '^[0-9]+:[[:space:]]*(/\*|\*|//)' | sed "s|^|$1:|"
}
# SQL text: a string literal that starts a statement, or holds a clause
# (" FROM kernels WHERE hash = ?" continues one; "status IN (...)" and
# "round < ?3" are pieces of one).
stmt='"[[:space:]]*(SELECT|INSERT|UPDATE|DELETE|REPLACE|PRAGMA|ATTACH|DETACH|BEGIN|COMMIT|ROLLBACK|SAVEPOINT|RELEASE|CREATE|DROP|ALTER|VACUUM|WITH|ANALYZE|REINDEX)\b'
clause='\b(FROM|JOIN|WHERE|INTO|UNION ALL|ORDER BY|GROUP BY)[[:space:]]+[a-z_(?]|\b(VALUES|IN|json_extract)[[:space:]]*\(|[=<>][[:space:]]*\?[0-9]*([^a-zA-Z]|$)'
sql() {
	grep -noE '"([^"\\]|\\.)*"' "$1" | grep -E "^[0-9]+:($stmt|.*($clause))" | sed "s|^|$1:|"
}

# The patterns first, on the shapes SQL had outside the store and on text
# that is not SQL.
cat >"$T_TMP/bad.c" <<'EOF'
	r = store_query_one(&st, sql.s, NULL, &row, err);
	if (store_exec(&w->store, "BEGIN", &w->err) < 0)
		"SELECT c.id, c.round,"
		" FROM llm_calls WHERE run_id = ?"
		"  AND e.gpu_name = ?3 AND e.protocol = ?4"
	return find_run(db_path, "status IN ('running','stopped','failed')", run_id, config, err);
	return idea_rows(P, "i.round < ?3", round, err);
	x = "json_extract(config, '$.replay') = 0";
	snprintf(sql, sizeof(sql), "PRAGMA foreign_key_check");
EOF
cat >"$T_TMP/good.c" <<'EOF'
	/* store_query_one(s, ...) is the store's own */
	r = store_search_find_run(&st, pick, &row, err);
	"  check   PRAGMA integrity_check and foreign_key_check (exit 4 when not ok)\n";
	return kf_err(err, "no problem '%s' in the store", q);
	printf("%s: %d of %d kernels from the catalogue; where = %s?\n", a, b, c, d);
	log_warn("verify: the GPU's details are left out of the record: %s", qerr.s);
EOF
check "the call pattern finds raw calls" test "$(calls "$T_TMP/bad.c" | wc -l)" -eq 2
check "the SQL pattern finds every piece of SQL" test "$(sql "$T_TMP/bad.c" | wc -l)" -eq 8
calls "$T_TMP/good.c" >"$T_TMP/good.calls"
sql "$T_TMP/good.c" >"$T_TMP/good.sql"
lacks "the call pattern spares other calls and comments" "$T_TMP/good.calls" .
lacks "the SQL pattern spares text that is not SQL" "$T_TMP/good.sql" .

cd "$KF_ROOT" || exit 1
files=$(find cli core problem oracle kernels engine collector verifier dataset site \
	\( -name '*.c' -o -name '*.h' \) | sort)
check "found the C sources" test -n "$files"
: >"$T_TMP/calls"
: >"$T_TMP/sql"
for f in $files; do
	calls "$f" >>"$T_TMP/calls"
	sql "$f" >>"$T_TMP/sql"
done
if [ -s "$T_TMP/calls" ]; then
	nok "no store_query*/store_exec calls outside store/store* ($(wc -l <"$T_TMP/calls") found)"
	sed 's/^/#   /' "$T_TMP/calls"
else
	ok "no store_query*/store_exec calls outside store/store*"
fi
if [ -s "$T_TMP/sql" ]; then
	nok "no SQL text outside store/store* ($(wc -l <"$T_TMP/sql") literals)"
	sed 's/^/#   /' "$T_TMP/sql"
else
	ok "no SQL text outside store/store*"
fi
