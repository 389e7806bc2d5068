/* pool.c: a fixed set of eval workers per device with blocking checkout. */
#include "pool.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../util/buf.h"
#include "../util/fs.h"

struct device {
	char *name;
	char *lock;
	int tasks;		/* tasks placed here */
	long jobs;		/* jobs served */
	long long mem_budget;	/* bytes; 0: no admission */
	long long mem_used;	/* admitted now */
	long long mem_peak;	/* most admitted at once */
	int running;		/* jobs checked out now */
	struct pool_slot *slots;
	int *busy;
	int nslots;
};

struct pool {
	pthread_mutex_t mu;
	pthread_cond_t freed;
	struct device *dev;
	int ndev;
};

struct pool *pool_new(const struct config *cfg, const char *const *devices, int ndevices, int per_device,
		      const char *log_dir)
{
	struct pool *p = xcalloc(1, sizeof(*p));
	int cpu_seen = 0;
	pthread_mutex_init(&p->mu, NULL);
	pthread_cond_init(&p->freed, NULL);
	p->ndev = ndevices;
	p->dev = xcalloc((size_t)ndevices, sizeof(*p->dev));
	for (int d = 0; d < ndevices; d++) {
		struct device *dv = &p->dev[d];
		const char *kind = worker_device_kind(devices[d]);
		dv->name = xstrdup(devices[d]);
		if (cfg->slurm)
			dv->lock = xasprintf("slurm-%d", d); /* each its own Slurm step, wherever it runs */
		else if (!strcmp(kind, "cpu"))
			dv->lock = xasprintf("cpu-%d", cpu_seen++);
		else
			dv->lock = xasprintf("cuda-%s", strchr(devices[d], ':') ? strchr(devices[d], ':') + 1 : "0");
		dv->nslots = per_device;
		dv->slots = xcalloc((size_t)per_device, sizeof(*dv->slots));
		dv->busy = xcalloc((size_t)per_device, sizeof(int));
		for (int i = 0; i < per_device; i++) {
			char *log = log_dir ? xasprintf("%s/worker-%s-%d.log", log_dir, dv->lock, i) : NULL;
			dv->slots[i].worker = worker_new(cfg, kind, log);
			worker_set_lock(dv->slots[i].worker, dv->lock);
			free(log);
			dv->slots[i].device = d;
			dv->slots[i].device_name = dv->name;
			dv->slots[i].lock = dv->lock;
		}
	}
	return p;
}

int pool_devices(const struct pool *p)
{
	return p->ndev;
}

const char *pool_device_name(const struct pool *p, int device)
{
	return p->dev[device].name;
}

const char *pool_device_lock(const struct pool *p, int device)
{
	return p->dev[device].lock;
}

int pool_place_task(struct pool *p)
{
	int best = 0;
	pthread_mutex_lock(&p->mu);
	for (int d = 1; d < p->ndev; d++)
		if (p->dev[d].tasks < p->dev[best].tasks)
			best = d;
	p->dev[best].tasks++;
	pthread_mutex_unlock(&p->mu);
	return best;
}

void pool_unplace_task(struct pool *p, int device)
{
	pthread_mutex_lock(&p->mu);
	p->dev[device].tasks--;
	pthread_mutex_unlock(&p->mu);
}

struct pool_slot *pool_acquire(struct pool *p, int device)
{
	return pool_acquire_for(p, device, 0);
}

void pool_set_memory(struct pool *p, int device, long long budget)
{
	pthread_mutex_lock(&p->mu);
	if (!p->dev[device].mem_budget)
		p->dev[device].mem_budget = budget > 0 ? budget : 0;
	pthread_cond_broadcast(&p->freed);
	pthread_mutex_unlock(&p->mu);
}

static int admits(const struct device *dv, long long need)
{
	return need <= 0 || dv->mem_budget <= 0 || dv->running == 0 || dv->mem_used + need <= dv->mem_budget;
}

struct pool_slot *pool_acquire_for(struct pool *p, int device, long long need)
{
	struct device *dv = &p->dev[device];
	pthread_mutex_lock(&p->mu);
	for (;;) {
		for (int i = 0; i < dv->nslots && admits(dv, need); i++)
			if (!dv->busy[i]) {
				dv->busy[i] = 1;
				dv->jobs++;
				dv->running++;
				dv->slots[i].reserved = need > 0 ? need : 0;
				dv->mem_used += dv->slots[i].reserved;
				if (dv->mem_used > dv->mem_peak)
					dv->mem_peak = dv->mem_used;
				pthread_mutex_unlock(&p->mu);
				return &dv->slots[i];
			}
		pthread_cond_wait(&p->freed, &p->mu);
	}
}

long long pool_peak_memory(const struct pool *p, int device)
{
	return p->dev[device].mem_peak;
}

void pool_release(struct pool *p, struct pool_slot *slot)
{
	struct device *dv = &p->dev[slot->device];
	pthread_mutex_lock(&p->mu);
	dv->busy[slot - dv->slots] = 0;
	dv->running--;
	dv->mem_used -= slot->reserved;
	slot->reserved = 0;
	pthread_cond_broadcast(&p->freed);
	pthread_mutex_unlock(&p->mu);
}

long pool_worker_retries(const struct pool *p, int device)
{
	long n = 0;
	for (int i = 0; i < p->dev[device].nslots; i++)
		n += worker_retries(p->dev[device].slots[i].worker);
	return n;
}

long pool_worker_starts(const struct pool *p, int device)
{
	long n = 0;
	for (int i = 0; i < p->dev[device].nslots; i++)
		n += worker_starts(p->dev[device].slots[i].worker);
	return n;
}

long pool_jobs(const struct pool *p, int device)
{
	return p->dev[device].jobs;
}

void pool_free(struct pool *p)
{
	if (!p)
		return;
	for (int d = 0; d < p->ndev; d++) {
		for (int i = 0; i < p->dev[d].nslots; i++)
			worker_free(p->dev[d].slots[i].worker);
		free(p->dev[d].slots);
		free(p->dev[d].busy);
		free(p->dev[d].name);
		free(p->dev[d].lock);
	}
	free(p->dev);
	pthread_cond_destroy(&p->freed);
	pthread_mutex_destroy(&p->mu);
	free(p);
}
