#!/bin/sh
# A single-node Slurm cluster on loopback, everything under one directory:
#   tests/slurm/cluster.sh start DIR   (prints nothing; exits non-zero if it cannot start)
#   tests/slurm/cluster.sh stop DIR    (kills every daemon it started)
# Clients then need: SLURM_CONF=DIR/slurm.conf. Runs as root or as any
# user (SlurmUser is the caller). Uses Debian's slurmctld, slurmd, munge.
set -u
cmd=$1 dir=$2
mkdir -p "$dir"
dir=$(cd "$dir" && pwd)

# stop: SIGTERM to every daemon at once (each takes a second or two to go;
# one after the other they took 5), then SIGKILL to any left after 5 s
stop() {
	pids=""
	for p in slurmd slurmctld munged; do
		[ -f "$dir/$p.pid" ] || continue
		pid=$(cat "$dir/$p.pid")
		kill "$pid" 2>/dev/null && pids="$pids $pid"
	done
	for pid in $pids; do
		i=0
		while kill -0 "$pid" 2>/dev/null && [ $i -lt 50 ]; do sleep 0.1; i=$((i + 1)); done
		kill -9 "$pid" 2>/dev/null
	done
	for p in slurmd slurmctld munged; do
		rm -f "$dir/$p.pid"
	done
}

free_port() {
	python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'
}

start() {
	for b in munged slurmctld slurmd sbatch; do
		command -v "$b" >/dev/null 2>&1 || [ -x "/usr/sbin/$b" ] || {
			echo "missing $b (Debian packages: slurmctld slurmd slurm-client munge)" >&2
			return 1
		}
	done
	PATH=$PATH:/usr/sbin
	user=$(id -un)
	mkdir -p "$dir/state" "$dir/spool" "$dir/log"
	chmod 700 "$dir"
	# munge: private key and socket in DIR; nothing system-wide.
	head -c 1024 /dev/urandom > "$dir/munge.key"
	chmod 600 "$dir/munge.key"
	munged --key-file="$dir/munge.key" --socket="$dir/munge.sock" \
		--pid-file="$dir/munged.pid" --log-file="$dir/log/munged.log" \
		--seed-file="$dir/munge.seed" --force || return 1
	cpus=$(nproc)
	mem=$(awk '/MemTotal/ { print int($2 / 1024 / 2) }' /proc/meminfo)
	cat > "$dir/slurm.conf" <<CONF
ClusterName=kforgetest
SlurmctldHost=localhost(127.0.0.1)
SlurmctldPort=$(free_port)
SlurmdPort=$(free_port)
SlurmUser=$user
SlurmdUser=root
AuthType=auth/munge
CredType=cred/munge
AuthInfo=socket=$dir/munge.sock
StateSaveLocation=$dir/state
SlurmdSpoolDir=$dir/spool
SlurmctldPidFile=$dir/slurmctld.pid
SlurmdPidFile=$dir/slurmd.pid
SlurmctldLogFile=$dir/log/slurmctld.log
SlurmdLogFile=$dir/log/slurmd.log
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
SelectType=select/cons_tres
SelectTypeParameters=CR_Core
SchedulerType=sched/backfill
SchedulerParameters=bf_interval=1,sched_interval=1
ReturnToService=2
JobRequeue=1
MpiDefault=none
SwitchType=switch/none
SlurmctldTimeout=30
SlurmdTimeout=30
InactiveLimit=0
MinJobAge=300
KillWait=5
JobCompType=jobcomp/none
AccountingStorageType=accounting_storage/none
JobAcctGatherType=jobacct_gather/none
NodeName=localhost NodeAddr=127.0.0.1 CPUs=$cpus RealMemory=$mem State=UNKNOWN
PartitionName=debug Nodes=localhost Default=YES MaxTime=INFINITE State=UP
CONF
	export SLURM_CONF="$dir/slurm.conf"
	slurmctld -i || { tail -n 20 "$dir/log/slurmctld.log" >&2; return 1; }
	slurmd || { tail -n 20 "$dir/log/slurmd.log" >&2; return 1; }
	i=0
	while [ $i -lt 100 ]; do
		if sinfo -h -o %t 2>/dev/null | grep -q '^idle'; then
			return 0
		fi
		sleep 0.2; i=$((i + 1))
	done
	echo "slurm did not come up:" >&2
	tail -n 20 "$dir/log/slurmctld.log" "$dir/log/slurmd.log" >&2
	return 1
}

case "$cmd" in
start) start || { stop; exit 1; } ;;
stop) stop ;;
*) echo "usage: $0 start|stop DIR" >&2; exit 2 ;;
esac
