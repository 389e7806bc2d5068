/* opt.c: parser for declarative option tables. */
#include "opt.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "buf.h"
#include "err.h"
#include "suggest.h"

static const struct opt *find_long(const struct opt *const *tables, const char *name, size_t len)
{
	for (; *tables; tables++)
		for (const struct opt *o = *tables; o->type != OPT_END; o++)
			if (strlen(o->name) == len && !strncmp(o->name, name, len))
				return o;
	return NULL;
}

/* The long option nearest a mistyped one, or NULL (suggest_closest's rule). */
static const char *nearest_long(const struct opt *const *tables, const char *name, size_t len)
{
	const char *names[512];
	size_t n = 0;
	for (; *tables; tables++)
		for (const struct opt *o = *tables; o->type != OPT_END && n < 512; o++)
			names[n++] = o->name;
	return suggest_closest(name, len, names, n);
}

static const struct opt *find_short(const struct opt *const *tables, char c)
{
	for (; *tables; tables++)
		for (const struct opt *o = *tables; o->type != OPT_END; o++)
			if (o->short_name && o->short_name == c)
				return o;
	return NULL;
}

static int set_value(const struct opt *o, const char *value, const char *shown)
{
	char *end;
	switch (o->type) {
	case OPT_STRING:
		*(const char **)o->dest = value;
		return 0;
	case OPT_INT: {
		long v;
		errno = 0;
		v = strtol(value, &end, 10);
		if (errno || end == value || *end || v < -2147483647L || v > 2147483647L) {
			err_set(ERR_INPUT, "option '%s' needs an integer, not '%s'", shown, value);
			return -1;
		}
		*(int *)o->dest = (int)v;
		return 0;
	}
	case OPT_DOUBLE: {
		double v;
		errno = 0;
		v = strtod(value, &end);
		if (errno || end == value || *end) {
			err_set(ERR_INPUT, "option '%s' needs a number, not '%s'", shown, value);
			return -1;
		}
		*(double *)o->dest = v;
		return 0;
	}
	default:
		return 0;
	}
}

static int takes_value(const struct opt *o)
{
	return o->type == OPT_STRING || o->type == OPT_INT || o->type == OPT_DOUBLE;
}

int opt_parse(const struct opt *const *tables, int argc, char **argv,
	      struct strvec *positional)
{
	int only_positional = 0;

	for (int i = 0; i < argc; i++) {
		const char *a = argv[i];
		const struct opt *o;
		const char *value = NULL;
		char shown[128];

		if (only_positional || a[0] != '-' || !a[1]) {
			strvec_push(positional, a);
			continue;
		}
		if (!strcmp(a, "--")) {
			only_positional = 1;
			continue;
		}
		if (a[1] == '-') {
			const char *eq = strchr(a + 2, '=');
			size_t len = eq ? (size_t)(eq - a - 2) : strlen(a + 2);
			o = find_long(tables, a + 2, len);
			snprintf(shown, sizeof(shown), "--%.*s", (int)len, a + 2);
			if (eq)
				value = eq + 1;
		} else {
			if (a[2]) {
				err_set(ERR_INPUT, "unknown option '%s'", a);
				return -1;
			}
			o = find_short(tables, a[1]);
			snprintf(shown, sizeof(shown), "-%c", a[1]);
		}
		if (!o) {
			const char *near = a[1] == '-' ? nearest_long(tables, shown + 2, strlen(shown + 2)) : NULL;
			if (near)
				err_set(ERR_INPUT, "unknown option '%s' (did you mean '--%s'?)", shown, near);
			else
				err_set(ERR_INPUT, "unknown option '%s'", shown);
			return -1;
		}
		if (!takes_value(o)) {
			if (value) {
				err_set(ERR_INPUT, "option '%s' takes no value", shown);
				return -1;
			}
			*(int *)o->dest = o->type == OPT_FLAG;
			continue;
		}
		if (!value) {
			if (i + 1 >= argc) {
				err_set(ERR_INPUT, "option '%s' needs a value", shown);
				return -1;
			}
			value = argv[++i];
		}
		if (set_value(o, value, shown) < 0)
			return -1;
	}
	return 0;
}

void opt_print_help(FILE *f, const struct opt *const *tables)
{
	for (; *tables; tables++) {
		for (const struct opt *o = *tables; o->type != OPT_END; o++) {
			struct buf b = BUF_INIT;
			if (o->short_name)
				buf_addf(&b, "-%c, ", o->short_name);
			buf_addf(&b, "--%s", o->name);
			if (takes_value(o))
				buf_addf(&b, " %s", o->arg ? o->arg : "VALUE");
			fprintf(f, "  %-28s %s\n", buf_str(&b), o->help ? o->help : "");
			buf_release(&b);
		}
	}
}
