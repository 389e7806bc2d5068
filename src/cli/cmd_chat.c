/* cmd_chat.c: `egg chat`: one LLM call, for checking a setup. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../llm/llm.h"
#include "../util/buf.h"
#include "../util/err.h"
#include "cli.h"

/* --json: the reply and what the call was, as one object (owned). */
static json_t *chat_json(const struct llm_result *res, const char *model)
{
	json_t *o = json_pack("{s:s, s:s?, s:s?, s:{s:I, s:I, s:I, s:I, s:I, s:b}, s:i, s:f, s:b, s:b, s:I}",
			      "content", res->content, "model", res->model ? res->model : model, "finish_reason",
			      res->finish_reason, "usage", "prompt_tokens", (json_int_t)res->prompt_tokens,
			      "completion_tokens", (json_int_t)res->completion_tokens, "cached_prompt_tokens",
			      (json_int_t)res->cached_prompt_tokens, "cache_write_tokens", (json_int_t)res->cache_write_tokens,
			      "reasoning_tokens", (json_int_t)res->reasoning_tokens, "estimated", res->usage_estimated,
			      "attempts", res->attempts, "latency_ms", res->latency_ms, "cached", res->cached, "truncated",
			      res->truncated, "max_tokens", (json_int_t)res->sent_max_tokens);
	json_object_set_new(o, "thinking_budget", res->thinking_budget ? json_integer(res->thinking_budget) : json_null());
	/* A model without a price keeps both keys: null, not absent. */
	json_object_set_new(o, "cost_usd", res->cost_usd >= 0 ? json_real(res->cost_usd) : json_null());
	json_object_set_new(o, "cache_saved_usd", res->cost_usd >= 0 ? json_real(res->cache_saved_usd) : json_null());
	json_object_set_new(o, "adapted", res->adapted ? json_string(res->adapted) : json_null());
	return o;
}

/* Without --json: the reply on stdout, what it took on one stderr line. */
static void chat_print(const struct llm_result *res)
{
	char *clean = secret_redact(res->content);
	struct buf line = BUF_INIT;
	fputs(clean, stdout);
	if (!*clean || clean[strlen(clean) - 1] != '\n')
		fputc('\n', stdout);
	free(clean);
	buf_addf(&line, "egg: %ld prompt", res->prompt_tokens);
	if (res->cached_prompt_tokens)
		buf_addf(&line, " (%ld cached)", res->cached_prompt_tokens);
	buf_addf(&line, " + %ld completion tokens", res->completion_tokens);
	if (res->reasoning_tokens)
		buf_addf(&line, " (%ld reasoning)", res->reasoning_tokens);
	if (res->usage_estimated)
		buf_adds(&line, " (estimated: the server reported none)");
	if (res->cached)
		buf_adds(&line, ": the reply from the reply cache; no request sent");
	else
		buf_addf(&line, ", %d attempt%s, %.0f ms", res->attempts, res->attempts == 1 ? "" : "s", res->latency_ms);
	fprintf(stderr, "%s\n", buf_str(&line));
	buf_release(&line);
}

int cmd_chat(const struct command *self, int argc, char **argv)
{
	struct cmd_ctx ctx = { 0 };
	const char *system = NULL;
	int use_cache = 0;
	const struct opt own[] = {
		{ "system", 's', OPT_STRING, &system, "TEXT", "system message" },
		{ "cache", 0, OPT_FLAG, &use_cache, NULL, "answer from the reply cache when possible (off by default for chat)" },
		OPT_TABLE_END,
	};
	struct llm *llm = NULL;
	struct llm_result res = { 0 };
	struct llm_request req = { 0 };
	const struct opt *tables[] = { own, NULL };
	int code = cmd_parse(self, tables, argc, argv, &ctx);

	if (code >= 0)
		goto out;
	llm = llm_new(&ctx.cfg, use_cache && ctx.cfg.cache);
	if (llm && ctx.json)
		llm_set_quiet(llm, 1);	/* --json: stderr holds errors only; the result says retries and adaptations */
	if (!llm) {
		code = err_report();
		goto out;
	}
	req.system = system;
	req.user = ctx.args.v[0];
	if (llm_call(llm, &req, &res) < 0) {
		code = err_report();
		goto out;
	}
	if (ctx.json)
		cmd_print_json(chat_json(&res, ctx.cfg.model));
	else
		chat_print(&res);
	if (res.truncated) {
		if (res.reasoning_tokens)
			err_set(ERR_REJECTED, "reply truncated at the output limit of %ld tokens with %s: %ld of its %ld "
				"tokens were hidden reasoning (raise --max-output-tokens)", res.max_tokens,
				*res.content ? "part of its text" : "no text", res.reasoning_tokens, res.completion_tokens);
		else
			err_set(ERR_REJECTED, "reply truncated at the output limit of %ld tokens (raise --max-output-tokens)",
				res.max_tokens);
		code = err_report();
		goto out;
	}
	code = EXIT_DONE;
out:
	llm_result_clear(&res);
	llm_free(llm);
	cmd_ctx_clear(&ctx);
	return code;
}
