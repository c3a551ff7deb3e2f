# Sourced on a lent GPU host from the repository root (`. scripts/gpu-env.sh`):
# unpacks the carried bundle (scripts/gpu-bundle.sh) afresh, as a warm host may
# keep an older gpu-bundle/, and points kforge, the tests and the tools at it.
if [ -f build-gpu/bundle.tar.xz ]; then rm -rf gpu-bundle && tar -xJf build-gpu/bundle.tar.xz; fi
export LD_LIBRARY_PATH="$PWD/gpu-bundle/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
export BUILD=gpu-bundle KFORGE_ROOT="$PWD" KFORGE="$PWD/gpu-bundle/kforge"
