#!/usr/bin/env bash
# cluster.sh: a single-host Slurm cluster of its own, for tests and benchmarks
# of `egg bench --slurm`: munged, slurmctld and one slurmd with a generated
# configuration, all state under DIR, on ports of their own. Needs root and
# Debian's slurmctld, slurmd, slurm-client and munge packages
# (scripts/setup.sh installs them).
#
#   tests/slurm/cluster.sh start DIR [CPUS [GPUS [SHARDS]]]   # prints the SLURM_CONF to export
#   tests/slurm/cluster.sh stop DIR
#
# CPUS (default 8) is what the node offers (more than the machine has is
# allowed: config_overrides), so that several one-CPU worker steps fit.
# GPUS (default 0) GPUs are offered as a gres (gres.conf: /dev/nvidia0 ...,
# or the file CLUSTER_GPU_FILE for each, a stand-in where there is no GPU),
# so that `srun --gpus=1` gets one and CUDA_VISIBLE_DEVICES; SHARDS (default
# 0) shares of them as gres/shard, so that several steps can share one GPU
# (`--gres=shard:1`). SLURM_ROOT, when set, is a folder where Debian's Slurm
# and munge packages were unpacked (dpkg -x): their programs, libraries and
# plugins are used, and a munge key of its own is made when the machine has
# none. DIR/env.sh exports what a client needs (SLURM_CONF, and with
# SLURM_ROOT its PATH and LD_LIBRARY_PATH).
set -u
cmd=${1:?start or stop}; dir=${2:?DIR}; cpus=${3:-8}; gpus=${4:-0}; shards=${5:-0}
root=${SLURM_ROOT:-}
if [ -n "$root" ]; then
	# Debian names its daemons NAME-wlm and links NAME to them at install
	# (update-alternatives), which an unpacked package has not done.
	for d in slurmctld slurmd slurmstepd; do
		[ -e "$root/usr/sbin/$d" ] || [ ! -e "$root/usr/sbin/$d-wlm" ] || ln -s "$d-wlm" "$root/usr/sbin/$d"
	done
	export PATH=$root/usr/sbin:$root/usr/bin:$root/sbin:$PATH
	export LD_LIBRARY_PATH=$root/usr/lib/x86_64-linux-gnu/slurm-wlm:$root/usr/lib/x86_64-linux-gnu:$root/lib/x86_64-linux-gnu${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
fi

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

fail() { # fail DAEMON LOG: it exited at its start; what its log says, then stop
	echo "cluster.sh: $1 did not start: $(tail -n 3 "$2" 2>/dev/null | tr '\n' ' ')" >&2
	stop
	exit 3
}

if [ "$cmd" = stop ]; then
	stop
	exit 0
fi

for b in munged slurmctld slurmd srun sinfo squeue scancel; do
	command -v "$b" >/dev/null || { echo "cluster.sh: $b is not installed (run scripts/setup.sh)" >&2; exit 2; }
done
[ "$(id -u)" -eq 0 ] || { echo "cluster.sh: needs root (slurmd runs the steps as their user)" >&2; exit 2; }
mkdir -p "$dir"/state "$dir"/spool "$dir"/log "$dir"/run "$dir"/munge
key=/etc/munge/munge.key
if [ ! -r "$key" ] && [ -n "$root" ]; then
	key=$dir/munge/munge.key
	head -c 1024 /dev/urandom >"$key" && chmod 0400 "$key"
fi
[ -r "$key" ] || { echo "cluster.sh: no /etc/munge/munge.key" >&2; exit 2; }
if [ -n "$root" ] && [ ! -e /usr/sbin/slurmstepd ]; then
	# slurmd starts each step's slurmstepd from the path it was built with.
	mkdir -p /usr/sbin && ln -s "$root/usr/sbin/slurmstepd" /usr/sbin/slurmstepd
fi
gres_line= gres_types=
if [ "$gpus" -gt 0 ]; then
	gres_types=gpu
	: >"$dir/gres.conf"
	files=
	for i in $(seq 0 $((gpus - 1))); do
		f=${CLUSTER_GPU_FILE:-/dev/nvidia$i}
		[ -e "$f" ] || { echo "cluster.sh: no GPU device file $f" >&2; exit 2; }
		echo "Name=gpu File=$f" >>"$dir/gres.conf"
		files=$files${files:+,}$f
	done
	gres_line="Gres=gpu:$gpus"
	if [ "$shards" -gt 0 ]; then
		echo "Name=shard Count=$shards File=$files" >>"$dir/gres.conf"
		gres_line="$gres_line,shard:$shards"
		gres_types=gpu,shard
	fi
fi
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
${gres_types:+GresTypes=$gres_types}
${root:+PluginDir=$root/usr/lib/x86_64-linux-gnu/slurm-wlm}
NodeName=$node NodeAddr=127.0.0.1 CPUs=$cpus $gres_line State=UNKNOWN
PartitionName=egg Nodes=ALL Default=YES MaxTime=INFINITE State=UP OverSubscribe=YES
CONF
# No step is tracked or confined by cgroups here (linuxproc, task/none), yet
# slurmd still starts a cgroup plugin: on a cgroup-v2 host it autodetects
# v2, which wants systemd's dbus or a writable /sys/fs/cgroup that a
# container does not have, and slurmd exits. The v1 plugin starts anywhere
# when nothing asks it for a cgroup.
echo "CgroupPlugin=cgroup/v1" >"$dir/cgroup.conf"
export SLURM_CONF=$dir/slurm.conf
{
	echo "export SLURM_CONF='$SLURM_CONF'"
	[ -n "$root" ] && echo "export PATH='$PATH' LD_LIBRARY_PATH='$LD_LIBRARY_PATH'"
} >"$dir/env.sh"
munged --socket="$dir/munge/munge.socket" --pid-file="$dir/munge/munged.pid" --key-file="$key" \
	--log-file="$dir/munge/munged.log" --seed-file="$dir/munge/seed" --force || fail munged "$dir/munge/munged.log"
slurmctld -f "$SLURM_CONF" || fail slurmctld "$dir/log/slurmctld.log"
slurmd -f "$SLURM_CONF" || fail slurmd "$dir/log/slurmd.log"
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
