/* fuzz_reply.c: fuzz target for the LLM reply parsers (both providers) and error-message extraction. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "../../src/llm/llm.h"
#include "../../src/llm/provider.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct provider_reply r;
	struct buf msg = BUF_INIT;
	char why[256];
	char *text = malloc(size + 1);

	if (provider_parse_reply(LLM_OPENAI, (const char *)data, size, &r, why, sizeof(why)) == 0)
		provider_reply_clear(&r);
	if (provider_parse_reply(LLM_ANTHROPIC, (const char *)data, size, &r, why, sizeof(why)) == 0)
		provider_reply_clear(&r);
	provider_error_message((const char *)data, size, &msg);
	buf_release(&msg);
	if (text) {
		memcpy(text, data, size);
		text[size] = '\0';
		llm_parse_retry_after(text);
		free(text);
	}
	return 0;
}
