/* template.c: `{name}` template expansion with brace escapes. */
#include "template.h"

#include <ctype.h>
#include <string.h>

#include "err.h"

int template_expand(const char *tmpl, template_lookup_fn lookup, void *ctx,
		    struct buf *out)
{
	const char *p = tmpl;

	while (*p) {
		if (p[0] == '{' && p[1] == '{') {
			buf_addc(out, '{');
			p += 2;
		} else if (p[0] == '}' && p[1] == '}') {
			buf_addc(out, '}');
			p += 2;
		} else if (p[0] == '}') {
			err_set(ERR_INFRA, "template: lone '}' at offset %ld", (long)(p - tmpl));
			return -1;
		} else if (p[0] == '{') {
			char name[64];
			size_t n = 0;
			const char *value;
			p++;
			while (isalnum((unsigned char)p[n]) || p[n] == '_')
				n++;
			if (n == 0 || n >= sizeof(name) || p[n] != '}') {
				err_set(ERR_INFRA, "template: bad reference at offset %ld",
					(long)(p - 1 - tmpl));
				return -1;
			}
			memcpy(name, p, n);
			name[n] = '\0';
			value = lookup(name, ctx);
			if (!value) {
				err_set(ERR_INFRA, "template: unknown name '%s'", name);
				return -1;
			}
			if (buf_adds(out, value) < 0) {
				err_set(ERR_INFRA, "template: result too large");
				return -1;
			}
			p += n + 1;
		} else {
			const char *next = strpbrk(p, "{}");
			size_t n = next ? (size_t)(next - p) : strlen(p);
			if (buf_add(out, p, n) < 0) {
				err_set(ERR_INFRA, "template: result too large");
				return -1;
			}
			p += n;
		}
	}
	return 0;
}
