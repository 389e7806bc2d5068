/* common.c: argument parsing and output helpers shared by the commands. */
#include "cli.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../util/buf.h"
#include "../util/err.h"
#include "../eval/worker.h"
#include "../util/fs.h"

int cmd_parse(const struct command *self, const struct opt *own, int flags,
	      int argc, char **argv, struct cmd_ctx *ctx)
{
	const struct opt common[] = {
		{ "help", 'h', OPT_FLAG, &ctx->help, NULL, "show this help" },
		OPT_TABLE_END,
	};
	const struct opt json_opt[] = {
		{ "json", 0, OPT_FLAG, &ctx->json, NULL, "print one JSON object on stdout" },
		OPT_TABLE_END,
	};
	const struct opt *tables[5];
	int n = 0;

	config_init(&ctx->cfg);
	if (own)
		tables[n++] = own;
	if (flags & CMD_WITH_JSON)
		tables[n++] = json_opt;
	if (flags & CMD_WITH_CONFIG)
		tables[n++] = config_options(&ctx->cfg);
	tables[n++] = common;
	tables[n] = NULL;

	if (opt_parse(tables, argc, argv, &ctx->args) < 0) {
		int code = err_report();
		fprintf(stderr, "usage: egg %s %s (see 'egg %s --help')\n", self->name, self->usage,
			self->name);
		return code;
	}
	if (ctx->help) {
		printf("usage: egg %s %s\n\n%s\n\noptions:\n", self->name, self->usage, self->summary);
		opt_print_help(stdout, tables);
		return 1;
	}
	if ((flags & CMD_WITH_CONFIG) && config_resolve(&ctx->cfg) < 0)
		return err_report();
	return 0;
}

int cmd_device(const struct config *cfg, const char **device, const char **kind)
{
	*device = worker_default_device(cfg);
	*kind = worker_device_kind(*device);
	if (!*kind)
		return err_usage("unknown device '%s' (use cpu, cuda or cuda:N)", *device);
	return 0;
}

void cmd_ctx_clear(struct cmd_ctx *ctx)
{
	config_free(&ctx->cfg);
	strvec_clear(&ctx->args);
}

void cmd_print_json(json_t *obj)
{
	char *text = json_dumps(obj, JSON_COMPACT | JSON_ENSURE_ASCII);
	char *clean = secret_redact(text ? text : "{}");
	printf("%s\n", clean);
	fflush(stdout);
	free(clean);
	free(text);
	json_decref(obj);
}

char *cmd_worker_dir(void)
{
	const char *env = getenv("EGG_WORKER_DIR");
	char *exe, *dir;
	if (env && *env)
		return xstrdup(env);
	exe = fs_exe_dir();
	if (!exe)
		return xstrdup("worker");
	dir = xasprintf("%s/../share/egg/worker", exe);
	if (!fs_exists(dir)) {
		free(dir);
		dir = xasprintf("%s/../worker", exe);
	}
	free(exe);
	return dir;
}
