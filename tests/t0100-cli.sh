#!/bin/sh
# The CLI: help, version, command table, unknown commands and options,
# exit codes, and GPU-free behaviour.
. "$KF_ROOT/tests/lib.sh"

expect_exit 0 "--help exits 0" "$KFORGE" --help
cp "$T_TMP/out" "$T_TMP/help"
for c in problems baselines eval search verify merge pack dataset site report catalogue template slurm; do
	contains "--help lists $c" "$T_TMP/help" "^  $c "
	expect_exit 0 "$c --help exits 0" "$KFORGE" "$c" --help
	contains "$c --help shows its usage" "$T_TMP/out" "usage: kforge $c"
done
expect_exit 0 "--version exits 0" "$KFORGE" --version
contains "--version prints a version" "$T_TMP/out" '^kforge [0-9a-f]'
cp "$T_TMP/out" "$T_TMP/version"

# Issue 36: kforge help [CMD [SUB]] and kforge version.
expect_exit 0 "kforge version exits 0" "$KFORGE" version
check "and prints what --version prints" cmp -s "$T_TMP/out" "$T_TMP/version"
expect_exit 0 "kforge help exits 0" "$KFORGE" help
check "and prints the help on stdout" cmp -s "$T_TMP/out" "$T_TMP/help"
for c in eval search slurm; do
	"$KFORGE" "$c" --help >"$T_TMP/own" 2>&1
	expect_exit 0 "kforge help $c exits 0" "$KFORGE" help "$c"
	check "and is kforge $c --help" cmp -s "$T_TMP/out" "$T_TMP/own"
done
"$KFORGE" dataset fetch --help >"$T_TMP/own" 2>&1
expect_exit 0 "kforge help dataset fetch exits 0" "$KFORGE" help dataset fetch
check "and is kforge dataset fetch --help" cmp -s "$T_TMP/out" "$T_TMP/own"
expect_exit 2 "kforge help of an unknown command" "$KFORGE" help serach
contains "suggests the command" "$T_TMP/err" "Did you mean 'search'"
expect_exit 2 "kforge version takes no argument" "$KFORGE" version 2

expect_exit 2 "unknown command exits 2" "$KFORGE" serach
contains "unknown command suggests the closest" "$T_TMP/err" "Did you mean 'search'"
expect_exit 2 "unknown global option exits 2" "$KFORGE" --nosuch
expect_exit 2 "unknown command option exits 2" "$KFORGE" store info --jsn
contains "unknown option suggests the closest" "$T_TMP/err" "Did you mean '--json'"
expect_exit 2 "no command exits 2" "$KFORGE"
expect_exit 2 "verify --sanitizer-timeout 0 is a usage error" "$KFORGE" verify --sanitizer-timeout 0
contains "and says the range" "$T_TMP/err" "1..86400"
expect_exit 2 "verify --sanitizer-timeout 5x is a usage error" "$KFORGE" verify --sanitizer-timeout 5x

# No GPU here (CI has none): a GPU command says so in one line.
if "$KFORGE" gpu-info >/dev/null 2>&1; then
	skip "a GPU is visible; the no-GPU checks do not apply"
else
	expect_exit 3 "gpu-info without a driver exits 3" "$KFORGE" gpu-info
	lines=$(wc -l <"$T_TMP/err")
	check "gpu-info says why in one line" test "$lines" -eq 1
	contains "gpu-info names the missing driver or GPU" "$T_TMP/err" "no CUDA driver found|no GPU visible"
	# verify: the engine's KF_ENOGPU, passed up as a code, is exit 3
	"$KFORGE" --db "$T_TMP/nogpu.db" store init >/dev/null 2>&1
	expect_exit 3 "verify without a driver exits 3" "$KFORGE" --db "$T_TMP/nogpu.db" verify
	contains "verify names the missing driver or GPU" "$T_TMP/err" "no CUDA driver found|no GPU visible"
fi

# The store: created on demand, --db and KFORGE_DB name it.
expect_exit 1 "store info on a missing store fails" "$KFORGE" --db "$T_TMP/none.db" store info
contains "and says there is no store" "$T_TMP/err" "no store"

# One option table per command parses and writes the help (issue 22).
# Every subcommand has its own help, exit 0.
for s in "problems list" "problems show" "problems check" "problems inputs" "problems sensitivity" \
	"baselines import" "baselines list" "dataset verify" "dataset fetch" "dataset diff" \
	"store info" "store check" "store init" "slurm submit" "template render"; do
	# shellcheck disable=SC2086
	expect_exit 0 "$s --help exits 0" "$KFORGE" $s --help
	contains "$s --help shows its own usage" "$T_TMP/out" "^usage: kforge $s"
done
# Generated help: never "usage: usage:", every option with its help text.
for c in problems baselines eval search verify merge pack dataset site report catalogue template \
	slurm store gpu-info; do
	"$KFORGE" "$c" --help >"$T_TMP/help.$c" 2>&1
	cat "$T_TMP/help.$c" >>"$T_TMP/help.all"
done
contains "the helps were written" "$T_TMP/help.all" "^usage: kforge gpu-info"
lacks "no help says 'usage: usage:'" "$T_TMP/help.all" "usage: usage:"
expect_exit 2 "eval without its arguments is a usage error" "$KFORGE" eval
lacks "whose usage line says 'usage:' once" "$T_TMP/err" "usage: usage:"
contains "verify --help documents --sanitizer" "$T_TMP/help.verify" "--sanitizer PATH +the compute-sanitizer"
contains "search --help documents each budget" "$T_TMP/help.search" "--total-time SEC +seconds for the whole run"
contains "help lists the global options" "$T_TMP/help.eval" "--db PATH"
expect_exit 0 "-h is --help" "$KFORGE" report -h
contains "and shows report's usage" "$T_TMP/out" "^usage: kforge report"

# A flag given a value is a usage error that says so.
expect_exit 2 "--json=1 is a usage error" "$KFORGE" store info --json=1
contains "saying --json takes no value" "$T_TMP/err" "option '--json' takes no value"
expect_exit 2 "--json=1 is a usage error for search too" "$KFORGE" search --json=1
contains "saying so by name" "$T_TMP/err" "option '--json' takes no value"
expect_exit 2 "a missing value is a usage error" "$KFORGE" report --run
contains "saying which option wants it" "$T_TMP/err" "option '--run' needs a value"
expect_exit 2 "'--=x' is an unknown option" "$KFORGE" store info --=x
contains "named as given" "$T_TMP/err" "unknown option '--'"
expect_exit 2 "an ambiguous abbreviation is a usage error" "$KFORGE" search --max-t 3
contains "listing the candidates" "$T_TMP/err" "--max-timing.*--max-time"

# Numbers: the right type, the range, nothing trailing (site -j and
# verify --top were read with atoi).
expect_exit 2 "site -j 2x is a usage error" "$KFORGE" site -j 2x
contains "saying what -j wants" "$T_TMP/err" "--jobs wants an integer in 1..16, not '2x'"
expect_exit 2 "verify --top 2x is a usage error" "$KFORGE" verify --top 2x
expect_exit 2 "verify --top 0 is a usage error" "$KFORGE" verify --top 0
expect_exit 2 "eval --timeout 5x is a usage error" "$KFORGE" eval 19 x.cu --timeout 5x
expect_exit 2 "dataset fetch --max-bytes 1Q is a usage error" "$KFORGE" dataset fetch http://127.0.0.1:9/x --max-bytes 1Q
expect_exit 2 "a subcommand's options go after it" "$KFORGE" problems --json list
contains "which the message says" "$T_TMP/err" "options go after its name"
expect_exit 2 "an unknown subcommand is a usage error" "$KFORGE" dataset verfy x
contains "with the closest one" "$T_TMP/err" "Did you mean 'verify'"

# Global options before or after the command name.
expect_exit 0 "store init --db PATH after the command" "$KFORGE" store init --db "$T_TMP/after.db"
check "creates that store" test -f "$T_TMP/after.db"
expect_exit 0 "store info --db PATH after the command" "$KFORGE" store info --db "$T_TMP/after.db"
contains "reports that store" "$T_TMP/out" "after.db"
expect_exit 0 "problems list -q --db PATH" "$KFORGE" problems list -q --db "$T_TMP/none.db"
expect_exit 0 "-v after a subcommand" "$KFORGE" store info -v --db "$T_TMP/after.db"
expect_exit 0 "--db before the command still works" "$KFORGE" --db "$T_TMP/after.db" store info

# A write to stdout that fails is exit 1 with a message, not exit 0.
expect_exit 1 "problems list >/dev/full exits 1" sh -c '"$KFORGE" problems list >/dev/full'
contains "saying why" "$T_TMP/err" "^kforge: write error on standard output: No space left on device"
expect_exit 1 "--help >/dev/full exits 1" sh -c '"$KFORGE" --help >/dev/full'
expect_exit 1 "a closed stdout exits 1" sh -c '"$KFORGE" problems list >&-'
# Issue 36: an unknown problem is a usage error before anything else
# (no GPU, store or candidate file needed), with one line.
expect_exit 2 "eval of an unknown problem" "$KFORGE" --db "$T_TMP/unk.db" eval 19_Softmax nofile.cu
check "one line with a suggestion" test "$(cat "$T_TMP/err")" = \
	"kforge: unknown problem '19_Softmax'; did you mean 'level1/023_Softmax'?"
check "and no store" test ! -e "$T_TMP/unk.db"
expect_exit 2 "baselines import --problems of an unknown problem" "$KFORGE" --db "$T_TMP/unk.db" \
	baselines import nofile.json --gpu H100 --variant eager --problems 19_Softmax
contains "says so" "$T_TMP/err" "^kforge: unknown problem '19_Softmax'; did you mean"
expect_exit 2 "verify --problems of an unknown problem" "$KFORGE" --db "$T_TMP/unk.db" verify --problems ReLUx
contains "says so" "$T_TMP/err" "^kforge: unknown problem 'ReLUx'; did you mean 'level1/019_ReLU'\?$"

# Issue 36: output its reader stopped reading (EPIPE, `kforge ... | head`)
# is no error: quiet, with the command's own exit code (0 here).
for f in "" --json; do
	{ sleep 0.5; "$KFORGE" problems list $f 2>"$T_TMP/pipe.err"; echo $? >"$T_TMP/pipe.rc"; } | true
	check "problems list $f: a pipe closed by its reader is exit 0" grep -qx 0 "$T_TMP/pipe.rc"
	check "and says nothing" test ! -s "$T_TMP/pipe.err"
done
{ "$KFORGE" problems list --json 2>"$T_TMP/pipe.err"; echo $? >"$T_TMP/pipe.rc"; } | head -n 1 >/dev/null
check "problems list --json | head -n 1: exit 0" grep -qx 0 "$T_TMP/pipe.rc"
check "and no message" test ! -s "$T_TMP/pipe.err"
