/* flags.c: the command-line flags several commands share: evaluation flags and pipeline flags. */
#include "flags.h"

#include <limits.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "../eval/worker.h"
#include "../program/model.h"
#include "../run/discover.h"
#include "../util/err.h"

void eval_flags_init(struct eval_flags *f)
{
	memset(f, 0, sizeof(*f));
	f->atol = f->rtol = -1;
}

void eval_flags_defaults(enum eval_flag_set set, struct eval_opts *eo, const char *device)
{
	eval_opts_init(eo, device);
	if (set == EVAL_FLAGS_SELFCHECK) {
		/* A selfcheck times the task's own Model to exercise the timing
		 * path on every task, not to measure it precisely. */
		int cpu = device && !strcmp(device, "cpu");
		eo->warmup = cpu ? 1 : 2;
		eo->iters = cpu ? 3 : 10;
	}
}

/* The help's defaults, from eval_flags_defaults: the one place they are set. */
static const char *help_with_defaults(char **slot, const char *what, int gpu, int cpu)
{
	free(*slot);
	*slot = gpu == cpu ? xasprintf("%s (default %d)", what, gpu)
			   : xasprintf("%s (default %d on a GPU, %d on the CPU)", what, gpu, cpu);
	return *slot;
}

/* Whether `set` leaves out the flag `name`. */
static int left_out(enum eval_flag_set set, const char *name)
{
	if (!name)
		return 0;
	switch (set) {
	case EVAL_FLAGS_PIPELINE:
		return !strcmp(name, "no-timing") || !strcmp(name, "allow-torch");
	case EVAL_FLAGS_SELFCHECK:
		return !strcmp(name, "compile-mode") || !strcmp(name, "allow-torch");
	case EVAL_FLAGS_EVAL:
		break;
	}
	return 0;
}

const struct opt *eval_flag_options(struct eval_flags *f, enum eval_flag_set set)
{
	static struct opt table[16];
	static char *help[4];
	struct eval_opts gpu, cpu;
	eval_flags_defaults(set, &gpu, "cuda");
	eval_flags_defaults(set, &cpu, "cpu");
	const struct opt t[] = {
		{ "trials", 0, OPT_INT, &f->trials, "N",
		  help_with_defaults(&help[0], "correctness trials with fresh inputs", gpu.trials, cpu.trials) },
		{ "iters", 0, OPT_INT, &f->iters, "N", help_with_defaults(&help[1], "timed calls", gpu.iters, cpu.iters) },
		{ "warmup", 0, OPT_INT, &f->warmup, "N",
		  help_with_defaults(&help[2], "warm-up calls before timing", gpu.warmup, cpu.warmup) },
		{ "atol", 0, OPT_DOUBLE, &f->atol, "X", "absolute tolerance (default: the evaluator's for each output dtype, docs/method.md)" },
		{ "rtol", 0, OPT_DOUBLE, &f->rtol, "X", "relative tolerance (default: the evaluator's for each output dtype)" },
		{ "precision", 0, OPT_STRING, &f->precision, "P", "fp32 (TF32 off, default) or tf32, for both sides" },
		{ "compile-mode", 0, OPT_STRING, &f->compile_mode, "M", "torch.compile baseline: default, max-autotune, reduce-overhead or none" },
		{ "clock", 0, OPT_STRING, &f->clock, "C", "GPU time: gpu (launch cost hidden, default) or latency (included)" },
		{ "no-truth", 0, OPT_FLAG, &f->no_truth, NULL, "judge misses against the fp32 reference only (no float64 rule)" },
		{ "no-timing", 0, OPT_FLAG, &f->no_timing, NULL, "check correctness only" },
		{ "allow-torch", 0, OPT_FLAG, &f->allow_torch, NULL,
		  "waive the rule against PyTorch compute (a composed program that keeps PyTorch parts); every other "
		  "check stays" },
		{ "timeout", 0, OPT_DOUBLE, &f->timeout, "S",
		  help_with_defaults(&help[3], "seconds per evaluation", (int)gpu.timeout_s, (int)cpu.timeout_s) },
		OPT_TABLE_END,
	};
	size_t n = 0;
	for (size_t i = 0; i < sizeof(t) / sizeof(t[0]); i++)
		if (!left_out(set, t[i].name))
			table[n++] = t[i];
	return table;
}

int eval_flags_apply(const struct eval_flags *f, enum eval_flag_set set, const char *device, struct eval_opts *eo)
{
	eval_flags_defaults(set, eo, device);
	if (f->trials < 0 || f->iters < 0 || f->warmup < 0) {
		err_set(ERR_INPUT, "--trials, --iters and --warmup must not be negative");
		return -1;
	}
	if (f->trials)
		eo->trials = f->trials;
	if (f->iters)
		eo->iters = f->iters;
	if (f->warmup)
		eo->warmup = f->warmup;
	eo->atol = f->atol;
	eo->rtol = f->rtol;
	eo->truth = !f->no_truth;
	eo->timing = !f->no_timing;
	eo->allow_torch = f->allow_torch;
	if ((f->precision && eval_opts_set_precision(eo, f->precision) < 0) ||
	    (f->compile_mode && eval_opts_set_compile_mode(eo, f->compile_mode) < 0) ||
	    (f->clock && eval_opts_set_clock(eo, f->clock) < 0))
		return -1;
	if (f->timeout > 0)
		eo->timeout_s = f->timeout;
	return 0;
}

#define REPAIRS_UNSET INT_MIN

void pipeline_flags_init(struct pipeline_flags *f)
{
	memset(f, 0, sizeof(*f));
	f->stop_at_sol = NAN;
	/* Unset, as distinct from 0 repairs (which is a valid choice). */
	f->seed_repairs = f->repairs = REPAIRS_UNSET;
}

const struct opt *pipeline_flag_options(struct pipeline_flags *f)
{
	static struct opt table[28];
	static char stages_help[96];
	char names[64];
	const struct opt t[] = {
		{ "seeds", 0, OPT_INT, &f->seeds, "S", "seed kernels with different algorithms (default 2)" },
		{ "seed-repairs", 0, OPT_INT, &f->seed_repairs, "N", "repairs per seed (default 3)" },
		{ "repairs", 0, OPT_INT, &f->repairs, "N", "repairs per later candidate (default 1)" },
		{ "stages", 0, OPT_STRING, &f->stages, "LIST", stages_help },
		{ "top-k", 0, OPT_INT, &f->top_k, "K", "candidates kept through each stage (default 1)" },
		{ "refine-rounds", 0, OPT_INT, &f->refine_rounds, "N",
		  "refinement rounds per seed, each on the last one's result while they gain (default 1)" },
		{ "fresh-seeds", 0, OPT_INT, &f->fresh_seeds, "N",
		  "seeds written afresh with another algorithm when refinement stalls (default 0)" },
		{ "no-multi-seed", 0, OPT_FLAG, &f->no_multi_seed, NULL, "ablation: one seed" },
		{ "no-refine", 0, OPT_FLAG, &f->no_refine, NULL, "ablation: skip algorithmic refinement" },
		{ "no-hw-tune", 0, OPT_FLAG, &f->no_hw_tune, NULL, "ablation: skip the three tuning stages" },
		{ "single-agent", 0, OPT_FLAG, &f->single_agent, NULL, "ablation: one agent instead of code/profile/debug" },
		{ "no-profile", 0, OPT_FLAG, &f->no_profile, NULL, "do not run ncu (the profile agent gets timings only)" },
		{ "max-tokens", 0, OPT_INT, &f->max_tokens, "N", "token budget per task" },
		{ "max-cost", 0, OPT_DOUBLE, &f->max_cost, "USD", "cost budget per task" },
		{ "seed-from-existing", 0, OPT_FLAG, &f->seed_from_existing, NULL,
		  "the task's existing kernel (--existing, TASK.existing.py) is seed 1; the model writes the others" },
		{ "stop-at-sol", 0, OPT_DOUBLE, &f->stop_at_sol, "PCT",
		  "stop a task once its best kernel reaches PCT% of the roofline bound (default 85; 0: never)" },
		{ "sequential-tuning", 0, OPT_FLAG, &f->sequential_tuning, NULL,
		  "the tuning stages one after the other, each on the last one's kernel (the paper's order; default: "
		  "side by side on the same kernel, winning changes combined)" },
		{ "ask-every-stage", 0, OPT_FLAG, &f->ask_every_stage, NULL,
		  "ask the model in every tuning stage, also where a rule on the profile says there is nothing to change" },
		{ "quiet", 'q', OPT_FLAG, &f->quiet, NULL, "no progress lines" },
		OPT_TABLE_END,
	};
	snprintf(stages_help, sizeof(stages_help), "tuning stages to run (default %s)",
		 stage_tuning_names(",", names, sizeof(names)));
	memcpy(table, t, sizeof(t));
	return table;
}

int pipeline_flags_apply(const struct pipeline_flags *f, struct pipeline_opts *po)
{
	pipeline_opts_init(po);
	if (f->seeds < 0 || (f->seed_repairs < 0 && f->seed_repairs != REPAIRS_UNSET) ||
	    (f->repairs < 0 && f->repairs != REPAIRS_UNSET) || f->top_k < 0 || f->max_tokens < 0 || f->max_cost < 0) {
		err_set(ERR_INPUT, "budgets and counts must not be negative");
		return -1;
	}
	if (!isnan(f->stop_at_sol)) {
		if (f->stop_at_sol < 0) {
			err_set(ERR_INPUT, "--stop-at-sol is a percentage of the roofline bound, 0 or more (0: never stop early)");
			return -1;
		}
		po->stop_at_sol = f->stop_at_sol;
	}
	if (f->seeds)
		po->seeds = f->seeds;
	if (f->no_multi_seed)
		po->seeds = 1;
	if (f->seed_repairs != REPAIRS_UNSET)
		po->seed_repairs = f->seed_repairs;
	if (f->repairs != REPAIRS_UNSET)
		po->repairs = f->repairs;
	if (f->top_k > PIPELINE_MAX_TOP_K || f->seeds > PIPELINE_MAX_SEEDS) {
		err_set(ERR_INPUT, "--%s is at most %d", f->top_k > PIPELINE_MAX_TOP_K ? "top-k" : "seeds",
			f->top_k > PIPELINE_MAX_TOP_K ? PIPELINE_MAX_TOP_K : PIPELINE_MAX_SEEDS);
		return -1;
	}
	if (f->top_k)
		po->top_k = f->top_k;
	if (f->refine_rounds < 0 || f->refine_rounds > PIPELINE_MAX_REFINE_ROUNDS || f->fresh_seeds < 0 ||
	    f->fresh_seeds > PIPELINE_MAX_FRESH_SEEDS) {
		err_set(ERR_INPUT, "--refine-rounds is 1 to %d and --fresh-seeds 0 to %d", PIPELINE_MAX_REFINE_ROUNDS,
			PIPELINE_MAX_FRESH_SEEDS);
		return -1;
	}
	if (f->refine_rounds)
		po->refine_rounds = f->refine_rounds;
	po->fresh_seeds = f->fresh_seeds;
	po->refine = !f->no_refine;
	po->single_agent = f->single_agent;
	po->seed_from_existing = f->seed_from_existing;
	po->profile = !f->no_profile;
	po->tuning_together = !f->sequential_tuning;
	po->ask_always = f->ask_every_stage;
	if (f->stages) {
		char *list = xstrdup(f->stages), *save = NULL, names[64];
		memset(po->stage_on, 0, sizeof(po->stage_on));
		for (char *s = strtok_r(list, ",", &save); s; s = strtok_r(NULL, ",", &save)) {
			const struct stage *st = stage_by_name(s);
			if (!st || !st->tuning) {
				err_set(ERR_INPUT, "unknown tuning stage '%s' (use %s)", s, stage_tuning_names(", ", names,
													 sizeof(names)));
				free(list);
				return -1;
			}
			po->stage_on[st->id] = 1;
		}
		free(list);
	}
	if (f->no_hw_tune)
		memset(po->stage_on, 0, sizeof(po->stage_on));
	return 0;
}

json_t *pipeline_flags_json(const struct pipeline_flags *f, const struct pipeline_opts *po,
			    const struct eval_opts *eo)
{
	json_t *stages_on = json_array();
	for (int s = 0; s < STAGE_COUNT; s++)
		if (stages[s].tuning && po->stage_on[s])
			json_array_append_new(stages_on, json_string(stages[s].name));
	return json_pack("{s:i, s:i, s:i, s:b, s:o, s:b, s:i, s:b, s:i, s:i, s:i, s:s, s:s, s:s, s:f, s:i, s:f, s:b, s:f, "
			 "s:b, s:b, s:i, s:i}",
			 "seeds", po->seeds, "seed_repairs", po->seed_repairs, "repairs", po->repairs, "refine",
			 po->refine, "tuning_stages", stages_on, "single_agent", po->single_agent, "top_k", po->top_k,
			 "profile", po->profile, "trials", eo->trials, "iters", eo->iters, "warmup", eo->warmup,
			 "precision", eo->precision, "compile_mode", eo->compile_mode, "clock", eo->clock, "timeout_s", eo->timeout_s,
			 "max_tokens", f->max_tokens, "max_cost", f->max_cost, "truth", eo->truth, "stop_at_sol", po->stop_at_sol,
			 "tuning_together", po->tuning_together, "ask_every_stage", po->ask_always, "refine_rounds",
			 po->refine_rounds, "fresh_seeds", po->fresh_seeds);
}


/* --jobs not given: told apart from a --jobs 0 that is refused. */
#define JOBS_UNSET INT_MIN

void device_flags_init(struct device_flags *f)
{
	memset(f, 0, sizeof(*f));
	f->jobs = JOBS_UNSET;
}

const struct opt *device_flag_options(struct device_flags *f)
{
	static struct opt table[8];
	const struct opt t[] = {
		{ "jobs", 'j', OPT_INT, &f->jobs, "N", "tasks in flight at once (default 2 per device)" },
		{ "devices", 0, OPT_STRING, &f->list, "LIST", "devices to use, e.g. cuda:0,cuda:1 (default: all GPUs, else cpu)" },
		{ "cpu-workers", 0, OPT_INT, &f->cpu_workers, "N", "without GPUs: N CPU devices (default 1)" },
		{ "workers-per-device", 0, OPT_INT, &f->per_device, "N", "eval workers per device, compiling in parallel (default 2)" },
		{ "slurm", 0, OPT_FLAG, &f->slurm, NULL, "start each device's worker as a Slurm step (srun), for the whole run" },
		{ "slurm-workers", 0, OPT_INT, &f->slurm_workers, "N", "with --slurm: N devices, one Slurm step each (default 1)" },
		OPT_TABLE_END,
	};
	memcpy(table, t, sizeof(t));
	return table;
}

int device_flags_apply(struct device_flags *f, struct config *cfg, struct strvec *devices)
{
	if (f->jobs != JOBS_UNSET && f->jobs < 1) {
		err_set(ERR_INPUT, "--jobs takes 1 or more (leave it out for 2 per device)");
		return -1;
	}
	if (f->jobs == JOBS_UNSET)
		f->jobs = 0;
	if (f->slurm)
		cfg->slurm = 1;
	if (cfg->slurm) {
		/* Each device is one Slurm step: its own allocation (one GPU, or
		 * CPUs), so one worker per device, and a GPU step's GPU is its
		 * cuda:0. */
		const char *kind = worker_device_kind(worker_default_device(cfg));
		if (f->list || f->cpu_workers) {
			err_set(ERR_INPUT, "with --slurm, say how many devices with --slurm-workers N (and --device cpu|cuda)");
			return -1;
		}
		for (int i = 0; i < (f->slurm_workers > 0 ? f->slurm_workers : 1); i++)
			strvec_push(devices, kind && !strcmp(kind, "cpu") ? "cpu" : "cuda:0");
		f->per_device = 1;
		return 0;
	}
	if (f->slurm_workers) {
		err_set(ERR_INPUT, "--slurm-workers needs --slurm");
		return -1;
	}
	return discover_devices(cfg, f->list, f->cpu_workers, devices);
}

const struct opt *model_flag_options(struct model_flags *f)
{
	static struct opt t[6];
	const struct opt table[] = {
		{ "inputs", 0, OPT_STRING, &f->inputs, "SPEC",
		  "a model's example inputs: shapes (32x3x224x224; 8x1024:int64:50257 for token ids below 50257; "
		  "several joined by ',') or FILE.py:FN returning them" },
		{ "model-kwargs", 0, OPT_STRING, &f->kwargs, "JSON", "keyword arguments of the model's callable "
		  "('{\"num_classes\": 10}')" },
		{ "mode", 0, OPT_STRING, &f->mode, "M", "eval (a model's default: normalisations use their statistics, "
		  "no dropout) or train (a KernelBench file's)" },
		{ "dtype", 0, OPT_STRING, &f->dtype, "D", "fp32 (default), bf16 or fp16: the program's parameters, "
		  "buffers and floating inputs" },
		OPT_TABLE_END,
	};
	memcpy(t, table, sizeof(table));
	return t;
}

int model_flags_program(const struct model_flags *f, const char *arg, const char *dir, const struct config *cfg,
			char **path)
{
	struct model_spec m = { arg, f->kwargs, f->inputs, f->mode, f->dtype };
	char *own_dir = NULL;
	*path = NULL;
	if (!model_spec_wanted(&m)) {
		if (f->inputs || f->kwargs) {
			err_set(ERR_INPUT, "--inputs and --model-kwargs go with a model (MODULE:CALLABLE or "
				"FILE.py:CALLABLE), not the KernelBench file '%s'", arg);
			return -1;
		}
		return 0;
	}
	/* A typo in FILE.py:NAME is said now, not once the worker is up. */
	if (model_is_ref(arg) && model_check_ref(arg, "the model", cfg->python) < 0)
		return -1;
	if (f->inputs && model_is_ref(f->inputs) && model_check_ref(f->inputs, "--inputs", cfg->python) < 0)
		return -1;
	if (!dir && !(dir = own_dir = model_program_dir(&m, cfg->store)))
		return -1;
	*path = model_write_program(&m, dir);
	free(own_dir);
	return *path ? 0 : -1;
}
