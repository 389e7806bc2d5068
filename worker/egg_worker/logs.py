"""logs.py: keep failure logs to what matters (the traceback's end, the compiler's message)."""
from __future__ import annotations

import traceback

LOG_LIMIT = 4000


def trim(text: str, limit: int = LOG_LIMIT) -> str:
    """Keep the head and, mostly, the tail of a long log."""
    if len(text) <= limit:
        return text
    head = limit // 5
    tail = limit - head - 60
    return f"{text[:head]}\n... [{len(text) - head - tail} characters cut] ...\n{text[-tail:]}"


def exception_log(exc: BaseException, limit: int = LOG_LIMIT) -> str:
    """A trimmed traceback: frames inside torch/triton internals are elided."""
    lines = traceback.format_exception(type(exc), exc, exc.__traceback__)
    kept = []
    skipped = 0
    for line in lines:
        internal = ("/site-packages/torch/" in line or "/site-packages/triton/" in line
                    or "/egg_worker/" in line) and line.lstrip().startswith("File ")
        if internal:
            skipped += 1
            continue
        if skipped:
            kept.append(f"  [... {skipped} frame(s) inside torch/triton/egg elided ...]\n")
            skipped = 0
        kept.append(line)
    return trim("".join(kept), limit)
