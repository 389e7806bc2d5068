#!/usr/bin/env bash
# t66-store-full.sh: a run store that cannot be written (its disk full:
# the fault point EGG_FAULT_STORE_PAGES=+4 lets SQLite hold only 4 pages
# more than the store held when egg opened it) stops the run with a clear error and exit 3,
# never a verdict, and leaves the store consistent: the same command
# with room again finishes.
. "$(dirname "$0")/../lib.sh"

P=$SRC/tests/pipeline
TASK=$SRC/tests/tasks/bias_relu_scale.py
export EGG_MODEL=mock-model EGG_API_KEY=sk-test EGG_LLM_RETRY_BASE_MS=10
FAST="--device cpu --iters 3 --warmup 1 --compile-mode none -q"

start_mock "$P/full.json"
EGG_FAULT_STORE_PAGES=+4 run_egg optimize $FAST --no-cache "$TASK"
expect_rc 3 "a store that fills up in the middle of a run is an infrastructure failure"
expect_err "^egg: error: stopped: the run store cannot be written: .*(full|disk)" \
	"the error says the store cannot be written, and why"
check "no verdict was printed for the task" bash -c "! grep -q 'no valid kernel\|rejected' '$ERR'"
check "it filled in the middle of the run: the run, its task and a first record are in the store" test \
	"$(sqlite3 "$EGG_STORE/egg.db" "SELECT (SELECT count(*) FROM runs) > 0 AND (SELECT count(*) FROM tasks) > 0
		AND (SELECT count(*) FROM llm_calls) + (SELECT count(*) FROM steps) + (SELECT count(*) FROM decisions) > 0")" = 1
check "the store is consistent (SQLite's integrity check)" \
	test "$(sqlite3 "$EGG_STORE/egg.db" "PRAGMA integrity_check")" = ok
stop_mock
# The second pass answers as the first, plus one more repair round: the
# property here is the store's recovery, so a seed that fails its
# evaluation for a reason of its own (a loaded CI machine once made one)
# is repaired rather than stopping the run; why it failed is printed.
python3 - "$P/full.json" "$TMP/again.json" <<'PY'
import json, sys
entries = json.load(open(sys.argv[1]))
for e in entries:
    if e.get("reply_file"):
        e["reply_file"] = sys.argv[1].rsplit("/", 1)[0] + "/" + e["reply_file"]
extra = [dict(e) for e in entries if e.get("match") in (["Role: debug agent"], ["Role: code agent, mode: repair"])]
json.dump(entries + extra, open(sys.argv[2], "w"))
PY
start_mock "$TMP/again.json"
run_egg optimize $FAST --no-cache "$TASK"
expect_rc 0 "with room again, the same command finishes"
grep -rh "^The kernel failed egg's evaluation" "$EGG_STORE/runs" 2>/dev/null | sort | uniq -c | sed 's/^/# diagnostic: the debug agent was asked about: /'
run_egg runs --json
check "and its run is done in the store" test "$(json_get "$OUT" 'j["runs"][0]["status"]')" = done
stop_mock

# A write refused in the last steps, after the last model call and the last
# evaluation (the run's final decisions), stops the task too: nothing ends
# as done whose record is not whole. A clean run's records are counted
# (rows of the run in the tables its recorder writes), then the same run in
# a fresh store has its last record refused (EGG_FAULT=record@N).
printf '%s\n' \
	"{\"match\": [\"mode: seed\"], \"reply_file\": \"$P/seed1_broken.py\", \"wrap\": \"python\"}" \
	'{"match": ["Role: debug agent"], "reply": "{\"critical_issue\": \"tl.relu_that_does_not_exist is no Triton function\", \"modification_plan\": \"use tl.maximum(x + b, 0.0)\"}"}' \
	"{\"match\": [\"Role: code agent, mode: repair\"], \"reply_file\": \"$P/seed1_fixed.py\", \"wrap\": \"python\"}" \
	>"$TMP/last.jsonl"
LAST="$FAST --no-cache --seeds 1 --no-refine --no-hw-tune"
start_mock "$TMP/last.jsonl"
EGG_STORE=$TMP/clean run_egg optimize $LAST "$TASK"
expect_rc 0 "a clean short run finds the kernel"
records=$(sqlite3 "$TMP/clean/egg.db" "SELECT (SELECT count(*) FROM llm_calls) + (SELECT count(*) FROM candidates) +
	(SELECT count(*) FROM profiles) + (SELECT count(*) FROM decisions) + (SELECT count(*) FROM steps)")
start_mock "$TMP/last.jsonl"
EGG_STORE=$TMP/last EGG_FAULT=record@$records run_egg optimize $LAST "$TASK"
expect_rc 3 "the same run with its last record ($records) refused stops (exit 3), not done"
expect_err "^egg: error: stopped: the run store cannot be written: database or disk is full" \
	"saying the store cannot be written"
check "and the task is recorded stopped" test \
	"$(sqlite3 "$TMP/last/egg.db" "SELECT status FROM tasks")" = stopped
finish
