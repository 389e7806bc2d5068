/* launch.c: the worker's command line and its scrubbed environment. */
#include "launch.h"

#include <stdlib.h>
#include <string.h>

#include "../util/buf.h"
#include "../util/fs.h"

extern char **environ;

char *launch_worker_dir(void)
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

char *launch_script_path(const char *name)
{
	static const char *const under[] = { "../scripts", "../share/egg/scripts" };
	char *exe = fs_exe_dir(), *out = NULL;
	for (size_t i = 0; exe && !out && i < sizeof(under) / sizeof(under[0]); i++) {
		char *path = xasprintf("%s/%s/%s", exe, under[i], name);
		out = fs_exists(path) ? realpath(path, NULL) : NULL;
		free(path);
	}
	free(exe);
	return out ? out : xasprintf("scripts/%s", name);
}

/* Whether a --gres or --tres-per-task value names a GPU or a share of one. */
static int names_gpu(const char *value)
{
	return value && (strstr(value, "gpu") || strstr(value, "shard") || strstr(value, "mps"));
}

int launch_slurm_args_ask_gpus(const char *args)
{
	static const char *const gpus[] = { "--gpus", "--gpus-per-task", "--gpus-per-node", NULL };
	static const char *const gres[] = { "--gres", "--tres-per-task", NULL };
	struct strvec words = STRVEC_INIT;
	int found = 0;
	if (!args)
		return 0;
	strvec_split(&words, args);
	for (size_t i = 0; i < words.n && !found; i++) {
		const char *w = words.v[i], *next = i + 1 < words.n ? words.v[i + 1] : NULL;
		size_t n;
		found = !strncmp(w, "-G", 2) && strncmp(w, "--", 2) != 0;
		for (int k = 0; gpus[k] && !found; k++)
			found = !strncmp(w, gpus[k], n = strlen(gpus[k])) && (w[n] == '\0' || w[n] == '=');
		for (int k = 0; gres[k] && !found; k++)
			if (!strncmp(w, gres[k], n = strlen(gres[k])))
				found = (w[n] == '=' && names_gpu(w + n + 1)) || (w[n] == '\0' && names_gpu(next));
	}
	strvec_clear(&words);
	return found;
}

void launch_worker_argv(const struct config *cfg, const char *mode, const char *kind, struct strvec *argv)
{
	if (cfg->slurm) {
		/* One Slurm step per worker, for the whole run: one task on one
		 * node (one GPU for a GPU worker), its stdio carried by srun, and
		 * this same egg binary on the far side (`egg worker`: the path
		 * must be the same there, as on a shared file system). */
		char *dir = fs_exe_dir();
		strvec_push(argv, "srun");
		strvec_push(argv, "--quiet");
		strvec_push(argv, "--unbuffered");
		strvec_push(argv, "--nodes=1");
		strvec_push(argv, "--ntasks=1");
		strvec_push(argv, "--job-name=egg-worker");
		/* One GPU, unless the site's arguments ask for GPUs their own
		 * way (a share of one: --gres=shard:1 or mps; a type). */
		if (kind && !strcmp(kind, "cuda") && !launch_slurm_args_ask_gpus(cfg->slurm_args))
			strvec_push(argv, "--gpus=1");
		if (cfg->slurm_args && *cfg->slurm_args)
			strvec_split(argv, cfg->slurm_args);
		strvec_pushf(argv, "%s/egg", dir ? dir : ".");
		strvec_push(argv, "worker");
		/* The coordinator's Python (its flag, environment or config
		 * file), which the step's own egg would not otherwise see. */
		if (cfg->python && *cfg->python) {
			strvec_push(argv, "--python");
			strvec_push(argv, cfg->python);
		}
		free(dir);
	} else if (cfg->worker_cmd && *cfg->worker_cmd) {
		strvec_split(argv, cfg->worker_cmd);
	} else {
		char *dir = launch_worker_dir();
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

void launch_worker_env(const struct config *cfg, struct strvec *env)
{
	const char *paths[3] = { cfg->store, cfg->cache_dir, NULL };
	struct buf hide = BUF_INIT;
	char *config_dir = NULL;

	launch_clean_env(env);
	if (cfg->config_path) {
		config_dir = xstrdup(cfg->config_path);
		if (strrchr(config_dir, '/'))
			*strrchr(config_dir, '/') = '\0';
		paths[2] = config_dir;
	}
	for (size_t i = 0; i < sizeof(paths) / sizeof(paths[0]); i++) {
		char *abs;
		if (!paths[i] || !*paths[i] || strchr(paths[i], ':'))
			continue;
		abs = fs_absolute(paths[i]);
		buf_addf(&hide, "%s%s", hide.len ? ":" : "", abs);
		free(abs);
	}
	if (hide.len)
		strvec_pushf(env, "EGG_SANDBOX_HIDE=%s", buf_str(&hide));
	buf_release(&hide);
	free(config_dir);
}
