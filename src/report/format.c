/* format.c: how the report forms write one figure, a task's status and the run's setup. */
#include "format.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../util/buf.h"
#include "../util/jsonnum.h"

/* A task's status as the reports show it: a finished task that found no
 * kernel is "no kernel" (its reason follows), not "done". */
const char *fmt_status(const json_t *t)
{
	const char *st = json_string_value(json_object_get(t, "status")) ?: "?";
	return !json_is_true(json_object_get(t, "found")) && !strcmp(st, "done") ? "no kernel" : st;
}

/* The one place a figure becomes text: `fmt` of `v`, or "-" when there is
 * none (NaN: a missing JSON number, no timing, no finished task). */
static const char *figure(const char *fmt, double v, char *out, size_t len)
{
	if (isnan(v))
		snprintf(out, len, "-");
	else
		snprintf(out, len, fmt, v);
	return out;
}

/* "12.3%", or "-" for a missing figure. */
const char *fmt_pct(double v, char *out, size_t len)
{
	return figure("%.1f%%", v, out, len);
}

/* "1.23x" for a speedup, or "-" when there is none. `out` holds 16 bytes. */
const char *fmt_ratio(double v, char *out)
{
	return figure("%.2fx", v, out, 16);
}

/* One figure in `fmt`, or "-" when there is none. `out` holds 16 bytes. */
const char *fmt_figure(const char *fmt, double v, char *out)
{
	return figure(fmt, v, out, 16);
}

const char *fmt_words(const char *name, char *out, size_t n)
{
	snprintf(out, n, "%s", name);
	for (char *c = out; *c; c++)
		if (*c == '_')
			*c = ' ';
	return out;
}

const char *fmt_middle(const char *name, int width, char *out, size_t n)
{
	size_t len = strlen(name), w = width > 0 && (size_t)width < n ? (size_t)width : n - 1, head;
	if (len <= w) {
		snprintf(out, n, "%s", name);
		return out;
	}
	if (w < 5) {
		snprintf(out, n, "%.*s", (int)w, name);
		return out;
	}
	head = (w - 3) / 2;
	snprintf(out, n, "%.*s...%s", (int)head, name, name + len - (w - 3 - head));
	return out;
}

/* "42%" for a rate, or "-" when there is none (no finished task). `out`
 * holds 16 bytes. */
const char *fmt_rate(double v, char *out)
{
	return figure("%.0f%%", 100 * v, out, 16);
}

/* The words a task shows beside its status: its stop's reason, else why
 * it found no kernel ("no_kernel"; an older record kept both in its
 * stop_reason); NULL when it has none. */
const char *fmt_why(const json_t *t)
{
	return json_string_value(json_object_get(t, "stop_reason")) ?: json_string_value(json_object_get(t, "no_kernel"));
}

/* fmt_why without a leading "STATUS: " that repeats its shown status
 * ("stopped: stopped: ..."); NULL when it has none. */
const char *fmt_reason(const json_t *t)
{
	const char *why = fmt_why(t), *st = fmt_status(t);
	size_t len = strlen(st);
	if (why && !strncmp(why, st, len) && !strncmp(why + len, ": ", 2))
		return why + len + 2;
	return why;
}

/* The setup as one line of text ("model M; devices D...; timing"), for both
 * report forms. */
char *fmt_setup_line(const json_t *rep)
{
	const json_t *su = json_object_get(rep, "setup"), *d;
	struct buf b = BUF_INIT;
	size_t i;
	if (json_is_true(json_object_get(su, "judged_only")))
		buf_adds(&b, "kernels made elsewhere, judged by egg's evaluator (no model); devices");
	else
		buf_addf(&b, "model %s; devices", json_string_value(json_object_get(su, "model")) ?: "(unknown)");
	json_array_foreach(json_object_get(su, "devices"), i, d)
		buf_addf(&b, " %s", json_string_value(d));
	buf_addf(&b, "; %s", json_string_value(json_object_get(su, "timing")));
	return buf_detach(&b);
}

const char *fmt_slower(const json_t *t)
{
	double se = json_num(t, "speedup_eager"), sc = json_num(t, "speedup_compile");
	/* The bar is the faster of eager and torch.compile: what the user runs. */
	if (!isnan(sc) && sc < 1 && (isnan(se) || sc < se))
		return "  slower than torch.compile: keep PyTorch";
	if (!isnan(se) && se < 1)
		return "  slower than eager: keep PyTorch";
	return "";
}
