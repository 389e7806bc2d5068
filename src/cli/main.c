/* main.c: egg's entry point: global flags and the command table. */
#include <signal.h>
#include <stdio.h>
#include <string.h>

#include "../config/config.h"
#include "../eval/worker.h"
#include "../util/err.h"
#include "../util/suggest.h"
#include "cli.h"

#define LLM NEEDS_LLM
#define WORKER NEEDS_WORKER
#define STORE NEEDS_STORE
#define JSON NEEDS_JSON
#define DEVICE NEEDS_DEVICE
#define CALLS NEEDS_LLM_CALLS
#define SLURM NEEDS_SLURM

/* Each command with what it needs and how many arguments it takes. */
static const struct command commands[] = {
	{ "chat", cmd_chat, "PROMPT [--system S] [--json]",
	  "Send one prompt to the configured LLM and print the reply (to check a setup).", LLM | CALLS | STORE | JSON, 1, 1 },
	{ "doctor", cmd_doctor, "[--slurm] [--calibrate] [--json]",
	  "Report what egg needs and what is present: Python, torch, triton, GPU, ncu, LLM settings, sandboxing.",
	  LLM | WORKER | STORE | JSON | SLURM | DEVICE | NEEDS_CONFIG_FINDING, 0, 0 },
	{ "optimize", cmd_optimize, "TASK.py|MODEL [--split] [-o OUT.py] [--inputs SPEC] [--mode M] [--dtype D] "
	  "[--run-dir DIR] [budget and ablation flags] [--json]",
	  "Turn a PyTorch task into a verified, faster Triton kernel (the EGG pipeline).",
	  LLM | CALLS | WORKER | STORE | JSON | DEVICE, 1, 1 },
	{ "bench", cmd_bench, "TASK.py... | --dir DIR [--jobs N] [--resume RUN] [--max-cost USD] [--json]",
	  "Optimize many tasks at once over all devices; crash-safe, resumable, with budgets and progress.",
	  LLM | CALLS | WORKER | STORE | JSON | SLURM, 0, -1 },
	{ "report", cmd_report, "RUN|latest [--json] [--csv] [--html FILE]",
	  "Metrics of a run: success, fast_p, speedups vs eager and torch.compile, tokens, cost, stage gains.",
	  STORE | JSON, 1, 1 },
	{ "runs", cmd_runs, "[--json]", "List the runs in the store.", STORE | JSON, 0, 0 },
	{ "eval", cmd_eval, "TASK.py [KERNEL.py] [--device cpu|cuda[:N]] [--trials N] [--json] | --batch LIST | "
	  "--kernelbench KB_DIR --generations GEN_DIR [--devices LIST] [--jobs N] | --resume RUN",
	  "Check a candidate kernel against its task (correctness, integrity) and time it against eager, torch.compile "
	  "and the roofline bound; without a kernel, measure those three for the task; with --batch or --kernelbench, "
	  "judge kernels made elsewhere, many pairs as one resumable run.",
	  WORKER | STORE | JSON | DEVICE, 1, 2 },
	{ "split", cmd_split, "TASK.py|MODEL DIR [--inputs SPEC] [--model-kwargs JSON] [--mode eval|train] "
	  "[--dtype fp32|bf16|fp16] [--device cpu|cuda[:N]] [--no-measure] [--json]",
	  "Cut a whole program into subgraph tasks (DIR/NN_name.py, DIR/plan.json) with each one's share of its "
	  "eager time.", WORKER | STORE | JSON | DEVICE, 2, 2 },
	{ "compose", cmd_compose, "TASK.py DIR -o OUT.py [--keep-torch] [--run RUN] [--json]",
	  "Put a split program back together: ModelNew running each subgraph through its kernel.",
	  STORE | JSON, 2, 2 },
	{ "selfcheck", cmd_selfcheck, "TASK.py... | --dir DIR [--devices LIST] [--jobs N] [--json]",
	  "Run the whole evaluation path on tasks with their own Model as the candidate: the harness's own check.",
	  WORKER | STORE | JSON, 0, -1 },
	{ "profile", cmd_profile, "TASK.py KERNEL.py [--device cuda[:N]] [--json]",
	  "Profile a candidate's kernels with Nsight Compute (the metric set the profile agent reads).",
	  WORKER | STORE | JSON | DEVICE, 2, 2 },
	{ "worker", cmd_worker, "[serve|probe] [--device cpu|cuda]",
	  "Run the eval worker on this machine's stdin/stdout: what egg starts locally, or remotely through "
	  "--worker-cmd (e.g. --worker-cmd 'ssh gpu1 egg worker'). MODE serve (the default) answers jobs; "
	  "probe prints this machine's facts as JSON.", WORKER, 0, -1 },
};

static void print_usage(FILE *f)
{
	fprintf(f, "usage: egg [--version] [--help] COMMAND [ARGS]\n\n"
		   "egg turns PyTorch modules into verified, faster Triton kernels with an LLM.\n\n"
		   "commands:\n");
	for (size_t i = 0; i < sizeof(commands) / sizeof(commands[0]); i++)
		fprintf(f, "  %-10s %s\n", commands[i].name, commands[i].summary);
	fprintf(f, "\nRun 'egg COMMAND --help' for a command's options.\n"
		   "Exit codes: 0 done and positive, 1 done and negative, 2 bad usage or input,\n"
		   "3 infrastructure failure, 4 waiting for replies in the --llm-spool folder.\n");
}

/* SIGINT, SIGTERM, SIGHUP: stop every worker (each ends its evaluation
 * processes), then die of the same signal. The store stays consistent:
 * every write is a transaction, and `egg bench --resume` picks up the run. */
static void on_stop_signal(int sig)
{
	worker_signal_all(SIGTERM);
	signal(sig, SIG_DFL);
	raise(sig);
}

int main(int argc, char **argv)
{
	struct sigaction stop = { 0 };
	signal(SIGPIPE, SIG_IGN);
	stop.sa_handler = on_stop_signal;
	sigemptyset(&stop.sa_mask);
	sigaction(SIGINT, &stop, NULL);
	sigaction(SIGTERM, &stop, NULL);
	sigaction(SIGHUP, &stop, NULL);
	config_take_secrets();
	if (argc < 2) {
		print_usage(stderr);
		return EXIT_USAGE;
	}
	if (!strcmp(argv[1], "--help") || !strcmp(argv[1], "-h") || !strcmp(argv[1], "help")) {
		print_usage(stdout);
		return EXIT_DONE;
	}
	if (!strcmp(argv[1], "--version")) {
		printf("egg %s\n", EGG_VERSION);
		return EXIT_DONE;
	}
	for (size_t i = 0; i < sizeof(commands) / sizeof(commands[0]); i++)
		if (!strcmp(argv[1], commands[i].name))
			return commands[i].fn(&commands[i], argc - 2, argv + 2);
	if (argv[1][0] == '-')
		return err_usage("unknown option '%s' (see 'egg --help')", argv[1]);
	{
		const char *names[sizeof(commands) / sizeof(commands[0])];
		const char *near;
		for (size_t i = 0; i < sizeof(commands) / sizeof(commands[0]); i++)
			names[i] = commands[i].name;
		near = suggest_closest(argv[1], strlen(argv[1]), names, sizeof(commands) / sizeof(commands[0]));
		if (near)
			return err_usage("unknown command '%s': did you mean '%s'? (see 'egg --help')", argv[1], near);
	}
	return err_usage("unknown command '%s' (see 'egg --help')", argv[1]);
}
