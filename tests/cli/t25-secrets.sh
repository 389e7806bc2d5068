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
"$EGG" chat --cache hi >"$streams/1.out" 2>"$streams/1.err"
"$EGG" chat --cache --json hi2 >"$streams/2.out" 2>"$streams/2.err"
"$EGG" chat hi3 >"$streams/3.out" 2>"$streams/3.err"; rc3=$?
"$EGG" chat --llm-attempts 2 hi4 >"$streams/4.out" 2>"$streams/4.err"
"$EGG" doctor --json >"$streams/5.out" 2>"$streams/5.err"
EGG_WORKER_DIR=/nonexistent "$EGG" doctor >"$streams/6.out" 2>"$streams/6.err"

check "the server really was sent the key (the test is live)" grep -q "$KEY" "$MOCK_LOG"
check "the 401 failed with exit 3" test "$rc3" -eq 3
check "a server echoing the key has it redacted in egg's error" grep -q 'you sent: Bearer \[redacted\]' "$streams/3.err"
check "doctor reports the key only as present" grep -q '"api_key":"present"' "$streams/5.out"
leaks=$(grep -rl -- "$KEY" "$streams" "$EGG_STORE" "$XDG_CONFIG_HOME" 2>/dev/null)
if [ -z "$leaks" ]; then ok "no stream, cache or store file holds the key"; else not_ok "the key leaked into: $leaks"; fi

finish
