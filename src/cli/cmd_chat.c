/* cmd_chat.c: `egg chat`: one LLM call, for checking a setup. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../llm/llm.h"
#include "../util/err.h"
#include "cli.h"

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
	if (ctx.json) {
		json_t *o = json_pack("{s:s, s:s?, s:s?, s:{s:I, s:I}, s:i, s:f, s:b, s:b}",
				      "content", res.content,
				      "model", res.model ? res.model : ctx.cfg.model,
				      "finish_reason", res.finish_reason,
				      "usage", "prompt_tokens", (json_int_t)res.prompt_tokens,
				      "completion_tokens", (json_int_t)res.completion_tokens,
				      "attempts", res.attempts, "latency_ms", res.latency_ms,
				      "cached", res.cached, "truncated", res.truncated);
		if (res.cost_usd >= 0)
			json_object_set_new(o, "cost_usd", json_real(res.cost_usd));
		cmd_print_json(o);
	} else {
		char *clean = secret_redact(res.content);
		fputs(clean, stdout);
		if (!*clean || clean[strlen(clean) - 1] != '\n')
			fputc('\n', stdout);
		free(clean);
		fprintf(stderr, "egg: %ld prompt + %ld completion tokens, %d attempt%s, %.0f ms%s\n",
			res.prompt_tokens, res.completion_tokens, res.attempts,
			res.attempts == 1 ? "" : "s", res.latency_ms, res.cached ? " (cached)" : "");
	}
	if (res.truncated) {
		err_set(ERR_REJECTED, "reply truncated at the output limit of %ld tokens (raise --max-output-tokens)",
			ctx.cfg.max_output_tokens);
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
