#!/usr/bin/env bash
# gpu-final.sh: one prioritized GPU acceptance run (issues: pipeline, evaluator, bench).
#   1. egg bench over three GPU tasks with a scripted mock LLM and real ncu (the pipeline acceptance)
#   2. the GPU-relevant adversarial candidates
#   3. repeatability of kernel_ms, 4. per-candidate overhead
# Each step has a time cap so that one slow step cannot starve the others.
# usage: bash bench/gpu-final.sh OUTDIR
set -u
out=${1:-/tmp/egg-gpu}
mkdir -p "$out"
cd "$(dirname "$0")/.."
export PYTHONUNBUFFERED=1 EGG_STORE=$out/store EGG_MODEL=scripted-mock EGG_API_KEY=sk-unused
step() { echo "== $(date +%T) $*"; }
step doctor
timeout 40 build/egg doctor >"$out/doctor.txt" 2>&1
step pipeline
python3 tests/mock/mockllm.py --script bench/gpu_pipeline/script.json --log "$out/mock.jsonl" --port-file "$out/port" >/dev/null 2>&1 &
for _ in $(seq 50); do [ -s "$out/port" ] && break; sleep 0.1; done
export EGG_BASE_URL=http://127.0.0.1:$(cat "$out/port")
timeout 270 build/egg bench --device cuda --jobs 3 --workers-per-device 3 --iters 50 --warmup 5 \
	bench/gpu_pipeline/ew.py bench/gpu_pipeline/softmax.py bench/gpu_pipeline/matmul.py >"$out/bench.txt" 2>&1
echo "bench exit $?"
tail -30 "$out/bench.txt"
build/egg report latest --json >"$out/report.json" 2>/dev/null
cp "$out"/store/egg.db "$out/egg.db" 2>/dev/null
tar czf "$out/runs.tgz" -C "$out/store" runs 2>/dev/null
step adversarial
EGG_ADV_ONLY="h00 c04 c06 c07_patch_timer c09 c11_tf32 c12_degenerate c14 h01 h03 h04" \
	timeout 100 python3 tests/worker/test_adversarial.py cuda >"$out/adversarial.txt" 2>&1
grep -E '^(not ok|# [a-z0-9_]+\.py:)' "$out/adversarial.txt"
step repeatability
(cd bench && timeout 45 python3 repeatability.py --runs 8 matmul_big) 2>&1 | tee "$out/repeatability.txt"
step overhead
(cd bench && timeout 50 python3 eval_overhead.py --device cuda --reps 1) 2>&1 | tee "$out/overhead.txt"
step done
