/* optimize.h: what `egg optimize` and `egg bench` share: pipeline flags, summaries, tables. */
#ifndef EGG_OPTIMIZE_H
#define EGG_OPTIMIZE_H

#include <stdio.h>

#include <jansson.h>

#include "../agents/agents.h"
#include "../pipeline/pipeline.h"
#include "opt.h"

struct optimize_flags {
	const char *output, *run_dir;
	int seeds, seed_repairs, repairs, top_k;
	const char *stages;
	int no_multi_seed, no_refine, no_hw_tune, single_agent, no_profile, no_truth;
	int trials, iters, warmup;
	double atol, rtol, timeout;
	const char *precision, *compile_mode, *clock;
	int max_tokens;
	double max_cost;
	int quiet, table;
};

void optimize_flags_init(struct optimize_flags *f);
/* The option table (pipeline, evaluation and budget flags; -o and --run-dir
 * too when `single_task`). Points into `f`. */
const struct opt *optimize_options(struct optimize_flags *f);
const struct opt *bench_pipeline_options(struct optimize_flags *f);
/* Turns flags into pipeline and evaluation options; -1 with ERR_INPUT. */
int optimize_flags_apply(const struct optimize_flags *f, const char *device, struct pipeline_opts *po,
			 struct eval_opts *eo);
json_t *optimize_flags_json(const struct optimize_flags *f, const struct pipeline_opts *po,
			    const struct eval_opts *eo);
/* The summary object of one task's run (also `egg optimize --json`). */
json_t *optimize_summary(const char *task, const char *device, const char *run_dir, const char *final_path,
			 const json_t *baseline, const struct pipeline_result *r, const struct agents *a);
void optimize_progress_stderr(void *ctx, const char *stage, const char *text);
char *optimize_device_text(const json_t *facts, const char *device);
const char *optimize_precision_note(const char *precision);
/* A new run id (UTC time, `hint`, random suffix); owned. */
char *optimize_run_id(const char *hint);
void optimize_print_table(FILE *f, const char *task, const char *device, const char *clock, const json_t *baseline,
			  const json_t *rows);

#endif
