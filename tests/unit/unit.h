/* unit.h: a tiny TAP-emitting check harness for the C unit tests. */
#ifndef EGG_UNIT_H
#define EGG_UNIT_H

#include <stdio.h>
#include <string.h>

extern int unit_count, unit_failed;

#define CHECK(cond, ...) do { \
	int pass_ = !!(cond); \
	unit_count++; \
	if (pass_) { printf("ok %d - ", unit_count); } \
	else { unit_failed++; printf("not ok %d - ", unit_count); } \
	printf(__VA_ARGS__); \
	if (!pass_) printf(" (%s:%d: %s)", __FILE__, __LINE__, #cond); \
	printf("\n"); \
	fflush(stdout); \
} while (0)

#define CHECK_STR(got, want, ...) do { \
	const char *g_ = (got), *w_ = (want); \
	int same_ = g_ && w_ && !strcmp(g_, w_); \
	CHECK(same_, __VA_ARGS__); \
	if (!same_) printf("#   got:  '%s'\n#   want: '%s'\n", g_ ? g_ : "(null)", w_ ? w_ : "(null)"); \
} while (0)

/* The suites; each file defines one. */
void suite_util(void);
void suite_config(void);
void suite_cache(void);
void suite_run(void);
void suite_llm(void);
void suite_proc(void);
void suite_ncu(void);
void suite_reply(void);
void suite_pool(void);
void suite_store(void);

/* Where the source tree is (for the mock server); set by main. */
extern const char *unit_source_dir;

#endif
