/* test_llm.c: wire formats, Retry-After, prices, and concurrent calls against the mock server. */
#include <math.h>
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
	struct provider_request r = { "m1", "sys", "hi", 99, "max_completion_tokens", 0.5, "low", 0, 1, 1, 1 };
	char *b = provider_request_body(LLM_OPENAI, &r);
	json_t *o = json_loads(b, 0, NULL);
	CHECK(o && !strcmp(json_string_value(json_object_get(o, "model")), "m1") &&
	      json_integer_value(json_object_get(o, "max_completion_tokens")) == 99 &&
	      !json_object_get(o, "max_tokens") && json_array_size(json_object_get(o, "messages")) == 2,
	      "openai body has model, token field and system+user messages");
	CHECK(o && !strcmp(json_string_value(json_object_get(o, "reasoning_effort")) ?: "", "low") &&
	      json_is_true(json_object_get(o, "stream")) &&
	      json_is_true(json_object_get(json_object_get(o, "stream_options"), "include_usage")),
	      "openai body: reasoning effort, stream and the usage chunk asked for");
	CHECK(o && json_is_string(json_object_get(json_array_get(json_object_get(o, "messages"), 0), "content")) &&
	      !strstr(b, "cache_control") && !strstr(b, "thinking"),
	      "openai body: no cache mark and no thinking (OpenAI caches a repeated prefix by itself)");
	json_decref(o);
	free(b);
	r = (struct provider_request){ "c1", "sys", "hi", 10, "max_completion_tokens", -1, "high", 0, 0, 1, 1 };
	b = provider_request_body(LLM_ANTHROPIC, &r);
	o = json_loads(b, 0, NULL);
	CHECK(o && !strcmp(json_string_value(json_object_get(o, "system")), "sys") &&
	      json_array_size(json_object_get(o, "messages")) == 1 &&
	      !json_object_get(o, "temperature"),
	      "anthropic body carries system apart and omits a negative temperature");
	CHECK(o && json_integer_value(json_object_get(o, "max_tokens")) == 10 &&
	      !json_object_get(o, "max_completion_tokens") && !json_object_get(o, "reasoning_effort") &&
	      !json_object_get(o, "stream_options") && json_is_true(json_object_get(o, "stream")),
	      "anthropic body: always max_tokens, never OpenAI's fields");
	json_decref(o);
	free(b);
	r = (struct provider_request){ "c1", "sys", "hi", 5096, NULL, -1, NULL, 4096, 1, 1, 1 };
	b = provider_request_body(LLM_ANTHROPIC, &r);
	o = json_loads(b, 0, NULL);
	{
		json_t *block = json_array_get(json_object_get(o, "system"), 0), *think = json_object_get(o, "thinking");
		CHECK(block && !strcmp(json_string_value(json_object_get(block, "text")) ?: "", "sys") &&
		      !strcmp(json_string_value(json_object_get(json_object_get(block, "cache_control"), "type")) ?: "",
			      "ephemeral"),
		      "anthropic body: the system text is one block marked for the prompt cache");
		CHECK(think && !strcmp(json_string_value(json_object_get(think, "type")) ?: "", "enabled") &&
		      json_integer_value(json_object_get(think, "budget_tokens")) == 4096 &&
		      json_integer_value(json_object_get(o, "max_tokens")) == 5096,
		      "anthropic body: extended thinking with its budget");
	}
	json_decref(o);
	free(b);
}

static void test_stream(void)
{
	struct provider_reply r;
	char why[256];
	const char *oa = "data: {\"model\":\"gpt-5.1\",\"choices\":[{\"delta\":{\"role\":\"assistant\",\"content\":\"\"}}]}\n\n"
			 "data: {\"choices\":[{\"delta\":{\"content\":\"hel\"}}]}\n\n"
			 ": a comment\r\n\r\n"
			 "data: {\"choices\":[{\"delta\":{\"content\":\"lo\"},\"finish_reason\":\"stop\"}]}\n\n"
			 "data: {\"choices\":[],\"usage\":{\"prompt_tokens\":50,\"completion_tokens\":30,"
			 "\"prompt_tokens_details\":{\"cached_tokens\":20},\"completion_tokens_details\":{\"reasoning_tokens\":25}}}\n\n"
			 "data: [DONE]\n\n";
	const char *an = "event: message_start\ndata: {\"type\":\"message_start\",\"message\":{\"model\":\"claude-x\","
			 "\"usage\":{\"input_tokens\":10,\"cache_read_input_tokens\":90,\"output_tokens\":1}}}\n\n"
			 "event: ping\ndata: {\"type\":\"ping\"}\n\n"
			 "event: content_block_delta\ndata: {\"type\":\"content_block_delta\",\"index\":0,"
			 "\"delta\":{\"type\":\"text_delta\",\"text\":\"ab\"}}\n\n"
			 "event: content_block_delta\ndata: {\"type\":\"content_block_delta\",\"index\":0,"
			 "\"delta\":{\"type\":\"thinking_delta\",\"thinking\":\"hmm\"}}\n\n"
			 "event: message_delta\ndata: {\"type\":\"message_delta\",\"delta\":{\"stop_reason\":\"max_tokens\"},"
			 "\"usage\":{\"output_tokens\":7}}\n\n"
			 "event: message_stop\ndata: {\"type\":\"message_stop\"}\n\n";
	const char *cut = "data: {\"choices\":[{\"delta\":{\"content\":\"def f(\"}}]}\n\ndata: {\"choi";
	const char *whole = "{\"choices\":[{\"message\":{\"content\":\"whole\"}}]}";
	const char *err = "event: error\ndata: {\"type\":\"error\",\"error\":{\"type\":\"overloaded_error\","
			  "\"message\":\"Overloaded\"}}\n\n";

	CHECK(provider_parse_stream(LLM_OPENAI, oa, strlen(oa), &r, why, sizeof(why)) == 0 && !strcmp(r.content, "hello") &&
	      !strcmp(r.finish_reason, "stop") && !strcmp(r.model, "gpt-5.1") && r.usage_seen,
	      "openai stream: the chunks' text joined, its finish reason and model");
	CHECK(r.prompt_tokens == 50 && r.cached_prompt_tokens == 20 && r.completion_tokens == 30 && r.reasoning_tokens == 25,
	      "openai stream: usage from the last chunk, with cached and reasoning tokens");
	provider_reply_clear(&r);
	CHECK(provider_parse_stream(LLM_ANTHROPIC, an, strlen(an), &r, why, sizeof(why)) == 0 && !strcmp(r.content, "ab") &&
	      !strcmp(r.finish_reason, "length") && !strcmp(r.model, "claude-x"),
	      "anthropic stream: text deltas joined (thinking left out), max_tokens maps to length");
	CHECK(r.prompt_tokens == 100 && r.cached_prompt_tokens == 90 && r.completion_tokens == 7,
	      "anthropic stream: input from message_start (cache reads added), output from message_delta");
	provider_reply_clear(&r);
	CHECK(provider_parse_stream(LLM_OPENAI, cut, strlen(cut), &r, why, sizeof(why)) == 1 &&
	      !strcmp(r.content, "def f(") && strstr(why, "before the reply was complete"),
	      "a stream cut off keeps what arrived and says it is incomplete");
	provider_reply_clear(&r);
	CHECK(provider_parse_stream(LLM_ANTHROPIC, err, strlen(err), &r, why, sizeof(why)) == -1 && strstr(why, "Overloaded"),
	      "an error event is an error with the server's message");
	provider_reply_clear(&r);
	CHECK(provider_parse_stream(LLM_OPENAI, "data: [DONE]\n\n", 14, &r, why, sizeof(why)) == -1 &&
	      strstr(why, "no choices"), "a stream with no choice at all says so");
	provider_reply_clear(&r);
	CHECK(provider_parse_stream(LLM_OPENAI, whole, strlen(whole), &r, why, sizeof(why)) == 0 && !strcmp(r.content, "whole") && !r.usage_seen,
	      "a server that does not stream: its JSON body is read as a whole reply (no usage seen)");
	provider_reply_clear(&r);
	CHECK(provider_parse_stream(LLM_OPENAI, "<html>", 6, &r, why, sizeof(why)) == -1, "an HTML page is no stream");
	provider_reply_clear(&r);
}

static void test_refusal(void)
{
	struct provider_refusal f;
	const char *mt = "{\"error\":{\"message\":\"Unsupported parameter: 'max_tokens' is not supported with this model. "
			 "Use 'max_completion_tokens' instead.\",\"type\":\"invalid_request_error\",\"param\":\"max_tokens\","
			 "\"code\":\"unsupported_parameter\"}}";
	const char *te = "{\"error\":{\"message\":\"Unsupported value: 'temperature' does not support 0.7 with this model. "
			 "Only the default (1) value is supported.\",\"type\":\"invalid_request_error\",\"param\":\"temperature\","
			 "\"code\":\"unsupported_value\"}}";
	const char *big = "{\"type\":\"error\",\"error\":{\"type\":\"invalid_request_error\",\"message\":\"max_tokens: "
			  "65536 > 64000, which is the maximum allowed number of output tokens for claude-sonnet-4-5\"}}";
	const char *oabig = "{\"error\":{\"message\":\"max_tokens is too large: 200000. This model supports at most 128000 "
			    "completion tokens, whereas you provided 200000.\",\"param\":\"max_tokens\",\"code\":\"invalid_value\"}}";
	const char *noparam = "{\"error\":{\"message\":\"Unrecognized request argument supplied: reasoning_effort\"}}";
	const char *other = "{\"error\":{\"message\":\"messages: roles must alternate\"}}";

	CHECK(provider_refusal(mt, strlen(mt), &f) && !strcmp(f.param, "max_tokens") && f.unsupported && !f.stated_max,
	      "OpenAI's max_tokens refusal: the parameter and its code");
	CHECK(provider_refusal(te, strlen(te), &f) && !strcmp(f.param, "temperature") && f.unsupported,
	      "OpenAI's temperature refusal: an unsupported value");
	CHECK(provider_refusal(big, strlen(big), &f) && !strcmp(f.param, "max_tokens") && f.stated_max == 64000,
	      "Anthropic's output limit above the model's: the maximum it states");
	CHECK(provider_refusal(oabig, strlen(oabig), &f) && f.stated_max == 128000 && !f.unsupported,
	      "OpenAI's output limit above the model's: 'at most N'");
	CHECK(provider_refusal(noparam, strlen(noparam), &f) && !strcmp(f.param, "reasoning_effort") && f.unsupported,
	      "without error.param the parameter quoted in the message is taken");
	CHECK(!provider_refusal(other, strlen(other), &f), "a refusal that names no parameter egg sends is not one to adapt to");
	CHECK(!provider_refusal("<html>", 6, &f), "a body that is not JSON names nothing");
}

static void test_rules(void)
{
	struct config cfg;
	struct llm_rules r;
	char path[] = "/tmp/egg-unit-rules-XXXXXX";
	int fd;
	FILE *f;

	config_init(&cfg);
	config_set_flag(&cfg, "model", "gpt-5.1");
	cfg.ignore_file = 1;
	CHECK(config_resolve(&cfg) == 0, "a config for gpt-5.1 resolves");
	llm_rules_for(&cfg, &r);
	CHECK(!strcmp(r.token_field, "max_completion_tokens") && r.temperature < 0 && !r.reasoning_effort &&
	      r.max_output == 128000, "gpt-5.1: max_completion_tokens, no temperature");
	config_free(&cfg);

	config_init(&cfg);
	config_set_flag(&cfg, "model", "gpt-4.1");
	config_set_flag(&cfg, "reasoning-effort", "high");
	cfg.ignore_file = 1;
	config_resolve(&cfg);
	llm_rules_for(&cfg, &r);
	CHECK(!strcmp(r.token_field, "max_tokens") && r.temperature == LLM_DEFAULT_TEMPERATURE && !r.reasoning_effort,
	      "gpt-4.1: max_tokens and the temperature; a reasoning effort is not sent to a model that takes none");
	config_free(&cfg);

	config_init(&cfg);
	config_set_flag(&cfg, "model", "o4-mini");
	config_set_flag(&cfg, "reasoning-effort", "high");
	config_set_flag(&cfg, "temperature", "0.2");
	cfg.ignore_file = 1;
	config_resolve(&cfg);
	llm_rules_for(&cfg, &r);
	CHECK(!strcmp(r.reasoning_effort ?: "", "high") && r.temperature == 0.2 && strstr(r.source, "setting temperature"),
	      "o4-mini: the reasoning effort is sent; a temperature set by the user overrides the rule, and says so");
	config_free(&cfg);

	config_init(&cfg);
	config_set_flag(&cfg, "model", "gpt-5");
	config_set_flag(&cfg, "reasoning-effort", "extreme");
	cfg.ignore_file = 1;
	config_resolve(&cfg);
	llm_rules_for(&cfg, &r);
	CHECK(strstr(r.refusal, "'extreme' is not one of minimal, low, medium, high") != NULL,
	      "an effort no provider documents is refused for an OpenAI model (not sent as it is)");
	config_free(&cfg);

	fd = mkstemp(path);
	f = fdopen(fd, "w");
	fputs("{\"request_rules\": {\"acme-\": {\"token_field\": \"max_completion_tokens\", \"temperature\": null,"
	      " \"reasoning_effort\": \"low\", \"max_output\": 4000}}}", f);
	fclose(f);
	config_init(&cfg);
	config_set_flag(&cfg, "model", "acme-reasoner");
	cfg.config_flag = path;
	CHECK(config_resolve(&cfg) == 0, "a config file with request_rules resolves");
	llm_rules_for(&cfg, &r);
	CHECK(!strcmp(r.token_field, "max_completion_tokens") && r.temperature < 0 && !strcmp(r.reasoning_effort ?: "", "low") &&
	      r.max_output == 4000 && strstr(r.source, "request_rules 'acme-'"),
	      "the config file's request_rules override the built-in row on a longer prefix");
	config_free(&cfg);
	f = fopen(path, "w");
	fputs("{\"request_rules\": {\"x\": {\"token_feild\": \"max_tokens\"}}}", f);
	fclose(f);
	config_init(&cfg);
	cfg.config_flag = path;
	CHECK(config_resolve(&cfg) == -1 && strstr(err_msg(), "unknown field 'token_feild'"),
	      "a mistyped request rule field is an error naming it");
	err_clear();
	config_free(&cfg);
	unlink(path);
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

static double price(struct config *cfg, const char *model, long prompt, long cached, long written, long out,
		    double *saved)
{
	struct llm_tokens t = { prompt, cached, written, out };
	return llm_price(cfg, model, &t, saved);
}

static void test_price(void)
{
	struct config cfg;
	double saved;
	config_init(&cfg);
	CHECK(price(&cfg, "gpt-5-mini-2025", 1000000, 0, 0, 0, NULL) == 0.25,
	      "the longest built-in prefix wins (gpt-5-mini over gpt-5)");
	CHECK(price(&cfg, "mystery-model", 10, 0, 0, 10, NULL) < 0, "an unknown model has no price");
	CHECK(fabs(price(&cfg, "gpt-5.1", 1000000, 800000, 0, 1000000, &saved) - (0.2 * 1.25 + 0.8 * 0.125 + 10.0)) < 1e-9,
	      "cached prompt tokens cost the cached-input price; reasoning tokens are output");
	CHECK(fabs(saved - 0.8 * (1.25 - 0.125)) < 1e-9, "and the cache saved what those tokens cost less");
	/* Anthropic: a cache write costs 1.25 times input, a read a tenth. */
	CHECK(fabs(price(&cfg, "claude-sonnet-4-5", 1000000, 0, 600000, 0, &saved) - (0.4 * 3.0 + 0.6 * 3.75)) < 1e-9,
	      "an Anthropic cache write costs 1.25 times the input price");
	CHECK(fabs(saved + 0.6 * 0.75) < 1e-9, "a call that only wrote the cache saved less than nothing");
	CHECK(fabs(price(&cfg, "claude-sonnet-4-5", 1000000, 600000, 0, 0, &saved) - (0.4 * 3.0 + 0.6 * 0.3)) < 1e-9 &&
	      fabs(saved - 0.6 * 2.7) < 1e-9, "a read costs a tenth, and saves the rest");
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

/* The arrival times (the mock server's clock) of the requests in its log. */
static int arrivals_read(const char *log, double *out, int max)
{
	char line[65536];
	int n = 0;
	FILE *f = fopen(log, "r");

	while (f && fgets(line, sizeof(line), f)) {
		json_t *o = json_loads(line, 0, NULL);

		if (o && n < max)
			out[n] = json_number_value(json_object_get(o, "time"));
		n += o != NULL;
		json_decref(o);
	}
	if (f)
		fclose(f);
	return n;
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return (x > y) - (x < y);
}

/* The most arrivals that fall within one window of `span` seconds. */
static int most_within(double *t, int n, double span)
{
	int best = 0;

	qsort(t, (size_t)(n < 0 ? 0 : n), sizeof(*t), cmp_double);
	for (int i = 0, j = 0; j < n; j++) {
		while (t[j] - t[i] >= span)
			i++;
		if (j - i + 1 > best)
			best = j - i + 1;
	}
	return best;
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
	double t0, wall, arrivals[THREADS];
	int all_ok = 1, n, in_flight;
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
	n = arrivals_read(log, arrivals, THREADS);
	CHECK(n == THREADS, "each concurrent call reached the server once (%d requests)", n);
	/* The server holds every request 400 ms: requests that arrived within
	 * 400 ms of each other were in flight together. That reads the server's
	 * own clock, not this test's wall time. */
	in_flight = most_within(arrivals, n, 0.4);
	if (atoi(gate) >= 8) {
		CHECK(in_flight >= 2, "concurrent calls overlap (%d arrived within 400 ms)", in_flight);
	} else {
		CHECK(in_flight <= atoi(gate), "--llm-concurrency %s holds the rest back (at most %d arrived within 400 ms)",
		      gate, in_flight);
		/* The gate's lower bound on the wall time: THREADS/gate waves of
		 * 400 ms each (sleeps the server guarantees, whatever the speed). */
		CHECK(wall >= THREADS / atoi(gate) * 400 - 5, "--llm-concurrency %s: %d waves of 400 ms (%.0f ms)",
		      gate, THREADS / atoi(gate), wall);
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
	test_stream();
	test_refusal();
	test_rules();
	test_retry_after();
	test_price();
	test_concurrency("8");
	test_concurrency("4");
}
