#!/usr/bin/env bash
# cluster.sh: a single-host Slurm cluster of its own, for tests and benchmarks
# of `egg bench --slurm`: munged, slurmctld and one slurmd with a generated
# configuration, all state under DIR, on ports of their own. Needs root and
# Debian's slurmctld, slurmd, slurm-client and munge packages
# (scripts/setup.sh installs them).
#
#   tests/slurm/cluster.sh start DIR [CPUS]   # prints the SLURM_CONF to export
#   tests/slurm/cluster.sh stop DIR
#
# CPUS (default 8) is what the node offers (more than the machine has is
# allowed: config_overrides), so that several one-CPU worker steps fit.
set -u
cmd=${1:?start or stop}; dir=${2:?DIR}; cpus=${3:-8}

stop() {
	for f in "$dir"/run/slurmd.pid "$dir"/run/slurmctld.pid "$dir"/munge/munged.pid; do
		[ -s "$f" ] && kill "$(cat "$f")" 2>/dev/null
	done
	sleep 0.5
	for f in "$dir"/run/slurmd.pid "$dir"/run/slurmctld.pid "$dir"/munge/munged.pid; do
		[ -s "$f" ] && kill -9 "$(cat "$f")" 2>/dev/null
		rm -f "$f"
	done
	return 0
}

if [ "$cmd" = stop ]; then
	stop
	exit 0
fi

for b in munged slurmctld slurmd srun sinfo squeue scancel; do
	command -v "$b" >/dev/null || { echo "cluster.sh: $b is not installed (run scripts/setup.sh)" >&2; exit 2; }
done
[ "$(id -u)" -eq 0 ] || { echo "cluster.sh: needs root (slurmd runs the steps as their user)" >&2; exit 2; }
[ -r /etc/munge/munge.key ] || { echo "cluster.sh: no /etc/munge/munge.key" >&2; exit 2; }
mkdir -p "$dir"/state "$dir"/spool "$dir"/log "$dir"/run "$dir"/munge
node=$(hostname -s)
port=$((20000 + (RANDOM % 20000)))
cat >"$dir/slurm.conf" <<CONF
ClusterName=egg$$
SlurmctldHost=$node(127.0.0.1)
SlurmctldPort=$port
SlurmdPort=$((port + 1))
AuthType=auth/munge
AuthInfo=socket=$dir/munge/munge.socket
CredType=cred/munge
SlurmUser=root
SlurmdUser=root
StateSaveLocation=$dir/state
SlurmdSpoolDir=$dir/spool
SlurmctldPidFile=$dir/run/slurmctld.pid
SlurmdPidFile=$dir/run/slurmd.pid
SlurmctldLogFile=$dir/log/slurmctld.log
SlurmdLogFile=$dir/log/slurmd.log
SlurmdParameters=config_overrides
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
SelectType=select/cons_tres
SelectTypeParameters=CR_CPU
SchedulerType=sched/builtin
ReturnToService=2
MpiDefault=none
JobAcctGatherType=jobacct_gather/none
AccountingStorageType=accounting_storage/none
NodeName=$node NodeAddr=127.0.0.1 CPUs=$cpus State=UNKNOWN
PartitionName=egg Nodes=ALL Default=YES MaxTime=INFINITE State=UP OverSubscribe=YES
CONF
export SLURM_CONF=$dir/slurm.conf
munged --socket="$dir/munge/munge.socket" --pid-file="$dir/munge/munged.pid" \
	--log-file="$dir/munge/munged.log" --seed-file="$dir/munge/seed" --force || { stop; exit 3; }
slurmctld -f "$SLURM_CONF" || { stop; exit 3; }
slurmd -f "$SLURM_CONF" || { stop; exit 3; }
for _ in $(seq 60); do
	if sinfo -h -o %t 2>/dev/null | grep -q '^idle'; then
		echo "$SLURM_CONF"
		exit 0
	fi
	sleep 0.5
done
echo "cluster.sh: the node did not come up: $(sinfo -h 2>&1 | head -1); $(tail -2 "$dir/log/slurmctld.log" 2>/dev/null)" >&2
stop
exit 3
