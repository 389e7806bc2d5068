#!/usr/bin/env python3
"""prompt-cache-share.py: how much of a run's prompts a provider's prompt cache would serve.

Usage: prompt-cache-share.py REQUESTS.jsonl [--min-tokens N] [--chars-per-token C]

REQUESTS.jsonl is either the requests of a spool run (one JSON object a
line with "messages" and "context": {"task": ...}, as egg writes them into
--llm-spool DIR and tests/realmodel/requests.jsonl keeps them) or a log of
tests/mock/mockllm.py (one {"body": ...} a line; the task is read from the
"Task: NAME." line every egg prompt carries). Requests are taken in order.

Per task it prints the calls, the prompt tokens (characters / C), and two
figures of what a cache would serve on the calls after the first:

  marked:    Anthropic with egg's one cache_control mark at the end of the
             system text: the system text, when the same text was sent
             before in the task and it is at least N tokens long;
  automatic: OpenAI's automatic cache: the longest prefix shared with an
             earlier prompt of the task, in steps of 128 tokens, when the
             prompt is at least N tokens long.

and the input cost at claude-sonnet-4-5's list prices (input $3, cache
write $3.75, cache read $0.30 per million tokens) with and without the
marked cache. Tokens are estimated from characters: the figures are
shares, not a bill.
"""
from __future__ import annotations

import argparse
import json
import os
import re
from collections import OrderedDict

IN, WRITE, READ = 3.0, 3.75, 0.30


def requests(path: str) -> list[tuple[str, str, str]]:
    """(task, system, user) per request, in order."""
    out = []
    for line in open(path):
        r = json.loads(line)
        body = json.loads(r["body"]) if "body" in r else r
        msgs = body.get("messages", [])
        system = body.get("system", "")
        if isinstance(system, list):
            system = "".join(b.get("text", "") for b in system)
        if not system and msgs and msgs[0].get("role") == "system":
            system, msgs = msgs[0]["content"], msgs[1:]
        user = "".join(m["content"] if isinstance(m["content"], str) else
                       "".join(b.get("text", "") for b in m["content"]) for m in msgs)
        task = (r.get("context") or {}).get("task")
        if not task:
            m = re.search(r"Task: ([^\s.]+)\.", system + user)
            task = m.group(1) if m else "?"
        out.append((task, system, user))
    return out


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("requests")
    ap.add_argument("--min-tokens", type=int, default=1024)
    ap.add_argument("--chars-per-token", type=float, default=4.0)
    a = ap.parse_args()
    tok = lambda s: int(len(s) / a.chars_per_token)
    tasks: OrderedDict[str, dict] = OrderedDict()
    for task, system, user in requests(a.requests):
        t = tasks.setdefault(task, {"calls": 0, "prompt": 0, "marked": 0, "automatic": 0, "written": 0,
                                    "systems": set(), "prompts": []})
        text = system + user
        t["calls"] += 1
        t["prompt"] += tok(text)
        if tok(system) >= a.min_tokens:
            if system in t["systems"]:
                t["marked"] += tok(system)
            else:
                t["written"] += tok(system)
                t["systems"].add(system)
        shared = max((len(os.path.commonprefix([old, text])) for old in t["prompts"]), default=0)
        steps = tok(text[:shared]) // 128 * 128
        if tok(text) >= a.min_tokens and steps >= a.min_tokens:
            t["automatic"] += steps
        t["prompts"].append(text)
    print(f"{'task':34} {'calls':>5} {'prompt tok':>10} {'per call':>8} {'marked':>7} {'automatic':>9} "
          f"{'input $ (no cache)':>18} {'input $ (marked)':>16}")
    total = {"calls": 0, "prompt": 0, "marked": 0, "automatic": 0, "written": 0}
    for name, t in tasks.items():
        for k in total:
            total[k] += t[k]
        print(row(name, t))
    print(row("all", total))
    return 0


def row(name: str, t: dict) -> str:
    plain = t["prompt"] * IN / 1e6
    cached = ((t["prompt"] - t["marked"] - t["written"]) * IN + t["written"] * WRITE + t["marked"] * READ) / 1e6
    share = lambda k: f"{100 * t[k] / t['prompt']:.0f}%" if t["prompt"] else "-"
    return (f"{name[:34]:34} {t['calls']:5d} {t['prompt']:10d} {t['prompt'] // max(1, t['calls']):8d} "
            f"{share('marked'):>7} {share('automatic'):>9} {plain:18.4f} {cached:16.4f}")


if __name__ == "__main__":
    raise SystemExit(main())
