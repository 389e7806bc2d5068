/* launch.c: the worker's command line and its scrubbed environment. */
#include "launch.h"

#include <stdlib.h>
#include <string.h>

#include "../cli/cli.h"
#include "../util/buf.h"

extern char **environ;

void launch_worker_argv(const struct config *cfg, const char *mode, struct strvec *argv)
{
	if (cfg->worker_cmd && *cfg->worker_cmd) {
		strvec_split(argv, cfg->worker_cmd);
	} else {
		char *dir = cmd_worker_dir();
		strvec_push(argv, cfg->python);
		strvec_push(argv, "-I");
		strvec_pushf(argv, "%s/egg-worker.py", dir);
		free(dir);
	}
	strvec_push(argv, mode);
}

void launch_clean_env(struct strvec *env)
{
	for (char **e = environ; *e; e++) {
		const char *eq = strchr(*e, '=');
		char *name;
		if (!eq)
			continue;
		name = xstrndup(*e, (size_t)(eq - *e));
		if (!config_env_is_secret(name))
			strvec_push(env, *e);
		free(name);
	}
}
