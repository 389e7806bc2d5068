#!/usr/bin/env bash
# gpu-worker-loss.sh: the worker lost in the middle of a full-size GPU job
# (issue "A lost worker's job became a kernel verdict"): at each loss point
# that lands inside a job (faults.py: the worker killed while the candidate
# runs on the GPU, the candidate's process killed behind the worker's back,
# half a reply written), `egg eval` must give the verdict an undisturbed run
# gives, after one retry on a fresh worker; lost twice, exit 3.
#
#   bash bench/gpu-worker-loss.sh KB OUT        (KB: KernelBench's task folder)
set -u
kb=${1:?KB}; out=${2:?OUT}
cd "$(dirname "$0")/.."
mkdir -p "$out"
export EGG_STORE=$out/store EGG_WORKER_LOSS=$out/loss.json
task=$kb/level1/25_Swish.py kernel=bench/kernels/kb1_25_swish.py
for spec in none '{"moment": "run", "op": "eval"}' '{"moment": "run", "op": "eval", "action": "kill-job"}' \
	'{"moment": "reply", "op": "eval"}' '{"moment": "run", "op": "eval", "times": 2, "action": "kill-job"}'; do
	if [ "$spec" = none ]; then rm -f "$EGG_WORKER_LOSS"; else printf '%s\n' "$spec" >"$EGG_WORKER_LOSS"; fi
	t0=$(date +%s.%N)
	timeout 300 build/egg eval --device cuda --no-baseline --json "$task" "$kernel" >"$out/eval.json" 2>"$out/eval.err"
	rc=$?
	t1=$(date +%s.%N)
	python3 - "$out/eval.json" "$spec" "$rc" "$t0" "$t1" "$out/eval.err" <<'PY' | tee -a "$out/worker-loss.jsonl"
import json, sys
path, spec, rc, t0, t1, err = sys.argv[1], sys.argv[2], int(sys.argv[3]), float(sys.argv[4]), float(sys.argv[5]), sys.argv[6]
try:
    j = json.load(open(path))
except ValueError:
    j = {}
print(json.dumps({"loss": spec, "rc": rc, "verdict": j.get("verdict"), "kernel_ms": j.get("kernel_ms"),
                  "worker_retries": j.get("worker_retries"), "seconds": round(t1 - t0, 1),
                  "error": open(err).read().strip().splitlines()[-1:] if rc else None}))
PY
done
