#!/usr/bin/env bash
# gpu-last.sh: the shortest complete GPU acceptance: the pipeline over three tasks
# (scripted mock LLM, real kernels, real ncu). The adversarial suite is in gpu-evaluator.sh.
set -u
out=${1:-/tmp/egg-gpu}
mkdir -p "$out"
cd "$(dirname "$0")/.."
export PYTHONUNBUFFERED=1 EGG_STORE=$out/store EGG_MODEL=scripted-mock EGG_API_KEY=sk-unused
echo "== $(date +%T) pipeline"
python3 tests/mock/mockllm.py --script bench/gpu_pipeline/script.json --log "$out/mock.jsonl" --port-file "$out/port" >/dev/null 2>&1 &
for _ in $(seq 50); do [ -s "$out/port" ] && break; sleep 0.1; done
export EGG_BASE_URL=http://127.0.0.1:$(cat "$out/port")
timeout 200 build/egg bench --device cuda --jobs 3 --workers-per-device 3 --iters 30 --warmup 3 \
	bench/gpu_pipeline/ew.py bench/gpu_pipeline/softmax.py bench/gpu_pipeline/matmul.py >"$out/bench.txt" 2>&1
echo "bench exit $?"
tail -22 "$out/bench.txt"
build/egg report latest --json >"$out/report.json" 2>/dev/null
sqlite3 "$out/store/egg.db" .dump >"$out/store.sql" 2>/dev/null || cp "$out/store/egg.db" "$out/egg.db"
for d in "$out"/store/runs/*/gpu_pipeline__*; do cp "$d/trajectory.json" "$out/traj-$(basename "$d").json" 2>/dev/null; done
ls "$out"/store/runs/*/gpu_pipeline__ew/calls/ 2>/dev/null | head -3
cat "$out"/store/runs/*/gpu_pipeline__ew/calls/005-*.user.md 2>/dev/null | sed -n '/Profile of the current kernel/,/Reference/p' | head -16
echo "== $(date +%T) done"
