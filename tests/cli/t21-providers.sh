#!/usr/bin/env bash
# t21-providers.sh: the providers' own rules, against a mock that checks
# requests as the real APIs do (tests/mock/mockllm.py): OpenAI's reasoning
# models refuse max_tokens and a temperature, Anthropic requires max_tokens;
# a model egg's table does not know is adapted to on the server's word;
# replies are streamed, so a long reply outlives the stall timeout while a
# silent server does not; cached and reasoning tokens are read and priced; a
# reply cut at the limit by hidden reasoning is retried with a higher limit.
. "$(dirname "$0")/../lib.sh"

export EGG_API_KEY=sk-test-key EGG_LLM_RETRY_BASE_MS=20
unset EGG_MODEL
script() { printf '%s\n' "$@" >"$TMP/script.jsonl"; start_mock "$TMP/script.jsonl" ${MOCK_ARGS:-}; }
bodies() { python3 -c '
import json, sys
for l in open(sys.argv[1]):
    b = json.loads(json.loads(l)["body"])
    print(json.dumps({k: v for k, v in b.items() if k not in ("messages", "system")}, sort_keys=True))' "$MOCK_LOG"; }

# --- the README's first call, for gpt-5.1: nothing refused
script '{"reply": "hi", "repeat": true}'
run_egg chat --model gpt-5.1 "say hi"
expect_rc 0 "egg chat --model gpt-5.1 succeeds with the defaults"
check "gpt-5.1: one request, max_completion_tokens, no temperature, streamed" bash -c "
	test \$(wc -l <'$MOCK_LOG') -eq 1 &&
	grep -q '\"max_completion_tokens\": 16384' <<<'$(bodies)' && ! grep -q 'temperature\|\"max_tokens\"' <<<'$(bodies)' &&
	grep -q '\"stream\": true' <<<'$(bodies)'"
check "no adaptation is said for a model the table knows" bash -c "! grep -q 'refused' '$ERR'"
for m in o3-mini o4-mini o1; do
	script '{"reply": "hi"}'
	run_egg chat --model $m hi
	check "$m: accepted at the first request (max_completion_tokens, no temperature)" \
		bash -c "[ $RC -eq 0 ] && [ \$(wc -l <'$MOCK_LOG') -eq 1 ]"
done

script '{"reply": "hi"}'
run_egg chat --model gpt-4.1 hi
expect_rc 0 "gpt-4.1 succeeds"
check "gpt-4.1 still gets max_tokens and the temperature 0.7" bash -c "
	grep -q '\"max_tokens\": 16384' <<<'$(bodies)' && grep -q '\"temperature\": 0.7' <<<'$(bodies)'"

script '{"reply": "hi"}'
run_egg chat --model gpt-5.1 --reasoning-effort high hi
check "a reasoning effort goes to a model that takes one" bash -c "[ $RC -eq 0 ] && grep -q '\"reasoning_effort\": \"high\"' <<<'$(bodies)'"
script '{"reply": "hi"}'
run_egg chat --model gpt-4.1 --reasoning-effort high hi
check "and not to one that refuses it" bash -c "[ $RC -eq 0 ] && [ \$(wc -l <'$MOCK_LOG') -eq 1 ] && ! grep -q reasoning_effort <<<'$(bodies)'"

# An effort no provider documents is refused up front, for every model and provider.
script '{"reply": "never", "repeat": true}'
for m in gpt-5 gpt-4.1; do
	run_egg chat --model $m --reasoning-effort extreme hi
	check "$m --reasoning-effort extreme: exit 2, one line naming the values, nothing sent" bash -c "
		[ $RC -eq 2 ] && [ \$(wc -l <'$ERR') -eq 1 ] && [ $(mock_requests) -eq 0 ] &&
		grep -q \"^egg: error: --reasoning-effort 'extreme' is not one of minimal, low, medium, high\$\" '$ERR'"
done
EGG_STORE=$TMP/effort run_egg optimize --model gpt-5 --reasoning-effort extreme --device cpu "$SRC/tests/tasks/bias_relu_scale.py"
check "egg optimize refuses it before any run or baseline" bash -c "
	[ $RC -eq 2 ] && [ \$(wc -l <'$ERR') -eq 1 ] && ! ls '$TMP/effort/runs' 2>/dev/null | grep -q . && [ $(mock_requests) -eq 0 ]"

# --- a model the table does not know, which refuses both: one adaptation each
MOCK_ARGS="--reasoning-models ^(gpt-5|o[134]|zeta-)"
script '{"reply": "adapted", "repeat": true}'
run_egg chat --model zeta-1 hi
expect_rc 0 "an unknown model that refuses max_tokens and the temperature works"
check "two refusals, one adaptation each, then the reply" bash -c "[ \$(wc -l <'$MOCK_LOG') -eq 3 ]"
expect_err "^egg: LLM: the server refused 'max_tokens' for model 'zeta-1' .*from now on: max_tokens sent as max_completion_tokens" \
	"the token field's adaptation is said on stderr, with the server's words"
expect_err "^egg: LLM: the server refused 'temperature' for model 'zeta-1' .*from now on: temperature not sent" \
	"the temperature's adaptation is said on stderr"
check "each adaptation is said once" test "$(grep -c 'egg: LLM: the server refused' "$ERR")" -eq 2
run_egg chat --no-cache --model zeta-1 hi
check "the next process starts adapted: kept in the store, one request, no refusal paid again" bash -c "
	[ $RC -eq 0 ] && [ \$(wc -l <'$MOCK_LOG') -eq 4 ] && ! grep -q 'the server refused' '$ERR' &&
	grep -q '\"max_completion_tokens\"' '$EGG_STORE/llm-adapted.json'"
expect_err "^egg: LLM: not sent to model 'zeta-1': temperature 0.7 \(a server refused it in an earlier run; kept in .*/llm-adapted.json" \
	"and it says, in one line, what it leaves out"
EGG_MODEL=zeta-1 EGG_BASE_URL=$MOCK_URL run_egg doctor
expect_out "^ +adapted on the server's word in an earlier run \(kept in the store's llm-adapted.json\): \{\"temperature\":false,\"token_field\":\"max_completion_tokens\"\}" \
	"egg doctor shows what was kept"
run_egg chat --json --no-cache --model zeta-2 hi
check "--json records the adaptations, and keeps stderr to errors" bash -c "test \"\$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))[\"adapted\"])' '$OUT')\" = \
	'max_tokens sent as max_completion_tokens; temperature not sent (the server takes only its default)' && ! test -s '$ERR'"
unset MOCK_ARGS

# A temperature the user set, refused by gpt-5 and kept as refused: every
# later run says it drops it, and egg doctor shows what is sent.
script '{"reply": "hi", "repeat": true}'
run_egg chat --no-cache --model gpt-5 --temperature 0.5 hi
check "gpt-5 refuses --temperature 0.5: adapted to, said" bash -c "
	[ $RC -eq 0 ] && [ \$(wc -l <'$MOCK_LOG') -eq 2 ] && grep -q \"the server refused 'temperature'\" '$ERR'"
for i in 1 2; do
	run_egg chat --no-cache --model gpt-5 --temperature 0.5 hi
	check "run $i after it: one request without the temperature, and one line saying it is dropped" bash -c "
		[ $RC -eq 0 ] && [ \$(wc -l <'$MOCK_LOG') -eq $((2 + i)) ] && ! tail -1 '$MOCK_LOG' | grep -q temperature &&
		[ \$(wc -l <'$ERR') -eq 2 ] &&
		grep -q \"^egg: LLM: not sent to model 'gpt-5': temperature 0.5 (a server refused it in an earlier run\" '$ERR'"
done
run_egg chat --json --no-cache --model gpt-5 --temperature 0.5 hi
check "with --json: stderr kept to errors, the result's 'adapted' says it" python3 - "$OUT" "$ERR" <<'PY'
import json, sys
assert open(sys.argv[2]).read() == ""
assert json.load(open(sys.argv[1]))["adapted"] == "not sent (refused in an earlier run): temperature 0.5"
PY
EGG_MODEL=gpt-5 EGG_TEMPERATURE=0.5 run_egg doctor --json
check "egg doctor --json: no temperature will be sent, and why" python3 - "$OUT" <<'PY'
import json, sys
q = json.load(open(sys.argv[1]))["llm"]["request"]
assert q["temperature"] is None and q["not_sent"] == "temperature 0.5", q
PY
EGG_MODEL=gpt-5 EGG_TEMPERATURE=0.5 run_egg doctor
expect_out "^llm request: +max_completion_tokens 16384, no temperature, " "egg doctor's text says no temperature"
expect_out "^ +not sent: temperature 0.5 \(a server refused it in an earlier run\)" "and what is not sent"

# The same through the config file's request_rules: no refusal at all.
cat >"$TMP/rules.json" <<'JSON'
{"request_rules": {"zeta-": {"token_field": "max_completion_tokens", "temperature": null}}}
JSON
MOCK_ARGS="--reasoning-models ^zeta-"
script '{"reply": "ruled"}'
run_egg chat --config "$TMP/rules.json" --model zeta-1 hi
check "a request rule in the config file: accepted at the first request" \
	bash -c "[ $RC -eq 0 ] && [ \$(wc -l <'$MOCK_LOG') -eq 1 ] && ! grep -q refused '$ERR'"
EGG_MODEL=zeta-1 run_egg doctor --config "$TMP/rules.json" --json
check "egg doctor shows what egg will send for the model, and which rule says so" python3 - "$OUT" <<'PY'
import json, sys
q = json.load(open(sys.argv[1]))["llm"]["request"]
assert q["token_field"] == "max_completion_tokens" and q["temperature"] is None and q["stream"] is True, q
assert "config request_rules 'zeta-'" in q["source"], q
PY
unset MOCK_ARGS
EGG_MODEL=gpt-5.1 run_egg doctor
expect_out "^llm request: +max_completion_tokens 16384, no temperature, no reasoning effort, streamed \(OpenAI reasoning models" \
	"egg doctor's text line for gpt-5.1"

# --- Anthropic: max_tokens always, its usage with cache reads, its length cap
script '{"reply": "from claude", "cached_tokens": 1200, "usage": {"prompt_tokens": 2000, "completion_tokens": 10}}'
EGG_API_KEY= ANTHROPIC_API_KEY=sk-ant run_egg chat --provider anthropic --model claude-sonnet-4-5 --json hi
expect_rc 0 "anthropic with the defaults"
check "anthropic: max_tokens sent, streamed, the cache reads counted as cached input" python3 - "$OUT" "$MOCK_LOG" <<'PY'
import json, sys
j = json.load(open(sys.argv[1]))
b = json.loads(json.loads(open(sys.argv[2]).readline())["body"])
assert b["max_tokens"] == 16384 and b["stream"] is True and "max_completion_tokens" not in b, b
u = j["usage"]
assert u["prompt_tokens"] == 2000 and u["cached_prompt_tokens"] == 1200 and u["completion_tokens"] == 10, u
want = (800 * 3.0 + 1200 * 0.3 + 10 * 15.0) / 1e6
assert abs(j["cost_usd"] - want) < 1e-12, (j["cost_usd"], want)
PY
MOCK_ARGS="--max-output 8000"
script '{"reply": "short", "repeat": true}'
EGG_API_KEY= ANTHROPIC_API_KEY=sk-ant run_egg chat --provider anthropic --model claude-small hi
check "an output limit above the model's: lowered to the most the server states, said once" bash -c "
	[ $RC -eq 0 ] && [ \$(wc -l <'$MOCK_LOG') -eq 2 ] && grep -q 'output limit 16384 -> 8000 tokens' '$ERR'"
MOCK_ARGS="--max-output 8192"
script '{"reply": "short", "repeat": true}'
EGG_API_KEY= ANTHROPIC_API_KEY=sk-ant run_egg chat --provider anthropic --model claude-3-5-sonnet-20241022 --json hi
check "claude-3-5-sonnet: its published output limit (8192) from the first request, no refusal paid, priced" \
	python3 - "$OUT" "$MOCK_LOG" "$ERR" "$RC" <<'PY'
import json, sys
out, log, err, rc = sys.argv[1:]
reqs = [json.loads(json.loads(l)["body"]) for l in open(log)]
assert rc == "0" and len(reqs) == 1 and reqs[0]["max_tokens"] == 8192, (rc, [r.get("max_tokens") for r in reqs])
assert "output limit" not in open(err).read() and json.load(open(out))["cost_usd"] > 0
PY
unset MOCK_ARGS

# --- a key missing or refused: said before any baseline, as the key to set (exit 2), for both providers
TASK1=$SRC/tests/tasks/bias_relu_scale.py
MOCK_ARGS="--api-key sk-good"
script '{"reply": "never", "repeat": true}'
EGG_API_KEY= ANTHROPIC_API_KEY=sk-ant-wrong EGG_STORE=$TMP/k1 run_egg optimize --provider anthropic \
	--model claude-sonnet-4-5 --device cpu "$TASK1"
expect_rc 2 "an Anthropic key the server refuses stops egg optimize as a setting to change"
check "in one line naming the variable to set, before any baseline, nothing paid" bash -c "
	[ \$(wc -l <'$ERR') -eq 1 ] && [ $(mock_requests) -eq 0 ] && ! grep -qi 'baseline\|unreachable\|again' '$ERR' &&
	grep -q \"^egg: error: '$MOCK_URL/v1/messages' refused the API key (HTTP 401: invalid x-api-key): set EGG_API_KEY or ANTHROPIC_API_KEY to a valid key with access to model 'claude-sonnet-4-5'\$\" '$ERR'"
check "the key was asked of the models list, with the request's credentials" python3 - "$MOCK_LOG.get" <<'PY'
import json, sys
g = [json.loads(l) for l in open(sys.argv[1])]
assert [x["path"] for x in g] == ["/v1/models"] and g[0]["headers"]["x-api-key"] == "sk-ant-wrong", g
PY
EGG_API_KEY= ANTHROPIC_API_KEY= EGG_STORE=$TMP/k2 run_egg optimize --provider anthropic --model claude-sonnet-4-5 \
	--device cpu "$TASK1"
expect_rc 2 "a local Anthropic server that wants a key, given none"
expect_err "^egg: error: no API key was sent and '.*/v1/messages' refused the request \(HTTP 401: x-api-key header is required\): set EGG_API_KEY or ANTHROPIC_API_KEY$" \
	"says that no key was sent, and what to set"
EGG_API_KEY=sk-wrong EGG_STORE=$TMP/k3 run_egg optimize --model gpt-4.1 --device cpu "$TASK1"
check "OpenAI's path says it the same way (exit 2, one line, before any baseline)" bash -c "
	[ $RC -eq 2 ] && [ \$(wc -l <'$ERR') -eq 1 ] && [ $(mock_requests) -eq 0 ] &&
	grep -q \"refused the API key (HTTP 401: Incorrect API key provided. .*): set EGG_API_KEY or OPENAI_API_KEY\" '$ERR'"
EGG_API_KEY= ANTHROPIC_API_KEY=sk-ant-wrong run_egg chat --provider anthropic --model claude-sonnet-4-5 hi
check "egg chat with the refused key: exit 2, the same words" bash -c "
	[ $RC -eq 2 ] && grep -q 'refused the API key (HTTP 401: invalid x-api-key): set EGG_API_KEY or ANTHROPIC_API_KEY' '$ERR'"
EGG_API_KEY= ANTHROPIC_API_KEY=sk-good run_egg chat --provider anthropic --model claude-sonnet-4-5 hi
check "and the right key goes through" test "$RC" -eq 0
unset MOCK_ARGS
# A server whose models list takes any key but whose requests refuse it (a
# key revoked mid-run): the task stops saying so, not "LLM unreachable".
script '{"status": 401, "message": "key revoked", "repeat": true}'
EGG_API_KEY=sk-revoked EGG_STORE=$TMP/k4 run_egg optimize --model gpt-4.1 --device cpu --iters 3 --warmup 1 \
	--compile-mode none -q --seeds 1 "$TASK1"
expect_err "stopped: the LLM endpoint refused egg's request \(the seed stage's call for .*\): '.*' refused the API key \(HTTP 401: key revoked\): set EGG_API_KEY or OPENAI_API_KEY" \
	"a key refused mid-run stops the task saying the key was refused and what to set"
check "not as an unreachable LLM, and the refused request was not retried" bash -c "
	! grep -q 'unreachable' '$ERR' && [ $(mock_requests) -eq 1 ]"
expect_rc 2 "a key refused mid-run is the user's to fix"
expect_err "set EGG_API_KEY or OPENAI_API_KEY to a valid key .*; then run the same command again to go on$" \
	"its last line says to set the key, then run the same command again"
check "the task is recorded stopped (to be run again), its stop cause the key" python3 - "$TMP/k4/egg.db" <<'PY'
import json, sqlite3, sys
(status, result), = sqlite3.connect(sys.argv[1]).execute("select status, result from tasks").fetchall()
r = json.loads(result)
assert (status, r["stop_cause"], r["error_kind"]) == ("stopped", "key", "input"), (status, r["stop_cause"], r["error_kind"])
PY

# --- settings checked against the provider's documented ranges before any request
script '{"reply": "never", "repeat": true}'
EGG_API_KEY= ANTHROPIC_API_KEY=sk-ant run_egg chat --provider anthropic --model claude-sonnet-4-5 --temperature 1.5 hi
expect_rc 2 "a temperature above Anthropic's range is refused before any request (exit 2)"
expect_err "^egg: error: temperature 1.5 is outside the anthropic API's range 0..1" "naming the range"
check "and nothing was sent" test "$(mock_requests)" -eq 0
run_egg chat --model gpt-4.1 --temperature 2.5 hi
expect_rc 2 "a temperature above OpenAI's range 0..2 too"
# The base URL with or without /v1, for both providers; doctor shows the endpoint.
script '{"reply": "via v1", "repeat": true}'
EGG_API_KEY= ANTHROPIC_API_KEY=sk-ant run_egg chat --provider anthropic --model claude-sonnet-4-5 --base-url "$MOCK_URL/v1/" --json hi
check "anthropic with a base URL ending in /v1 posts to /v1/messages, not /v1/v1/messages" bash -c "
	[ $RC -eq 0 ] && grep -q '\"path\": \"/v1/messages\"' '$MOCK_LOG'"
# The whole endpoint given as the base URL: posted to as it is, not doubled.
EGG_API_KEY= ANTHROPIC_API_KEY=sk-ant run_egg chat --provider anthropic --model claude-sonnet-4-5 \
	--base-url "$MOCK_URL/v1/messages" hi
check "anthropic with the base URL .../v1/messages posts to /v1/messages, not /v1/messages/v1/messages" bash -c "
	[ $RC -eq 0 ] && tail -1 '$MOCK_LOG' | grep -q '\"path\": \"/v1/messages\"'"
run_egg chat --model gpt-4.1 --base-url "$MOCK_URL/v1/chat/completions/" hi
check "openai with the base URL .../v1/chat/completions/ posts to /v1/chat/completions" bash -c "
	[ $RC -eq 0 ] && tail -1 '$MOCK_LOG' | grep -q '\"path\": \"/v1/chat/completions\"'"
run_egg doctor --provider anthropic --model claude-sonnet-4-5 --base-url "http://api.example/v1/messages"
expect_out "^endpoint: +POST http://api.example/v1/messages$" "egg doctor shows that endpoint for anthropic"
run_egg doctor --model gpt-4.1 --base-url "https://api.example/v1/chat/completions"
expect_out "^endpoint: +POST https://api.example/v1/chat/completions$" "and for openai"
run_egg doctor --provider anthropic --model claude-sonnet-4-5 --base-url "http://api.example/v1"
expect_out "^endpoint: +POST http://api.example/v1/messages$" "egg doctor shows the full endpoint it will call"
run_egg doctor --model m --base-url "http://localhost:8000"
expect_out "^endpoint: +POST http://localhost:8000/v1/chat/completions$" "an OpenAI-compatible base URL without a path gets its /v1"

# --- usage: cached and reasoning tokens, priced
script '{"reply": "priced", "cached_tokens": 600000, "reasoning_tokens": 700000, "usage": {"prompt_tokens": 1000000, "completion_tokens": 1000000}}'
run_egg chat --json --model gpt-5.1 hi
check "gpt-5.1: reasoning and cached tokens read and priced (cached input at its own price)" python3 - "$OUT" <<'PY'
import json, sys
j = json.load(open(sys.argv[1]))
u = j["usage"]
assert u["cached_prompt_tokens"] == 600000 and u["reasoning_tokens"] == 700000, u
want = 0.4 * 1.25 + 0.6 * 0.125 + 1.0 * 10.0
assert abs(j["cost_usd"] - want) < 1e-9, (j["cost_usd"], want)
PY

# --- streaming: a long reply against a short stall timeout, and silence
script '{"reply": "a reply written slowly, token by token, over twelve seconds", "stream_seconds": 12}'
start=$(date +%s.%N); run_egg chat --model gpt-5.1 --llm-stall-timeout 4 --llm-attempts 1 hi; end=$(date +%s.%N)
expect_rc 0 "a reply streamed over 12 s completes with --llm-stall-timeout 4"
check "in one request, not abandoned ($(python3 -c "print(round($end-$start,1))") s)" test "$(mock_requests)" -eq 1
script '{"fault": "stall", "seconds": 60}'
start=$(date +%s.%N); run_egg chat --model gpt-5.1 --llm-stall-timeout 4 --llm-attempts 1 hi; end=$(date +%s.%N)
expect_rc 3 "a server silent for 60 s is abandoned"
expect_err "stalled: no data for 4 s" "the error says it stalled"
# well below the server's 60 s, far above the 4 s stall timeout
check "after the stall timeout, not the server's 60 s ($(python3 -c "print(round($end-$start,1))") s)" \
	python3 -c "import sys; sys.exit(0 if $end - $start < 30 else 1)"
script '{"reply": "def kernel():\n    pass  # a long reply", "fault": "stream_cut", "repeat": true}'
run_egg chat --model gpt-5.1 --llm-attempts 2 hi
expect_rc 3 "a stream cut off every time fails after its attempts"
expect_err "before the reply was complete \([0-9]+ characters had arrived\)" "the error says how much had arrived"
script '{"reply": "def kernel():\n    pass", "fault": "stream_cut"}' '{"reply": "complete"}'
run_egg chat --json --model gpt-5.1 hi
check "a stream cut off once is retried and completes" test "$(json_get "$OUT" 'j["content"], j["attempts"]')" = "complete 2"

# --- a reply cut by hidden reasoning
script '{"reply": "", "finish_reason": "length", "reasoning_tokens": 16384, "usage": {"prompt_tokens": 50, "completion_tokens": 16384}}'
run_egg chat --model gpt-5.1 hi
expect_rc 1 "a reply cut at the limit is not a success"
expect_err "^egg: rejected: reply truncated at the output limit of 16384 tokens with no text: 16384 of its 16384 tokens were hidden reasoning" \
	"it says the limit went to hidden reasoning"

# In a run: the retry asks again with twice the limit, and the task goes on.
P=$SRC/tests/pipeline
TASK=$SRC/tests/tasks/bias_relu_scale.py
printf '%s\n' \
	'{"match": ["mode: seed"], "reply": "", "finish_reason": "length", "reasoning_tokens": 16384, "usage": {"prompt_tokens": 900, "completion_tokens": 16384}}' \
	"{\"match\": [\"mode: seed\"], \"reply_file\": \"$P/seed2_rows.py\", \"wrap\": \"python\", \"cached_tokens\": 512}" \
	>"$TMP/run.jsonl"
start_mock "$TMP/run.jsonl"
run_egg optimize --model gpt-5.1 --device cpu --iters 3 --warmup 1 --compile-mode none -q --seeds 1 --no-refine \
	--no-hw-tune --run-dir "$TMP/run" -o "$TMP/out.py" "$TASK"
expect_rc 0 "egg optimize --model gpt-5.1 finds the kernel after a reply cut by reasoning"
check "no refused request, and the retry raised the limit to 32768" python3 - "$MOCK_LOG" <<'PY'
import json, sys
bodies = [json.loads(json.loads(l)["body"]) for l in open(sys.argv[1])]
assert len(bodies) == 2, len(bodies)
assert [b.get("max_completion_tokens") for b in bodies] == [16384, 32768], bodies
assert all("temperature" not in b and "max_tokens" not in b for b in bodies)
PY
check "the run records why (the reasoning tokens) and the raised limit" python3 - "$TMP/run" <<'PY'
import json, os, sys
d = [json.loads(l) for l in open(os.path.join(sys.argv[1], "decisions.jsonl"))]
cut = [x for x in d if x.get("event") == "malformed_reply"]
assert len(cut) == 1 and "16384 of its 16384 tokens were hidden reasoning" in cut[0]["why"], cut
assert cut[0]["retry_max_tokens"] == 32768, cut
PY
RUN=$(ls "$EGG_STORE" >/dev/null 2>&1; python3 -c "
import sqlite3, sys; print(sqlite3.connect(sys.argv[1]).execute('SELECT id FROM runs ORDER BY created DESC LIMIT 1').fetchone()[0])" "$EGG_STORE/egg.db")
run_egg report "$RUN" --json
check "egg report counts the task's reasoning and cached tokens" python3 - "$OUT" <<'PY'
import json, sys
t = json.load(open(sys.argv[1]))["tasks"][0]
assert t["reasoning_tokens"] == 16384 and t["cached_prompt_tokens"] == 512, t
PY
run_egg report "$RUN"
expect_out "per finished task: [0-9]+ prompt \(512 cached\) \+ [0-9]+ completion tokens \(16384 reasoning\)" \
	"the text report shows them"
finish
