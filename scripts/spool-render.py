#!/usr/bin/env python3
"""spool-render.py: the requests pending in an --llm-spool folder as plain text.

    scripts/spool-render.py SPOOL OUT

Writes OUT/KEY.txt for each SPOOL/pending/KEY.json: the system message, then
the user message, as a person or another model would read them. The reply
to each goes to SPOOL/replies/KEY.txt (the text the model would return), or
SPOOL/replies/KEY.json ({"content": ..., "usage": {...}}); then run egg again
(egg bench --resume RUN, or the same egg optimize command). A pending
request whose reply is already in SPOOL/replies is not rendered again: the
next run reads that reply (it is named on standard error).
"""
import glob
import json
import os
import sys


def main() -> int:
    if len(sys.argv) != 3:
        sys.stderr.write(__doc__)
        return 2
    spool, out = sys.argv[1], sys.argv[2]
    os.makedirs(out, exist_ok=True)
    for path in sorted(glob.glob(os.path.join(spool, "pending", "*.json"))):
        req = json.load(open(path))
        if any(os.path.exists(os.path.join(spool, "replies", req["key"] + ext)) for ext in (".txt", ".json")):
            sys.stderr.write(f"{req['key']}: answered already (its reply is in {spool}/replies)\n")
            continue
        text = "".join(f"=== {m['role'].upper()} MESSAGE ===\n{m['content']}\n\n" for m in req["messages"])
        with open(os.path.join(out, f"{req['key']}.txt"), "w") as f:
            f.write(text)
        c = req.get("context") or {}
        print(req["key"], c.get("task"), c.get("agent"), c.get("stage"), c.get("candidate"), c.get("call"))
    return 0


if __name__ == "__main__":
    sys.exit(main())
