/* jsonnum.c: the one reading of a number field that every module shares. */
#include "jsonnum.h"

#include <math.h>

double json_num(const json_t *obj, const char *key)
{
	const json_t *v = json_object_get(obj, key);
	return json_is_number(v) ? json_number_value(v) : NAN;
}
