/* shapes.c: a composed program checked at input shapes it was not split at; per kernel, whether it generalises. */
#include "shapes.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../eval/pool.h"
#include "../program/model.h"
#include "../program/program.h"
#include "../util/buf.h"
#include "../util/err.h"
#include "../util/fs.h"

/* At most this many distinct kernels are tried alone at a shape the whole failed at. */
#define MAX_ALONE 8

/* One shape to check: the program's inputs with the first dimension
 * `batch` and, when `length` > 0, token ids' second dimension `length`. */
struct variant {
	long batch, length;
	char label[48];
};

/* Whether the program's input `i` of shape `shape` is token ids, whose
 * second dimension is a length: not floating point (the plan's
 * "input_floating", the worker's word; a plan written before it had only
 * "input_dtypes": an integer or boolean dtype there) with two or more
 * dimensions. */
static int token_ids(const json_t *plan, size_t i, const json_t *shape)
{
	static const char *const whole[] = { "int64", "int32", "int16", "int8", "uint8", "bool" };
	const json_t *floating = json_object_get(plan, "input_floating");
	const char *dtype = json_string_value(json_array_get(json_object_get(plan, "input_dtypes"), i));
	if (json_array_size(shape) < 2)
		return 0;
	if (floating)
		return json_is_false(json_array_get(floating, i));
	for (size_t k = 0; dtype && k < sizeof(whole) / sizeof(whole[0]); k++)
		if (!strcmp(dtype, whole[k]))
			return 1;
	return 0;
}

/* The shapes to check from the plan's traced ones: half and twice the
 * batch, half the length of token ids (token_ids). Returns how many (at most 3). */
static int variants_of(const json_t *plan, struct variant v[3], long *traced_batch)
{
	const json_t *shapes = json_object_get(plan, "input_shapes");
	const json_t *s;
	long batch = 0, length = 0;
	size_t i;
	int n = 0;
	json_array_foreach(shapes, i, s) {
		if (!json_is_array(s) || !json_array_size(s))
			continue;
		if (!batch)
			batch = (long)json_integer_value(json_array_get(s, 0));
		if (!length && token_ids(plan, i, s))
			length = (long)json_integer_value(json_array_get(s, 1));
	}
	*traced_batch = batch;
	if (batch <= 0)
		return 0;
	if (batch >= 2) {
		v[n] = (struct variant){ batch / 2, 0, "" };
		snprintf(v[n++].label, sizeof(v[0].label), "batch %ld", batch / 2);
	}
	v[n] = (struct variant){ batch * 2, 0, "" };
	snprintf(v[n++].label, sizeof(v[0].label), "batch %ld", batch * 2);
	if (length >= 2) {
		v[n] = (struct variant){ batch, length / 2, "" };
		snprintf(v[n++].label, sizeof(v[0].label), "length %ld", length / 2);
	}
	return n;
}

/* The program's input shapes at `v` (as model_runtime.py draws them). */
static json_t *shapes_at(const json_t *plan, const struct variant *v)
{
	const json_t *s;
	json_t *out = json_array();
	size_t i;
	json_array_foreach(json_object_get(plan, "input_shapes"), i, s) {
		json_t *shape = json_deep_copy(s);
		if (json_is_array(shape) && json_array_size(shape)) {
			json_array_set_new(shape, 0, json_integer(v->batch));
			if (v->length > 0 && token_ids(plan, i, shape))
				json_array_set_new(shape, 1, json_integer(v->length));
		}
		json_array_append_new(out, shape);
	}
	return out;
}

/* What the check needs at one shape. */
struct at {
	struct run_shared *rs;
	struct eval_opts eo;	/* correctness only */
	const char *src;	/* the program, as split */
	const json_t *plan;
	const char *dir, *scratch;
	char *ref;		/* the program at the shape */
	json_t *baseline;	/* its baseline there */
};

/* The composition with `use` (its parts run at any shape) judged against
 * the program at the shape; owned, NULL on an infrastructure failure. */
static json_t *judge(struct at *a, const json_t *use)
{
	struct buf text = BUF_INIT;
	/* The parts run at any shape there: the check is of the shape itself. */
	struct compose_opts co = { .keep_torch = 1, .any_shape = 1 };
	json_t *summary = program_compose(a->src, a->plan, a->dir, use, &co, a->scratch), *res;
	if (!summary || fs_read(a->scratch, &text) < 0) {
		json_decref(summary);
		buf_release(&text);
		return NULL;
	}
	json_decref(summary);
	res = eval_candidate_pooled(a->rs->pool, 0, &a->eo, a->ref, buf_str(&text), a->baseline);
	buf_release(&text);
	return res;
}

/* A failed judgement's kind: a wrong result, or the kernel refused (raised). */
static int wrong_result(const json_t *res)
{
	return eval_stage_of(res) > EVAL_AT_RUN;
}

/* The distinct kernels: {TASK: {"name", "task", "use": {FILE: PATH}, and what was found}}. */
static json_t *distinct_kernels(const json_t *rows, const json_t *kernels)
{
	json_t *by_task = json_object(), *sg;
	size_t i;
	json_array_foreach(rows, i, sg) {
		const char *file = json_string_value(json_object_get(sg, "file")) ?: "";
		const char *task = json_string_value(json_object_get(sg, "task")) ?: file;
		json_t *k;
		if (!json_object_get(kernels, file))
			continue;
		if (!(k = json_object_get(by_task, task))) {
			k = json_pack("{s:O, s:s, s:{}, s:i, s:i}", "name", json_object_get(sg, "name"), "task", task, "use",
				      "judged", 0, "passed", 0);
			json_object_set_new(by_task, task, k);
		}
		json_object_set(json_object_get(k, "use"), file, json_object_get(kernels, file));
	}
	return by_task;
}

/* One kernel's finding at a shape onto its entry (the first wrong result
 * or refusal is the one said). */
static void found(json_t *k, const char *label, const json_t *res)
{
	json_object_set_new(k, "judged", json_integer(json_integer_value(json_object_get(k, "judged")) + 1));
	if (eval_passed(res)) {
		json_object_set_new(k, "passed", json_integer(json_integer_value(json_object_get(k, "passed")) + 1));
		return;
	}
	const char *key = wrong_result(res) ? "wrong" : "refuses";
	if (!json_object_get(k, key))
		json_object_set_new(k, key, json_sprintf("%s at %s: %s", wrong_result(res) ? "a wrong result" :
							 "it refuses (raises)", label,
							 json_string_value(json_object_get(res, "reason")) ?: "?"));
}

/* The kernels' verdicts over every shape. */
static json_t *kernel_verdicts(json_t *by_task)
{
	json_t *out = json_array(), *k;
	const char *task;
	json_object_foreach(by_task, task, k) {
		const json_t *wrong = json_object_get(k, "wrong"), *refuses = json_object_get(k, "refuses");
		const char *verdict = wrong ? "fails" : refuses ? "specialised" :
				      json_integer_value(json_object_get(k, "judged")) ? "generalises" : "not_judged";
		json_t *why = wrong ? json_incref((json_t *)wrong) : refuses ? json_incref((json_t *)refuses) :
			      json_incref(json_object_get(k, "not_judged") ?: json_null());
		json_array_append_new(out, json_pack("{s:O, s:s, s:s, s:o}", "name", json_object_get(k, "name"), "task",
						     task, "verdict", verdict, "why", why));
	}
	return out;
}

/* The check at one shape: its row onto `shapes`, the shape onto `checked`
 * when the whole passes, each kernel's finding onto `by_task`. -1 on an
 * infrastructure failure. */
static int check_at(struct at *a, const struct variant *v, const json_t *kernels, json_t *by_task, json_t *shapes,
		    json_t *checked)
{
	struct pool_slot *slot;
	json_t *row = json_pack("{s:s, s:o}", "label", v->label, "inputs", shapes_at(a->plan, v)), *res, *k;
	const char *task;
	int alone = 0, rc = -1;
	json_array_append_new(shapes, row);
	a->ref = model_program_at(a->src, v->batch, v->length);
	slot = pool_acquire(a->rs->pool, 0);
	a->baseline = eval_baseline(slot->worker, &a->eo, a->ref);
	pool_release(a->rs->pool, slot);
	if (!a->baseline) {
		if (err_kind() == ERR_INFRA)
			goto out;
		json_object_set_new(row, "verdict", json_string("not_checked"));
		json_object_set_new(row, "reason", json_sprintf("the program does not run at %s: %s", v->label, err_msg()));
		err_clear();
		rc = 0;
		goto out;
	}
	if (!(res = judge(a, kernels)))
		goto out;
	json_object_set(row, "verdict", json_object_get(res, "verdict"));
	json_object_set(row, "reason", json_object_get(res, "reason") ?: json_null());
	if (eval_passed(res)) {
		json_array_append(checked, json_object_get(row, "inputs"));
		json_object_foreach(by_task, task, k)
			found(k, v->label, res);
		json_decref(res);
		rc = 0;
		goto out;
	}
	json_decref(res);
	/* Whose failure: the program's own parts (the split's), or a kernel's. */
	{
		json_t *none = json_object();
		res = judge(a, none);
		json_decref(none);
	}
	if (!res)
		goto out;
	if (!eval_passed(res)) {
		json_object_foreach(by_task, task, k)
			if (!json_object_get(k, "not_judged"))
				json_object_set_new(k, "not_judged", json_sprintf("the program's own subgraphs do not run at "
										  "%s (%s)", v->label,
										  json_string_value(json_object_get(res, "reason")) ?: "?"));
		json_decref(res);
		rc = 0;
		goto out;
	}
	json_decref(res);
	json_object_foreach(by_task, task, k) {
		if (alone++ >= MAX_ALONE) {
			if (!json_object_get(k, "not_judged"))
				json_object_set_new(k, "not_judged", json_sprintf("only %d kernels are tried alone at %s",
										  MAX_ALONE, v->label));
			continue;
		}
		if (!(res = judge(a, json_object_get(k, "use"))))
			goto out;
		found(k, v->label, res);
		json_decref(res);
	}
	rc = 0;
out:
	free(a->ref);
	a->ref = NULL;
	json_decref(a->baseline);
	a->baseline = NULL;
	return rc;
}

json_t *shapes_check(struct run_shared *rs, const struct eval_opts *eo, const char *src, const json_t *plan,
		     const char *dir, const json_t *rows, const json_t *kernels, const char *scratch, int quiet)
{
	struct variant v[3];
	struct at a = { rs, *eo, src, plan, dir, scratch, NULL, NULL };
	json_t *by_task, *shapes, *checked, *out;
	long traced;
	int n;
	if (!model_program_is_spec(src))
		return json_pack("{s:s}", "skipped", "egg draws inputs at other shapes only for a model spec's program: "
				 "a KernelBench file's inputs are its own get_inputs()");
	if (!(n = variants_of(plan, v, &traced)))
		return json_pack("{s:s}", "skipped", "the plan records no batch dimension of the program's inputs");
	a.eo.timing = 0;
	a.eo.compile_mode = "none";
	a.eo.allow_torch = 1;
	a.eo.warmup = 1;
	a.eo.iters = 2;
	by_task = distinct_kernels(rows, kernels);
	shapes = json_array();
	checked = json_array();
	for (int i = 0; i < n; i++) {
		if (!quiet)
			fprintf(stderr, "egg: checking the composed program at %s (split at batch %ld)\n", v[i].label, traced);
		if (check_at(&a, &v[i], kernels, by_task, shapes, checked) < 0) {
			json_decref(by_task);
			json_decref(shapes);
			json_decref(checked);
			return NULL;
		}
	}
	out = json_pack("{s:o, s:o, s:o}", "shapes", shapes, "kernels", kernel_verdicts(by_task), "checked", checked);
	json_decref(by_task);
	return out;
}
