/* pytext.c: writing Python text from C (pytext.h). */
#include "pytext.h"

#include <stdlib.h>
#include <string.h>

#include "../eval/launch.h"
#include "../util/err.h"
#include "../util/fs.h"

void py_string(struct buf *b, const char *text)
{
	buf_adds(b, "'''");
	for (const char *p = text; *p; p++) {
		if (*p == '\\')
			buf_adds(b, "\\\\");
		else if (*p == '\'')
			buf_adds(b, "\\'");	/* every quote: one at the end would close the literal */
		else if (*p == '\r')
			buf_adds(b, "\\r");
		else
			buf_addc(b, *p);
	}
	buf_adds(b, "'''");
}

int py_worker_runtime(struct buf *b, const char *rel, const char *what)
{
	char *dir = launch_worker_dir(), *path = xasprintf("%s/%s", dir, rel);
	struct buf text = BUF_INIT;
	const char *p;
	int rc = -1;

	if (fs_read(path, &text) < 0) {
		err_set(ERR_INFRA, "the worker's %s is missing: %s", what, err_msg());
		goto out;
	}
	for (p = buf_str(&text); *p == '#';) {
		const char *nl = strchr(p, '\n');
		p = nl ? nl + 1 : p + strlen(p);
	}
	buf_adds(b, p);
	rc = 0;
out:
	buf_release(&text);
	free(path);
	free(dir);
	return rc;
}
