#!/usr/bin/env bash
# gpu-evaluator.sh: the evaluator's GPU acceptance run (issue: evaluator), in
# parts that each fit one device call:
#   part 1: ncu agreement under both clocks (5 kernels), repeatability (10 runs)
#   part 2: doctor, the adversarial suite on CUDA
#   part 3: per-candidate overhead (forking worker vs fresh Python, 5 tasks)
# Each step has its own time limit so that a slow one cannot eat the others.
# usage: bash bench/gpu-evaluator.sh 1|2|3 OUTDIR   (needs build/egg and a GPU)
# Exits non-zero when any step failed (each step's output is kept either way).
set -u
part=$1
out=${2:-/tmp/egg-gpu}
mkdir -p "$out"
export PYTHONUNBUFFERED=1 EGG_STORE=$out/store
cd "$(dirname "$0")/.."
failed=0
step() { echo "== $(date +%T) $*"; }
case "$part" in
1)
	step agreement
	timeout 330 bash bench/ncu_agreement.sh build/egg ew_big softmax_big rowsum_big matmul_big conv_big 2>&1 | tee "$out/agreement.txt"
	[ "${PIPESTATUS[0]}" -eq 0 ] || failed=1
	step repeatability
	(cd bench && timeout 230 python3 repeatability.py --runs 10 matmul_big conv_big) 2>&1 | tee "$out/repeatability.txt"
	[ "${PIPESTATUS[0]}" -eq 0 ] || failed=1
	;;
2)
	step doctor
	EGG_MODEL=none EGG_API_KEY=sk-unused timeout 120 build/egg doctor >"$out/doctor.txt" 2>&1
	step adversarial
	timeout 450 python3 tests/worker/test_adversarial.py cuda >"$out/adversarial.txt" 2>&1
	adv_rc=$?
	grep -E '^(not ok|# [a-z0-9_]+\.py:)' "$out/adversarial.txt"
	echo "== adversarial suite: exit $adv_rc"
	[ "$adv_rc" -eq 0 ] || failed=1
	;;
3)
	step overhead
	(cd bench && timeout 540 python3 eval_overhead.py --device cuda --reps 1) 2>&1 | tee "$out/overhead.txt"
	[ "${PIPESTATUS[0]}" -eq 0 ] || failed=1
	;;
esac
step done
exit "$failed"
