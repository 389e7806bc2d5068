/* jsonnum.h: a JSON object's number field, NAN when it is absent or not a number. */
#ifndef EGG_JSONNUM_H
#define EGG_JSONNUM_H

#include <jansson.h>

double json_num(const json_t *obj, const char *key);

#endif
