/* cmd_worker.c: `egg worker`: run the eval worker on this machine's stdio (for ssh/srun use). */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "../eval/launch.h"
#include "../util/err.h"
#include "cli.h"

int cmd_worker(const struct command *self, int argc, char **argv)
{
	struct cmd_ctx ctx = { 0 };
	struct strvec wargv = STRVEC_INIT, env = STRVEC_INIT;
	int code = cmd_parse(self, NULL, CMD_WITH_CONFIG, argc, argv, &ctx);

	if (code) {
		cmd_ctx_clear(&ctx);
		return code == 1 ? EXIT_DONE : code;
	}
	/* Always the local worker here: this command is what a remote
	 * worker_cmd runs on the far side. */
	free(ctx.cfg.worker_cmd);
	ctx.cfg.worker_cmd = NULL;
	launch_worker_argv(&ctx.cfg, ctx.args.n ? ctx.args.v[0] : "serve", &wargv);
	for (size_t i = 1; i < ctx.args.n; i++)
		strvec_push(&wargv, ctx.args.v[i]);
	launch_clean_env(&env);
	fflush(NULL);
	execvpe(wargv.v[0], strvec_argv(&wargv), strvec_argv(&env));
	err_set(ERR_INFRA, "cannot run worker '%s': %s", wargv.v[0], strerror(errno));
	strvec_clear(&wargv);
	strvec_clear(&env);
	cmd_ctx_clear(&ctx);
	return err_report();
}
