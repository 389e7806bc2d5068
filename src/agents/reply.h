/* reply.h: turning LLM replies into one Python file or one schema-checked JSON object. */
#ifndef EGG_REPLY_H
#define EGG_REPLY_H

#include <stddef.h>

#include <jansson.h>

/*
 * Extracts exactly one complete Python file from a code agent's reply:
 * - fenced blocks (```python, ```py or bare ```): the one that defines
 *   `class ModelNew`; when several do, the last (replies often revise);
 * - an opened fence that never closes means the reply was cut off: error;
 * - no fences: the text from its first import line, if it defines ModelNew.
 * Returns a newly allocated string, or NULL with the reason in `why`.
 */
char *reply_extract_code(const char *text, char *why, size_t why_len);

/* The JSON shapes agents answer with (docs/method.md). */
enum reply_schema {
	SCHEMA_PROFILE_REFINE,	/* worth_optimizing ("yes"|"no"), bottleneck, modification_plan */
	SCHEMA_PROFILE_TUNE,	/* change ("yes"|"no"), bottleneck, modification_plan */
	SCHEMA_DEBUG,		/* critical_issue, modification_plan */
};

/*
 * Extracts one JSON object from an agent's reply (a ```json block, a bare
 * object, or an object embedded in prose) and checks it against `schema`:
 * every field present and a non-empty string (a missing one is never read
 * as a default), worth_optimizing and change "yes" or "no". Extra fields
 * are dropped. Returns a new object, or NULL with `why` set.
 */
json_t *reply_extract_json(const char *text, enum reply_schema schema, char *why, size_t why_len);

/*
 * One line naming a kernel file's approach, for the next seed's prompt: the
 * file's `# approach: ...` comment when it has one, else what the code
 * shows (its @triton.jit kernels' names, and whether they use tl.dot or
 * atomics). Never code. Writes at most `len` bytes into `out`.
 */
void reply_approach(const char *source, char *out, size_t len);

#endif
