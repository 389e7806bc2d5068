"""test_noise.py: which of a split's times are noisy (program/noise.py) and
how egg split marks them: a subgraph whose rounds in the program spread
more than 2x (one stall the median ignores is not noise; two are), the
repeats of one task measured far apart, and a measurement of a real
program (small_cnn.py on the CPU) under a clock the test drives, steady
and then stalling in its later rounds. In-process; t87 checks what egg
prints of it."""
from __future__ import annotations

import os
import sys
import types

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from wlib import ROOT, TASKS, Tap  # noqa: E402

sys.path.insert(0, os.path.join(ROOT, "worker"))
from egg_worker.program import measure  # noqa: E402
from egg_worker.program.noise import noise_words  # noqa: E402
from egg_worker.program.repeats import _repeats_noise as repeats_noise  # noqa: E402
from egg_worker.program.split import split  # noqa: E402
from egg_worker.taskload import load_task  # noqa: E402


class Clock:
    """perf_counter for measure.py: `step_s` a call, `stall_s` a call once
    `stall_after` calls were made (the later rounds of a measurement)."""

    def __init__(self, step_s: float, stall_after: int | None = None, stall_s: float = 0.0):
        self.t, self.calls = 0.0, 0
        self.step_s, self.stall_after, self.stall_s = step_s, stall_after, stall_s

    def perf_counter(self) -> float:
        self.calls += 1
        stalled = self.stall_after is not None and self.calls > self.stall_after
        self.t += self.stall_s if stalled else self.step_s
        return self.t


def split_with(clock: Clock) -> dict:
    """small_cnn.py split and measured on the CPU, measure.py reading `clock`."""
    path = os.path.join(TASKS, "programs", "small_cnn.py")
    real = measure.time
    measure.time = types.SimpleNamespace(perf_counter=clock.perf_counter)
    try:
        return split(load_task(path, "egg_test_noise"), path, open(path).read(), "cpu", True, 5)
    finally:
        measure.time = real


def part(file: str, task: str, ms: float) -> dict:
    return {"file": file, "task": task, "eager_ms": ms, "glue": False, "source": ""}


def main() -> int:
    tap = Tap()
    tap.ok(noise_words([0.1, 0.11, 0.1, 0.1, 20.0], "r", trim=True) is None,
           "one stall in five rounds is not noise: the median ignores it")
    tap.ok(noise_words([0.1, 0.11, 0.1, 20.0, 20.0], "its 5 rounds", trim=True)
           == "its 5 rounds took 0.1000 to 20.0000 ms", "two stalls are, said with the whole spread")
    tap.ok(noise_words([0.001, 0.004, 0.003], "r") is None, "a spread under the clock's grain is not noise")
    tap.ok(noise_words([0.0873, 11.33], "the 2 repeats of its task") is not None,
           "two repeats 130x apart are noise")

    # The repeats of one task, as merge_repeats leaves them (each names its task).
    sgs = [part("a.py", "a.py", 0.0873), part("b.py", "b.py", 0.2), part("a2.py", "a.py", 11.33),
           part("b2.py", "b.py", 0.25)]
    repeats_noise(sgs)
    tap.ok(sgs[0].get("noise") == sgs[2].get("noise") == "the 2 repeats of its task took 0.0873 to 11.3300 ms",
           "repeats of one task 130x apart are each noisy", sgs)
    tap.ok("noise" not in sgs[1] and "noise" not in sgs[3], "repeats within 2x are not", sgs)

    # A real program measured under a clock the test drives.
    plan = split_with(Clock(0.0001))
    parts = [s for s in plan["subgraphs"] if not s.get("glue")]
    tap.ok(parts and all(s["eager_ms_range"][0] <= s["eager_ms"] <= s["eager_ms_range"][1] for s in parts),
           "each subgraph's fastest and slowest round go with its time", parts)
    tap.ok(plan["noisy"] == 0 and not any("noise" in s for s in parts), "a steady clock: nothing noisy",
           [s.get("noise") for s in parts])
    # The clock stalls 200x per call from the middle of the timed rounds on:
    # the later rounds of every subgraph are far slower.
    steady = Clock(0.0001)
    split_with(steady)
    plan = split_with(Clock(0.0001, stall_after=int(steady.calls * 0.6), stall_s=0.02))
    parts = [s for s in plan["subgraphs"] if not s.get("glue")]
    tap.ok(plan["noisy"] == len(parts) and all(s.get("noise", "").startswith("its 5 rounds in the program took ")
                                              for s in parts),
           "rounds that stall are noise: each subgraph says so and the plan counts them",
           [(s["name"], s.get("noise"), s.get("eager_ms_range")) for s in parts])
    return tap.done()


if __name__ == "__main__":
    sys.exit(main())
