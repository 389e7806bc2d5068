#!/usr/bin/env bash
# t66-store-full.sh: a run store that cannot be written (its disk full:
# the fault point EGG_FAULT_STORE_PAGES lets SQLite hold only a few pages
# more than a fresh store) stops the run with a clear error and exit 3,
# never a verdict, and leaves the store consistent: the same command
# with room again finishes.
. "$(dirname "$0")/../lib.sh"

P=$SRC/tests/pipeline
TASK=$SRC/tests/tasks/bias_relu_scale.py
export EGG_MODEL=mock-model EGG_API_KEY=sk-test EGG_LLM_RETRY_BASE_MS=10
FAST="--device cpu --iters 3 --warmup 1 --compile-mode none -q"

run_egg runs
pages=$(sqlite3 "$EGG_STORE/egg.db" "PRAGMA page_count")
start_mock "$P/full.json"
EGG_FAULT_STORE_PAGES=$((pages + 4)) run_egg optimize $FAST --no-cache "$TASK"
expect_rc 3 "a store that fills up in the middle of a run is an infrastructure failure"
expect_err "^egg: error: stopped: the run store cannot be written: .*(full|disk)" \
	"the error says the store cannot be written, and why"
check "no verdict was printed for the task" bash -c "! grep -q 'no valid kernel\|rejected' '$ERR'"
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
finish
