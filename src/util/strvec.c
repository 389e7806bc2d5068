/* strvec.c: NULL-terminated string vectors. */
#include "strvec.h"

#include <ctype.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include "buf.h"

static void strvec_push_owned(struct strvec *sv, char *s)
{
	if (sv->n + 2 > sv->alloc) {
		sv->alloc = sv->alloc ? sv->alloc * 2 : 8;
		sv->v = xrealloc(sv->v, sv->alloc * sizeof(*sv->v));
	}
	sv->v[sv->n++] = s;
	sv->v[sv->n] = NULL;
}

void strvec_push(struct strvec *sv, const char *s)
{
	strvec_push_owned(sv, xstrdup(s));
}

void strvec_pushf(struct strvec *sv, const char *fmt, ...)
{
	struct buf b = BUF_INIT;
	va_list ap;
	va_start(ap, fmt);
	if (buf_vaddf(&b, fmt, ap) < 0)
		abort();
	va_end(ap);
	strvec_push_owned(sv, buf_detach(&b));
}

void strvec_push_all(struct strvec *sv, const char *const *list)
{
	for (; list && *list; list++)
		strvec_push(sv, *list);
}

void strvec_split(struct strvec *sv, const char *s)
{
	while (*s) {
		const char *start;
		while (*s && isspace((unsigned char)*s))
			s++;
		if (!*s)
			break;
		start = s;
		while (*s && !isspace((unsigned char)*s))
			s++;
		strvec_push_owned(sv, xstrndup(start, (size_t)(s - start)));
	}
}

static long strvec_find_env(const struct strvec *sv, const char *name)
{
	size_t len = strlen(name);
	for (size_t i = 0; i < sv->n; i++)
		if (!strncmp(sv->v[i], name, len) && sv->v[i][len] == '=')
			return (long)i;
	return -1;
}

void strvec_setenv(struct strvec *sv, const char *name, const char *value)
{
	long i = strvec_find_env(sv, name);
	char *entry = xasprintf("%s=%s", name, value);
	if (i >= 0) {
		free(sv->v[i]);
		sv->v[i] = entry;
	} else {
		strvec_push_owned(sv, entry);
	}
}

void strvec_unsetenv(struct strvec *sv, const char *name)
{
	long i;
	while ((i = strvec_find_env(sv, name)) >= 0) {
		free(sv->v[i]);
		memmove(sv->v + i, sv->v + i + 1, (sv->n - (size_t)i) * sizeof(*sv->v));
		sv->n--;
	}
}

const char *strvec_getenv(const struct strvec *sv, const char *name)
{
	long i = strvec_find_env(sv, name);
	return i >= 0 ? sv->v[i] + strlen(name) + 1 : NULL;
}

char *const *strvec_argv(struct strvec *sv)
{
	static char *empty[] = { NULL };
	return sv->v ? sv->v : empty;
}

void strvec_clear(struct strvec *sv)
{
	for (size_t i = 0; i < sv->n; i++)
		free(sv->v[i]);
	free(sv->v);
	sv->v = NULL;
	sv->n = 0;
	sv->alloc = 0;
}
