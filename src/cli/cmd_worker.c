/* cmd_worker.c: `egg worker [MODE [ARGS...]]`: run the eval worker on this machine's stdio,
 * which is what a remote --worker-cmd (e.g. "ssh gpu1 egg worker") starts. */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <stdlib.h>
#include <unistd.h>

#include "../eval/launch.h"
#include "../util/err.h"
#include "cli.h"

int cmd_worker(const struct command *self, int argc, char **argv)
{
	struct cmd_ctx ctx = { 0 };
	struct strvec wargv = STRVEC_INIT, env = STRVEC_INIT;
	int nopts = 0, code;

	/* Options come before MODE; everything from MODE on goes to the worker
	 * untouched (its own --device, say). */
	while (nopts < argc && argv[nopts][0] == '-') {
		if (nopts + 1 < argc && argv[nopts][1] == '-' && !strchr(argv[nopts], '=') &&
		    strcmp(argv[nopts], "--help") && strcmp(argv[nopts], "--no-cache"))
			nopts++;
		nopts++;
	}
	code = cmd_parse(self, NULL, nopts, argv, &ctx);
	if (code >= 0) {
		cmd_ctx_clear(&ctx);
		return code;
	}
	/* Always the local worker here: this command is the far side. */
	free(ctx.cfg.worker_cmd);
	ctx.cfg.worker_cmd = NULL;
	ctx.cfg.slurm = 0;
	launch_worker_argv(&ctx.cfg, nopts < argc ? argv[nopts] : "serve", NULL, &wargv);
	for (int i = nopts + 1; i < argc; i++)
		strvec_push(&wargv, argv[i]);
	launch_clean_env(&env);
	fflush(NULL);
	execvpe(wargv.v[0], strvec_argv(&wargv), strvec_argv(&env));
	err_set(ERR_INFRA, "cannot run worker '%s': %s", wargv.v[0], strerror(errno));
	strvec_clear(&wargv);
	strvec_clear(&env);
	cmd_ctx_clear(&ctx);
	return err_report();
}
