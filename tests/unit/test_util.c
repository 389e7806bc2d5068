/* test_util.c: unit tests for buf, strvec, template, hash, secrets, options, atomic writes and progress beats. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "../../src/util/opt.h"
#include "../../src/util/beat.h"
#include "../../src/util/buf.h"
#include "../../src/util/err.h"
#include "../../src/util/fs.h"
#include "../../src/util/hash.h"
#include "../../src/util/strvec.h"
#include "../../src/util/suggest.h"
#include "../../src/util/template.h"
#include "unit.h"

static void test_buf(void)
{
	struct buf b = BUF_INIT;
	char *p;
	CHECK_STR(buf_str(&b), "", "empty buf reads as empty string");
	buf_adds(&b, "abc");
	buf_addf(&b, "-%d-%s", 42, "x");
	CHECK_STR(buf_str(&b), "abc-42-x", "buf_adds and buf_addf append");
	buf_truncate(&b, 2);
	CHECK_STR(buf_str(&b), "ab", "buf_truncate shortens");
	p = buf_detach(&b);
	CHECK(b.data == NULL && b.len == 0, "buf_detach leaves the buf empty");
	CHECK_STR(p, "ab", "buf_detach hands over the contents");
	free(p);

	buf_init(&b, 5);
	CHECK(buf_adds(&b, "12345") == 0, "a buf can fill up to its cap");
	CHECK(buf_adds(&b, "6") == -1, "a buf refuses to grow past its cap");
	CHECK_STR(buf_str(&b), "12345", "a refused add leaves the contents unchanged");
	buf_release(&b);

	b = (struct buf)BUF_INIT;
	buf_add_size(&b, 512);
	buf_adds(&b, ", ");
	buf_add_size(&b, 49152);
	buf_adds(&b, ", ");
	buf_add_size(&b, 3.1e6);
	buf_adds(&b, ", ");
	buf_add_size(&b, 1e9);
	CHECK_STR(buf_str(&b), "512 bytes, 49.2 KB, 3.1 MB, 1.00 GB", "sizes in the unit that shows them, bytes under 1 KB");
	buf_release(&b);
}

static void test_strvec(void)
{
	struct strvec sv = STRVEC_INIT;
	strvec_split(&sv, "  ssh  gpu1 egg   worker ");
	CHECK(sv.n == 4 && !strcmp(sv.v[0], "ssh") && !strcmp(sv.v[3], "worker") && !sv.v[4],
	      "strvec_split splits on runs of whitespace and NULL-terminates");
	strvec_clear(&sv);
	strvec_push(&sv, "A=1");
	strvec_push(&sv, "B=2");
	strvec_setenv(&sv, "A", "3");
	CHECK_STR(strvec_getenv(&sv, "A"), "3", "strvec_setenv replaces a variable");
	strvec_unsetenv(&sv, "B");
	CHECK(sv.n == 1 && strvec_getenv(&sv, "B") == NULL, "strvec_unsetenv removes a variable");
	strvec_clear(&sv);
}

static const char *lookup(const char *name, void *ctx)
{
	(void)ctx;
	if (!strcmp(name, "who"))
		return "world {x}";
	if (!strcmp(name, "n"))
		return "3";
	return NULL;
}

static void test_template(void)
{
	struct buf b = BUF_INIT;
	CHECK(template_expand("hello {who}, {{literal}} n={n}", lookup, NULL, &b) == 0,
	      "template expands names and brace escapes");
	CHECK_STR(buf_str(&b), "hello world {x}, {literal} n=3",
		  "substituted values are not rescanned");
	buf_reset(&b);
	CHECK(template_expand("bad {nope}", lookup, NULL, &b) == -1 && strstr(err_msg(), "'nope'"),
	      "an unknown name is an error that names it");
	buf_reset(&b);
	CHECK(template_expand("lone } brace", lookup, NULL, &b) == -1, "a lone closing brace is an error");
	buf_reset(&b);
	CHECK(template_expand("open {who", lookup, NULL, &b) == -1, "an unterminated reference is an error");
	buf_release(&b);
}

static void test_hash(void)
{
	char hex[65];
	hash_hex("abc", 3, hex);
	CHECK_STR(hex, "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad",
		  "sha-256 of 'abc' matches the standard vector");
}

static void test_secrets(void)
{
	char *r;
	secret_register("sk-unit-secret-999");
	r = secret_redact("key=sk-unit-secret-999; again sk-unit-secret-999.");
	CHECK_STR(r, "key=[redacted]; again [redacted].", "secret_redact replaces every occurrence");
	free(r);
	err_set(ERR_INFRA, "server said: bad key sk-unit-secret-999");
	CHECK(!strstr(err_msg(), "sk-unit-secret-999"), "error messages are redacted when recorded");
	CHECK(secret_present("x sk-unit-secret-999") && !secret_present("nothing"),
	      "secret_present finds registered secrets");
	err_clear();
}

static void test_opt(void)
{
	int flag = 0, n = 0, cache = 1;
	double d = 0;
	const char *s = NULL;
	const struct opt table[] = {
		{ "flag", 'f', OPT_FLAG, &flag, NULL, "" },
		{ "n", 0, OPT_INT, &n, "N", "" },
		{ "d", 0, OPT_DOUBLE, &d, "D", "" },
		{ "s", 0, OPT_STRING, &s, "S", "" },
		{ "no-cache", 0, OPT_NEGATE, &cache, NULL, "" },
		OPT_TABLE_END,
	};
	const struct opt *tables[] = { table, NULL };
	char *argv1[] = { "pos1", "-f", "--n", "7", "--d=2.5", "--s", "x", "--no-cache", "--", "--pos2" };
	char *argv2[] = { "--bogus" };
	char *argv3[] = { "--n" };
	char *argv4[] = { "--n", "seven" };
	struct strvec pos = STRVEC_INIT;

	CHECK(opt_parse(tables, 10, argv1, &pos) == 0, "opt_parse accepts a full command line");
	CHECK(flag == 1 && n == 7 && d == 2.5 && s && !strcmp(s, "x") && cache == 0,
	      "opt_parse sets flags, ints, doubles, strings and negations");
	CHECK(pos.n == 2 && !strcmp(pos.v[0], "pos1") && !strcmp(pos.v[1], "--pos2"),
	      "positional words and everything after -- are kept in order");
	strvec_clear(&pos);
	CHECK(opt_parse(tables, 1, argv2, &pos) == -1 && err_kind() == ERR_INPUT &&
	      strstr(err_msg(), "unknown option '--bogus'"), "an unknown option is a usage error");
	CHECK(opt_parse(tables, 1, argv3, &pos) == -1 && strstr(err_msg(), "needs a value"),
	      "a missing value is a usage error");
	CHECK(opt_parse(tables, 2, argv4, &pos) == -1 && strstr(err_msg(), "integer"),
	      "a malformed integer is a usage error");
	strvec_clear(&pos);
}

/* What a process killed between writing and renaming leaves is removed;
 * a live writer's temporary file is not. */
static void test_stale_temps(void)
{
	char tmpl[] = "/tmp/egg-unit-fs-XXXXXX";
	char *dir = mkdtemp(tmpl), *dead, *live, *entry;
	char name[64];
	dead = fs_join(dir, "k.json.tmp.2147483646.1");
	snprintf(name, sizeof(name), "k.json.tmp.%ld.7", (long)getpid());
	live = fs_join(dir, name);
	entry = fs_join(dir, "k.json");
	CHECK(fs_write_atomic(entry, "{}", 2) == 0 && fs_write_atomic_nosync(dead, "x", 1) == 0 &&
	      fs_write_atomic_nosync(live, "y", 1) == 0, "(an entry and two temporary files are written)");
	fs_remove_stale_temps(dir);
	CHECK(!fs_exists(dead) && fs_exists(live) && fs_exists(entry),
	      "a dead process's temporary file is removed; a live one's and the entry stay");
	fs_remove_tree(dir);
	free(dead);
	free(live);
	free(entry);
}

static void test_relative(void)
{
	static const char *cases[][3] = {
		{ "/nowhere/a/b", "/nowhere/a/b/runs/x/final.py", "runs/x/final.py" },
		{ "/nowhere/a/b", "/nowhere/a/c/final.py", "../c/final.py" },
		{ "/nowhere/a/b", "/nowhere/other/f.py", "../../other/f.py" },
		{ "/nowhere/ab", "/nowhere/abc/f.py", "../abc/f.py" },
		{ "/", "/nowhere/f.py", "nowhere/f.py" },
	};
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		char *r = fs_relative(cases[i][0], cases[i][1]);
		CHECK_STR(r, cases[i][2], "fs_relative: a path relative to a folder");
		free(r);
	}
}

static void test_suggest(void)
{
	const char *cmds[] = { "optimize", "bench", "eval", "report", "runs", "split" };
	CHECK_STR(suggest_closest("optimise", 8, cmds, 6) ?: "(none)", "optimize", "one substitution is a typo");
	CHECK_STR(suggest_closest("evla", 4, cmds, 6) ?: "(none)", "eval", "a swap of neighbours is one edit");
	CHECK(suggest_closest("frobnicate", 10, cmds, 6) == NULL, "a word near nothing gets no guess");
	CHECK(suggest_closest("rurs", 4, cmds, 6) == NULL || !strcmp(suggest_closest("rurs", 4, cmds, 6), "runs"),
	      "a short word gets at most one edit");
	CHECK(suggest_closest("eval", 4, cmds, 6) == NULL, "an exact name is not a typo");
	CHECK(suggest_distance("kitten", 6, "sitting", 7) == 3, "the edit distance of the textbook pair");
}

/* A phase's progress lines, on a clock the test gives: a new step at once,
 * the same one again at most every BEAT_S, ticks in between silent; a
 * held phase says nothing before its hold; a next job's clock goes on. */
static void test_beat(void)
{
	struct beat b = BEAT_INIT;
	char line[256];
	FILE *f;
	int said = 0;
	beat_begin(&b, "measuring the baselines", 0);
	CHECK(beat_due(&b, NULL, 1) == BEAT_NONE, "a tick 1 s in says nothing (the start line was said)");
	CHECK(beat_due(&b, "baseline: loading", 2) == BEAT_NEW, "a new step is said at once");
	CHECK(beat_due(&b, "baseline: loading", 5) == BEAT_NONE, "the same step again 3 s later is not");
	for (double t = 6; t < 11; t += 1)
		said += beat_due(&b, NULL, t) != BEAT_NONE;
	CHECK(said == 0, "ticks once a second less than 9 s after the line say nothing (%d)", said);
	CHECK(beat_due(&b, NULL, 11) == BEAT_AGAIN && !strcmp(beat_step(&b), "baseline: loading"),
	      "9 s after the last line (a tick early: never 10 s without one) the step is repeated");
	said = 0;
	for (double t = 11.5; t <= 62; t += 0.5)
		said += beat_due(&b, NULL, t) != BEAT_NONE;
	CHECK(said == 5, "a step that lasts 50 s more gets a line every 9 s (%d)", said);
	CHECK(beat_due(&b, NULL, 2) == BEAT_NONE && beat_seconds(&b) == 64, "a next job's seconds go on (%g)",
	      beat_seconds(&b));
	beat_begin(&b, "evaluating", BEAT_HOLD_S);
	CHECK(beat_due(&b, "trial 1/5", 5) == BEAT_NONE, "a held phase's step before the hold is not said");
	CHECK(beat_due(&b, NULL, 6.5) == BEAT_NONE, "nor a tick");
	CHECK(beat_due(&b, NULL, 7) == BEAT_AGAIN && !strcmp(beat_step(&b), "trial 1/5"),
	      "at the hold the step in hand is said");
	CHECK(beat_due(&b, "trial 2/5", 12) == BEAT_NEW, "after it every new step is");
	f = tmpfile();
	b = (struct beat)BEAT_INIT;
	b.out = f;
	b.label = "split";
	beat_begin(&b, "starting the eval worker", 0);
	beat_progress(&b, "split: tracing the program", 3);
	beat_progress(&b, NULL, 8);
	beat_progress(&b, NULL, 13);
	rewind(f);
	CHECK(fgets(line, sizeof(line), f) && !strcmp(line, "egg: split, 3 s: tracing the program\n"),
	      "beat_progress says the step without repeating its label: %s", line);
	CHECK(fgets(line, sizeof(line), f) && !strcmp(line, "egg: split, 13 s: tracing the program\n"),
	      "and again 10 s later: %s", line);
	CHECK(!fgets(line, sizeof(line), f), "and nothing else");
	fclose(f);
	b.out = NULL;
	beat_progress(&b, "split: measuring", 20);	/* quiet: nothing, no crash */
}

void suite_util(void)
{
	test_beat();
	test_relative();
	test_suggest();
	test_stale_temps();
	test_buf();
	test_strvec();
	test_template();
	test_hash();
	test_secrets();
	test_opt();
}
