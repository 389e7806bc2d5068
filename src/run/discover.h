/* discover.h: the tasks under a folder and the devices a run uses. */
#ifndef EGG_DISCOVER_H
#define EGG_DISCOVER_H

#include "../config/config.h"
#include "../util/strvec.h"

/* Appends every *.py under `dir` (recursively, sorted; hidden entries and
 * __pycache__ skipped) to `out`. */
void discover_tasks(const char *dir, struct strvec *out);
/* GPUs visible here: CUDA_VISIBLE_DEVICES, else /dev/nvidiaN. */
int discover_gpus(void);
/*
 * Fills `out` with the devices to use: the comma-separated `list` when
 * given, else every visible GPU (cuda:0, cuda:1, ...), else `cpu_workers`
 * (at least one) CPU devices, or the configured device. Returns 0, or -1
 * with ERR_INPUT naming an unknown device.
 */
int discover_devices(const struct config *cfg, const char *list, int cpu_workers, struct strvec *out);

#endif
