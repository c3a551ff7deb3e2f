# Shared helpers for the end-to-end scripts (tests/tNNNN-*.sh). Each check
# prints a TAP line; the runner counts them. Sourced, not executed.
set -u
: "${KFORGE:?run through tests/run-tests.sh or set KFORGE}"
T_TMP=$(mktemp -d "${TMPDIR:-/tmp}/kforge-test.XXXXXX")
# KF_KEEP=1 keeps the scratch directory for a post-mortem
[ -n "${KF_KEEP:-}" ] || trap 'rm -rf "$T_TMP"' EXIT
export KFORGE_DB="$T_TMP/kforge.db"
cd "$T_TMP" || exit 1
_t_n=0
ok()   { _t_n=$((_t_n + 1)); echo "ok $_t_n - $*"; }
nok()  { _t_n=$((_t_n + 1)); echo "not ok $_t_n - $*"; }
skip() { _t_n=$((_t_n + 1)); echo "ok $_t_n - # SKIP $*"; }
# check DESC CMD...: passes when CMD exits 0
check() { _d=$1; shift; if "$@"; then ok "$_d"; else nok "$_d"; fi; }
# check_fail DESC CMD...: passes when CMD exits non-zero
check_fail() { _d=$1; shift; if "$@"; then nok "$_d"; else ok "$_d"; fi; }
# expect_exit CODE DESC CMD...: stdout in $T_TMP/out, stderr in $T_TMP/err
expect_exit() {
	_c=$1; _d=$2; shift 2
	"$@" >"$T_TMP/out" 2>"$T_TMP/err"; _rc=$?
	if [ "$_rc" -eq "$_c" ]; then ok "$_d"; else nok "$_d (exit $_rc, wanted $_c)"; sed 's/^/# /' "$T_TMP/err" | head -n 20; fi
}
# contains DESC FILE PATTERN (grep -E)
contains() { if grep -Eq -- "$3" "$2"; then ok "$1"; else nok "$1"; echo "# '$3' not in $2:"; head -n 20 "$2" | sed 's/^/#   /'; fi; }
lacks() { if grep -Eq -- "$3" "$2"; then nok "$1"; grep -E -- "$3" "$2" | head -n 5 | sed 's/^/#   /'; else ok "$1"; fi; }

# have_nvrtc: whether NVRTC compiles a candidate here. need_nvrtc [WHAT]:
# ends the script with a skip ("NVRTC not available: WHAT") unless it does.
have_nvrtc() {
	"$KF_BUILD/tests/kfcompile" --exe "$KFORGE" "$KF_ROOT/tests/candidates/relu_ok.cu" >probe 2>&1 &&
		! grep -q "NVRTC not found" probe
}
need_nvrtc() {
	if ! have_nvrtc; then
		skip "NVRTC not available${1:+: $1}"
		exit 0
	fi
}

# need_emulator: ends the script with a skip unless c++, python3 and NVRTC
# are there (the built-in kernels compile with NVRTC and run emulated on
# the host: tests/tools/check_templates.py).
need_emulator() {
	if ! command -v c++ >/dev/null 2>&1 || ! command -v python3 >/dev/null 2>&1; then
		skip "c++ or python3 missing: the built-in kernels cannot be emulated"
		exit 0
	fi
	need_nvrtc "the built-in kernels cannot be compiled"
}

# The emulators' precompiled shim (tests/tools/emulate_refs.py shim_header):
# built once per build tree, not once per emulation.
if [ -n "${KF_BUILD:-}" ]; then export KF_EMU_CACHE="${KF_EMU_CACHE:-$KF_BUILD/tests/emu-cache}"; fi

# par_jobs: how many compiles or emulations a test runs at once
# (KF_TEST_JOBS, else every online core).
par_jobs() { echo "${KF_TEST_JOBS:-$(getconf _NPROCESSORS_ONLN 2>/dev/null || echo 1)}"; }
# every_nth I SHORT LONG: true for every SHORT-th index I (I % SHORT == 0) in
# `make test`, for every LONG-th under `make test-long` (KF_TEST_LONG=1): the
# short tier samples the same cases the long one runs whole.
long_tier() { [ "${KF_TEST_LONG:-0}" = 1 ]; }
every_nth() {
	if [ "${KF_TEST_LONG:-0}" = 1 ]; then
		[ $(($1 % $3)) -eq 0 ]
	else
		[ $(($1 % $2)) -eq 0 ]
	fi
}
# folded_by MARKER PARAMS...: for each set of graph-template parameters, the
# level-2 problems whose rendering holds MARKER (a fold's kernel name), as
# "042 044 " in folds-<the set's letters and digits>; a problem that does not
# render is listed in render.err.
folded_by() {
	_m=$1; shift
	: >render.err
	for _p in "$@"; do
		for _d in "$KF_ROOT"/problems/level2/*/; do
			"$KF_BUILD/tests/builtin_emit" render "$_d/spec.json" graph "$_p" >k.cu 2>>render.err ||
				echo "$_d: $_p" >>render.err
			grep -q "$_m" k.cu && basename "$_d" | cut -c1-3
		done | tr '\n' ' ' >"folds-$(echo "$_p" | tr -dc 'a-z0-9')"
	done
}
# emulate_jobs [--convt] LIST: LIST holds NUL-separated records DIR ROOT
# NUMBER FILE; each runs emulate_refs.py --cand FILE NUMBER (--convt:
# emulate_convt.py FILE NUMBER) over ROOT with work dir DIR (one per job:
# the emulator names its files after the problem), par_jobs at a time in one
# Python (emulate_refs.py --jobs: forked, not started a job), and leaves the
# emulator's line in DIR.res; the Python's own output in LIST.log.
emulate_jobs() {
	_e=emulate_refs.py
	[ "$1" = --convt ] && { _e=emulate_convt.py; shift; }
	python3 "$KF_ROOT/tests/tools/$_e" --jobs "$1" -j "$(par_jobs)" "$KFORGE" >"$1.log" 2>&1
}

# small_level1 OUT SIZES N...: level-1 problems N in OUT/problems/level1 with
# their spec's sizes replaced where SIZES (a JSON object) names them, and
# their reference.cu, for emulation at those sizes (KF_EMU_SIZES=SIZES).
small_level1() {
	python3 - "$KF_ROOT" "$@" <<'PY'
import glob, json, os, shutil, sys
root, out, sizes = sys.argv[1], sys.argv[2], json.loads(sys.argv[3])
for n in sys.argv[4:]:
    d = glob.glob("%s/problems/level1/%03d_*" % (root, int(n)))[0]
    o = os.path.join(out, "problems", "level1", os.path.basename(d))
    os.makedirs(o)
    s = json.load(open(d + "/spec.json"))
    s["sizes"] = {k: sizes.get(k, v) for k, v in s["sizes"].items()}
    json.dump(s, open(o + "/spec.json", "w"))
    shutil.copy(d + "/reference.cu", o)
PY
}

# fixture_problem DIR: a problem that loads (problem_load) in DIR, named
# by it (ROOT/problems/levelL/NNN_Name): level 1's ReLU spec renamed, and
# reference.py/reference.cu unless DIR has them. For tests whose problems
# only need to be valid ones.
fixture_problem() {
	mkdir -p "$1" && python3 - "$KF_ROOT/problems/level1/019_ReLU" "$1" <<'PY'
import json, os, shutil, sys
src, d = sys.argv[1], sys.argv[2].rstrip("/")
s = json.load(open(os.path.join(src, "spec.json")))
base, lv = os.path.basename(d), os.path.basename(os.path.dirname(d))
num, _, name = base.partition("_")
s.update(id=lv + "/" + base, level=int(lv[5:]), number=int(num), name=name,
         kernelbench_file="%d_%s.py" % (int(num), name))
with open(os.path.join(d, "spec.json"), "w") as f:
    json.dump(s, f, indent=1)
for t in ("reference.py", "reference.cu"):
    if not os.path.exists(os.path.join(d, t)):
        shutil.copy(os.path.join(src, t), os.path.join(d, t))
PY
}
