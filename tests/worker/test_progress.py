"""test_progress.py: the worker's progress lines (progress.py): a step is
said when it starts and repeated by the heartbeat while it lasts, under the
job's request id; nothing is said outside a job. In-process, with a short
heartbeat; test_worker.py checks the steps of a real evaluation."""
from __future__ import annotations

import io
import json
import os
import sys
import threading
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from wlib import ROOT, Tap  # noqa: E402

sys.path.insert(0, os.path.join(ROOT, "worker"))
from egg_worker import progress  # noqa: E402


class Lines(io.StringIO):
    """A stdout that records its lines (written from two threads)."""

    def __init__(self):
        super().__init__()
        self.mu = threading.Lock()

    def lines(self) -> list:
        with self.mu:
            return [json.loads(x) for x in self.getvalue().splitlines()]

    def write(self, s):
        with self.mu:
            return super().write(s)


def main() -> int:
    tap = Tap()
    out = Lines()
    progress.HEARTBEAT_S = 0.3
    progress.attach(out)
    progress.step("outside any job")
    time.sleep(0.5)
    tap.ok(out.lines() == [], "outside a job nothing is said, not even by the heartbeat", out.lines())

    t_begin = time.monotonic()
    progress.begin(7)
    progress.step("loading")
    time.sleep(0.05)
    progress.step("timing")
    t_timing = time.monotonic()
    # Wait for the heartbeat itself (a slow machine only waits longer): two
    # repeats of the step, or ten seconds without them.
    while [x["step"] for x in out.lines()].count("timing") < 3 and time.monotonic() - t_timing < 10:
        time.sleep(0.05)
    progress.end()
    t_end = time.monotonic()
    time.sleep(0.7)
    got = out.lines()
    steps = [x["step"] for x in got]
    tap.ok(all(x["id"] == 7 and x["event"] == "progress" for x in got), "every line carries the job's id", got)
    # No more repeats than heartbeat periods fit in the step (sleeps only
    # ever last longer); at least the two waited for.
    most = int((t_end - t_timing) / progress.HEARTBEAT_S) + 1
    tap.ok(steps[:2] == ["loading", "timing"] and 2 <= steps[2:].count("timing") <= most
           and set(steps[2:]) == {"timing"}, f"a step that lasts is repeated by the heartbeat: {steps} (at most {most})")
    times = [x["elapsed_s"] for x in got]
    # Elapsed from the job's start: never above what this test saw pass, and
    # a repeat comes no sooner than one heartbeat after the step began
    # (the worker says tenths of a second).
    tap.ok(times == sorted(times) and times[-1] <= round(t_end - t_begin, 1) + 0.05
           and all(t >= round(progress.HEARTBEAT_S, 1) - 0.05 for t in times[2:]),
           f"elapsed seconds rise from the job's start: {times} (the job lasted {t_end - t_begin:.2f} s)")
    n = len(got)
    time.sleep(0.5)
    tap.ok(len(out.lines()) == n, "after the job ends the heartbeat is silent")

    progress.write_line({"id": 8, "ok": True, "result": {}})
    tap.ok(out.lines()[-1] == {"id": 8, "ok": True, "result": {}}, "replies go through the same writer")
    return tap.done()


if __name__ == "__main__":
    sys.exit(main())
