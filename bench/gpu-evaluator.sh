#!/usr/bin/env bash
# gpu-evaluator.sh: the evaluator's GPU acceptance run (issue: evaluator).
#   part 1: doctor, the adversarial suite on CUDA, ncu agreement
#   part 2: per-candidate overhead (forking worker vs fresh Python), repeatability
# usage: bash bench/gpu-evaluator.sh 1|2 OUTDIR   (needs build/egg and a GPU)
set -u
part=$1
out=${2:-/tmp/egg-gpu}
mkdir -p "$out"
export PYTHONUNBUFFERED=1 EGG_STORE=$out/store
cd "$(dirname "$0")/.."
if [ "$part" = 1 ]; then
	EGG_MODEL=none EGG_API_KEY=sk-unused build/egg doctor >"$out/doctor.txt" 2>&1
	cat "$out/doctor.txt"
	python3 tests/worker/test_adversarial.py cuda 2>&1 | tee "$out/adversarial.txt" | grep -E '^(not ok|#)'
	bash bench/ncu_agreement.sh build/egg ew_big softmax_big rowsum_big matmul_big conv_big 2>&1 | tee "$out/agreement.txt"
else
	(cd bench && python3 eval_overhead.py --device cuda --reps 3) 2>&1 | tee "$out/overhead.txt"
	(cd bench && python3 repeatability.py --runs 10 matmul_big conv_big ew_big) 2>&1 | tee "$out/repeatability.txt"
fi
