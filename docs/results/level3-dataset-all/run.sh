#!/bin/sh
# Tenth session: `make dataset PROBLEMS=level3`'s pipeline (scripts/dataset.sh) on all 50
# level-3 problems, 1 round, 1 idea, 1 kernel, 8 problems at once, TOP=1 verified without
# the sanitizer, for as long as one device call allows (LIMIT seconds); the store comes back
# (l3.db.tar.xz, with the WAL) so that a later call resumes it. Any GPU. Needs build-gpu/bundle.tar.xz.
set -u
. scripts/gpu-env.sh
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
t0=$(date +%s)
ROUNDS=1 K=1 M=1 TOP=1 JOBS=8 VERIFY_ARGS="--no-sanitizer --max-timing 1" DB=l3.db OUT=dist \
	timeout "${LIMIT:-470}" sh scripts/dataset.sh level3 >"$OUT/dataset.log" 2>&1
echo "dataset rc $? $(($(date +%s) - t0))s"
grep -E "finished|verified,|tar.zst|site:" "$OUT/dataset.log"
# timeout's SIGTERM ends the script at once while kforge search winds down (it
# may still write): wait for it, then take the store with its write-ahead log
for _ in $(seq 120); do pgrep -x kforge >/dev/null || break; sleep 1; done
tar -cJf "$OUT/l3.db.tar.xz" l3.db l3.db-wal 2>/dev/null || tar -cJf "$OUT/l3.db.tar.xz" l3.db
ls -la "$OUT"
