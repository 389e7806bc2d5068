#!/usr/bin/env bash
# run.sh: the pipeline's second witness on a GPU. Seed 1 hides its work on a
# side stream during the timing spin; egg eval alone should pass it with a
# small time, and `egg optimize` should discard it because Nsight Compute
# measures the real GPU time of its kernels. (Run on an H200 with a 0.4 ms host
# sleep: the launch outgrew the spin's cap, so the hidden work gained nothing —
# 0.226 ms against the honest 0.130 — and the witness had nothing to catch;
# the sleep is now 0.25 ms.) usage: bash bench/gpu_witness/run.sh OUTDIR
set -u
out=${1:-/tmp/egg-witness}
mkdir -p "$out"
cd "$(dirname "$0")/../.."
export PYTHONUNBUFFERED=1 EGG_STORE=$out/store EGG_MODEL=scripted-mock EGG_API_KEY=sk-unused
w=bench/gpu_witness
echo "== $(date +%T) egg eval of the hostile kernel"
timeout 90 build/egg eval --device cuda --json bench/gpu_pipeline/ew.py $w/ew_hidden_side_stream.py >"$out/eval.json" 2>"$out/eval.err"
echo "eval exit $?"
python3 -c 'import json,sys; j=json.load(open(sys.argv[1])); print({k: j.get(k) for k in ("verdict","stage","reason","kernel_ms","eager_ms","flags")}); print({k: j["timing"].get(k) for k in ("spin_ms","launch_median","wall_per_call_ms")} if j.get("timing") else "")' "$out/eval.json"
echo "== $(date +%T) egg optimize with seeds: hostile, honest"
python3 tests/mock/mockllm.py --script $w/script.json --log "$out/mock.jsonl" --port-file "$out/port" >/dev/null 2>&1 &
for _ in $(seq 50); do [ -s "$out/port" ] && break; sleep 0.1; done
export EGG_BASE_URL=http://127.0.0.1:$(cat "$out/port")
timeout 240 build/egg optimize --device cuda --no-refine --no-hw-tune --seed-repairs 0 --run-dir "$out/run" -o "$out/final.py" bench/gpu_pipeline/ew.py >"$out/optimize.txt" 2>&1
echo "optimize exit $?"
cat "$out/run/decisions.jsonl" 2>/dev/null
head -1 "$out/final.py"
echo "== $(date +%T) done"
