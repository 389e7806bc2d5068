/* launch.h: how egg starts the Python eval worker (locally or through a stdio-carrying command). */
#ifndef EGG_LAUNCH_H
#define EGG_LAUNCH_H

#include "../config/config.h"
#include "../util/strvec.h"

/* Folder of the Python eval worker: EGG_WORKER_DIR, the installed share
 * folder, or the source tree next to the binary; owned. */
char *launch_worker_dir(void);
/* One of egg's helper scripts (scripts/NAME: spool-render.py) as a path a
 * user can run: the source tree's next to the binary, else the installed
 * share folder's (resolved, absolute), else "scripts/NAME"; owned. */
char *launch_script_path(const char *name);
/*
 * Fills `argv` with the command that starts the worker in `mode` ("serve",
 * "probe", ...): `PYTHON -I WORKER_DIR/egg-worker.py MODE` locally, the
 * words of cfg->worker_cmd followed by MODE when a remote command is set
 * (e.g. "ssh gpu1 egg worker" → "ssh gpu1 egg worker serve"), or with
 * cfg->slurm a Slurm step of this egg: `srun --quiet --unbuffered --nodes=1
 * --ntasks=1 --job-name=egg-worker [--gpus=1 for kind "cuda"] SLURM_ARGS
 * EGG_DIR/egg worker MODE`, without --gpus=1 where SLURM_ARGS ask for GPUs
 * themselves (launch_slurm_args_ask_gpus). `kind` ("cpu", "cuda") may be NULL.
 */
void launch_worker_argv(const struct config *cfg, const char *mode, const char *kind, struct strvec *argv);
/* Whether srun arguments ask for GPUs themselves: --gpus, -G,
 * --gpus-per-task/-node, or --gres/--tres-per-task naming a GPU, a shard or
 * an MPS share of one. */
int launch_slurm_args_ask_gpus(const char *args);
/* Fills `env` with egg's environment minus every secret-looking variable. */
void launch_clean_env(struct strvec *env);
/* The worker's environment: launch_clean_env plus EGG_SANDBOX_HIDE, the
 * folders a candidate's sandbox must hide (the store, the reply cache and
 * the config file's folder), as absolute paths separated by ':'. */
void launch_worker_env(const struct config *cfg, struct strvec *env);

#endif
