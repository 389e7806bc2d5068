/* branch.c: the pipeline's branches: a copy of its state that works on its own thread and is joined back in a fixed order. */
#include "pipe.h"

#include <stdlib.h>
#include <string.h>

#include "../util/err.h"

void cand_free(struct cand *c)
{
	free(c->source);
	free(c->plan);
	json_decref(c->eval);
	json_decref(c->profile);
	free(c);
}

/* A branch of `p`: the same state, recording into a buffer. */
struct pipe *pipe_fork(struct pipe *p)
{
	struct pipe *b = xcalloc(1, sizeof(*b));
	b->own_env = *p->env;
	b->own_agents = *p->env->agents;
	b->base = p->env->agents->used;
	b->own_agents.rec = b->own_env.rec = recorder_buffer();
	b->own_env.agents = &b->own_agents;
	b->env = &b->own_env;
	b->o = p->o;
	b->out = &b->own_out;
	memcpy(b->cands, p->cands, sizeof(p->cands));
	b->ncands = b->base_cands = p->ncands;
	memcpy(b->pool, p->pool, sizeof(p->pool));
	b->npool = p->npool;
	b->decisions = json_deep_copy(p->decisions);
	b->base_decisions = json_array_size(b->decisions);
	b->stop = p->stop;
	b->at_sol = p->at_sol;
	b->chain = p->chain;
	b->eval_ms = b->base_eval_ms = p->eval_ms;
	b->wait_ms = b->base_wait_ms = p->wait_ms;
	return b;
}

/* Brings what branch b did into p (its records, calls, decisions and
 * candidates, after p's own), and frees b. The task's stop record is p's
 * or b's, whole, by the join rule (stop.h). */
void pipe_join(struct pipe *p, struct pipe *b)
{
	struct agents *a = p->env->agents, *ba = &b->own_agents;
	struct stop full;
	int dropped = 0;
	recorder_replay(p->env->rec, b->own_env.rec);
	usage_add_since(&a->used, &ba->used, &b->base);
	for (size_t i = b->base_decisions; i < json_array_size(b->decisions); i++)
		json_array_append(p->decisions, json_array_get(b->decisions, i));
	for (int i = b->base_cands; i < b->ncands; i++) {
		if (p->ncands < MAX_CANDS) {
			p->cands[p->ncands++] = b->cands[i];
			continue;
		}
		cand_free(b->cands[i]);
		if (!dropped++)
			stop_set(&full, STOP_EGG, NULL, "stopped: egg's candidate table is full (%d candidates)", MAX_CANDS);
	}
	if (dropped)
		pipe_stop(p, &full);
	/* The task's stop is one record, p's or b's, whole (stop_join): a wait
	 * keeps its key and its reason together, whatever the other branch met. */
	if (b->stop) {
		p->stop = 1;
		if (stop_join(&p->out->stop, &b->out->stop))
			memcpy(a->waiting_key, ba->waiting_key, sizeof(a->waiting_key));
	}
	p->broken |= b->broken;
	if (b->chain > p->chain)
		p->chain = b->chain;
	p->eval_ms += b->eval_ms - b->base_eval_ms;
	p->wait_ms += b->wait_ms - b->base_wait_ms;
	json_decref(b->decisions);
	free(b);
}

/* Drops what branch b did (it recorded nothing that must stay and made no
 * candidate) and frees it. */
void pipe_discard(struct pipe *b)
{
	recorder_close(b->own_env.rec);
	for (int i = b->base_cands; i < b->ncands; i++) {
		cand_free(b->cands[i]);
	}
	json_decref(b->decisions);
	free(b);
}

struct branch_job {
	struct pipe *b;
	void (*fn)(struct pipe *b, void *arg);
	void *arg;
};

static void *branch_main(void *arg)
{
	struct branch_job *j = arg;
	j->fn(j->b, j->arg);
	/* The thread's pending error belongs to no one: what matters is in b. */
	err_clear();
	free(j);
	return NULL;
}

/* Runs fn(b, arg) on its own thread; branch_wait waits for it. */
void branch_start(struct pipe *b, void (*fn)(struct pipe *b, void *arg), void *arg)
{
	struct branch_job *j = xcalloc(1, sizeof(*j));
	j->b = b;
	j->fn = fn;
	j->arg = arg;
	if (pthread_create(&b->thread, NULL, branch_main, j) != 0) {
		/* No thread to be had: the work runs here, in order. */
		b->thread = 0;
		branch_main(j);
	}
}

void branch_wait(struct pipe *b)
{
	if (b->thread)
		pthread_join(b->thread, NULL);
	b->thread = 0;
}
