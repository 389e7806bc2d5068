/* reply.c: code-block and JSON extraction from LLM replies, with schema checks. */
#include "reply.h"

#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../util/buf.h"

struct block {
	const char *start;	/* first character of the contents */
	size_t len;
	char lang[16];
};

/* Whether the line starting at `p` opens or closes a fence (```), allowing
 * leading spaces. Returns a pointer just past the backticks, or NULL. */
static const char *fence_at(const char *p)
{
	while (*p == ' ' || *p == '\t')
		p++;
	return strncmp(p, "```", 3) ? NULL : p + 3;
}

static const char *next_line(const char *p)
{
	const char *nl = strchr(p, '\n');
	return nl ? nl + 1 : p + strlen(p);
}

/* Collects fenced blocks. Returns -1 when a fence is left open. */
static int find_blocks(const char *text, struct block *out, int max, int *n)
{
	const char *p = text;
	*n = 0;
	while (*p) {
		const char *after = fence_at(p);
		if (!after) {
			p = next_line(p);
			continue;
		}
		{
			struct block b;
			size_t l = 0;
			const char *q;
			while (after[l] && !isspace((unsigned char)after[l]) && l < sizeof(b.lang) - 1) {
				b.lang[l] = (char)tolower((unsigned char)after[l]);
				l++;
			}
			b.lang[l] = '\0';
			b.start = next_line(p);
			for (q = b.start; *q; q = next_line(q))
				if (fence_at(q))
					break;
			if (!*q)
				return -1;
			b.len = (size_t)(q - b.start);
			if (*n < max)
				out[(*n)++] = b;
			p = next_line(q);
		}
	}
	return 0;
}

static int defines_modelnew(const char *s, size_t len)
{
	static const char needle[] = "class ModelNew";
	for (size_t i = 0; i + sizeof(needle) - 1 <= len; i++)
		if (!memcmp(s + i, needle, sizeof(needle) - 1) && (i == 0 || s[i - 1] == '\n'))
			return 1;
	return 0;
}

char *reply_extract_code(const char *text, char *why, size_t why_len)
{
	struct block blocks[32];
	int n;
	const struct block *pick = NULL;

	if (find_blocks(text, blocks, 32, &n) < 0) {
		snprintf(why, why_len, "a code block is opened but never closed (the reply was cut off)");
		return NULL;
	}
	for (int i = 0; i < n; i++) {
		const char *l = blocks[i].lang;
		if ((!*l || !strcmp(l, "python") || !strcmp(l, "py") || !strcmp(l, "python3")) &&
		    defines_modelnew(blocks[i].start, blocks[i].len))
			pick = &blocks[i];
	}
	if (pick)
		return xstrndup(pick->start, pick->len);
	if (n > 0) {
		snprintf(why, why_len, "none of the %d code block(s) defines class ModelNew", n);
		return NULL;
	}
	/* No fences at all: accept a bare file. */
	if (defines_modelnew(text, strlen(text))) {
		const char *p = text;
		while (*p && strncmp(p, "import ", 7) && strncmp(p, "from ", 5) && strncmp(p, "# approach", 10))
			p = next_line(p);
		if (*p)
			return xstrdup(p);
	}
	snprintf(why, why_len, "the reply holds no Python file defining class ModelNew");
	return NULL;
}

/* Finds the end of a JSON object starting at `p` ('{'), honouring strings. */
static const char *object_end(const char *p)
{
	int depth = 0, in_str = 0;
	for (; *p; p++) {
		if (in_str) {
			if (*p == '\\' && p[1])
				p++;
			else if (*p == '"')
				in_str = 0;
		} else if (*p == '"') {
			in_str = 1;
		} else if (*p == '{') {
			depth++;
		} else if (*p == '}' && --depth == 0) {
			return p + 1;
		}
	}
	return NULL;
}

static json_t *first_object(const char *text, char *why, size_t why_len)
{
	struct block blocks[8];
	int n = 0;
	/* Prefer a ```json block; otherwise scan the text for an object. */
	if (find_blocks(text, blocks, 8, &n) == 0)
		for (int i = 0; i < n; i++)
			if (!strcmp(blocks[i].lang, "json")) {
				json_t *o = json_loadb(blocks[i].start, blocks[i].len, 0, NULL);
				if (json_is_object(o))
					return o;
				json_decref(o);
			}
	for (const char *p = strchr(text, '{'); p; p = strchr(p + 1, '{')) {
		const char *end = object_end(p);
		json_t *o;
		if (!end) {
			snprintf(why, why_len, "a JSON object is opened but never closed (the reply was cut off)");
			return NULL;
		}
		o = json_loadb(p, (size_t)(end - p), 0, NULL);
		if (json_is_object(o))
			return o;
		json_decref(o);
	}
	snprintf(why, why_len, "the reply holds no JSON object");
	return NULL;
}

json_t *reply_extract_json(const char *text, enum reply_schema schema, char *why, size_t why_len)
{
	static const char *const fields[][4] = {
		[SCHEMA_PROFILE_REFINE] = { "worth_optimizing", "bottleneck", "modification_plan", NULL },
		[SCHEMA_PROFILE_TUNE] = { "change", "bottleneck", "modification_plan", NULL },
		[SCHEMA_DEBUG] = { "critical_issue", "modification_plan", NULL },
	};
	json_t *o = first_object(text, why, why_len), *out;

	if (!o)
		return NULL;
	out = json_object();
	for (int i = 0; fields[schema][i]; i++) {
		const char *f = fields[schema][i];
		json_t *v = json_object_get(o, f);
		if (!v) {
			snprintf(why, why_len, "the JSON reply has no '%s'", f);
			goto bad;
		}
		if (!json_is_string(v) || !json_string_length(v)) {
			snprintf(why, why_len, "'%s' in the JSON reply is not a non-empty string", f);
			goto bad;
		}
		json_object_set(out, f, v);
	}
	if (schema == SCHEMA_PROFILE_REFINE || schema == SCHEMA_PROFILE_TUNE) {
		/* worth_optimizing (refinement) or change (tuning): "yes" or
		 * "no", in any case. Both are required: a reply without one is
		 * malformed, never read as a default. */
		const char *key = schema == SCHEMA_PROFILE_REFINE ? "worth_optimizing" : "change";
		char w[8];
		const char *s = json_string_value(json_object_get(o, key));
		size_t k = 0;
		for (; s[k] && k < sizeof(w) - 1; k++)
			w[k] = (char)tolower((unsigned char)s[k]);
		w[k] = '\0';
		if (strcmp(w, "yes") && strcmp(w, "no")) {
			snprintf(why, why_len, "'%s' must be \"yes\" or \"no\", not \"%.20s\"", key, s);
			goto bad;
		}
		json_object_set_new(out, key, json_string(w));
	}
	json_decref(o);
	return out;
bad:
	json_decref(o);
	json_decref(out);
	return NULL;
}

/* Copies up to the end of the line (or `max` bytes), trimmed. */
static void copy_line(const char *from, char *out, size_t len)
{
	const char *end = from;
	size_t n;
	while (*from == ' ' || *from == '\t')
		from++;
	end = from;
	while (*end && *end != '\n' && *end != '\r')
		end++;
	while (end > from && (end[-1] == ' ' || end[-1] == '\t'))
		end--;
	n = (size_t)(end - from);
	if (n >= len)
		n = len - 1;
	memcpy(out, from, n);
	out[n] = '\0';
}

void reply_approach(const char *source, char *out, size_t len)
{
	const char *p = source, *c;
	struct buf names = BUF_INIT;
	int kernels = 0;

	if (!len)
		return;
	out[0] = '\0';
	for (c = strstr(source, "# approach:"); c; c = strstr(c + 1, "# approach:"))
		if (c == source || c[-1] == '\n') {
			copy_line(c + 11, out, len);
			if (out[0])
				return;
		}
	while ((p = strstr(p, "@triton.jit"))) {
		const char *def = strstr(p, "def ");
		p += 11;
		if (!def)
			break;
		def += 4;
		if (kernels++ < 4) {
			size_t n = 0;
			while (def[n] && def[n] != '(' && n < 40)
				n++;
			buf_addf(&names, "%s%.*s", names.len ? ", " : "", (int)n, def);
		}
	}
	if (kernels)
		snprintf(out, len, "%d Triton kernel(s) (%s)%s%s", kernels, buf_str(&names),
			 strstr(source, "tl.dot(") ? " using tl.dot" : "", strstr(source, "tl.atomic_") ? " with atomics" : "");
	else
		snprintf(out, len, "an approach it did not name");
	buf_release(&names);
}
