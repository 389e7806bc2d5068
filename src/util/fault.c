/* fault.c: the fault points of fault.h, counted per name across the process's threads. */
#include "fault.h"

#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#define MAX_POINTS 8

static struct point {
	char name[32];
	long left;		/* passes still to fail; -1: every one */
	long at;		/* NAME@K: only pass K fails (0: not so) */
	long passes;		/* passes so far, for `at` */
} points[MAX_POINTS];
static int npoints;
static pthread_once_t parsed = PTHREAD_ONCE_INIT;
static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;

static void parse_spec(const char *spec)
{
	npoints = 0;
	while (spec && *spec && npoints < MAX_POINTS) {
		size_t n = strcspn(spec, ",:@");
		struct point *p = &points[npoints];
		if (n && n < sizeof(p->name)) {
			memset(p, 0, sizeof(*p));
			memcpy(p->name, spec, n);
			p->left = 1;
			if (spec[n] == '@') {
				p->at = strtol(spec + n + 1, NULL, 10);
				p->left = p->at > 0;
			} else if (spec[n] == ':') {
				long count = strtol(spec + n + 1, NULL, 10);
				p->left = count > 0 ? count : -1;
			}
			npoints++;
		}
		spec += strcspn(spec, ",");
		spec += *spec == ',';
	}
}

static void parse(void)
{
	parse_spec(getenv("EGG_FAULT"));
}

void fault_arm(const char *spec)
{
	pthread_once(&parsed, parse);
	pthread_mutex_lock(&lock);
	parse_spec(spec);
	pthread_mutex_unlock(&lock);
}

int fault_hit(const char *name)
{
	int hit = 0;
	pthread_once(&parsed, parse);
	if (!npoints)
		return 0;
	pthread_mutex_lock(&lock);
	for (int i = 0; i < npoints && !hit; i++)
		if (!strcmp(points[i].name, name) && points[i].at) {
			hit = ++points[i].passes == points[i].at;
		} else if (!strcmp(points[i].name, name) && points[i].left) {
			hit = 1;
			if (points[i].left > 0)
				points[i].left--;
		}
	pthread_mutex_unlock(&lock);
	return hit;
}
