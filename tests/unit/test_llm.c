/* test_llm.c: wire formats, Retry-After, prices, and concurrent calls against the mock server. */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <jansson.h>

#include "../../src/llm/llm.h"
#include "../../src/util/err.h"
#include "../../src/util/fs.h"
#include "../../src/util/proc.h"
#include "../../src/util/timeutil.h"
#include "unit.h"

static void test_bodies(void)
{
	char *b = provider_request_body(LLM_OPENAI, "m1", "sys", "hi", 0.5, 99, "max_completion_tokens");
	json_t *o = json_loads(b, 0, NULL);
	CHECK(o && !strcmp(json_string_value(json_object_get(o, "model")), "m1") &&
	      json_integer_value(json_object_get(o, "max_completion_tokens")) == 99 &&
	      json_array_size(json_object_get(o, "messages")) == 2,
	      "openai body has model, token field and system+user messages");
	json_decref(o);
	free(b);
	b = provider_request_body(LLM_ANTHROPIC, "c1", "sys", "hi", -1, 10, NULL);
	o = json_loads(b, 0, NULL);
	CHECK(o && !strcmp(json_string_value(json_object_get(o, "system")), "sys") &&
	      json_array_size(json_object_get(o, "messages")) == 1 &&
	      !json_object_get(o, "temperature"),
	      "anthropic body carries system apart and omits a negative temperature");
	json_decref(o);
	free(b);
}

static void test_parse(void)
{
	struct provider_reply r;
	char why[256];
	const char *ok = "{\"model\":\"m\",\"choices\":[{\"message\":{\"content\":\"hey\"},\"finish_reason\":\"length\"}],"
			 "\"usage\":{\"prompt_tokens\":5,\"completion_tokens\":7}}";
	const char *ant = "{\"content\":[{\"type\":\"text\",\"text\":\"a\"},{\"type\":\"text\",\"text\":\"b\"}],"
			  "\"stop_reason\":\"max_tokens\",\"usage\":{\"input_tokens\":3,\"output_tokens\":4}}";
	struct buf msg = BUF_INIT;

	CHECK(provider_parse_reply(LLM_OPENAI, ok, strlen(ok), &r, why, sizeof(why)) == 0 &&
	      !strcmp(r.content, "hey") && !strcmp(r.finish_reason, "length") &&
	      r.prompt_tokens == 5 && r.completion_tokens == 7, "openai reply parsed with usage");
	provider_reply_clear(&r);
	CHECK(provider_parse_reply(LLM_ANTHROPIC, ant, strlen(ant), &r, why, sizeof(why)) == 0 &&
	      !strcmp(r.content, "ab") && !strcmp(r.finish_reason, "length") && r.completion_tokens == 4,
	      "anthropic text blocks are joined and max_tokens maps to length");
	provider_reply_clear(&r);
	CHECK(provider_parse_reply(LLM_OPENAI, "{\"choices\":[]}", 14, &r, why, sizeof(why)) == -1 &&
	      strstr(why, "no choices"), "empty choices is an error that says so");
	CHECK(provider_parse_reply(LLM_OPENAI, "<html>", 6, &r, why, sizeof(why)) == -1 &&
	      strstr(why, "not valid JSON"), "a body that is not JSON is an error that says so");
	CHECK(provider_parse_reply(LLM_OPENAI, "[1]", 3, &r, why, sizeof(why)) == -1,
	      "a JSON array is not a reply");
	provider_error_message("{\"error\":{\"message\":\"bad key\"}}", 31, &msg);
	CHECK_STR(buf_str(&msg), "bad key", "error message taken from error.message");
	buf_reset(&msg);
	provider_error_message("<html>\n<b>oops</b>", 18, &msg);
	CHECK_STR(buf_str(&msg), "<html>", "a non-JSON error body gives its first line");
	buf_release(&msg);
}

static void test_retry_after(void)
{
	double d;
	CHECK(llm_parse_retry_after(" 7 ") == 7, "Retry-After in seconds");
	d = llm_parse_retry_after("Wed, 21 Oct 2015 07:28:00 GMT");
	CHECK(d == 0, "a past HTTP-date means retry now");
	CHECK(llm_parse_retry_after("soon") == -1, "an unusable Retry-After is ignored");
}

static void test_price(void)
{
	struct config cfg;
	config_init(&cfg);
	CHECK(llm_price(&cfg, "gpt-5-mini-2025", 1000000, 0) == 0.25,
	      "the longest built-in prefix wins (gpt-5-mini over gpt-5)");
	CHECK(llm_price(&cfg, "mystery-model", 10, 10) < 0, "an unknown model has no price");
}

/* ---- concurrency against the real mock server ---- */

struct call_arg {
	struct llm *llm;
	int index;
	int ok;
};

static void *call_thread(void *p)
{
	struct call_arg *a = p;
	struct llm_request req = { 0 };
	struct llm_result res;
	char prompt[64];
	snprintf(prompt, sizeof(prompt), "request number %d", a->index);
	req.user = prompt;
	a->ok = llm_call(a->llm, &req, &res) == 0 && !strcmp(res.content, "pong");
	llm_result_clear(&res);
	return NULL;
}

/* 16 calls of 400 ms each from 16 threads through one client whose gate
 * lets `gate` requests in flight at once. */
static void test_concurrency(const char *gate)
{
	enum { THREADS = 16 };
	char dir[] = "/tmp/egg-unit-mock-XXXXXX";
	struct proc mock = PROC_INIT;
	struct config cfg;
	struct llm *llm;
	pthread_t th[THREADS];
	struct call_arg args[THREADS];
	char *script, *portfile, *log, url[128], port[32] = "";
	double t0, wall;
	int all_ok = 1;
	int lines = 0, ch;
	FILE *f;

	if (!mkdtemp(dir)) {
		CHECK(0, "a temporary folder for the mock server");
		return;
	}
	script = fs_join(dir, "script.json");
	portfile = fs_join(dir, "port");
	log = fs_join(dir, "log.jsonl");
	f = fopen(script, "w");
	fputs("[{\"reply\": \"pong\", \"delay\": 0.4, \"repeat\": true}]\n", f);
	fclose(f);
	strvec_push(&mock.argv, "python3");
	strvec_pushf(&mock.argv, "%s/tests/mock/mockllm.py", unit_source_dir);
	strvec_push(&mock.argv, "--script");
	strvec_push(&mock.argv, script);
	strvec_push(&mock.argv, "--port-file");
	strvec_push(&mock.argv, portfile);
	strvec_push(&mock.argv, "--log");
	strvec_push(&mock.argv, log);
	mock.null_out = 1;
	mock.new_pgroup = 1;
	if (proc_start(&mock) < 0) {
		CHECK(0, "mock server starts");
		return;
	}
	for (int i = 0; i < 100 && !fs_exists(portfile); i++)
		time_sleep_ms(50);
	f = fopen(portfile, "r");
	if (!f || !fgets(port, sizeof(port), f)) {
		CHECK(0, "mock server reports its port");
		proc_kill(&mock, 100, NULL);
		return;
	}
	fclose(f);
	port[strcspn(port, "\n")] = '\0';
	snprintf(url, sizeof(url), "http://127.0.0.1:%s", port);

	config_init(&cfg);
	config_set_flag(&cfg, "model", "mock-model");
	config_set_flag(&cfg, "base-url", url);
	config_set_flag(&cfg, "llm-concurrency", gate);
	config_resolve(&cfg);
	llm = llm_new(&cfg, 0);
	t0 = time_mono_ms();
	for (int i = 0; i < THREADS; i++) {
		args[i] = (struct call_arg){ llm, i, 0 };
		pthread_create(&th[i], NULL, call_thread, &args[i]);
	}
	for (int i = 0; i < THREADS; i++) {
		pthread_join(th[i], NULL);
		all_ok &= args[i].ok;
	}
	wall = time_mono_ms() - t0;
	CHECK(all_ok, "%d concurrent calls from one client all succeed (gate %s)", THREADS, gate);
	if ((f = fopen(log, "r"))) {
		while ((ch = fgetc(f)) != EOF)
			lines += ch == '\n';
		fclose(f);
	}
	CHECK(lines == THREADS, "each concurrent call reached the server once (%d requests)", lines);
	if (atoi(gate) >= 8) {
		CHECK(wall < THREADS * 400 / 2, "concurrent calls overlap (%.0f ms for %d calls of 400 ms)", wall, THREADS);
	} else {
		/* A lower bound the gate guarantees: THREADS/gate waves of 400 ms. */
		CHECK(wall >= THREADS / atoi(gate) * 400 - 5, "--llm-concurrency %s holds the rest back (%.0f ms >= %d ms)",
		      gate, wall, THREADS / atoi(gate) * 400);
	}
	llm_free(llm);
	config_free(&cfg);
	proc_kill(&mock, 200, NULL);
	proc_clear(&mock);
	fs_remove_tree(dir);
	free(script);
	free(portfile);
	free(log);
}

void suite_llm(void)
{
	test_bodies();
	test_parse();
	test_retry_after();
	test_price();
	test_concurrency("8");
	test_concurrency("4");
}
