/* cache.c: authenticated JSON entries in a folder. */
#include "cache.h"

#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "../util/buf.h"
#include "../util/err.h"
#include "../util/fs.h"
#include "../util/hash.h"

#define KEY_BYTES 32

struct evcache {
	char *dir;
	unsigned char key[KEY_BYTES];
	pthread_mutex_t mu;
	long rejected;
};

/* Reads DIR/.mac-key, or creates it (0600): the key is written into a
 * file of its own and linked into place, so that two egg processes starting
 * at once agree on one key and neither reads it half written. */
static int load_key(struct evcache *c)
{
	char *path = fs_join(c->dir, ".mac-key");
	char *tmp = xasprintf("%s.new.%ld", path, (long)getpid());
	int fd, rc = -1;
	ssize_t n;
	for (int tries = 0; tries < 2 && rc < 0; tries++) {
		fd = open(path, O_RDONLY | O_CLOEXEC);
		if (fd >= 0) {
			n = read(fd, c->key, KEY_BYTES);
			close(fd);
			if (n == KEY_BYTES)
				rc = 0;
			else
				err_set(ERR_INFRA, "the evaluation cache key '%s' is damaged (remove it)", path);
			break;
		}
		fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
		if (fd < 0) {
			err_set(ERR_INFRA, "cannot create '%s': %s", tmp, strerror(errno));
			break;
		}
		if (hash_random(c->key, KEY_BYTES) < 0 || write(fd, c->key, KEY_BYTES) != KEY_BYTES || fsync(fd) < 0) {
			err_set(ERR_INFRA, "cannot write '%s'", tmp);
			close(fd);
			unlink(tmp);
			break;
		}
		close(fd);
		if (link(tmp, path) == 0)
			rc = 0;
		else if (errno != EEXIST) {
			err_set(ERR_INFRA, "cannot create '%s': %s", path, strerror(errno));
			unlink(tmp);
			break;
		}
		unlink(tmp);	/* another egg's key won: read it */
	}
	free(tmp);
	free(path);
	return rc;
}

struct evcache *evcache_open(const char *dir)
{
	struct evcache *c = xcalloc(1, sizeof(*c));
	c->dir = xstrdup(dir);
	pthread_mutex_init(&c->mu, NULL);
	if (fs_mkdir_p(dir) < 0 || load_key(c) < 0) {
		evcache_free(c);
		return NULL;
	}
	chmod(dir, 0700);
	fs_remove_stale_temps(dir);
	return c;
}

void evcache_free(struct evcache *c)
{
	if (!c)
		return;
	memset(c->key, 0, sizeof(c->key));
	pthread_mutex_destroy(&c->mu);
	free(c->dir);
	free(c);
}

/* Entries of this format bind their MAC to their kind and key; older ones
 * (without "mac_format") are stale, not forged: measured again, uncounted. */
#define MAC_FORMAT 2

/* The MAC of an entry: its kind and key, then its canonical text without
 * the "mac" member (so that an entry copied under another key or kind, as
 * a passing verdict moved onto another candidate, fails it). */
static void mac_of(const struct evcache *c, const char *kind, const char key[65], const json_t *value, char hex[65])
{
	json_t *copy = json_deep_copy(value);
	char *text, *bound;
	json_object_del(copy, "mac");
	text = json_dumps(copy, JSON_COMPACT | JSON_SORT_KEYS | JSON_ENSURE_ASCII);
	bound = xasprintf("%s\n%.64s\n%s", kind, key, text ? text : "");
	hash_hmac_hex(c->key, KEY_BYTES, bound, strlen(bound), hex);
	free(bound);
	free(text);
	json_decref(copy);
}

static char *entry_path(const struct evcache *c, const char *kind, const char key[65])
{
	return xasprintf("%s/%s-%.64s.json", c->dir, kind, key);
}

json_t *evcache_get(struct evcache *c, const char *kind, const char key[65])
{
	char *path = entry_path(c, kind, key);
	json_t *o = json_load_file(path, 0, NULL);
	char want[65];
	const char *got;
	free(path);
	if (!json_is_object(o)) {
		json_decref(o);
		return NULL;
	}
	if (json_integer_value(json_object_get(o, "mac_format")) != MAC_FORMAT) {
		json_decref(o);
		return NULL;
	}
	mac_of(c, kind, key, o, want);
	got = json_string_value(json_object_get(o, "mac"));
	if (!got || strcmp(got, want)) {
		pthread_mutex_lock(&c->mu);
		c->rejected++;
		pthread_mutex_unlock(&c->mu);
		json_decref(o);
		return NULL;
	}
	json_object_del(o, "mac");
	json_object_del(o, "mac_format");
	return o;
}

void evcache_put(struct evcache *c, const char *kind, const char key[65], const json_t *value)
{
	json_t *copy = json_deep_copy(value);
	char mac[65], *text, *path;
	if (!json_is_object(copy)) {
		json_decref(copy);
		return;
	}
	json_object_set_new(copy, "mac_format", json_integer(MAC_FORMAT));
	mac_of(c, kind, key, copy, mac);
	json_object_set_new(copy, "mac", json_string(mac));
	text = json_dumps(copy, JSON_COMPACT | JSON_SORT_KEYS | JSON_ENSURE_ASCII);
	path = entry_path(c, kind, key);
	if (text)
		fs_write_atomic(path, text, strlen(text));
	err_clear();
	free(path);
	free(text);
	json_decref(copy);
}

long evcache_rejected(struct evcache *c)
{
	long n;
	pthread_mutex_lock(&c->mu);
	n = c->rejected;
	pthread_mutex_unlock(&c->mu);
	return n;
}

void evcache_close(struct evcache *c)
{
	long n;
	if (!c)
		return;
	n = evcache_rejected(c);
	if (n)
		fprintf(stderr, "egg: warning: %ld cached result(s) in '%s' failed their integrity check (an entry egg "
				"did not write, or a changed one) and were measured again\n", n, c->dir);
	evcache_free(c);
}
