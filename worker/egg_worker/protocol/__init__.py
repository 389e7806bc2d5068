"""egg_worker.protocol: the evaluation protocol: a candidate checked against the task's reference, timed, and judged."""
