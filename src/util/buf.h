/* buf.h: a growable byte buffer with a size cap and explicit ownership transfer. */
#ifndef EGG_BUF_H
#define EGG_BUF_H

#include <stdarg.h>
#include <stddef.h>

/*
 * A buf owns `data` (always NUL-terminated when non-NULL) of `len` bytes.
 * `cap` bounds how large it may grow; 0 means no bound beyond memory.
 * Functions that grow the buffer return 0, or -1 when the cap (or, for a
 * capped buffer, memory) would be exceeded; the contents are then
 * unchanged. An uncapped buffer aborts when memory runs out, as the x*
 * helpers below do, so its callers need not check: only a capped one's
 * must (reading a reply, a child's output, a protocol line).
 *
 * Ownership: buf_release frees; buf_detach hands `data` to the caller (who
 * frees it with free()) and leaves the buf empty and reusable.
 */
struct buf {
	char *data;
	size_t len;
	size_t alloc;
	size_t cap;
};

#define BUF_INIT { NULL, 0, 0, 0 }

void buf_init(struct buf *b, size_t cap);
int buf_add(struct buf *b, const void *data, size_t len);
int buf_adds(struct buf *b, const char *s);
int buf_addc(struct buf *b, char c);
int buf_addf(struct buf *b, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));
int buf_vaddf(struct buf *b, const char *fmt, va_list ap);
/* A size in bytes in the unit that shows it: "512 bytes", "49.2 KB", "3.1 MB", "1.00 GB". */
int buf_add_size(struct buf *b, double bytes);
/* Returns the contents ("" when empty), never NULL; borrowed. */
const char *buf_str(const struct buf *b);
void buf_reset(struct buf *b);
void buf_truncate(struct buf *b, size_t len);
char *buf_detach(struct buf *b);
void buf_release(struct buf *b);

/* Allocation helpers that abort on out-of-memory: used for small, bounded
 * allocations where recovery would be meaningless. */
void *xmalloc(size_t n);
void *xcalloc(size_t n, size_t size);
void *xrealloc(void *p, size_t n);
char *xstrdup(const char *s);
char *xstrndup(const char *s, size_t n);
char *xasprintf(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

#endif
