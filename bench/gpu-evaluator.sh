#!/usr/bin/env bash
# gpu-evaluator.sh: the evaluator's GPU acceptance run (issue: evaluator).
#   part 1: doctor, the adversarial suite on CUDA, ncu agreement
#   part 2: per-candidate overhead (forking worker vs fresh Python), repeatability
# Each step has its own time limit so that a slow one cannot eat the others.
# usage: bash bench/gpu-evaluator.sh 1|2 OUTDIR   (needs build/egg and a GPU)
set -u
part=$1
out=${2:-/tmp/egg-gpu}
mkdir -p "$out"
export PYTHONUNBUFFERED=1 EGG_STORE=$out/store
cd "$(dirname "$0")/.."
step() { echo "== $(date +%T) $*"; }
if [ "$part" = 1 ]; then
	step doctor
	EGG_MODEL=none EGG_API_KEY=sk-unused timeout 120 build/egg doctor >"$out/doctor.txt" 2>&1
	step adversarial
	timeout 330 python3 tests/worker/test_adversarial.py cuda >"$out/adversarial.txt" 2>&1
	grep -E '^(not ok|# [a-z0-9_]+\.py:)' "$out/adversarial.txt"
	step agreement
	timeout 150 bash bench/ncu_agreement.sh build/egg ew_big matmul_big conv_big 2>&1 | tee "$out/agreement.txt"
	step done
else
	step overhead
	(cd bench && timeout 300 python3 eval_overhead.py --device cuda --reps 2) 2>&1 | tee "$out/overhead.txt"
	step repeatability
	(cd bench && timeout 240 python3 repeatability.py --runs 10 matmul_big conv_big) 2>&1 | tee "$out/repeatability.txt"
	step done
fi
