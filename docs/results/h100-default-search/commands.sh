# The H100 default-budget search of 2026-11-25 (kforge c8baa06), for issue 6 and as the
# search of the v0.1.0 dataset (issue 11). kforge.db.zst (in git history: c943289) is its store: the search,
# and the H100 verification of problems 1-62.

# Here (Debian 12, CUDA 13 toolkit, no GPU): kforge and the bundle a bare GPU host lacks.
make test-build && sh scripts/gpu-bundle.sh      # -> build-gpu/bundle.tar.xz, carried

# H100, call 1: the GPU tests, then `make dataset`'s pipeline with every default
# (ROUNDS=3 K=4 M=2 JOBS=4; the search's timing budgets: 1 s of kernel time per candidate,
# at least 10 trials; a candidate over 3x eager stops after 3). Stopped by the call's limit.
T_TESTGPU=150 T_DATASET=390 DB=$PWD/build-gpu/kforge.db PROBS=level1 JOBS=4 \
  tests/tools/gpu_session.sh info test-gpu dataset
# H100, calls 2 and 3: the search resumes (the arguments dataset.sh passes) and finishes.
T_SEARCH=530 DB=$PWD/build-gpu/kforge.db PROBS=level1 \
  SEARCH_ARGS="--strategy branch --rounds 3 --ideas 4 --impls 2 --seed 1 --jobs 4" \
  tests/tools/gpu_session.sh search
# Call 4 (asked for an H200, given an H100): torch.compile baselines again (a repeat of
# problems/baselines/NVIDIA_H100_80GB_HBM3/, logs/h100-torch-compile-repeat.*) and
# verification of the best kernels until the call's limit (problems 1-62).
BASE_PROBS=1-100 T_BASE=165 T_VERIFY=215 DB=$PWD/build-gpu/kforge.db VERIFY_PROBS=level1 TOP=1 \
  VERIFY_ARGS="--no-category --no-sanitizer --max-timing 1" tests/tools/gpu_session.sh info compile verify

# Here: the figures (search wall time = 390 + 532 + 157 s of the three calls' search steps).
git show c943289:docs/results/h100-default-search/kforge.db.zst | zstd -d -o h100.db
python3 tools/results_md.py h100.db --version 0.1.0 --search-seconds 1079 \
  --commands docs/results/h100-default-search/commands.sh \
  --notes docs/results/h100-default-search/notes.md -o docs/results/h100-default-search/results.md
