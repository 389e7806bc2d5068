/* program.c: egg split (the worker's plan written as task files) and egg compose (the parts put back together). */
#include "program.h"

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
	json_array_foreach(json_object_get(plan, "subgraphs"), i, sg) {
		const char *file = json_string_value(json_object_get(sg, "file"));
		const char *source = json_string_value(json_object_get(sg, "source"));
		if (!file || !source || strchr(file, '/')) {
			err_set(ERR_INFRA, "the worker's split plan has a subgraph without a file name or text");
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

json_t *program_kernels_in_dir(const json_t *plan, const char *dir)
{
	json_t *out = json_object(), *sg;
	size_t i;
	json_array_foreach(json_object_get(plan, "subgraphs"), i, sg) {
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

/* A JSON value as Python (lists, dicts and strings of plan fields: the same text). */
static void py_value(struct buf *b, const json_t *v)
{
	char *text = json_dumps(v, JSON_COMPACT | JSON_ENCODE_ANY);
	buf_adds(b, text ? text : "None");
	free(text);
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

/* The local variable that holds the program's value NAME in ModelNew.forward. */
static void local_name(struct buf *b, const char *name)
{
	buf_addf(b, "v_%s", name);
}

/* The plan's output expression over v['NAME'] with each value's local. */
static void output_expr(struct buf *b, const char *expr)
{
	const char *p = expr, *q, *end;
	while ((q = strstr(p, "v['")) && (end = strchr(q + 3, '\''))) {
		buf_add(b, p, (size_t)(q - p));
		buf_adds(b, "v_");
		buf_add(b, q + 3, (size_t)(end - q - 3));
		p = end + 1;
		if (*p == ']')
			p++;
	}
	buf_adds(b, p);
}

/* Whether the plan's output expression reads the value NAME. */
static int output_reads(const char *expr, const char *name)
{
	char *key = xasprintf("v['%s']", name);
	int found = strstr(expr, key) != NULL;
	free(key);
	return found;
}

/* The index of the last subgraph from `from` on that reads `name`, or -1. */
static long last_reader(const json_t *subgraphs, size_t from, const char *name)
{
	long last = -1;
	for (size_t i = from; i < json_array_size(subgraphs); i++) {
		const json_t *x;
		size_t k;
		json_array_foreach(json_object_get(json_array_get(subgraphs, i), "inputs"), k, x)
			if (!strcmp(json_string_value(x) ?: "", name))
				last = (long)i;
	}
	return last;
}

/* ModelNew: its forward runs the parts in program order as straight-line
 * code, each value dropped after the last part that reads it (a plain
 * forward holds what the program's own would), behind the guard that runs
 * the kernels only where they were checked. */
static void composed_forward(struct buf *b, const json_t *plan)
{
	const json_t *subgraphs = json_object_get(plan, "subgraphs"), *inputs = json_object_get(plan, "inputs"), *sg,
		     *x;
	const char *output = json_string_value(json_object_get(plan, "output"));
	size_t i, k;
	buf_adds(b, "\n\nclass ModelNew(_EggComposed):\n"
		    "    def forward(self, *inputs):\n"
		    "        if not _egg_checked(inputs):\n"
		    "            # The kernels were not checked on these inputs (another shape, dtype,\n"
		    "            # layout or device): the program's own forward, correct, not faster.\n"
		    "            return self._egg_program_forward(self, *inputs)\n"
		    "        run = self._egg_run\n");
	if (json_array_size(inputs)) {
		buf_adds(b, "        ");
		json_array_foreach(inputs, k, x) {
			local_name(b, json_string_value(x));
			buf_adds(b, ", ");
		}
		buf_adds(b, "= inputs\n");
	}
	json_array_foreach(subgraphs, i, sg) {
		const json_t *outs = json_object_get(sg, "outputs"), *ins = json_object_get(sg, "inputs");
		struct strvec dead = STRVEC_INIT;
		buf_adds(b, "        ");
		json_array_foreach(outs, k, x) {
			buf_adds(b, k ? ", " : "");
			local_name(b, json_string_value(x));
		}
		buf_addf(b, " = run[%zu](", i);
		json_array_foreach(ins, k, x) {
			const char *name = json_string_value(x) ?: "";
			size_t d;
			buf_adds(b, k ? ", " : "");
			local_name(b, name);
			/* Read here for the last time: dropped after the call. */
			for (d = 0; d < dead.n && strcmp(dead.v[d], name); d++)
				;
			if (d == dead.n && last_reader(subgraphs, i, name) == (long)i && !output_reads(output, name))
				strvec_push(&dead, name);
		}
		buf_adds(b, ")\n");
		for (size_t d = 0; d < dead.n; d++) {
			buf_adds(b, d ? ", " : "        del ");
			local_name(b, dead.v[d]);
		}
		buf_adds(b, dead.n ? "\n" : "");
		strvec_clear(&dead);
	}
	buf_adds(b, "        return ");
	output_expr(b, output ?: "None");
	buf_adds(b, "\n");
}

json_t *program_compose(const char *task_source, const json_t *plan, const char *dir, const json_t *kernels,
			int keep_torch, const char *out_path)
{
	struct buf b = BUF_INIT, parts = BUF_INIT;
	struct strvec sources = STRVEC_INIT;
	json_t *summary = json_pack("{s:s, s:[], s:i, s:i}", "out", out_path, "parts", "kernel_parts", 0,
				    "torch_parts", 0);
	const json_t *sg, *output = json_object_get(plan, "output");
	size_t i;
	int nk = 0, nt = 0, rc;
	char *path = NULL;

	if (!json_is_string(output)) {
		err_set(ERR_INPUT, "the split plan in '%s' has no output expression", dir);
		goto bad;
	}
	json_array_foreach(json_object_get(plan, "subgraphs"), i, sg) {
		const char *file = json_string_value(json_object_get(sg, "file"));
		const char *kernel = file ? json_string_value(json_object_get(kernels, file)) : NULL;
		int glue = json_is_true(json_object_get(sg, "glue"));
		int is_kernel = kernel && !glue;
		const char *kind = is_kernel ? "kernel" : glue ? "glue" : "torch";
		long source, reference = -1;
		if (!file) {
			err_set(ERR_INPUT, "subgraph %zu of the plan in '%s' has no file", i + 1, dir);
			goto bad;
		}
		if (!kernel && !glue && !keep_torch) {
			err_set(ERR_INPUT, "subgraph %zu (%s) has no kernel: write %s/%.*s.kernel.py, or pass --keep-torch to "
				"leave it PyTorch", i + 1, json_string_value(json_object_get(sg, "name")) ?: "?", dir,
				(int)(strlen(file) - 3), file);
			goto bad;
		}
		free(path);
		path = is_kernel ? xstrdup(kernel) : fs_join(dir, file);
		if ((source = read_source(&sources, path)) < 0)
			goto bad;
		if (is_kernel) {
			/* The task's own PyTorch: the kernel's output shapes under torch.compile. */
			free(path);
			path = fs_join(dir, program_task_of(sg));
			if ((reference = read_source(&sources, path)) < 0)
				goto bad;
		}
		buf_addf(&parts, "    {\"name\": ");
		py_value(&parts, json_object_get(sg, "name"));
		buf_addf(&parts, ", \"kind\": \"%s\", \"task\": ", kind);
		{
			json_t *task = json_string(program_task_of(sg));
			py_value(&parts, task);
			json_decref(task);
		}
		buf_addf(&parts, ", \"source\": %ld, \"reference\": %ld,\n     \"inputs\": ", source, reference);
		py_value(&parts, json_object_get(sg, "inputs"));
		buf_adds(&parts, ", \"outputs\": ");
		py_value(&parts, json_object_get(sg, "outputs"));
		buf_adds(&parts, ",\n     \"params\": ");
		/* A repeat through its task's kernel binds its own tensors under
		 * the names the task's file gives them. */
		py_value(&parts, (is_kernel ? json_object_get(sg, "task_params") : NULL) ?:
				 json_object_get(sg, "params") ?: json_object());
		buf_adds(&parts, ",\n     \"output_layouts\": ");
		py_value(&parts, json_object_get(sg, "output_layouts") ?: json_null());
		buf_adds(&parts, "},\n");
		nk += is_kernel;
		nt += !is_kernel && !glue;
		json_array_append_new(json_object_get(summary, "parts"),
				      json_pack("{s:O, s:s, s:s, s:s?}", "name", json_object_get(sg, "name"), "file", file,
						"kind", kind, "kernel", kernel));
	}
	json_object_set_new(summary, "kernel_parts", json_integer(nk));
	json_object_set_new(summary, "torch_parts", json_integer(nt));
	buf_addf(&b, "# Composed by egg compose from %s and the split in %s: the program's own source first, as\n"
		     "# it is; then its %zu subgraphs, %d through a kernel and %d in PyTorch (parts listed below).\n",
		 json_string_value(json_object_get(plan, "program")) ?: "the program", dir,
		 json_array_size(json_object_get(plan, "subgraphs")), nk,
		 (int)json_array_size(json_object_get(plan, "subgraphs")) - nk);
	program_source(&b, task_source);
	if (py_worker_runtime(&b, COMPOSE_RUNTIME, "compose runtime") < 0)
		goto bad;
	buf_adds(&b, "\n\n_EGG_INPUTS = ");
	py_value(&b, json_object_get(plan, "inputs"));
	buf_adds(&b, "\n_EGG_INPUT_SHAPES = ");
	{
		/* A plan without the shapes (an older split's): any shape. */
		const json_t *shapes = json_object_get(plan, "input_shapes");
		if (json_is_array(shapes))
			py_value(&b, shapes);
		else
			buf_adds(&b, "None");
	}
	buf_adds(&b, "\n_EGG_INPUT_LAYOUTS = ");
	{
		/* The first subgraph that reads each program input has its layout. */
		json_t *layouts = json_array(), *name;
		size_t k, j, n;
		json_array_foreach(json_object_get(plan, "inputs"), k, name) {
			json_t *found = json_null();
			json_array_foreach(json_object_get(plan, "subgraphs"), j, sg) {
				const json_t *ins = json_object_get(sg, "inputs"), *x;
				json_array_foreach(ins, n, x)
					if (!strcmp(json_string_value(x) ?: "", json_string_value(name) ?: "") &&
					    json_is_null(found))
						found = json_array_get(json_object_get(sg, "input_layouts"), n) ?: json_null();
			}
			json_array_append(layouts, found);
		}
		py_value(&b, layouts);
		json_decref(layouts);
	}
	buf_adds(&b, "\n_EGG_CHECKED_SHAPES = ");
	{
		json_t *none = json_array();
		py_value(&b, json_object_get(plan, "checked_shapes") ?: none);
		json_decref(none);
	}
	buf_adds(&b, "\n_EGG_DEVICE = ");
	{
		/* The device type egg optimize --split checked the kernels on
		 * (whole.c); egg compose alone does not know it: any. */
		const char *on = json_string_value(json_object_get(plan, "kernels_checked_on"));
		if (on && *on)
			buf_addf(&b, "\"%.*s\"", (int)strcspn(on, ":\"\\"), on);
		else
			buf_adds(&b, "None");
	}
	buf_adds(&b, "\n_EGG_SOURCES = [\n");
	for (i = 0; i < sources.n; i++) {
		buf_adds(&b, "    ");
		py_string(&b, sources.v[i]);
		buf_adds(&b, ",\n");
	}
	buf_adds(&b, "]\n_EGG_PARTS = [\n");
	buf_adds(&b, buf_str(&parts));
	buf_adds(&b, "]\n");
	composed_forward(&b, plan);
	rc = fs_write_atomic(out_path, b.data, b.len);
	buf_release(&b);
	buf_release(&parts);
	strvec_clear(&sources);
	free(path);
	if (rc < 0) {
		json_decref(summary);
		return NULL;
	}
	return summary;
bad:
	buf_release(&b);
	buf_release(&parts);
	strvec_clear(&sources);
	free(path);
	json_decref(summary);
	return NULL;
}
