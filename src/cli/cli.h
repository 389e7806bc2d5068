/* cli.h: the command table's entries and the helpers every command shares. */
#ifndef EGG_CLI_H
#define EGG_CLI_H

#include <jansson.h>

#include "../config/config.h"
#include "../util/opt.h"
#include "../util/strvec.h"

/* What a command needs, said in its table entry (main.c). */
enum cmd_needs {
	NEEDS_LLM = CFG_FOR_LLM,	/* the LLM settings (and their flags) */
	NEEDS_WORKER = CFG_FOR_WORKER,	/* the worker's settings */
	NEEDS_STORE = CFG_FOR_STORE,	/* the store's setting */
	NEEDS_LLM_CALLS = CFG_FOR_LLM_CALLS,	/* how LLM calls are made (not for doctor) */
	NEEDS_JSON = 8,			/* accepts --json */
	NEEDS_DEVICE = 16,		/* resolves the device (cpu, cuda, cuda:N) into ctx */
	NEEDS_SLURM = CFG_FOR_SLURM,	/* the Slurm settings (--slurm-args) */
	NEEDS_CONFIG_FINDING = 128,	/* a bad config file is a finding (ctx.config_error), not an exit */
};

struct command {
	const char *name;
	int (*fn)(const struct command *self, int argc, char **argv);
	const char *usage;	/* arguments after the command name */
	const char *summary;
	unsigned needs;		/* enum cmd_needs */
	int min_args, max_args;	/* positional arguments (max -1: any number) */
};

/* What the parse step fills in. */
struct cmd_ctx {
	struct config cfg;
	struct strvec args;	/* positional arguments */
	int help;
	int json;
	const char *device;	/* with NEEDS_DEVICE */
	const char *kind;	/* "cpu" or "cuda" */
	char *config_error;	/* with NEEDS_CONFIG_FINDING: why the config file was not used */
};

/*
 * Parses a command's arguments with its own option tables (`tables`, a
 * NULL-terminated list; may be NULL) plus what its table entry needs: the
 * settings of its groups, --json, the device; and checks the number of
 * positional arguments. Returns -1 to go on; otherwise the exit code to
 * return at once (0 after --help, or the usage/input error's code, reported).
 * The caller releases ctx with cmd_ctx_clear.
 */
int cmd_parse(const struct command *self, const struct opt *const *tables, int argc, char **argv,
	      struct cmd_ctx *ctx);
void cmd_ctx_clear(struct cmd_ctx *ctx);
/* A resumed run (--resume RUN in argv) takes the arguments it was started
 * with first (its stored "argv"), then the new ones: `all` gets them, RUN
 * as the run's whole id when it was its beginning (store_run_get).
 * Returns 0, or the error's exit code (no such run, an ambiguous one). */
int cmd_resumed_args(int argc, char **argv, struct strvec *all);
/* The task files of a command of many (bench, selfcheck): its arguments,
 * then every *.py under `dir` (may be NULL). Returns -1 (to go on) or the
 * usage error's exit code (a dir that is no folder, no task at all). */
/* The eval worker of a one-job command (eval, split, profile), its stderr in
 * STORE/logs/worker.log. */
struct worker *cmd_start_worker(const struct cmd_ctx *ctx);
int cmd_task_paths(const struct command *self, const struct strvec *args, const char *dir, struct strvec *paths);
/* Prints `obj` as one line of JSON on stdout and releases it. */
void cmd_print_json(json_t *obj);

int cmd_chat(const struct command *self, int argc, char **argv);
int cmd_doctor(const struct command *self, int argc, char **argv);
int cmd_eval(const struct command *self, int argc, char **argv);
/* egg eval's batch forms (cmd_eval_batch.c): whether argv asks for one, and the command. */
int cmd_eval_is_batch(int argc, char **argv);
int cmd_eval_batch(int argc, char **argv);
/* The batch forms' part of `egg eval --help`: their usage and their own options. */
void cmd_eval_batch_help(FILE *f);
int cmd_profile(const struct command *self, int argc, char **argv);
int cmd_optimize(const struct command *self, int argc, char **argv);
int cmd_bench(const struct command *self, int argc, char **argv);
int cmd_report(const struct command *self, int argc, char **argv);
int cmd_runs(const struct command *self, int argc, char **argv);
int cmd_selfcheck(const struct command *self, int argc, char **argv);
int cmd_split(const struct command *self, int argc, char **argv);
int cmd_compose(const struct command *self, int argc, char **argv);
int cmd_worker(const struct command *self, int argc, char **argv);

#endif
