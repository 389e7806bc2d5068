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
				o->first_stop = json_string_value(json_object_get(ts->result, "stop_reason"))
							?: "no reason recorded";
			o->no_memory += !strcmp(json_string_value(json_object_get(ts->result, "stop_cause")) ?: "", "memory");
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
	if (w->resume)
		snprintf(out, n, "; resume with '%s'", w->resume);
	else
		snprintf(out, n, "; run the same command again to go on");
	len = strlen(out);
	if (o->no_memory && len < n)
		snprintf(out + len, n - len, " (the %d that cannot fit in memory will stop again)", o->no_memory);
}

static int stopped_exit(const struct run_outcome *o, const struct outcome_words *w, int one_task)
{
	char go_on[640];
	go_on_text(o, w, go_on, sizeof(go_on));
	if (!o->stopped)
		err_set(ERR_INFRA, "%s%s", o->run_stop, go_on);
	else if (one_task)
		err_set(ERR_INFRA, "%s%s", o->first_stop, go_on);
	else
		err_set(ERR_INFRA, "%d of %d %s(s) stopped %s (first: %s); the others %s%s", o->stopped, o->tasks, w->unit,
			o->no_memory == o->stopped ? "as they cannot fit in the device's memory" :
			"on an infrastructure failure", o->first_stop,
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
	const json_t *result;
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
		result = o->tasks ? tasks[0].result : NULL;
		why = json_string_value(json_object_get(result, "stop_reason"));
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
