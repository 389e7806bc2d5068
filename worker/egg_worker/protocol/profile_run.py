"""profile_run.py: the program ncu profiles: the candidate, warmed up, then a
few calls inside cudaProfilerStart/Stop so that only its kernels are measured
(ncu runs with --profile-from-start off)."""
from __future__ import annotations

import json
import os
import sys

import torch

from .candidate import Failure, HarnessError, _load, enter_sandbox
from .guards import apply_precision
from .inputs import fresh_like, trial_inputs


def main(argv: list[str]) -> int:
    with open(argv[0]) as f:
        job = json.load(f)
    os.dup2(2, 1)  # keep ncu's report on stdout clean of anything we print
    enter_sandbox(job)
    device = torch.device(job["device"])
    apply_precision(job["precision"])
    try:
        task, model, _ = _load(job, device)
    except Failure as e:
        sys.stderr.write(f"egg-profile: {e.stage}: {e.reason}\n{e.log}\n")
        return 3
    except HarnessError as e:
        sys.stderr.write(f"egg-profile: harness error while {e.where}: {e.error}\n{e.log}\n")
        return 3
    base = trial_inputs(task, job["base_seed"], 0, device)
    with torch.no_grad():
        for i in range(job["warmup"]):
            model(*fresh_like(base, i, device))
        batches = [fresh_like(base, 1000 + i, device) for i in range(job["calls"])]
        torch.cuda.synchronize()
        torch.cuda.cudart().cudaProfilerStart()
        for inputs in batches:
            model(*inputs)
        torch.cuda.synchronize()
        torch.cuda.cudart().cudaProfilerStop()
    return 0
