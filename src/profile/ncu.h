/* ncu.h: Nsight Compute: the metric set egg asks for, its CSV, and per-candidate aggregates. */
#ifndef EGG_NCU_H
#define EGG_NCU_H

#include <stddef.h>

#include <jansson.h>

#include "../util/strvec.h"

/* How a metric is combined over the kernels of one candidate. */
enum ncu_agg {
	NCU_WEIGHTED,	/* duration-weighted mean (percentages) */
	NCU_SUM,	/* sum (durations) */
	NCU_LONGEST,	/* the value of the longest-running kernel (grid size) */
	NCU_MAX,	/* maximum (registers per thread) */
};

struct ncu_metric {
	const char *name;	/* ncu's metric name */
	const char *key;	/* short name in egg's JSON and prompts */
	const char *label;	/* what it means, for prompts */
	enum ncu_agg agg;
};

/* The metric set (docs/method.md's six, plus duration and launch facts).
 * The memory-dependency stall metric reads n/a on the H200 with ncu
 * 2025.3.1; egg measures long-scoreboard stalls instead (warps waiting on an
 * L1TEX result: global/local memory), recorded as `memory_stall_pct`. */
extern const struct ncu_metric ncu_metrics[];
extern const size_t ncu_nmetrics;
#define NCU_MAX_METRICS 16

struct ncu_kernel {
	char *name;
	char *grid;		/* "(x, y, z)" */
	char *block;
	double value[NCU_MAX_METRICS];
	int has[NCU_MAX_METRICS];
};

struct ncu_report {
	size_t nkernels;
	struct ncu_kernel *kernels;
	double agg[NCU_MAX_METRICS];
	int agg_has[NCU_MAX_METRICS];
};

/* Index of a metric by its key ("duration_ns"); aborts on an unknown key. */
size_t ncu_metric_index(const char *key);
/* Appends the ncu arguments (before the profiled program) egg uses. */
void ncu_args(struct strvec *args);
/*
 * Parses ncu's `--csv --page raw` output (lines starting with "==" are
 * ncu's own messages and are skipped). Returns 0 (possibly with no kernels),
 * or -1 with `why` set when the text is not such a CSV. Never crashes.
 */
int ncu_parse(const char *text, size_t len, struct ncu_report *out, char *why, size_t why_len);
/* {"kernels": [...], "aggregate": {...}, "kernel_count": N} */
json_t *ncu_report_json(const struct ncu_report *r);
void ncu_report_clear(struct ncu_report *r);

/* Splits one CSV record (RFC 4180 quoting) starting at *pos; advances *pos
 * past its line end. Returns the number of fields (0 at end of text). */
size_t ncu_csv_record(const char *text, size_t len, size_t *pos, struct strvec *fields);

#endif
