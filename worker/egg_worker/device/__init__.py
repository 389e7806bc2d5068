"""egg_worker.device: the device's facts: what it is (probe), can do (roofline), and a task needs of it (sizes)."""
