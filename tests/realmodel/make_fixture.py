"""make_fixture.py: turn a real-model spool run into the offline replay fixture.

    python3 tests/realmodel/make_fixture.py STORE RUN_ID SPOOL

Reads the run's LLM calls from the store (in order, per task) and their
replies from SPOOL/replies, and writes, beside this file:
  replies.jsonl   a script for tests/mock/mockllm.py: each task's replies in
                  the order they were asked for, matched on the task's name
                  (not on the prompt, so that a reworded prompt still replays)
                  and, where lines of work of one task run side by side (the
                  seeds, each seed's refinement), on what tells the lines
                  apart: "seed K of N", the refined seed's approach line
  expected.json   per task: calls answered, malformed replies, kernel found

    python3 tests/realmodel/make_fixture.py --relink

adds those line marks to an existing replies.jsonl.
tests/cli/t68-realmodel-replay.sh replays it.
"""
from __future__ import annotations

import json
import os
import sqlite3
import sys


def approach(text: str) -> str | None:
    for line in text.splitlines():
        if line.strip().startswith("# approach:"):
            return line.strip()
    return None


def link_lines(script: list) -> None:
    """Adds to each entry the match strings that tell its line of work
    from the others running beside it in its task: a seed's number, and
    for a refinement (a plan, then the kernel, in the order they were asked
    for, one seed after the other) its seed's approach line."""
    by_task: dict = {}
    for e in script:
        by_task.setdefault(e["task"], []).append(e)
    for task, entries in by_task.items():
        seeds = [e for e in entries if e["agent"] == "code.seed"]
        k = 0
        for e in entries:
            e["match"] = [m for m in e["match"] if m.startswith("Task: ")]
            if e["agent"] == "code.seed":
                e["match"].append(f"seed {seeds.index(e) + 1} of {len(seeds)}")
            elif e["stage"] == "refine":
                k += e["agent"] == "profile.refine"
                mark = approach(seeds[k - 1]["reply"]) if 0 < k <= len(seeds) else None
                if mark:
                    e["match"].append(mark)


def main() -> int:
    here = os.path.dirname(os.path.abspath(__file__))
    if sys.argv[1:] == ["--relink"]:
        path = os.path.join(here, "replies.jsonl")
        script = [json.loads(line) for line in open(path)]
        link_lines(script)
        with open(path, "w") as f:
            for e in script:
                f.write(json.dumps(e) + "\n")
        print(f"{len(script)} replies relinked")
        return 0
    store, run, spool = sys.argv[1:4]
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
    link_lines(script)
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
