/* calls.c: the pipeline's calls to its agents, the decisions they lead to, and why a task stops. */
#include "pipe.h"

#include <math.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../agents/decisions.h"
#include "ask.h"
#include "../agents/facts.h"
#include "../profile/profile.h"
#include "../util/beat.h"
#include "../util/buf.h"
#include "../util/err.h"
#include "../util/fs.h"
#include "../util/hash.h"
#include "../util/timeutil.h"
#include "../util/jsonnum.h"

void pipe_progress(struct pipe *p, const char *stage, const char *fmt, ...)
{
	char text[256];
	va_list ap;
	if (!p->env->progress)
		return;
	va_start(ap, fmt);
	vsnprintf(text, sizeof(text), fmt, ap);
	va_end(ap);
	p->env->progress(p->env->progress_ctx, stage, text);
}

/* ---- decisions ---- */

/* Records a decision of kind `k` with its fields (stolen; NULL: none). */
void pipe_decide(struct pipe *p, const char *stage, enum decision_kind k, json_t *fields)
{
	json_t *d = decision_new(k, stage, fields, NULL);
	recorder_decision(p->env->rec, d);
	json_array_append_new(p->decisions, d);
}

/* The fields of a decision about one candidate. */
json_t *pipe_about(const char *candidate)
{
	return json_pack("{s:s}", "candidate", candidate);
}

/* ---- agent calls, counted onto the chain of calls that wait on each other ---- */

char *pipe_code_call(struct pipe *p, enum prompt_id id, struct prompt_vars *v, const char *stage,
		       const char *candidate, enum agent_outcome *oc)
{
	long before = p->env->agents->used.calls;
	char *out;
	if (pipe_store_broken(p)) {
		*oc = AGENT_MALFORMED;	/* no call made; stop_for sees the stop */
		return NULL;
	}
	out = agent_code(p->env->agents, id, v, stage, candidate, oc);
	p->chain += (int)(p->env->agents->used.calls - before);
	return out;
}

json_t *pipe_json_call(struct pipe *p, enum prompt_id id, enum reply_schema schema, struct prompt_vars *v,
			 const char *stage, const char *candidate, enum agent_outcome *oc)
{
	long before = p->env->agents->used.calls;
	json_t *out;
	if (pipe_store_broken(p)) {
		*oc = AGENT_MALFORMED;	/* no call made; stop_for sees the stop */
		return NULL;
	}
	out = agent_json(p->env->agents, id, schema, v, stage, candidate, oc);
	p->chain += (int)(p->env->agents->used.calls - before);
	return out;
}

/*
 * After an agent gave nothing usable. A malformed reply (twice) is the
 * caller's to record: returns 0 and the run goes on. An LLM that failed
 * after its retries, a spent budget, or a reply awaited in the spool stops
 * the run here: the decision records this stop as what it is, the task
 * takes it by the join rule (pipe_stop), and 1 is returned.
 */
int pipe_stop_for(struct pipe *p, enum agent_outcome oc, const char *stage, const char *subject)
{
	struct agents *a = p->env->agents;
	struct stop s;
	if (p->out->stop.cause == STOP_STORE)
		return 1;
	if (oc == AGENT_MALFORMED || oc == AGENT_OK)
		return 0;
	if (oc == AGENT_WAITING)
		stop_set(&s, STOP_WAITING, a->waiting_key, "stopped: no reply for call %ld (waiting): %s",
			 a->used.calls + 1, err_msg());
	else if (oc == AGENT_BUDGET)
		stop_set(&s, STOP_BUDGET, NULL, "stopped: %s", err_msg());
	else if (err_kind() == ERR_INPUT)
		/* A key refused mid-run (llm.h: ERR_INPUT) is no outage: the user's to fix. */
		stop_set(&s, STOP_KEY, NULL, "stopped: the LLM endpoint refused egg's request (the %s stage's call for "
			 "%s): %s", stage, subject, err_msg());
	else
		stop_set(&s, STOP_LLM, NULL, "stopped: LLM unreachable (the %s stage's call for %s): %s", stage, subject,
			 err_msg());
	pipe_stop(p, &s);
	pipe_decide(p, stage, DEC_STOPPED, json_pack("{s:s, s:s}", "cause", stop_cause_name(s.cause), "reason", s.reason));
	return 1;
}

int pipe_calls_per_step(const struct pipe *p)
{
	return p->o->single_agent ? 1 : 2;
}

/* The run store refused a write: the task stops here, as an infrastructure
 * failure (what it would do next could not be recorded). 1 when it did. */
int pipe_store_broken(struct pipe *p)
{
	const char *e = p->env->store_rec ? recorder_store_error(p->env->store_rec) : NULL;
	if (!e)
		return 0;
	if (p->out->stop.cause != STOP_STORE) {
		struct stop s;
		stop_set(&s, STOP_STORE, NULL, "stopped: the run store cannot be written: %s", e);
		pipe_stop(p, &s);
	}
	return 1;
}

void pipe_stop(struct pipe *p, const struct stop *s)
{
	stop_join(&p->out->stop, s);
	p->stop = 1;
	if (s->cause == STOP_EGG)
		p->broken = 1;
}
