/* test_pool.c: the device pool's memory admission, the secrets taken out of the environment, and a
 * Slurm worker step's GPU request. */
#include <math.h>
#include <stdio.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "../../src/eval/launch.h"
#include "../../src/eval/pool.h"
#include "../../src/config/config.h"
#include "../../src/eval/eval.h"
#include "../../src/util/buf.h"
#include "../../src/util/timeutil.h"
#include "unit.h"

struct job {
	struct pool *pool;
	long long need;
	double got_at;		/* when it was admitted (ms) */
	int hold_ms;
	double released_at;
};

static void *run_job(void *arg)
{
	struct job *j = arg;
	struct pool_slot *slot = pool_acquire_for(j->pool, 0, j->need);
	j->got_at = time_mono_ms();
	time_sleep_ms(j->hold_ms);
	j->released_at = time_mono_ms();
	pool_release(j->pool, slot);
	return NULL;
}

static void test_admission(void)
{
	struct config cfg;
	const char *devices[] = { "cpu" };
	struct pool *p;
	pthread_t t[3];
	struct job a = { 0 }, b = { 0 }, c = { 0 };
	config_init(&cfg);
	p = pool_new(&cfg, devices, 1, 3, NULL);
	pool_set_memory(p, 0, 100);
	pool_set_memory(p, 0, 5);	/* the first budget stays */
	/* Orders, not durations: a loaded machine may be slow, never out of order. */
	a = (struct job){ p, 60, 0, 1000, 0 };
	b = (struct job){ p, 60, 0, 10, 0 };
	c = (struct job){ p, 30, 0, 10, 0 };
	pthread_create(&t[0], NULL, run_job, &a);
	while (!a.got_at)
		time_sleep_ms(5);
	pthread_create(&t[1], NULL, run_job, &b);
	pthread_create(&t[2], NULL, run_job, &c);
	for (int i = 0; i < 3; i++)
		pthread_join(t[i], NULL);
	CHECK(c.got_at < a.released_at, "a job that fits beside a running one is admitted while it runs");
	CHECK(b.got_at >= a.released_at, "a job that does not fit waits until memory is released");
	CHECK(pool_peak_memory(p, 0) == 90, "the most admitted at once is 60 + 30 (%lld)", pool_peak_memory(p, 0));

	/* A job larger than the whole budget runs, alone. */
	a = (struct job){ p, 500, 0, 300, 0 };
	b = (struct job){ p, 10, 0, 10, 0 };
	pthread_create(&t[0], NULL, run_job, &a);
	while (!a.got_at)
		time_sleep_ms(5);
	pthread_create(&t[1], NULL, run_job, &b);
	pthread_join(t[0], NULL);
	pthread_join(t[1], NULL);
	CHECK(a.got_at > 0, "a job larger than the budget runs when nothing else does");
	CHECK(b.got_at >= a.released_at, "and nothing runs beside it");
	pool_free(p);
	config_free(&cfg);
}

static void test_need(void)
{
	json_t *b = json_pack("{s:f}", "peak_bytes", 1e9);
	json_t *facts = json_pack("{s:f, s:f}", "free_bytes", 100e9, "memory_bytes", 140e9);
	CHECK(eval_need_bytes(b, "cuda:0") == 2000000000LL + 2 * (600LL << 20),
	      "an evaluation needs two baseline peaks and two CUDA contexts");
	CHECK(eval_need_bytes(b, "cpu") == 0 && eval_need_bytes(NULL, "cuda") == 0,
	      "no admission on the CPU or without a baseline");
	CHECK(eval_device_budget(facts, "cuda:0") == 90000000000LL, "a GPU's budget is 90%% of its free memory");
	json_decref(b);
	json_decref(facts);
}

static void test_secrets(void)
{
	extern char **environ;
	char *raw = NULL;
	setenv("ANTHROPIC_API_KEY", "sk-ant-unit-4f2a9", 1);
	for (char **e = environ; *e; e++)
		if (!strncmp(*e, "ANTHROPIC_API_KEY=", 18))
			raw = *e + 18;
	config_take_secrets();
	CHECK(!getenv("ANTHROPIC_API_KEY"), "the key is no longer in the environment");
	CHECK(raw && raw[0] == '\0' && raw[5] == '\0', "its bytes in the environment block are overwritten");
	CHECK_STR(config_secret("ANTHROPIC_API_KEY"), "sk-ant-unit-4f2a9", "egg still knows it");
}

/* A roofline's description as egg prints it (eval_roofline_text). */
static int roofline_text_is(const json_t *rl, const char *basis, const char *want)
{
	struct buf text = BUF_INIT;
	int same;

	eval_roofline_text(&text, rl, basis);
	same = !strcmp(buf_str(&text), want);
	if (!same)
		fprintf(stderr, "# roofline text: got '%s', want '%s'\n", buf_str(&text), want);
	buf_release(&text);
	return same;
}

/* The roofline bound from a baseline's work and a calibration, figures
 * checked by hand. */
static void test_roofline(void)
{
	json_t *cal = json_pack("{s:f, s:f, s:f, s:f}", "bandwidth_bytes_s", 4e12, "fp32_flops_s", 50e12, "tf32_flops_s",
				400e12, "bf16_flops_s", 800e12);
	json_t *b = json_pack("{s:f, s:f, s:{s:f, s:f, s:b}}", "eager_ms", 10.0, "compile_ms", 5.0, "work", "flops",
			      2e12, "bytes", 1e9, "half", 0);
	const json_t *rl;

	eval_attach_roofline(b, cal, "fp32");
	rl = json_object_get(b, "roofline");
	/* fp32: the faster of 50 TFLOP/s FMA and 400/3 as tf32x3: 2e12 / 133.3e12 = 15 ms; 1 GB at 4 TB/s = 0.25 ms. */
	CHECK(rl && !strcmp(json_string_value(json_object_get(rl, "peak")), "fp32 as tf32x3") &&
	      fabs(json_number_value(json_object_get(b, "roofline_ms")) - 15.0) < 1e-9 &&
	      !strcmp(json_string_value(json_object_get(rl, "bound")), "compute") &&
	      fabs(json_number_value(json_object_get(rl, "memory_ms")) - 0.25) < 1e-12,
	      "fp32: compute-bound at a third of the TF32 rate, 15 ms");
	CHECK(fabs(json_number_value(json_object_get(b, "eager_sol_pct")) - 150.0) < 1e-9 &&
	      fabs(json_number_value(json_object_get(b, "compile_sol_pct")) - 300.0) < 1e-9,
	      "eager's and torch.compile's %%SOL are the bound over their times");
	eval_attach_roofline(b, cal, "tf32");
	CHECK(fabs(json_number_value(json_object_get(b, "roofline_ms")) - 5.0) < 1e-9, "tf32: 2e12 at 400 TFLOP/s, 5 ms");
	json_object_set_new(json_object_get(b, "work"), "half", json_true());
	eval_attach_roofline(b, cal, "fp32");
	CHECK(fabs(json_number_value(json_object_get(b, "roofline_ms")) - 2.5) < 1e-9, "a bf16 task: 800 TFLOP/s, 2.5 ms");
	json_object_set_new(cal, "tf32_flops_s", json_real(90e12));
	json_object_set_new(json_object_get(b, "work"), "half", json_false());
	json_object_set_new(json_object_get(b, "work"), "flops", json_real(0));
	eval_attach_roofline(b, cal, "fp32");
	rl = json_object_get(b, "roofline");
	CHECK(!strcmp(json_string_value(json_object_get(rl, "peak")), "fp32") &&
	      !strcmp(json_string_value(json_object_get(rl, "bound")), "memory") &&
	      fabs(json_number_value(json_object_get(b, "roofline_ms")) - 0.25) < 1e-12,
	      "no counted FLOPs: memory-bound; FMA beats TF32/3 here, so fp32 is the FMA rate");
	/* int8 matmul work (4e12 operations at 1600 TOP/s: 2.5 ms) beside float
	 * work (at 50 TFLOP/s, FMA, TF32/3 being 30 here): the larger part names
	 * the bound. */
	json_object_set_new(cal, "int8_ops_s", json_real(1600e12));
	json_object_set_new(json_object_get(b, "work"), "flops", json_real(5e12));
	json_object_set_new(json_object_get(b, "work"), "int8_ops", json_real(4e12));
	eval_attach_roofline(b, cal, "fp32");
	rl = json_object_get(b, "roofline");
	CHECK(!strcmp(json_string_value(json_object_get(rl, "peak")), "fp32") &&
	      fabs(json_number_value(json_object_get(b, "roofline_ms")) - 20.0) < 1e-9 &&
	      roofline_text_is(rl, NULL, "compute-bound: 1000 GFLOP at 50.0 TFLOP/s fp32; 1.00 GB at 4.00 TB/s"),
	      "int8 and float work: the float part (1e12 at 50 TFLOP/s, 20 ms) is the larger, named fp32");
	json_object_set_new(json_object_get(b, "work"), "flops", json_real(4e12 + 1e9));
	eval_attach_roofline(b, cal, "fp32");
	rl = json_object_get(b, "roofline");
	CHECK(!strcmp(json_string_value(json_object_get(rl, "peak")), "int8") &&
	      fabs(json_number_value(json_object_get(b, "roofline_ms")) - 2.5) < 1e-9 &&
	      json_number_value(json_object_get(rl, "flops")) == 4e12 &&
	      roofline_text_is(rl, "compute", "compute-bound: 4000 GOP at 1600.0 TOP/s int8") &&
	      roofline_text_is(rl, "memory", "memory-bound: 1.00 GB at 4.00 TB/s"),
	      "int8 work at the int8 peak: 4e12 operations at 1600 TOP/s, 2.5 ms, written in GOP and TOP/s");
	{
		/* A small task's bytes in a unit that shows them (not "0.0 MB"). */
		json_t *small = json_pack("{s:f, s:f}", "bytes", 49152.0, "bandwidth_bytes_s", 3.0e12);
		CHECK(roofline_text_is(small, "memory", "memory-bound: 49.2 KB at 3.00 TB/s"),
		      "a 49 KB task's bytes are said in KB");
		json_decref(small);
	}
	json_object_del(cal, "int8_ops_s");
	eval_attach_roofline(b, cal, "fp32");
	CHECK(fabs(json_number_value(json_object_get(b, "roofline_ms")) - 0.25) < 1e-9,
	      "a calibration without an int8 peak leaves the int8 part out (memory-bound, 0.25 ms)");
	json_decref(b);
	b = json_pack("{s:f, s:{s:s}}", "eager_ms", 1.0, "work", "error", "could not count");
	eval_attach_roofline(b, cal, "fp32");
	CHECK(!json_object_get(b, "roofline_ms"), "without counted work no bound is made up");
	json_decref(b);
	json_decref(cal);
}

/* The practical bound beside the roofline: a tensor-core scheme's rate only
 * where egg's kernel reached 80% of cuBLAS's for the same product. */
static void test_practical_bound(void)
{
	json_t *cal = json_pack("{s:f, s:f, s:f, s:f, s:{s:{s:f, s:f}, s:{s:f, s:f}, s:i}}", "bandwidth_bytes_s", 4e12,
				"fp32_flops_s", 50e12, "tf32_flops_s", 400e12, "bf16_flops_s", 800e12, "practical",
				"flops_s", "bf16", 500e12, "tf32", 330e12, "cublas_flops_s", "bf16", 780e12, "tf32",
				400e12, "size", 4096);
	json_t *b = json_pack("{s:f, s:{s:f, s:f, s:b}}", "eager_ms", 10.0, "work", "flops", 8e12, "bytes", 1e9, "half",
			      1);
	const json_t *p = json_object_get(cal, "practical");
	CHECK(!eval_practical_is_bound(p, "bf16") && eval_practical_is_bound(p, "tf32") &&
	      !eval_practical_is_bound(p, "fp32_ieee"), "bf16 at 64%% of cuBLAS is no bound, tf32 at 82%% is; "
	      "a scheme not measured is none");
	eval_attach_roofline(b, cal, "fp32");
	CHECK(!json_object_get(b, "practical_ms") && fabs(json_number_value(json_object_get(b, "roofline_ms")) - 10.0) < 1e-9,
	      "a bf16 task: the peak's 10 ms and no practical bound from a kernel at 64%% of cuBLAS");
	json_object_set_new(json_object_get(p, "flops_s"), "bf16", json_real(640e12));
	eval_attach_roofline(b, cal, "fp32");
	CHECK(fabs(json_number_value(json_object_get(b, "practical_ms")) - 12.5) < 1e-9,
	      "at 82%% of cuBLAS (640 TFLOP/s) the practical bound is stated: 12.5 ms");
	json_object_del((json_t *)p, "cublas_flops_s");
	json_object_del(b, "practical_ms");
	eval_attach_roofline(b, cal, "fp32");
	CHECK(!json_object_get(b, "practical_ms"), "without cuBLAS's figure to compare, no tensor-core bound is stated");
	json_decref(b);
	json_decref(cal);
}

/* An evaluation's stage read once, in the worker's order: a failure past
 * "run" is a wrong result, one before it a kernel that would not run. */
static void test_eval_stage(void)
{
	static const struct {
		const char *stage;
		enum eval_stage want;
	} cases[] = { { "load", EVAL_AT_LOAD }, { "compile", EVAL_AT_COMPILE }, { "run", EVAL_AT_RUN },
		      { "correctness", EVAL_AT_CORRECTNESS }, { "integrity", EVAL_AT_INTEGRITY },
		      { "timing", EVAL_AT_TIMING }, { "done", EVAL_AT_DONE }, { "sideways", EVAL_AT_UNKNOWN } };
	int all = 1;
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		json_t *r = json_pack("{s:s}", "stage", cases[i].stage);
		all &= eval_stage_of(r) == cases[i].want;
		json_decref(r);
	}
	CHECK(all, "each stage the worker names is read to its place in the order; another is unknown");
	CHECK(eval_stage_of(NULL) == EVAL_AT_UNKNOWN && EVAL_AT_CORRECTNESS > EVAL_AT_RUN && EVAL_AT_RUN > EVAL_AT_COMPILE,
	      "no result is unknown; checking what a kernel computed comes after running it");
}

/* A Slurm GPU worker asks for --gpus=1, unless the site's srun arguments ask
 * for GPUs their own way (a shard of one, MPS, a type). */
static void test_slurm_gpus(void)
{
	struct config cfg;
	struct strvec argv = STRVEC_INIT;
	static const struct {
		const char *args;
		int asks;
	} cases[] = {
		{ NULL, 0 }, { "-p gpu -A proj -t 1:00:00", 0 }, { "--gres=shard:1", 1 }, { "--gres gpu:h200:1", 1 },
		{ "--gpus=h200:1", 1 }, { "-G 1", 1 }, { "-G1", 1 }, { "--gpus-per-task=1", 1 }, { "--gresx", 0 },
		{ "--job-name=gpus", 0 }, { "-p gres", 0 }, { "--gres=tmpfs:10G", 0 }, { "--tres-per-task=gres/gpu:1", 1 },
		{ "--gres=mps:50", 1 },
	};
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++)
		CHECK(launch_slurm_args_ask_gpus(cases[i].args) == cases[i].asks, "srun arguments '%s' %s GPUs themselves",
		      cases[i].args ? cases[i].args : "(none)", cases[i].asks ? "ask for" : "do not ask for");
	memset(&cfg, 0, sizeof(cfg));
	cfg.slurm = 1;
	cfg.slurm_args = "--gres=shard:1";
	launch_worker_argv(&cfg, "serve", "cuda", &argv);
	{
		int gpus = 0, shard = 0;
		for (size_t i = 0; i < argv.n; i++) {
			gpus += !strcmp(argv.v[i], "--gpus=1");
			shard += !strcmp(argv.v[i], "--gres=shard:1");
		}
		CHECK(!gpus && shard == 1, "a GPU step with --gres=shard:1 asks for the shard, not --gpus=1 as well");
	}
	strvec_clear(&argv);
	cfg.slurm_args = "-p gpu";
	launch_worker_argv(&cfg, "serve", "cuda", &argv);
	{
		int gpus = 0;
		for (size_t i = 0; i < argv.n; i++)
			gpus += !strcmp(argv.v[i], "--gpus=1");
		CHECK(gpus == 1, "a GPU step with other arguments asks for --gpus=1");
	}
	strvec_clear(&argv);
	cfg.python = "/opt/venv/bin/python3";
	launch_worker_argv(&cfg, "serve", "cuda", &argv);
	{
		size_t w = 0;
		while (w < argv.n && strcmp(argv.v[w], "worker"))
			w++;
		CHECK(w + 3 < argv.n && !strcmp(argv.v[w + 1], "--python") &&
			      !strcmp(argv.v[w + 2], "/opt/venv/bin/python3") && !strcmp(argv.v[w + 3], "serve"),
		      "a Slurm step's egg worker is given the coordinator's --python before its mode");
	}
	strvec_clear(&argv);
}

void suite_pool(void)
{
	test_admission();
	test_need();
	test_secrets();
	test_roofline();
	test_practical_bound();
	test_eval_stage();
	test_slurm_gpus();
}
