/* format.h: the pieces of text the report forms share (text, HTML): figures
 * with a dash where there is none, a task's shown status, the setup line. */
#ifndef EGG_REPORT_FORMAT_H
#define EGG_REPORT_FORMAT_H

#include <stddef.h>

#include <jansson.h>

/* A finished task that found no kernel is "no kernel" (its reason follows), not "done". */
const char *fmt_status(const json_t *task);
/* "12.3%", or "-" for a missing figure. */
const char *fmt_pct(double v, char *out, size_t len);
/* "1.23x", or "-"; `out` holds 16 bytes. */
const char *fmt_ratio(double v, char *out);
/* One figure in `fmt`, or "-"; `out` holds 16 bytes. */
const char *fmt_figure(const char *fmt, double v, char *out);
/* A stable name read as words ("no_kernel": "no kernel") into `out` (n bytes). */
const char *fmt_words(const char *name, char *out, size_t n);
/* `name` in at most `width` characters (width < n): whole when it fits,
 * else its beginning and its end around "...", so that names that differ
 * only at the end (a layer's q, k, v and o) still read apart. */
const char *fmt_middle(const char *name, int width, char *out, size_t n);
/* The words beside a task's status: its stop's reason, else why it found no kernel; NULL if none. */
const char *fmt_why(const json_t *task);
/* fmt_why without a leading "STATUS: " repeating the shown status; NULL if none. */
const char *fmt_reason(const json_t *task);
/* "42%" for a rate, or "-" (no finished task); `out` holds 16 bytes. */
const char *fmt_rate(double v, char *out);
/* The run's setup as one line ("model M; devices D...; timing"). Owned. */
char *fmt_setup_line(const json_t *rep);

/* "  slower than eager: keep PyTorch" (or "... than torch.compile ...",
 * whichever of the two is the faster bar the kernel does not beat) for a
 * task summary's kernel, else "". Static text. */
const char *fmt_slower(const json_t *t);

#endif
