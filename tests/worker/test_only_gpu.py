"""test_only_gpu.py: sandbox.only_gpu, which makes a job's GPU the only one
its evaluation processes see (as cuda:0), with and without an inherited
CUDA_VISIBLE_DEVICES. Pure environment logic: no GPU needed. (The H200 run
of bench/gpu-multi.sh is where it is seen working: before it, every job for
cuda:1 launched on cuda:0 and timed nothing.)"""
from __future__ import annotations

import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from wlib import ROOT, Tap  # noqa: E402

sys.path.insert(0, os.path.join(ROOT, "worker"))
from egg_worker.sandbox import only_gpu  # noqa: E402


def pinned(device: str, inherited: str | None) -> tuple:
    """(job device after, CUDA_VISIBLE_DEVICES after, error) for one call."""
    os.environ.pop("CUDA_VISIBLE_DEVICES", None)
    if inherited is not None:
        os.environ["CUDA_VISIBLE_DEVICES"] = inherited
    job = {"device": device}
    try:
        only_gpu(job)
    except RuntimeError as e:
        return job["device"], os.environ.get("CUDA_VISIBLE_DEVICES"), str(e)
    return job["device"], os.environ.get("CUDA_VISIBLE_DEVICES"), None


def main() -> int:
    tap = Tap()
    tap.ok(pinned("cuda:1", None) == ("cuda:0", "1", None), "cuda:1 becomes the only GPU, seen as cuda:0")
    tap.ok(pinned("cuda:0", None) == ("cuda:0", "0", None), "cuda:0 stays cuda:0, alone")
    tap.ok(pinned("cuda:1", "4,6") == ("cuda:0", "6", None),
           "an inherited CUDA_VISIBLE_DEVICES is indexed, not replaced by the index")
    tap.ok(pinned("cuda:1", " 4, 6 ") == ("cuda:0", "6", None), "spaces in the inherited list are ignored")
    dev, vis, err = pinned("cuda:2", "4,6")
    tap.ok(err is not None and "cuda:2" in err and vis == "4,6",
           f"a device outside the inherited list is an error, the list left alone ({err})")
    tap.ok(pinned("cpu", "3") == ("cpu", "3", None), "a CPU job changes nothing")
    return tap.done()


if __name__ == "__main__":
    sys.exit(main())
