/* pytext.h: writing Python text from C, for the files egg writes itself (a
 * composed program, a model spec's program). */
#ifndef EGG_PYTEXT_H
#define EGG_PYTEXT_H

#include "../util/buf.h"

/* Appends `text` as a Python string literal in ''' quotes. */
void py_string(struct buf *b, const char *text);
/*
 * Appends the text of a runtime file of the worker's folder (`rel`, for
 * example "egg_worker/program/compose_runtime.py"), less the comment lines
 * it opens with (its header, for readers of the worker). -1 with ERR_INFRA
 * naming `what` and the path when it cannot be read.
 */
int py_worker_runtime(struct buf *b, const char *rel, const char *what);

#endif
