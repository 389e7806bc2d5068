/* fuzz_reply.c: fuzz target for the LLM reply parsers (both providers, whole and streamed), refusals and error messages. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "../../src/llm/llm.h"
#include "../../src/llm/provider.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct provider_reply r;
	struct provider_refusal refused;
	struct buf msg = BUF_INIT;
	char why[256];
	char *text = malloc(size + 1);

	if (provider_parse_reply(LLM_OPENAI, (const char *)data, size, &r, why, sizeof(why)) == 0)
		provider_reply_clear(&r);
	if (provider_parse_reply(LLM_ANTHROPIC, (const char *)data, size, &r, why, sizeof(why)) == 0)
		provider_reply_clear(&r);
	/* A stream's reply is filled whatever the outcome, so always cleared. */
	provider_parse_stream(LLM_OPENAI, (const char *)data, size, &r, why, sizeof(why));
	provider_reply_clear(&r);
	provider_parse_stream(LLM_ANTHROPIC, (const char *)data, size, &r, why, sizeof(why));
	provider_reply_clear(&r);
	provider_refusal((const char *)data, size, &refused);
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
