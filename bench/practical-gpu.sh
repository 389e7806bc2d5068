#!/usr/bin/env bash
# practical-gpu.sh KB OUT: the practical bound on a GPU (issue "On the GPU",
# item 1) in one go: egg's reference GEMMs beside cuBLAS
# (bench/gemm-practical.py: OUT/gemm.json and the table), egg doctor
# --calibrate (OUT/calibrate.txt: each scheme's rate, kernel and share of
# cuBLAS), and the first prompt egg sends for a GEMM-bound task
# (KernelBench level 1's square matrix product, through --llm-spool; no
# model is called) with the rates it states (OUT/gemm-prompt.txt). KB is
# KernelBench's task folder. Build egg first; EGG names the binary.
set -u
kb=${1:?KB}; out=${2:?OUT}
EGG=${EGG:-build/egg}
mkdir -p "$out"
export PYTHONUNBUFFERED=1
python3 bench/gemm-practical.py --json "$out/gemm.json"
store=$(mktemp -d)
export EGG_STORE=$store EGG_MODEL=prompt-only EGG_PROVIDER=anthropic EGG_API_KEY=unused-with-a-spool
"$EGG" doctor --calibrate 2>&1 | grep -E "^(calibration|practical)" | tee "$out/calibrate.txt"
"$EGG" optimize "$kb/level1/1_Square_matrix_multiplication_.py" --llm-spool "$store/spool" --seeds 1 -q --json \
	>"$store/optimize.json" 2>"$store/optimize.err"
echo "egg optimize (waits for its first reply): exit $?"
python3 scripts/spool-render.py "$store/spool" "$store/prompts" >/dev/null && cat "$store/prompts"/*.txt >"$out/gemm-prompt.txt"
grep -o "measured peaks[^;]*;[^;]*;[^;]*" "$out/gemm-prompt.txt" | head -2
