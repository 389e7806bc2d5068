/* driver.c: a plain driver for the fuzz targets: replays seed inputs, then random mutations.
 * Used for the short smoke runs in `make test`; `make fuzz` builds the same targets with libFuzzer. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../../src/util/buf.h"
#include "../../src/util/fs.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static uint64_t rng = 0x9e3779b97f4a7c15ull;

static uint64_t next(void)
{
	rng ^= rng << 13;
	rng ^= rng >> 7;
	rng ^= rng << 17;
	return rng;
}

static void mutate(struct buf *b)
{
	int edits = 1 + (int)(next() % 8);
	for (int i = 0; i < edits; i++) {
		size_t pos = b->len ? next() % b->len : 0;
		switch (next() % 5) {
		case 0:
			if (b->len)
				b->data[pos] = (char)next();
			break;
		case 1:
			buf_truncate(b, pos);
			break;
		case 2: {
			const char *tokens[] = { "{", "}", "[", "]", "\"", ",", ":", "```", "\n", "\\u0000",
						 "null", "1e999", "-", "\"content\"", "```python\n" };
			const char *t = tokens[next() % (sizeof(tokens) / sizeof(tokens[0]))];
			struct buf nb = BUF_INIT;
			buf_add(&nb, b->data ? b->data : "", pos);
			buf_adds(&nb, t);
			if (b->len > pos)
				buf_add(&nb, b->data + pos, b->len - pos);
			buf_release(b);
			*b = nb;
			break;
		}
		case 3:
			if (b->len > pos + 1)
				memmove(b->data + pos, b->data + pos + 1, b->len - pos - 1), b->len--, b->data[b->len] = 0;
			break;
		default:
			if (b->len)
				buf_add(b, b->data, pos < 64 ? pos : 64);
		}
	}
}

int main(int argc, char **argv)
{
	long iters = getenv("FUZZ_ITERS") ? atol(getenv("FUZZ_ITERS")) : 2000;
	struct buf *seeds = calloc((size_t)argc, sizeof(*seeds));
	int nseeds = 0;

	for (int i = 1; i < argc; i++) {
		buf_init(&seeds[nseeds], 0);
		if (fs_read(argv[i], &seeds[nseeds]) == 0) {
			LLVMFuzzerTestOneInput((const uint8_t *)buf_str(&seeds[nseeds]), seeds[nseeds].len);
			nseeds++;
		} else {
			buf_release(&seeds[nseeds]);
		}
	}
	if (!nseeds || iters <= 0) {
		/* Nothing to mutate (a wrong corpus path, say) or nothing asked: the
		 * smoke run proved nothing, and says so. */
		printf("not ok - fuzz %s: %d seed(s) read of %d given, %ld iterations: nothing was fuzzed\n", argv[0],
		       nseeds, argc - 1, iters);
		free(seeds);
		return 1;
	}
	for (long i = 0; i < iters && nseeds; i++) {
		struct buf b = BUF_INIT;
		const struct buf *s = &seeds[next() % (uint64_t)nseeds];
		buf_add(&b, buf_str(s), s->len);
		mutate(&b);
		/* Exact-size heap copy so ASan sees reads past the end. */
		uint8_t *copy = malloc(b.len ? b.len : 1);
		memcpy(copy, buf_str(&b), b.len);
		LLVMFuzzerTestOneInput(copy, b.len);
		free(copy);
		buf_release(&b);
	}
	printf("ok - fuzz %s: %d seeds, %ld mutated inputs, no crash\n", argv[0], nseeds, iters);
	for (int i = 0; i < nseeds; i++)
		buf_release(&seeds[i]);
	free(seeds);
	return 0;
}
