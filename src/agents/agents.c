/* agents.c: one agent call: template, LLM, parse, one retry on a malformed reply, recording, budgets. */
#include "agents.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../util/buf.h"
#include "../util/err.h"

long usage_tokens(const struct llm_usage *u)
{
	return u->prompt_tokens + u->completion_tokens;
}

void usage_add_since(struct llm_usage *to, const struct llm_usage *now, const struct llm_usage *then)
{
	to->calls += now->calls - then->calls;
	to->cached_calls += now->cached_calls - then->cached_calls;
	to->prompt_tokens += now->prompt_tokens - then->prompt_tokens;
	to->completion_tokens += now->completion_tokens - then->completion_tokens;
	to->cached_prompt_tokens += now->cached_prompt_tokens - then->cached_prompt_tokens;
	to->reasoning_tokens += now->reasoning_tokens - then->reasoning_tokens;
	to->cache_write_tokens += now->cache_write_tokens - then->cache_write_tokens;
	to->spool_calls += now->spool_calls - then->spool_calls;
	to->cost_usd += now->cost_usd - then->cost_usd;
	to->cache_saved_usd += now->cache_saved_usd - then->cache_saved_usd;
	to->llm_ms += now->llm_ms - then->llm_ms;
}

json_t *usage_json(const struct llm_usage *u)
{
	return json_pack("{s:I, s:I, s:I, s:I, s:I, s:I, s:I, s:I, s:f, s:f}", "calls", (json_int_t)u->calls,
			 "cached_calls", (json_int_t)u->cached_calls, "prompt_tokens", (json_int_t)u->prompt_tokens,
			 "completion_tokens", (json_int_t)u->completion_tokens, "cached_prompt_tokens",
			 (json_int_t)u->cached_prompt_tokens, "cache_write_tokens", (json_int_t)u->cache_write_tokens,
			 "reasoning_tokens", (json_int_t)u->reasoning_tokens, "spool_calls", (json_int_t)u->spool_calls,
			 "cost_usd", u->cost_usd, "cache_saved_usd", u->cache_saved_usd);
}

int agents_over_budget(struct agents *a, char *why, size_t why_len)
{
	long tokens = usage_tokens(&a->used);
	int over = 0;
	if (a->max_tokens && tokens >= a->max_tokens) {
		snprintf(why, why_len, "task token budget spent (%ld of %ld)", tokens, a->max_tokens);
		return 1;
	}
	if (a->max_cost > 0 && a->used.cost_usd >= a->max_cost) {
		snprintf(why, why_len, "task cost budget spent ($%.4f of $%.4f)", a->used.cost_usd, a->max_cost);
		return 1;
	}
	if (a->run_budget) {
		struct budget *b = a->run_budget;
		pthread_mutex_lock(&b->lock);
		if (b->max_tokens && b->tokens >= b->max_tokens) {
			snprintf(why, why_len, "run token budget spent (%ld of %ld)", b->tokens, b->max_tokens);
			over = 1;
		} else if (b->max_cost > 0 && b->cost >= b->max_cost) {
			snprintf(why, why_len, "run cost budget spent ($%.4f of $%.4f)", b->cost, b->max_cost);
			over = 1;
		}
		pthread_mutex_unlock(&b->lock);
	}
	return over;
}

/* The one place LLM usage is counted: the task's figures (its budget, kept
 * per pipeline branch and merged when branches join), the run's budget and
 * the live display. Replayed and cached calls count tokens (so that a
 * resumed run decides as the first did) but cost nothing again. */
static void account(struct agents *a, const struct llm_result *res)
{
	long t = res->prompt_tokens + res->completion_tokens;
	double c = res->cost_usd > 0 ? res->cost_usd : 0;
	a->used.calls++;
	a->used.prompt_tokens += res->prompt_tokens;
	a->used.completion_tokens += res->completion_tokens;
	a->used.cached_prompt_tokens += res->cached_prompt_tokens;
	a->used.reasoning_tokens += res->reasoning_tokens;
	a->used.cache_write_tokens += res->cache_write_tokens;
	a->used.cost_usd += c;
	if (!res->cached)
		a->used.cache_saved_usd += res->cache_saved_usd;
	if (res->cached)
		a->used.cached_calls++;
	if (res->spooled)
		a->used.spool_calls++;
	else
		a->used.llm_ms += res->latency_ms;
	if (a->run_budget) {
		pthread_mutex_lock(&a->run_budget->lock);
		a->run_budget->tokens += t;
		a->run_budget->cost += c;
		pthread_mutex_unlock(&a->run_budget->lock);
	}
	if (a->on_usage)
		a->on_usage(a->usage_ctx, t, c);
}

/* A reply cut at the output limit: why (for the record and the decision)
 * and the limit it had. */
struct cut_reply {
	long limit;
	char why[300];
};

/* What a reply cut at the output limit was, in words: the limit, how
 * much text came and how many tokens went to hidden reasoning. */
static void cut_reply_why(const struct llm_result *res, char *why, size_t n)
{
	size_t chars = res->content ? strlen(res->content) : 0;
	if (res->reasoning_tokens)
		snprintf(why, n, "it was cut off at the output limit of %ld tokens with %s (%ld of its %ld tokens were "
			 "hidden reasoning)", res->max_tokens, chars ? "part of its text" : "no text", res->reasoning_tokens,
			 res->completion_tokens);
	else
		snprintf(why, n, "it was cut off at the output limit of %ld tokens (%zu characters of text)", res->max_tokens,
			 chars);
}

/* A call's figures for its record. */
static json_t *call_meta(const struct llm_result *res, int sample)
{
	json_t *meta = json_pack("{s:s, s:s?, s:I, s:I, s:I, s:I, s:b, s:I, s:f, s:i, s:b, s:b, s:s, s:b}", "outcome",
				 "reply", "finish_reason", res->finish_reason, "prompt_tokens",
				 (json_int_t)res->prompt_tokens, "completion_tokens", (json_int_t)res->completion_tokens,
				 "cached_prompt_tokens", (json_int_t)res->cached_prompt_tokens, "reasoning_tokens",
				 (json_int_t)res->reasoning_tokens, "usage_estimated", res->usage_estimated, "max_tokens",
				 (json_int_t)res->max_tokens, "latency_ms", res->latency_ms, "attempts", res->attempts,
				 "cached", res->cached, "truncated", res->truncated, "cache_key", res->cache_key, "spooled",
				 res->spooled);
	json_object_set_new(meta, "cost_usd", res->cost_usd >= 0 ? json_real(res->cost_usd) : json_null());
	json_object_set_new(meta, "cache_write_tokens", json_integer(res->cache_write_tokens));
	if (res->cost_usd >= 0)
		json_object_set_new(meta, "cache_saved_usd", json_real(res->cache_saved_usd));
	json_object_set_new(meta, "sample", json_integer(sample));
	if (res->adapted)
		json_object_set_new(meta, "adapted", json_string(res->adapted));
	return meta;
}

/* One LLM call, recorded. Returns the reply text (owned) or NULL; a reply
 * cut at the output limit is NULL too, with AGENT_OK and `cut` filled
 * (why, and the limit it had). */
static char *call(struct agents *a, enum prompt_id id, const char *system, const char *user, int sample,
		  long max_tokens, const char *stage, const char *candidate, enum agent_outcome *outcome,
		  struct cut_reply *cut)
{
	json_t *context = json_pack("{s:s?, s:s, s:s, s:s?, s:i, s:I}", "task", a->task_name, "agent",
				    prompt_templates[id].name, "stage", stage, "candidate", candidate, "attempt",
				    sample + 1, "call", (json_int_t)a->used.calls + 1);
	struct llm_request req = { system, user, sample, max_tokens, context };
	struct llm_result res;
	char why[256];
	json_t *meta;
	char *text = NULL;
	int rc;

	if (agents_over_budget(a, why, sizeof(why))) {
		err_set(ERR_INFRA, "%s", why);
		*outcome = AGENT_BUDGET;
		return NULL;
	}
	rc = llm_call(a->llm, &req, &res);
	json_decref(context);
	if (rc < 0) {
		/* Recording may clear the pending error: keep the LLM's. */
		char msg[1024];
		enum err_kind kind = err_kind();
		snprintf(msg, sizeof(msg), "%s", err_msg());
		meta = json_pack("{s:s, s:i, s:s}", "outcome", kind == ERR_WAITING ? "waiting" : "llm_error",
				 "attempts", res.attempts, "cache_key", res.cache_key);
		json_object_set_new(meta, "error", json_string(msg));
		if (res.adapted)
			json_object_set_new(meta, "adapted", json_string(res.adapted));
		/* A reply cut off in transit is kept as the call's reply text. */
		if (res.partial)
			json_object_set_new(meta, "partial_chars", json_integer((json_int_t)strlen(res.partial)));
		recorder_call(a->rec, prompt_templates[id].name, stage, candidate, system, user,
			      res.partial ? res.partial : "", meta);
		json_decref(meta);
		err_set(kind, "%s", msg);
		*outcome = kind == ERR_WAITING ? AGENT_WAITING : AGENT_LLM_ERROR;
		if (kind == ERR_WAITING)
			snprintf(a->waiting_key, sizeof(a->waiting_key), "%s", res.cache_key);
		llm_result_clear(&res);
		return NULL;
	}
	account(a, &res);
	meta = call_meta(&res, sample);
	recorder_call(a->rec, prompt_templates[id].name, stage, candidate, system, user, res.content, meta);
	json_decref(meta);
	*outcome = AGENT_OK;
	if (res.truncated) {
		cut->limit = res.max_tokens;
		cut_reply_why(&res, cut->why, sizeof(cut->why));
	} else {
		text = res.content;
		res.content = NULL;
	}
	llm_result_clear(&res);
	return text;
}

/*
 * The output limit for a retry after a reply cut at `limit`: twice it,
 * within the model's ceiling (its published limit or the server's word)
 * and the tokens the task's and the run's budgets have left; 0 when that
 * leaves no more than `limit` (a longer reply cannot be paid for).
 */
static long raised_limit(struct agents *a, long limit)
{
	long raised = limit * 2, ceiling = llm_output_ceiling(a->llm);
	if (ceiling > 0 && raised > ceiling)
		raised = ceiling;
	if (a->max_tokens) {
		long left = a->max_tokens - usage_tokens(&a->used);
		if (raised > left)
			raised = left;
	}
	if (a->run_budget) {
		pthread_mutex_lock(&a->run_budget->lock);
		if (a->run_budget->max_tokens && raised > a->run_budget->max_tokens - a->run_budget->tokens)
			raised = a->run_budget->max_tokens - a->run_budget->tokens;
		pthread_mutex_unlock(&a->run_budget->lock);
	}
	return raised > limit ? raised : 0;
}

static void retry_note(struct buf *user, const char *first_user, const char *why, int code)
{
	buf_reset(user);
	buf_adds(user, first_user);
	buf_addf(user, "\n\nYour previous reply to this message could not be used: %s. Reply again and follow the "
		       "output format exactly: %s.\n", why,
		 code ? "one complete Python file in a single ```python block" : "one JSON object with the fields named above");
}

/* One line on the terminal (agents.on_note) for a reply that could not be
 * used: what was wrong with it and what egg does. `next`: 0 discarded, 1
 * asked again with the reason, 2 asked again with room for a longer reply. */
static void note_malformed(struct agents *a, enum prompt_id id, const char *stage, const char *candidate,
			   const char *why, int next)
{
	static const char *const done[] = {
		"discarded, the current best kept",
		"asked once more, told what was wrong",
		"asked once more with room for a longer reply",
	};
	char text[512];
	if (!a->on_note)
		return;
	snprintf(text, sizeof(text), "the %s reply%s%s could not be used: %s; %s", prompt_templates[id].name,
		 candidate ? " about " : "", candidate ? candidate : "", why, done[next]);
	a->on_note(a->note_ctx, stage, text);
}

/* Shared loop: ask, parse with `parse`, one retry on a malformed reply. */
static void *ask(struct agents *a, enum prompt_id id, struct prompt_vars *v, const char *stage,
		 const char *candidate, enum agent_outcome *outcome, int code, enum reply_schema schema)
{
	struct buf system = BUF_INIT, user = BUF_INIT, first = BUF_INIT;
	void *out = NULL;
	long max_tokens = 0;	/* 0: the configured limit */
	char why[300];

	prompt_set(v, "device", a->device_facts);
	prompt_set(v, "precision", a->precision_note);
	prompt_set(v, "task", a->task_source);
	prompt_set(v, "task_name", a->task_name ? a->task_name : "unnamed");
	if (prompt_render(id, v, &system, &user) < 0) {
		*outcome = AGENT_LLM_ERROR;
		goto out;
	}
	buf_adds(&first, buf_str(&user));
	for (int attempt = 0; attempt < 2; attempt++) {
		struct cut_reply cut = { 0, "" };
		int was_cut;
		const char *action = attempt == 0 ? "retry once" : "discard; keep the current best";
		char *text = call(a, id, buf_str(&system), buf_str(&user), attempt, max_tokens, stage, candidate,
				  outcome, &cut);
		if (!text && *outcome != AGENT_OK)
			goto out;
		was_cut = !text;
		if (was_cut) {
			/* Cut at the output limit: the same question again with room
			 * for a longer reply, not the same request again. */
			snprintf(why, sizeof(why), "%s", cut.why);
			max_tokens = attempt == 0 ? raised_limit(a, cut.limit) : 0;
			if (attempt == 0 && !max_tokens)
				attempt = 1, action = "discard (no budget left for a longer reply); keep the current best";
		} else {
			if (code)
				out = reply_extract_code(text, why, sizeof(why));
			else
				out = reply_extract_json(text, schema, why, sizeof(why));
			free(text);
			if (out)
				goto out;
		}
		{
			json_t *d = json_pack("{s:s, s:s, s:s?, s:s, s:s}", "stage", stage, "event", "malformed_reply",
					      "candidate", candidate, "template", prompt_templates[id].name, "why", why);
			json_object_set_new(d, "action", json_string(action));
			if (was_cut && max_tokens)
				json_object_set_new(d, "retry_max_tokens", json_integer(max_tokens));
			recorder_decision(a->rec, d);
			json_decref(d);
		}
		note_malformed(a, id, stage, candidate, why, attempt == 0 ? was_cut && max_tokens ? 2 : 1 : 0);
		if (!was_cut || !max_tokens)
			retry_note(&user, buf_str(&first), why, code);
		else {
			buf_reset(&user);
			buf_adds(&user, buf_str(&first));
		}
	}
	*outcome = AGENT_MALFORMED;
out:
	buf_release(&system);
	buf_release(&user);
	buf_release(&first);
	return out;
}

char *agent_code(struct agents *a, enum prompt_id id, struct prompt_vars *v, const char *stage,
		 const char *candidate, enum agent_outcome *outcome)
{
	return ask(a, id, v, stage, candidate, outcome, 1, SCHEMA_DEBUG);
}

json_t *agent_json(struct agents *a, enum prompt_id id, enum reply_schema schema, struct prompt_vars *v,
		   const char *stage, const char *candidate, enum agent_outcome *outcome)
{
	return ask(a, id, v, stage, candidate, outcome, 0, schema);
}
