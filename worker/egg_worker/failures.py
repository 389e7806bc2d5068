"""failures.py: how a job of any kind ends other than with its result: the
user's input is unusable (InputError), the worker could not do it
(InfraError; TooBig when it cannot fit in the device's memory at all), or
one of its processes was killed from outside (JobLost). main.py turns each
into its reply kind ("input", "infra", "lost"; TooBig's infra reply carries
"cause": "memory")."""
from __future__ import annotations

from .children import Child


class InputError(Exception):
    """The job's task is unusable (the user's input error)."""


class InfraError(Exception):
    """The worker could not do the job (not the candidate's fault)."""


class TooBig(InfraError):
    """The job cannot fit in its device's memory, refused before anything of
    it was allocated: running it again on that device will not help (its
    message says what would)."""


class JobLost(Exception):
    """A process of the job was killed from outside (children.OUTSIDE_KILLS):
    whatever it would have answered is void, and egg runs the job again on a
    fresh worker (reply kind "lost"), never judging the candidate by it."""


def lost_if_killed(c: Child) -> None:
    why = c.killed_from_outside()
    if why and "OOM killer" in why:
        raise JobLost(f"the job's {c.role} process was {why}: evaluate it with smaller sizes, on a device with "
                      "more memory, or with fewer jobs at once")
    if why:
        raise JobLost(f"the job's {c.role} process was {why} from outside the worker (a cancelled Slurm step, "
                      "the OOM killer or an operator)")
