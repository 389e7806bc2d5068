/* outcome.c: a run's tasks counted once; the run's status and exit code made from those counts. */
#include "outcome.h"

#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../eval/launch.h"
#include "../llm/spool.h"
#include "../util/buf.h"
#include "../util/err.h"

void outcome_count(const struct task_state *tasks, int n, const char *run_stop, struct run_outcome *o)
{
	memset(o, 0, sizeof(*o));
	o->tasks = n;
	o->run_stop = run_stop;
	for (int i = 0; i < n; i++) {
		const struct task_state *ts = &tasks[i];
		switch (ts->status) {
		case TASK_STOPPED:
			if (!o->stopped++)
				o->first_stop = ts->stop.reason[0] ? ts->stop.reason : "no reason recorded";
			o->no_memory += ts->stop.cause == STOP_NO_MEMORY;
			if (ts->stop.cause == STOP_KEY && !o->key_refused++)
				o->key_stop = ts->stop.reason[0] ? ts->stop.reason : "the LLM endpoint refused the API key";
			break;
		case TASK_WAITING:
			o->waiting++;
			break;
		case TASK_FAILED:
			o->failed++;
			break;
		case TASK_DONE:
			o->found += json_is_true(json_object_get(ts->result, "found"));
			break;
		default:
			/* Pending or running after the run: interrupted, as good as stopped. */
			if (!o->stopped++)
				o->first_stop = "interrupted before it finished";
		}
	}
}

const char *run_outcome_status(const struct run_outcome *o)
{
	return o->stopped || o->run_stop ? "stopped" : o->waiting ? "waiting" : "done";
}

int run_outcome_finished(const struct run_outcome *o)
{
	return !o->stopped && !o->waiting && !o->run_stop;
}

int run_outcome_refused(const struct run_outcome *o, enum outcome_rule rule)
{
	return rule == OUTCOME_ONE_TASK && o->failed && run_outcome_finished(o);
}

const char *run_status_on_error(enum err_kind k)
{
	return k == ERR_INPUT ? "refused" : k == ERR_INFRA || k == ERR_NO_MEMORY ? "stopped" : NULL;
}

/*
 * How to go on after a stop: the same command again (or its resume), which
 * gets past a passing failure; said only when some stop may pass. A task
 * that cannot fit in its device's memory would stop again: its own reason
 * says what to change instead. "" when there is nothing to run again.
 */
static void go_on_text(const struct run_outcome *o, const struct outcome_words *w, char *out, size_t n)
{
	int again = o->run_stop || o->waiting || o->stopped > o->no_memory;
	size_t len;
	out[0] = '\0';
	if (!again)
		return;
	/* After a refused key: its reason says what to set first. */
	if (w->resume)
		snprintf(out, n, "; %sresume with '%s'", o->key_refused ? "then " : "", w->resume);
	else
		snprintf(out, n, "; %srun the same command again to go on", o->key_refused ? "then " : "");
	len = strlen(out);
	if (o->no_memory && len < n)
		snprintf(out + len, n - len, " (the %d that cannot fit in memory will stop again)", o->no_memory);
}

static int stopped_exit(const struct run_outcome *o, const struct outcome_words *w, int one_task)
{
	char go_on[640];
	/* A key the endpoint refused is the user's to set (exit 2), whatever else stopped: its reason is quoted. */
	enum err_kind kind = o->key_refused ? ERR_INPUT : ERR_INFRA;
	const char *quoted = o->key_stop ?: o->first_stop;
	go_on_text(o, w, go_on, sizeof(go_on));
	if (!o->stopped)
		err_set(kind, "%s%s", o->run_stop, go_on);
	else if (one_task)
		err_set(kind, "%s%s", quoted, go_on);
	else
		err_set(kind, "%d of %d %s(s) stopped %s (%s: %s); the others %s%s", o->stopped, o->tasks, w->unit,
			o->no_memory == o->stopped ? "as they cannot fit in the device's memory" :
			o->key_refused == o->stopped ? "as the LLM endpoint refused the API key" :
			o->key_refused ? "on a refused API key and other failures" :
			"on an infrastructure failure", o->key_stop && o->key_refused < o->stopped ? "the key" : "first",
			quoted,
			o->waiting ? "finished or wait for replies" : "finished", go_on);
	return err_report();
}

/* Whether the spool holds no reply yet: the first wait of whoever answers. */
static int no_reply_yet(const char *spool)
{
	char *dir = xasprintf("%s/replies", spool);
	DIR *d = opendir(dir);
	struct dirent *e;
	int none = 1;
	while (d && none && (e = readdir(d)))
		none = e->d_name[0] == '.';
	if (d)
		closedir(d);
	free(dir);
	return none;
}

/*
 * The wait's line names the requests, the script that renders them as text
 * and where replies go. Before the first reply is written, a line first
 * says how to ask for fewer: answered by hand, every call is a reply.
 */
static int waiting_exit(const struct run_outcome *o, const struct outcome_words *w)
{
	json_t *pending = w->spool ? spool_pending(w->spool) : json_array();
	const char *spool = w->spool ?: "the spool";
	char *render = launch_script_path("spool-render.py");
	if (w->spool && no_reply_yet(w->spool))
		fprintf(stderr, "egg: each request is one model call, about 15 per task with the default stages; to "
				"answer fewer by hand, ask for fewer: --no-multi-seed --no-refine --no-hw-tune (one seed "
				"and its repairs), and with --split --max-subgraphs 1\n");
	if (w->resume)
		err_set(ERR_WAITING, "%d %s(s) wait for %zu reply(ies) in %s/pending (as text: python3 %s %s OUT); write "
			"each to %s/replies/KEY.txt and run '%s'", o->waiting, w->unit, json_array_size(pending), spool,
			render, spool, spool, w->resume);
	else
		err_set(ERR_WAITING, "%zu request(s) await a reply in %s/pending (as text: python3 %s %s OUT); write "
			"each reply to %s/replies/KEY.txt and run the same command again", json_array_size(pending), spool,
			render, spool, spool);
	free(render);
	json_decref(pending);
	return err_report();
}

int run_outcome_exit(const struct run_outcome *o, const struct task_state *tasks, enum outcome_rule rule,
		     const struct outcome_words *w)
{
	const struct task_state *ts = o->tasks && tasks ? tasks : NULL;
	const char *why;
	if (o->stopped || o->run_stop)
		return stopped_exit(o, w, rule == OUTCOME_ONE_TASK);
	if (o->waiting)
		return waiting_exit(o, w);
	switch (rule) {
	case OUTCOME_ANY_FOUND:
		if (o->found)
			return EXIT_DONE;
		err_set(ERR_REJECTED, "no %s of %s found a valid kernel", w->unit, w->subject);
		return err_report();
	case OUTCOME_ALL_PASSED:
		if (o->found == o->tasks)
			return EXIT_DONE;
		err_set(ERR_REJECTED, "%d of %d %s(s) passed (%s)", o->found, o->tasks, w->unit, w->subject);
		return err_report();
	case OUTCOME_ONE_TASK:
		/* Why there is no kernel: the task's stop (a spent budget, a bad
		 * task), else the words its result gives (no seed passed). */
		why = !ts ? NULL : ts->stop.cause != STOP_NONE ? ts->stop.reason
			: json_string_value(json_object_get(ts->result, "no_kernel"));
		if (o->failed) {
			err_set(ERR_INPUT, "%s", why ?: "bad task");
			return err_report();
		}
		if (o->found)
			return EXIT_DONE;
		err_set(ERR_REJECTED, "no valid kernel for %s%s%s", w->subject, why ? ": " : "", why ?: "");
		return err_report();
	}
	return EXIT_INFRA;
}

void program_verdict_clear(struct program_verdict *v)
{
	free(v->original_way);
	free(v->dropin_way);
	free(v->reason);
	free(v->composed);
	*v = (struct program_verdict)PROGRAM_VERDICT_INIT;
}

/* A drop-in the user's clock judged and found no faster than the original. */
static int program_slower(const struct program_verdict *v)
{
	return v->judged && !v->faster;
}

int program_outcome_dropin(const struct run_outcome *o, const struct program_verdict *v)
{
	return run_outcome_finished(o) && o->found && v->finished && v->passed && !v->unchanged && !program_slower(v);
}

int program_outcome_exit(const struct run_outcome *o, const struct program_verdict *v, const struct outcome_words *w,
			 const char *output)
{
	const char *out = output;
	int code;
	if (run_outcome_finished(o) && v->finished && !v->passed) {
		/* Even the program without kernels failed: egg's own split is wrong. */
		err_set(ERR_INFRA, "the composed program does not match the program (%s): egg's split or composition is "
			"wrong for it; please report it", v->reason ? v->reason : "?");
		return err_report();
	}
	if ((code = run_outcome_exit(o, NULL, OUTCOME_ANY_FOUND, w)) != EXIT_DONE)	/* the rule reads no task */
		return code;
	if (v->unchanged) {
		/* Kernels were found, and none went into the program. */
		err_set(ERR_REJECTED, "no kernel went into %s: the program is unchanged%s%s%s", w->subject,
			out ? " ('" : "", out ? out : "", out ? "' is not written)" : "");
		return err_report();
	}
	if (program_slower(v)) {
		/* It passed, and it is slower than what the user runs today. */
		err_set(ERR_REJECTED, "the drop-in is not faster than the program as its user runs it: %.4f ms per forward "
			"(%s) against the original's %.4f ms (%s), by wall clock%s%s%s%s; it stays in '%s'", v->dropin_ms,
			v->dropin_way ? v->dropin_way : "none ran", v->original_ms,
			v->original_way ? v->original_way : "none ran",
			v->within_noise ? " (the median is lower, but the drop-in's slowest round is not faster than the "
					  "original's fastest: within the noise)" : "",
			out ? " ('" : "", out ? out : "", out ? "' is not written)" : "", v->composed ? v->composed : "?");
		return err_report();
	}
	if (!program_outcome_dropin(o, v)) {
		err_set(ERR_INFRA, "%s has no end-to-end verdict though its tasks finished: please report it", w->subject);
		return err_report();
	}
	return EXIT_DONE;
}
