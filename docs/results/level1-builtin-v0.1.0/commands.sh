# Here (Debian 12, CUDA 13 toolkit, no GPU): build kforge and a bundle of it and the
# libraries a bare GPU host lacks (build-gpu/bundle.tar.xz, carried to the GPU machine).
make test-build && sh scripts/gpu-bundle.sh

# H100, from a copy of this tree: `make dataset`'s pipeline (scripts/dataset.sh) with the
# built-in proposer and a budget that fits the device time. The search resumed over three calls
# (540 s, 478 s, 110 s of wall time); each call ends with PRAGMA wal_checkpoint(TRUNCATE) and
# the store comes back as kforge.db.gz.
DB=$PWD/build-gpu/kforge.db PROBS=level1 ROUNDS=2 IDEAS=2 M=2 MAX_TIMING=2 JOBS=4 \
  tests/tools/gpu_session.sh dataset list        # = make dataset PROBLEMS=level1 ROUNDS=2 K=2 M=2 MAX_TIMING=2
DB=$PWD/build-gpu/kforge.db PROBS=level1 T_SEARCH=470 \
  SEARCH_ARGS="--strategy branch --rounds 2 --ideas 2 --impls 2 --seed 1 --jobs 4 --max-timing 2" \
  tests/tools/gpu_session.sh search               # resumes run_7cac55a4ca6bfae8 (twice)
kforge --db kforge.db verify --top 1 --problems 19 --no-category --sanitizer-timeout 25 --max-timing 2
kforge --db kforge.db verify --top 1 --problems level1 --no-category --no-sanitizer --max-timing 2
                                                  # stopped by the device budget after 57 problems
cp kforge.db h100.db

# H200, on a copy of that store:
kforge --db kforge.db verify --top 1 --problems level1 --no-category --no-sanitizer --max-timing 2
cp kforge.db h200.db

# Here: merge (merge h200.db h100.db gives the same bytes).
kforge merge h100.db h200.db -o merged.db

# H100 again, next session, on merged.db: the rest of the verification, a sanitizer pass on
# five best kernels, torch.compile baselines (logs in level1-builtin-v0.1.0/logs/).
DB=merged.db VERIFY_PROBS=58-100 TOP=1 VERIFY_ARGS="--no-category --no-sanitizer --max-timing 2" \
  tests/tools/gpu_session.sh verify
DB=merged.db VERIFY_PROBS=12,40,72,88,95 TOP=1 \
  VERIFY_ARGS="--no-category --sanitizer-timeout 40 --max-timing 1" tests/tools/gpu_session.sh verify
python3 tools/torch_baseline.py --variant compile --problems 1-100   # problems/baselines/NVIDIA_H100_80GB_HBM3/

# Here: compile baselines into the store, pack, site, this page.
kforge --db merged.db baselines import \
  problems/baselines/NVIDIA_H100_80GB_HBM3/baseline_time_torch_compile_inductor_default.json \
  --gpu "NVIDIA H100 80GB HBM3" --variant compile
kforge --db merged.db pack --version 0.1.0 -o dist
kforge --db merged.db site -o site
chromium --headless --no-sandbox --hide-scrollbars --window-size=1000,1250 \
  --screenshot=index.png file://$PWD/site/index.html
kforge --db merged.db report --gpus > cross.md
python3 tools/results_md.py merged.db --version 0.1.0 \
  --tarball dist/kforge-kernelbench-0.1.0.tar.zst --search-seconds 1128 \
  --screens level1-builtin-v0.1.0 --notes docs/results/level1-builtin-v0.1.0/notes.md \
  --cross-gpu cross.md --commands docs/results/level1-builtin-v0.1.0/commands.sh \
  -o docs/results/level1-builtin-v0.1.0.md

# Re-pack check: the merged store is committed next to this page (zstd); at commit 91c4f05
# (the kforge that packed the tarball: provenance.json "packed_by") this gives the SHA-256 above.
git checkout 91c4f05 && make kforge
zstd -d docs/results/level1-builtin-v0.1.0/kforge-merged.db.zst -o merged.db
./build/kforge --db merged.db pack --version 0.1.0 -o dist && cat dist/*.sha256
