/* cmd_optimize.c: `egg optimize TASK.py`: run the EGG pipeline on one task. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "../pipeline/pipeline.h"
#include "../util/buf.h"
#include "../util/err.h"
#include "../util/fs.h"
#include "../util/timeutil.h"
#include "cli.h"
#include "optimize.h"

/* Peak memory bandwidth by GPU name (vendor datasheets), for the prompts. */
static const struct { const char *name; const char *bandwidth; } bandwidths[] = {
	{ "H200", "about 4.8 TB/s" }, { "H100", "about 3.35 TB/s (SXM)" }, { "B200", "about 8 TB/s" },
	{ "A100", "about 2.0 TB/s" }, { "L40S", "about 0.86 TB/s" }, { "4090", "about 1.0 TB/s" },
	{ "A10", "about 0.6 TB/s" }, { "L4", "about 0.3 TB/s" },
};

char *optimize_device_text(const json_t *facts, const char *device)
{
	const char *name;
	const char *bw = "unknown";
	if (!strcmp(device, "cpu"))
		return xstrdup("CPU with Triton's interpreter (TRITON_INTERPRET=1). Kernels are checked exactly as on a "
			       "GPU, but times are CPU times: the interpreter runs each program instance in Python, so "
			       "fewer, larger blocks run faster. No hardware counters.");
	name = json_string_value(json_object_get(facts, "name")) ?: "unknown GPU";
	for (size_t i = 0; i < sizeof(bandwidths) / sizeof(bandwidths[0]); i++)
		if (strstr(name, bandwidths[i].name)) {
			bw = bandwidths[i].bandwidth;
			break;
		}
	return xasprintf("%s (%s), %lld SMs, L2 cache %.0f MB, %.0f GB device memory, memory bandwidth %s, "
			 "compute capability %s, driver %s",
			 name, device, json_integer_value(json_object_get(facts, "sm_count")),
			 json_number_value(json_object_get(facts, "l2_bytes")) / 1e6,
			 json_number_value(json_object_get(facts, "memory_bytes")) / 1e9, bw,
			 json_string_value(json_object_get(facts, "compute_capability")) ?: "?",
			 json_string_value(json_object_get(facts, "driver")) ?: "?");
}

const char *optimize_precision_note(const char *precision)
{
	return !strcmp(precision, "tf32")
		       ? "TF32 is allowed on both sides for this run (tl.dot may use its default precision)."
		       : "fp32 data stays fp32 math: pass input_precision=\"ieee\" to tl.dot (its default would use "
			 "TF32), do not downcast, and keep the output dtype of the reference. Tolerance: 1e-4.";
}

void optimize_print_table(FILE *f, const char *task, const char *device, const json_t *baseline,
			  const json_t *rows)
{
	double eager = json_number_value(json_object_get(baseline, "eager_ms"));
	const json_t *row, *c = json_object_get(baseline, "compile_ms");
	size_t i;
	fprintf(f, "egg: %s on %s%s\n", task, device, !strcmp(device, "cpu") ? " (CPU timings, Triton interpreter)" : "");
	fprintf(f, "  %-26s %14s %18s\n", "stage", "latency (ms)", "speedup vs eager");
	if (baseline) {
		fprintf(f, "  %-26s %14.4f %17.2fx\n", "PyTorch eager", eager, 1.0);
		if (json_is_number(c))
			fprintf(f, "  %-26s %14.4f %17.2fx\n", "torch.compile", json_number_value(c),
				eager / json_number_value(c));
	}
	json_array_foreach(rows, i, row) {
		const json_t *ms = json_object_get(row, "kernel_ms");
		const char *title = json_string_value(json_object_get(row, "title"));
		if (!json_is_number(ms))
			fprintf(f, "  %-26s %14s %18s\n", title, "-", "-");
		else if (baseline)
			fprintf(f, "  %-26s %14.4f %17.2fx\n", title, json_number_value(ms), eager / json_number_value(ms));
		else
			fprintf(f, "  %-26s %14.4f %18s\n", title, json_number_value(ms), "-");
	}
}

static char *default_run_dir(const char *store, const char *task)
{
	const char *base = strrchr(task, '/');
	char stamp[32];
	time_t t = time(NULL);
	struct tm tm;
	char *stem, *dot, *dir;
	base = base ? base + 1 : task;
	stem = xstrdup(base);
	dot = strrchr(stem, '.');
	if (dot)
		*dot = '\0';
	gmtime_r(&t, &tm);
	strftime(stamp, sizeof(stamp), "%Y%m%d-%H%M%S", &tm);
	dir = xasprintf("%s/optimize/%s-%s-%d", store, stem, stamp, (int)(time_mono_ms()) % 1000);
	free(stem);
	return dir;
}

int cmd_optimize(const struct command *self, int argc, char **argv)
{
	struct cmd_ctx ctx = { 0 };
	struct optimize_flags fl;
	struct pipeline_opts po;
	struct eval_opts eo;
	struct buf task = BUF_INIT;
	struct worker *w = NULL;
	struct llm *llm = NULL;
	struct recorder *rec = NULL;
	struct agents agents;
	struct pipeline_env env;
	struct pipeline_result res = { 0 };
	json_t *facts = NULL, *baseline = NULL, *summary = NULL;
	char *run_dir = NULL, *out_path = NULL, *device_text = NULL, *log_path = NULL, *cache = NULL, *ecache = NULL;
	const char *device, *kind;
	int code;

	optimize_flags_init(&fl);
	code = cmd_parse(self, optimize_options(&fl), CMD_WITH_CONFIG | CMD_WITH_JSON, argc, argv, &ctx);
	if (code) {
		code = code == 1 ? EXIT_DONE : code;
		goto out;
	}
	if (ctx.args.n != 1) {
		code = err_usage("optimize takes one TASK.py");
		goto out;
	}
	device = worker_default_device(&ctx.cfg);
	kind = worker_device_kind(device);
	if (!kind) {
		code = err_usage("unknown device '%s' (use cpu, cuda or cuda:N)", device);
		goto out;
	}
	if (optimize_flags_apply(&fl, device, &po, &eo) < 0 || fs_read(ctx.args.v[0], &task) < 0) {
		code = err_report();
		goto out;
	}
	llm = llm_new(&ctx.cfg, ctx.cfg.cache);
	if (!llm) {
		code = err_report();
		goto out;
	}
	run_dir = fl.run_dir ? xstrdup(fl.run_dir) : default_run_dir(ctx.cfg.store, ctx.args.v[0]);
	rec = recorder_open(run_dir, NULL);
	if (!rec) {
		code = err_report();
		goto out;
	}
	cache = fs_join(ctx.cfg.store, "baselines");
	eo.cache_dir = ctx.cfg.cache ? cache : NULL;
	ecache = fs_join(ctx.cfg.store, "eval-cache");
	log_path = fs_join(run_dir, "worker.log");
	w = worker_new(&ctx.cfg, kind, log_path);
	if (!ctx.json)
		fprintf(stderr, "egg: optimizing '%s' on %s; run folder %s\n", ctx.args.v[0], device, run_dir);
	facts = eval_device_facts(w, device);
	if (!facts) {
		code = err_report();
		goto out;
	}
	baseline = eval_baseline(w, &eo, buf_str(&task));
	if (!baseline) {
		code = err_report();
		goto out;
	}
	device_text = optimize_device_text(facts, device);
	{
		json_t *run = json_pack("{s:s, s:s, s:s, s:s, s:s, s:s, s:O, s:O, s:O}", "egg", EGG_VERSION, "task",
					ctx.args.v[0], "device", device, "device_text", device_text, "model", ctx.cfg.model,
					"provider", ctx.cfg.provider, "baseline", baseline, "device_facts", facts,
					"worker", worker_hello(w) ? worker_hello(w) : json_null());
		json_object_set_new(run, "options", optimize_flags_json(&fl, &po, &eo));
		recorder_write_json(rec, "run.json", run);
		json_decref(run);
	}
	memset(&agents, 0, sizeof(agents));
	agents.llm = llm;
	agents.rec = rec;
	agents.device_facts = device_text;
	agents.precision_note = optimize_precision_note(eo.precision);
	agents.task_source = buf_str(&task);
	agents.max_tokens = fl.max_tokens;
	agents.max_cost = fl.max_cost;
	memset(&env, 0, sizeof(env));
	env.worker = w;
	env.eval = eo;
	env.baseline = baseline;
	env.agents = &agents;
	env.rec = rec;
	env.task_source = buf_str(&task);
	env.eval_cache_dir = ctx.cfg.cache ? ecache : NULL;
	if (!ctx.json && !fl.quiet)
		env.progress = optimize_progress_stderr;
	pipeline_run(&env, &po, &res);

	out_path = fl.output ? xstrdup(fl.output) : fs_join(run_dir, "final.py");
	if (res.found) {
		struct buf text = BUF_INIT;
		buf_addf(&text, "%s", res.source);
		if (fs_write_atomic(out_path, text.data, text.len) < 0) {
			buf_release(&text);
			code = err_report();
			goto out;
		}
		buf_release(&text);
	}
	summary = optimize_summary(ctx.args.v[0], device, run_dir, res.found ? out_path : NULL, baseline, &res,
				   &agents);
	recorder_write_json(rec, "summary.json", summary);
	if (!ctx.json || fl.table)
		optimize_print_table(stderr, ctx.args.v[0], device, baseline, res.stage_rows);
	if (ctx.json)
		cmd_print_json(json_incref(summary));
	else if (res.found)
		printf("%s\n", out_path);
	if (res.infra) {
		err_set(ERR_INFRA, "%s%s", res.stop_reason, res.found ? " (the best kernel so far was written)" : "");
		code = err_report();
	} else if (!res.found) {
		err_set(ERR_REJECTED, "no valid kernel for '%s'%s%s", ctx.args.v[0], res.budget ? ": " : "",
			res.budget ? res.stop_reason : "");
		code = err_report();
	} else {
		if (res.budget && !ctx.json)
			fprintf(stderr, "egg: stopped early: %s\n", res.stop_reason);
		code = EXIT_DONE;
	}
out:
	pipeline_result_clear(&res);
	json_decref(summary);
	json_decref(facts);
	json_decref(baseline);
	recorder_close(rec);
	worker_free(w);
	llm_free(llm);
	free(run_dir);
	free(out_path);
	free(device_text);
	free(log_path);
	free(cache);
	free(ecache);
	buf_release(&task);
	cmd_ctx_clear(&ctx);
	return code;
}
