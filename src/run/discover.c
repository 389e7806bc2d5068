/* discover.c: task files under a folder; the devices of this machine. */
#include "discover.h"

#include <dirent.h>
#include <glob.h>
#include <stdlib.h>
#include <string.h>

#include "../eval/worker.h"
#include "../util/buf.h"
#include "../util/err.h"
#include "../util/fs.h"

static int cmp_str(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

void discover_tasks(const char *dir, struct strvec *out)
{
	DIR *d = opendir(dir);
	struct dirent *e;
	struct strvec found = STRVEC_INIT;
	if (!d)
		return;
	while ((e = readdir(d))) {
		char *p;
		if (e->d_name[0] == '.' || !strcmp(e->d_name, "__pycache__"))
			continue;
		p = fs_join(dir, e->d_name);
		if (fs_is_dir(p))
			discover_tasks(p, &found);
		else if (strlen(e->d_name) > 3 && !strcmp(e->d_name + strlen(e->d_name) - 3, ".py") &&
			 !(strlen(e->d_name) > 12 && !strcmp(e->d_name + strlen(e->d_name) - 12, ".existing.py")))
			strvec_push(&found, p); /* TASK.existing.py is a task's existing kernel, not a task */
		free(p);
	}
	closedir(d);
	if (found.n)
		qsort(found.v, found.n, sizeof(char *), cmp_str);
	for (size_t i = 0; i < found.n; i++)
		strvec_push(out, found.v[i]);
	strvec_clear(&found);
}

int discover_gpus(void)
{
	const char *cvd = getenv("CUDA_VISIBLE_DEVICES");
	glob_t g;
	int n = 0;
	if (cvd) {
		if (!*cvd)
			return 0;
		n = 1;
		for (const char *p = cvd; *p; p++)
			n += *p == ',';
		return n;
	}
	if (glob("/dev/nvidia[0-9]*", 0, NULL, &g) == 0) {
		n = (int)g.gl_pathc;
		globfree(&g);
	}
	return n;
}

int discover_devices(const struct config *cfg, const char *list, int cpu_workers, struct strvec *out)
{
	if (list) {
		char *copy = xstrdup(list), *save = NULL;
		for (char *d = strtok_r(copy, ",", &save); d; d = strtok_r(NULL, ",", &save))
			strvec_push(out, d);
		free(copy);
	} else {
		int n = cfg->device ? 0 : discover_gpus();
		const char *device = worker_default_device(cfg);
		if (n > 0 && !strcmp(worker_device_kind(device), "cuda")) {
			for (int i = 0; i < n; i++)
				strvec_pushf(out, "cuda:%d", i);
		} else {
			for (int i = 0; i < (cpu_workers > 0 ? cpu_workers : 1); i++)
				strvec_push(out, device);
		}
	}
	if (!out->n) {
		err_set(ERR_INPUT, "no device given");
		return -1;
	}
	for (size_t i = 0; i < out->n; i++)
		if (!worker_device_kind(out->v[i])) {
			err_set(ERR_INPUT, "unknown device '%s'", out->v[i]);
			return -1;
		}
	return 0;
}
