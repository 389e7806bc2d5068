/* strvec.h: a NULL-terminated vector of owned strings, for argv and envp. */
#ifndef EGG_STRVEC_H
#define EGG_STRVEC_H

#include <stddef.h>

/* `v` is always NULL-terminated (once anything was pushed); the vector owns
 * every string in it and frees them in strvec_clear. */
struct strvec {
	char **v;
	size_t n;
	size_t alloc;
};

#define STRVEC_INIT { NULL, 0, 0 }

void strvec_push(struct strvec *sv, const char *s);
void strvec_pushf(struct strvec *sv, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));
void strvec_push_all(struct strvec *sv, const char *const *list);
/* Split `s` on whitespace (no quoting) and push each word. */
void strvec_split(struct strvec *sv, const char *s);
/* Set NAME=VALUE in an environment vector, replacing an existing NAME. */
void strvec_setenv(struct strvec *sv, const char *name, const char *value);
/* Remove NAME from an environment vector. */
void strvec_unsetenv(struct strvec *sv, const char *name);
/* Returns the value of NAME in an environment vector, or NULL; borrowed. */
const char *strvec_getenv(const struct strvec *sv, const char *name);
/* Returns the vector to pass to exec; empty vectors give {NULL}. */
char *const *strvec_argv(struct strvec *sv);
void strvec_clear(struct strvec *sv);

#endif
