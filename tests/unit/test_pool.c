/* test_pool.c: the device pool's memory admission and the secrets taken out of the environment. */
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "../../src/eval/pool.h"
#include "../../src/config/config.h"
#include "../../src/eval/eval.h"
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

void suite_pool(void)
{
	test_admission();
	test_need();
	test_secrets();
}
