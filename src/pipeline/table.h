/* table.h: the stage table a run prints: each stage's best time and its speedup over eager. */
#ifndef EGG_TABLE_H
#define EGG_TABLE_H

#include <stdio.h>

#include <jansson.h>

/* Prints the rows ([{title, kernel_ms}]) of a task's stages, with eager and
 * torch.compile from `baseline` (may be NULL), labelled with the device and
 * the clock (CPU times are said to be the interpreter's). */
void pipeline_print_table(FILE *f, const char *task, const char *device, const char *clock, const json_t *baseline,
			  const json_t *rows);

/* One line: where a task's time went (its summary's "time": wall_s when
 * known, llm_s, eval_s, device_wait_s, llm_chain). Nothing without one. */
void pipeline_print_time(FILE *f, const json_t *time);
/* The task's LLM calls from its summary's "usage": tokens, what the
 * provider's prompt cache served and saved, cost; how many replies came
 * from the reply cache, and when all did, only that ("no request sent").
 * Nothing without calls. */
void pipeline_print_usage(FILE *f, const json_t *usage);

#endif
