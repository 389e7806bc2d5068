/* fuzz_ncu.c: fuzz target for the ncu CSV reader. */
#include <stdint.h>

#include "../../src/profile/ncu.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct ncu_report r;
	char why[256];
	if (ncu_parse((const char *)data, size, &r, why, sizeof(why)) == 0) {
		json_t *j = ncu_report_json(&r);
		json_decref(j);
		ncu_report_clear(&r);
	}
	return 0;
}
