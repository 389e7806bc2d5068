/* table.c: the stage table a run prints: each stage's best time and its speedup over eager. */
#include "table.h"

#include <math.h>
#include <string.h>

void pipeline_print_table(FILE *f, const char *task, const char *device, const char *clock, const json_t *baseline,
			  const json_t *rows)
{
	double eager = json_number_value(json_object_get(baseline, "eager_ms"));
	const json_t *row, *c = json_object_get(baseline, "compile_ms");
	/* %SOL: the roofline bound over the time (GPU only: on the CPU the
	 * interpreter is nowhere near the CPU's peaks, and says nothing). */
	double sol = strcmp(device, "cpu") && json_is_number(json_object_get(baseline, "roofline_ms"))
		     ? json_number_value(json_object_get(baseline, "roofline_ms")) : 0;
	double last = 0;
	size_t i;
	if (!strcmp(device, "cpu"))
		fprintf(f, "egg: %s on cpu (CPU timings, Triton interpreter)\n", task);
	else
		fprintf(f, "egg: %s on %s (%s clock)\n", task, device, clock);
	fprintf(f, "  %-26s %14s %18s%s\n", "stage", "time (ms)", "speedup vs eager", sol ? "   %SOL" : "");
	if (sol)
		fprintf(f, "  %-26s %14.4f %18s %6.1f%%\n", "roofline bound", sol,
			json_string_value(json_object_get(json_object_get(baseline, "roofline"), "bound")) ?: "", 100.0);
	if (sol && json_is_number(json_object_get(baseline, "practical_ms"))) {
		/* What egg's own Triton matrix product reaches for this work. */
		double p = json_number_value(json_object_get(baseline, "practical_ms"));
		fprintf(f, "  %-26s %14.4f %18s %6.1f%%\n", "practical bound (Triton)", p,
			json_string_value(json_object_get(json_object_get(baseline, "roofline"), "practical_scheme")) ?: "",
			100 * sol / p);
	}
	if (baseline) {
		fprintf(f, "  %-26s %14.4f %17.2fx", "PyTorch eager", eager, 1.0);
		if (sol)
			fprintf(f, " %6.1f%%", 100 * sol / eager);
		fprintf(f, "\n");
		if (json_is_number(c)) {
			fprintf(f, "  %-26s %14.4f %17.2fx", "torch.compile", json_number_value(c), eager / json_number_value(c));
			if (sol)
				fprintf(f, " %6.1f%%", 100 * sol / json_number_value(c));
			fprintf(f, "\n");
		}
	}
	if (baseline && json_is_number(json_object_get(baseline, "existing_ms"))) {
		double x = json_number_value(json_object_get(baseline, "existing_ms"));
		fprintf(f, "  %-26s %14.4f %17.2fx", "existing kernel", x, eager / x);
		if (sol)
			fprintf(f, " %6.1f%%", 100 * sol / x);
		fprintf(f, "\n");
	}
	json_array_foreach(rows, i, row) {
		const json_t *ms = json_object_get(row, "kernel_ms");
		const char *title = json_string_value(json_object_get(row, "title"));
		if (!json_is_number(ms))
			fprintf(f, "  %-26s %14s %18s\n", title, "-", "-");
		else if (baseline) {
			fprintf(f, "  %-26s %14.4f %17.2fx", title, json_number_value(ms), eager / json_number_value(ms));
			if (sol)
				fprintf(f, " %6.1f%%", 100 * sol / json_number_value(ms));
			fprintf(f, "\n");
		} else
			fprintf(f, "  %-26s %14.4f %18s\n", title, json_number_value(ms), "-");
		last = json_is_number(ms) ? json_number_value(ms) : last;
	}
	/* A final kernel slower than eager is no win, whatever it cost to find. */
	if (baseline && last > 0 && last > eager)
		fprintf(f, "egg: the kernel is %.2fx slower than PyTorch eager: keep PyTorch for this task%s\n",
			last / eager, !strcmp(device, "cpu") ? " (on the CPU the kernel runs in Triton's interpreter: "
			"these times say nothing about a GPU)" : "");
}

void pipeline_print_time(FILE *f, const json_t *t)
{
	const json_t *wall = json_object_get(t, "wall_s");
	if (!json_is_object(t))
		return;
	fprintf(f, "  time: ");
	if (json_is_number(wall))
		fprintf(f, "%.1f s wall; ", json_number_value(wall));
	fprintf(f, "LLM %.1f s, evaluation %.1f s, waiting for the device %.1f s (summed over work that overlapped); "
		   "longest chain of dependent LLM calls: %lld\n", json_number_value(json_object_get(t, "llm_s")),
		json_number_value(json_object_get(t, "eval_s")), json_number_value(json_object_get(t, "device_wait_s")),
		json_integer_value(json_object_get(t, "llm_chain")));
}

void pipeline_print_usage(FILE *f, const json_t *u)
{
	long long calls = json_integer_value(json_object_get(u, "calls"));
	long long cached = json_integer_value(json_object_get(u, "cached_prompt_tokens"));
	long long written = json_integer_value(json_object_get(u, "cache_write_tokens"));
	long long from_cache = json_integer_value(json_object_get(u, "cached_calls"));
	if (!json_is_object(u) || !calls)
		return;
	/* Replayed from the reply cache: nothing went to the provider, nothing was paid. */
	if (from_cache == calls) {
		if (calls == 1)
			fprintf(f, "  llm: the one reply from the reply cache; no request sent\n");
		else
			fprintf(f, "  llm: all %lld replies from the reply cache; no request sent\n", calls);
		return;
	}
	fprintf(f, "  llm: %lld call(s)", calls);
	if (from_cache)
		fprintf(f, " (%lld of them from the reply cache)", from_cache);
	fprintf(f, ", %lld prompt tokens", json_integer_value(json_object_get(u, "prompt_tokens")));
	if (cached || written)
		fprintf(f, " (%lld read from the prompt cache, %lld written to it)", cached, written);
	long long spooled = json_integer_value(json_object_get(u, "spool_calls"));
	fprintf(f, ", %lld completion tokens, ", json_integer_value(json_object_get(u, "completion_tokens")));
	if (spooled == calls)
		fprintf(f, "cost unknown (every reply came from the spool: not priced)");
	else
		fprintf(f, "$%.4f%s", json_number_value(json_object_get(u, "cost_usd")),
			spooled ? " and the spool's replies, not priced" : "");
	if (cached || written) {
		/* A cache that cost more than it saved says so, never "saved $-0.0033". */
		double saved = json_number_value(json_object_get(u, "cache_saved_usd"));
		fprintf(f, saved < 0 ? "; the prompt cache cost $%.4f more than it saved" : "; the prompt cache saved $%.4f",
			fabs(saved));
	}
	fprintf(f, "\n");
}
