# kforge level-1 dataset v0.1.0 (built-in proposer): how every figure of
# docs/results/level1-builtin-v0.1.0.md was made. the store, kforge-merged.db.zst, left the tree after c943289 (over 1 MB): `git show c943289:docs/results/level1-builtin-v0.1.0/kforge-merged.db.zst`.

# Here (Debian 12, CUDA 13 toolkit, no GPU): kforge and the bundle a bare GPU host lacks.
make test-build && sh scripts/gpu-bundle.sh      # -> build-gpu/bundle.tar.xz, carried

# H100, session of 2026-11-25 (kforge c8baa06): `make dataset PROBLEMS=level1`'s pipeline with
# every default, resumed twice; then verification of problems 1-62 (the call's limit).
# Exactly as in docs/results/h100-default-search/commands.sh:
T_TESTGPU=150 T_DATASET=390 DB=$PWD/build-gpu/kforge.db PROBS=level1 JOBS=4 \
  tests/tools/gpu_session.sh info test-gpu dataset
T_SEARCH=530 DB=$PWD/build-gpu/kforge.db PROBS=level1 \
  SEARCH_ARGS="--strategy branch --rounds 3 --ideas 4 --impls 2 --seed 1 --jobs 4" \
  tests/tools/gpu_session.sh search                # twice
BASE_PROBS=1-100 T_BASE=165 T_VERIFY=215 DB=$PWD/build-gpu/kforge.db VERIFY_PROBS=level1 TOP=1 \
  VERIFY_ARGS="--no-category --no-sanitizer --max-timing 1" tests/tools/gpu_session.sh info compile verify

# Next session (kforge bb450b3), asked for an H200 and given an H100: the `release` step
# measures the baselines this GPU lacks (none) and verifies the best kernel of every problem
# (1-62 come from the store): logs/h100-verify-63-100.txt.
PROBS=level1 DB=$PWD/build-gpu/kforge.db T_BASE=170 T_VERIFY=375 tests/tools/gpu_session.sh info release
xz -T16 -3 -c build-gpu/kforge.db > "$OUT/kforge.db.xz"   # -> merged.db here
# On an H200 the same line measures its torch.compile baselines and verifies all 100;
# `kforge merge h100.db h200.db -o merged.db` then joins the stores.

# Next session (the tree of 2e537bb, verify-v2), asked for an H200, given an H100: make
# test-gpu, and verify-v2 of the two kernels verify-v1 failed (logs/h100-verify-v2-090-097.txt,
# logs/h100-test-gpu-2e537bb.txt).
xz -dc build-gpu/kforge.db.xz > /tmp/pub.db
DB=/tmp/pub.db VERIFY_PROBS=90,97 TOP=1 T_VERIFY=240 T_TESTGPU=300 \
  VERIFY_ARGS="--no-category --no-sanitizer --max-timing 1" tests/tools/gpu_session.sh info test-gpu verify
xz -T16 -3 -c /tmp/pub.db > "$OUT/pub-v2.db.xz"                  # -> h100.db here

# Same session, an H200 at last (same bundle): the release step on a copy of the store from
# before the two verify-v2 verdicts: verify-v2 of all 100, then its torch.compile baselines
# (committed: problems/baselines/NVIDIA_H200/). logs/h200-release.txt.
xz -dc build-gpu/kforge.db.xz > /tmp/h2.db
PROBS=level1 DB=/tmp/h2.db T_VERIFY=420 T_BASE=150 tests/tools/gpu_session.sh info release
xz -T16 -3 -c /tmp/h2.db > "$OUT/kforge.db.xz"                    # -> h200.db here
./build/kforge merge h100.db h200.db -o merged.db                 # = kforge-merged.db.zst

# Here, with the kforge that packed (provenance.json "packed_by": 04a58a9; the tarball
# records it, so a later kforge gives other bytes):
git show c943289:docs/results/level1-builtin-v0.1.0/kforge-merged.db.zst | zstd -d -o merged.db
git worktree add /tmp/kf 04a58a9 && make -C /tmp/kf kforge
/tmp/kf/build/kforge --db merged.db pack --version 0.1.0 -o dist && cat dist/*.sha256
/tmp/kf/build/kforge --db merged.db site -o site
for p in index:index.html problem:problems/level1-095_CrossEntropyLoss.html; do
  chromium --headless --no-sandbox --disable-gpu --hide-scrollbars --window-size=1000,1250 \
    --screenshot="$PWD/${p%%:*}.png" "file://$PWD/site/${p#*:}"
done                                              # -> level1-builtin-v0.1.0/{index,problem}.png
/tmp/kf/build/kforge --db merged.db report --gpus > cross.md
python3 tools/results_md.py merged.db --version 0.1.0 \
  --tarball dist/kforge-kernelbench-0.1.0.tar.zst --search-seconds 1079 \
  --screens level1-builtin-v0.1.0 --notes docs/results/level1-builtin-v0.1.0/notes.md \
  --cross-gpu cross.md --commands docs/results/level1-builtin-v0.1.0/commands.sh \
  -o docs/results/level1-builtin-v0.1.0.md
