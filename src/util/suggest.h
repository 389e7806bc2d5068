/* suggest.h: "did you mean" for a mistyped name (a command, a flag, a config key). */
#ifndef EGG_SUGGEST_H
#define EGG_SUGGEST_H

#include <stddef.h>

/* Edits (insertions, deletions, substitutions, swaps of neighbours) that turn
 * a[0..na) into b[0..nb); counts at most 64 characters of each. */
int suggest_distance(const char *a, size_t na, const char *b, size_t nb);

/* The name among names[0..n) (NULL entries skipped) closest to word[0..len),
 * when it is close enough to be a typo of it (at most one edit per three
 * characters, at least one) and no other name is as close; else NULL. */
const char *suggest_closest(const char *word, size_t len, const char *const *names, size_t n);

#endif
