#!/usr/bin/env bash
# orchestrator.sh: egg bench's own overhead and memory, with the mock LLM
# answering at once and a trivially fast fake worker.
#   1. 100 tasks, --no-cache (every LLM call goes to the mock): total wall time
#      vs the time spent waiting on the LLM and the workers.
#   2. peak RSS of egg bench with 250 tasks in the store.
# usage: bash bench/orchestrator.sh   (after make)
set -eu
cd "$(dirname "$0")/.."
tmp=$(mktemp -d /tmp/egg-orch-XXXXXX)
trap 'kill $(cat "$tmp/mock.pid") 2>/dev/null; rm -rf "$tmp"' EXIT
mkdir -p "$tmp/t100/level1" "$tmp/t250/level1"
for i in $(seq 100); do cp tests/tasks/bias_relu_scale.py "$tmp/t100/level1/task$i.py"; done
for i in $(seq 250); do cp tests/tasks/bias_relu_scale.py "$tmp/t250/level1/task$i.py"; done
python3 tests/mock/mockllm.py --script tests/pipeline/any.json --port-file "$tmp/port" >/dev/null 2>&1 &
echo $! >"$tmp/mock.pid"
for _ in $(seq 50); do [ -s "$tmp/port" ] && break; sleep 0.1; done
export EGG_BASE_URL=http://127.0.0.1:$(cat "$tmp/port") EGG_MODEL=mock EGG_API_KEY=sk-bench
export EGG_WORKER_CMD="python3 $PWD/tests/mock/fakeworker.py"
W="--device cpu -q"

s=$(date +%s.%N)
EGG_STORE=$tmp/s100 build/egg bench $W --no-cache --jobs 8 --llm-concurrency 8 --dir "$tmp/t100" >/dev/null 2>&1
e=$(date +%s.%N)
python3 - "$tmp/s100/egg.db" "$s" "$e" <<'PY'
import sqlite3, sys
db = sqlite3.connect(sys.argv[1]); wall = float(sys.argv[3]) - float(sys.argv[2])
calls, llm_ms = db.execute("select count(*), sum(latency_ms) from llm_calls").fetchone()
tasks = db.execute("select count(*) from tasks where status = 'done'").fetchone()[0]
print(f"100 tasks, 8 jobs: wall {wall:.2f} s; {calls} LLM calls, {llm_ms / 1000:.2f} s of LLM latency in total "
      f"({llm_ms / calls:.1f} ms each); {tasks} tasks done")
print(f"orchestration per task (wall x jobs - LLM latency) / tasks = {(wall * 8 - llm_ms / 1000) / tasks * 1000:.1f} ms")
PY

EGG_STORE=$tmp/s250 build/egg bench $W --jobs 8 --dir "$tmp/t250" >/dev/null 2>&1 &
pid=$!
peak=0
while kill -0 $pid 2>/dev/null; do
	v=$(awk '/VmHWM/ {print $2}' /proc/$pid/status 2>/dev/null || echo 0)
	[ -n "$v" ] && [ "$v" -gt "$peak" ] && peak=$v
	sleep 0.05
done
wait $pid || true
echo "250 tasks: peak RSS of egg bench ${peak} kB; store $(du -k "$tmp/s250/egg.db" | cut -f1) kB"
