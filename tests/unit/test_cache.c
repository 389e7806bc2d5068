/* test_cache.c: the evaluation cache's MAC: an entry changed on disk, forged without the key, or moved
 * under another key is ignored and counted; an honest one reads back. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "../../src/eval/cache.h"
#include "../../src/util/buf.h"
#include "../../src/util/err.h"
#include "../../src/util/fs.h"
#include "unit.h"

static const char KEY_A[65] = "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa";
static const char KEY_B[65] = "bbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbb";

/* Rewrites the file's first occurrence of `from` into `to` (same length). */
static int patch(const char *path, const char *from, const char *to)
{
	struct buf b = BUF_INIT;
	char *at;
	int rc = -1;
	if (fs_read(path, &b) == 0 && b.data && (at = strstr(b.data, from))) {
		memcpy(at, to, strlen(to));
		rc = fs_write_atomic(path, b.data, b.len);
	}
	buf_release(&b);
	return rc;
}

void suite_cache(void)
{
	char tmpl[] = "/tmp/egg-unit-cache-XXXXXX";
	char *dir = mkdtemp(tmpl), *path_a, *path_b;
	struct evcache *c = evcache_open(dir);
	json_t *v = json_pack("{s:s, s:f}", "verdict", "fail", "kernel_ms", 1.5), *got;
	struct buf text = BUF_INIT;

	CHECK(c != NULL, "a cache opens (creating its key)");
	evcache_put(c, "verdict", KEY_A, v);
	got = evcache_get(c, "verdict", KEY_A);
	CHECK(got && !strcmp(json_string_value(json_object_get(got, "verdict")) ?: "", "fail"),
	      "an honest entry reads back");
	json_decref(got);

	path_a = xasprintf("%s/verdict-%s.json", dir, KEY_A);
	path_b = xasprintf("%s/verdict-%s.json", dir, KEY_B);
	CHECK(patch(path_a, "\"fail\"", "\"pass\"") == 0, "(the entry is changed on disk: fail becomes pass)");
	got = evcache_get(c, "verdict", KEY_A);
	CHECK(got == NULL && evcache_rejected(c) == 1, "a verdict changed on disk fails its MAC and is ignored, counted");
	json_decref(got);

	evcache_put(c, "verdict", KEY_A, v);
	CHECK(fs_read(path_a, &text) == 0 && fs_write_atomic(path_b, text.data, text.len) == 0,
	      "(an honest entry is copied under another key)");
	got = evcache_get(c, "verdict", KEY_B);
	CHECK(got == NULL && evcache_rejected(c) == 2, "an entry moved under another key fails its MAC too");
	json_decref(got);

	{
		const char *forged = "{\"verdict\":\"pass\",\"mac_format\":2,\"mac\":\"00\"}";
		CHECK(fs_write_atomic(path_b, forged, strlen(forged)) == 0, "(a forged entry is written)");
	}
	got = evcache_get(c, "verdict", KEY_B);
	CHECK(got == NULL && evcache_rejected(c) == 3, "an entry forged without the key is ignored");
	json_decref(got);
	{
		const char *old = "{\"verdict\":\"pass\",\"mac\":\"00\"}";
		CHECK(fs_write_atomic(path_b, old, strlen(old)) == 0, "(an entry of the older format is written)");
	}
	got = evcache_get(c, "verdict", KEY_B);
	CHECK(got == NULL && evcache_rejected(c) == 3, "an entry of the older format is stale: ignored, not counted as forged");
	json_decref(got);
	evcache_free(c);
	err_clear();

	fs_remove_tree(dir);
	free(path_a);
	free(path_b);
	buf_release(&text);
	json_decref(v);
}
