#!/usr/bin/env bash
# t68-realmodel-replay.sh: the replies a real model gave in a whole CPU run of
# four tasks (tests/realmodel: every request answered by a frontier model,
# through the reply spool) replayed offline through the mock server. A prompt
# change that makes egg misread a real reply shows up here: every task must
# ask for as many replies, parse them as the original run did, and end the
# same way. The run was made with the tuning stages one after the other
# (replies are matched by task, in order), so it is replayed that way
# (--sequential-tuning).
. "$(dirname "$0")/../lib.sh"

R=$SRC/tests/realmodel
export EGG_MODEL=frontier-helper
start_mock "$R/replies.jsonl"
run_egg bench --dir "$R/tasks" --device cpu --iters 5 --warmup 1 --compile-mode none --jobs 4 --sequential-tuning --quiet --json
expect_rc 0 "the replayed run ends as the original did"
RUN=$(json_get "$OUT" 'j["run"]["id"]')
check "every reply was asked for, none more ($(mock_requests) requests)" \
	test "$(mock_requests)" -eq "$(wc -l <"$R/replies.jsonl")"
check "no request went unanswered by the script" bash -c "! grep -q '\"status\": 500' '$MOCK_LOG'"
check "per task: the same calls, malformed replies and result as the original run" python3 - "$R/expected.json" "$EGG_STORE/egg.db" "$RUN" <<'PY'
import json, sqlite3, sys
want = json.load(open(sys.argv[1]))
db = sqlite3.connect(sys.argv[2])
run = sys.argv[3]
bad = []
for task, w in want.items():
    calls = db.execute("SELECT COUNT(*) FROM llm_calls WHERE run_id = ? AND task_id = ? AND outcome = 'reply'",
                       (run, task)).fetchone()[0]
    malformed = db.execute("SELECT COUNT(*) FROM decisions WHERE run_id = ? AND task_id = ? AND "
                           "json_extract(data, '$.event') = 'malformed_reply'", (run, task)).fetchone()[0]
    found = db.execute("SELECT json_extract(result, '$.found') FROM tasks WHERE run_id = ? AND task_id = ?",
                       (run, task)).fetchone()[0]
    got = {"calls": calls, "malformed": malformed, "found": bool(found)}
    exp = {"calls": w["calls"], "malformed": w.get("malformed", 0), "found": w["found"]}
    if got != exp:
        bad.append(f"{task}: got {got}, want {exp}")
assert not bad, "\n".join(bad)
PY
finish
