/* test_run.c: what run/ decides without a worker: task ids from paths; figures and prompts that no wording changes. */
#include <math.h>
#include <stdlib.h>
#include <unistd.h>

#include "../../src/agents/decisions.h"
#include "../../src/pipeline/pipe.h"
#include "../../src/pipeline/stop.h"
#include "../../src/run/blocks.h"
#include "../../src/run/outcome.h"
#include "../../src/run/task.h"
#include "../../src/run/effort.h"
#include "../../src/run/whole.h"
#include "../../src/util/err.h"
#include "unit.h"

/* Decisions and subgraph outcomes are data: rewording the sentences beside
 * them changes no prompt (so no reply-cache key) and no figure. */
static void wording_is_not_data(void)
{
	json_t *a = json_array(), *b = json_array(), *rows, *reworded, *sg, *x, *y;
	char *pa, *pb, *line;
	size_t i;
	json_array_append_new(a, decision_new(DEC_NOT_FASTER, "tiling", json_pack("{s:s, s:f, s:f}", "candidate", "tiling",
				  "kernel_ms", 0.5, "parent_ms", 0.25), "tiling rejected: not faster (0.5 vs 0.25)"));
	json_array_append_new(a, decision_new(DEC_NOT_REFINED_AT_SOL, "refine", json_pack("{s:s, s:f, s:f}", "candidate",
				  "seed1", "sol_pct", 91.4, "threshold_pct", 85.0), "seed1 not refined"));
	json_array_foreach(a, i, x) {
		y = json_deep_copy(x);
		json_object_set_new(y, "text", json_string("a log line worded quite differently"));
		json_array_append_new(b, y);
	}
	pa = decisions_prompt_text(a);
	pb = decisions_prompt_text(b);
	CHECK_STR(pa, pb, "a reworded decision log line leaves the prompt's decisions as they were");
	CHECK(strstr(pa, "tiling: tiling dropped: 0.5000 ms against its parent's 0.2500 ms") &&
	      strstr(pa, "refine: seed1 left as it is at 91% of the roofline bound"),
	      "which are made from the fields: %s", pa);
	line = decision_render(json_array_get(a, 0), "{candidate} {missing}");
	CHECK_STR(line, "tiling not stated", "a field a decision lacks reads 'not stated'");
	free(line);
	free(pa);
	free(pb);
	json_decref(a);
	json_decref(b);

	rows = json_pack("[{s:f, s:f, s:f, s:b, s:s, s:s}, {s:f, s:f, s:f, s:b, s:s, s:s}, {s:f, s:b, s:s, s:s}]",
			 "eager_ms", 2.0, "kernel_ms", 1.0, "roofline_ms", 0.5, "used", 1, "status", "optimized", "why", "",
			 "eager_ms", 1.0, "kernel_ms", 0.5, "roofline_ms", 0.25, "used", 0, "status", "fails_in_program",
			 "why", "the whole failed with it", "eager_ms", 1.0, "used", 0, "status", "glue", "why", "views");
	reworded = json_deep_copy(rows);
	json_array_foreach(reworded, i, sg)
		json_object_set_new(sg, "why", json_string("reworded for people"));
	x = whole_amdahl(rows, NAN, 0);
	y = whole_amdahl(reworded, NAN, 0);
	CHECK(json_equal(x, y), "a reworded subgraph 'why' leaves the Amdahl line as it was");
	CHECK(fabs(json_real_value(json_object_get(x, "parts_speedup")) - 4.0 / 3.0) < 1e-9 &&
	      fabs(json_real_value(json_object_get(x, "bound_speedup")) - 4.0 / 1.75) < 1e-9,
	      "parts at their kernel's time when used, every tried one at its bound (got %g, %g)",
	      json_real_value(json_object_get(x, "parts_speedup")), json_real_value(json_object_get(x, "bound_speedup")));
	json_decref(x);
	/* One measurement: a used kernel's part is its time in the program over
	 * its speedup in its own task (whose eager time differs), and what the
	 * budget left in PyTorch is said. */
	json_object_set_new(json_array_get(rows, 0), "speedup_eager", json_real(4.0));
	json_array_append_new(rows, json_pack("{s:f, s:b, s:s}", "eager_ms", 1.0, "used", 0, "status", "skipped"));
	x = whole_amdahl(rows, NAN, 0);
	CHECK(fabs(json_real_value(json_object_get(x, "parts_speedup")) - 5.0 / 3.5) < 1e-9,
	      "a used part at its in-program time over its own task's speedup (got %g)",
	      json_real_value(json_object_get(x, "parts_speedup")));
	CHECK(fabs(json_real_value(json_object_get(x, "skipped_share")) - 0.2) < 1e-9 &&
	      fabs(json_real_value(json_object_get(x, "without_skipped_speedup")) - 5.0 / 2.5) < 1e-9,
	      "the skipped share and what it could still add (got %g, %g)",
	      json_real_value(json_object_get(x, "skipped_share")),
	      json_real_value(json_object_get(x, "without_skipped_speedup")));
	CHECK(json_is_null(json_object_get(x, "best_speedup")), "no torch.compile ratio known: no figure against it");
	json_decref(x);
	/* Against the user's bar: the used part (2 ms in the program, 4x in its
	 * task: 0.5 ms) compiles at 0.5 in its task; the rest at the program's
	 * ratio 0.8. Original: eager 5, compiled 1 + 3 * 0.8 = 3.4; the drop-in:
	 * plain 0.5 + 3 = 3.5, compiled 0.5 + 2.4 = 2.9; 3.4 / 2.9. */
	json_object_set_new(json_array_get(rows, 0), "task_compile_ratio", json_real(0.5));
	x = whole_amdahl(rows, 0.8, 0);
	CHECK(fabs(json_real_value(json_object_get(x, "best_speedup")) - 3.4 / 2.9) < 1e-9,
	      "the best way of each side, each part compiled at its own task's ratio (got %g)",
	      json_real_value(json_object_get(x, "best_speedup")));
	CHECK(subgraph_outcome_of("fails_in_program") == SG_FAILS_IN_PROGRAM &&
	      subgraph_outcome_of("fails in the program") == SG_UNKNOWN &&
	      !strcmp(subgraph_outcome_name(SG_SLOWER), "slower"), "outcomes go by their stable names only");
	json_decref(x);
	json_decref(y);
	json_decref(rows);
	json_decref(reworded);
}

/* What stderr received since dup2(fileno(tmp), 2), its last newline cut,
 * into text; stderr restored from `saved`. */
static void captured_end(FILE *tmp, int saved, char *text, size_t len)
{
	size_t got;

	fflush(stderr);
	dup2(saved, 2);
	close(saved);
	rewind(tmp);
	got = fread(text, 1, len - 1, tmp);
	text[got && text[got - 1] == '\n' ? got - 1 : got] = '\0';
	fclose(tmp);
}

/* The line run_outcome_exit prints for `n` stopped tasks, the first
 * `memory` of which cannot fit in memory and the last `key` of which had
 * their API key refused (stderr read back); its code. */
static char *stop_line(int n, int memory, int key, const char *resume, int *code)
{
	struct task_state t[4];
	struct outcome_words w = { "task", "run R", resume, NULL };
	struct run_outcome o;
	char text[1024] = "";
	FILE *tmp = tmpfile();
	int saved = dup(2);
	memset(t, 0, sizeof(t));
	for (int i = 0; i < n; i++) {
		if (i < memory)
			stop_set(&t[i].stop, STOP_NO_MEMORY, NULL, "the task needs about 9 GB");
		else if (i >= n - key)
			stop_set(&t[i].stop, STOP_KEY, NULL, "the endpoint refused the API key (HTTP 401)");
		else
			stop_set(&t[i].stop, STOP_WORKER, NULL, "worker died");
		t[i].status = stop_task_status(&t[i].stop);
		t[i].result = json_object();
		stop_write(&t[i].stop, t[i].result);
	}
	outcome_count(t, n, NULL, &o);
	fflush(stderr);
	dup2(fileno(tmp), 2);
	*code = run_outcome_exit(&o, t, n == 1 ? OUTCOME_ONE_TASK : OUTCOME_ANY_FOUND, &w);
	captured_end(tmp, saved, text, sizeof(text));
	for (int i = 0; i < n; i++)
		json_decref(t[i].result);
	return strdup(text);
}

/* How to go on after a stop depends on its cause: a task that cannot fit
 * in memory gets its own advice, never "run again", which would stop it
 * again; a passing failure beside it still gets the way to go on. */
static void stop_advice(void)
{
	int code;
	char *line = stop_line(1, 1, 0, NULL, &code);
	CHECK(code == EXIT_INFRA && strstr(line, "needs about 9 GB") && !strstr(line, "again"),
	      "one task that cannot fit in memory: exit 3, no 'run again': %s", line);
	free(line);
	line = stop_line(1, 0, 0, NULL, &code);
	CHECK(code == EXIT_INFRA && strstr(line, "worker died; run the same command again to go on"),
	      "one task a passing failure stopped: run the same command again: %s", line);
	free(line);
	line = stop_line(2, 2, 0, "egg bench --resume R", &code);
	CHECK(strstr(line, "2 of 2 task(s) stopped as they cannot fit in the device's memory") && !strstr(line, "resume"),
	      "tasks that all cannot fit: said so, no resume: %s", line);
	free(line);
	line = stop_line(2, 1, 0, "egg bench --resume R", &code);
	CHECK(strstr(line, "resume with 'egg bench --resume R' (the 1 that cannot fit in memory will stop again)"),
	      "one of each: resume, and which will stop again: %s", line);
	free(line);
	/* A refused key beside an earlier outage: exit 2, and the key's reason is the one quoted. */
	line = stop_line(2, 0, 1, NULL, &code);
	CHECK(code == EXIT_USAGE && strstr(line, "(the key: the endpoint refused the API key (HTTP 401))") &&
	      strstr(line, "then run the same command again") && !strstr(line, "worker died"),
	      "a key refused after an outage: exit 2, the key quoted: %s", line);
	free(line);
}

/* Branches `first` and `second` of a task, stopped for `a` and `b` (the
 * wait's key "k-wait"), joined in that order: the task's record. */
static struct stop joined(enum stop_cause a, enum stop_cause b)
{
	static const char *const why[STOP_CAUSE_COUNT] = {
		[STOP_BUDGET] = "stopped: the task's token budget is spent",
		[STOP_WORKER] = "evaluation failed: the job lost its eval worker twice",
		[STOP_WAITING] = "stopped: no reply for call 3 (waiting): awaited in the spool",
		[STOP_EGG] = "stopped: egg's candidate table is full",
	};
	enum stop_cause causes[2] = { a, b };
	struct agents agents;
	struct pipeline_env env;
	struct pipeline_opts o;
	struct pipeline_result out;
	struct pipe p, *br[2];
	struct stop s;
	memset(&agents, 0, sizeof(agents));
	memset(&env, 0, sizeof(env));
	memset(&out, 0, sizeof(out));
	memset(&p, 0, sizeof(p));
	pipeline_opts_init(&o);
	env.agents = &agents;
	env.rec = agents.rec = recorder_buffer();
	p.env = &env;
	p.o = &o;
	p.out = &out;
	p.decisions = json_array();
	for (int i = 0; i < 2; i++) {
		br[i] = pipe_fork(&p);
		if (causes[i] == STOP_WAITING)
			snprintf(br[i]->own_agents.waiting_key, sizeof(br[i]->own_agents.waiting_key), "k-wait");
		stop_set(&s, causes[i], "k-wait", "%s", why[causes[i]] ? why[causes[i]] : "?");
		pipe_stop(br[i], &s);
	}
	pipe_join(&p, br[0]);
	pipe_join(&p, br[1]);
	CHECK(p.stop && p.broken == (a == STOP_EGG || b == STOP_EGG), "the task stops (broken only for egg's own failure)");
	CHECK(!strcmp(agents.waiting_key, (a == STOP_WAITING || b == STOP_WAITING) && out.stop.cause == STOP_WAITING
						  ? "k-wait" : ""),
	      "the agents' awaited key comes with the record it belongs to ('%s')", agents.waiting_key);
	recorder_close(env.rec);
	json_decref(p.decisions);
	return out.stop;
}

/* The join rule (stop.h): branches that stopped for several causes give
 * the task one record, whole, from one branch, whatever the order they
 * join in: a waiting branch and a dead worker's read "waiting" with the
 * wait's own reason and key, never the worker's reason with no key. */
static void join_rule(void)
{
	for (int order = 0; order < 2; order++) {
		struct stop s = order ? joined(STOP_WORKER, STOP_WAITING) : joined(STOP_WAITING, STOP_WORKER);
		json_t *rec = json_object();
		stop_write(&s, rec);
		CHECK(s.cause == STOP_WAITING && !strcmp(s.pending_key, "k-wait") && strstr(s.reason, "(waiting)"),
		      "a wait and a dead worker (%s first) join to the wait, its key and its reason: '%s' key '%s'",
		      order ? "the worker" : "the wait", s.reason, s.pending_key);
		CHECK(!strcmp(json_string_value(json_object_get(rec, "status")) ?: "", "waiting") &&
		      !strcmp(json_string_value(json_object_get(rec, "stop_cause")) ?: "", "waiting") &&
		      !strcmp(json_string_value(json_object_get(rec, "pending_key")) ?: "", "k-wait") &&
		      json_is_null(json_object_get(rec, "error_kind")),
		      "and its record says waiting throughout (status, cause, key; no error kind)");
		json_decref(rec);
	}
	{
		struct stop s = joined(STOP_BUDGET, STOP_WORKER), e = joined(STOP_WAITING, STOP_EGG);
		CHECK(s.cause == STOP_WORKER && strstr(s.reason, "eval worker") && !s.pending_key[0] &&
		      stop_task_status(&s) == TASK_STOPPED && !strcmp(stop_error_kind(&s), "infra"),
		      "a spent budget and a dead worker: stopped, the worker's reason ('%s')", s.reason);
		CHECK(e.cause == STOP_EGG && !e.pending_key[0] && stop_task_status(&e) == TASK_STOPPED,
		      "egg's own failure outranks a wait, and leaves no key behind");
		s = joined(STOP_WORKER, STOP_WORKER);
		e = joined(STOP_NONE, STOP_BUDGET);
		CHECK(s.cause == STOP_WORKER && e.cause == STOP_BUDGET && stop_task_status(&e) == TASK_DONE &&
		      !strcmp(stop_error_kind(&e), "budget"), "one cause joins to itself; a budget alone is a done task's");
	}
}

/* Every egg's records read back as one stop record: the cause when named,
 * else the status and error kind of an older one; an older record's
 * speed-of-light note or "no valid kernel" in stop_reason is no stop. */
static void stop_records(void)
{
	static const struct {
		const char *json;
		enum stop_cause cause;
		const char *reason, *key;
	} rows[] = {
		{ "{\"status\": \"done\", \"found\": true, \"stop_reason\": \"at the speed of light: seed1\"}", STOP_NONE,
		  "", "" },
		{ "{\"status\": \"done\", \"found\": false, \"stop_reason\": \"no valid kernel: no seed passed\"}",
		  STOP_NONE, "", "" },
		{ "{\"status\": \"done\", \"error_kind\": \"budget\", \"stop_reason\": \"stopped: budget\"}", STOP_BUDGET,
		  "stopped: budget", "" },
		{ "{\"status\": \"failed\", \"error_kind\": \"input\", \"stop_reason\": \"syntax error\"}", STOP_INPUT,
		  "syntax error", "" },
		{ "{\"status\": \"stopped\", \"stop_cause\": \"memory\", \"stop_reason\": \"needs 9 GB\"}",
		  STOP_NO_MEMORY, "needs 9 GB", "" },
		{ "{\"status\": \"stopped\", \"error_kind\": \"infra\", \"infra_error\": true, \"stop_reason\": \"died\"}",
		  STOP_WORKER, "died", "" },
		{ "{\"status\": \"waiting\", \"pending_key\": \"abc\", \"stop_reason\": \"waiting\"}", STOP_WAITING,
		  "waiting", "abc" },
		{ "{\"status\": \"stopped\", \"stop_cause\": \"worker\", \"pending_key\": \"stray\", "
		  "\"stop_reason\": \"died\"}", STOP_WORKER, "died", "" },
	};
	for (size_t i = 0; i < sizeof(rows) / sizeof(rows[0]); i++) {
		json_t *j = json_loads(rows[i].json, 0, NULL), *again = json_object();
		struct stop s, back;
		stop_read(j, &s);
		CHECK(s.cause == rows[i].cause && !strcmp(s.reason, rows[i].reason) && !strcmp(s.pending_key, rows[i].key),
		      "record %zu reads as cause %s, reason '%s', key '%s'", i, stop_cause_name(s.cause) ?: "none", s.reason,
		      s.pending_key);
		stop_write(&s, again);
		stop_read(again, &back);
		CHECK(!memcmp(&s, &back, sizeof(s)) &&
		      !strcmp(json_string_value(json_object_get(again, "status")), task_status_name(stop_task_status(&s))),
		      "and is written back to the same record, its status derived");
		json_decref(j);
		json_decref(again);
	}
}

/* The line program_outcome_exit prints for a finished run of one subgraph
 * task that found a kernel, with the verdict `v` (stderr read back); its
 * code, and whether -o would be written. */
static char *program_line(const struct program_verdict *v, int *code, int *dropin)
{
	struct outcome_words w = { "subgraph task", "'prog.py'", "egg optimize prog.py --split --resume R", NULL };
	struct run_outcome o;
	char text[1024] = "";
	FILE *tmp = tmpfile();
	int saved = dup(2);
	memset(&o, 0, sizeof(o));
	o.tasks = o.found = 1;
	*dropin = program_outcome_dropin(&o, v);
	fflush(stderr);
	dup2(fileno(tmp), 2);
	*code = program_outcome_exit(&o, v, &w, "out.py");
	captured_end(tmp, saved, text, sizeof(text));
	return strdup(text);
}

/* A whole program's verdict is decided from typed values (outcome.c): a
 * drop-in is written and exit 0 only when it passed with kernels in it and
 * the user's clock did not find it slower; the lines say why not. */
static void program_verdicts(void)
{
	struct program_verdict v = { 1, 1, 0, 1, 1, 0, 2.45, 2.31, NULL, NULL, NULL, NULL };
	int code, dropin;
	char *line = program_line(&v, &code, &dropin);
	CHECK(code == EXIT_DONE && dropin && !line[0], "passed, kernels in it, faster by the user's clock: exit 0 and "
	      "-o written, no line ('%s')", line);
	free(line);
	v.faster = 0;
	v.within_noise = 1;
	v.dropin_ms = 2.43;
	v.dropin_way = "compiled";
	v.composed = "RUN/program.py";
	line = program_line(&v, &code, &dropin);
	CHECK(code == EXIT_NEGATIVE && !dropin && strstr(line, "not faster than the program as its user runs it: 2.4300 "
	      "ms per forward (compiled)") && strstr(line, "within the noise") && strstr(line, "'out.py' is not written") &&
	      strstr(line, "it stays in 'RUN/program.py'"), "judged and not faster: exit 1, no -o, the figures: %s", line);
	free(line);
	v.judged = 0;
	line = program_line(&v, &code, &dropin);
	CHECK(code == EXIT_DONE && dropin, "not judged (the CPU): the figures are recorded, the drop-in is written");
	free(line);
	v.unchanged = 1;
	line = program_line(&v, &code, &dropin);
	CHECK(code == EXIT_NEGATIVE && !dropin && strstr(line, "no kernel went into 'prog.py': the program is unchanged "
	      "('out.py' is not written)"), "unchanged: exit 1, no -o: %s", line);
	free(line);
	v.unchanged = 0;
	v.passed = 0;
	v.reason = "outputs differ";
	line = program_line(&v, &code, &dropin);
	CHECK(code == EXIT_INFRA && !dropin && strstr(line, "does not match the program (outputs differ)"),
	      "the composed program failing end to end is egg's own fault: exit 3: %s", line);
	free(line);
}

/* The user's clock decides on every round of each side's best way: a
 * drop-in whose median is lower but whose rounds overlap the original's is
 * within the noise, not faster. */
static void clearly_faster(void)
{
	json_t *orig = json_pack("{s:f, s:[f, f, f]}", "wall_ms", 2.45, "wall_rounds_ms", 2.44, 2.45, 2.47);
	json_t *gain = json_pack("{s:f, s:[f, f, f]}", "wall_ms", 2.31, "wall_rounds_ms", 2.30, 2.31, 2.33);
	json_t *overlap = json_pack("{s:f, s:[f, f, f]}", "wall_ms", 2.43, "wall_rounds_ms", 2.42, 2.43, 2.46);
	json_t *old_record = json_pack("{s:f}", "wall_ms", 2.445);
	CHECK(whole_clearly_faster(orig, gain), "every round of the drop-in under every round of the original: faster");
	CHECK(!whole_clearly_faster(orig, overlap), "a lower median whose slowest round (2.46) is not under the "
	      "original's fastest (2.44): within the noise, not faster");
	CHECK(!whole_clearly_faster(gain, orig), "a slower drop-in is not faster");
	CHECK(whole_clearly_faster(orig, old_record) == 0 && whole_clearly_faster(old_record, gain),
	      "a way without rounds counts its one figure");
	json_decref(orig);
	json_decref(gain);
	json_decref(overlap);
	json_decref(old_record);
}

/* The effort by time at stake (effort.c): a part worth 60% of what is at
 * stake gets more calls than one worth 5%; a part at its bound gets its
 * seeds and nothing more; the budget holds; the same figures, the same
 * effort. */
static void no_block(json_t *row, const char *block)
{
	(void)block;
	json_object_set_new(row, "status", json_string("in_block"));
}

/* A block whose subgraphs are repeats (their tasks first occur in an
 * earlier block, where their baselines are) is decided by those baselines:
 * ConvNeXt-T's stage-3 blocks were all "not measured" before. */
static void block_of_repeats(void)
{
	json_t *rows = json_pack("[{s:s, s:s, s:s, s:f, s:f, s:f}, {s:s, s:s, s:s, s:f, s:f, s:f},"
				 " {s:s, s:s, s:s}, {s:s, s:s, s:s}]",
				 "file", "p.py", "task", "p.py", "status", "task", "task_eager_ms", 0.2,
				 "task_compile_ms", 0.15, "task_roofline_ms", 0.05,
				 "file", "q.py", "task", "q.py", "status", "task", "task_eager_ms", 0.1,
				 "task_compile_ms", 0.08, "task_roofline_ms", 0.02,
				 "file", "p2.py", "task", "p.py", "status", "task",
				 "file", "q2.py", "task", "q.py", "status", "task");
	json_t *blocks = json_pack("[{s:s, s:s, s:s, s:[i,i], s:f, s:f, s:f}]", "name", "p again .. q again",
				   "file", "blk.py", "task", "blk.py", "replaces", 2, 3, "task_eager_ms", 0.25,
				   "task_compile_ms", 0.2, "task_roofline_ms", 0.02);
	json_t *cuts = blocks_choose(rows, blocks, CUT_AUTO, 0, no_block);
	json_t *c = json_array_get(cuts, 0);
	CHECK(c && !strcmp(json_string_value(json_object_get(c, "chosen")), "block") &&
	      fabs(json_real_value(json_object_get(c, "subgraphs_win_ms")) - 0.16) < 1e-9 &&
	      !strcmp(json_string_value(json_object_get(json_array_get(rows, 3), "status")), "in_block"),
	      "a block of repeats is decided by their tasks' baselines (0.18 ms against 0.16): %s",
	      c ? json_string_value(json_object_get(c, "why")) : "no decision");
	json_decref(cuts);
	json_decref(rows);
	json_decref(blocks);
}

static void effort_by_stake(void)
{
	struct pipeline_opts base;
	struct effort_task t[4], again[4];
	int total = 0;
	pipeline_opts_init(&base);
	memset(t, 0, sizeof(t));
	/* bar and bound, ms: stakes 0.60, 0.25, 0.05, and one at 95% of its bound */
	t[0] = (struct effort_task){ .bar_ms = 0.70, .roofline_ms = 0.10, .occurrences = 1 };
	t[1] = (struct effort_task){ .bar_ms = 0.15, .roofline_ms = 0.10, .occurrences = 5 };
	t[2] = (struct effort_task){ .bar_ms = 0.06, .roofline_ms = 0.01, .occurrences = 1 };
	t[3] = (struct effort_task){ .bar_ms = 0.20, .roofline_ms = 0.19, .occurrences = 3 };
	memcpy(again, t, sizeof(t));
	effort_allocate(t, 4, 48, &base);
	for (int i = 0; i < 4; i++)
		total += t[i].planned_calls;
	CHECK(t[0].planned_calls > t[2].planned_calls && t[0].planned_calls > t[1].planned_calls,
	      "the part worth 60%% of the stake gets more calls (%d) than those worth 25%% (%d) and 5%% (%d)",
	      t[0].planned_calls, t[1].planned_calls, t[2].planned_calls);
	CHECK(t[0].refine_rounds > 1 && t[0].fresh_seeds >= 1 && t[0].tuning,
	      "it gets extra refinement rounds (%d) and a fresh seed (%d) on top of the default pipeline",
	      t[0].refine_rounds, t[0].fresh_seeds);
	CHECK(t[3].at_bound && t[3].planned_calls == 2 && !t[3].refine_rounds && !t[3].tuning,
	      "the part at 95%% of its bound gets its two seeds and nothing more (%d calls)", t[3].planned_calls);
	CHECK(total <= 48 && total >= 40, "the budget of 48 calls holds and is spent (%d)", total);
	CHECK(effort_calls(2, 1, 0, 1, 3) == 12, "the default pipeline plans 12 calls: 2 seeds, their refinement, 3 "
	      "tuning stages");
	effort_allocate(again, 4, 48, &base);
	CHECK(!memcmp(t, again, sizeof(t)), "the same figures give the same effort");
	again[0].bar_ms = NAN;
	effort_allocate(again, 4, 48, &base);
	CHECK(again[0].refine_rounds == 1 && again[0].tuning && again[0].planned_calls == 12,
	      "a part whose time is not measured gets what the flags give (%d calls)", again[0].planned_calls);
	base.refine = 0;
	memset(base.stage_on, 0, sizeof(base.stage_on));
	effort_allocate(t, 4, 48, &base);
	CHECK(t[0].planned_calls == 2 && t[1].planned_calls == 2,
	      "with --no-refine --no-hw-tune every part gets its seeds only, as the flags say");
}

void suite_run(void)
{
	static const char *const cases[][3] = {
		{ "KernelBench/level1/19_ReLU.py", "level1__19_ReLU", "level1" },
		{ "task.py", "tasks__task", "tasks" },
		{ "./x/a b+c.py", "x__a_b_c", "x" },
		{ "/abs/level2/4_Conv2d_Mish_Mish.py", "level2__4_Conv2d_Mish_Mish", "level2" },
		{ "./only.py", "tasks__only", "tasks" },
	};
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		char *group = NULL, *id = task_id_of(cases[i][0], &group);
		CHECK_STR(id, cases[i][1], "task id of %s", cases[i][0]);
		CHECK_STR(group, cases[i][2], "its group");
		free(id);
		free(group);
	}
	wording_is_not_data();
	stop_advice();
	join_rule();
	stop_records();
	program_verdicts();
	clearly_faster();
	effort_by_stake();
	block_of_repeats();
}
