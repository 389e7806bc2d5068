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
#include "replycache.h"
#include "spool.h"

#define MAX_REPLY_BYTES (32u << 20)

struct llm {
	const struct config *cfg;
	enum llm_provider provider;
	char *url;
	int use_cache;
	pthread_mutex_t lock;
	pthread_cond_t slot_free;	/* the concurrency cap (cfg->llm_concurrency) */
	int in_flight;
	int quiet_retries;		/* no retry notices on stderr (llm_set_quiet) */
};

static pthread_once_t curl_once = PTHREAD_ONCE_INIT;
static int curl_ok;

static void curl_init_once(void)
{
	curl_ok = curl_global_init(CURL_GLOBAL_DEFAULT) == CURLE_OK;
}

/* The URL's host (IPv6 without brackets), or NULL when it does not parse. */
static char *url_host(const char *url)
{
	CURLU *u = curl_url();
	char *host = NULL, *out = NULL;
	if (u && curl_url_set(u, CURLUPART_URL, url, 0) == CURLUE_OK &&
	    curl_url_get(u, CURLUPART_HOST, &host, 0) == CURLUE_OK && host && *host) {
		size_t n = strlen(host);
		out = host[0] == '[' && host[n - 1] == ']' ? xasprintf("%.*s", (int)n - 2, host + 1) : xstrdup(host);
	}
	curl_free(host);
	curl_url_cleanup(u);
	return out;
}

static int host_is_local(const char *host)
{
	return !strcmp(host, "localhost") || !strncmp(host, "127.", 4) || !strcmp(host, "::1");
}

int llm_url_is_local(const char *url)
{
	char *host = url_host(url);
	int local = host && host_is_local(host);
	free(host);
	return local;
}

/*
 * Before any work is done: a remote endpoint needs a key, and its host must
 * resolve (a name that does not is not worth six attempts). Behind a proxy
 * the proxy resolves names, so the lookup is left to it.
 */
static int check_endpoint(const struct config *cfg)
{
	char *host = url_host(cfg->base_url);
	struct addrinfo hints = { .ai_socktype = SOCK_STREAM }, *ai = NULL;
	const char *proxy = getenv("https_proxy") ?: getenv("HTTPS_PROXY") ?: getenv("http_proxy") ?:
			    getenv("HTTP_PROXY") ?: getenv("all_proxy") ?: getenv("ALL_PROXY");
	int rc = 0;
	if (!host) {
		err_set(ERR_INPUT, "base URL '%s' is not a URL (set --base-url, EGG_BASE_URL or \"base_url\")",
			cfg->base_url);
		return -1;
	}
	if (!cfg->api_key && !host_is_local(host)) {
		err_set(ERR_INPUT, "no API key for %s: set EGG_API_KEY%s (a server on localhost needs none)", host,
			!strcmp(cfg->provider, "anthropic") ? " or ANTHROPIC_API_KEY" : " or OPENAI_API_KEY");
		rc = -1;
	} else if (!(proxy && *proxy) && (rc = getaddrinfo(host, NULL, &hints, &ai)) != 0) {
		err_set(ERR_INFRA, "cannot resolve %s, the host of the base URL %s (%s): check --base-url and the "
			"network", host, cfg->base_url, gai_strerror(rc));
		rc = -1;
	}
	if (ai)
		freeaddrinfo(ai);
	free(host);
	return rc;
}

struct llm *llm_new(const struct config *cfg, int use_cache)
{
	struct llm *c;
	size_t n;

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
	if (!cfg->llm_spool && check_endpoint(cfg) < 0)
		return NULL;
	c = xcalloc(1, sizeof(*c));
	c->cfg = cfg;
	c->provider = !strcmp(cfg->provider, "anthropic") ? LLM_ANTHROPIC : LLM_OPENAI;
	n = strlen(cfg->base_url);
	while (n && cfg->base_url[n - 1] == '/')
		n--;
	c->url = xasprintf("%.*s%s", (int)n, cfg->base_url,
			   c->provider == LLM_OPENAI ? "/chat/completions" : "/v1/messages");
	c->use_cache = use_cache;
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
	memset(res, 0, sizeof(*res));
}

/* ---- prices ---- */

/* ---- HTTP ---- */

struct http_reply {
	long status;
	struct buf body;
	double retry_after_s;	/* -1 when absent */
	int body_overflow;
	double last_byte_ms;	/* monotonic time of the last byte received */
	double stall_ms;
	int stalled;
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

/* Abort a transfer that received no byte for the stall timeout. curl's own
 * low-speed check averages over several seconds; this one is exact. */
static int on_progress(void *ctx, curl_off_t dltotal, curl_off_t dlnow, curl_off_t ultotal,
		       curl_off_t ulnow)
{
	struct http_reply *r = ctx;
	(void)dltotal, (void)dlnow, (void)ultotal, (void)ulnow;
	if (time_mono_ms() - r->last_byte_ms > r->stall_ms) {
		r->stalled = 1;
		return 1;
	}
	return 0;
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
	if (c->provider == LLM_OPENAI) {
		if (c->cfg->api_key) {
			auth = xasprintf("Authorization: Bearer %s", c->cfg->api_key);
			headers = curl_slist_append(headers, auth);
		}
	} else {
		if (c->cfg->api_key) {
			auth = xasprintf("x-api-key: %s", c->cfg->api_key);
			headers = curl_slist_append(headers, auth);
		}
		headers = curl_slist_append(headers, "anthropic-version: 2023-06-01");
	}
	curl_easy_setopt(h, CURLOPT_URL, c->url);
	curl_easy_setopt(h, CURLOPT_HTTPHEADER, headers);
	curl_easy_setopt(h, CURLOPT_POSTFIELDS, body);
	curl_easy_setopt(h, CURLOPT_POSTFIELDSIZE, (long)strlen(body));
	curl_easy_setopt(h, CURLOPT_NOSIGNAL, 1L);
	curl_easy_setopt(h, CURLOPT_TIMEOUT_MS, (long)(timeout_ms > 1 ? timeout_ms : 1));
	curl_easy_setopt(h, CURLOPT_CONNECTTIMEOUT_MS, 30000L);
	r->last_byte_ms = time_mono_ms();
	r->stall_ms = c->cfg->stall_timeout_s * 1000;
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
	if (auth) {
		memset(auth, 0, strlen(auth));
		free(auth);
	}
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
		if (spool_post(cfg->llm_spool, res->cache_key, cfg, req->system, req->user, max_tokens, req->context) < 0)
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
	res->cost_usd = llm_price(cfg, cfg->model, res->prompt_tokens, res->completion_tokens);
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

int llm_call(struct llm *c, const struct llm_request *req, struct llm_result *res)
{
	const struct config *cfg = c->cfg;
	long max_tokens = req->max_tokens > 0 ? req->max_tokens : cfg->max_output_tokens;
	int rc;

	memset(res, 0, sizeof(*res));
	replycache_key(c->cfg, req, max_tokens, res->cache_key);
	if (c->use_cache && replycache_read(c->cfg->cache_dir, res->cache_key, res) == 0) {
		/* A request parked again by a copied spool is answered: not pending. */
		if (cfg->llm_spool)
			spool_done(cfg->llm_spool, res->cache_key);
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

void llm_set_quiet(struct llm *c, int quiet)
{
	c->quiet_retries = quiet;
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

/* The request over HTTP with retries (llm_call's contract). */
static int network_call(struct llm *c, const struct llm_request *req, long max_tokens, struct llm_result *res)
{
	const struct config *cfg = c->cfg;
	double start = time_mono_ms(), deadline = start + cfg->deadline_s * 1000;
	unsigned seed = (unsigned)(start * 1000) ^ (unsigned)(size_t)pthread_self();
	char *body = NULL;
	struct buf last_error = BUF_INIT;
	int rc = -1;

	body = provider_request_body(c->provider, cfg->model, req->system, req->user,
				     cfg->temperature, max_tokens, cfg->token_field);
	for (int attempt = 1; attempt <= cfg->max_attempts; attempt++) {
		struct http_reply r = { 0, BUF_INIT, -1, 0, 0, 0, 0 };
		double now = time_mono_ms(), t0, wait;
		CURLcode cc;
		int retry = 0;

		buf_init(&r.body, MAX_REPLY_BYTES);
		if (now >= deadline) {
			buf_release(&r.body);
			break;
		}
		res->attempts = attempt;
		t0 = now;
		cc = http_post(c, body, fmin(cfg->timeout_s * 1000, deadline - now), &r);
		if (cc != CURLE_OK) {
			buf_reset(&last_error);
			if (r.stalled)
				buf_addf(&last_error, "stalled: no data for %.0f s", cfg->stall_timeout_s);
			else if (cc == CURLE_OPERATION_TIMEDOUT)
				buf_addf(&last_error, "no complete reply within the %.0f s request timeout",
					 cfg->timeout_s);
			else if (r.body_overflow)
				buf_addf(&last_error, "reply larger than %u bytes", MAX_REPLY_BYTES);
			else
				buf_addf(&last_error, "%s", curl_easy_strerror(cc));
			retry = !r.body_overflow;
		} else if (r.status < 200 || r.status >= 300) {
			buf_reset(&last_error);
			buf_addf(&last_error, "HTTP %ld: ", r.status);
			provider_error_message(r.body.data ? r.body.data : "", r.body.len, &last_error);
			retry = status_retryable(r.status);
		} else {
			struct provider_reply pr;
			char why[256];
			if (provider_parse_reply(c->provider, buf_str(&r.body), r.body.len, &pr, why,
						 sizeof(why)) == 0) {
				res->latency_ms = time_mono_ms() - t0;
				res->content = pr.content;
				res->finish_reason = pr.finish_reason;
				res->model = pr.model;
				res->prompt_tokens = pr.prompt_tokens;
				res->completion_tokens = pr.completion_tokens;
				res->truncated = res->finish_reason && !strcmp(res->finish_reason, "length");
				res->cost_usd = llm_price(cfg, cfg->model, res->prompt_tokens,
							  res->completion_tokens);
				if (c->use_cache)
					replycache_write(c->cfg->cache_dir, res->cache_key, res);
							buf_release(&r.body);
				rc = 0;
				goto out;
			}
			buf_reset(&last_error);
			buf_addf(&last_error, "%s", why);
			retry = 1;
		}
		buf_release(&r.body);
		if (!retry) {
			err_set(ERR_INFRA, "llm request to '%s' failed: %s", c->url, buf_str(&last_error));
			goto out;
		}
		if (attempt == cfg->max_attempts)
			break;
		wait = r.retry_after_s >= 0 ? r.retry_after_s * 1000 : backoff_ms(cfg, attempt, &seed);
		if (time_mono_ms() + wait >= deadline) {
			err_set(ERR_INFRA, "llm request to '%s' failed: %s (next retry in %.1f s would pass the %.0f s deadline)",
				c->url, buf_str(&last_error), wait / 1000, cfg->deadline_s);
			goto out;
		}
		retry_notice(c, attempt, &last_error, wait, time_mono_ms() - start);
		time_sleep_ms(wait);
	}
	err_set(ERR_INFRA, "llm request to '%s' failed after %d attempts: %s", c->url, res->attempts,
		last_error.len ? buf_str(&last_error) : "deadline passed");
out:
	if (rc < 0) {
		int attempts = res->attempts;
		char key[65];
		memcpy(key, res->cache_key, sizeof(key));
		llm_result_clear(res);
		res->attempts = attempts;
		memcpy(res->cache_key, key, sizeof(key));
	}
	free(body);
	buf_release(&last_error);
	return rc;
}
