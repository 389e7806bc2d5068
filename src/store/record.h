/* record.h: the run directory of one task's pipeline run: prompts, replies, kernels, evaluations. */
#ifndef EGG_RECORD_H
#define EGG_RECORD_H

#include <jansson.h>

/*
 * Layout of a run directory:
 *   calls/NNN-AGENT.MODE.{system,user,reply}.md and calls/NNN-AGENT.MODE.json (tokens, latency, outcome)
 *   candidates/ID.py, candidates/ID.eval.json, candidates/ID.profile.json
 *   decisions.jsonl    one line per stage decision
 *   trajectory.json    every step so far (rewritten atomically after each step)
 *   run.json           settings and versions
 * Writes of the folder are best effort after open: a full disk never fails
 * the run, it sets recorder_failed (the summary says so). The sink's writes
 * (the run store) are not: the first that fails is kept
 * (recorder_store_error), and the pipeline stops on it. Thread-safe.
 */
struct recorder;

struct recorder_sink {
	/* Optional hooks (the run store); any may be NULL. Each returns 0, or
	 * -1 with the error set (the store refused the write). */
	int (*call)(void *ctx, json_t *call);
	int (*candidate)(void *ctx, const char *id, const char *stage, const char *source, json_t *eval);
	int (*profile)(void *ctx, const char *id, json_t *profile);
	int (*decision)(void *ctx, json_t *decision);
	int (*step)(void *ctx, json_t *step);
	void *ctx;
};

/* Creates the folder, removing what an earlier run of the task recorded
 * there (calls, candidates, decisions, trajectory, run and summary files,
 * final.py; nothing else), so that a replay's folder matches the store.
 * Returns NULL with ERR_INFRA when it cannot. */
struct recorder *recorder_open(const char *dir, const struct recorder_sink *sink);
const char *recorder_dir(const struct recorder *r);
/* Returns the call's sequence number (for file names). */
int recorder_call(struct recorder *r, const char *template_name, const char *stage, const char *candidate,
		  const char *system, const char *user, const char *reply, json_t *meta);
void recorder_candidate(struct recorder *r, const char *id, const char *stage, const char *source,
			json_t *eval);
void recorder_profile(struct recorder *r, const char *id, json_t *profile);
void recorder_decision(struct recorder *r, json_t *decision);
/* Appends a trajectory step (borrowed) and rewrites trajectory.json. */
void recorder_step(struct recorder *r, json_t *step);
/* The trajectory so far (borrowed). */
json_t *recorder_trajectory(struct recorder *r);
void recorder_write_json(struct recorder *r, const char *name, json_t *obj);
/* Writes `text` as the file `name` of the recorder's folder (none for a buffer). */
void recorder_write_text(struct recorder *r, const char *name, const char *text);
int recorder_failed(const struct recorder *r);
/* Why the sink (the run store) refused a write, the first time it did; NULL
 * while every write went through. */
const char *recorder_store_error(struct recorder *r);
void recorder_close(struct recorder *r);

/*
 * A buffer: a recorder that writes nothing and keeps every event (calls,
 * candidates, profiles, decisions, steps) in order, for work that runs
 * beside other work (the pipeline's branches): replaying buffers into the
 * task's recorder in a fixed order keeps the folder and the store the same
 * whatever finished first. recorder_replay writes the events into `to` in
 * order, as if they happened now (calls get their numbers then), and frees
 * the buffer; recorder_close frees one unreplayed.
 */
struct recorder *recorder_buffer(void);
void recorder_replay(struct recorder *to, struct recorder *buffer);

#endif
