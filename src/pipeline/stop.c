/* stop.c: a task's stop record: set whole, joined by rank, written and read as the records carry it. */
#include "stop.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>

/* One row per cause: its name, the task status it gives, the records'
 * error kind and its rank in the join rule (stop.h). */
static const struct {
	const char *name;
	enum task_status status;
	const char *error_kind;
	int rank;
} causes[STOP_CAUSE_COUNT] = {
	[STOP_NONE] = { NULL, TASK_DONE, "", 0 },
	[STOP_BUDGET] = { "budget", TASK_DONE, "budget", 1 },
	[STOP_LLM] = { "llm", TASK_STOPPED, "infra", 2 },
	/* The user's to fix (exit 2), then run again: stopped, not failed. */
	[STOP_KEY] = { "key", TASK_STOPPED, "input", 2 },
	[STOP_WORKER] = { "worker", TASK_STOPPED, "infra", 2 },
	[STOP_NO_MEMORY] = { "memory", TASK_STOPPED, "infra", 2 },
	[STOP_STORE] = { "store", TASK_STOPPED, "infra", 2 },
	[STOP_WAITING] = { "waiting", TASK_WAITING, "", 3 },
	[STOP_INPUT] = { "input", TASK_FAILED, "input", 4 },
	[STOP_EGG] = { "egg", TASK_STOPPED, "infra", 5 },
};

static enum stop_cause valid(enum stop_cause c)
{
	return (unsigned)c < STOP_CAUSE_COUNT ? c : STOP_NONE;
}

void stop_set(struct stop *s, enum stop_cause cause, const char *pending_key, const char *fmt, ...)
{
	va_list ap;
	memset(s, 0, sizeof(*s));
	s->cause = valid(cause);
	if (s->cause == STOP_NONE)
		return;
	va_start(ap, fmt);
	vsnprintf(s->reason, sizeof(s->reason), fmt, ap);
	va_end(ap);
	if (s->cause == STOP_WAITING && pending_key)
		snprintf(s->pending_key, sizeof(s->pending_key), "%s", pending_key);
}

int stop_join(struct stop *into, const struct stop *from)
{
	if (causes[valid(from->cause)].rank <= causes[valid(into->cause)].rank)
		return 0;
	*into = *from;
	return 1;
}

const char *stop_cause_name(enum stop_cause c)
{
	return causes[valid(c)].name;
}

enum stop_cause stop_cause_of(const char *name)
{
	for (int c = 0; name && c < STOP_CAUSE_COUNT; c++)
		if (causes[c].name && !strcmp(causes[c].name, name))
			return (enum stop_cause)c;
	return STOP_NONE;
}

enum task_status stop_task_status(const struct stop *s)
{
	return causes[valid(s->cause)].status;
}

const char *stop_error_kind(const struct stop *s)
{
	return causes[valid(s->cause)].error_kind;
}

void stop_write(const struct stop *s, json_t *result)
{
	const char *name = stop_cause_name(s->cause), *kind = stop_error_kind(s);
	json_object_set_new(result, "stop_cause", name ? json_string(name) : json_null());
	json_object_set_new(result, "stop_reason", name ? json_string(s->reason) : json_null());
	if (s->cause == STOP_WAITING)
		json_object_set_new(result, "pending_key", json_string(s->pending_key));
	else
		json_object_del(result, "pending_key");
	json_object_set_new(result, "status", json_string(task_status_name(stop_task_status(s))));
	json_object_set_new(result, "error_kind", kind[0] ? json_string(kind) : json_null());
}

/* The cause of a record that names none (an older egg's), from its status
 * and error kind. */
static enum stop_cause older_cause(const json_t *result)
{
	const char *kind = json_string_value(json_object_get(result, "error_kind")) ?: "";
	switch (task_status_of(json_string_value(json_object_get(result, "status")))) {
	case TASK_FAILED:
		return STOP_INPUT;
	case TASK_WAITING:
		return STOP_WAITING;
	case TASK_STOPPED:
		return STOP_WORKER;
	default:
		return !strcmp(kind, "budget") || json_is_true(json_object_get(result, "budget_stop")) ? STOP_BUDGET
												       : STOP_NONE;
	}
}

void stop_read(const json_t *result, struct stop *s)
{
	const char *name = json_string_value(json_object_get(result, "stop_cause"));
	enum stop_cause cause = name ? stop_cause_of(name) : older_cause(result);
	stop_set(s, cause, json_string_value(json_object_get(result, "pending_key")), "%s",
		 json_string_value(json_object_get(result, "stop_reason")) ?: "");
}
