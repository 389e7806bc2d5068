#!/usr/bin/env bash
# scheduler_throughput.sh: tasks per hour of egg bench with 1 and with 2 devices
# (CPU "devices" with the real worker and the Triton interpreter, so that the
# scheduler's placement and per-device exclusivity can be measured without GPUs).
# usage: bash bench/scheduler_throughput.sh [NTASKS]
set -eu
cd "$(dirname "$0")/.."
n=${1:-4}
tmp=$(mktemp -d /tmp/egg-sched-XXXXXX)
trap 'kill $(cat "$tmp/mock.pid") 2>/dev/null; rm -rf "$tmp"' EXIT
mkdir -p "$tmp/t/level1"
for i in $(seq "$n"); do cp tests/tasks/bias_relu_scale.py "$tmp/t/level1/task$i.py"; done
python3 tests/mock/mockllm.py --script tests/pipeline/any.json --port-file "$tmp/port" >/dev/null 2>&1 &
echo $! >"$tmp/mock.pid"
for _ in $(seq 50); do [ -s "$tmp/port" ] && break; sleep 0.1; done
export EGG_BASE_URL=http://127.0.0.1:$(cat "$tmp/port") EGG_MODEL=mock EGG_API_KEY=sk-bench
for d in 1 2; do
	s=$(date +%s.%N)
	EGG_STORE=$tmp/s$d build/egg bench -q --no-cache --device cpu --cpu-workers $d --workers-per-device 1 --jobs $((2 * d)) \
		--no-profile --stages mapping --iters 3 --warmup 1 --compile-mode none --dir "$tmp/t" >/dev/null 2>&1 || true
	e=$(date +%s.%N)
	python3 -c "import sys; w=$e-$s; print(f'{$d} device(s): {$n} tasks in {w:.1f} s = {$n/w*3600:.0f} tasks/hour')"
done
