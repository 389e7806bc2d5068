#!/usr/bin/env bash
# t84-prompt-cache.sh: a task's prompts open with the same system text (the
# task, the device, the reference, the rules), Anthropic requests mark it
# with cache_control, and against servers that keep a prompt cache as the
# providers do (tests/mock/mockllm.py --prompt-cache) the later calls of a
# task read it: cached tokens are counted, priced lower, and shown per
# task and per run with what they saved. And --reasoning-effort is
# Anthropic's extended thinking where the model has it, refused (exit 2,
# nothing sent) where it has not.
. "$(dirname "$0")/../lib.sh"

P=$SRC/tests/pipeline
SMALL=$SRC/tests/tasks/bias_relu_scale.py
# The same task with a longer reference: its system text (about 1340 tokens
# at 4 characters a token) passes the providers' least cacheable length of
# 1024, which the small task's (about 980) does not.
TASK=$TMP/big/bias_relu_scale.py
mkdir -p "$TMP/big"
{ cat "$SMALL"; echo
  echo "# A longer reference: what each step computes, said at length so that the system text"
  echo "# egg sends passes the provider's least cacheable length (1024 tokens) as a real task's would."
  for i in $(seq 0 13); do
	printf '# Note %2d: the bias is added per column, the ReLU clamps below zero, the scale multiplies.\n' "$i"
  done; } >"$TASK"
export EGG_LLM_RETRY_BASE_MS=20
unset EGG_MODEL EGG_API_KEY
FAST="--device cpu --iters 3 --warmup 1 --compile-mode none -q --no-cache --seeds 1 --no-refine --no-hw-tune"
# Seed 1 is broken, so the task makes three calls: seed, debug, repair.
printf '%s\n' \
	"{\"match\": [\"mode: seed\"], \"reply_file\": \"$P/seed1_broken.py\", \"wrap\": \"python\"}" \
	'{"match": ["Role: debug agent"], "reply": "{\"critical_issue\": \"tl.relu_that_does_not_exist is no Triton function\", \"modification_plan\": \"use tl.maximum(x + b, 0.0)\"}"}' \
	"{\"match\": [\"Role: code agent, mode: repair\"], \"reply_file\": \"$P/seed1_fixed.py\", \"wrap\": \"python\"}" \
	>"$TMP/three.jsonl"

# The calls' records: [(prompt, cached, written, cost, saved)] in order.
calls_of() { python3 - "$1" <<'PY'
import glob, json, os, sys
for p in sorted(glob.glob(os.path.join(sys.argv[1], "calls", "*.json"))):
    m = json.load(open(p))
    print(json.dumps([m["prompt_tokens"], m["cached_prompt_tokens"], m["cache_write_tokens"], m["cost_usd"],
                      m["cache_saved_usd"]]))
PY
}

# --- Anthropic: the system text marked, written once, read after
start_mock "$TMP/three.jsonl" --prompt-cache
ANTHROPIC_API_KEY=sk-ant run_egg optimize --provider anthropic --model claude-sonnet-4-5 $FAST \
	--run-dir "$TMP/an" --json "$TASK"
expect_rc 0 "an Anthropic run of three calls finds the kernel"
check "every request carries its system text as one block marked cache_control, the same in every call" \
	python3 - "$MOCK_LOG" <<'PY'
import json, sys
bodies = [json.loads(json.loads(l)["body"]) for l in open(sys.argv[1])]
assert len(bodies) == 3, len(bodies)
for b in bodies:
    s = b["system"]
    assert isinstance(s, list) and len(s) == 1 and s[0]["cache_control"] == {"type": "ephemeral"}, s
    assert "Reference (KernelBench form)" in s[0]["text"] and "Rules every kernel must follow" in s[0]["text"]
assert len({b["system"][0]["text"] for b in bodies}) == 1, "the system text changed within the task"
roles = [b["messages"][0]["content"].split("\n")[0] for b in bodies]
assert roles == ["Role: code agent, mode: seed.", "Role: debug agent. You find why a Triton kernel failed and say "
                 "precisely what must change.", "Role: code agent, mode: repair."], roles
PY
calls_of "$TMP/an" >"$TMP/an.calls"
check "the first call wrote the cache; the later ones read it and cost less than at the input price" \
	python3 - "$TMP/an.calls" <<'PY'
import json, sys
calls = [json.loads(l) for l in open(sys.argv[1])]
(p0, c0, w0, cost0, s0), rest = calls[0], calls[1:]
assert c0 == 0 and w0 >= 1024 and s0 < 0, calls[0]
for p, c, w, cost, saved in rest:
    assert c == w0 and w == 0 and saved > 0, (calls[0], p, c, w)
    # claude-sonnet-4-5: input $3, cached $0.30 per million; what it cost plus what it saved is the plain price.
    assert abs(saved - c * 2.7e-6) < 1e-9, (saved, c)
PY
check "the task's usage counts the cached and written tokens and what the cache saved" python3 - "$OUT" "$TMP/an.calls" <<'PY'
import json, sys
u = json.load(open(sys.argv[1]))["usage"]
calls = [json.loads(l) for l in open(sys.argv[2])]
assert u["cached_prompt_tokens"] == sum(c[1] for c in calls) > 0, u
assert u["cache_write_tokens"] == sum(c[2] for c in calls) > 0, u
assert abs(u["cache_saved_usd"] - sum(c[4] for c in calls)) < 1e-9 and u["cache_saved_usd"] > 0, u
PY
start_mock "$TMP/three.jsonl" --prompt-cache
ANTHROPIC_API_KEY=sk-ant run_egg optimize --provider anthropic --model claude-sonnet-4-5 $FAST "$TASK"
expect_err "^  llm: 3 call\(s\), [0-9]+ prompt tokens \([0-9]+ read from the prompt cache, [0-9]+ written to it\), .*; the prompt cache saved \\\$0\.[0-9]+$" \
	"egg optimize's summary says what the cache served and saved"
RUN=$(python3 -c "
import sqlite3, sys; print(sqlite3.connect(sys.argv[1]).execute('SELECT id FROM runs ORDER BY created DESC LIMIT 1').fetchone()[0])" "$EGG_STORE/egg.db")
run_egg report "$RUN"
expect_out "per finished task: [0-9]+ prompt \([1-9][0-9]* cached, [1-9][0-9]* written to the cache\) .*, the prompt cache saving \\\$0\.[0-9]+" \
	"the run's report shows the tokens read from and written to the cache, and the saving"
run_egg report "$RUN" --json
check "and its JSON has the saving per task" python3 - "$OUT" <<'PY'
import json, sys
j = json.load(open(sys.argv[1]))
assert j["tasks"][0]["cache_saved_usd"] > 0 and j["all"]["cache_saved_usd_per_task"] > 0, j["tasks"][0]
PY

# --- OpenAI: its automatic cache reads the same prefix, with no mark sent
start_mock "$TMP/three.jsonl" --prompt-cache
EGG_API_KEY=sk-test run_egg optimize --model gpt-4.1 $FAST --run-dir "$TMP/oa" --json "$TASK"
expect_rc 0 "an OpenAI run of three calls finds the kernel"
calls_of "$TMP/oa" >"$TMP/oa.calls"
check "no cache_control sent; the system message first and the same; the later calls read the cache" \
	python3 - "$MOCK_LOG" "$TMP/oa.calls" <<'PY'
import json, sys
bodies = [json.loads(json.loads(l)["body"]) for l in open(sys.argv[1])]
assert all("cache_control" not in json.dumps(b) for b in bodies)
assert len({b["messages"][0]["content"] for b in bodies}) == 1 and bodies[0]["messages"][0]["role"] == "system"
calls = [json.loads(l) for l in open(sys.argv[2])]
assert calls[0][1] == 0 and all(c[1] >= 1024 and c[4] > 0 for c in calls[1:]), calls
# gpt-4.1: input $2, cached $0.50 per million.
assert all(abs(c[4] - c[1] * 1.5e-6) < 1e-9 for c in calls), calls
PY

# --- a run that only wrote the cache: its saving is negative, said as a cost in every form
printf '%s\n' "{\"match\": [\"mode: seed\"], \"reply_file\": \"$P/seed2_rows.py\", \"wrap\": \"python\"}" >"$TMP/one.jsonl"
start_mock "$TMP/one.jsonl" --prompt-cache
ANTHROPIC_API_KEY=sk-ant run_egg optimize --provider anthropic --model claude-sonnet-4-5 $FAST "$TASK"
expect_rc 0 "a one-call Anthropic run finds the kernel"
expect_err "^  llm: 1 call\(s\), [0-9]+ prompt tokens \(0 read from the prompt cache, [0-9]+ written to it\), .*; the prompt cache cost \\\$0\.[0-9]+ more than it saved$" \
	"its llm: line says the cache cost more than it saved (not 'saved \$-0.0010')"
check "no negative dollar figure is printed" bash -c "! grep -q '\\\$-' '$ERR'"
RUN=$(python3 -c "
import sqlite3, sys; print(sqlite3.connect(sys.argv[1]).execute('SELECT id FROM runs ORDER BY created DESC LIMIT 1').fetchone()[0])" "$EGG_STORE/egg.db")
run_egg report "$RUN"
expect_out "per finished task: [0-9]+ prompt \(0 cached, [1-9][0-9]* written to the cache\) .*, the prompt cache costing \\\$0\.[0-9]+ more" \
	"egg report's text shows the tokens written and the extra cost"
run_egg report "$RUN" --json
check "its JSON carries cache_write_tokens, and the saving below zero" python3 - "$OUT" <<'PY'
import json, sys
j = json.load(open(sys.argv[1]))
t = j["tasks"][0]
assert t["cache_write_tokens"] >= 1024 and t["cache_saved_usd"] < 0, t
assert j["all"]["cache_write_tokens_per_task"] == t["cache_write_tokens"] and j["all"]["cache_saved_usd_per_task"] < 0
PY
run_egg report "$RUN" --csv
check "its CSV has a cache_write_tokens column with the figure" python3 - "$OUT" <<'PY'
import csv, sys
rows = list(csv.DictReader(open(sys.argv[1])))
assert int(rows[0]["cache_write_tokens"]) >= 1024 and float(rows[0]["cache_saved_usd"]) < 0, rows[0]
PY

# --- the least cacheable length: a saving is claimed only above it
SYS=$(python3 -c "import sys; sys.stdout.write((open(sys.argv[1]).read() * 20)[:3900])" "$SMALL")  # 975 tokens, as a small task's system text
script() { printf '%s\n' "$@" >"$TMP/script.jsonl"; start_mock "$TMP/script.jsonl" ${MOCK_ARGS:-}; }
MOCK_ARGS="--prompt-cache"
script '{"reply": "a", "repeat": true}'
for q in one two; do
	ANTHROPIC_API_KEY=sk-ant run_egg chat --provider anthropic --model claude-sonnet-4-5 --json --system "$SYS" "$q"
done
check "a system text under 1024 tokens: the provider caches nothing, and egg claims no saving" python3 - "$OUT" <<'PY'
import json, sys
j = json.load(open(sys.argv[1]))
assert j["usage"]["cached_prompt_tokens"] == 0 and j["usage"]["cache_write_tokens"] == 0 and j["cache_saved_usd"] == 0, j
PY
MOCK_ARGS="--prompt-cache --cache-min-tokens 256"
script '{"reply": "a", "repeat": true}'
for q in one two; do
	ANTHROPIC_API_KEY=sk-ant run_egg chat --provider anthropic --model claude-sonnet-4-5 --json --system "$SYS" "$q"
done
check "a server that reports a cache read under the model's minimum: shown, but priced as input, no saving claimed" \
	python3 - "$OUT" <<'PY'
import json, sys
j = json.load(open(sys.argv[1]))
u = j["usage"]
assert u["cached_prompt_tokens"] > 256 and j["cache_saved_usd"] == 0, j
want = (u["prompt_tokens"] * 3.0 + u["completion_tokens"] * 15.0) / 1e6
assert abs(j["cost_usd"] - want) < 1e-12, (j["cost_usd"], want)
PY
unset MOCK_ARGS

# --- --reasoning-effort on Anthropic: extended thinking, or a clear refusal
script() { printf '%s\n' "$@" >"$TMP/script.jsonl"; start_mock "$TMP/script.jsonl" ${MOCK_ARGS:-}; }
body() { python3 -c '
import json, sys
b = json.loads(json.loads(open(sys.argv[1]).readlines()[int(sys.argv[2])])["body"])
print(json.dumps({k: v for k, v in b.items() if k not in ("messages", "system")}, sort_keys=True))' "$MOCK_LOG" "${1:-0}"; }
script '{"reply": "the answer", "repeat": true}'
ANTHROPIC_API_KEY=sk-ant run_egg chat --provider anthropic --model claude-sonnet-4-5 --reasoning-effort high --json hi
expect_rc 0 "claude-sonnet-4-5 with --reasoning-effort high"
check "thinking enabled with a 24576-token budget on top of the answer's 16384, no temperature" bash -c "
	grep -q '\"max_tokens\": 40960' <<<'$(body)' &&
	grep -q '\"thinking\": {\"budget_tokens\": 24576, \"type\": \"enabled\"}' <<<'$(body)' &&
	! grep -q temperature <<<'$(body)'"
check "the reply is its text, never the thinking block (streamed)" \
	python3 -c "import json,sys; assert json.load(open(sys.argv[1]))['content'] == 'the answer'" "$OUT"
EGG_LLM_STREAM=0 ANTHROPIC_API_KEY=sk-ant run_egg chat --provider anthropic --model claude-sonnet-4-5 \
	--reasoning-effort low --json --no-cache hi
check "nor whole (not streamed)" python3 -c "
import json,sys; assert json.load(open(sys.argv[1]))['content'] == 'the answer'" "$OUT"
ANTHROPIC_API_KEY=sk-ant run_egg chat --provider anthropic --model claude-opus-4-1 --reasoning-effort high --json --no-cache hi
check "claude-opus-4-1 (32000 output tokens at most): the budget shrinks to fit beside the answer" bash -c "
	[ $RC -eq 0 ] && grep -q '\"max_tokens\": 32000' <<<'$(body 2)' &&
	grep -q '\"budget_tokens\": 15616' <<<'$(body 2)'"
check "egg chat --json says the output limit and the budget it sent (32000, 15616), not the settings" \
	python3 -c "import json,sys; j = json.load(open(sys.argv[1])); assert (j['max_tokens'], j['thinking_budget']) == (32000, 15616), j" "$OUT"
EGG_REASONING_EFFORT=high ANTHROPIC_API_KEY=sk-ant run_egg doctor --provider anthropic --model claude-opus-4-1
expect_out "^llm request: +max_tokens 32000, no temperature, extended thinking, a budget of 15616 tokens" \
	"egg doctor reports what the request builder sends for claude-opus-4-1 at high effort"
EGG_REASONING_EFFORT=high ANTHROPIC_API_KEY=sk-ant run_egg doctor --provider anthropic --model claude-opus-4-1 --json
check "and so does its JSON" python3 -c "
import json,sys; q = json.load(open(sys.argv[1]))['llm']['request']; assert (q['max_tokens'], q['thinking_budget']) == (32000, 15616), q" "$OUT"
EGG_REASONING_EFFORT=medium run_egg doctor --provider anthropic --model claude-sonnet-4-5
expect_out "^llm request: .*extended thinking, a budget of 12288 tokens" "egg doctor shows the thinking budget"

script '{"reply": "never", "repeat": true}'
ANTHROPIC_API_KEY=sk-ant run_egg chat --provider anthropic --model claude-3-5-sonnet-20241022 --reasoning-effort high hi
expect_rc 2 "a model without extended thinking refuses --reasoning-effort before any request (exit 2)"
expect_err "^egg: error: --reasoning-effort: claude-3-5-sonnet-20241022 has no extended thinking" "saying why, in one line"
ANTHROPIC_API_KEY=sk-ant run_egg chat --provider anthropic --model claude-sonnet-4-5 --reasoning-effort high \
	--temperature 0.5 hi
expect_rc 2 "thinking with a temperature other than 1 is refused (exit 2)"
expect_err "takes no temperature but 1" "naming the rule"
ANTHROPIC_API_KEY=sk-ant run_egg chat --provider anthropic --model claude-sonnet-4-5 --reasoning-effort extreme hi
expect_rc 2 "an effort that is none of minimal, low, medium, high is refused (exit 2)"
check "and none of these sent anything" test "$(mock_requests)" -eq 0

MOCK_ARGS="--no-thinking-models ^claude-next"
script '{"reply": "adapted", "repeat": true}'
ANTHROPIC_API_KEY=sk-ant run_egg chat --provider anthropic --model claude-next-1 --reasoning-effort high hi
expect_rc 0 "a model egg's table does not know, which has no thinking: adapted to on the server's word"
expect_err "from now on: extended thinking not asked for \(the model has none\)" "said once on stderr"
check "two requests: the refused one, then one without thinking" bash -c "
	[ \$(wc -l <'$MOCK_LOG') -eq 2 ] && ! grep -q thinking <<<'$(body 1)'"
unset MOCK_ARGS
finish
