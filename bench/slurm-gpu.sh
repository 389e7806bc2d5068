#!/usr/bin/env bash
# slurm-gpu.sh: egg's Slurm path on a GPU box of its own (issue "Slurm on a
# GPU node"): a one-node Slurm cluster brought up from unpacked Debian
# packages on a machine with a GPU, its GPU a gres (and two shards of it, so
# that two worker steps share it), then egg doctor --slurm, egg bench of five
# full-size KernelBench tasks with the scripted model beside the same run
# without Slurm, and one worker step cancelled in the middle of a GPU
# evaluation; the cluster is torn down at the end. Any one-GPU box with root
# can try the Slurm path this way (docs/slurm.md).
#
#   bash bench/slurm-gpu.sh --fetch           here, with apt: the .deb files into .slurm-debs/ (about 16 MB)
#   bash bench/slurm-gpu.sh KB OUT            on the GPU box, build/egg and .slurm-debs/ beside it
#
# KB: KernelBench's task folder (level1/...). OUT gets doctor.txt, the runs'
# JSON, the cluster's logs and summary.json (verdicts and kernel times side
# by side, wall times, the cancelled step's retry). DEVICE=cpu and
# CLUSTER_GPU_FILE=/dev/null try the same steps without a GPU (CPU workers,
# a stand-in device file for the gres).
set -u
cd "$(dirname "$0")/.."
if [ "${1:-}" = --fetch ]; then
	mkdir -p .slurm-debs && cd .slurm-debs || exit 2
	# Debian 12's Slurm 22.05 and munge with the libraries a CUDA image may
	# lack (unpacked, not installed: nothing of the machine's is replaced).
	apt-get download slurmctld slurmd slurm-client slurm-wlm-basic-plugins munge libmunge2 libhwloc15 liblz4-1 \
		libnuma1 libjson-c5 liblua5.1-0 libyaml-0-2 libreadline8 readline-common libdbus-1-3 libgcrypt20 \
		libgpg-error0 libbz2-1.0 libpam0g libxml2 libicu72 liblzma5 libudev1 libsystemd0 libtinfo6
	exit $?
fi
kb=${1:?KB}; out=${2:?OUT}
device=${DEVICE:-cuda}
egg=${EGG:-build/egg}
mkdir -p "$out"
root=/tmp/egg-slurm-root cl=/tmp/egg-slurm-cluster
rm -rf "$root" "$cl"
mkdir -p "$root"
for f in .slurm-debs/*.deb; do dpkg -x "$f" "$root" || exit 2; done
export SLURM_ROOT=$root PYTHONUNBUFFERED=1
mock=
trap 'bash tests/slurm/cluster.sh stop "$cl"; cp -r "$cl/log" "$out/cluster-logs" 2>/dev/null; cp "$cl"/munge/*.log "$out/cluster-logs/" 2>/dev/null; [ -n "$mock" ] && kill $mock 2>/dev/null' EXIT
if ! bash tests/slurm/cluster.sh start "$cl" 16 1 2 >/dev/null 2>"$out/cluster.err"; then
	# The daemons say why in their logs, not on standard error.
	echo "the cluster did not start:"; cat "$out/cluster.err"
	tail -n 5 "$cl"/log/*.log "$cl"/munge/*.log 2>/dev/null
	exit 3
fi
. "$cl/env.sh"
{ cat "$cl/slurm.conf"; echo "--- gres.conf"; cat "$cl/gres.conf"; } >"$out/cluster-conf.txt"
sinfo -o "%N %G %c %t" | tee "$out/sinfo.txt"

# What a step sees: the GPU each of two shard steps gets, side by side.
for i in 1 2; do
	srun --gres=shard:1 bash -c 'echo "step $SLURM_JOB_ID: CUDA_VISIBLE_DEVICES=$CUDA_VISIBLE_DEVICES"; sleep 2' &
done >"$out/steps.txt" 2>&1
wait
cat "$out/steps.txt"

# egg doctor --slurm: sinfo, and the worker probe as a step with the GPU.
"$egg" doctor --slurm --device "$device" --slurm-args "--gres=shard:1" >"$out/doctor.txt" 2>&1
echo "doctor exit $?" >>"$out/doctor.txt"
cat "$out/doctor.txt"

# Five full-size KernelBench tasks; the scripted model's seed for each is
# our honest kernel (bench/kernels), refinement "not worth it", tuning
# "no change".
TASKS=(level1/19_ReLU:kb1_19_relu level1/23_Softmax:kb1_23_softmax level1/25_Swish:kb1_25_swish
	level1/98_KLDivLoss:kb1_98_kldiv level1/1_Square_matrix_multiplication_:kb1_1_matmul)
mkdir -p "$out/tasks/level1"
for tk in "${TASKS[@]}"; do cp "$kb/${tk%%:*}.py" "$out/tasks/level1/" || exit 2; done
python3 - "$out/script.json" "${TASKS[@]}" <<'PY'
import json, os, sys
path, tasks = sys.argv[1], sys.argv[2:]
s = [{"match": ["mode: seed", "Task: " + t.split(":")[0].replace("/", "__") + "."], "repeat": True, "wrap": "python",
      "reply_file": os.path.abspath(f"bench/kernels/{t.split(':')[1]}.py")} for t in tasks]
s.append({"match": ["Role: profile agent, mode: algorithmic refinement"], "repeat": True,
          "reply": json.dumps({"worth_optimizing": "no", "bottleneck": "memory bound", "modification_plan": "none"})})
s.append({"match": ["Role: profile agent"], "repeat": True,
          "reply": json.dumps({"change": "no", "bottleneck": "fine", "modification_plan": "keep"})})
json.dump(s, open(path, "w"))
PY
python3 tests/mock/mockllm.py --script "$out/script.json" --port-file "$out/port" >/dev/null 2>&1 &
mock=$!
for _ in $(seq 100); do [ -s "$out/port" ] && break; sleep 0.1; done
export EGG_BASE_URL=http://127.0.0.1:$(cat "$out/port") EGG_MODEL=mock EGG_API_KEY=sk-mock
FLAGS=(--device "$device" --seeds 1 --no-cache --no-profile -q --json --dir "$out/tasks/level1")

run() { # run NAME ARGS...: one egg bench, its JSON and wall time
	local name=$1; shift
	local t0 t1
	t0=$(date +%s.%N)
	EGG_STORE=$out/store-$name timeout 1500 "$egg" bench "${FLAGS[@]}" "$@" >"$out/$name.json" 2>"$out/$name.err"
	echo "$? $(date +%s.%N) $t0" >"$out/$name.rc"
}
run local --jobs 2
run slurm --slurm --slurm-workers 2 --slurm-args "--gres=shard:1"
# The cancelled step: the worker marks the moment a candidate runs with its
# Slurm job id and waits there (EGG_WORKER_LOSS, as tests/cli/t70-slurm.sh
# does on the CPU), and that step is cancelled.
rm -f "$out/reached"
printf '{"moment": "run", "op": "eval", "action": "wait", "mark": "%s"}\n' "$out/reached" >"$out/loss.json"
EGG_WORKER_LOSS=$out/loss.json run cancelled --slurm --slurm-workers 2 --slurm-args "--gres=shard:1" &
bench=$!
for _ in $(seq 6000); do [ -s "$out/reached" ] || ! kill -0 "$bench" 2>/dev/null && break; sleep 0.1; done
victim=$(cat "$out/reached" 2>/dev/null)
[ -n "$victim" ] && scancel "$victim" && echo "cancelled Slurm job $victim in the middle of a GPU evaluation"
wait "$bench"

python3 - "$out" "$victim" <<'PY' | tee "$out/summary.json"
import glob, json, os, sys
out, victim = sys.argv[1], sys.argv[2]
rows = {}
for name in ("local", "slurm", "cancelled"):
    rc, t1, t0 = open(os.path.join(out, name + ".rc")).read().split()
    try:
        j = json.load(open(os.path.join(out, name + ".json")))
    except ValueError:
        j = {"tasks": []}
    devs = glob.glob(os.path.join(out, "store-" + name, "runs", "*", "devices.json"))
    d = json.load(open(devs[0])) if devs else []
    rows[name] = {"rc": int(rc), "wall_s": round(float(t1) - float(t0), 1),
                  "tasks": {t["task_id"]: {"found": t["found"], "status": t["status"], "kernel_ms": t.get("kernel_ms"),
                                           "eager_ms": t.get("eager_ms")} for t in j["tasks"]},
                  "jobs_retried": sum(x.get("jobs_retried", 0) for x in d),
                  "worker_starts": sum(x.get("worker_starts", 0) for x in d)}
same = all(rows["local"]["tasks"].get(t, {}).get("found") == rows[n]["tasks"].get(t, {}).get("found")
           for n in ("slurm", "cancelled") for t in rows["local"]["tasks"])
ratios = {t: (rows["slurm"]["tasks"][t]["kernel_ms"] or 0) / v["kernel_ms"]
          for t, v in rows["local"]["tasks"].items() if v.get("kernel_ms") and t in rows["slurm"]["tasks"]}
print(json.dumps({"runs": rows, "same_verdicts": same, "slurm_over_local_kernel_ms": ratios,
                  "cancelled_job": victim or None}, indent=1))
PY
