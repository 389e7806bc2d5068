/* kept.c: the store's file of adapted request rules (kept.h). */
#include "kept.h"

#include <stdlib.h>
#include <string.h>

#include "../util/buf.h"
#include "../util/fs.h"

#define KEPT_FILE "llm-adapted.json"

static char *key_of(const char *endpoint, const char *model)
{
	return xasprintf("%s %s", endpoint, model);
}

json_t *kept_load(const char *store, const char *endpoint, const char *model)
{
	char *path, *key;
	json_t *all, *one;
	if (!store || !endpoint || !model)
		return NULL;
	path = fs_join(store, KEPT_FILE);
	all = json_load_file(path, 0, NULL);
	free(path);
	key = key_of(endpoint, model);
	one = json_is_object(json_object_get(all, key)) ? json_incref(json_object_get(all, key)) : NULL;
	free(key);
	json_decref(all);
	return one;
}

int kept_save(const char *store, const char *endpoint, const char *model, const json_t *changes)
{
	char *path, *key, *text;
	json_t *all, *one;
	int rc = -1;
	if (!store || !endpoint || !model || fs_mkdir_p(store) < 0)
		return -1;
	path = fs_join(store, KEPT_FILE);
	all = json_load_file(path, 0, NULL);
	if (!json_is_object(all)) {
		json_decref(all);
		all = json_object();
	}
	key = key_of(endpoint, model);
	one = json_object_get(all, key);
	if (!json_is_object(one)) {
		one = json_object();
		json_object_set_new(all, key, one);
	}
	json_object_update(one, (json_t *)changes);
	text = json_dumps(all, JSON_INDENT(1) | JSON_SORT_KEYS);
	if (text)
		rc = fs_write_atomic(path, text, strlen(text));
	free(text);
	free(key);
	free(path);
	json_decref(all);
	return rc;
}
