"""main.py: the worker's entry: `serve` (JSON lines on stdio), `probe`, `profile-run`."""
from __future__ import annotations

import sys


def main(argv: list[str]) -> int:
    mode = argv[0] if argv else "serve"
    if mode == "probe":
        from . import probe

        return probe.main(argv[1:])
    if mode == "ncu-selftest":
        from . import probe

        return probe.selftest_kernel()
    sys.stderr.write(f"egg-worker: unknown mode '{mode}'\n")
    return 2
