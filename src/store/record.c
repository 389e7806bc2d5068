/* record.c: writes a pipeline run's artifacts into its run directory. */
#include "record.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../util/buf.h"
#include "../util/err.h"
#include "../util/fault.h"
#include "../util/fs.h"

struct recorder {
	char *dir;		/* NULL: a buffer */
	json_t *events;		/* a buffer's events, in order */
	pthread_mutex_t lock;
	int seq;
	int failed;
	char *store_error;		/* the sink's first refusal, or NULL */
	json_t *trajectory;
	struct recorder_sink sink;
};

/* What a recorder writes into its folder: a replay starts them afresh, so
 * that the folder tells the same story as the store. */
static const char *const recorded[] = {
	"calls", "candidates", "decisions.jsonl", "trajectory.json", "run.json", "summary.json", "final.py", NULL
};

struct recorder *recorder_open(const char *dir, const struct recorder_sink *sink)
{
	struct recorder *r;
	char *calls = fs_join(dir, "calls"), *cands = fs_join(dir, "candidates");
	int ok;
	for (int i = 0; recorded[i]; i++) {
		char *path = fs_join(dir, recorded[i]);
		fs_remove_tree(path);
		free(path);
	}
	ok = fs_mkdir_p(calls) == 0 && fs_mkdir_p(cands) == 0;
	free(calls);
	free(cands);
	if (!ok)
		return NULL;
	r = xcalloc(1, sizeof(*r));
	r->dir = xstrdup(dir);
	pthread_mutex_init(&r->lock, NULL);
	r->trajectory = json_array();
	if (sink)
		r->sink = *sink;
	return r;
}

struct recorder *recorder_buffer(void)
{
	struct recorder *r = xcalloc(1, sizeof(*r));
	pthread_mutex_init(&r->lock, NULL);
	r->trajectory = json_array();
	r->events = json_array();
	return r;
}

/* A buffer keeps an event (owned; its JSON values are copies). */
static void keep(struct recorder *r, json_t *event)
{
	json_t *copy = json_deep_copy(event);
	json_decref(event);
	pthread_mutex_lock(&r->lock);
	json_array_append_new(r->events, copy);
	pthread_mutex_unlock(&r->lock);
}

void recorder_replay(struct recorder *to, struct recorder *buffer)
{
	size_t i;
	json_t *e;
	if (!buffer)
		return;
	json_array_foreach(buffer->events, i, e) {
		const char *kind = json_string_value(json_object_get(e, "kind"));
#define S(k) json_string_value(json_object_get(e, k))
		if (!strcmp(kind, "call"))
			recorder_call(to, S("template"), S("stage"), S("candidate"), S("system"), S("user"), S("reply"),
				      json_object_get(e, "meta"));
		else if (!strcmp(kind, "candidate"))
			recorder_candidate(to, S("id"), S("stage"), S("source"), json_object_get(e, "eval"));
		else if (!strcmp(kind, "profile"))
			recorder_profile(to, S("id"), json_object_get(e, "profile"));
		else if (!strcmp(kind, "decision"))
			recorder_decision(to, json_object_get(e, "decision"));
		else if (!strcmp(kind, "step"))
			recorder_step(to, json_object_get(e, "step"));
#undef S
	}
	recorder_close(buffer);
}

/*
 * The fault point "record" (fault.h): a record given to the sink refused
 * as a full disk would refuse it, nothing written. EGG_FAULT=record@K aims
 * at the process's K-th record (a test counts a clean run's to aim at its
 * last one).
 */
static int fault_refuses(void)
{
	if (!fault_hit("record"))
		return 0;
	err_set(ERR_INFRA, "database or disk is full (fault point EGG_FAULT=record)");
	return 1;
}

/* A sink hook's outcome: the first failure is kept, with its message. */
static void sunk(struct recorder *r, int rc)
{
	if (rc >= 0)
		return;
	pthread_mutex_lock(&r->lock);
	if (!r->store_error)
		r->store_error = xstrdup(err_msg());
	pthread_mutex_unlock(&r->lock);
	err_clear();
}

const char *recorder_store_error(struct recorder *r)
{
	const char *e;
	pthread_mutex_lock(&r->lock);
	e = r->store_error;
	pthread_mutex_unlock(&r->lock);
	return e;
}

const char *recorder_dir(const struct recorder *r)
{
	return r->dir;
}

static void write_file(struct recorder *r, const char *name, const char *text)
{
	char *path = fs_join(r->dir, name);
	char *clean = secret_redact(text ? text : "");
	if (fs_write_atomic_nosync(path, clean, strlen(clean)) < 0) {
		r->failed = 1;
		err_clear();
	}
	free(clean);
	free(path);
}

void recorder_write_json(struct recorder *r, const char *name, json_t *obj)
{
	char *text = json_dumps(obj, JSON_INDENT(1) | JSON_ENSURE_ASCII);
	pthread_mutex_lock(&r->lock);
	write_file(r, name, text);
	pthread_mutex_unlock(&r->lock);
	free(text);
}

void recorder_write_text(struct recorder *r, const char *name, const char *text)
{
	if (!r->dir)
		return;
	pthread_mutex_lock(&r->lock);
	write_file(r, name, text);
	pthread_mutex_unlock(&r->lock);
}

int recorder_call(struct recorder *r, const char *template_name, const char *stage, const char *candidate,
		  const char *system, const char *user, const char *reply, json_t *meta)
{
	char name[160];
	char *text;
	int seq;

	if (!r->dir) {
		keep(r, json_pack("{s:s, s:s, s:s, s:s?, s:s, s:s, s:s, s:O}", "kind", "call", "template", template_name,
				  "stage", stage, "candidate", candidate, "system", system, "user", user, "reply",
				  reply ? reply : "", "meta", meta));
		return 0;
	}
	pthread_mutex_lock(&r->lock);
	seq = ++r->seq;
	snprintf(name, sizeof(name), "calls/%03d-%s.system.md", seq, template_name);
	write_file(r, name, system);
	snprintf(name, sizeof(name), "calls/%03d-%s.user.md", seq, template_name);
	write_file(r, name, user);
	snprintf(name, sizeof(name), "calls/%03d-%s.reply.md", seq, template_name);
	write_file(r, name, reply);
	json_object_set_new(meta, "seq", json_integer(seq));
	json_object_set_new(meta, "template", json_string(template_name));
	json_object_set_new(meta, "stage", json_string(stage));
	json_object_set_new(meta, "candidate", candidate ? json_string(candidate) : json_null());
	snprintf(name, sizeof(name), "calls/%03d-%s.json", seq, template_name);
	text = json_dumps(meta, JSON_INDENT(1));
	write_file(r, name, text);
	free(text);
	pthread_mutex_unlock(&r->lock);
	if (r->sink.call) {
		json_object_set_new(meta, "system", json_string(system));
		json_object_set_new(meta, "user", json_string(user));
		json_object_set_new(meta, "reply", json_string(reply ? reply : ""));
		sunk(r, fault_refuses() ? -1 : r->sink.call(r->sink.ctx, meta));
	}
	return seq;
}

void recorder_candidate(struct recorder *r, const char *id, const char *stage, const char *source,
			json_t *eval)
{
	char name[160];
	char *text;
	if (!r->dir) {
		keep(r, json_pack("{s:s, s:s, s:s, s:s, s:O?}", "kind", "candidate", "id", id, "stage", stage, "source",
				  source, "eval", eval));
		return;
	}
	text = eval ? json_dumps(eval, JSON_INDENT(1)) : NULL;
	pthread_mutex_lock(&r->lock);
	snprintf(name, sizeof(name), "candidates/%s.py", id);
	write_file(r, name, source);
	if (text) {
		snprintf(name, sizeof(name), "candidates/%s.eval.json", id);
		write_file(r, name, text);
	}
	pthread_mutex_unlock(&r->lock);
	free(text);
	if (r->sink.candidate)
		sunk(r, fault_refuses() ? -1 : r->sink.candidate(r->sink.ctx, id, stage, source, eval));
}

void recorder_profile(struct recorder *r, const char *id, json_t *profile)
{
	char name[160];
	char *text;
	if (!r->dir) {
		keep(r, json_pack("{s:s, s:s, s:O}", "kind", "profile", "id", id, "profile", profile));
		return;
	}
	text = json_dumps(profile, JSON_INDENT(1));
	pthread_mutex_lock(&r->lock);
	snprintf(name, sizeof(name), "candidates/%s.profile.json", id);
	write_file(r, name, text);
	pthread_mutex_unlock(&r->lock);
	free(text);
	if (r->sink.profile)
		sunk(r, fault_refuses() ? -1 : r->sink.profile(r->sink.ctx, id, profile));
}

void recorder_decision(struct recorder *r, json_t *decision)
{
	char *path, *text;
	FILE *f;
	if (!r->dir) {
		keep(r, json_pack("{s:s, s:O}", "kind", "decision", "decision", decision));
		return;
	}
	path = fs_join(r->dir, "decisions.jsonl");
	text = json_dumps(decision, JSON_COMPACT);
	pthread_mutex_lock(&r->lock);
	f = fopen(path, "a");
	if (!f || fprintf(f, "%s\n", text) < 0)
		r->failed = 1;
	if (f)
		fclose(f);
	pthread_mutex_unlock(&r->lock);
	free(text);
	free(path);
	if (r->sink.decision)
		sunk(r, fault_refuses() ? -1 : r->sink.decision(r->sink.ctx, decision));
}

void recorder_step(struct recorder *r, json_t *step)
{
	char *text;
	if (!r->dir) {
		keep(r, json_pack("{s:s, s:O}", "kind", "step", "step", step));
		return;
	}
	pthread_mutex_lock(&r->lock);
	json_object_set_new(step, "step", json_integer((json_int_t)json_array_size(r->trajectory) + 1));
	json_array_append(r->trajectory, step);
	text = json_dumps(r->trajectory, JSON_INDENT(1));
	write_file(r, "trajectory.json", text);
	pthread_mutex_unlock(&r->lock);
	free(text);
	if (r->sink.step)
		sunk(r, fault_refuses() ? -1 : r->sink.step(r->sink.ctx, step));
}

json_t *recorder_trajectory(struct recorder *r)
{
	return r->trajectory;
}

int recorder_failed(const struct recorder *r)
{
	return r->failed;
}

void recorder_close(struct recorder *r)
{
	if (!r)
		return;
	json_decref(r->events);
	json_decref(r->trajectory);
	pthread_mutex_destroy(&r->lock);
	free(r->store_error);
	free(r->dir);
	free(r);
}
