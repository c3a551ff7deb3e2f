#!/bin/sh
# Makes gpu-bundle/: the kforge binary and the shared libraries it needs
# that a bare GPU host may lack (libarchive, libcmark and their deps), for
# running a build made here on a machine where nothing can be installed.
# Run there as:  LD_LIBRARY_PATH=gpu-bundle/lib gpu-bundle/kforge ...
#           or:  LD_LIBRARY_PATH=$PWD/gpu-bundle/lib BUILD=gpu-bundle tests/run-tests.sh --gpu
set -eu
cd "$(dirname "$0")/.."
BUILD=${BUILD:-build}
OUTDIR=${1:-gpu-bundle}
make --no-print-directory BUILD="$BUILD" test-build >/dev/null
rm -rf "$OUTDIR"
mkdir -p "$OUTDIR/lib" "$OUTDIR/tests"
cp "$BUILD/kforge" "$OUTDIR/kforge"
# Test programs too, laid out as in $BUILD, so BUILD=gpu-bundle tests/run-tests.sh works there.
for f in "$BUILD"/tests/*; do
	[ -f "$f" ] && [ -x "$f" ] && cp "$f" "$OUTDIR/tests/"
done
# Every non-glibc library the binary links, resolved here.
for b in "$OUTDIR/kforge" "$OUTDIR"/tests/*; do ldd "$b"; done | awk '/=> \// {print $3}' | sort -u | while read -r lib; do
	case "$(basename "$lib")" in
	libc.so*|libm.so*|libdl.so*|libpthread.so*|librt.so*|ld-linux*|libresolv.so*) ;;
	*) cp -L "$lib" "$OUTDIR/lib/" ;;
	esac
done
du -sh "$OUTDIR" | awk '{print "gpu-bundle: " $1}'
# Compressed for the device tool's carry limit (64 MiB): build-gpu/bundle.tar.xz
mkdir -p build-gpu
tar -cJf build-gpu/bundle.tar.xz "$OUTDIR"
du -sh build-gpu/bundle.tar.xz
