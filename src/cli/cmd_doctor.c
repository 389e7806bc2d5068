/* cmd_doctor.c: `egg doctor`: what a run needs, what is present, what is missing. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "../eval/cache.h"
#include "../eval/eval.h"
#include "../eval/launch.h"
#include "../eval/roofline.h"
#include "../llm/kept.h"
#include "../llm/llm.h"
#include "../util/buf.h"
#include "../util/err.h"
#include "../util/fs.h"
#include "../util/jsonnum.h"
#include "../util/proc.h"
#include "cli.h"

/* Runs the worker's probe; returns its JSON object (owned) or NULL with
 * the reason in `why`. */
static const char *str_or(const json_t *obj, const char *key, const char *dflt)
{
	const char *s = json_string_value(json_object_get(obj, key));
	return s ? s : dflt;
}

/* One line per protection a candidate's sandbox has here. */
static void print_sandbox(const json_t *probe)
{
	const json_t *s = json_object_get(probe, "sandbox"), *h;
	size_t i;
	const char *yes = "yes", *no = "NO";
	if (!json_is_object(s) || json_object_get(s, "error")) {
		printf("sandbox:       could not be probed: %s\n", str_or(s, "error", "no facts"));
		return;
	}
	printf("sandbox:       own PID namespace (sees no other process): %s\n",
	       json_is_true(json_object_get(s, "pid_namespace")) ? yes : no);
	printf("sandbox:       own mount namespace: %s; private /proc: %s; read-only file system: %s\n",
	       json_is_true(json_object_get(s, "mount_namespace")) ? yes : no,
	       json_is_true(json_object_get(s, "private_proc")) ? yes : no,
	       json_is_true(json_object_get(s, "read_only_root")) ? yes : no);
	printf("sandbox:       hidden (the host's own):");
	json_array_foreach(json_object_get(s, "hidden"), i, h)
		printf(" %s", json_string_value(h));
	printf("%s\n", json_array_size(json_object_get(s, "hidden")) ? "" : " nothing");
	printf("sandbox:       writable:");
	json_array_foreach(json_object_get(s, "writable"), i, h) {
		/* A hidden folder that is writable is the candidate's own empty one. */
		int own = 0;
		size_t j;
		const json_t *x;
		json_array_foreach(json_object_get(s, "hidden"), j, x)
			own |= json_equal(x, h);
		printf(" %s%s", json_string_value(h), own ? " (its own, empty, not the host's)" : "");
	}
	printf("%s\n", json_array_size(json_object_get(s, "writable")) ? "" : " everything its user may write");
	printf("sandbox:       network: %s; seccomp filter: %s; capabilities: %s; uid %lld%s\n",
	       json_is_true(json_object_get(s, "network_isolated")) ? "none (empty namespace)" : "SHARED",
	       json_is_true(json_object_get(s, "seccomp")) ? "yes" : "NO",
	       str_or(s, "capabilities", "?"), json_integer_value(json_object_get(s, "uid")),
	       json_is_true(json_object_get(s, "user_namespace")) ? " (in its own user namespace)" : "");
}

/* What the sandbox lacks, as notes. */
static void sandbox_notes(const json_t *s, json_t *notes)
{
	static const struct { const char *key, *what; } layers[] = {
		{ "pid_namespace", "a PID namespace (candidates can see other processes)" },
		{ "mount_namespace", "a mount namespace (candidates can write wherever their user can)" },
		{ "private_proc", "a private /proc" },
		{ "read_only_root", "a read-only file system" },
		{ "network_isolated", "network isolation" },
		{ "seccomp", "a seccomp filter" },
	};
	if (!json_is_object(s) || json_object_get(s, "error")) {
		json_array_append_new(notes, json_sprintf("the candidate sandbox could not be probed: %s",
							  str_or(s, "error", "no facts")));
		return;
	}
	for (size_t i = 0; i < sizeof(layers) / sizeof(layers[0]); i++)
		if (!json_is_true(json_object_get(s, layers[i].key)))
			json_array_append_new(notes, json_sprintf("candidates run WITHOUT %s: %s", layers[i].what,
								  str_or(s, "namespace_error", str_or(s, "mount_error",
									 str_or(s, "proc_error", str_or(s, "seccomp_error", "unavailable here"))))));
}

/*
 * Runs `p` (argv set) to its end with stdout into `out`; 0 when it exited
 * 0, else -1 with one line in `why`: "WHAT failed (STATUS): LAST STDERR
 * LINE", or what kept it from starting.
 */
static int run_captured(struct proc *p, struct buf *out, long timeout_ms, const char *what, struct buf *why)
{
	struct buf err = BUF_INIT;
	struct proc_status st;
	char tmp[64];
	int rc = -1;

	buf_init(&err, 1 << 16);
	if (proc_run(p, NULL, 0, out, &err, timeout_ms, &st) < 0) {
		buf_addf(why, "%s: %s", what, err_msg());
		err_clear();
	} else if (!st.exited || st.code) {
		const char *e = buf_str(&err), *last = e + strlen(e), *line;
		while (last > e && last[-1] == '\n')
			last--;
		line = last;
		while (line > e && line[-1] != '\n')
			line--;
		buf_addf(why, "%s failed (%s): %.*s", what, proc_status_str(&st, tmp, sizeof(tmp)), (int)(last - line), line);
	} else {
		rc = 0;
	}
	buf_release(&err);
	return rc;
}

static json_t *run_probe(const struct config *cfg, const char *kind, struct buf *why)
{
	struct proc p = PROC_INIT;
	struct buf out = BUF_INIT;
	json_t *obj = NULL;
	char *what;

	buf_init(&out, 1 << 20);
	launch_worker_argv(cfg, "probe", kind, &p.argv);
	launch_worker_env(cfg, &p.env);
	p.use_env = 1;
	what = xasprintf("worker probe '%s'", p.argv.v[0]);
	if (run_captured(&p, &out, 300000, what, why) == 0) {
		obj = json_loads(buf_str(&out), JSON_DISABLE_EOF_CHECK, NULL);
		if (!json_is_object(obj)) {
			json_decref(obj);
			obj = NULL;
			buf_addf(why, "worker probe printed no JSON");
		}
	}
	free(what);
	proc_clear(&p);
	buf_release(&out);
	return obj;
}

/* With --slurm: sinfo answers, and the partitions it lists (one line
 * each). The worker probe that follows runs as a Slurm step (the test
 * step). NULL with `why` when Slurm cannot be used from here. */
static json_t *slurm_facts(struct buf *why)
{
	struct proc p = PROC_INIT;
	struct buf out = BUF_INIT;
	json_t *parts = NULL;

	buf_init(&out, 1 << 16);
	strvec_push(&p.argv, "sinfo");
	strvec_push(&p.argv, "--noheader");
	strvec_push(&p.argv, "--format=%P %a %D %t");
	if (run_captured(&p, &out, 30000, "sinfo", why) == 0) {
		const char *line = buf_str(&out);
		parts = json_array();
		while (*line) {
			const char *nl = strchr(line, '\n');
			size_t len = nl ? (size_t)(nl - line) : strlen(line);
			if (len)
				json_array_append_new(parts, json_stringn(line, len));
			line += len + (nl != NULL);
		}
		if (!json_array_size(parts)) {
			buf_adds(why, "sinfo lists no partition");
			json_decref(parts);
			parts = NULL;
		}
	}
	proc_clear(&p);
	buf_release(&out);
	return parts;
}

/* Which commands can run, given what is missing for the LLM side and for
 * the worker side, and whether profiling (a GPU and ncu) is possible. */
static json_t *readiness(const json_t *missing_llm, const json_t *missing_worker, int can_profile, int config_ok)
{
	int llm = !json_array_size(missing_llm), worker = !json_array_size(missing_worker);
	/* split runs the worker; compose writes a file from the split's and the worker folder's text. */
	return json_pack("{s:b, s:b, s:b, s:b, s:b, s:b, s:b, s:b}", "chat", llm, "eval", worker, "selfcheck", worker,
			 "profile", worker && can_profile, "split", worker, "compose", config_ok, "optimize", llm && worker, "bench",
			 llm && worker);
}


/* The worker probe's findings: what is missing, notes on what is weaker
 * than it could be; whether profiling (a GPU and ncu) is possible. */
static int probe_findings(const struct config *cfg, const json_t *probe, json_t *missing, json_t *notes)
{
	if (!json_string_value(json_object_get(probe, "torch")))
		json_array_append_new(missing, json_sprintf("torch in '%s' (%s)", cfg->python,
							   str_or(probe, "torch_error", "not importable")));
	if (!json_string_value(json_object_get(probe, "triton")))
		json_array_append_new(missing, json_sprintf("triton in '%s' (%s)", cfg->python,
							   str_or(probe, "triton_error", "not importable")));
	if (!json_is_true(json_object_get(probe, "network_isolation")))
		json_array_append_new(notes, json_sprintf("candidates run WITHOUT network isolation: %s",
							str_or(probe, "network_isolation_error", "unavailable")));
	if (!json_array_size(json_object_get(probe, "gpus")))
		json_array_append_new(notes, json_string("no GPU visible: egg runs on --device cpu (Triton interpreter, CPU timings)"));
	sandbox_notes(json_object_get(probe, "sandbox"), notes);
	if (!json_string_value(json_object_get(probe, "ncu")))
		json_array_append_new(notes, json_string("ncu not found: the profile agent gets timings only"));
	return json_array_size(json_object_get(probe, "gpus")) && json_string_value(json_object_get(probe, "ncu"));
}

/* What egg will send for the configured model: llm_plan, from the function
 * that builds every request (the rules, what earlier runs adapted to, the
 * output limit and the thinking budget as sent). */
static json_t *request_rules(const struct config *cfg)
{
	struct llm_plan p;
	char *endpoint = config_endpoint(cfg);
	json_t *kept = kept_load(cfg->store, endpoint, cfg->model);
	free(endpoint);
	llm_plan(cfg, &p);
	return json_pack("{s:s, s:s, s:I, s:o, s:s?, s:o, s:b, s:o, s:s, s:s?, s:o, s:s?}", "family", p.rules.family,
			 "token_field", p.token_field, "max_tokens", (json_int_t)p.max_tokens, "temperature",
			 p.temperature >= 0 ? json_real(p.temperature) : json_null(), "reasoning_effort", p.reasoning_effort,
			 "thinking_budget", p.thinking_budget ? json_integer(p.thinking_budget) : json_null(),
			 "stream", p.stream != 0, "max_output", p.rules.max_output ? json_integer(p.rules.max_output) : json_null(),
			 "source", p.rules.source, "refused", p.rules.refusal[0] ? p.rules.refusal : NULL, "kept",
			 kept ? kept : json_null(), "not_sent", p.dropped[0] ? p.dropped : NULL);
}

/*
 * Everything doctor finds, as the one report both views print: the settings
 * (the key only as present or absent), the worker probe, Slurm's facts, what
 * is missing, notes, and which commands can run.
 */
static json_t *collect_report(const struct config *cfg, const char *kind, const char *config_error, int quiet)
{
	struct buf why = BUF_INIT;
	json_t *probe = NULL, *missing = json_array(), *notes = json_array(), *missing_llm = json_array();
	json_t *partitions = NULL, *ready, *report;
	int can_profile = 0;
	char *store_abs, *endpoint;

	if (cfg->slurm) {
		struct buf swhy = BUF_INIT;
		if (!(partitions = slurm_facts(&swhy)))
			json_array_append_new(missing, json_sprintf("Slurm: %s", buf_str(&swhy)));
		buf_release(&swhy);
	}
	if (!cfg->model || !*cfg->model)
		json_array_append_new(missing_llm, json_string("LLM model (set --model, EGG_MODEL or the config file)"));
	/* A spool run uses no network: it needs no key, and names a model only
	 * if the user does (config.h: CONFIG_SPOOL_MODEL). */
	if (!cfg->llm_spool && !cfg->api_key && !llm_url_is_local(cfg->base_url))
		json_array_append_new(missing_llm, json_string("API key (set EGG_API_KEY)"));
	if (cfg->llm_spool)
		json_array_append_new(notes, json_sprintf("a reply spool is set ('%s'): optimize and bench use no network, "
							  "write each request to %s/pending and wait there (exit 4) "
							  "until its reply is in %s/replies; its replies are not priced",
							  cfg->llm_spool, cfg->llm_spool, cfg->llm_spool));
	if (!quiet)
		fprintf(stderr, "egg: probing the worker's Python%s (imports torch; may take a while)...\n",
			cfg->slurm ? " in a Slurm step" : "");
	probe = (!cfg->slurm || partitions) ? run_probe(cfg, kind, &why) : NULL;
	if (!probe && (!cfg->slurm || partitions))
		json_array_append_new(missing, json_sprintf("eval worker%s: %s", cfg->slurm ? " (Slurm test step)" : "",
							    buf_str(&why)));
	else if (probe)
		can_profile = probe_findings(cfg, probe, missing, notes);
	if (config_error) /* no command but doctor starts until it is fixed */
		json_array_insert_new(missing, 0, json_sprintf("%s (the other findings are without it; every command "
							       "but doctor refuses to start until it is fixed)",
							       config_error));
	ready = readiness(missing_llm, missing, can_profile, !config_error);
	json_array_extend(missing, missing_llm);
	store_abs = fs_absolute(cfg->store);
	endpoint = config_provider(cfg->provider) ? config_endpoint(cfg) : NULL;
	report = json_pack("{s:s, s:s?, s:s?, s:{s:s, s:s, s:s?, s:s?, s:s}, s:s, s:s?, s:O?, s:b, s:O, s:O, s:o, s:b, s:s}",
			   "egg", EGG_VERSION, "config_file", config_error ? NULL : cfg->config_path, "config_error",
			   config_error, "llm", "provider", cfg->provider, "base_url", cfg->base_url, "endpoint", endpoint,
			   "model", cfg->model,
			   "api_key", cfg->api_key ? "present" : "absent", "python", cfg->python, "worker_cmd",
			   cfg->worker_cmd, "worker", probe, "ready", json_array_size(missing) == 0, "missing", missing,
			   "notes", notes, "commands", ready, "can_profile", can_profile, "store", store_abs);
	if (cfg->model && *cfg->model)
		json_object_set_new(json_object_get(report, "llm"), "request", request_rules(cfg));
	if (cfg->slurm)
		json_object_set_new(report, "slurm", json_pack("{s:O?, s:b, s:s?}", "partitions", partitions,
								 "test_step", probe != NULL, "srun_args", cfg->slurm_args));
	free(store_abs);
	free(endpoint);
	json_decref(probe);
	json_decref(missing);
	json_decref(missing_llm);
	json_decref(notes);
	json_decref(partitions);
	buf_release(&why);
	return report;
}

/* The text view: every line from the report, nothing from elsewhere. */
/*
 * --calibrate: the device's measured peaks and the practical bound (what
 * egg's own Triton matrix products reach: worker/egg_worker/device/
 * practical.py), from the evaluation cache when this device was calibrated
 * with this worker, else measured now and cached for the runs that follow.
 * {"device", "measured": the calibration} or {"device", "error"}. Owned.
 */
static json_t *calibration(const struct cmd_ctx *ctx)
{
	struct eval_opts o;
	char *dir = fs_join(ctx->cfg.store, "eval-cache");
	struct worker *w;
	json_t *facts = NULL, *cal = NULL, *out;
	eval_opts_init(&o, ctx->device);
	o.cache = ctx->cfg.cache ? evcache_open(dir) : NULL;
	err_clear();
	if (!ctx->json)
		fprintf(stderr, "egg: calibrating %s (measures the peaks and egg's own matrix products; on a GPU about a "
			"minute the first time)...\n", ctx->device);
	w = cmd_start_worker(ctx);
	if ((facts = eval_device_facts(w, ctx->device)))
		cal = eval_calibration(w, &o, facts);
	if (cal)
		out = json_pack("{s:s, s:O}", "device", ctx->device, "measured", cal);
	else
		out = json_pack("{s:s, s:s}", "device", ctx->device, "error", err_msg());
	err_clear();
	json_decref(cal);
	json_decref(facts);
	worker_free(w);
	if (o.cache)
		evcache_close(o.cache);
	free(dir);
	return out;
}

/* One line per measured scheme of the practical bound: its rate, the kernel
 * that gave it, and what it is measured against: cuBLAS's rate for the
 * same product (tf32, bf16), or a third of cuBLAS's TF32 rate for the
 * fp32-accurate schemes (three TF32 passes: their arithmetic limit). */
static void print_practical_schemes(const json_t *p)
{
	const json_t *rates = json_object_get(p, "flops_s"), *cublas = json_object_get(p, "cublas_flops_s");
	for (size_t i = 0; i < eval_npractical_schemes; i++) {
		const struct eval_practical_scheme *s = &eval_practical_schemes[i];
		double r = json_num(rates, s->key), ref;
		int tc = !strcmp(s->key, "tf32") || !strcmp(s->key, "bf16");
		if (!(r > 0))
			continue;
		printf("practical:     %-16s %6.1f TFLOP/s (%s)", s->short_words, r / 1e12,
		       str_or(json_object_get(p, "kernels"), s->key, "kernel not recorded"));
		ref = tc ? json_num(cublas, s->key) : json_num(cublas, "tf32") / 3;
		if (ref > 0)
			printf(", %.1f%% of %s (%.1f)", 100 * r / ref, tc ? "cuBLAS" : "a third of cuBLAS's TF32", ref / 1e12);
		if (tc && eval_practical_is_bound(p, s->key))
			printf(": a bound");
		else if (tc && ref > 0)
			printf(": under %.0f%%, not a bound (the prompts give the peak)", 100 * EVAL_PRACTICAL_MIN_SHARE);
		else if (tc)
			printf(": not compared with cuBLAS (no figure), so not a bound");
		printf("\n");
	}
}

static void print_calibration(const json_t *c)
{
	const json_t *m = json_object_get(c, "measured"), *p = json_object_get(m, "practical"),
		     *rates = json_object_get(p, "flops_s"), *e;
	const char *scheme;
	int n = 0;
	if (!c)
		return;
	if (!m) {
		printf("calibration:   %s: failed: %s\n", str_or(c, "device", "?"), str_or(c, "error", "?"));
		return;
	}
	printf("calibration:   %s: memory %.2f TB/s, FP32 %.1f, TF32 %.1f, BF16 %.1f TFLOP/s%s\n", str_or(c, "device", "?"),
	       json_num(m, "bandwidth_bytes_s") / 1e12, json_num(m, "fp32_flops_s") / 1e12,
	       json_num(m, "tf32_flops_s") / 1e12, json_num(m, "bf16_flops_s") / 1e12,
	       !strcmp(str_or(c, "device", ""), "cpu") ? " (the CPU's torch; interpreted kernels are far from them)" : "");
	printf("practical:     ");
	for (size_t i = 0; i < eval_npractical_schemes; i++)
		if (json_num(rates, eval_practical_schemes[i].key) > 0)
			printf("%s%s %.1f", n++ ? ", " : "egg's own Triton matrix products: ",
			       eval_practical_schemes[i].short_words, json_num(rates, eval_practical_schemes[i].key) / 1e12);
	if (n)
		printf(" TFLOP/s at %lld^3; fp32-accurate best: %s\n", json_integer_value(json_object_get(p, "size")),
		       str_or(p, "fp32_best", "?"));
	else
		printf("%s\n", p ? "no scheme could be measured" : "measured on a GPU only (the interpreter's times say nothing)");
	print_practical_schemes(p);
	json_object_foreach((json_t *)json_object_get(p, "errors"), scheme, e)
		printf("practical:     %s failed: %s\n", scheme, json_string_value(e));
}

/* The "llm request:" lines: what a request carries, as llm_plan made it. */
static void print_request(const json_t *q)
{
	char temp[32] = "no temperature", effort[80];
	if (!q)
		return;
	if (json_is_number(json_object_get(q, "temperature")))
		snprintf(temp, sizeof(temp), "temperature %g", json_number_value(json_object_get(q, "temperature")));
	if (json_is_integer(json_object_get(q, "thinking_budget")))
		snprintf(effort, sizeof(effort), "extended thinking, a budget of %lld tokens",
			 json_integer_value(json_object_get(q, "thinking_budget")));
	else if (json_is_string(json_object_get(q, "reasoning_effort")))
		snprintf(effort, sizeof(effort), "reasoning effort %.40s", str_or(q, "reasoning_effort", ""));
	else
		snprintf(effort, sizeof(effort), "no reasoning effort");
	printf("llm request:   %s %lld, %s, %s, %s (%s; rule: %s)\n", str_or(q, "token_field", "?"),
	       json_integer_value(json_object_get(q, "max_tokens")), temp, effort,
	       json_is_true(json_object_get(q, "stream")) ? "streamed" : "not streamed",
	       str_or(q, "family", "?"), str_or(q, "source", "?"));
	if (json_is_string(json_object_get(q, "refused")))
		printf("               refused: %s\n", str_or(q, "refused", ""));
	if (json_is_string(json_object_get(q, "not_sent")))
		printf("               not sent: %s (a server refused it in an earlier run)\n", str_or(q, "not_sent", ""));
	if (json_is_object(json_object_get(q, "kept"))) {
		char *k = json_dumps(json_object_get(q, "kept"), JSON_COMPACT | JSON_SORT_KEYS);
		printf("               adapted on the server's word in an earlier run (kept in the store's "
		       "llm-adapted.json): %s\n", k ? k : "?");
		free(k);
	}
}

static void print_text(const json_t *r)
{
	const json_t *llm = json_object_get(r, "llm"), *probe = json_object_get(r, "worker"),
		     *sl = json_object_get(r, "slurm"), *gpus = json_object_get(probe, "gpus"), *g;
	size_t i;
	printf("egg %s\n", str_or(r, "egg", "?"));
	if (json_string_value(json_object_get(r, "config_error")))
		printf("config file:   NOT USED: %s\n", str_or(r, "config_error", "?"));
	else
		printf("config file:   %s\n", str_or(r, "config_file", "(none)"));
	printf("llm:           provider %s, base URL %s, model %s, API key %s\n", str_or(llm, "provider", "?"),
	       str_or(llm, "base_url", "?"), str_or(llm, "model", "(missing)"), str_or(llm, "api_key", "?"));
	printf("endpoint:      POST %s\n", str_or(llm, "endpoint", "?"));
	print_request(json_object_get(llm, "request"));
	printf("store:         %s\n", str_or(r, "store", "?"));
	if (sl) {
		json_t *pt;
		printf("slurm:         partitions:");
		json_array_foreach(json_object_get(sl, "partitions"), i, pt)
			printf("%s %s", i ? ";" : "", json_string_value(pt));
		printf("%s; test step %s%s%s\n", json_array_size(json_object_get(sl, "partitions")) ? "" : " (none)",
		       json_is_true(json_object_get(sl, "test_step")) ? "ran the worker probe" : "failed",
		       json_object_get(sl, "srun_args") ? " with srun " : "", str_or(sl, "srun_args", ""));
	}
	if (probe) {
		printf("worker python: %s (%s, Python %s)\n", str_or(r, "python", "?"), str_or(probe, "executable", "?"),
		       str_or(probe, "python", "?"));
		printf("torch:         %s\n", str_or(probe, "torch", "(missing)"));
		printf("triton:        %s\n", str_or(probe, "triton", "(missing)"));
		printf("numpy:         %s\n", str_or(probe, "numpy", "(missing)"));
		if (!json_array_size(gpus))
			printf("gpu:           none (device cpu: Triton interpreter)\n");
		json_array_foreach(gpus, i, g)
			printf("gpu %zu:         %s, %lld SMs, L2 %.0f MB, %.0f GB, cc %s, driver %s\n", i,
			       str_or(g, "name", "?"), json_integer_value(json_object_get(g, "sm_count")),
			       json_number_value(json_object_get(g, "l2_bytes")) / 1e6,
			       json_number_value(json_object_get(g, "memory_bytes")) / 1e9,
			       str_or(g, "compute_capability", "?"), str_or(probe, "driver", "?"));
		printf("ncu:           %s%s%s%s\n", str_or(probe, "ncu", "not found"),
		       json_object_get(probe, "ncu_version") ? " (" : "", str_or(probe, "ncu_version", ""),
		       json_object_get(probe, "ncu_version") ? ")" : "");
		if (json_object_get(probe, "ncu_counters"))
			printf("ncu counters:  %s\n", str_or(probe, "ncu_counters", "?"));
		print_sandbox(probe);
	}
	print_calibration(json_object_get(r, "calibration"));
	json_array_foreach(json_object_get(r, "notes"), i, g)
		printf("note:          %s\n", json_string_value(g));
	json_array_foreach(json_object_get(r, "missing"), i, g)
		printf("missing:       %s\n", json_string_value(g));
	{
		struct buf yes = BUF_INIT, no = BUF_INIT;
		const char *name;
		json_t *v;
		json_object_foreach((json_t *)json_object_get(r, "commands"), name, v)
			buf_addf(json_is_true(v) ? &yes : &no, " %s", name);
		printf("can run:      %s\n", *buf_str(&yes) ? buf_str(&yes) : " (nothing)");
		if (*buf_str(&no))
			printf("cannot run:   %s%s\n", buf_str(&no),
			       !json_is_true(json_object_get(r, "can_profile")) && probe ? " (profile needs a GPU and ncu)" : "");
		buf_release(&yes);
		buf_release(&no);
	}
}

int cmd_doctor(const struct command *self, int argc, char **argv)
{
	struct cmd_ctx ctx = { 0 };
	json_t *report = NULL;
	int slurm = 0, calibrate = 0;
	const struct opt own[] = {
		{ "slurm", 0, OPT_FLAG, &slurm, NULL, "check Slurm too: sinfo's partitions, and the worker probe as a Slurm step" },
		{ "calibrate", 0, OPT_FLAG, &calibrate, NULL,
		  "measure the device's peaks and what egg's own Triton matrix products reach there (the practical "
		  "bound the prompts state), or show them from the evaluation cache" },
		OPT_TABLE_END,
	};
	const struct opt *tables[] = { own, NULL };
	int code = cmd_parse(self, tables, argc, argv, &ctx);

	if (code >= 0)
		goto out;
	if (slurm)
		ctx.cfg.slurm = 1;
	report = collect_report(&ctx.cfg, ctx.kind, ctx.config_error, ctx.json);
	if (calibrate && json_is_true(json_object_get(json_object_get(report, "commands"), "eval")))
		json_object_set_new(report, "calibration", calibration(&ctx));
	if (ctx.json)
		cmd_print_json(json_incref(report));
	else
		print_text(report);
	/* Exit 3 only when nothing can evaluate; a missing LLM leaves eval,
	 * selfcheck and profile usable, and the lines above say so. */
	if (!json_is_true(json_object_get(json_object_get(report, "commands"), "eval"))) {
		err_set(ERR_INFRA, "not ready: egg cannot evaluate anything (%s)",
			ctx.json ? "what is missing is in the JSON on stdout" : "see 'missing' above");
		code = err_report();
	} else {
		code = EXIT_DONE;
	}
out:
	json_decref(report);
	cmd_ctx_clear(&ctx);
	return code;
}
