#!/bin/sh
# GPU call 3 (H100, inline in the session): make test-gpu's files with the bundle;
# the 560 s limit stopped it in g0520 (all of conv_epi's cores and problems), after
# g0300-g0510 had passed. Call 4 ran g0520 on a subset, g0530 and g0700.
tar -xJf build-gpu/bundle.tar.xz && export LD_LIBRARY_PATH=$PWD/gpu-bundle/lib KFORGE_ROOT=$PWD &&
	BUILD=gpu-bundle timeout 560 tests/run-tests.sh --gpu >"$OUT/test-gpu.log" 2>&1
