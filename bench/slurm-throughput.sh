#!/usr/bin/env bash
# slurm-throughput.sh: tasks per hour of `egg bench --slurm` with 1 and with 3
# worker steps on a single-host Slurm cluster of its own (tests/slurm/cluster.sh;
# needs root and Slurm), 8 small CPU tasks, the scripted mock LLM, one seed and
# no later stages (the evaluator's and the coordinator's throughput, not the
# model's), and the same locally (--cpu-workers N, no Slurm) for comparison.
# Prints one line per setting.
#
#   bash bench/slurm-throughput.sh [OUT]
set -u
cd "$(dirname "$0")/.."
out=${1:-/tmp/egg-slurm-throughput}
rm -rf "$out"; mkdir -p "$out/tasks"
SLURM_CONF=$(tests/slurm/cluster.sh start "$out/cluster" 8) || exit 3
export SLURM_CONF
trap 'tests/slurm/cluster.sh stop "$out/cluster"; kill $mock 2>/dev/null' EXIT
for t in bias_relu_scale row_sum linear_relu softmax; do
	for c in a b; do cp "tests/tasks/$t.py" "$out/tasks/${t}_$c.py"; done
done
python3 - "$PWD/tests/tasks" >"$out/script.json" <<'PY'
import json, os, sys
d = sys.argv[1]
print(json.dumps([{"match": ["mode: seed", f"Task: tasks__{t}_"], "repeat": True, "wrap": "python",
                   "reply_file": os.path.join(d, f"{t}_kernel.py")} for t in ("bias_relu_scale", "row_sum", "linear_relu", "softmax")]))
PY
python3 tests/mock/mockllm.py --script "$out/script.json" --port-file "$out/port" >/dev/null 2>&1 &
mock=$!
for _ in $(seq 100); do [ -s "$out/port" ] && break; sleep 0.05; done
export EGG_MODEL=mock EGG_API_KEY=sk-unused EGG_BASE_URL=http://127.0.0.1:$(cat "$out/port")
for mode in local slurm; do for n in 1 3; do
	export EGG_STORE=$out/store-$mode-$n
	if [ "$mode" = slurm ]; then where=(--slurm --slurm-workers "$n"); else where=(--cpu-workers "$n" --workers-per-device 1); fi
	t0=$(date +%s.%N)
	build/egg bench "${where[@]}" --device cpu --iters 3 --warmup 1 --compile-mode none --seeds 1 \
		--seed-repairs 0 --no-refine --no-hw-tune --jobs $((2 * n)) --no-cache -q --json --dir "$out/tasks" \
		>"$out/run-$mode-$n.json" 2>"$out/run-$mode-$n.err"
	rc=$?
	t1=$(date +%s.%N)
	python3 - "$out/run-$mode-$n.json" "$n" "$t0" "$t1" "$rc" "$mode" <<'PY'
import json, sys
j = json.load(open(sys.argv[1]))
n, t0, t1, rc = int(sys.argv[2]), float(sys.argv[3]), float(sys.argv[4]), int(sys.argv[5])
tasks = len(j["tasks"])
found = sum(t["found"] for t in j["tasks"])
print(f"{sys.argv[6]:5s} {n} worker(s): {tasks} tasks ({found} with a kernel) in {t1 - t0:.1f} s, exit {rc}: "
      f"{3600 * tasks / (t1 - t0):.0f} tasks per hour")
PY
done; done
