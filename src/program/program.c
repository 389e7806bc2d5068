/* program.c: egg split (the worker's plan written as task files) and egg compose (the parts put back together). */
#include "program.h"

#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../eval/launch.h"
#include "../util/buf.h"
#include "../util/err.h"
#include "../util/fs.h"
#include "../util/hash.h"
#include "../util/strvec.h"
#include "pytext.h"

#define SPLIT_TIMEOUT_MS (1800.0 * 1000)
/* The newest plan format this egg reads (write_tasks.py PLAN_VERSION). */
#define PLAN_VERSION 2

json_t *program_split(struct worker *w, const struct eval_opts *o, const char *task_path, const char *task_source,
		      int measure, const char *dir)
{
	json_t *req = eval_job_request("split", o, task_source), *plan, *sg;
	char *path = NULL, *text = NULL;
	size_t i;
	json_object_set_new(req, "measure", json_boolean(measure));
	json_object_set_new(req, "iters", json_integer(5));
	json_object_set_new(req, "name", json_string(strrchr(task_path, '/') ? strrchr(task_path, '/') + 1 : task_path));
	json_object_set_new(req, "timeout_s", json_real(SPLIT_TIMEOUT_MS / 1000 - 60));
	worker_set_progress(w, o->progress, o->progress_arg);
	plan = worker_call_retry(w, req, SPLIT_TIMEOUT_MS);
	worker_set_progress(w, NULL, NULL);
	json_decref(req);
	if (!plan)
		return NULL;
	if (fs_mkdir_p(dir) < 0)
		goto bad;
	for (int list = 0; list < 2; list++)
		json_array_foreach(json_object_get(plan, list ? "blocks" : "subgraphs"), i, sg) {
			const char *file = json_string_value(json_object_get(sg, "file"));
			const char *source = json_string_value(json_object_get(sg, "source"));
			if (!file || !source || strchr(file, '/')) {
				err_set(ERR_INFRA, "the worker's split plan has a %s without a file name or text",
					list ? "block" : "subgraph");
				goto bad;
			}
			path = fs_join(dir, file);
			if (fs_write_atomic(path, source, strlen(source)) < 0)
				goto bad;
			free(path);
			path = NULL;
			json_object_del(sg, "source");
		}
	json_object_set_new(plan, "program", json_string(strrchr(task_path, '/') ? strrchr(task_path, '/') + 1 : task_path));
	{
		char hex[HASH_HEX_LEN + 1];
		hash_hex(task_source, strlen(task_source), hex);
		json_object_set_new(plan, "program_sha256", json_string(hex));
	}
	text = json_dumps(plan, JSON_INDENT(1));
	path = fs_join(dir, "plan.json");
	if (!text || fs_write_atomic(path, text, strlen(text)) < 0)
		goto bad;
	free(text);
	free(path);
	return plan;
bad:
	free(text);
	free(path);
	json_decref(plan);
	return NULL;
}

json_t *program_load_plan(const char *dir)
{
	char *path = fs_join(dir, "plan.json");
	json_error_t e;
	json_t *plan = json_load_file(path, 0, &e);
	if (plan && json_integer_value(json_object_get(plan, "plan_version")) > PLAN_VERSION) {
		err_set(ERR_INPUT, "'%s' was written by a newer egg (plan version %lld; this one reads up to %d): split "
			"the program again with this egg", path, (long long)json_integer_value(json_object_get(plan,
			"plan_version")), PLAN_VERSION);
		json_decref(plan);
		free(path);
		return NULL;
	}
	if (!plan || !json_is_array(json_object_get(plan, "subgraphs")))
		err_set(ERR_INPUT, "'%s' is not a split plan (egg split writes one)%s%s", path, plan ? "" : ": ",
			plan ? "" : e.text);
	free(path);
	if (plan && !json_is_array(json_object_get(plan, "subgraphs"))) {
		json_decref(plan);
		return NULL;
	}
	return plan;
}

int program_plan_fits(const json_t *plan, const char *source)
{
	const char *want = json_string_value(json_object_get(plan, "program_sha256"));
	char hex[HASH_HEX_LEN + 1];
	if (!want)
		return 1;	/* a plan from before egg recorded it: nothing to compare */
	hash_hex(source, strlen(source), hex);
	return !strcmp(hex, want);
}

const char *program_task_of(const json_t *sg)
{
	return json_string_value(json_object_get(sg, "task")) ?: json_string_value(json_object_get(sg, "file"));
}

/* The kernels beside the files of one list of the plan ("subgraphs" or "blocks") onto `out`. */
static void kernels_in_dir(json_t *out, const json_t *list, const char *dir)
{
	const json_t *sg;
	size_t i;
	json_array_foreach(list, i, sg) {
		const char *file = json_string_value(json_object_get(sg, "file"));
		const char *task = program_task_of(sg);
		size_t n = task ? strlen(task) : 0;
		char *kernel;
		if (!file || n < 4 || strcmp(task + n - 3, ".py"))
			continue;
		/* A repeated subgraph's kernel is its task's: STEM.kernel.py of the first occurrence. */
		kernel = xasprintf("%s/%.*s.kernel.py", dir, (int)(n - 3), task);
		if (fs_exists(kernel))
			json_object_set_new(out, file, json_string(kernel));
		free(kernel);
	}
}

json_t *program_kernels_in_dir(const json_t *plan, const char *dir)
{
	json_t *out = json_object();
	kernels_in_dir(out, json_object_get(plan, "subgraphs"), dir);
	kernels_in_dir(out, json_object_get(plan, "blocks"), dir);
	return out;
}

/* The program's source without its top-level get_inputs and
 * get_init_inputs (a kernel file may not define them: inputs come from the
 * task only); everything else stays as it is. */
static void program_source(struct buf *b, const char *src)
{
	int skipping = 0;
	for (const char *line = src; *line;) {
		const char *end = strchr(line, '\n');
		size_t n = end ? (size_t)(end - line + 1) : strlen(line);
		int top = n && line[0] != ' ' && line[0] != '\t' && line[0] != '\n' && line[0] != '#';
		if (top)
			skipping = !strncmp(line, "def get_inputs(", 15) || !strncmp(line, "def get_init_inputs(", 20);
		if (!skipping)
			buf_add(b, line, n);
		line += n;
	}
}

/* The compose runtime in the worker's folder: the parts, how each gets the
 * program's tensors, and the class ModelNew derives from. */
#define COMPOSE_RUNTIME "egg_worker/program/compose_runtime.py"

/* The index of `text` among the distinct sources, added when new. */
static size_t source_index(struct strvec *sources, const char *text)
{
	for (size_t i = 0; i < sources->n; i++)
		if (!strcmp(sources->v[i], text))
			return i;
	strvec_push(sources, text);
	return sources->n - 1;
}

/* The text of `path` as one of the distinct sources; -1 when unreadable. */
static long read_source(struct strvec *sources, const char *path)
{
	struct buf src = BUF_INIT;
	long at = fs_read(path, &src) < 0 ? -1 : (long)source_index(sources, buf_str(&src));
	buf_release(&src);
	return at;
}

/* Whether `name` can be a Python identifier (the forward's locals are
 * named after the plan's values). */
static int is_identifier(const char *name)
{
	if (!name || !*name || !(isalpha((unsigned char)*name) || *name == '_'))
		return 0;
	for (const char *p = name; *p; p++)
		if (!isalnum((unsigned char)*p) && *p != '_')
			return 0;
	return 1;
}

/* The local variable that holds the program's value NAME in ModelNew.forward. */
static void local_name(struct buf *b, const char *name)
{
	buf_addf(b, "v_%s", name);
}

/* The value names in an output tree (program.h), in the order they occur. */
static void tree_values(const json_t *tree, struct strvec *names)
{
	const json_t *x;
	size_t i;
	if (json_is_string(json_object_get(tree, "value"))) {
		strvec_push(names, json_string_value(json_object_get(tree, "value")));
		return;
	}
	json_array_foreach(json_object_get(tree, "tuple") ?: json_object_get(tree, "list"), i, x)
		tree_values(x, names);
	json_array_foreach(json_object_get(tree, "dict"), i, x)
		tree_values(json_array_get(x, 1), names);
}

/*
 * The values the program's output reads: from its tree, or in a plan
 * from before the tree (its "output" an expression over v['NAME']) from
 * that text. 0, or -1 with ERR_INPUT when a name is no identifier.
 */
static int output_values(const json_t *plan, struct strvec *names)
{
	const json_t *tree = json_object_get(plan, "output_tree");
	if (json_is_object(tree)) {
		tree_values(tree, names);
	} else {
		const char *p = json_string_value(json_object_get(plan, "output")) ?: "", *q, *end;
		for (; (q = strstr(p, "v['")) && (end = strchr(q + 3, '\'')); p = end + 1)
			strvec_pushf(names, "%.*s", (int)(end - q - 3), q + 3);
	}
	for (size_t i = 0; i < names->n; i++)
		if (!is_identifier(names->v[i])) {
			err_set(ERR_INPUT, "the split plan's output names a value '%s' that is no identifier",
				names->v[i]);
			return -1;
		}
	return 0;
}

/* The forward's return statement: the tree's values put into it by the
 * runtime, or an older plan's expression with each v['NAME'] its local. */
static void output_return(struct buf *b, const json_t *plan, const struct strvec *names)
{
	const char *p, *q, *end;
	if (json_is_object(json_object_get(plan, "output_tree"))) {
		buf_adds(b, "        return _egg_output({");
		for (size_t i = 0; i < names->n; i++) {
			buf_addf(b, "%s'%s': ", i ? ", " : "", names->v[i]);
			local_name(b, names->v[i]);
		}
		buf_adds(b, "})\n");
		return;
	}
	buf_adds(b, "        return ");
	for (p = json_string_value(json_object_get(plan, "output")) ?: "None";
	     (q = strstr(p, "v['")) && (end = strchr(q + 3, '\'')); p = end + (end[1] == ']' ? 2 : 1)) {
		buf_add(b, p, (size_t)(q - p));
		local_name(b, "");
		buf_add(b, q + 3, (size_t)(end - q - 3));
	}
	buf_addf(b, "%s\n", p);
}

static int in_names(const struct strvec *names, const char *name)
{
	for (size_t i = 0; i < names->n; i++)
		if (!strcmp(names->v[i], name))
			return 1;
	return 0;
}

/* The index of the last part from `from` on that reads `name`, or -1. */
static long last_reader(const json_t *parts, size_t from, const char *name)
{
	long last = -1;
	for (size_t i = from; i < json_array_size(parts); i++) {
		const json_t *x;
		size_t k;
		json_array_foreach(json_object_get(json_array_get(parts, i), "inputs"), k, x)
			if (!strcmp(json_string_value(x) ?: "", name))
				last = (long)i;
	}
	return last;
}

/* One line of the forward: part `i` called on its inputs, its outputs
 * bound, each value read here for the last time dropped after it. */
static int forward_line(struct buf *b, const json_t *parts, size_t i, const struct strvec *output)
{
	const json_t *part = json_array_get(parts, i), *x;
	struct strvec dead = STRVEC_INIT;
	size_t k;
	json_array_foreach(json_object_get(part, "outputs"), k, x) {
		if (!is_identifier(json_string_value(x)))
			goto bad;
		buf_adds(b, k ? ", " : "        ");
		local_name(b, json_string_value(x));
	}
	buf_addf(b, " = run[%zu](", i);
	json_array_foreach(json_object_get(part, "inputs"), k, x) {
		const char *name = json_string_value(x);
		if (!is_identifier(name))
			goto bad;
		buf_adds(b, k ? ", " : "");
		local_name(b, name);
		if (!in_names(&dead, name) && last_reader(parts, i, name) == (long)i && !in_names(output, name))
			strvec_push(&dead, name);
	}
	buf_adds(b, ")\n");
	for (size_t d = 0; d < dead.n; d++) {
		buf_adds(b, d ? ", " : "        del ");
		local_name(b, dead.v[d]);
	}
	buf_adds(b, dead.n ? "\n" : "");
	strvec_clear(&dead);
	return 0;
bad:
	strvec_clear(&dead);
	err_set(ERR_INPUT, "part %zu of the split plan names a value that is no identifier", i + 1);
	return -1;
}

/*
 * ModelNew: its forward runs the parts in program order as straight-line
 * code, each value dropped after the last part that reads it (a plain
 * forward holds what the program's own would), behind the guard that runs
 * the kernels only where they were checked. `parts` are the tables' parts.
 */
static int composed_forward(struct buf *b, const json_t *plan, const json_t *parts)
{
	const json_t *inputs = json_object_get(plan, "inputs"), *x;
	struct strvec output = STRVEC_INIT;
	size_t i;
	int rc = -1;
	if (output_values(plan, &output) < 0)
		goto out;
	buf_adds(b, "\n\nclass ModelNew(_EggComposed):\n"
		    "    def forward(self, *inputs, **named):\n"
		    "        xs = self._egg_positional(inputs, named) if named else inputs\n"
		    "        if xs is None or not _egg_checked(xs):\n"
		    "            # The kernels were not checked on these inputs (another shape, dtype,\n"
		    "            # layout or device): the program's own forward, correct, not faster.\n"
		    "            return self._egg_program_forward(self, *inputs, **named)\n"
		    "        run = self._egg_run\n");
	json_array_foreach(inputs, i, x) {
		if (!is_identifier(json_string_value(x))) {
			err_set(ERR_INPUT, "the split plan names an input that is no identifier");
			goto out;
		}
		buf_adds(b, i ? ", " : "        ");
		local_name(b, json_string_value(x));
	}
	buf_adds(b, json_array_size(inputs) == 1 ? ", = xs\n" : json_array_size(inputs) ? " = xs\n" : "");
	for (i = 0; i < json_array_size(parts); i++)
		if (forward_line(b, parts, i, &output) < 0)
			goto out;
	output_return(b, plan, &output);
	rc = 0;
out:
	strvec_clear(&output);
	return rc;
}

/* Each program input's layout where the first part that reads it takes it
 * (null for an input no part reads). Owned. */
static json_t *input_layouts(const json_t *plan)
{
	json_t *layouts = json_array(), *name, *sg, *x;
	size_t k, j, n;
	json_array_foreach(json_object_get(plan, "inputs"), k, name) {
		json_t *found = NULL;
		json_array_foreach(json_object_get(plan, "subgraphs"), j, sg)
			json_array_foreach(json_object_get(sg, "inputs"), n, x)
				if (!found && json_equal(x, name))
					found = json_array_get(json_object_get(sg, "input_layouts"), n);
		json_array_append(layouts, found ?: json_null());
	}
	return layouts;
}

/*
 * Part `i` of the plan as the runtime reads it (its sources' indexes in
 * `sources`), appended to `parts`, and to `summary`'s "parts". 0, or -1:
 * ERR_INPUT when it has no file, or no kernel without keep_torch; an
 * unreadable source.
 */
static int compose_part(json_t *parts, json_t *summary, struct strvec *sources, const json_t *sg, size_t i,
			const json_t *kernels, const struct compose_opts *co, const char *dir)
{
	const char *file = json_string_value(json_object_get(sg, "file"));
	const char *kernel = file ? json_string_value(json_object_get(kernels, file)) : NULL;
	int glue = json_is_true(json_object_get(sg, "glue")), is_kernel = kernel && !glue;
	const char *kind = is_kernel ? "kernel" : glue ? "glue" : "torch";
	long source, reference = -1;
	char *path;
	if (!file) {
		err_set(ERR_INPUT, "subgraph %zu of the plan in '%s' has no file", i + 1, dir);
		return -1;
	}
	if (!kernel && !glue && !co->keep_torch) {
		err_set(ERR_INPUT, "subgraph %zu (%s) has no kernel: write %s/%.*s.kernel.py, or pass --keep-torch to "
			"leave it PyTorch", i + 1, json_string_value(json_object_get(sg, "name")) ?: "?", dir,
			(int)(strlen(file) - 3), file);
		return -1;
	}
	path = is_kernel ? xstrdup(kernel) : fs_join(dir, file);
	source = read_source(sources, path);
	free(path);
	if (source >= 0 && is_kernel) {
		/* The task's own PyTorch: the kernel's output shapes under torch.compile. */
		path = fs_join(dir, program_task_of(sg));
		reference = read_source(sources, path);
		free(path);
	}
	if (source < 0 || (is_kernel && reference < 0))
		return -1;
	/* A repeat through its task's kernel binds its own tensors under the
	 * names the task's file gives them. */
	json_array_append_new(parts, json_pack("{s:O, s:s, s:s, s:I, s:I, s:O, s:O, s:O, s:O}",
					       "name", json_object_get(sg, "name") ?: json_null(), "kind", kind,
					       "task", program_task_of(sg), "source", (json_int_t)source,
					       "reference", (json_int_t)reference,
					       "inputs", json_object_get(sg, "inputs") ?: json_array(),
					       "outputs", json_object_get(sg, "outputs") ?: json_array(),
					       "params", (is_kernel ? json_object_get(sg, "task_params") : NULL) ?:
							 json_object_get(sg, "params") ?: json_object(),
					       "output_layouts", json_object_get(sg, "output_layouts") ?: json_null()));
	json_array_append_new(json_object_get(summary, "parts"),
			      json_pack("{s:O, s:s, s:s, s:s?}", "name", json_object_get(sg, "name") ?: json_null(),
					"file", file, "kind", kind, "kernel", is_kernel ? kernel : NULL));
	return 0;
}

/*
 * The block of the plan that starts at subgraph `i` and has a kernel in
 * `kernels` (borrowed), or NULL: a block with a kernel replaces the
 * subgraphs it spans (its "replaces", consecutive), one kernel for what
 * they computed.
 */
static const json_t *block_at(const json_t *plan, size_t i, const json_t *kernels)
{
	const json_t *b;
	size_t k;
	json_array_foreach(json_object_get(plan, "blocks"), k, b) {
		const json_t *r = json_object_get(b, "replaces");
		size_t n = json_array_size(r);
		const char *file = json_string_value(json_object_get(b, "file"));
		if (n && file && json_object_get(kernels, file) && json_integer_value(json_array_get(r, 0)) == (json_int_t)i &&
		    json_integer_value(json_array_get(r, n - 1)) >= (json_int_t)i &&
		    (size_t)json_integer_value(json_array_get(r, n - 1)) < json_array_size(json_object_get(plan, "subgraphs")))
			return b;
	}
	return NULL;
}

/* The data the runtime reads (_EGG_PLAN; compose_runtime.py), less "parts". Owned. */
static json_t *compose_tables(const json_t *plan, const struct compose_opts *co)
{
	const json_t *shapes = json_object_get(plan, "input_shapes"), *tree = json_object_get(plan, "output_tree");
	const char *on = json_string_value(json_object_get(plan, "kernels_checked_on"));
	/* A plan without the shapes (an older split's), or the check at other
	 * shapes: any shape. The device type egg optimize --split checked the
	 * kernels on (whole.c); egg compose alone does not know it: any. */
	return json_pack("{s:O, s:O, s:o, s:O, s:o, s:O}", "inputs", json_object_get(plan, "inputs") ?: json_array(),
			 "input_shapes", json_is_array(shapes) && !co->any_shape ? shapes : json_null(),
			 "input_layouts", input_layouts(plan),
			 "checked_shapes", json_object_get(plan, "checked_shapes") ?: json_array(),
			 "device", on && *on ? json_stringn(on, strcspn(on, ":")) : json_null(),
			 "output", json_is_object(tree) ? tree : json_null());
}

json_t *program_compose(const char *task_source, const json_t *plan, const char *dir, const json_t *kernels,
			const struct compose_opts *co, const char *out_path)
{
	struct buf b = BUF_INIT;
	struct strvec sources = STRVEC_INIT;
	json_t *summary = json_pack("{s:s, s:[]}", "out", out_path, "parts"), *tables = compose_tables(plan, co);
	json_t *parts = json_array(), *part;
	const json_t *sg;
	size_t i, nk = 0, nt = 0;
	char *text = NULL;

	if (!json_is_string(json_object_get(plan, "output")) && !json_is_object(json_object_get(plan, "output_tree"))) {
		err_set(ERR_INPUT, "the split plan in '%s' has no output", dir);
		goto bad;
	}
	for (i = 0; i < json_array_size(json_object_get(plan, "subgraphs"));) {
		const json_t *block = block_at(plan, i, kernels);
		sg = block ?: json_array_get(json_object_get(plan, "subgraphs"), i);
		if (compose_part(parts, summary, &sources, sg, i, kernels, co, dir) < 0)
			goto bad;
		i = block ? (size_t)json_integer_value(json_array_get(json_object_get(block, "replaces"),
								     json_array_size(json_object_get(block, "replaces")) - 1)) + 1
			  : i + 1;
	}
	json_array_foreach(parts, i, part) {
		nk += !strcmp(json_string_value(json_object_get(part, "kind")), "kernel");
		nt += !strcmp(json_string_value(json_object_get(part, "kind")), "torch");
	}
	json_object_set_new(summary, "kernel_parts", json_integer((json_int_t)nk));
	json_object_set_new(summary, "torch_parts", json_integer((json_int_t)nt));
	buf_addf(&b, "# Composed by egg compose from %s and the split in %s: the program's own source first, as\n"
		     "# it is; then its %zu subgraphs, %zu through a kernel and %zu in PyTorch (parts listed below).\n",
		 json_string_value(json_object_get(plan, "program")) ?: "the program", dir, json_array_size(parts), nk,
		 json_array_size(parts) - nk);
	program_source(&b, task_source);
	if (py_worker_runtime(&b, COMPOSE_RUNTIME, "compose runtime") < 0)
		goto bad;
	json_object_set(tables, "parts", parts);
	if (!(text = json_dumps(tables, JSON_INDENT(1) | JSON_ENSURE_ASCII))) {
		err_set(ERR_INFRA, "cannot write the composed program's tables");
		goto bad;
	}
	buf_adds(&b, "\n\n_EGG_PLAN = _egg_json.loads(");
	py_string(&b, text);
	buf_adds(&b, ")\n_EGG_SOURCES = [\n");
	for (i = 0; i < sources.n; i++) {
		buf_adds(&b, "    ");
		py_string(&b, sources.v[i]);
		buf_adds(&b, ",\n");
	}
	buf_adds(&b, "]\n");
	if (composed_forward(&b, plan, parts) < 0 || fs_write_atomic(out_path, b.data, b.len) < 0)
		goto bad;
	free(text);
	json_decref(parts);
	json_decref(tables);
	buf_release(&b);
	strvec_clear(&sources);
	return summary;
bad:
	free(text);
	json_decref(parts);
	json_decref(tables);
	buf_release(&b);
	strvec_clear(&sources);
	json_decref(summary);
	return NULL;
}
