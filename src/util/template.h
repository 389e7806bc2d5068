/* template.h: tiny `{name}` substitution for prompt templates. */
#ifndef EGG_TEMPLATE_H
#define EGG_TEMPLATE_H

#include "buf.h"

/*
 * Expands `tmpl` into `out`. `{name}` (name: letters, digits, '_') is
 * replaced by what `lookup(name, ctx)` returns; `{{` and `}}` stand for
 * literal braces. Substituted values are copied verbatim, never rescanned.
 * An unknown name (lookup returns NULL), a lone brace or an unterminated
 * reference is an error: returns -1 with ERR_INFRA set naming it.
 */
typedef const char *(*template_lookup_fn)(const char *name, void *ctx);

int template_expand(const char *tmpl, template_lookup_fn lookup, void *ctx,
		    struct buf *out);

#endif
