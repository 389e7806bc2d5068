/* provider.c: OpenAI chat-completions and Anthropic messages: request bodies, replies whole or streamed, refusals. */
#include "provider.h"

#include <ctype.h>
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../util/buf.h"

/* The largest reply text kept from a stream (as for a whole body). */
#define MAX_STREAM_TEXT (32u << 20)

char *provider_request_body(enum llm_provider p, const struct provider_request *r)
{
	json_t *root = json_object(), *messages = json_array();
	char *text;

	json_object_set_new(root, "model", json_string(r->model));
	if (p == LLM_OPENAI) {
		if (r->system && *r->system)
			json_array_append_new(messages, json_pack("{s:s, s:s}", "role", "system",
								  "content", r->system));
		json_array_append_new(messages, json_pack("{s:s, s:s}", "role", "user", "content", r->user));
		json_object_set_new(root, r->token_field ? r->token_field : "max_tokens", json_integer(r->max_tokens));
		if (r->reasoning_effort)
			json_object_set_new(root, "reasoning_effort", json_string(r->reasoning_effort));
	} else {
		/* The system text is what stays the same over a task's calls: marked,
		 * Anthropic caches the request up to its end (a prefix shorter than
		 * the model's least cacheable length is simply not cached). */
		if (r->system && *r->system && r->cache_prefix)
			json_object_set_new(root, "system", json_pack("[{s:s, s:s, s:{s:s}}]", "type", "text", "text",
								      r->system, "cache_control", "type", "ephemeral"));
		else if (r->system && *r->system)
			json_object_set_new(root, "system", json_string(r->system));
		json_array_append_new(messages, json_pack("{s:s, s:s}", "role", "user", "content", r->user));
		/* Required by the Messages API; with thinking it holds the budget too. */
		json_object_set_new(root, "max_tokens", json_integer(r->max_tokens));
		if (r->thinking_budget > 0)
			json_object_set_new(root, "thinking", json_pack("{s:s, s:I}", "type", "enabled", "budget_tokens",
									(json_int_t)r->thinking_budget));
	}
	json_object_set_new(root, "messages", messages);
	if (r->temperature >= 0)
		json_object_set_new(root, "temperature", json_real(r->temperature));
	if (r->stream) {
		json_object_set_new(root, "stream", json_true());
		if (p == LLM_OPENAI && r->stream_usage)
			json_object_set_new(root, "stream_options", json_pack("{s:b}", "include_usage", 1));
	}
	text = json_dumps(root, JSON_COMPACT);
	json_decref(root);
	return text;
}

/* A copy of a reply's text, which may be megabytes: malloc, not xmalloc
 * (meant for small bounded sizes); NULL when out of memory. */
static char *dup_string(json_t *v)
{
	const char *s = json_string_value(v);
	size_t n;
	char *out;
	if (!s)
		return NULL;
	n = json_string_length(v);
	out = malloc(n + 1);
	if (!out)
		return NULL;
	memcpy(out, s, n);
	out[n] = '\0';
	return out;
}

static long get_count(json_t *obj, const char *key)
{
	json_t *v = json_object_get(obj, key);
	return json_is_integer(v) ? (long)json_integer_value(v) : 0;
}

/* OpenAI's usage: prompt_tokens includes the cached ones, completion_tokens
 * the reasoning ones. DeepSeek names its cache hits prompt_cache_hit_tokens. */
static void read_openai_usage(json_t *usage, struct provider_reply *out)
{
	if (!json_is_object(usage))
		return;
	out->usage_seen = 1;
	out->prompt_tokens = get_count(usage, "prompt_tokens");
	out->completion_tokens = get_count(usage, "completion_tokens");
	out->cached_prompt_tokens = get_count(json_object_get(usage, "prompt_tokens_details"), "cached_tokens");
	if (!out->cached_prompt_tokens)
		out->cached_prompt_tokens = get_count(usage, "prompt_cache_hit_tokens");
	out->reasoning_tokens = get_count(json_object_get(usage, "completion_tokens_details"), "reasoning_tokens");
}

/* Anthropic's usage: input_tokens excludes what was read from or written to
 * the prompt cache, so the three are added up. A streamed reply reports the
 * input at message_start and the output at message_delta: fields a part
 * leaves out keep their earlier values. */
static void read_anthropic_usage(json_t *usage, struct provider_reply *out)
{
	json_t *in = json_object_get(usage, "input_tokens");
	if (!json_is_object(usage))
		return;
	out->usage_seen = 1;
	if (json_is_integer(in) || json_object_get(usage, "cache_read_input_tokens")) {
		out->cached_prompt_tokens = get_count(usage, "cache_read_input_tokens");
		out->cache_write_tokens = get_count(usage, "cache_creation_input_tokens");
		out->prompt_tokens = get_count(usage, "input_tokens") + out->cached_prompt_tokens + out->cache_write_tokens;
	}
	if (json_is_integer(json_object_get(usage, "output_tokens")))
		out->completion_tokens = get_count(usage, "output_tokens");
}

static char *anthropic_stop(const char *s)
{
	if (!strcmp(s, "max_tokens"))
		return xstrdup("length");
	if (!strcmp(s, "end_turn") || !strcmp(s, "stop_sequence"))
		return xstrdup("stop");
	return xstrdup(s);
}

static int parse_openai(json_t *root, struct provider_reply *out, char *why, size_t n)
{
	json_t *choices = json_object_get(root, "choices"), *choice, *message, *content;

	if (!json_is_array(choices) || json_array_size(choices) == 0) {
		snprintf(why, n, "reply has no choices");
		return -1;
	}
	choice = json_array_get(choices, 0);
	message = json_object_get(choice, "message");
	if (!json_is_object(message)) {
		snprintf(why, n, "reply choice has no message");
		return -1;
	}
	content = json_object_get(message, "content");
	if (json_is_string(content))
		out->content = dup_string(content);
	else if (json_is_null(content) || !content)
		out->content = xstrdup("");
	else {
		snprintf(why, n, "reply message content is not text");
		return -1;
	}
	out->finish_reason = dup_string(json_object_get(choice, "finish_reason"));
	read_openai_usage(json_object_get(root, "usage"), out);
	return 0;
}

static int parse_anthropic(json_t *root, struct provider_reply *out, char *why, size_t n)
{
	json_t *content = json_object_get(root, "content"), *block, *stop;
	size_t i;
	char *text = NULL;
	size_t len = 0;

	if (!json_is_array(content)) {
		snprintf(why, n, "reply has no content");
		return -1;
	}
	json_array_foreach(content, i, block) {
		json_t *t = json_object_get(block, "text");
		const char *type = json_string_value(json_object_get(block, "type"));
		if (type && !strcmp(type, "text") && json_is_string(t)) {
			size_t add = json_string_length(t);
			char *p = realloc(text, len + add + 1);
			if (!p) {
				free(text);
				snprintf(why, n, "out of memory");
				return -1;
			}
			text = p;
			memcpy(text + len, json_string_value(t), add);
			len += add;
			text[len] = '\0';
		}
	}
	out->content = text ? text : xstrdup("");
	stop = json_object_get(root, "stop_reason");
	if (json_is_string(stop))
		out->finish_reason = anthropic_stop(json_string_value(stop));
	read_anthropic_usage(json_object_get(root, "usage"), out);
	return 0;
}

int provider_parse_reply(enum llm_provider p, const char *body, size_t len,
			 struct provider_reply *out, char *why, size_t why_len)
{
	json_error_t jerr;
	json_t *root;
	int rc;

	memset(out, 0, sizeof(*out));
	root = json_loadb(body, len, 0, &jerr);
	if (!root) {
		snprintf(why, why_len, "reply is not valid JSON (%s)", jerr.text);
		return -1;
	}
	if (!json_is_object(root)) {
		snprintf(why, why_len, "reply is JSON but not an object");
		json_decref(root);
		return -1;
	}
	rc = p == LLM_OPENAI ? parse_openai(root, out, why, why_len)
			     : parse_anthropic(root, out, why, why_len);
	if (rc == 0) {
		out->model = dup_string(json_object_get(root, "model"));
		if (!out->content) {
			snprintf(why, why_len, "out of memory");
			rc = -1;
		}
	}
	if (rc < 0)
		provider_reply_clear(out);
	json_decref(root);
	return rc;
}

void provider_error_message(const char *body, size_t len, struct buf *out)
{
	json_error_t jerr;
	json_t *root = json_loadb(body, len, 0, &jerr);
	const char *msg = NULL;

	if (root) {
		json_t *e = json_object_get(root, "error");
		msg = json_string_value(json_object_get(e, "message"));
		if (!msg)
			msg = json_string_value(e);
		if (!msg)
			msg = json_string_value(json_object_get(root, "message"));
	}
	if (msg) {
		buf_add(out, msg, strnlen(msg, 300));
	} else {
		/* Not JSON (an HTML page, say): the first line, printable bytes only. */
		size_t i = 0, taken = 0;
		while (i < len && (body[i] == ' ' || body[i] == '\n' || body[i] == '\r' || body[i] == '\t'))
			i++;
		for (; i < len && taken < 200 && body[i] != '\n'; i++, taken++)
			buf_addc(out, (unsigned char)body[i] >= 32 && (unsigned char)body[i] < 127 ? body[i] : '?');
		if (!taken)
			buf_adds(out, "(empty body)");
	}
	json_decref(root);
}

/* ---- streamed replies ---- */

struct stream_state {
	enum llm_provider p;
	struct provider_reply *out;
	struct buf text;	/* the reply's text so far (capped) */
	int done;		/* the stream's end marker arrived */
	int events;		/* events parsed */
	int choices_seen;	/* openai: a chunk with a choice */
	int overflow;
	int bad_event;		/* a complete event that is not JSON */
	char error[300];	/* an error event's message */
};

static void stream_append(struct stream_state *st, json_t *s)
{
	if (json_is_string(s) && buf_add(&st->text, json_string_value(s), json_string_length(s)) < 0)
		st->overflow = 1;
}

static void stream_error(struct stream_state *st, json_t *err)
{
	const char *m = json_string_value(json_object_get(err, "message"));
	snprintf(st->error, sizeof(st->error), "%.280s", m ? m : json_is_string(err) ? json_string_value(err) : "error event");
}

static void set_string(char **dst, char *value)
{
	free(*dst);
	*dst = value;
}

static void openai_event(struct stream_state *st, json_t *ev)
{
	json_t *choice = json_array_get(json_object_get(ev, "choices"), 0), *fr, *usage;
	if (json_object_get(ev, "error")) {
		stream_error(st, json_object_get(ev, "error"));
		return;
	}
	if (!st->out->model && json_is_string(json_object_get(ev, "model")))
		st->out->model = dup_string(json_object_get(ev, "model"));
	if (choice) {
		st->choices_seen = 1;
		stream_append(st, json_object_get(json_object_get(choice, "delta"), "content"));
		fr = json_object_get(choice, "finish_reason");
		if (json_is_string(fr))
			set_string(&st->out->finish_reason, dup_string(fr));
	}
	usage = json_object_get(ev, "usage");
	if (json_is_object(usage))
		read_openai_usage(usage, st->out);
}

static void anthropic_event(struct stream_state *st, json_t *ev)
{
	const char *type = json_string_value(json_object_get(ev, "type"));
	json_t *v;
	if (!type)
		return;
	if (!strcmp(type, "message_start")) {
		json_t *msg = json_object_get(ev, "message");
		if (!st->out->model && json_is_string(json_object_get(msg, "model")))
			st->out->model = dup_string(json_object_get(msg, "model"));
		read_anthropic_usage(json_object_get(msg, "usage"), st->out);
	} else if (!strcmp(type, "content_block_start")) {
		v = json_object_get(ev, "content_block");
		if (!strcmp(json_string_value(json_object_get(v, "type")) ?: "", "text"))
			stream_append(st, json_object_get(v, "text"));
	} else if (!strcmp(type, "content_block_delta")) {
		v = json_object_get(ev, "delta");
		if (!strcmp(json_string_value(json_object_get(v, "type")) ?: "", "text_delta"))
			stream_append(st, json_object_get(v, "text"));
	} else if (!strcmp(type, "message_delta")) {
		v = json_object_get(json_object_get(ev, "delta"), "stop_reason");
		if (json_is_string(v))
			set_string(&st->out->finish_reason, anthropic_stop(json_string_value(v)));
		read_anthropic_usage(json_object_get(ev, "usage"), st->out);
	} else if (!strcmp(type, "message_stop")) {
		st->done = 1;
	} else if (!strcmp(type, "error")) {
		stream_error(st, json_object_get(ev, "error"));
	}
}

/* One event's data (its data lines joined). `final`: the body ended inside
 * it, so a part that does not parse is a cut, not a malformed event. */
static void stream_dispatch(struct stream_state *st, const char *data, size_t len, int final)
{
	json_t *ev;
	if (!len)
		return;
	if (st->p == LLM_OPENAI && len == 6 && !memcmp(data, "[DONE]", 6)) {
		st->done = 1;
		return;
	}
	ev = json_loadb(data, len, 0, NULL);
	if (!ev) {
		if (!final)
			st->bad_event = 1;
		return;
	}
	st->events++;
	if (st->p == LLM_OPENAI)
		openai_event(st, ev);
	else
		anthropic_event(st, ev);
	json_decref(ev);
}

int provider_parse_stream(enum llm_provider p, const char *body, size_t len,
			  struct provider_reply *out, char *why, size_t why_len)
{
	struct stream_state st = { .p = p, .out = out };
	struct buf data = BUF_INIT;
	size_t i = 0, lead = 0;
	int rc, complete;

	memset(out, 0, sizeof(*out));
	while (lead < len && isspace((unsigned char)body[lead]))
		lead++;
	if (lead < len && body[lead] == '{')	/* a server that did not stream */
		return provider_parse_reply(p, body, len, out, why, why_len);
	buf_init(&st.text, MAX_STREAM_TEXT);
	buf_init(&data, MAX_STREAM_TEXT);
	while (i < len) {
		const char *line = body + i, *nl = memchr(line, '\n', len - i);
		size_t n = nl ? (size_t)(nl - line) : len - i;
		i += n + (nl != NULL);
		if (n && line[n - 1] == '\r')
			n--;
		if (!n) {	/* a blank line ends an event */
			stream_dispatch(&st, data.data, data.len, 0);
			buf_reset(&data);
		} else if (n >= 5 && !memcmp(line, "data:", 5)) {
			size_t skip = n > 5 && line[5] == ' ' ? 6 : 5;
			if ((data.len && buf_addc(&data, '\n') < 0) || buf_add(&data, line + skip, n - skip) < 0)
				st.overflow = 1;
		}	/* event:, id:, retry: and comments carry nothing egg needs */
		if (st.error[0] || st.overflow)
			break;
	}
	stream_dispatch(&st, data.data, data.len, 1);
	buf_release(&data);
	out->content = st.text.data ? buf_detach(&st.text) : xstrdup("");
	complete = st.done || out->finish_reason;
	if (st.error[0]) {
		snprintf(why, why_len, "error in the stream: %s", st.error);
		rc = -1;
	} else if (st.overflow) {
		snprintf(why, why_len, "reply larger than %u bytes", MAX_STREAM_TEXT);
		rc = -1;
	} else if (st.bad_event) {
		snprintf(why, why_len, "stream event is not valid JSON");
		rc = -1;
	} else if (!st.events && !st.done) {
		snprintf(why, why_len, len ? "reply is neither JSON nor a stream of events" : "empty reply");
		rc = -1;
	} else if (p == LLM_OPENAI && !st.choices_seen && complete) {
		snprintf(why, why_len, "reply has no choices");
		rc = -1;
	} else if (!complete) {
		snprintf(why, why_len, "the stream ended before the reply was complete (%zu characters had arrived)",
			 strlen(out->content));
		rc = 1;
	} else {
		rc = 0;
	}
	buf_release(&st.text);
	return rc;
}

/* ---- refusals ---- */

/* Parameters a refusal may name, longest first where one holds another. */
static const char *const known_params[] = {
	"max_completion_tokens", "max_tokens", "temperature", "reasoning_effort", "stream_options", "stream",
	"cache_control", "thinking", NULL
};

static int is_word_char(char c)
{
	return isalnum((unsigned char)c) || c == '_';
}

/* The known parameter named first in `msg`, as a whole word; NULL if none. */
static const char *first_param(const char *msg)
{
	const char *best = NULL, *best_at = NULL;
	for (int k = 0; known_params[k]; k++) {
		size_t n = strlen(known_params[k]);
		for (const char *at = strstr(msg, known_params[k]); at; at = strstr(at + 1, known_params[k])) {
			if ((at == msg || !is_word_char(at[-1])) && !is_word_char(at[n])) {
				if (!best_at || at < best_at) {
					best = known_params[k];
					best_at = at;
				}
				break;
			}
		}
	}
	return best;
}

/* "at most N" or "N, which is the maximum": the number, or 0. */
static long stated_max(const char *msg)
{
	const char *at = strstr(msg, "at most ");
	if (at && isdigit((unsigned char)at[8]))
		return strtol(at + 8, NULL, 10);
	at = strstr(msg, ", which is the maximum");
	if (at && at > msg && isdigit((unsigned char)at[-1])) {
		const char *d = at;
		while (d > msg && isdigit((unsigned char)d[-1]))
			d--;
		return strtol(d, NULL, 10);
	}
	return 0;
}

int provider_refusal(const char *body, size_t len, struct provider_refusal *out)
{
	static const char *const unsupported_words[] = {
		"not supported", "nsupported", "does not support", "Extra inputs are not permitted", "Unrecognized request argument",
		"Unknown parameter", "unknown field", NULL
	};
	json_t *root = json_loadb(body, len, 0, NULL), *e;
	const char *msg, *param, *code;

	memset(out, 0, sizeof(*out));
	if (!root)
		return 0;
	e = json_object_get(root, "error");
	msg = json_string_value(json_object_get(e, "message")) ?: json_string_value(json_object_get(root, "message")) ?: "";
	param = json_string_value(json_object_get(e, "param"));
	code = json_string_value(json_object_get(e, "code")) ?: "";
	if (param) {	/* OpenAI names it; only parameters egg sends are adapted */
		int known = 0;
		for (int k = 0; known_params[k]; k++)
			known |= !strcmp(param, known_params[k]);
		if (!known)
			param = NULL;
	}
	if (!param)
		param = first_param(msg);
	if (param) {
		snprintf(out->param, sizeof(out->param), "%s", param);
		out->unsupported = !strcmp(code, "unsupported_parameter") || !strcmp(code, "unsupported_value");
		for (int k = 0; !out->unsupported && unsupported_words[k]; k++)
			out->unsupported = strstr(msg, unsupported_words[k]) != NULL;
		out->stated_max = stated_max(msg);
	}
	json_decref(root);
	return param != NULL;
}

void provider_reply_clear(struct provider_reply *r)
{
	free(r->content);
	free(r->finish_reason);
	free(r->model);
	memset(r, 0, sizeof(*r));
}
