/* flags.h: the command-line flags several commands share: evaluation flags and pipeline flags. */
#ifndef EGG_FLAGS_H
#define EGG_FLAGS_H

#include <jansson.h>

#include "../config/config.h"
#include "../eval/eval.h"
#include "../pipeline/pipeline.h"
#include "../util/opt.h"

/* Evaluation flags: egg eval, eval --batch, optimize, bench and selfcheck take them. */
struct eval_flags {
	int trials, iters, warmup, no_truth, no_timing, allow_torch;
	double atol, rtol, timeout;
	const char *precision, *compile_mode, *clock;
};

/* Which of the flags a command takes, and from which defaults. */
enum eval_flag_set {
	EVAL_FLAGS_EVAL,	/* egg eval and eval --batch: all */
	EVAL_FLAGS_PIPELINE,	/* optimize, bench: not --no-timing (the pipeline chooses by time) nor --allow-torch */
	EVAL_FLAGS_SELFCHECK,	/* selfcheck: not --compile-mode (no baselines) nor --allow-torch (waived there);
				 * lighter timing defaults */
};

void eval_flags_init(struct eval_flags *f);
/* The defaults of `set` on `device`: eval_opts_init's, lighter for a
 * selfcheck. The help states them; eval_flags_apply starts from them. */
void eval_flags_defaults(enum eval_flag_set set, struct eval_opts *eo, const char *device);
/* Their option table; points into `f`. */
const struct opt *eval_flag_options(struct eval_flags *f, enum eval_flag_set set);
/* eval_flags_defaults(set, eo, device), then the flags given; -1 with ERR_INPUT. */
int eval_flags_apply(const struct eval_flags *f, enum eval_flag_set set, const char *device, struct eval_opts *eo);

/* Pipeline flags: egg optimize and bench. */
struct pipeline_flags {
	int seeds, seed_repairs, repairs, top_k;
	int refine_rounds, fresh_seeds;
	const char *stages;
	int no_multi_seed, no_refine, no_hw_tune, single_agent, no_profile;
	int max_tokens;
	double max_cost;
	double stop_at_sol;	/* NAN: not given */
	int seed_from_existing;
	int sequential_tuning, ask_every_stage;
	int quiet;
};

void pipeline_flags_init(struct pipeline_flags *f);
const struct opt *pipeline_flag_options(struct pipeline_flags *f);
/* pipeline_opts_init(po), then the flags given; -1 with ERR_INPUT. */
int pipeline_flags_apply(const struct pipeline_flags *f, struct pipeline_opts *po);
/* What a run records of its options. */
json_t *pipeline_flags_json(const struct pipeline_flags *f, const struct pipeline_opts *po,
			    const struct eval_opts *eo);

/* Where a run of many tasks evaluates: egg bench and egg eval --batch. */
struct device_flags {
	const char *list;	/* --devices */
	int jobs;		/* --jobs: 1 or more; 0 (2 per device) when not given, once applied */
	int cpu_workers, per_device, slurm, slurm_workers;
};

void device_flags_init(struct device_flags *f);
const struct opt *device_flag_options(struct device_flags *f);
/* The run's devices and workers per device from the flags (all GPUs, else
 * cpu; with --slurm one Slurm step per device); sets cfg->slurm. -1 with
 * ERR_INPUT for flags that do not go together, or a --jobs below 1. */
int device_flags_apply(struct device_flags *f, struct config *cfg, struct strvec *devices);

/* A model spec's flags (program/model.h): egg split and egg optimize take
 * a model (MODULE:CALLABLE) where they take a program, and either in
 * another mode or dtype. */
struct model_flags {
	const char *inputs, *kwargs, *mode, *dtype;
};

const struct opt *model_flag_options(struct model_flags *f);
/*
 * The program a command works on for `arg`: `arg` itself (*path NULL) when
 * it is a KernelBench file and no mode or dtype is asked, else the program
 * egg writes into `dir` (model_write_program), or, with `dir` NULL, under
 * the config's STORE/programs. A FILE.py:NAME spec (or --inputs) is
 * checked first (model_check_ref, with the config's python): a typo is
 * said before any worker starts. Returns 0, or -1 with ERR_INPUT (a bad
 * spec) or ERR_INFRA.
 */
int model_flags_program(const struct model_flags *f, const char *arg, const char *dir, const struct config *cfg,
			char **path);

#endif
