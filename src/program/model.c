/* model.c: a model spec as a program (model.h). */
#include "model.h"

#include <ctype.h>
#include <jansson.h>
#include <stdlib.h>
#include <string.h>

#include "../eval/launch.h"
#include "../util/buf.h"
#include "../util/err.h"
#include "../util/fs.h"
#include "../util/hash.h"
#include "../util/proc.h"
#include "../util/suggest.h"
#include "pytext.h"

/* How a model spec's program begins its spec (model_program_is_spec). */
#define SPEC_LINE "EGG_MODEL = json.loads("

#define MODEL_RUNTIME "egg_worker/program/model_runtime.py"

/* A dotted Python name (torchvision.models, resnet50, Net.build). */
static int dotted_name(const char *s, size_t len)
{
	int start = 1;
	if (!len)
		return 0;
	for (size_t i = 0; i < len; i++) {
		if (s[i] == '.') {
			if (start)
				return 0;
			start = 1;
		} else if (isalpha((unsigned char)s[i]) || s[i] == '_' || (!start && isdigit((unsigned char)s[i]))) {
			start = 0;
		} else {
			return 0;
		}
	}
	return !start;
}

/* The length of FILE in FILE.py:NAME (`ref` names a file), else 0. */
static size_t py_file_len(const char *ref)
{
	const char *colon = strrchr(ref, ':');
	size_t n = colon ? (size_t)(colon - ref) : 0;
	return n > 3 && !strncmp(colon - 3, ".py", 3) ? n : 0;
}

int model_is_ref(const char *arg)
{
	const char *colon = strrchr(arg, ':');
	if (!colon || colon == arg || fs_exists(arg) || !dotted_name(colon + 1, strlen(colon + 1)))
		return 0;
	return py_file_len(arg) || dotted_name(arg, (size_t)(colon - arg));
}

int model_spec_wanted(const struct model_spec *m)
{
	return model_is_ref(m->program) || m->mode || m->dtype;
}

/* FILE.py:NAME with FILE made absolute (it must exist); MODULE:NAME as it is. Owned, or NULL. */
static char *absolute_ref(const char *ref, const char *flag)
{
	size_t n = py_file_len(ref);
	char *file, *abs, *out;
	if (!n)
		return xstrdup(ref);
	file = xstrndup(ref, n);
	if (!fs_exists(file)) {
		err_set(ERR_INPUT, "%s: no file '%s'", flag, file);
		free(file);
		return NULL;
	}
	abs = fs_absolute(file);
	out = xasprintf("%s%s", abs, ref + n);
	free(file);
	free(abs);
	return out;
}

/* Copies the text of the FILE.py that `ref` names (FILE.py:NAME, FILE
 * absolute) into spec["sources"][FILE]: the program runs where the file's
 * path is not readable (the evaluator's sandbox, another machine). */
static int add_source(json_t *spec, const char *ref)
{
	size_t n = py_file_len(ref);
	char *file;
	struct buf text = BUF_INIT;
	int rc;
	if (!n)
		return 0;
	file = xstrndup(ref, n);
	if (!json_object_get(spec, "sources"))
		json_object_set_new(spec, "sources", json_object());
	rc = fs_read(file, &text);
	if (!rc)
		json_object_set_new(json_object_get(spec, "sources"), file, json_string(buf_str(&text)));
	buf_release(&text);
	free(file);
	return rc;
}

/* One input: [NAME=]SHAPE[:DTYPE[:HIGH]] as {"name", "shape", "dtype",
 * "high"}, or NULL with ERR_INPUT. A name passes the input to the model's
 * forward by that keyword (an encoder-decoder's decoder_input_ids). */
static json_t *parse_input(const char *item)
{
	json_t *shape = json_array(), *o;
	const char *p = item, *eq = strchr(item, '=');
	char dtype[16] = "float", name[64] = "";
	long long high = 0;
	if (eq) {
		size_t n = (size_t)(eq - item);
		int ok = n > 0 && n < sizeof(name) && (isalpha((unsigned char)item[0]) || item[0] == '_');
		for (size_t i = 0; ok && i < n; i++)
			ok = isalnum((unsigned char)item[i]) || item[i] == '_';
		if (!ok) {
			err_set(ERR_INPUT, "--inputs: '%s' names its input with '%.*s', which is not a Python name (NAME=SHAPE, "
				"e.g. decoder_input_ids=2x8:int64:32128)", item, (int)n, item);
			json_decref(shape);
			return NULL;
		}
		memcpy(name, item, n);
		name[n] = 0;
		p = eq + 1;
	}
	for (;;) {
		char *end;
		long long d = strtoll(p, &end, 10);
		if (end == p || d < 0 || !isdigit((unsigned char)*p))
			goto bad;
		json_array_append_new(shape, json_integer(d));
		p = end;
		if (*p != 'x')
			break;
		p++;
	}
	if (*p == ':') {
		size_t n = strcspn(++p, ":");
		if (n == 0 || n >= sizeof(dtype))
			goto bad;
		memcpy(dtype, p, n);
		dtype[n] = 0;
		p += n;
		if (strcmp(dtype, "float") && strcmp(dtype, "int64") && strcmp(dtype, "int32") && strcmp(dtype, "bool")) {
			err_set(ERR_INPUT, "--inputs: '%s' has dtype '%s' (float, int64, int32 or bool; floating inputs "
				"take --dtype)", item, dtype);
			json_decref(shape);
			return NULL;
		}
		if (*p == ':') {
			char *end;
			high = strtoll(++p, &end, 10);
			if (end == p || *end || high < 1 || !strncmp(dtype, "float", 5) || !strcmp(dtype, "bool"))
				goto bad;
			p = end;
		}
	}
	if (*p)
		goto bad;
	o = json_pack("{s:o, s:s}", "shape", shape, "dtype", dtype);
	if (high)
		json_object_set_new(o, "high", json_integer(high));
	if (name[0])
		json_object_set_new(o, "name", json_string(name));
	return o;
bad:
	json_decref(shape);
	err_set(ERR_INPUT, "--inputs: cannot read '%s' ([NAME=]SHAPE[:DTYPE[:HIGH]], e.g. 32x3x224x224, 8x1024:int64:50257 "
		"or decoder_input_ids=2x8:int64:32128)", item);
	return NULL;
}

/* The example inputs: a list of input specs, or a reference to a function. */
static json_t *parse_inputs(const char *text)
{
	json_t *list;
	char *copy, *save = NULL;
	if (model_is_ref(text)) {
		char *ref = absolute_ref(text, "--inputs");
		json_t *s = ref ? json_string(ref) : NULL;
		free(ref);
		return s;
	}
	list = json_array();
	copy = xstrdup(text);
	for (char *item = strtok_r(copy, ",", &save); item; item = strtok_r(NULL, ",", &save)) {
		json_t *one = parse_input(item);
		if (!one) {
			json_decref(list);
			list = NULL;
			break;
		}
		json_array_append_new(list, one);
	}
	free(copy);
	if (list && !json_array_size(list)) {
		json_decref(list);
		err_set(ERR_INPUT, "--inputs: no input given");
		return NULL;
	}
	return list;
}

/* The spec as the program's EGG_MODEL (owned), or NULL with ERR_INPUT. */
static json_t *spec_json(const struct model_spec *m)
{
	int ref = model_is_ref(m->program);
	const char *dtype = m->dtype ? m->dtype : "fp32", *mode = m->mode ? m->mode : ref ? "eval" : "train";
	json_t *o, *kwargs = NULL, *inputs;
	char *prog;

	if (strcmp(dtype, "fp32") && strcmp(dtype, "bf16") && strcmp(dtype, "fp16")) {
		err_set(ERR_INPUT, "--dtype '%s': fp32, bf16 or fp16", dtype);
		return NULL;
	}
	if (strcmp(mode, "eval") && strcmp(mode, "train")) {
		err_set(ERR_INPUT, "--mode '%s': eval or train", mode);
		return NULL;
	}
	if (!ref) {
		if (m->inputs || m->kwargs) {
			err_set(ERR_INPUT, "--inputs and --model-kwargs go with a model (MODULE:CALLABLE or FILE.py:CALLABLE); "
				"the KernelBench file '%s' has its own get_inputs and get_init_inputs", m->program);
			return NULL;
		}
		prog = fs_absolute(m->program);
		o = json_pack("{s:s+, s:s+, s:s+}", "model", prog, ":Model", "args", prog, ":get_init_inputs",
			      "inputs", prog, ":get_inputs");
		free(prog);
		json_object_set_new(o, "mode", json_string(mode));
		json_object_set_new(o, "dtype", json_string(dtype));
		if (add_source(o, json_string_value(json_object_get(o, "model"))) < 0) {
			json_decref(o);
			return NULL;
		}
		return o;
	}
	if (!m->inputs) {
		err_set(ERR_INPUT, "the model '%s' needs example inputs: --inputs 32x3x224x224 (shapes, with :int64:HIGH "
			"for token ids) or --inputs FILE.py:FN", m->program);
		return NULL;
	}
	if (m->kwargs) {
		json_error_t e;
		if (!(kwargs = json_loads(m->kwargs, JSON_DECODE_ANY, &e)) || !json_is_object(kwargs)) {
			json_decref(kwargs);
			err_set(ERR_INPUT, "--model-kwargs: not a JSON object: %s", m->kwargs);
			return NULL;
		}
	}
	if (!(inputs = parse_inputs(m->inputs)) || !(prog = absolute_ref(m->program, "the model"))) {
		json_decref(inputs);
		json_decref(kwargs);
		return NULL;
	}
	o = json_pack("{s:s, s:o, s:o, s:s, s:s}", "model", prog, "kwargs", kwargs ? kwargs : json_object(), "inputs",
		      inputs, "mode", mode, "dtype", dtype);
	free(prog);
	if (add_source(o, json_string_value(json_object_get(o, "model"))) < 0 ||
	    (json_is_string(inputs) && add_source(o, json_string_value(inputs)) < 0)) {
		json_decref(o);
		return NULL;
	}
	return o;
}

/* NAME of the program file: the callable's last name (a "model_name"
 * argument's, for a factory like timm.create_model) or the file's stem,
 * then a non-default dtype and mode. Owned. */
static char *program_name(const struct model_spec *m, const json_t *spec)
{
	const char *from = m->program, *colon = strrchr(from, ':');
	const char *named = json_string_value(json_object_get(json_object_get(spec, "kwargs"), "model_name"));
	struct buf b = BUF_INIT;
	const char *dtype = json_string_value(json_object_get(spec, "dtype"));
	const char *mode = json_string_value(json_object_get(spec, "mode"));
	if (named) {
		buf_adds(&b, named);
	} else if (model_is_ref(from)) {
		const char *dot = strrchr(colon + 1, '.');
		buf_adds(&b, dot ? dot + 1 : colon + 1);
	} else {
		const char *base = strrchr(from, '/') ? strrchr(from, '/') + 1 : from;
		size_t n = strlen(base);
		buf_add(&b, base, n > 3 && !strcmp(base + n - 3, ".py") ? n - 3 : n);
	}
	if (strcmp(dtype, "fp32"))
		buf_addf(&b, "_%s", dtype);
	if (strcmp(mode, model_is_ref(from) ? "eval" : "train"))
		buf_addf(&b, "_%s", mode);
	for (char *p = b.data; p && *p; p++)
		if (!isalnum((unsigned char)*p) && *p != '_')
			*p = '_';
	return buf_detach(&b);
}

char *model_write_program(const struct model_spec *m, const char *dir)
{
	json_t *spec = spec_json(m);
	struct buf b = BUF_INIT;
	char *text, *name, *path = NULL;
	if (!spec)
		return NULL;
	text = json_dumps(spec, JSON_COMPACT | JSON_SORT_KEYS);
	name = program_name(m, spec);
	buf_addf(&b, "\"\"\"%s: the program egg wrote for %s (a model spec; see docs/programs.md).\n\n", name, m->program);
	buf_addf(&b, "Mode %s, dtype %s. The model is built with random weights (nothing is downloaded); in eval mode\n"
		 "its normalisations' statistics are drawn at random too. Its state_dict() is the model's own.\n\"\"\"\n",
		 json_string_value(json_object_get(spec, "mode")), json_string_value(json_object_get(spec, "dtype")));
	buf_adds(&b, "import json\n\n" SPEC_LINE);
	py_string(&b, text);
	buf_adds(&b, ")\n\n");
	if (py_worker_runtime(&b, MODEL_RUNTIME, "model runtime") == 0 && fs_mkdir_p(dir) == 0) {
		char *file = xasprintf("%s.py", name);
		path = fs_join(dir, file);
		free(file);
		if (fs_write_atomic(path, b.data, b.len) < 0) {
			free(path);
			path = NULL;
		}
	}
	buf_release(&b);
	free(text);
	free(name);
	json_decref(spec);
	return path;
}

/* The top-level names of FILE (the worker's `names` mode: Python's ast,
 * nothing run), as {"names", "open"} or {"error"}; NULL when it cannot
 * tell (python3 would not run, no answer): the worker finds out later. */
static json_t *file_names(const char *python, const char *file)
{
	struct proc p = PROC_INIT;
	struct proc_status st;
	struct buf out = BUF_INIT;
	char *dir = launch_worker_dir();
	json_t *names = NULL;
	strvec_push(&p.argv, python);
	strvec_push(&p.argv, "-I");
	strvec_pushf(&p.argv, "%s/egg-worker.py", dir);
	strvec_push(&p.argv, "names");
	strvec_push(&p.argv, file);
	p.null_in = 1;
	if (proc_run(&p, NULL, 0, &out, NULL, 30000, &st) == 0 && st.exited && st.code == 0)
		names = json_loads(buf_str(&out), JSON_DISABLE_EOF_CHECK, NULL);
	err_clear();
	if (!json_is_object(names)) {
		json_decref(names);
		names = NULL;
	}
	proc_clear(&p);
	buf_release(&out);
	free(dir);
	return names;
}

int model_check_ref(const char *ref, const char *what, const char *python)
{
	size_t n = py_file_len(ref), k;
	const char *name = ref + n + 1;
	size_t name_len = strcspn(name, ".");
	char *file;
	json_t *found, *v;
	const char **list = NULL;
	int rc = 0, defined = 0;
	if (!n)
		return 0;
	file = xstrndup(ref, n);
	if (!fs_exists(file)) {
		err_set(ERR_INPUT, "%s '%s': no file '%s'", what, ref, file);
		free(file);
		return -1;
	}
	if (!(found = file_names(python, file))) {
		free(file);
		return 0;
	}
	if (json_is_string(json_object_get(found, "error"))) {
		err_set(ERR_INPUT, "%s '%s': '%s' cannot be parsed: %s", what, ref, file,
			json_string_value(json_object_get(found, "error")));
		rc = -1;
		goto out;
	}
	list = xcalloc(json_array_size(json_object_get(found, "names")) + 1, sizeof(*list));
	json_array_foreach(json_object_get(found, "names"), k, v) {
		list[k] = json_string_value(v);
		defined |= list[k] && strlen(list[k]) == name_len && !strncmp(list[k], name, name_len);
	}
	if (!defined && !json_is_true(json_object_get(found, "open"))) {
		const char *near = suggest_closest(name, name_len, list, json_array_size(json_object_get(found, "names")));
		err_set(ERR_INPUT, "%s '%s': '%s' has no top-level '%.*s'%s%s%s", what, ref, file, (int)name_len,
			name, near ? "; did you mean '" : "", near ? near : "", near ? "'?" : "");
		rc = -1;
	}
out:
	free(list);
	json_decref(found);
	free(file);
	return rc;
}

int model_program_is_spec(const char *program_source)
{
	return strstr(program_source, "\n" SPEC_LINE) != NULL;
}

char *model_program_at(const char *program_source, long batch, long length)
{
	/* model_runtime.py's get_inputs draws them so (_egg_rescaled). */
	if (length > 0)
		return xasprintf("%s\nEGG_MODEL[\"rescale\"] = {\"batch\": %ld, \"length\": %ld}\n", program_source, batch,
				 length);
	return xasprintf("%s\nEGG_MODEL[\"rescale\"] = {\"batch\": %ld, \"length\": None}\n", program_source, batch);
}

char *model_program_dir(const struct model_spec *m, const char *store)
{
	json_t *spec = spec_json(m);
	char *text, *dir, hex[HASH_HEX_LEN + 1];
	if (!spec)
		return NULL;
	text = json_dumps(spec, JSON_COMPACT | JSON_SORT_KEYS);
	hash_hex(text, strlen(text), hex);
	hex[12] = 0;
	dir = xasprintf("%s/programs/%s", store, hex);
	free(text);
	json_decref(spec);
	return dir;
}
