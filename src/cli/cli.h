/* cli.h: the command table's entries and the helpers every command shares. */
#ifndef EGG_CLI_H
#define EGG_CLI_H

#include <jansson.h>

#include "../config/config.h"
#include "../util/strvec.h"
#include "opt.h"

struct command {
	const char *name;
	int (*fn)(const struct command *self, int argc, char **argv);
	const char *usage;	/* arguments after the command name */
	const char *summary;
};

/* What a command's parse step fills in. */
struct cmd_ctx {
	struct config cfg;
	struct strvec args;	/* positional arguments */
	int help;
	int json;
	int quiet;
};

enum cmd_parse_flags {
	CMD_WITH_CONFIG = 1,	/* accepts and resolves the settings options */
	CMD_WITH_JSON = 2,	/* accepts --json */
};

/*
 * Parses a command's arguments with its own table `own` (may be NULL) plus
 * the shared ones chosen by `flags`. Returns 0 to go on, 1 when --help was
 * printed (exit 0), or an exit code >= 2 after reporting the error. The
 * caller releases ctx with cmd_ctx_clear.
 */
int cmd_parse(const struct command *self, const struct opt *own, int flags,
	      int argc, char **argv, struct cmd_ctx *ctx);
void cmd_ctx_clear(struct cmd_ctx *ctx);
/* The device to use (--device, EGG_DEVICE, else cuda when a GPU is visible)
 * and its kind ("cpu"/"cuda"). Returns 0, or the usage exit code after
 * reporting an unknown device. */
int cmd_device(const struct config *cfg, const char **device, const char **kind);
/* Prints `obj` as one line of JSON on stdout and releases it. */
void cmd_print_json(json_t *obj);
/* Folder of the Python eval worker (EGG_WORKER_DIR, the installed share
 * folder, or the source tree next to the binary); newly allocated. */
char *cmd_worker_dir(void);

int cmd_chat(const struct command *self, int argc, char **argv);
int cmd_doctor(const struct command *self, int argc, char **argv);
int cmd_eval(const struct command *self, int argc, char **argv);
int cmd_profile(const struct command *self, int argc, char **argv);
int cmd_selfcheck(const struct command *self, int argc, char **argv);
int cmd_optimize(const struct command *self, int argc, char **argv);
int cmd_bench(const struct command *self, int argc, char **argv);
int cmd_report(const struct command *self, int argc, char **argv);
int cmd_runs(const struct command *self, int argc, char **argv);
int cmd_worker(const struct command *self, int argc, char **argv);

#endif
