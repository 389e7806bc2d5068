"""make_fixture.py: turn a real-model spool run into the offline replay fixture.

    python3 tests/realmodel/make_fixture.py STORE RUN_ID SPOOL

Reads the run's LLM calls from the store (in order, per task) and their
replies from SPOOL/replies, and writes, beside this file:
  replies.jsonl   a script for tests/mock/mockllm.py: each task's replies in
                  the order they were asked for, matched on the task's name
                  (not on the prompt, so that a reworded prompt still replays)
  expected.json   per task: calls answered, malformed replies, kernel found
tests/cli/t68-realmodel-replay.sh replays it.
"""
from __future__ import annotations

import json
import os
import sqlite3
import sys


def main() -> int:
    store, run, spool = sys.argv[1:4]
    here = os.path.dirname(os.path.abspath(__file__))
    db = sqlite3.connect(os.path.join(store, "egg.db"))
    rows = db.execute("SELECT task_id, seq, template, stage, candidate, data FROM llm_calls "
                      "WHERE run_id = ? AND outcome = 'reply' ORDER BY task_id, seq", (run,)).fetchall()
    script, expected = [], {}
    for task, seq, template, stage, cand, data in rows:
        key = json.loads(data)["cache_key"]
        for ext in ("txt", "json"):
            path = os.path.join(spool, "replies", f"{key}.{ext}")
            if os.path.exists(path):
                text = open(path).read() if ext == "txt" else json.load(open(path))["content"]
                break
        else:
            raise SystemExit(f"no reply for {task} call {seq} ({key})")
        script.append({"match": [f"Task: {task}."], "reply": text, "task": task, "seq": seq,
                       "agent": template, "stage": stage, "candidate": cand})
        expected.setdefault(task, {"calls": 0})["calls"] += 1
    for task, found, result in db.execute("SELECT task_id, json_extract(result, '$.found'), result FROM tasks "
                                          "WHERE run_id = ?", (run,)):
        r = json.loads(result)
        expected[task]["found"] = bool(found)
        expected[task]["stop_reason"] = r.get("stop_reason")
    for task, n in db.execute("SELECT task_id, COUNT(*) FROM decisions WHERE run_id = ? AND "
                              "json_extract(data, '$.event') = 'malformed_reply' GROUP BY task_id", (run,)):
        expected[task]["malformed"] = n
    with open(os.path.join(here, "replies.jsonl"), "w") as f:
        for e in script:
            f.write(json.dumps(e) + "\n")
    json.dump(expected, open(os.path.join(here, "expected.json"), "w"), indent=1, sort_keys=True)
    print(f"{len(script)} replies for {len(expected)} tasks")
    return 0


if __name__ == "__main__":
    sys.exit(main())
