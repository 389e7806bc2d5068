/* llm.c: HTTP calls to the LLM endpoint with retries, backoff, the reply cache and the spool. */
#include "llm.h"

#include <ctype.h>
#include <curl/curl.h>
#include <math.h>
#include <netdb.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "../util/err.h"
#include "../util/fs.h"
#include "../util/hash.h"
#include "../util/timeutil.h"
#include "endpoint.h"
#include "kept.h"
#include "replycache.h"
#include "spool.h"

#define MAX_REPLY_BYTES (32u << 20)

/* How requests are sent now: the model's rules, changed where a server
 * refused a parameter (adapt). Guarded by struct llm's lock. */
struct wire {
	const char *token_field;
	double temperature;		/* < 0: not sent */
	const char *reasoning_effort;	/* NULL: not sent */
	long thinking_budget;		/* Anthropic's extended thinking; 0: off */
	int cache_prefix;		/* Anthropic: the system text marked for the prompt cache */
	int stream, stream_usage;
	long max_output;		/* the most the server accepts; 0: not known */
	int switched_field;		/* the output limit's field was switched once */
};

struct llm {
	const struct config *cfg;
	enum llm_provider provider;
	char *url;
	int use_cache;
	struct llm_rules rules;		/* what the model's rules ask for (the cache key's) */
	pthread_mutex_t lock;
	pthread_cond_t slot_free;	/* the concurrency cap (cfg->llm_concurrency) */
	int in_flight;
	int quiet_retries;		/* no retry notices on stderr (llm_set_quiet) */
	int wait_notices;		/* a call that lasts says so (llm_set_wait_notices) */
	struct wire wire;		/* under lock */
	char dropped[300];		/* what the kept adaptations leave out of the rules' request, or "" */
	int dropped_said;		/* under lock: the first request said it */
};

static pthread_once_t curl_once = PTHREAD_ONCE_INIT;
static int curl_ok;

static void curl_init_once(void)
{
	curl_ok = curl_global_init(CURL_GLOBAL_DEFAULT) == CURLE_OK;
}

/* Adds `what` to the list of parameters the kept adaptations leave out. */
static void add_dropped(struct llm *c, const char *what)
{
	size_t n = strlen(c->dropped);
	snprintf(c->dropped + n, sizeof(c->dropped) - n, "%s%s", n ? ", " : "", what);
}

/* What an earlier run adapted to for this endpoint and model (kept.h),
 * applied to the wire from the start; what it leaves out of the rules'
 * request is listed in c->dropped, for the first request to say. */
static void apply_kept(struct llm *c)
{
	json_t *k = kept_load(c->cfg->store, c->url, c->cfg->model), *v;
	struct wire *w = &c->wire;
	char what[80];
	if (!k)
		return;
	v = json_object_get(k, "token_field");
	if (json_is_string(v) && c->provider == LLM_OPENAI) {
		w->token_field = !strcmp(json_string_value(v), "max_tokens") ? "max_tokens" : "max_completion_tokens";
		w->switched_field = 1;
	}
	if (json_is_false(json_object_get(k, "temperature")) && w->temperature >= 0) {
		snprintf(what, sizeof(what), "temperature %g", w->temperature);
		add_dropped(c, what);
		w->temperature = -1;
	}
	if (json_is_false(json_object_get(k, "reasoning_effort")) && w->reasoning_effort) {
		snprintf(what, sizeof(what), "reasoning_effort '%.40s'", w->reasoning_effort);
		add_dropped(c, what);
		w->reasoning_effort = NULL;
	}
	if (json_is_false(json_object_get(k, "thinking")) && w->thinking_budget) {
		snprintf(what, sizeof(what), "extended thinking (a budget of %ld tokens)", w->thinking_budget);
		add_dropped(c, what);
		w->thinking_budget = 0;
	}
	if (json_is_false(json_object_get(k, "cache_control")) && w->cache_prefix) {
		add_dropped(c, "the prompt-cache mark (cache_control)");
		w->cache_prefix = 0;
	}
	if (json_is_false(json_object_get(k, "stream")) && w->stream) {
		add_dropped(c, "streaming");
		w->stream = 0;
	}
	if (json_is_false(json_object_get(k, "stream_options")) && w->stream_usage) {
		add_dropped(c, "stream_options");
		w->stream_usage = 0;
	}
	v = json_object_get(k, "max_output");
	if (json_is_integer(v) && json_integer_value(v) > 0 &&
	    (!w->max_output || json_integer_value(v) < w->max_output))
		w->max_output = (long)json_integer_value(v);
	json_decref(k);
}

/* The client's request form: the model's rules (rules.refusal says when
 * they cannot be sent), changed by what earlier runs adapted to. */
static void client_init(struct llm *c, const struct config *cfg, int use_cache)
{
	c->cfg = cfg;
	c->provider = !strcmp(cfg->provider, "anthropic") ? LLM_ANTHROPIC : LLM_OPENAI;
	c->url = config_endpoint(cfg);
	c->use_cache = use_cache;
	llm_rules_for(cfg, &c->rules);
	c->wire = (struct wire){ c->rules.token_field, c->rules.temperature, c->rules.reasoning_effort,
				 c->rules.thinking_budget, c->provider == LLM_ANTHROPIC, cfg->stream != 0,
				 cfg->stream != 0, c->rules.max_output, 0 };
	apply_kept(c);
}

struct llm *llm_new(const struct config *cfg, int use_cache)
{
	struct llm *c;

	if (!cfg->model || !*cfg->model) {
		err_set(ERR_INPUT, "no model configured (set --model, EGG_MODEL or \"model\" in the config file)");
		return NULL;
	}
	pthread_once(&curl_once, curl_init_once);
	if (!curl_ok) {
		err_set(ERR_INFRA, "cannot initialise libcurl");
		return NULL;
	}
	/* A spool run never uses the network. */
	if (!cfg->llm_spool && endpoint_check(cfg) < 0)
		return NULL;
	c = xcalloc(1, sizeof(*c));
	client_init(c, cfg, use_cache);
	if (c->rules.refusal[0]) {
		err_set(ERR_INPUT, "%s", c->rules.refusal);
		free(c->url);
		free(c);
		return NULL;
	}
	pthread_mutex_init(&c->lock, NULL);
	pthread_cond_init(&c->slot_free, NULL);
	return c;
}

void llm_free(struct llm *c)
{
	if (!c)
		return;
	pthread_cond_destroy(&c->slot_free);
	pthread_mutex_destroy(&c->lock);
	free(c->url);
	free(c);
}

void llm_result_clear(struct llm_result *res)
{
	free(res->content);
	free(res->finish_reason);
	free(res->model);
	free(res->adapted);
	free(res->partial);
	memset(res, 0, sizeof(*res));
}

long llm_output_ceiling(struct llm *c)
{
	long n;
	pthread_mutex_lock(&c->lock);
	n = c->wire.max_output;
	pthread_mutex_unlock(&c->lock);
	return n;
}

/* ---- HTTP ---- */

struct http_reply {
	long status;
	struct buf body;
	double retry_after_s;	/* -1 when absent */
	int body_overflow;
	double last_byte_ms;	/* monotonic time of the last byte received */
	double stall_ms;
	int stalled;
	/* A wait's notices (llm_set_wait_notices): the call's start and its last line. */
	const char *model;
	double start_ms, said_ms;
};

static size_t on_body(char *data, size_t size, size_t n, void *ctx)
{
	struct http_reply *r = ctx;
	r->last_byte_ms = time_mono_ms();
	if (buf_add(&r->body, data, size * n) < 0) {
		r->body_overflow = 1;
		return 0;
	}
	return size * n;
}

static size_t on_header(char *data, size_t size, size_t n, void *ctx)
{
	struct http_reply *r = ctx;
	size_t len = size * n;
	static const char name[] = "retry-after:";
	r->last_byte_ms = time_mono_ms();
	if (len > sizeof(name) - 1 && !strncasecmp(data, name, sizeof(name) - 1)) {
		char value[128];
		size_t vlen = len - (sizeof(name) - 1);
		if (vlen >= sizeof(value))
			vlen = sizeof(value) - 1;
		memcpy(value, data + sizeof(name) - 1, vlen);
		value[vlen] = '\0';
		r->retry_after_s = llm_parse_retry_after(value);
	}
	return len;
}

double llm_parse_retry_after(const char *value)
{
	char tmp[128];
	size_t n;
	char *end;
	double secs;
	time_t when;

	while (*value == ' ' || *value == '\t')
		value++;
	snprintf(tmp, sizeof(tmp), "%s", value);
	n = strlen(tmp);
	while (n && isspace((unsigned char)tmp[n - 1]))
		tmp[--n] = '\0';
	if (!n)
		return -1;
	secs = strtod(tmp, &end);
	if (end != tmp && !*end)
		return secs >= 0 ? secs : -1;
	when = curl_getdate(tmp, NULL);
	if (when < 0)
		return -1;
	secs = difftime(when, time(NULL));
	return secs > 0 ? secs : 0;
}

/* A call that lasts says so at most this often (llm_set_wait_notices). */
#define WAIT_NOTICE_MS 10000.0

/* Abort a transfer that received no byte for the stall timeout. curl's own
 * low-speed check averages over several seconds; this one is exact. */
static int on_progress(void *ctx, curl_off_t dltotal, curl_off_t dlnow, curl_off_t ultotal,
		       curl_off_t ulnow)
{
	struct http_reply *r = ctx;
	double now = time_mono_ms();
	(void)dltotal, (void)ultotal, (void)ulnow;
	if (now - r->last_byte_ms > r->stall_ms) {
		r->stalled = 1;
		return 1;
	}
	if (r->model && now - r->said_ms >= WAIT_NOTICE_MS) {
		r->said_ms = now;
		fprintf(stderr, "egg: LLM call to %s, %.0f s: waiting for the reply (%lld bytes so far)\n", r->model,
			(now - r->start_ms) / 1000, (long long)dlnow);
	}
	return 0;
}

/* The provider's credentials (and Anthropic's version) added to `headers`;
 * `*auth` is the line with the key, for the caller to wipe and free. */
static struct curl_slist *auth_headers(const struct llm *c, struct curl_slist *headers, char **auth)
{
	*auth = NULL;
	if (c->cfg->api_key)
		*auth = xasprintf(c->provider == LLM_OPENAI ? "Authorization: Bearer %s" : "x-api-key: %s", c->cfg->api_key);
	if (*auth)
		headers = curl_slist_append(headers, *auth);
	if (c->provider == LLM_ANTHROPIC)
		headers = curl_slist_append(headers, "anthropic-version: 2023-06-01");
	return headers;
}

static void wipe(char *secret)
{
	if (secret) {
		memset(secret, 0, strlen(secret));
		free(secret);
	}
}

/* An endpoint that refused the credentials (HTTP 401 or 403), said as what
 * the user must change: ERR_INPUT (exit 2), naming the key's variables. */
static void key_refused(const struct llm *c, long status, const char *server_said)
{
	const struct provider_info *prov = config_provider(c->cfg->provider);
	const char *var = prov ? prov->key_env : "the provider's key variable";
	if (!c->cfg->api_key)
		err_set(ERR_INPUT, "no API key was sent and '%s' refused the request (HTTP %ld: %s): set EGG_API_KEY or %s",
			c->url, status, server_said, var);
	else
		err_set(ERR_INPUT, "'%s' refused the API key (HTTP %ld: %s): set EGG_API_KEY or %s to a valid key with "
			"access to model '%s'", c->url, status, server_said, var, c->cfg->model);
}

/* One HTTP attempt. Returns the curl code; fills `r`. */
static CURLcode http_post(const struct llm *c, const char *body, double timeout_ms,
			  struct http_reply *r)
{
	CURL *h = curl_easy_init();
	struct curl_slist *headers = NULL;
	CURLcode rc;
	char *auth = NULL;

	if (!h)
		return CURLE_FAILED_INIT;
	headers = curl_slist_append(headers, "Content-Type: application/json");
	headers = auth_headers(c, headers, &auth);
	curl_easy_setopt(h, CURLOPT_URL, c->url);
	curl_easy_setopt(h, CURLOPT_HTTPHEADER, headers);
	curl_easy_setopt(h, CURLOPT_POSTFIELDS, body);
	curl_easy_setopt(h, CURLOPT_POSTFIELDSIZE, (long)strlen(body));
	curl_easy_setopt(h, CURLOPT_NOSIGNAL, 1L);
	curl_easy_setopt(h, CURLOPT_TIMEOUT_MS, (long)(timeout_ms > 1 ? timeout_ms : 1));
	curl_easy_setopt(h, CURLOPT_CONNECTTIMEOUT_MS, 30000L);
	r->last_byte_ms = r->start_ms = r->said_ms = time_mono_ms();
	r->stall_ms = c->cfg->stall_timeout_s * 1000;
	r->model = c->wait_notices ? c->cfg->model : NULL;
	curl_easy_setopt(h, CURLOPT_NOPROGRESS, 0L);
	curl_easy_setopt(h, CURLOPT_XFERINFOFUNCTION, on_progress);
	curl_easy_setopt(h, CURLOPT_XFERINFODATA, r);
	curl_easy_setopt(h, CURLOPT_WRITEFUNCTION, on_body);
	curl_easy_setopt(h, CURLOPT_WRITEDATA, r);
	curl_easy_setopt(h, CURLOPT_HEADERFUNCTION, on_header);
	curl_easy_setopt(h, CURLOPT_HEADERDATA, r);
	curl_easy_setopt(h, CURLOPT_USERAGENT, "egg/" EGG_VERSION);
	rc = curl_easy_perform(h);
	curl_easy_getinfo(h, CURLINFO_RESPONSE_CODE, &r->status);
	curl_slist_free_all(headers);
	wipe(auth);
	curl_easy_cleanup(h);
	return rc;
}

static int status_retryable(long s)
{
	return s == 408 || s == 409 || s == 429 || s >= 500;
}

static double backoff_ms(const struct config *cfg, int attempt, unsigned *seed)
{
	double base = (double)cfg->retry_base_ms * pow(2.0, attempt - 1);
	double cap = (double)cfg->retry_max_ms;
	double jitter = 0.5 + 0.5 * ((double)rand_r(seed) / RAND_MAX);
	return (base < cap ? base : cap) * jitter;
}

/* The spool instead of the network: a reply from DIR/replies, or the
 * request written to DIR/pending and ERR_WAITING. */
static int spooled_call(struct llm *c, const struct llm_request *req, long max_tokens, struct llm_result *res)
{
	const struct config *cfg = c->cfg;
	struct spool_reply r;
	size_t chars = strlen(req->user) + (req->system ? strlen(req->system) : 0);
	int got = spool_take(cfg->llm_spool, res->cache_key, chars, &r);
	if (got < 0)
		return -1;
	if (got == 1) {
		if (spool_post(cfg->llm_spool, res->cache_key, cfg, c->rules.temperature, req->system, req->user,
			       max_tokens, req->context) < 0)
			return -1;
		err_set(ERR_WAITING, "no reply yet for request %.12s (%s/pending/%s.json)", res->cache_key,
			cfg->llm_spool, res->cache_key);
		return -1;
	}
	res->content = r.content;
	res->finish_reason = r.finish_reason;
	res->model = r.model;
	res->prompt_tokens = r.prompt_tokens;
	res->completion_tokens = r.completion_tokens;
	res->truncated = !strcmp(res->finish_reason, "length");
	res->spooled = 1;
	res->max_tokens = max_tokens;
	res->usage_estimated = r.estimated;
	/* Whoever wrote the reply, it was not billed as cfg->model's: no price. */
	res->cost_usd = -1;
	memset(&r, 0, sizeof(r));
	if (c->use_cache)
		replycache_write(c->cfg->cache_dir, res->cache_key, res);
	spool_done(cfg->llm_spool, res->cache_key);
	return 0;
}

/* At most cfg->llm_concurrency requests in flight across the client's threads. */
static void enter_slot(struct llm *c)
{
	long limit = c->cfg->llm_concurrency > 0 ? c->cfg->llm_concurrency : 1;
	pthread_mutex_lock(&c->lock);
	while (c->in_flight >= limit)
		pthread_cond_wait(&c->slot_free, &c->lock);
	c->in_flight++;
	pthread_mutex_unlock(&c->lock);
}

static void leave_slot(struct llm *c)
{
	pthread_mutex_lock(&c->lock);
	c->in_flight--;
	pthread_cond_signal(&c->slot_free);
	pthread_mutex_unlock(&c->lock);
}

static int network_call(struct llm *c, const struct llm_request *req, long max_tokens, struct llm_result *res);
static struct wire wire_now(struct llm *c);
static void request_form(const struct llm *c, const struct llm_request *req, const struct wire *w, long max_tokens,
			 struct provider_request *pr);

int llm_call(struct llm *c, const struct llm_request *req, struct llm_result *res)
{
	const struct config *cfg = c->cfg;
	long max_tokens = req->max_tokens > 0 ? req->max_tokens : cfg->max_output_tokens;
	int rc;

	struct wire w = wire_now(c);
	struct provider_request pr;

	memset(res, 0, sizeof(*res));
	replycache_key(c->cfg, &c->rules, req, max_tokens, res->cache_key);
	res->max_tokens = max_tokens;
	/* The request's form now; a call sent after an adaptation says its own. */
	request_form(c, req, &w, max_tokens, &pr);
	res->sent_max_tokens = pr.max_tokens;
	res->thinking_budget = pr.thinking_budget;
	if (c->use_cache && replycache_read(c->cfg->cache_dir, res->cache_key, res) == 0) {
		/* A request parked again by a copied spool is answered: not pending.
		 * A spool run's replies are the spool's, read back or not. */
		if (cfg->llm_spool) {
			spool_done(cfg->llm_spool, res->cache_key);
			res->spooled = 1;
		}
		res->cached = 1;
		res->truncated = res->finish_reason && !strcmp(res->finish_reason, "length");
		res->cost_usd = 0;
		return 0;
	}
	if (cfg->llm_spool)
		return spooled_call(c, req, max_tokens, res);
	enter_slot(c);
	rc = network_call(c, req, max_tokens, res);
	leave_slot(c);
	return rc;
}

/* How long the up-front check waits for the endpoint's TCP (and TLS)
 * handshake: a server that is up answers in milliseconds. */
#define REACH_TIMEOUT_MS 10000L

/* The models list beside the endpoint (OpenAI's /v1/models, Anthropic's
 * /v1/models): a GET both APIs answer for free. NULL when the endpoint's
 * path is not the provider's. */
static char *models_url(const struct llm *c)
{
	const struct provider_info *prov = config_provider(c->cfg->provider);
	size_t n = strlen(c->url), p = prov ? strlen(prov->path) : 0;
	if (!prov || n < p || strcmp(c->url + n - p, prov->path))
		return NULL;
	return xasprintf("%.*s%s", (int)(n - p), c->url, c->provider == LLM_OPENAI ? "/models" : "/v1/models");
}

/*
 * Whether the endpoint takes the key, asked of the models list with the
 * credentials a request carries: no tokens, nothing paid. Only a 401 or 403
 * says no (ERR_INPUT, key_refused); any other answer, or none in time (a
 * server without the list), leaves it to the first request.
 */
static int check_key(const struct llm *c)
{
	char *url = models_url(c), *auth = NULL;
	struct http_reply r = { 0, BUF_INIT, -1, 0, 0, 0, 0, NULL, 0, 0 };
	struct curl_slist *headers;
	CURL *h;
	int rc = 0;
	if (!url || !(h = curl_easy_init())) {
		free(url);
		return 0;
	}
	buf_init(&r.body, 1 << 16);
	headers = auth_headers(c, NULL, &auth);
	curl_easy_setopt(h, CURLOPT_URL, url);
	curl_easy_setopt(h, CURLOPT_HTTPGET, 1L);
	curl_easy_setopt(h, CURLOPT_HTTPHEADER, headers);
	curl_easy_setopt(h, CURLOPT_NOSIGNAL, 1L);
	curl_easy_setopt(h, CURLOPT_TIMEOUT_MS, REACH_TIMEOUT_MS);
	curl_easy_setopt(h, CURLOPT_WRITEFUNCTION, on_body);
	curl_easy_setopt(h, CURLOPT_WRITEDATA, &r);
	curl_easy_setopt(h, CURLOPT_USERAGENT, "egg/" EGG_VERSION);
	if (curl_easy_perform(h) == CURLE_OK && curl_easy_getinfo(h, CURLINFO_RESPONSE_CODE, &r.status) == CURLE_OK &&
	    (r.status == 401 || r.status == 403)) {
		struct buf said = BUF_INIT;
		provider_error_message(r.body.data ? r.body.data : "", r.body.len, &said);
		key_refused(c, r.status, buf_str(&said));
		buf_release(&said);
		rc = -1;
	}
	curl_slist_free_all(headers);
	wipe(auth);
	curl_easy_cleanup(h);
	buf_release(&r.body);
	free(url);
	return rc;
}

/*
 * Before any work: the endpoint takes a connection (curl's CONNECT_ONLY:
 * TCP, TLS for https, the proxy's tunnel behind one), then the key
 * (check_key). No model is called, so nothing is paid.
 */
int llm_check_reachable(const struct llm *c)
{
	char why[CURL_ERROR_SIZE] = "";
	CURL *h = curl_easy_init();
	CURLcode rc;
	if (!h) {
		err_set(ERR_INFRA, "cannot initialise libcurl");
		return -1;
	}
	curl_easy_setopt(h, CURLOPT_URL, c->url);
	curl_easy_setopt(h, CURLOPT_CONNECT_ONLY, 1L);
	curl_easy_setopt(h, CURLOPT_NOSIGNAL, 1L);
	curl_easy_setopt(h, CURLOPT_CONNECTTIMEOUT_MS, REACH_TIMEOUT_MS);
	curl_easy_setopt(h, CURLOPT_ERRORBUFFER, why);
	rc = curl_easy_perform(h);
	curl_easy_cleanup(h);
	if (rc == CURLE_OK)
		return check_key(c);
	err_set(ERR_INFRA, "the LLM endpoint '%s' cannot be reached (%s): check --base-url and that its server runs, "
		"or use --llm-spool DIR to answer the model's requests yourself", c->cfg->base_url,
		why[0] ? why : curl_easy_strerror(rc));
	return -1;
}

void llm_set_quiet(struct llm *c, int quiet)
{
	c->quiet_retries = quiet;
}

void llm_set_wait_notices(struct llm *c, int on)
{
	c->wait_notices = on;
}

/* Retries say so once they are no longer a blip: a wait of RETRY_NOTICE_MS
 * or more, or a call silent that long already, gets one line on stderr. */
#define RETRY_NOTICE_MS 2000.0

static void retry_notice(const struct llm *c, int attempt, const struct buf *why, double wait_ms, double silent_ms)
{
	char *line;
	if (c->quiet_retries || (wait_ms < RETRY_NOTICE_MS && silent_ms < RETRY_NOTICE_MS))
		return;
	line = secret_redact(buf_str(why));
	fprintf(stderr, "egg: LLM call: attempt %d of %ld failed after %.1f s (%.200s); retrying in %.1f s\n", attempt,
		(long)c->cfg->max_attempts, silent_ms / 1000, line, wait_ms / 1000);
	free(line);
}

/* ---- the request's form, and its adaptation to a server's refusal ---- */

/* At most this many changes of one call's request on a server's word. */
#define MAX_ADAPTATIONS 4

static struct wire wire_now(struct llm *c)
{
	struct wire w;
	pthread_mutex_lock(&c->lock);
	w = c->wire;
	pthread_mutex_unlock(&c->lock);
	return w;
}

/* The least thinking budget Anthropic takes. */
#define MIN_THINKING_BUDGET 1024

/*
 * The request as it is sent: the wire's form, the output limit within the
 * most the server takes and, with extended thinking, the budget beside it.
 * Anthropic's max_tokens holds the thinking budget and the answer together:
 * egg asks for the budget on top of the answer's limit, within the model's
 * output limit, and shrinks the budget (never under the API's least) before
 * the answer's room. The one place these figures are made: every body is
 * built from it, and llm_plan reports what it gives.
 */
static void request_form(const struct llm *c, const struct llm_request *req, const struct wire *w, long max_tokens,
			 struct provider_request *pr)
{
	if (w->max_output > 0 && max_tokens > w->max_output)
		max_tokens = w->max_output;
	*pr = (struct provider_request){ c->cfg->model, req->system, req->user, max_tokens, w->token_field,
					 w->temperature, w->reasoning_effort, 0, w->cache_prefix, w->stream,
					 w->stream_usage };
	if (w->thinking_budget > 0) {
		long budget = w->thinking_budget, total = max_tokens + budget;
		if (w->max_output > 0 && total > w->max_output) {
			total = w->max_output;
			budget = total - max_tokens;
			if (budget < MIN_THINKING_BUDGET)
				budget = total > 2 * MIN_THINKING_BUDGET ? MIN_THINKING_BUDGET : 0;
		}
		if (budget > 0) {
			pr->thinking_budget = budget;
			pr->max_tokens = total;
		}
	}
}

/*
 * A 400 that names a parameter egg sent (`f`): change the client's wire so
 * that requests from now on leave it out or use the form the server takes.
 * Returns 1 when the request is worth sending again (changed now, or by
 * another thread since `sent` was taken), 0 when the refusal stands. Each
 * change is said once on stderr and added to `note`.
 */
static int adapt(struct llm *c, const struct wire *sent, long *max_tokens, const struct provider_refusal *f,
		 const struct buf *server_said, struct buf *note)
{
	struct wire *w = &c->wire;
	char change[160] = "";
	json_t *keep = json_object();	/* the change, for the store (kept.h) */
	int again = 0;

	pthread_mutex_lock(&c->lock);
	if (!strcmp(f->param, c->provider == LLM_OPENAI ? sent->token_field : "max_tokens")) {
		if (f->stated_max > 0 && f->stated_max < *max_tokens) {
			if (!w->max_output || f->stated_max < w->max_output) {
				w->max_output = f->stated_max;
				json_object_set_new(keep, "max_output", json_integer(f->stated_max));
				snprintf(change, sizeof(change), "output limit %ld -> %ld tokens (the most the server takes)",
					 *max_tokens, f->stated_max);
			}
			*max_tokens = f->stated_max;
			again = 1;
		} else if (f->unsupported && c->provider == LLM_OPENAI) {
			const char *other = !strcmp(sent->token_field, "max_tokens") ? "max_completion_tokens" : "max_tokens";
			if (strcmp(w->token_field, sent->token_field)) {
				again = 1;	/* another call switched it already */
			} else if (!w->switched_field) {
				w->token_field = other;
				w->switched_field = 1;
				json_object_set_new(keep, "token_field", json_string(other));
				snprintf(change, sizeof(change), "%s sent as %s", sent->token_field, other);
				again = 1;
			}
		}
	} else if (!strcmp(f->param, "temperature") && sent->temperature >= 0 && f->unsupported) {
		/* Only a model that takes no temperature (or only its default) is
		 * adapted to; a refused value (out of the server's range) is the
		 * user's setting, and the call fails saying so. */
		if (w->temperature >= 0)
			snprintf(change, sizeof(change), "temperature not sent (the server takes only its default)");
		json_object_set_new(keep, "temperature", json_false());
		w->temperature = -1;
		again = 1;
	} else if (!strcmp(f->param, "reasoning_effort") && sent->reasoning_effort) {
		if (w->reasoning_effort)
			snprintf(change, sizeof(change), "reasoning_effort not sent");
		json_object_set_new(keep, "reasoning_effort", json_false());
		w->reasoning_effort = NULL;
		again = 1;
	} else if (!strcmp(f->param, "thinking") && sent->thinking_budget && f->unsupported) {
		/* A model no rule names refused extended thinking: only its support
		 * is adapted to, never a refused budget. */
		if (w->thinking_budget)
			snprintf(change, sizeof(change), "extended thinking not asked for (the model has none)");
		json_object_set_new(keep, "thinking", json_false());
		w->thinking_budget = 0;
		again = 1;
	} else if (!strcmp(f->param, "cache_control") && sent->cache_prefix) {
		if (w->cache_prefix)
			snprintf(change, sizeof(change), "no prompt-cache mark (cache_control) sent");
		json_object_set_new(keep, "cache_control", json_false());
		w->cache_prefix = 0;
		again = 1;
	} else if (!strcmp(f->param, "stream_options") && sent->stream_usage) {
		if (w->stream_usage)
			snprintf(change, sizeof(change), "stream_options not sent (token counts estimated)");
		json_object_set_new(keep, "stream_options", json_false());
		w->stream_usage = 0;
		again = 1;
	} else if (!strcmp(f->param, "stream") && sent->stream) {
		if (w->stream)
			snprintf(change, sizeof(change), "replies not streamed");
		json_object_set_new(keep, "stream", json_false());
		w->stream = 0;
		again = 1;
	}
	pthread_mutex_unlock(&c->lock);
	/* Kept for the next runs, once per store rather than once per process. */
	if (change[0] && json_object_size(keep))
		kept_save(c->cfg->store, c->url, c->cfg->model, keep);
	json_decref(keep);
	if (change[0] && !c->quiet_retries) {
		/* Said once, on stderr; with --json or -q the result's "adapted" says it. */
		char *why = secret_redact(buf_str(server_said));
		fprintf(stderr, "egg: LLM: the server refused '%s' for model '%s' (%.200s); from now on: %s "
			"(kept in the store for the next runs; \"request_rules\" in the config file can say so from the "
			"start)\n", f->param, c->cfg->model, why, change);
		free(why);
	}
	if (change[0])
		buf_addf(note, "%s%s", note->len ? "; " : "", change);
	return again;
}

/* A streamed reply cut off in transit: keep the longest text that arrived
 * over the attempts, and say how much it was. */
static void keep_partial(const struct llm *c, const struct http_reply *r, struct buf *partial, struct buf *why)
{
	struct provider_reply pr;
	char ignored[256];
	size_t n;
	provider_parse_stream(c->provider, buf_str(&r->body), r->body.len, &pr, ignored, sizeof(ignored));
	n = pr.content ? strlen(pr.content) : 0;
	if (n) {
		buf_addf(why, " (%zu characters of the reply had arrived)", n);
		if (n > partial->len) {
			buf_reset(partial);
			buf_add(partial, pr.content, n);
		}
	}
	provider_reply_clear(&pr);
}

/* Cache tokens as llm_price takes them: the provider's own counts (a
 * reply without them claims none), from the model's least cacheable length
 * up. Under it the provider caches nothing: a server that reports a read or
 * a write there is not the provider's API (a proxy, a test server), and its
 * count is shown as reported but priced as plain input, with no saving. */
static long cacheable(const struct llm *c, long tokens)
{
	return tokens < c->rules.cache_min_tokens ? 0 : tokens;
}

/* A parsed reply into `res`; token counts estimated (4 characters a
 * token) when the server reported none. */
static void take_reply(const struct llm *c, const struct llm_request *req, struct provider_reply *pr,
		       struct llm_result *res)
{
	res->content = pr->content;
	res->finish_reason = pr->finish_reason;
	res->model = pr->model;
	res->prompt_tokens = pr->prompt_tokens;
	res->completion_tokens = pr->completion_tokens;
	res->cached_prompt_tokens = pr->cached_prompt_tokens;
	res->reasoning_tokens = pr->reasoning_tokens;
	res->cache_write_tokens = pr->cache_write_tokens;
	if (!pr->usage_seen) {
		res->usage_estimated = 1;
		res->prompt_tokens = (long)((strlen(req->user) + (req->system ? strlen(req->system) : 0)) / 4 + 1);
		res->completion_tokens = (long)(strlen(res->content) / 4 + 1);
	}
	memset(pr, 0, sizeof(*pr));
	res->truncated = res->finish_reason && !strcmp(res->finish_reason, "length");
	res->cost_usd = llm_price(c->cfg, c->cfg->model, &(struct llm_tokens){ res->prompt_tokens,
				  cacheable(c, res->cached_prompt_tokens), cacheable(c, res->cache_write_tokens),
				  res->completion_tokens }, &res->cache_saved_usd);
}

/* One call's state over its attempts (network_call). */
struct call {
	struct llm *c;
	const struct llm_request *req;
	struct llm_result *res;
	struct wire w;			/* the form the body was built in */
	long max_tokens;		/* the answer's output limit, within the most the server takes */
	long sent_max_tokens, thinking_budget;	/* the body's output limit and thinking budget */
	char *body;
	struct buf last_error, adapted, partial;
	int adaptations;
	double start, deadline, call_start;
	unsigned seed;
};

/* How one attempt ended. */
enum attempt_end { ATTEMPT_DONE, ATTEMPT_RETRY, ATTEMPT_FAIL, ATTEMPT_RESEND, ATTEMPT_KEY_REFUSED };

/* The body in the client's form now (after any adaptation). */
static void call_build(struct call *k)
{
	struct provider_request pr;
	k->w = wire_now(k->c);
	if (k->w.max_output > 0 && k->max_tokens > k->w.max_output)
		k->max_tokens = k->w.max_output;
	request_form(k->c, k->req, &k->w, k->max_tokens, &pr);
	k->sent_max_tokens = pr.max_tokens;
	k->thinking_budget = pr.thinking_budget;
	free(k->body);
	k->body = provider_request_body(k->c->provider, &pr);
}

/* No HTTP status to read: the transfer failed (curl's code), stalled,
 * timed out or overflowed. Worth retrying but for an overflow. */
static enum attempt_end transfer_failed(struct call *k, CURLcode cc, const struct http_reply *r, int by_deadline)
{
	const struct config *cfg = k->c->cfg;
	buf_reset(&k->last_error);
	if (r->stalled)
		buf_addf(&k->last_error, "stalled: no data for %.0f s", cfg->stall_timeout_s);
	else if (cc == CURLE_OPERATION_TIMEDOUT && by_deadline)
		buf_addf(&k->last_error, "no complete reply within the call's %.0f s deadline (--llm-deadline)",
			 cfg->deadline_s);
	else if (cc == CURLE_OPERATION_TIMEDOUT)
		buf_addf(&k->last_error, "no complete reply within the %.0f s request timeout", cfg->timeout_s);
	else if (r->body_overflow)
		buf_addf(&k->last_error, "reply larger than %u bytes", MAX_REPLY_BYTES);
	else
		buf_addf(&k->last_error, "%s", curl_easy_strerror(cc));
	if (k->w.stream && r->status >= 200 && r->status < 300 && r->body.len)
		keep_partial(k->c, r, &k->partial, &k->last_error);
	return r->body_overflow ? ATTEMPT_FAIL : ATTEMPT_RETRY;
}

/* A status other than 2xx: a 400 naming a parameter egg sent is adapted to
 * and the request sent again at once; 408, 409, 429 and 5xx are retried. */
static enum attempt_end status_failed(struct call *k, const struct http_reply *r)
{
	struct provider_refusal f;
	buf_reset(&k->last_error);
	buf_addf(&k->last_error, "HTTP %ld: ", r->status);
	provider_error_message(r->body.data ? r->body.data : "", r->body.len, &k->last_error);
	if (r->status == 400 && k->adaptations < MAX_ADAPTATIONS &&
	    provider_refusal(buf_str(&r->body), r->body.len, &f) &&
	    adapt(k->c, &k->w, &k->max_tokens, &f, &k->last_error, &k->adapted)) {
		k->adaptations++;
		return ATTEMPT_RESEND;
	}
	if (r->status == 401 || r->status == 403)
		return ATTEMPT_KEY_REFUSED;
	return status_retryable(r->status) ? ATTEMPT_RETRY : ATTEMPT_FAIL;
}

/* A 2xx body: the reply, taken into the result (and the reply cache), or
 * a body that is not one (retried; a stream's text that arrived is kept). */
static enum attempt_end reply_arrived(struct call *k, const struct http_reply *r)
{
	struct llm *c = k->c;
	struct provider_reply pr;
	char why[256];
	int parsed = k->w.stream ? provider_parse_stream(c->provider, buf_str(&r->body), r->body.len, &pr, why,
							  sizeof(why))
				 : provider_parse_reply(c->provider, buf_str(&r->body), r->body.len, &pr, why, sizeof(why));
	if (parsed == 0) {
		k->res->latency_ms = time_mono_ms() - k->call_start;	/* the whole call: every attempt and wait */
		take_reply(c, k->req, &pr, k->res);
		k->res->max_tokens = k->max_tokens;
		k->res->sent_max_tokens = k->sent_max_tokens;
		k->res->thinking_budget = k->thinking_budget;
		if (k->adapted.len)
			k->res->adapted = buf_detach(&k->adapted);
		if (c->use_cache)
			replycache_write(c->cfg->cache_dir, k->res->cache_key, k->res);
		return ATTEMPT_DONE;
	}
	buf_reset(&k->last_error);
	buf_addf(&k->last_error, "%s", why);
	if (parsed == 1 && strlen(pr.content) > k->partial.len) {
		buf_reset(&k->partial);
		buf_adds(&k->partial, pr.content);
	}
	provider_reply_clear(&pr);
	return ATTEMPT_RETRY;
}

/* One HTTP attempt within what is left of the call's deadline. */
static enum attempt_end attempt(struct call *k, struct http_reply *r)
{
	const struct config *cfg = k->c->cfg;
	double left = k->deadline - time_mono_ms();
	/* The attempt waits for the request timeout or what is left of the
	 * call's deadline, whichever ends first: the error names that one. */
	int by_deadline = left < cfg->timeout_s * 1000;
	CURLcode cc;
	k->res->attempts++;
	cc = http_post(k->c, k->body, by_deadline ? left : cfg->timeout_s * 1000, r);
	if (cc != CURLE_OK)
		return transfer_failed(k, cc, r, by_deadline);
	if (r->status < 200 || r->status >= 300)
		return status_failed(k, r);
	return reply_arrived(k, r);
}

/* A failed call keeps what the caller records: attempts, key, adaptations
 * and a reply cut off in transit. */
static void call_failed(struct call *k)
{
	struct llm_result *res = k->res;
	int attempts = res->attempts;
	char key[65];
	memcpy(key, res->cache_key, sizeof(key));
	llm_result_clear(res);
	res->attempts = attempts;
	res->max_tokens = k->max_tokens;
	res->sent_max_tokens = k->sent_max_tokens;
	res->thinking_budget = k->thinking_budget;
	memcpy(res->cache_key, key, sizeof(key));
	if (k->adapted.len)
		res->adapted = buf_detach(&k->adapted);
	if (k->partial.len)
		res->partial = buf_detach(&k->partial);
}

/* The first request of a client whose kept adaptations leave out part of
 * what the rules ask says so, in one line on stderr (none when quiet) and
 * in that call's record: every run that drops a parameter says which. */
static void say_dropped(struct call *k)
{
	struct llm *c = k->c;
	int say;
	if (!c->dropped[0])
		return;
	pthread_mutex_lock(&c->lock);
	say = !c->dropped_said;
	c->dropped_said = 1;
	pthread_mutex_unlock(&c->lock);
	if (!say)
		return;
	if (!c->quiet_retries)
		fprintf(stderr, "egg: LLM: not sent to model '%s': %s (a server refused it in an earlier run; kept in "
			"%s/llm-adapted.json: remove its entry to send it again)\n", c->cfg->model, c->dropped,
			c->cfg->store);
	buf_addf(&k->adapted, "not sent (refused in an earlier run): %s", c->dropped);
}

/* The request over HTTP with retries (llm_call's contract). */
static int network_call(struct llm *c, const struct llm_request *req, long max_tokens, struct llm_result *res)
{
	const struct config *cfg = c->cfg;
	struct call k = { .c = c, .req = req, .res = res, .max_tokens = max_tokens, .last_error = BUF_INIT,
			  .adapted = BUF_INIT, .partial = BUF_INIT };
	int rc = -1;

	k.start = time_mono_ms();
	k.deadline = k.start + cfg->deadline_s * 1000;
	k.seed = (unsigned)(k.start * 1000) ^ (unsigned)(size_t)pthread_self();
	say_dropped(&k);
	call_build(&k);
	k.call_start = time_mono_ms();
	for (int n = 1; n <= cfg->max_attempts; n++) {
		struct http_reply r = { 0, BUF_INIT, -1, 0, 0, 0, 0, NULL, 0, 0 };
		enum attempt_end end;
		double wait;

		if (time_mono_ms() >= k.deadline)
			break;
		buf_init(&r.body, MAX_REPLY_BYTES);
		end = attempt(&k, &r);
		buf_release(&r.body);
		if (end == ATTEMPT_DONE) {
			rc = 0;
			goto out;
		}
		if (end == ATTEMPT_RESEND) {
			/* Sent again at once, in the form the server takes. */
			n--;
			call_build(&k);
			continue;
		}
		if (end == ATTEMPT_KEY_REFUSED) {
			/* last_error is "HTTP N: MESSAGE": the message is the server's. */
			const char *said = strstr(buf_str(&k.last_error), ": ");
			key_refused(c, r.status, said ? said + 2 : buf_str(&k.last_error));
			goto out;
		}
		if (end == ATTEMPT_FAIL) {
			err_set(ERR_INFRA, "llm request to '%s' failed: %s", c->url, buf_str(&k.last_error));
			goto out;
		}
		if (n == cfg->max_attempts)
			break;
		wait = r.retry_after_s >= 0 ? r.retry_after_s * 1000 : backoff_ms(cfg, n, &k.seed);
		if (time_mono_ms() + wait >= k.deadline) {
			err_set(ERR_INFRA, "llm request to '%s' failed: %s (next retry in %.1f s would pass the %.0f s deadline)",
				c->url, buf_str(&k.last_error), wait / 1000, cfg->deadline_s);
			goto out;
		}
		retry_notice(c, n, &k.last_error, wait, time_mono_ms() - k.start);
		time_sleep_ms(wait);
	}
	err_set(ERR_INFRA, "llm request to '%s' failed after %d attempts: %s", c->url, res->attempts,
		k.last_error.len ? buf_str(&k.last_error) : "deadline passed");
out:
	if (rc < 0)
		call_failed(&k);
	free(k.body);
	buf_release(&k.last_error);
	buf_release(&k.adapted);
	buf_release(&k.partial);
	return rc;
}

void llm_plan(const struct config *cfg, struct llm_plan *out)
{
	struct llm c = { 0 };
	struct llm_request req = { 0 };
	struct provider_request pr;

	client_init(&c, cfg, 0);
	request_form(&c, &req, &c.wire, cfg->max_output_tokens, &pr);
	memset(out, 0, sizeof(*out));
	out->rules = c.rules;
	out->token_field = pr.token_field;
	out->max_tokens = pr.max_tokens;
	out->temperature = pr.temperature;
	out->reasoning_effort = pr.reasoning_effort;
	out->thinking_budget = pr.thinking_budget;
	out->stream = pr.stream;
	out->cache_prefix = pr.cache_prefix;
	snprintf(out->dropped, sizeof(out->dropped), "%s", c.dropped);
	free(c.url);
}
