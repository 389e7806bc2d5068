/* suggest.c: the nearest known name to a mistyped one (optimal string
 * alignment distance: Levenshtein plus swaps of adjacent characters). */
#include "suggest.h"

#include <string.h>

#define MAXLEN 64

int suggest_distance(const char *a, size_t na, const char *b, size_t nb)
{
	int d[MAXLEN + 1][MAXLEN + 1];
	if (na > MAXLEN)
		na = MAXLEN;
	if (nb > MAXLEN)
		nb = MAXLEN;
	for (size_t i = 0; i <= na; i++)
		d[i][0] = (int)i;
	for (size_t j = 0; j <= nb; j++)
		d[0][j] = (int)j;
	for (size_t i = 1; i <= na; i++)
		for (size_t j = 1; j <= nb; j++) {
			int cost = a[i - 1] != b[j - 1], best = d[i - 1][j - 1] + cost;
			if (d[i - 1][j] + 1 < best)
				best = d[i - 1][j] + 1;
			if (d[i][j - 1] + 1 < best)
				best = d[i][j - 1] + 1;
			if (i > 1 && j > 1 && a[i - 1] == b[j - 2] && a[i - 2] == b[j - 1] && d[i - 2][j - 2] + 1 < best)
				best = d[i - 2][j - 2] + 1;
			d[i][j] = best;
		}
	return d[na][nb];
}

const char *suggest_closest(const char *word, size_t len, const char *const *names, size_t n)
{
	const char *best = NULL;
	int best_d = 1 << 20, ties = 0, limit = len >= 6 ? (int)len / 3 : 1;
	for (size_t i = 0; i < n; i++) {
		int dist;
		if (!names[i])
			continue;
		dist = suggest_distance(word, len, names[i], strlen(names[i]));
		if (dist < best_d) {
			best_d = dist;
			best = names[i];
			ties = 0;
		} else if (dist == best_d && strcmp(best, names[i])) {
			ties++;
		}
	}
	return best && best_d > 0 && best_d <= limit && !ties ? best : NULL;
}
