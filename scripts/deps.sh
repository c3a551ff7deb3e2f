#!/bin/sh
# Checks kforge's build and test dependencies and installs the missing
# Debian/Ubuntu packages with apt (as root, or through sudo). Says exactly
# what is missing when it cannot. Usage: scripts/deps.sh [--check] [--test]
set -u

CHECK_ONLY=0
TESTS=0
for a in "$@"; do
	case "$a" in
	--check) CHECK_ONLY=1 ;;
	--test) TESTS=1 ;;
	esac
done
PATH=$PATH:/usr/sbin:/sbin

# pkg-config module -> Debian package
PAIRS="sqlite3:libsqlite3-dev libarchive:libarchive-dev libcmark:libcmark-dev
libcurl:libcurl4-openssl-dev jansson:libjansson-dev libcrypto:libssl-dev
libgit2:libgit2-dev cmocka:libcmocka-dev"
# command -> Debian package (tests use these)
CMDS="cc:gcc make:make pkg-config:pkg-config python3:python3 sqlite3:sqlite3
tar:tar curl:curl"
# only for `make test`: zstd(1) to read tarballs back, headless Chromium for
# the site's browser tests, a loopback Slurm cluster for tests/t1000-slurm.sh,
# Java for the W3C Nu HTML checker (t0951; the checker itself and pyarrow/
# datasets come from PyPI into venvs under the build folder, made by the tests)
TEST_CMDS="zstd:zstd chromium:chromium chromedriver:chromium-driver
slurmctld:slurmctld slurmd:slurmd munged:munge sbatch:slurm-client java:default-jre-headless"
[ "$TESTS" = 1 ] && CMDS="$CMDS $TEST_CMDS"

missing=""
if ! command -v pkg-config >/dev/null 2>&1; then
	missing="pkg-config"
fi
for p in $PAIRS; do
	mod=${p%%:*}; pkg=${p#*:}
	if ! pkg-config --exists "$mod" 2>/dev/null; then
		missing="$missing $pkg"
	fi
done
for p in $CMDS; do
	cmd=${p%%:*}; pkg=${p#*:}
	command -v "$cmd" >/dev/null 2>&1 || missing="$missing $pkg"
done
# venvs for the tests' PyPI tools (Debian's python3 needs python3-venv)
if [ "$TESTS" = 1 ] && command -v python3 >/dev/null 2>&1 &&
	! python3 -c 'import ensurepip, venv' >/dev/null 2>&1; then
	missing="$missing python3-venv"
fi
missing=$(echo $missing | tr ' ' '\n' | sort -u | tr '\n' ' ')

if [ -n "${missing# }" ]; then
	if [ "$CHECK_ONLY" = 1 ]; then
		echo "kforge: missing packages: $missing" >&2
		exit 1
	fi
	SUDO=""
	if [ "$(id -u)" != 0 ]; then
		if command -v sudo >/dev/null 2>&1 && sudo -n true 2>/dev/null; then
			SUDO="sudo -n"
		else
			echo "kforge: these Debian/Ubuntu packages are missing: $missing" >&2
			echo "kforge: install them as root:  apt-get install -y $missing" >&2
			exit 1
		fi
	fi
	if ! command -v apt-get >/dev/null 2>&1; then
		echo "kforge: no apt-get here; install the equivalents of: $missing" >&2
		exit 1
	fi
	echo "kforge: installing $missing" >&2
	export DEBIAN_FRONTEND=noninteractive
	$SUDO apt-get update -qq >/dev/null || { echo "kforge: apt-get update failed" >&2; exit 1; }
	# shellcheck disable=SC2086
	$SUDO apt-get install -y -qq --no-install-recommends $missing >/dev/null ||
		{ echo "kforge: apt-get install failed for: $missing" >&2; exit 1; }
fi

CUDA_HOME=${CUDA_HOME:-/usr/local/cuda}
if [ ! -f "$CUDA_HOME/include/cuda.h" ] || [ ! -f "$CUDA_HOME/include/nvrtc.h" ]; then
	echo "kforge: the CUDA toolkit was not found at $CUDA_HOME (set CUDA_HOME);" >&2
	echo "kforge: it needs include/cuda.h, include/nvrtc.h, include/cupti.h and lib64/libnvrtc.so" >&2
	echo "kforge: (NVIDIA's cuda-toolkit packages; no GPU is needed to build or test)" >&2
	exit 1
fi
exit 0
