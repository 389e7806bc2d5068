#!/usr/bin/env python3
"""matrix_row.py: one row of a model matrix table (bench/model-matrix-gpu.sh, bench/models-h200.sh).

Usage: matrix_row.py NAME SPLIT.json EVAL.json T0 T1 [--error rel|reason]

From egg split's --json (subgraphs, distinct tasks, the top 5 distinct
share, the split's eager time) and egg eval's --json of the identity
composition (its verdict, with its largest relative error or the start of
its reason; eager and torch.compile times; an eval that wrote nothing
reads "-"), and the split's start and end (epoch seconds).
"""
import json
import sys


def main() -> int:
    name, split_path, eval_path, t0, t1 = sys.argv[1:6]
    beside = sys.argv[7] if len(sys.argv) > 7 and sys.argv[6] == "--error" else "rel"
    split = json.load(open(split_path))
    try:
        ev = json.load(open(eval_path))
    except (OSError, ValueError):
        ev = {}
    subs = [s for s in split["subgraphs"] if not s.get("glue")]
    firsts = sorted((s.get("task_share") or 0 for s in subs if s.get("occurrences")), reverse=True)
    fmt = lambda v, f="%.3f": f % v if isinstance(v, (int, float)) else "-"
    note = f"({fmt(ev.get('max_rel_err'), '%.2g')})" if beside == "rel" else (ev.get("reason") or "")[:80]
    print(f"| {name} | {len(subs)} | {len(firsts)} | {100 * sum(firsts[:5]):.1f}% | {ev.get('verdict', '-')} "
          f"{note} | {fmt(split.get('eager_ms'))} | {fmt(ev.get('eager_ms'))} | {fmt(ev.get('compile_ms'))} | "
          f"{float(t1) - float(t0):.0f} s |")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
