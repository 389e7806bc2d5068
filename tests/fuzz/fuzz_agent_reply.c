/* fuzz_agent_reply.c: fuzz target for code-block and agent-JSON extraction. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "../../src/agents/reply.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char why[256];
	char *text = malloc(size + 1), *code;
	if (!text)
		return 0;
	memcpy(text, data, size);
	text[size] = '\0';
	code = reply_extract_code(text, why, sizeof(why));
	free(code);
	for (int s = SCHEMA_PROFILE_REFINE; s <= SCHEMA_DEBUG; s++)
		json_decref(reply_extract_json(text, (enum reply_schema)s, why, sizeof(why)));
	free(text);
	return 0;
}
