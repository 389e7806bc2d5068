/* replycache.c: the reply cache: replies stored by a content address of what was asked (replycache.h). */
#include "replycache.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../util/err.h"
#include "../util/fs.h"
#include "../util/hash.h"

void replycache_key(const struct config *cfg, const struct llm_rules *rules, const struct llm_request *req,
		    long max_tokens, char key[65])
{
	struct hash_ctx *h = hash_begin();
	char num[64];
	/* The endpoint's URL is left out on purpose: a local server restarted on
	 * another port serves the same model, and a resumed run should not pay
	 * again. Provider and model name identify the model. */
	hash_field(h, "egg-llm-cache-v2");
	hash_field(h, cfg->provider);
	hash_field(h, cfg->model);
	hash_field(h, req->system);
	hash_field(h, req->user);
	/* What the model is asked before any adaptation to a server's refusal
	 * (llm.c), so an adapted request finds the same reply; a reasoning
	 * effort joins the key only when one is sent (keys made before it
	 * existed stay the same). */
	snprintf(num, sizeof(num), "%.6g/%ld/%d/%s", rules->temperature < 0 ? -1.0 : rules->temperature, max_tokens,
		 req->sample, rules->token_field);
	hash_field(h, num);
	if (rules->reasoning_effort)
		hash_field(h, rules->reasoning_effort);
	hash_final(h, key);
}

static char *cache_path(const char *dir, const char key[65])
{
	return xasprintf("%s/%.2s/%s.json", dir, key, key);
}

int replycache_read(const char *cache_dir, const char key[65], struct llm_result *res)
{
	char *path = cache_path(cache_dir, key);
	json_t *root = json_load_file(path, 0, NULL);
	const char *content;
	free(path);
	if (!root)
		return -1;
	content = json_string_value(json_object_get(root, "content"));
	if (!content) {
		json_decref(root);
		return -1;
	}
	res->content = xstrdup(content);
	if (json_string_value(json_object_get(root, "finish_reason")))
		res->finish_reason = xstrdup(json_string_value(json_object_get(root, "finish_reason")));
	if (json_string_value(json_object_get(root, "model")))
		res->model = xstrdup(json_string_value(json_object_get(root, "model")));
	res->prompt_tokens = (long)json_integer_value(json_object_get(root, "prompt_tokens"));
	res->completion_tokens = (long)json_integer_value(json_object_get(root, "completion_tokens"));
	res->cached_prompt_tokens = (long)json_integer_value(json_object_get(root, "cached_prompt_tokens"));
	res->reasoning_tokens = (long)json_integer_value(json_object_get(root, "reasoning_tokens"));
	json_decref(root);
	return 0;
}

void replycache_write(const char *cache_dir, const char key[65], const struct llm_result *res)
{
	char *dir = xasprintf("%s/%.2s", cache_dir, key);
	char *path = cache_path(cache_dir, key);
	json_t *root = json_pack("{s:s, s:s?, s:s?, s:I, s:I, s:I, s:I}", "content", res->content,
				 "finish_reason", res->finish_reason, "model", res->model,
				 "prompt_tokens", (json_int_t)res->prompt_tokens,
				 "completion_tokens", (json_int_t)res->completion_tokens,
				 "cached_prompt_tokens", (json_int_t)res->cached_prompt_tokens,
				 "reasoning_tokens", (json_int_t)res->reasoning_tokens);
	char *text = json_dumps(root, JSON_COMPACT);
	/* A cache failure never fails the call: the reply is in hand. */
	if (text && fs_mkdir_p(dir) == 0)
		fs_write_atomic(path, text, strlen(text));
	err_clear();
	free(text);
	json_decref(root);
	free(path);
	free(dir);
}
