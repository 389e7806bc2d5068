/* agents.h: the code, profile and debug agents: render a template, call the LLM, parse, retry once. */
#ifndef EGG_AGENTS_H
#define EGG_AGENTS_H

#include <pthread.h>

#include <jansson.h>

#include "../llm/llm.h"
#include "../store/record.h"
#include "prompts.h"
#include "reply.h"

/* A token and cost budget shared by the tasks of a run (may be NULL). */
struct budget {
	pthread_mutex_t lock;
	long max_tokens;	/* 0: unlimited */
	double max_cost;	/* 0: unlimited */
	long tokens;
	double cost;
};

/* Per-task agent state. Borrowed pointers must outlive it. */
/* What LLM calls used: counted once per call (agents.c), summed over a
 * task's pipeline branches, reported per task. */
struct llm_usage {
	long calls, cached_calls;
	long prompt_tokens, completion_tokens;
	long cached_prompt_tokens, reasoning_tokens;	/* parts of prompt_tokens, completion_tokens */
	long cache_write_tokens;	/* of prompt_tokens, written to the provider's prompt cache */
	long spool_calls;	/* of calls, replies read from the spool: not priced (cost unknown) */
	double cost_usd;
	double cache_saved_usd;		/* what the prompt cache saved (llm_price) */
	double llm_ms;		/* waiting for replies that were not cached (summed over calls) */
};

/* Prompt and completion tokens together: what budgets count. */
long usage_tokens(const struct llm_usage *u);
/* Adds to `to` what `now` used since `then` (a branch's calls, joined back). */
void usage_add_since(struct llm_usage *to, const struct llm_usage *now, const struct llm_usage *then);
/* {"calls", "cached_calls", "prompt_tokens", "completion_tokens", "cached_prompt_tokens",
 * "cache_write_tokens", "reasoning_tokens", "spool_calls", "cost_usd", "cache_saved_usd"}: a task summary's
 * "usage". Owned. */
json_t *usage_json(const struct llm_usage *u);

struct agents {
	struct llm *llm;
	struct recorder *rec;
	const char *device_facts;
	const char *precision_note;	/* the precision rule and the tolerance in force (borrowed) */
	const char *task_source;
	const char *task_name;	/* for the spool's request context; may be NULL */
	struct llm_usage used;	/* the task's, per pipeline branch until joined */
	long max_tokens;	/* per task; 0: unlimited */
	double max_cost;	/* per task; 0: unlimited */
	struct budget *run_budget;
	/* Told each call's tokens and cost as they are counted (the live
	 * display), or NULL: every count of LLM usage starts in agents.c. */
	void (*on_usage)(void *ctx, long tokens, double cost_usd);
	void *usage_ctx;
	/* Told, in one line for the terminal, each reply that could not be
	 * used (what was missing or wrong, and whether egg asks again or
	 * discards it), or NULL. */
	void (*on_note)(void *ctx, const char *stage, const char *text);
	void *note_ctx;
	char waiting_key[65];	/* the spooled request awaited (AGENT_WAITING), or "" */
};

enum agent_outcome {
	AGENT_OK,
	AGENT_MALFORMED,	/* malformed twice: discard, keep the current best */
	AGENT_LLM_ERROR,	/* the LLM failed after the client's retries (err_msg says why) */
	AGENT_BUDGET,		/* a token or cost budget is spent */
	AGENT_WAITING,		/* no reply yet in the --llm-spool folder (err_msg names it) */
};

/* The code agent: returns the kernel source (owned) or NULL with the outcome. */
char *agent_code(struct agents *a, enum prompt_id id, struct prompt_vars *v, const char *stage,
		 const char *candidate, enum agent_outcome *outcome);
/* The profile or debug agent: returns the schema-checked object (owned). */
json_t *agent_json(struct agents *a, enum prompt_id id, enum reply_schema schema, struct prompt_vars *v,
		   const char *stage, const char *candidate, enum agent_outcome *outcome);

/* Whether a budget is spent; writes the reason. */
int agents_over_budget(struct agents *a, char *why, size_t why_len);

#endif
