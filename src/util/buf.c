/* buf.c: growable byte buffer and checked allocation helpers. */
#include "buf.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void *xmalloc(size_t n)
{
	void *p = malloc(n ? n : 1);
	if (!p) {
		fputs("egg: error: out of memory\n", stderr);
		abort();
	}
	return p;
}

void *xcalloc(size_t n, size_t size)
{
	void *p = calloc(n ? n : 1, size ? size : 1);
	if (!p) {
		fputs("egg: error: out of memory\n", stderr);
		abort();
	}
	return p;
}

void *xrealloc(void *p, size_t n)
{
	void *q = realloc(p, n ? n : 1);
	if (!q) {
		fputs("egg: error: out of memory\n", stderr);
		abort();
	}
	return q;
}

char *xstrdup(const char *s)
{
	return xstrndup(s, strlen(s));
}

char *xstrndup(const char *s, size_t n)
{
	size_t len = strnlen(s, n);
	char *p = xmalloc(len + 1);
	memcpy(p, s, len);
	p[len] = '\0';
	return p;
}

char *xasprintf(const char *fmt, ...)
{
	struct buf b = BUF_INIT;
	va_list ap;
	va_start(ap, fmt);
	if (buf_vaddf(&b, fmt, ap) < 0) {
		fputs("egg: error: out of memory\n", stderr);
		abort();
	}
	va_end(ap);
	return buf_detach(&b);
}

void buf_init(struct buf *b, size_t cap)
{
	b->data = NULL;
	b->len = 0;
	b->alloc = 0;
	b->cap = cap;
}

/* Make room for `extra` more bytes plus the terminating NUL. */
static int buf_grow(struct buf *b, size_t extra)
{
	size_t need, n;
	char *p;

	if (extra > (size_t)-1 - b->len - 1)
		return -1;
	need = b->len + extra + 1;
	if (b->cap && need - 1 > b->cap)
		return -1;
	if (need <= b->alloc)
		return 0;
	n = b->alloc ? b->alloc : 64;
	while (n < need)
		n = n > (size_t)-1 / 2 ? need : n * 2;
	p = realloc(b->data, n);
	if (!p && !b->cap) {
		/* Uncapped: out of memory is fatal, as for the x* helpers. */
		fputs("egg: error: out of memory\n", stderr);
		abort();
	}
	if (!p)
		return -1;
	b->data = p;
	b->alloc = n;
	return 0;
}

int buf_add(struct buf *b, const void *data, size_t len)
{
	/* Appending a part of the buffer to itself must survive the realloc. */
	const char *src = data;
	int inside = b->data && src >= b->data && src < b->data + b->alloc;
	size_t offset = inside ? (size_t)(src - b->data) : 0;

	if (buf_grow(b, len) < 0)
		return -1;
	if (inside)
		src = b->data + offset;
	if (len)
		memmove(b->data + b->len, src, len);
	b->len += len;
	b->data[b->len] = '\0';
	return 0;
}

int buf_adds(struct buf *b, const char *s)
{
	return buf_add(b, s, strlen(s));
}

int buf_addc(struct buf *b, char c)
{
	return buf_add(b, &c, 1);
}

int buf_vaddf(struct buf *b, const char *fmt, va_list ap)
{
	va_list cp;
	int n;

	va_copy(cp, ap);
	n = vsnprintf(NULL, 0, fmt, cp);
	va_end(cp);
	if (n < 0 || buf_grow(b, (size_t)n) < 0)
		return -1;
	vsnprintf(b->data + b->len, (size_t)n + 1, fmt, ap);
	b->len += (size_t)n;
	return 0;
}

int buf_addf(struct buf *b, const char *fmt, ...)
{
	va_list ap;
	int rc;
	va_start(ap, fmt);
	rc = buf_vaddf(b, fmt, ap);
	va_end(ap);
	return rc;
}

int buf_add_size(struct buf *b, double bytes)
{
	if (bytes >= 1e9)
		return buf_addf(b, "%.2f GB", bytes / 1e9);
	if (bytes >= 1e6)
		return buf_addf(b, "%.1f MB", bytes / 1e6);
	if (bytes >= 1e3)
		return buf_addf(b, "%.1f KB", bytes / 1e3);
	return buf_addf(b, "%.0f bytes", bytes);
}

const char *buf_str(const struct buf *b)
{
	return b->data ? b->data : "";
}

void buf_reset(struct buf *b)
{
	buf_truncate(b, 0);
}

void buf_truncate(struct buf *b, size_t len)
{
	if (len < b->len) {
		b->len = len;
		b->data[len] = '\0';
	}
}

char *buf_detach(struct buf *b)
{
	char *p = b->data ? b->data : xstrdup("");
	b->data = NULL;
	b->len = 0;
	b->alloc = 0;
	return p;
}

void buf_release(struct buf *b)
{
	free(b->data);
	b->data = NULL;
	b->len = 0;
	b->alloc = 0;
}
