#!/usr/bin/env bash
# t20-chat-faults.sh: `egg chat` against the mock server for every fault kind.
. "$(dirname "$0")/../lib.sh"

export EGG_MODEL=mock-model EGG_API_KEY=sk-test-key
export EGG_LLM_RETRY_BASE_MS=20 EGG_LLM_STALL_TIMEOUT=1 EGG_LLM_TIMEOUT=5 EGG_LLM_ATTEMPTS=3

script() { printf '%s\n' "$@" >"$TMP/script.jsonl"; start_mock "$TMP/script.jsonl"; }

# --- success, and the JSON contract
script '{"reply": "hello there", "usage": {"prompt_tokens": 11, "completion_tokens": 3}}'
run_egg chat "say hi"
expect_rc 0 "a plain reply"
expect_out '^hello there$' "the reply text is printed on stdout"
script '{"reply": "hello there", "usage": {"prompt_tokens": 11, "completion_tokens": 3}}'
run_egg chat --json --system "be brief" "say hi"
expect_rc 0 "a plain reply with --json"
check "--json prints exactly one line of JSON" test "$(wc -l <"$OUT")" -eq 1
check "--json has the documented fields" python3 - "$OUT" <<'PY'
import json, sys
j = json.load(open(sys.argv[1]))
need = {"content", "model", "finish_reason", "usage", "attempts", "latency_ms", "cached", "truncated", "max_tokens",
        "thinking_budget", "adapted", "cost_usd", "cache_saved_usd"}
assert need <= set(j), set(j)
# mock-model has no price: the keys stay, null (not absent, not 0).
assert j["cost_usd"] is None and j["cache_saved_usd"] is None and j["thinking_budget"] is None, j
assert j["content"] == "hello there" and j["finish_reason"] == "stop"
assert j["usage"] == {"prompt_tokens": 11, "completion_tokens": 3, "cached_prompt_tokens": 0, "cache_write_tokens": 0,
                      "reasoning_tokens": 0, "estimated": False}, j["usage"]
assert j["max_tokens"] == 16384 and j["adapted"] is None
assert j["attempts"] == 1 and j["cached"] is False and j["latency_ms"] > 0
PY
check "the request carries model, system and user messages" python3 - "$MOCK_LOG" <<'PY'
import json, sys
r = json.loads(open(sys.argv[1]).readline())
b = json.loads(r["body"])
assert r["path"] == "/v1/chat/completions", r["path"]  # a base URL with no path gets its /v1
assert r["headers"]["Authorization"] == "Bearer sk-test-key"
assert b["model"] == "mock-model" and b["max_tokens"] > 0 and "temperature" in b
assert b["messages"] == [{"role": "system", "content": "be brief"}, {"role": "user", "content": "say hi"}]
PY

# --- retried faults
retried() { # retried DESCRIPTION FAULT_ENTRY [FAULT_ENTRY...]
	local d=$1; shift
	script "$@" '{"reply": "recovered"}'
	run_egg chat --json hi
	local want=$(( $# + 1 ))
	if [ "$RC" -eq 0 ] && [ "$(json_get "$OUT" 'j["attempts"]')" = "$want" ] &&
	   [ "$(json_get "$OUT" 'j["content"]')" = recovered ]; then
		ok "$d is retried and the call recovers ($want attempts)"
	else
		not_ok "$d is retried and the call recovers (exit $RC)"; diag "$OUT" "$ERR"
	fi
}
retried "HTTP 500" '{"status": 500}'
retried "HTTP 503 then 502" '{"status": 503}' '{"status": 502}'
retried "HTTP 408" '{"status": 408}'
retried "HTTP 409" '{"status": 409}'
retried "a dropped connection" '{"fault": "drop"}'
retried "a stall past the stall timeout" '{"fault": "stall", "seconds": 4}'
retried "a stall in the middle of the body" '{"fault": "stall_mid", "seconds": 4}'
retried "a malformed JSON body" '{"fault": "malformed"}'
retried "an HTML error page" '{"fault": "html"}'
retried "an empty choices list" '{"fault": "empty_choices"}'

# --- Retry-After, in seconds and as an HTTP-date
script '{"status": 429, "retry_after": "1"}' '{"reply": "ok"}'
start=$(date +%s.%N); run_egg chat --json hi; end=$(date +%s.%N)
expect_rc 0 "429 with Retry-After in seconds recovers"
check "Retry-After: 1 is honoured (waited $(python3 -c "print(round($end-$start,2))") s)" \
	python3 -c "import sys; sys.exit(0 if $end - $start >= 0.95 else 1)"
check "a one-second wait is a blip: no retry notice" bash -c "! grep -q 'egg: LLM call: attempt' '$ERR'"
script '{"status": 429, "retry_after": "2", "body": "slow down"}' '{"reply": "ok"}'
run_egg chat hi
expect_rc 0 "429 with Retry-After: 2 recovers"
expect_err "^egg: LLM call: attempt 1 of [0-9]+ failed after [0-9.]+ s \(HTTP 429: .*\); retrying in 2.0 s$" \
	"a retry that waits 2 s or more says so while it waits: the attempt, the cause, the wait"
script '{"status": 429, "retry_after": "2", "body": "slow down"}' '{"reply": "ok"}'
run_egg chat --json hi
expect_rc 0 "the same with --json"
check "--json keeps stderr to errors: no retry line; the JSON says the attempts and the whole call's latency" \
	python3 - "$OUT" "$ERR" <<'PY'
import json, sys
j = json.load(open(sys.argv[1]))
assert open(sys.argv[2]).read() == "", open(sys.argv[2]).read()
assert j["attempts"] == 2 and j["latency_ms"] >= 1900, (j["attempts"], j["latency_ms"])
PY
# The clock starts before the date is made: the date is whole seconds, at
# least 1 s after the start however long making it and the script took.
start=$(date +%s.%N)
date2=$(python3 -c "import email.utils,time; print(email.utils.formatdate(time.time()+2, usegmt=True))")
script "{\"status\": 429, \"retry_after\": \"$date2\"}" '{"reply": "ok"}'
run_egg chat --json hi; end=$(date +%s.%N)
expect_rc 0 "429 with Retry-After as an HTTP-date recovers"
check "an HTTP-date Retry-After is honoured (waited $(python3 -c "print(round($end-$start,2))") s)" \
	python3 -c "import sys; sys.exit(0 if $end - $start >= 0.9 else 1)"

# --- giving up
script '{"status": 503, "repeat": true}'
run_egg chat hi
expect_rc 3 "503 on every attempt is an infrastructure failure"
expect_err "^egg: error: llm request to '.*' failed after 3 attempts: HTTP 503" "the error names the attempts and the last status"
check "exactly --llm-attempts requests were made" test "$(mock_requests)" -eq 3

script '{"fault": "malformed", "repeat": true}'
run_egg chat hi
expect_rc 3 "a body that is never valid JSON"
expect_err "not valid JSON" "the error says the reply is not valid JSON"

script '{"fault": "html", "repeat": true}'
run_egg chat hi
expect_rc 3 "an HTML error page every time"
expect_err "HTTP 502: <html>" "the error shows the status and the page's first line"

script '{"fault": "empty_choices", "repeat": true}'
run_egg chat hi
expect_rc 3 "empty choices every time"
expect_err "no choices" "the error says there were no choices"

script '{"status": 503, "retry_after": "30", "repeat": true}'
start=$(date +%s.%N); run_egg chat --llm-deadline 2 hi; end=$(date +%s.%N)
expect_rc 3 "a Retry-After beyond the deadline"
expect_err "deadline" "the error names the deadline"
# The property: it did not wait the 30 s the server asked; the bound sits well
# below that and far above the 2 s deadline (not near the expected time).
check "egg did not wait out a Retry-After past its deadline" python3 -c "import sys; sys.exit(0 if $end - $start < 20 else 1)"

# A reply that does not come: the attempt ends at the call's deadline, and
# the error names the deadline, not the request timeout it did not wait for.
script '{"delay": 40, "reply": "late", "repeat": true}'
start=$(date +%s.%N); run_egg chat --llm-deadline 3 --llm-timeout 600 hi; end=$(date +%s.%N)
expect_rc 3 "a reply later than the call's deadline"
expect_err "no complete reply within the call's 3 s deadline \(--llm-deadline\)" "the error names the deadline it ended on"
check "and the call ended well before the reply would have come" python3 -c "import sys; sys.exit(0 if $end - $start < 25 else 1)"

script '{"fault": "stall", "seconds": 10, "repeat": true}'
start=$(date +%s.%N); run_egg chat --llm-attempts 2 --llm-timeout 30 hi; end=$(date +%s.%N)
expect_rc 3 "a server that always stalls"
# Two attempts cut by the request timeout would take 60 s; by the stall timeout far less.
check "stalls are cut by the stall timeout, not the request timeout" python3 -c "import sys; sys.exit(0 if $end - $start < 30 else 1)"

# --- fail fast
for s in 400 401 403 404; do
	script "{\"status\": $s, \"message\": \"mock says no ($s)\", \"repeat\": true}"
	run_egg chat hi
	case $s in
	401|403) # the key refused: a setting to change (exit 2), not an outage
		expect_rc 2 "HTTP $s fails as a refused key"
		expect_err "^egg: error: '.*/v1/chat/completions' refused the API key \(HTTP $s: mock says no \($s\)\): set EGG_API_KEY or OPENAI_API_KEY to a valid key with access to model 'mock-model'$" \
			"HTTP $s shows the server's message and names the key's variables" ;;
	*)
		expect_rc 3 "HTTP $s fails"
		expect_err "HTTP $s: mock says no \($s\)" "HTTP $s shows the server's message" ;;
	esac
	check "HTTP $s is not retried" test "$(mock_requests)" -eq 1
done

# --- truncation
script '{"reply": "def f(x):\n    return", "finish_reason": "length"}'
run_egg chat --json hi
expect_rc 1 "a reply cut off by the length limit is not a success"
expect_err "^egg: rejected: reply truncated" "truncation is reported as such"
check "--json still reports finish_reason length and truncated" \
	test "$(json_get "$OUT" 'j["finish_reason"], j["truncated"]')" = "length True"

# --- connection refused
stop_mock
run_egg chat --base-url http://127.0.0.1:9 --llm-attempts 2 hi
expect_rc 3 "an unreachable server"
expect_err "after 2 attempts: .*(onnect|refused)" "the error says the server could not be reached"

# --- the anthropic protocol
script '{"reply": "from claude", "usage": {"prompt_tokens": 4, "completion_tokens": 2}}'
EGG_PROVIDER=anthropic EGG_API_KEY= ANTHROPIC_API_KEY=sk-ant-test run_egg chat --json --system sys hi
expect_rc 0 "anthropic provider"
check "anthropic reply and usage are read" test "$(json_get "$OUT" 'j["content"], j["usage"]["completion_tokens"]')" = "from claude 2"
check "anthropic request: /v1/messages, x-api-key, version header, system apart" python3 - "$MOCK_LOG" <<'PY'
import json, sys
r = json.loads(open(sys.argv[1]).readline())
b = json.loads(r["body"]); h = r["headers"]
assert r["path"] == "/v1/messages", r["path"]
assert h["x-api-key"] == "sk-ant-test" and h["anthropic-version"] and "Authorization" not in h
assert b["system"] == [{"type": "text", "text": "sys", "cache_control": {"type": "ephemeral"}}], b["system"]
assert b["messages"] == [{"role": "user", "content": "hi"}]
PY

# --- the reply cache
script '{"reply": "cached answer"}'
run_egg chat --cache --json "cache me"
run_egg chat --cache --json "cache me"
expect_rc 0 "a cached reply"
check "the second identical call is a cache hit" test "$(json_get "$OUT" 'j["cached"], j["content"]')" = "True cached answer"
check "the cache hit sent no request" test "$(mock_requests)" -eq 1
run_egg chat --cache "cache me"
expect_err "^egg: [0-9]+ prompt \+ [0-9]+ completion tokens: the reply from the reply cache; no request sent$" \
	"and says so"
run_egg chat --cache --no-cache "cache me"
expect_rc 3 "--no-cache bypasses the cache (the script is spent)"
check "cache files hold no key and live under the store" sh -c "ls '$EGG_STORE'/llm-cache/*/*.json >/dev/null && ! grep -rq sk-test-key '$EGG_STORE'"

# --- a run answered wholly from the reply cache says so
P=$SRC/tests/pipeline
# Seed 1 is broken, so the task makes three calls: seed, debug, repair.
printf '%s\n' \
	"{\"match\": [\"mode: seed\"], \"reply_file\": \"$P/seed1_broken.py\", \"wrap\": \"python\"}" \
	'{"match": ["Role: debug agent"], "reply": "{\"critical_issue\": \"tl.relu_that_does_not_exist is no Triton function\", \"modification_plan\": \"use tl.maximum(x + b, 0.0)\"}"}' \
	"{\"match\": [\"Role: code agent, mode: repair\"], \"reply_file\": \"$P/seed1_fixed.py\", \"wrap\": \"python\"}" \
	>"$TMP/run.jsonl"
start_mock "$TMP/run.jsonl"
FAST="--device cpu --iters 3 --warmup 1 --compile-mode none --seeds 1 --no-refine --no-hw-tune"
run_egg optimize $FAST "$SRC/tests/tasks/bias_relu_scale.py"
check "a run that asked the model says its call, not the reply cache" bash -c "
	[ $RC -eq 0 ] && grep -q '^  llm: 3 call(s), ' '$ERR' && ! grep -q 'reply cache' '$ERR'"
run_egg optimize $FAST "$SRC/tests/tasks/bias_relu_scale.py"
expect_rc 0 "the same run again finds the kernel"
expect_err "^  llm: all 3 replies from the reply cache; no request sent$" "and says every reply came from the reply cache"
check "and it sent none" test "$(mock_requests)" -eq 3
# egg bench's report says the same of a whole run (a bench task's prompt
# names it by its place in the benchmark: a reply of its own).
mkdir -p "$TMP/b/level1" && cp "$SRC/tests/tasks/bias_relu_scale.py" "$TMP/b/level1/"
start_mock "$TMP/run.jsonl"
run_egg bench $FAST --dir "$TMP/b"
check "egg bench that asked the model says how many calls, not the reply cache" bash -c "
	[ $RC -eq 0 ] && ! grep -q 'reply cache' '$ERR'"
run_egg bench $FAST --dir "$TMP/b"
check "egg bench again finds the kernel" test "$RC" -eq 0
expect_err "^  model calls: all 3 replies from the reply cache; no request sent, nothing paid$" \
	"and its report says every reply came from the reply cache"
check "and it sent none" test "$(mock_requests)" -eq 3

finish
