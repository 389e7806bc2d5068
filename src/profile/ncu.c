/* ncu.c: ncu's arguments, a CSV reader for its raw page, and aggregation over kernels. */
#include "ncu.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../util/buf.h"

const struct ncu_metric ncu_metrics[] = {
	{ "sm__throughput.avg.pct_of_peak_sustained_elapsed", "sm_throughput_pct",
	  "SM compute utilization (% of peak)", NCU_WEIGHTED },
	{ "launch__grid_size", "grid_size", "grid size (blocks) of the longest kernel", NCU_LONGEST },
	{ "sm__warps_active.avg.pct_of_peak_sustained_active", "warp_occupancy_pct",
	  "achieved warp occupancy (% of peak)", NCU_WEIGHTED },
	{ "dram__throughput.avg.pct_of_peak_sustained_elapsed", "dram_throughput_pct",
	  "DRAM bandwidth use (% of peak)", NCU_WEIGHTED },
	{ "lts__t_sector_hit_rate.pct", "l2_hit_rate_pct", "L2 hit rate (%)", NCU_WEIGHTED },
	{ "smsp__warp_issue_stalled_long_scoreboard_per_warp_active.pct", "memory_stall_pct",
	  "memory-dependency stalls: warps waiting on global/local memory (% of active warps, long scoreboard)",
	  NCU_WEIGHTED },
	{ "gpu__time_duration.sum", "duration_ns", "GPU time (ns)", NCU_SUM },
	{ "launch__registers_per_thread", "registers_per_thread", "registers per thread", NCU_MAX },
	{ "launch__block_size", "block_size", "threads per block", NCU_LONGEST },
	{ "launch__waves_per_multiprocessor", "waves_per_sm", "waves per SM", NCU_LONGEST },
};
const size_t ncu_nmetrics = sizeof(ncu_metrics) / sizeof(ncu_metrics[0]);

size_t ncu_metric_index(const char *key)
{
	for (size_t i = 0; i < ncu_nmetrics; i++)
		if (!strcmp(ncu_metrics[i].key, key))
			return i;
	abort();	/* a programming error: keys are compile-time constants */
}

void ncu_args(struct strvec *args)
{
	struct buf list = BUF_INIT;
	for (size_t i = 0; i < ncu_nmetrics; i++)
		buf_addf(&list, "%s%s", i ? "," : "", ncu_metrics[i].name);
	strvec_push(args, "--clock-control");
	strvec_push(args, "none");
	strvec_push(args, "--profile-from-start");
	strvec_push(args, "off");
	strvec_push(args, "--target-processes");
	strvec_push(args, "all");
	strvec_push(args, "--csv");
	strvec_push(args, "--page");
	strvec_push(args, "raw");
	strvec_push(args, "--metrics");
	strvec_push(args, buf_str(&list));
	buf_release(&list);
}

size_t ncu_csv_record(const char *text, size_t len, size_t *pos, struct strvec *fields)
{
	size_t i = *pos, n = 0;
	struct buf field = BUF_INIT;

	if (i >= len)
		return 0;
	for (;;) {
		buf_reset(&field);
		if (i < len && text[i] == '"') {
			i++;
			while (i < len) {
				if (text[i] == '"') {
					if (i + 1 < len && text[i + 1] == '"') {
						buf_addc(&field, '"');
						i += 2;
						continue;
					}
					i++;
					break;
				}
				buf_addc(&field, text[i++]);
			}
			/* Anything between a closing quote and the separator is kept. */
			while (i < len && text[i] != ',' && text[i] != '\n' && text[i] != '\r')
				buf_addc(&field, text[i++]);
		} else {
			while (i < len && text[i] != ',' && text[i] != '\n' && text[i] != '\r')
				buf_addc(&field, text[i++]);
		}
		strvec_push(fields, buf_str(&field));
		n++;
		if (i < len && text[i] == ',') {
			i++;
			continue;
		}
		break;
	}
	if (i < len && text[i] == '\r')
		i++;
	if (i < len && text[i] == '\n')
		i++;
	*pos = i;
	buf_release(&field);
	return n;
}

/* "41,920" -> 41920; "n/a", "" -> NAN. */
static double parse_number(const char *s)
{
	char tmp[64];
	size_t n = 0;
	char *end;
	double v;
	for (; *s && n < sizeof(tmp) - 1; s++)
		if (*s != ',' && *s != ' ')
			tmp[n++] = *s;
	tmp[n] = '\0';
	if (!n)
		return NAN;
	v = strtod(tmp, &end);
	return end != tmp && !*end ? v : NAN;
}

/* Whether the line at `start` is one of ncu's own "==PROF==" messages. */
static int ncu_message(const char *text, size_t len, size_t start)
{
	return start + 2 <= len && text[start] == '=' && text[start + 1] == '=';
}

static long column(const struct strvec *header, const char *name)
{
	for (size_t i = 0; i < header->n; i++)
		if (!strcmp(header->v[i], name))
			return (long)i;
	return -1;
}

/* The candidate's figures over its kernels: each metric aggregated by its
 * rule (weighted by duration, summed, the largest, or the longest kernel's). */
static void ncu_aggregate(struct ncu_report *out)
{
	size_t d = ncu_metric_index("duration_ns");
	double longest = -1;
	size_t longest_i = 0;
	for (size_t i = 0; i < out->nkernels; i++) {
		double dur = out->kernels[i].has[d] ? out->kernels[i].value[d] : 0;
		if (dur > longest) {
			longest = dur;
			longest_i = i;
		}
	}
	for (size_t m = 0; m < ncu_nmetrics && out->nkernels; m++) {
		double acc = 0, weight = 0, best = -INFINITY;
		int any = 0;
		for (size_t i = 0; i < out->nkernels; i++) {
			const struct ncu_kernel *k = &out->kernels[i];
			double dur = k->has[d] ? k->value[d] : 0;
			if (!k->has[m])
				continue;
			any = 1;
			acc += ncu_metrics[m].agg == NCU_WEIGHTED ? k->value[m] * dur : k->value[m];
			weight += dur;
			if (k->value[m] > best)
				best = k->value[m];
		}
		if (!any)
			continue;
		switch (ncu_metrics[m].agg) {
		case NCU_WEIGHTED:
			if (weight <= 0)
				continue;
			out->agg[m] = acc / weight;
			break;
		case NCU_SUM:
			out->agg[m] = acc;
			break;
		case NCU_MAX:
			out->agg[m] = best;
			break;
		case NCU_LONGEST:
			if (!out->kernels[longest_i].has[m])
				continue;
			out->agg[m] = out->kernels[longest_i].value[m];
			break;
		}
		out->agg_has[m] = 1;
	}
}

/* ncu.h's contract: one pass over the CSV (its quoting, its header and
 * units rows, kernels and metrics), then the aggregates. */
int ncu_parse(const char *text, size_t len, struct ncu_report *out, char *why, size_t why_len)
{
	struct strvec header = STRVEC_INIT, row = STRVEC_INIT;
	size_t pos = 0, cap = 0;
	long col[NCU_MAX_METRICS], c_name, c_grid, c_block, c_id;
	int rc = -1, have_header = 0;

	memset(out, 0, sizeof(*out));
	while (pos < len) {
		size_t start = pos;
		strvec_clear(&row);
		if (!ncu_csv_record(text, len, &pos, &row))
			break;
		if (ncu_message(text, len, start) || (row.n == 1 && !*row.v[0]))
			continue;
		if (!have_header) {
			if (column(&row, "Kernel Name") < 0)
				continue;	/* program output before the report */
			header = row;
			row = (struct strvec)STRVEC_INIT;
			have_header = 1;
			continue;
		}
		break;
	}
	if (!have_header) {
		snprintf(why, why_len, "no CSV report with a 'Kernel Name' column in ncu's output");
		goto out;
	}
	c_name = column(&header, "Kernel Name");
	c_grid = column(&header, "Grid Size");
	c_block = column(&header, "Block Size");
	c_id = column(&header, "ID");
	for (size_t m = 0; m < ncu_nmetrics; m++)
		col[m] = column(&header, ncu_metrics[m].name);
	/* `row` holds the first record after the header (units, or data). */
	for (int first = 1;; first = 0) {
		struct ncu_kernel *k;
		if (!first) {
			size_t start = pos;
			strvec_clear(&row);
			if (!ncu_csv_record(text, len, &pos, &row))
				break;
			if (ncu_message(text, len, start))
				continue;
		}
		if (row.n < header.n)
			continue;
		if (c_id >= 0 && !*row.v[c_id])
			continue;	/* the units row */
		if (out->nkernels == cap) {
			cap = cap ? cap * 2 : 8;
			out->kernels = xrealloc(out->kernels, cap * sizeof(*out->kernels));
		}
		k = &out->kernels[out->nkernels++];
		memset(k, 0, sizeof(*k));
		k->name = xstrdup(row.v[c_name]);
		k->grid = xstrdup(c_grid >= 0 ? row.v[c_grid] : "");
		k->block = xstrdup(c_block >= 0 ? row.v[c_block] : "");
		for (size_t m = 0; m < ncu_nmetrics; m++) {
			double v = col[m] >= 0 ? parse_number(row.v[col[m]]) : NAN;
			k->has[m] = !isnan(v);
			k->value[m] = k->has[m] ? v : 0;
		}
	}
	ncu_aggregate(out);
	rc = 0;
out:
	strvec_clear(&header);
	strvec_clear(&row);
	if (rc < 0)
		ncu_report_clear(out);
	return rc;
}

json_t *ncu_report_json(const struct ncu_report *r)
{
	json_t *kernels = json_array(), *agg = json_object();
	for (size_t i = 0; i < r->nkernels; i++) {
		const struct ncu_kernel *k = &r->kernels[i];
		json_t *o = json_pack("{s:s, s:s, s:s}", "name", k->name, "grid", k->grid, "block", k->block);
		for (size_t m = 0; m < ncu_nmetrics; m++)
			json_object_set_new(o, ncu_metrics[m].key, k->has[m] ? json_real(k->value[m]) : json_null());
		json_array_append_new(kernels, o);
	}
	for (size_t m = 0; m < ncu_nmetrics; m++)
		json_object_set_new(agg, ncu_metrics[m].key, r->agg_has[m] ? json_real(r->agg[m]) : json_null());
	return json_pack("{s:o, s:o, s:I}", "kernels", kernels, "aggregate", agg, "kernel_count",
			 (json_int_t)r->nkernels);
}

void ncu_report_clear(struct ncu_report *r)
{
	for (size_t i = 0; i < r->nkernels; i++) {
		free(r->kernels[i].name);
		free(r->kernels[i].grid);
		free(r->kernels[i].block);
	}
	free(r->kernels);
	memset(r, 0, sizeof(*r));
}
