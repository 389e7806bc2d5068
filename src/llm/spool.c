/* spool.c: pending requests and replies as files in a folder. */
#include "spool.h"

#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "../util/buf.h"
#include "../util/err.h"
#include "../util/fs.h"
#include "../util/strvec.h"

void spool_reply_clear(struct spool_reply *r)
{
	free(r->content);
	free(r->model);
	free(r->finish_reason);
	memset(r, 0, sizeof(*r));
}

int spool_take(const char *dir, const char *key, size_t prompt_chars, struct spool_reply *out)
{
	char *txt = xasprintf("%s/replies/%s.txt", dir, key), *jsn = xasprintf("%s/replies/%s.json", dir, key);
	struct buf text = BUF_INIT;
	int rc = 1;

	memset(out, 0, sizeof(*out));
	if (fs_exists(jsn)) {
		json_error_t e;
		json_t *o = json_load_file(jsn, 0, &e), *usage;
		if (!json_is_object(o) || !json_is_string(json_object_get(o, "content"))) {
			err_set(ERR_INPUT, "spool reply '%s' is not a JSON object with a \"content\" string%s%s", jsn,
				o ? "" : ": ", o ? "" : e.text);
			json_decref(o);
			rc = -1;
			goto out;
		}
		out->content = xstrdup(json_string_value(json_object_get(o, "content")));
		if (json_is_string(json_object_get(o, "model")))
			out->model = xstrdup(json_string_value(json_object_get(o, "model")));
		out->finish_reason = xstrdup(json_string_value(json_object_get(o, "finish_reason")) ?: "stop");
		usage = json_object_get(o, "usage");
		out->prompt_tokens = (long)json_integer_value(json_object_get(usage, "prompt_tokens"));
		out->completion_tokens = (long)json_integer_value(json_object_get(usage, "completion_tokens"));
		out->estimated = !json_is_integer(json_object_get(usage, "completion_tokens"));
		json_decref(o);
		rc = 0;
	} else if (fs_exists(txt)) {
		if (fs_read(txt, &text) < 0) {
			err_set(ERR_INPUT, "cannot read spool reply '%s'", txt);
			rc = -1;
			goto out;
		}
		out->content = buf_detach(&text);
		out->finish_reason = xstrdup("stop");
		out->estimated = 1;
		rc = 0;
	}
	if (rc == 0 && out->estimated) {
		out->prompt_tokens = (long)(prompt_chars / 4);
		out->completion_tokens = (long)(strlen(out->content) / 4);
	}
out:
	buf_release(&text);
	free(txt);
	free(jsn);
	return rc;
}

int spool_post(const char *dir, const char *key, const struct config *cfg, double temperature, const char *system,
	       const char *user, long max_tokens, const json_t *context)
{
	char *pending = fs_join(dir, "pending"), *replies = fs_join(dir, "replies");
	char *path = xasprintf("%s/%s.json", pending, key), *text = NULL;
	json_t *req = NULL, *messages = json_array();
	int rc = -1;

	if (fs_mkdir_p(pending) < 0 || fs_mkdir_p(replies) < 0) {
		err_prefix("llm spool");
		goto out;
	}
	if (fs_exists(path)) {
		rc = 0;
		goto out;
	}
	if (system)
		json_array_append_new(messages, json_pack("{s:s, s:s}", "role", "system", "content", system));
	json_array_append_new(messages, json_pack("{s:s, s:s}", "role", "user", "content", user));
	req = json_pack("{s:s, s:s, s:s?, s:I, s:o, s:o}", "key", key, "provider", cfg->provider, "model", cfg->model,
			"max_tokens", (json_int_t)max_tokens, "temperature",
			temperature >= 0 ? json_real(temperature) : json_null(), "messages", messages);
	messages = NULL;
	if (context)
		json_object_set(req, "context", (json_t *)context);
	text = json_dumps(req, JSON_INDENT(1) | JSON_ENSURE_ASCII);
	if (!text || fs_write_atomic(path, text, strlen(text)) < 0) {
		err_set(ERR_INFRA, "cannot write the spool request '%s'", path);
		goto out;
	}
	rc = 0;
out:
	json_decref(messages);
	json_decref(req);
	free(text);
	free(path);
	free(pending);
	free(replies);
	return rc;
}

void spool_done(const char *dir, const char *key)
{
	char *path = xasprintf("%s/pending/%s.json", dir, key);
	unlink(path);
	free(path);
}

static int cmp_str(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

json_t *spool_pending(const char *dir)
{
	char *pending = fs_join(dir, "pending");
	DIR *d = opendir(pending);
	struct dirent *e;
	struct strvec keys = STRVEC_INIT;
	json_t *out = json_array();
	if (d) {
		while ((e = readdir(d))) {
			size_t n = strlen(e->d_name);
			if (n == 69 && !strcmp(e->d_name + 64, ".json"))
				strvec_push(&keys, e->d_name);
		}
		closedir(d);
	}
	if (keys.n)
		qsort(keys.v, keys.n, sizeof(char *), cmp_str);
	for (size_t i = 0; i < keys.n; i++)
		json_array_append_new(out, json_stringn(keys.v[i], 64));
	strvec_clear(&keys);
	free(pending);
	return out;
}
