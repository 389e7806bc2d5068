/* pool.h: eval workers per device, handed out to task threads one job at a time. */
#ifndef EGG_POOL_H
#define EGG_POOL_H

#include "worker.h"

/*
 * Devices are e.g. {"cuda:0", "cuda:1"} or {"cpu", "cpu"} (several CPU
 * "devices" stand in for GPUs in tests). Each device gets `per_device`
 * worker processes, so that several candidates compile at once; the
 * device's lock key ("cuda-0", "cpu-1") makes timing and profiling
 * exclusive per device across all workers (the worker takes an flock).
 * Thread-safe.
 */
struct pool;

struct pool_slot {
	struct worker *worker;
	int device;		/* index into the pool's devices */
	const char *device_name;
	const char *lock;	/* the device lock key */
	long long reserved;	/* memory admitted for the job it serves */
};

struct pool *pool_new(const struct config *cfg, const char *const *devices, int ndevices, int per_device,
		      const char *log_dir);
int pool_devices(const struct pool *p);
const char *pool_device_name(const struct pool *p, int device);
const char *pool_device_lock(const struct pool *p, int device);
/* The device with the fewest tasks placed on it; counts the placement. */
int pool_place_task(struct pool *p);
void pool_unplace_task(struct pool *p, int device);
/* Blocks until a worker of `device` is free. */
struct pool_slot *pool_acquire(struct pool *p, int device);
/*
 * Memory admission: a device with a budget (bytes; 0: none) admits a job
 * needing `need` bytes only when it fits beside the jobs already admitted,
 * or when nothing else runs there (a job larger than the budget then runs
 * alone). Blocks until a worker is free and the job is admitted. The first
 * budget set for a device stays (later figures of free memory would count
 * egg's own jobs).
 */
void pool_set_memory(struct pool *p, int device, long long budget);
struct pool_slot *pool_acquire_for(struct pool *p, int device, long long need);
/* The most memory admitted at once on a device so far. */
long long pool_peak_memory(const struct pool *p, int device);
void pool_release(struct pool *p, struct pool_slot *slot);
/* Jobs served per device so far (for placement checks). */
/* Worker processes started on a device (restarts included), and jobs run
 * again after a lost worker (infrastructure, never a verdict). */
long pool_worker_starts(const struct pool *p, int device);
long pool_worker_retries(const struct pool *p, int device);
long pool_jobs(const struct pool *p, int device);
void pool_free(struct pool *p);

#endif
