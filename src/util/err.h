/* err.h: the one error policy: library functions return -1 and record why here. */
#ifndef EGG_ERR_H
#define EGG_ERR_H

/*
 * Each thread has one pending error: a kind and a message. Library-level
 * functions set it and return -1; command functions read it, print
 * `egg: error: MESSAGE` and exit with the code the kind maps to.
 * Messages are lowercase, without a final period, and quote the subject.
 * Registered secrets are redacted from every message as it is recorded.
 */
enum err_kind {
	ERR_NONE = 0,
	ERR_INPUT,	/* bad usage or bad input: exit 2 */
	ERR_INFRA,	/* infrastructure failure: exit 3 */
	ERR_REJECTED,	/* done, negative outcome: exit 1 */
	ERR_WAITING,	/* not done: an LLM reply is awaited in the spool: exit 4 */
	ERR_NO_MEMORY,	/* infrastructure: the job cannot fit in its device's memory (refused up
			 * front): exit 3, and running it again there will not help */
};

/* Exit codes of docs/design.md. */
enum egg_exit {
	EXIT_DONE = 0,
	EXIT_NEGATIVE = 1,
	EXIT_USAGE = 2,
	EXIT_INFRA = 3,
	EXIT_WAITING = 4,	/* egg's own: replies awaited in the --llm-spool folder */
};

void err_set(enum err_kind kind, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));
/* Prefix the pending message with "CONTEXT: " keeping its kind. */
void err_prefix(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
const char *err_msg(void);
enum err_kind err_kind(void);
void err_clear(void);
int err_exit_code(enum err_kind kind);

/* Print `egg: error: MSG` (or `egg: rejected: MSG`, `egg: waiting: MSG`)
 * for the pending error and return its exit code. */
int err_report(void);
/* Print `egg: error: ...` for a usage problem and return EXIT_USAGE. */
int err_usage(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/* Secrets: strings that must never appear in any output. */
void secret_register(const char *secret);
/* Replace every registered secret in `s` by "[redacted]"; returns a newly
 * allocated string. */
char *secret_redact(const char *s);
/* Whether `s` contains a registered secret. */
int secret_present(const char *s);

#endif
