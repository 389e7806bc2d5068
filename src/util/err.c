/* err.c: per-thread pending error, exit-code mapping and secret redaction. */
#include "err.h"

#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "buf.h"

static __thread enum err_kind pending_kind;
static __thread char pending_msg[2048];

#define MAX_SECRETS 8
static char *secrets[MAX_SECRETS];
static int nsecrets;
static pthread_mutex_t secret_lock = PTHREAD_MUTEX_INITIALIZER;

static void set_redacted(const char *msg)
{
	char *clean = secret_redact(msg);
	snprintf(pending_msg, sizeof(pending_msg), "%s", clean);
	free(clean);
}

void err_set(enum err_kind kind, const char *fmt, ...)
{
	struct buf b = BUF_INIT;
	va_list ap;
	va_start(ap, fmt);
	buf_vaddf(&b, fmt, ap);
	va_end(ap);
	pending_kind = kind;
	set_redacted(buf_str(&b));
	buf_release(&b);
}

void err_prefix(const char *fmt, ...)
{
	struct buf b = BUF_INIT;
	va_list ap;
	va_start(ap, fmt);
	buf_vaddf(&b, fmt, ap);
	va_end(ap);
	buf_addf(&b, ": %s", pending_msg);
	set_redacted(buf_str(&b));
	buf_release(&b);
	if (pending_kind == ERR_NONE)
		pending_kind = ERR_INFRA;
}

const char *err_msg(void)
{
	return pending_msg[0] ? pending_msg : "unknown error";
}

enum err_kind err_kind(void)
{
	return pending_kind;
}

void err_clear(void)
{
	pending_kind = ERR_NONE;
	pending_msg[0] = '\0';
}

int err_exit_code(enum err_kind kind)
{
	switch (kind) {
	case ERR_INPUT:
		return EXIT_USAGE;
	case ERR_REJECTED:
		return EXIT_NEGATIVE;
	case ERR_WAITING:
		return EXIT_WAITING;
	case ERR_NONE:
	case ERR_INFRA:
	case ERR_NO_MEMORY:
	default:
		return EXIT_INFRA;
	}
}

int err_report(void)
{
	if (pending_kind == ERR_REJECTED)
		fprintf(stderr, "egg: rejected: %s\n", err_msg());
	else if (pending_kind == ERR_WAITING)
		fprintf(stderr, "egg: waiting: %s\n", err_msg());
	else
		fprintf(stderr, "egg: error: %s\n", err_msg());
	return err_exit_code(pending_kind);
}

int err_usage(const char *fmt, ...)
{
	struct buf b = BUF_INIT;
	va_list ap;
	va_start(ap, fmt);
	buf_vaddf(&b, fmt, ap);
	va_end(ap);
	err_set(ERR_INPUT, "%s", buf_str(&b));
	buf_release(&b);
	return err_report();
}

void secret_register(const char *secret)
{
	if (!secret || strlen(secret) < 4)
		return;
	pthread_mutex_lock(&secret_lock);
	if (nsecrets < MAX_SECRETS)
		secrets[nsecrets++] = xstrdup(secret);
	pthread_mutex_unlock(&secret_lock);
}

char *secret_redact(const char *s)
{
	struct buf out = BUF_INIT;
	pthread_mutex_lock(&secret_lock);
	while (*s) {
		int hit = 0;
		for (int i = 0; i < nsecrets; i++) {
			size_t n = strlen(secrets[i]);
			if (!strncmp(s, secrets[i], n)) {
				buf_adds(&out, "[redacted]");
				s += n;
				hit = 1;
				break;
			}
		}
		if (!hit)
			buf_addc(&out, *s++);
	}
	pthread_mutex_unlock(&secret_lock);
	return buf_detach(&out);
}

int secret_present(const char *s)
{
	int found = 0;
	pthread_mutex_lock(&secret_lock);
	for (int i = 0; i < nsecrets && !found; i++)
		found = strstr(s, secrets[i]) != NULL;
	pthread_mutex_unlock(&secret_lock);
	return found;
}
