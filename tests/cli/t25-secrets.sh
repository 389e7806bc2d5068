#!/usr/bin/env bash
# t25-secrets.sh: the API key never appears in any output, file or error egg produces.
. "$(dirname "$0")/../lib.sh"

KEY=sk-egg-leakcheck-7f3a9c21d0
export EGG_MODEL=mock-model EGG_API_KEY=$KEY EGG_LLM_RETRY_BASE_MS=10
printf '%s\n' '{"reply": "fine"}' '{"reply": "fine again"}' \
	'{"status": 401, "message": "invalid key", "echo_auth": true}' \
	'{"status": 500, "message": "boom", "echo_auth": true, "repeat": true}' >"$TMP/script.jsonl"
start_mock "$TMP/script.jsonl"

streams=$TMP/streams
mkdir -p "$streams"
"$EGG" chat --cache hi >"$streams/1.out" 2>"$streams/1.err"; rc1=$?
"$EGG" chat --cache --json hi2 >"$streams/2.out" 2>"$streams/2.err"; rc2=$?
"$EGG" chat hi3 >"$streams/3.out" 2>"$streams/3.err"; rc3=$?
"$EGG" chat --llm-attempts 2 hi4 >"$streams/4.out" 2>"$streams/4.err"; rc4=$?
"$EGG" doctor --json >"$streams/5.out" 2>"$streams/5.err"
EGG_WORKER_DIR=/nonexistent "$EGG" doctor >"$streams/6.out" 2>"$streams/6.err"; rc6=$?

check "the first chat succeeds and prints the reply" test "$rc1" -eq 0 -a "$(cat "$streams/1.out")" = fine
check "the JSON chat succeeds with the second reply" \
	test "$rc2" -eq 0 -a "$(json_get "$streams/2.out" 'j["content"]')" = "fine again"
check "a server failing every attempt ends in exit 3" test "$rc4" -eq 3
check "after the 2 attempts asked for" grep -q "after 2 attempts" "$streams/4.err"
check "doctor without a worker says the eval worker is missing (exit 3)" \
	test "$rc6" -eq 3 -a -n "$(grep -i 'worker' "$streams/6.out" "$streams/6.err")"

check "the server really was sent the key (the test is live)" grep -q "$KEY" "$MOCK_LOG"
check "the 401 failed as a refused key, exit 2" test "$rc3" -eq 2
check "a server echoing the key has it redacted in egg's error" grep -q 'you sent: Bearer \[redacted\]' "$streams/3.err"
check "doctor reports the key only as present" grep -q '"api_key":"present"' "$streams/5.out"
leaks=$(grep -rl -- "$KEY" "$streams" "$EGG_STORE" "$XDG_CONFIG_HOME" 2>/dev/null)
if [ -z "$leaks" ]; then ok "no stream, cache or store file holds the key"; else not_ok "the key leaked into: $leaks"; fi

# egg's own environment block, read from outside while egg waits for a reply:
# the key's bytes are wiped from it at start (config_take_secrets).
printf '%s\n' '{"reply": "slow", "delay": 3}' >"$TMP/slow.jsonl"
start_mock "$TMP/slow.jsonl"
"$EGG" chat slow >/dev/null 2>&1 &
egg_pid=$!
for _ in $(seq 100); do [ "$(mock_requests)" -ge 1 ] && break; sleep 0.05; done
if tr '\0' '\n' <"/proc/$egg_pid/environ" >"$TMP/egg.environ" 2>/dev/null; then
	check "a running egg's environment block holds no trace of the key" \
		test -z "$(grep -- "${KEY:3:12}" "$TMP/egg.environ")"
else
	# Unreadable: that is egg being non-dumpable only if its /proc entries
	# belong to root (what the kernel does for a non-dumpable process).
	check "a running egg's environment block cannot be read by others: it is non-dumpable (/proc entry owned by root)" \
		test "$(stat -c %u "/proc/$egg_pid" 2>/dev/null)" = 0 -a "$(id -u)" != 0
fi
wait "$egg_pid"

# The worker's environment (through a --worker-cmd wrapper that records it)
# and the candidate's (it reports what it sees), with keys and tokens set.
cat >"$TMP/envdump-worker" <<SH
#!/bin/sh
env >"$TMP/worker.env"
exec "$EGG" worker "\$@"
SH
chmod +x "$TMP/envdump-worker"
cat >"$TMP/env_kernel.py" <<'PY'
import os
import torch
import triton
import triton.language as tl
seen = sorted(k for k in os.environ if any(m in k.upper() for m in ("KEY", "TOKEN", "SECRET", "PASSWORD")))
values = [v for v in os.environ.values() if "leakcheck" in v or "tok-" in v]
raise RuntimeError(f"candidate env: {seen} {len(values)} value(s)")
PY
MY_SERVICE_TOKEN=tok-egg-leakcheck-91 AWS_SECRET_ACCESS_KEY=leakcheck-aws OPENAI_API_KEY=sk-leakcheck-openai \
	run_egg eval --device cpu --no-baseline --worker-cmd "$TMP/envdump-worker" "$SRC/tests/tasks/bias_relu_scale.py" \
	"$TMP/env_kernel.py"
check "the worker's environment holds no key, token or secret variable" \
	test -s "$TMP/worker.env" -a -z "$(grep -E '^[^=]*(KEY|TOKEN|SECRET|PASSWORD)[^=]*=' "$TMP/worker.env")"
check "nor any of their values" test -z "$(grep -E 'leakcheck|tok-egg' "$TMP/worker.env")"
expect_out "candidate env: \[\] 0 value" "the candidate sees none either"

finish
