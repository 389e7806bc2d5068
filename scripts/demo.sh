#!/usr/bin/env bash
# demo.sh [OUT]: egg's main job end to end without a GPU or an API key.
# A local scripted model (tests/mock/mockllm.py with the suite's own script,
# tests/pipeline/bench.json) answers every agent for the example task
# tests/tasks/bias_relu_scale.py (relu(x + bias) * 1.5): two seeds, one of
# which fails to compile and is repaired by the debug agent, a refinement the
# profile agent asks for, and the three tuning stages. egg evaluates every
# kernel for real (Triton's interpreter on the CPU, so times are CPU times),
# then writes the report. Everything lands in OUT (default ./egg-demo).
# Run it as `make demo` (builds egg first).
set -eu
cd "$(dirname "$0")/.."
out=$(mkdir -p "${1:-egg-demo}" && cd "${1:-egg-demo}" && pwd)
egg=${EGG_BIN:-$PWD/build/egg}
[ -x "$egg" ] || { echo "demo: $egg is not built; run make first" >&2; exit 2; }
rm -rf "$out/store" "$out/run" "$out/port" "$out/llm-requests.jsonl"
python3 tests/mock/mockllm.py --script tests/pipeline/bench.json --port-file "$out/port" \
	--log "$out/llm-requests.jsonl" >/dev/null 2>&1 &
mock=$!
trap 'kill $mock 2>/dev/null' EXIT
for _ in $(seq 100); do [ -s "$out/port" ] && break; sleep 0.05; done
[ -s "$out/port" ] || { echo "demo: the scripted model did not start" >&2; exit 3; }
export EGG_MODEL=scripted-demo EGG_BASE_URL="http://127.0.0.1:$(cat "$out/port")" EGG_STORE="$out/store"
unset EGG_API_KEY OPENAI_API_KEY ANTHROPIC_API_KEY EGG_CONFIG
echo "== egg optimize tests/tasks/bias_relu_scale.py (scripted model, CPU)" >&2
"$egg" optimize tests/tasks/bias_relu_scale.py --device cpu --iters 10 --warmup 2 --compile-mode none \
	--run-dir "$out/run" -o "$out/final.py"
echo "== egg report latest" >&2
"$egg" report latest
echo "== egg report latest --html $out/report.html" >&2
"$egg" report latest --html "$out/report.html"
echo >&2
echo "Each stage's outcome (run/decisions.jsonl):" >&2
python3 - "$out/run/decisions.jsonl" >&2 <<'PY'
import json, sys
for line in open(sys.argv[1]):
    d = json.loads(line)
    print(f"  [{d['stage']}] {d['text']}")
PY
cat >&2 <<MSG

The demo's files, in $out:
  final.py          the kernel egg kept (check it again: egg eval tests/tasks/bias_relu_scale.py $out/final.py --device cpu)
  run/              every prompt, reply, kernel, evaluation and decision of the run
  report.html       the run's report (open it in a browser)
  llm-requests.jsonl what egg sent to the scripted model
  store/            the run store: egg runs --store $out/store; egg report latest --store $out/store
Next: the real job, with your model and a GPU (README, "Using egg").
MSG
