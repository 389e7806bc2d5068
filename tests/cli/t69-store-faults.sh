#!/usr/bin/env bash
# t69-store-faults.sh: every final write of a run, refused (the fault points
# of src/util/fault.h: EGG_FAULT=NAME[:N] fails the first N passes, 0 every
# one), stops the run with exit 3 and says why; the task and the run show
# stopped in the store when it takes the smaller write that follows, `egg
# report` says why, and nothing is reported as found. A store that cannot be
# read is exit 3 naming it, never "no run".
. "$(dirname "$0")/../lib.sh"

P=$SRC/tests/pipeline
TASK=$SRC/tests/tasks/bias_relu_scale.py
export EGG_MODEL=mock-model EGG_API_KEY=sk-test EGG_LLM_RETRY_BASE_MS=10
FAST="--device cpu --iters 3 --warmup 1 --compile-mode none -q --no-cache"
fresh_mock() { stop_mock 2>/dev/null; start_mock "$P/full.json"; }  # the script's replies, all of them again

latest_status() { # latest_status: "RUN_STATUS TASK_STATUS" of the newest run
	python3 - "$EGG_STORE/egg.db" <<'PY'
import sqlite3, sys
db = sqlite3.connect(sys.argv[1])
run, status = db.execute("SELECT id, status FROM runs ORDER BY created DESC, id DESC LIMIT 1").fetchone()
task = db.execute("SELECT status FROM tasks WHERE run_id = ?", (run,)).fetchone()[0]
print(status, task)
PY
}

# --- the task's final write refused once: the task is stopped, not finished
fresh_mock
EGG_FAULT=task_finish run_egg optimize $FAST "$TASK"
expect_rc 3 "the store refusing the task's final write is an infrastructure failure"
expect_err "^egg: error: stopped: the run store could not record the task's end \(done\): .*full.*; run the same command again to go on" \
	"the error says the task's end could not be recorded, and why"
check "no kernel path was printed as the result" test ! -s "$OUT"
check "the store shows the run and the task stopped" test "$(latest_status)" = "stopped stopped"
run_egg report latest
expect_rc 0 "egg report reads the stopped run"
expect_out "stopped: the run store could not record the task's end" "and says why the task stopped"

# --- refused at every attempt: still exit 3, the store consistent, the task unfinished
fresh_mock
EGG_FAULT=task_finish:0 run_egg optimize $FAST "$TASK"
expect_rc 3 "a store that refuses every final write of the task: exit 3"
check "the task is not finished in the store (a resume runs it again)" test "$(latest_status)" = "stopped running"
check "the store is consistent (SQLite's integrity check)" \
	test "$(sqlite3 "$EGG_STORE/egg.db" "PRAGMA integrity_check")" = ok

# --- a COMMIT that fails (the task's start, in one transaction)
fresh_mock
EGG_FAULT=commit run_egg optimize $FAST "$TASK"
expect_rc 3 "a failing COMMIT is an infrastructure failure, never a success"
expect_err "^egg: error: stopped: the run store cannot be written: store '.*egg.db': commit: " \
	"the error names the store and the COMMIT"
check "the task shows stopped" test "$(latest_status)" = "stopped stopped"

# --- the run's final status refused once
fresh_mock
EGG_FAULT=run_status run_egg optimize $FAST "$TASK"
expect_rc 3 "the store refusing the run's status is an infrastructure failure"
expect_err "^egg: error: the run store could not record the end of run [^ ]+: store .*full" \
	"the error says the run's end could not be recorded"
check "the run shows stopped, its task done" test "$(latest_status)" = "stopped done"
run_egg report latest
expect_out "^run stopped: the run store could not record the end of run" "egg report says why the run stopped"
RUN=$(sqlite3 "$EGG_STORE/egg.db" "SELECT id FROM runs ORDER BY created DESC, id DESC LIMIT 1")
fresh_mock
run_egg optimize $FAST "$TASK"
expect_rc 0 "the same command again goes on with the stopped run and finishes it"
check "and its run is done" test "$(latest_status)" = "done done"

# --- an unreadable store: exit 3 naming it, never "no run"
cp "$EGG_STORE/egg.db" "$TMP/good.db"
python3 - "$EGG_STORE/egg.db" <<'PY'
import sys
with open(sys.argv[1], "r+b") as f:   # every page after the schema's overwritten
    f.seek(4096)
    f.write(b"\x5a" * (4096 * 16))
PY
rm -f "$EGG_STORE/egg.db-wal" "$EGG_STORE/egg.db-shm"
run_egg report latest
expect_rc 3 "egg report on a corrupted store: exit 3"
expect_err "^egg: error: store '.*egg.db': cannot read its runs: database disk image is malformed" \
	"naming the store and what SQLite said"
run_egg runs
expect_rc 3 "egg runs on it: exit 3"
run_egg optimize $FAST "$TASK" --resume "$RUN"
expect_rc 3 "a resume from it: exit 3, not 'no run to resume'"
stop_mock
finish
