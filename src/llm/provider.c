/* provider.c: OpenAI chat-completions and Anthropic messages request/reply formats. */
#include "provider.h"

#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../util/buf.h"

char *provider_request_body(enum llm_provider p, const char *model,
			    const char *system, const char *user,
			    double temperature, long max_tokens,
			    const char *token_field)
{
	json_t *root = json_object(), *messages = json_array();
	char *text;

	json_object_set_new(root, "model", json_string(model));
	if (p == LLM_OPENAI) {
		if (system && *system)
			json_array_append_new(messages, json_pack("{s:s, s:s}", "role", "system",
								  "content", system));
		json_array_append_new(messages, json_pack("{s:s, s:s}", "role", "user", "content", user));
		json_object_set_new(root, token_field ? token_field : "max_tokens",
				    json_integer(max_tokens));
	} else {
		if (system && *system)
			json_object_set_new(root, "system", json_string(system));
		json_array_append_new(messages, json_pack("{s:s, s:s}", "role", "user", "content", user));
		json_object_set_new(root, "max_tokens", json_integer(max_tokens));
	}
	json_object_set_new(root, "messages", messages);
	if (temperature >= 0)
		json_object_set_new(root, "temperature", json_real(temperature));
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

static int parse_openai(json_t *root, struct provider_reply *out, char *why, size_t n)
{
	json_t *choices = json_object_get(root, "choices"), *choice, *message, *content, *usage;

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
	usage = json_object_get(root, "usage");
	out->prompt_tokens = get_count(usage, "prompt_tokens");
	out->completion_tokens = get_count(usage, "completion_tokens");
	return 0;
}

static int parse_anthropic(json_t *root, struct provider_reply *out, char *why, size_t n)
{
	json_t *content = json_object_get(root, "content"), *block, *usage, *stop;
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
	if (json_is_string(stop)) {
		const char *s = json_string_value(stop);
		if (!strcmp(s, "max_tokens"))
			out->finish_reason = xstrdup("length");
		else if (!strcmp(s, "end_turn") || !strcmp(s, "stop_sequence"))
			out->finish_reason = xstrdup("stop");
		else
			out->finish_reason = xstrdup(s);
	}
	usage = json_object_get(root, "usage");
	out->prompt_tokens = get_count(usage, "input_tokens");
	out->completion_tokens = get_count(usage, "output_tokens");
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

void provider_reply_clear(struct provider_reply *r)
{
	free(r->content);
	free(r->finish_reason);
	free(r->model);
	memset(r, 0, sizeof(*r));
}
