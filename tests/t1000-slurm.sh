#!/bin/sh
# Scale-out on a real (single-node, loopback) Slurm cluster from Debian's
# packages: a 3-shard compile-only search of 6 problems through
# `kforge slurm submit`, merged by the dependent job, must hold exactly the
# kernels of the same search run on one machine; a shard task killed
# mid-way and requeued resumes without losing or duplicating rows.
. "$KF_ROOT/tests/lib.sh"
PATH=$PATH:/usr/sbin
for b in slurmctld slurmd munged sbatch scontrol; do
	if ! command -v $b >/dev/null 2>&1; then
		skip "slurm: $b not installed (Debian: slurmctld slurmd slurm-client munge)"
		exit 0
	fi
done
CL="$T_TMP/cluster"
trap '"$KF_ROOT/tests/slurm/cluster.sh" stop "$CL"; [ -n "${KF_KEEP:-}" ] || rm -rf "$T_TMP"' EXIT
if ! "$KF_ROOT/tests/slurm/cluster.sh" start "$CL" 2>"$T_TMP/cl.err"; then
	nok "single-node slurm cluster starts"; sed 's/^/# /' "$T_TMP/cl.err"; exit 0
fi
ok "single-node slurm cluster starts"
export SLURM_CONF="$CL/slurm.conf"
PROBS=5,19,20,23,36,47
SEARCH="--seed 11 --rounds 2 --ideas 2 --impls 2"
DUMP="python3 $KF_ROOT/tests/tools/dbdump.py"

wait_job() { # jobid, seconds -> 0 when COMPLETED
	_i=0
	while [ $_i -lt $(($2 * 5)) ]; do
		_s=$(scontrol -o show job "$1" 2>/dev/null | grep -o 'JobState=[A-Z_]*' | head -n 1)
		case "$_s" in
		*COMPLETED) return 0 ;;
		*FAILED|*CANCELLED|*TIMEOUT|*NODE_FAIL|*OUT_OF_MEMORY) echo "# job $1: $_s"; return 1 ;;
		esac
		sleep 0.2; _i=$((_i + 1))
	done
	echo "# job $1: still $_s"; return 1
}
kernels() { sqlite3 "$1" "SELECT hash FROM kernels ORDER BY hash"; }

# The reference: the same search on one machine.
expect_exit 0 "one-machine compile-only search" \
	"$KFORGE" --db single.db search --problems $PROBS --compile-only --arch sm_90 $SEARCH
kernels single.db >single.k
check "one-machine search made kernels" test -s single.k

expect_exit 0 "dry run prints the scripts" "$KFORGE" slurm submit --dry-run --problems $PROBS \
	--shards 3 --compile-only --workdir w0 --no-pack --no-site -- $SEARCH
contains "dry run shows the job array" "$T_TMP/out" '#SBATCH --array=0-2'
contains "dry run shows requeue" "$T_TMP/out" '#SBATCH --requeue'
check "dry run submitted nothing" sh -c '! squeue -h | grep -q .'
check "shards are deterministic" sh -c "'$KFORGE' slurm submit --dry-run --problems $PROBS --shards 3 --compile-only --workdir w0 --no-pack --no-site >a.txt && '$KFORGE' slurm submit --dry-run --problems $PROBS --shards 3 --compile-only --workdir w0 --no-pack --no-site >b.txt && cmp -s a.txt b.txt"

expect_exit 0 "slurm submit (3 shards, compile-only)" "$KFORGE" slurm submit --json \
	--problems $PROBS --shards 3 --compile-only --workdir w1 --no-pack --no-site -- $SEARCH
FIN=$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["finish"])' "$T_TMP/out")
if wait_job "$FIN" 240; then ok "merge/finish job completed"; else
	nok "merge/finish job completed"; tail -n 20 w1/logs/*.log | sed 's/^/# /'; fi
check "three shard stores" test -f w1/shards/shard_0.db -a -f w1/shards/shard_1.db -a -f w1/shards/shard_2.db
check "a log per task" test -s w1/logs/search_0.log -a -s w1/logs/search_1.log -a -s w1/logs/search_2.log
kernels w1/final.db >slurm.k 2>/dev/null
check "merged store holds the same kernels as the one-machine search" cmp -s single.k slurm.k
check "merged store: integrity ok" sh -c "test \"\$(sqlite3 w1/final.db 'PRAGMA integrity_check')\" = ok"

# Requeue: kill shard 1 mid-way; Slurm restarts it; the search resumes.
expect_exit 0 "slurm submit (requeue run)" "$KFORGE" slurm submit --json \
	--problems $PROBS --shards 3 --compile-only --workdir w2 --no-pack --no-site -- $SEARCH
ARR=$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["search"])' "$T_TMP/out")
FIN=$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["finish"])' "$T_TMP/out")
before=-1; i=0
while [ $i -lt 600 ]; do
	n=$(sqlite3 w2/shards/shard_1.db "SELECT count(*) FROM kernels" 2>/dev/null)
	if [ -n "$n" ] && [ "$n" -gt 0 ]; then before=$n; break; fi
	sleep 0.05; i=$((i + 1))
done
scontrol requeue "${ARR}_1" 2>"$T_TMP/rq.err"
# Slurm holds a requeued task back (BeginTime about two minutes on): once it
# is pending again, let it start now; the resume is the subject, not the wait.
i=0
while [ $i -lt 100 ]; do
	case "$(scontrol -o show job "${ARR}_1" 2>/dev/null)" in
	*JobState=PENDING*) scontrol update JobId="${ARR}_1" StartTime=now 2>>"$T_TMP/rq.err"; break ;;
	esac
	sleep 0.1; i=$((i + 1))
done
if wait_job "$FIN" 240; then ok "finish job completed after the requeue"; else nok "finish job completed after the requeue"; fi
# Slurm delays a requeued task's start, so look once everything is done.
if grep -q 'restart 1' w2/logs/search_1.log; then
	ok "shard 1 was requeued and ran again"
else
	nok "shard 1 was requeued and ran again"; sed 's/^/# requeue: /' "$T_TMP/rq.err"; sed 's/^/# log: /' w2/logs/search_1.log | head -20
fi
echo "# shard 1 had $before kernel rows when killed"
kernels w2/final.db >rq.k 2>/dev/null
check "after requeue: same kernels as one machine" cmp -s single.k rq.k
# Sessions are per invocation: a requeued shard ran twice.
$DUMP --exclude search_sessions w1/final.db | grep '^== ' >c1.txt
$DUMP --exclude search_sessions w2/final.db | grep '^== ' >c2.txt
if cmp -s c1.txt c2.txt; then ok "after requeue: same row counts in every table (nothing lost or doubled)"
else nok "after requeue: same row counts in every table (nothing lost or doubled)"; diff c1.txt c2.txt | sed 's/^/# /'; fi
