#!/bin/sh
# Makes gpu-bundle/: the kforge binary and the shared libraries it needs
# that a bare GPU host may lack (libarchive, libcmark and their deps), for
# running a build made here on a machine where nothing can be installed.
# Run there as:  LD_LIBRARY_PATH=gpu-bundle/lib gpu-bundle/kforge ...
set -eu
cd "$(dirname "$0")/.."
BUILD=${BUILD:-build}
OUTDIR=${1:-gpu-bundle}
make --no-print-directory BUILD="$BUILD" kforge "$BUILD/tests/mockllm" >/dev/null 2>&1 || make --no-print-directory BUILD="$BUILD" kforge >/dev/null
rm -rf "$OUTDIR"
mkdir -p "$OUTDIR/lib"
cp "$BUILD/kforge" "$OUTDIR/kforge"
# Every non-glibc library the binary links, resolved here.
ldd "$BUILD/kforge" | awk '/=> \// {print $3}' | while read -r lib; do
	case "$(basename "$lib")" in
	libc.so*|libm.so*|libdl.so*|libpthread.so*|librt.so*|ld-linux*|libresolv.so*) ;;
	*) cp -L "$lib" "$OUTDIR/lib/" ;;
	esac
done
du -sh "$OUTDIR" | awk '{print "gpu-bundle: " $1}'
