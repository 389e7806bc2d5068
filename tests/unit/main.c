/* main.c: runs every unit suite and prints TAP. */
#include <stdlib.h>
#include <string.h>

#include "unit.h"

int unit_count, unit_failed;
const char *unit_source_dir = ".";

static const struct { const char *name; void (*fn)(void); } suites[] = {
	{ "util", suite_util },
	{ "config", suite_config },
	{ "llm", suite_llm },
	{ "proc", suite_proc },
	{ "ncu", suite_ncu },
	{ "reply", suite_reply },
	{ "pool", suite_pool },
	{ "store", suite_store },
	{ "cache", suite_cache },
	{ "run", suite_run },
};

int main(int argc, char **argv)
{
	const char *only = argc > 1 ? argv[1] : NULL;
	if (getenv("EGG_SOURCE_DIR"))
		unit_source_dir = getenv("EGG_SOURCE_DIR");
	for (size_t i = 0; i < sizeof(suites) / sizeof(suites[0]); i++) {
		if (only && strcmp(only, suites[i].name))
			continue;
		printf("# suite %s\n", suites[i].name);
		suites[i].fn();
	}
	printf("1..%d\n", unit_count);
	return unit_failed ? 1 : 0;
}
