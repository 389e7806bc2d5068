/* common.c: the parse step every command shares, and JSON output. */
#include "cli.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../eval/worker.h"
#include "../run/discover.h"
#include "../store/store.h"
#include "../util/fs.h"
#include "../util/buf.h"
#include "../util/err.h"

int cmd_parse(const struct command *self, const struct opt *const *tables, int argc, char **argv,
	      struct cmd_ctx *ctx)
{
	const struct opt common[] = {
		{ "help", 'h', OPT_FLAG, &ctx->help, NULL, "show this help" },
		OPT_TABLE_END,
	};
	const struct opt json_opt[] = {
		{ "json", 0, OPT_FLAG, &ctx->json, NULL, "print one JSON object on stdout" },
		OPT_TABLE_END,
	};
	const struct opt *all[12];
	unsigned groups = self->needs & (CFG_FOR_LLM | CFG_FOR_WORKER | CFG_FOR_STORE | CFG_FOR_LLM_CALLS | CFG_FOR_SLURM);
	int n = 0;

	config_init(&ctx->cfg);
	for (; tables && *tables && n < 8; tables++)
		all[n++] = *tables;
	if (self->needs & NEEDS_JSON)
		all[n++] = json_opt;
	if (groups)
		all[n++] = config_options(&ctx->cfg, groups);
	all[n++] = common;
	all[n] = NULL;

	if (opt_parse(all, argc, argv, &ctx->args) < 0) {
		int code = err_report();
		fprintf(stderr, "usage: egg %s %s (see 'egg %s --help')\n", self->name, self->usage, self->name);
		return code;
	}
	if (ctx->help) {
		printf("usage: egg %s %s\n\n%s\n\noptions:\n", self->name, self->usage, self->summary);
		opt_print_help(stdout, all);
		return EXIT_DONE;
	}
	if ((int)ctx->args.n < self->min_args || (self->max_args >= 0 && (int)ctx->args.n > self->max_args))
		return err_usage("egg %s takes %s", self->name, self->usage);
	if (groups && config_resolve(&ctx->cfg) < 0) {
		if (!(self->needs & NEEDS_CONFIG_FINDING))
			return err_report();
		/* The command reports the file's error and goes on without it. */
		ctx->config_error = xstrdup(err_msg());
		err_clear();
		ctx->cfg.ignore_file = 1;
		if (config_resolve(&ctx->cfg) < 0)
			return err_report();
	}
	if (self->needs & NEEDS_DEVICE) {
		ctx->device = worker_default_device(&ctx->cfg);
		ctx->kind = worker_device_kind(ctx->device);
		if (!ctx->kind)
			return err_usage("unknown device '%s' (use cpu, cuda or cuda:N)", ctx->device);
	}
	return -1;
}

void cmd_ctx_clear(struct cmd_ctx *ctx)
{
	config_free(&ctx->cfg);
	strvec_clear(&ctx->args);
	free(ctx->config_error);
	ctx->config_error = NULL;
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

int cmd_resumed_args(int argc, char **argv, struct strvec *all)
{
	char *whole = NULL;	/* the run's whole id, when argv gives its beginning */
	int at = -1;
	for (int i = 0; i < argc; i++)
		if (!strcmp(argv[i], "--resume") && i + 1 < argc) {
			struct config tmp;
			struct store *store;
			json_t *stored = NULL, *a;
			size_t k;
			config_init(&tmp);
			for (int j = 0; j < argc; j++)
				if (!strcmp(argv[j], "--store") && j + 1 < argc)
					config_set_flag(&tmp, "store", argv[j + 1]);
			if (config_resolve(&tmp) == 0 && (store = store_open(tmp.store))) {
				stored = store_run_get(store, argv[i + 1]);
				store_close(store);
			}
			config_free(&tmp);
			if (!stored && err_kind() == ERR_NONE)
				err_set(ERR_INPUT, "no run '%s' to resume in the store", argv[i + 1]);
			if (!stored) {
				free(whole);
				return err_report();
			}
			json_array_foreach(json_object_get(json_object_get(stored, "config"), "argv"), k, a)
				strvec_push(all, json_string_value(a));
			free(whole);
			whole = xstrdup(json_string_value(json_object_get(stored, "id")));
			at = i + 1;
			json_decref(stored);
		}
	for (int i = 0; i < argc; i++)
		strvec_push(all, i == at ? whole : argv[i]);
	free(whole);
	return 0;
}

int cmd_task_paths(const struct command *self, const struct strvec *args, const char *dir, struct strvec *paths)
{
	for (size_t i = 0; i < args->n; i++)
		strvec_push(paths, args->v[i]);
	if (dir) {
		if (!fs_is_dir(dir))
			return err_usage("'%s' is not a folder", dir);
		discover_tasks(dir, paths);
	}
	if (!paths->n)
		return err_usage("%s needs TASK.py files or --dir DIR", self->name);
	return -1;
}

struct worker *cmd_start_worker(const struct cmd_ctx *ctx)
{
	char *dir = fs_join(ctx->cfg.store, "logs"), *log = NULL;
	struct worker *w;
	if (fs_mkdir_p(dir) == 0)
		log = fs_join(dir, "worker.log");
	err_clear();
	w = worker_new(&ctx->cfg, ctx->kind, log);
	free(log);
	free(dir);
	return w;
}
