/* report.h: a run's metrics (docs/method.md) and their text, JSON, CSV and HTML forms. */
#ifndef EGG_REPORT_H
#define EGG_REPORT_H

#include <stdio.h>

#include <jansson.h>

#include "../store/store.h"

/*
 * {"run": {...}, "all": METRICS, "groups": {GROUP: METRICS}, "tasks": [ROW]}
 * METRICS: tasks, finished, failed, success, success_rate, fast_0, fast_1,
 * fast_1_5, fast_2 (fractions of all tasks, vs eager), speedup_eager
 * {mean, geomean, n}, speedup_compile {mean, geomean, n}, prompt_tokens_per_task,
 * completion_tokens_per_task, cached_prompt_tokens_per_task,
 * cache_write_tokens_per_task, reasoning_tokens_per_task, cost_per_task,
 * cache_saved_usd_per_task (negative when the prompt cache's writes cost
 * more than its reads saved), wall_s_per_task, stages [{stage, title,
 * gain_mean, gain_geomean, cumulative, n}]. ROW: a task's figures, its
 * usage's tokens (cache_write_tokens among them), cost_usd and
 * cache_saved_usd included.
 * `run_id` may be the beginning of one run's id (store_run_get). NULL with ERR_INPUT when
 * the run is unknown or ambiguous.
 */
json_t *report_compute(struct store *s, const char *run_id);
void report_print_text(FILE *f, const json_t *rep);
/* One row per task. Newly allocated. */
char *report_csv(const json_t *rep);
/* A self-contained page (inline CSS and SVG, no network). */
int report_html(const json_t *rep, const char *path);

/* Adds a run's whole program (RUNS_DIR/program.json of egg optimize
 * --split, when there is one) to its report as "program"; nothing
 * otherwise. */
void report_attach_program(json_t *rep, const char *run_dir);
/* The whole program of an `egg optimize --split` run (its program.json):
 * one line per subgraph, the end-to-end result and the Amdahl line. */
void report_print_program(FILE *f, const json_t *program);

#endif
