/* test_reply.c: code and JSON extraction from agent replies; the acceptance rule. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "../../src/agents/context.h"
#include "../../src/agents/reply.h"
#include "../../src/pipeline/pipeline.h"
#include "unit.h"

static int code_is(const char *reply, const char *want)
{
	char why[256];
	char *got = reply_extract_code(reply, why, sizeof(why));
	int ok = got && !strcmp(got, want);
	if (!ok)
		printf("#   got: %s (%s)\n", got ? got : "NULL", got ? "" : why);
	free(got);
	return ok;
}

static int code_fails(const char *reply, const char *reason)
{
	char why[256] = "";
	char *got = reply_extract_code(reply, why, sizeof(why));
	int ok = !got && strstr(why, reason);
	if (!ok)
		printf("#   got: %s; why: %s\n", got ? got : "NULL", why);
	free(got);
	return ok;
}

void suite_reply(void)
{
	char why[256];
	json_t *j;

	CHECK(code_is("Here you go:\n```python\nimport torch\nclass ModelNew:\n    pass\n```\nDone.",
		      "import torch\nclass ModelNew:\n    pass\n"),
	      "one fenced python block is extracted without the prose around it");
	CHECK(code_is("```python\nclass Helper:\n    pass\n```\ntext\n```python\nclass ModelNew:\n    v = 1\n```\n"
		      "and a revision:\n```py\nclass ModelNew:\n    v = 2\n```\n",
		      "class ModelNew:\n    v = 2\n"),
	      "with several blocks, the last one that defines ModelNew wins");
	CHECK(code_is("```bash\npip install x\n```\n```\nclass ModelNew:\n    pass\n```\n", "class ModelNew:\n    pass\n"),
	      "a bare fence counts as Python; other languages do not");
	CHECK(code_is("Sure.\nimport torch\n\nclass ModelNew(torch.nn.Module):\n    pass\n",
		      "import torch\n\nclass ModelNew(torch.nn.Module):\n    pass\n"),
	      "a reply without fences is taken from its first import line");
	CHECK(code_fails("```python\nimport torch\nclass ModelNew:\n    def forward(self", "cut off"),
	      "an unclosed fence is a truncated reply");
	CHECK(code_fails("```python\nimport torch\n```\n", "defines class ModelNew"),
	      "blocks without ModelNew are refused");
	CHECK(code_fails("I cannot help with that.", "no Python file"), "prose alone is refused");

	j = reply_extract_json("```json\n{\"change\": \"Yes\", \"bottleneck\": \"b\", \"modification_plan\": \"p\", "
			       "\"extra\": 1}\n```", SCHEMA_PROFILE_TUNE, why, sizeof(why));
	CHECK(j && json_object_size(j) == 3 && !strcmp(json_string_value(json_object_get(j, "change")), "yes"),
	      "a fenced JSON reply is parsed, extra fields dropped, 'change' normalised");
	json_decref(j);
	j = reply_extract_json("```json\n{\"bottleneck\": \"b\", \"modification_plan\": \"p\"}\n```",
			       SCHEMA_PROFILE_TUNE, why, sizeof(why));
	CHECK(!j && !strcmp(why, "the JSON reply has no 'change'"),
	      "a tuning plan without 'change' is malformed, not read as yes (%s)", why);
	json_decref(j);
	j = reply_extract_json("{\"bottleneck\": \"b\", \"modification_plan\": \"p\"}", SCHEMA_PROFILE_REFINE, why,
			       sizeof(why));
	CHECK(!j && strstr(why, "'worth_optimizing'"), "a refinement plan without 'worth_optimizing' is malformed (%s)", why);
	j = reply_extract_json("{\"change\": \"NO\", \"bottleneck\": \"b\", \"modification_plan\": \"keep it\"}",
			       SCHEMA_PROFILE_TUNE, why, sizeof(why));
	CHECK(j && !strcmp(json_string_value(json_object_get(j, "change")), "no"), "a tuning plan may say no change");
	json_decref(j);
	j = reply_extract_json("{\"change\": \"perhaps\", \"bottleneck\": \"b\", \"modification_plan\": \"p\"}",
			       SCHEMA_PROFILE_TUNE, why, sizeof(why));
	CHECK(!j && strstr(why, "'change' must be"), "change must be yes or no (%s)", why);
	j = reply_extract_json("{\"change\": false, \"bottleneck\": \"b\", \"modification_plan\": \"p\"}",
			       SCHEMA_PROFILE_TUNE, why, sizeof(why));
	CHECK(!j && strstr(why, "'change'"), "a change that is not a string is malformed (%s)", why);
	j = reply_extract_json("My analysis: {\"worth_optimizing\": \"No\", \"bottleneck\": \"x {y}\", "
			       "\"modification_plan\": \"keep\"} That is all.", SCHEMA_PROFILE_REFINE, why, sizeof(why));
	CHECK(j && !strcmp(json_string_value(json_object_get(j, "worth_optimizing")), "no"),
	      "a bare object in prose is found (braces inside strings too) and yes/no normalised");
	json_decref(j);
	j = reply_extract_json("{\"change\": \"yes\", \"bottleneck\": \"b\"}", SCHEMA_PROFILE_TUNE, why, sizeof(why));
	CHECK(!j && strstr(why, "modification_plan"), "a missing field is malformed and named");
	j = reply_extract_json("{\"critical_issue\": 3, \"modification_plan\": \"p\"}", SCHEMA_DEBUG, why, sizeof(why));
	CHECK(!j && strstr(why, "critical_issue"), "a wrongly typed field is malformed and named");
	j = reply_extract_json("{\"worth_optimizing\": \"maybe\", \"bottleneck\": \"b\", \"modification_plan\": \"p\"}",
			       SCHEMA_PROFILE_REFINE, why, sizeof(why));
	CHECK(!j && strstr(why, "yes"), "worth_optimizing must be yes or no");
	j = reply_extract_json("{\"bottleneck\": \"b\", \"modification_pl", SCHEMA_PROFILE_TUNE, why, sizeof(why));
	CHECK(!j && strstr(why, "cut off"), "a truncated object is malformed");

	CHECK(pipeline_faster(0.90, 0.01, 1.0, 0.01, 100), "10%% faster with 1%% spreads is accepted");
	CHECK(!pipeline_faster(0.985, 0.001, 1.0, 0.001, 100), "1.5%% faster is under the 2%% floor and rejected");
	CHECK(pipeline_faster(0.80, 0.15, 1.0, 0.15, 30),
	      "20%% faster with 15%% per-call spreads over 30 calls is accepted (the medians' errors are ~3.4%%)");
	CHECK(!pipeline_faster(0.85, 0.30, 1.0, 0.30, 3),
	      "15%% faster with 30%% spreads over 3 calls is within the noise and rejected");
	CHECK(!pipeline_faster(1.0, 0.0, 1.0, 0.0, 100), "equal times are rejected");

	{
		/* Figures from the H200 run: honest kernels read 0-6% above ncu. */
		json_t *prof = json_pack("{s:b, s:{s:f}}", "available", 1, "aggregate", "duration_ns", 126944.0);
		json_t *none = json_pack("{s:b, s:s}", "available", 0, "reason", "cpu device");
		double ncu;
		CHECK(pipeline_timing_plausible(0.1298, prof, &ncu) && fabs(ncu - 0.126944) < 1e-9,
		      "an honest time 2%% above ncu's is plausible");
		CHECK(pipeline_timing_plausible(0.1100, prof, &ncu), "a time 13%% below ncu's is within the margin");
		CHECK(!pipeline_timing_plausible(0.0400, prof, &ncu),
		      "a time of a third of ncu's GPU time (work hidden from the timer) is implausible");
		CHECK(pipeline_timing_plausible(0.0010, none, &ncu) && isnan(ncu),
		      "without a profile there is nothing to contradict the time");
		json_decref(prof);
		json_decref(none);
	}

	{
		char a[200];
		reply_approach("# approach: implicit GEMM with a K loop\nimport triton\n", a, sizeof(a));
		CHECK_STR(a, "implicit GEMM with a K loop", "the approach comment names the approach");
		reply_approach("import triton\n@triton.jit\ndef mm_kernel(a, b):\n    tl.dot(a, b)\n@triton.jit\n"
			       "def bias_relu(x):\n    pass\n", a, sizeof(a));
		CHECK_STR(a, "2 Triton kernel(s) (mm_kernel, bias_relu) using tl.dot",
			  "without the comment, the kernels' names and their use of tl.dot");
		reply_approach("import torch\n", a, sizeof(a));
		CHECK_STR(a, "an approach it did not name", "nothing to name: said so, never an empty list");
		reply_approach("# approach: x\n", a, 2);
		CHECK_STR(a, "x", "the output is bounded");
	}

	{
		/* A resumed run finds its replies by the prompt: what the prompt
		 * says of the device must not change with the free memory. */
		json_t *f1 = json_pack("{s:s, s:s, s:i, s:f, s:f, s:s}", "name", "NVIDIA H200", "compute_capability", "9.0",
				       "sm_count", 132, "memory_bytes", 150e9, "free_bytes", 148.4e9, "driver", "580");
		json_t *f2 = json_deep_copy(f1);
		char *t1, *t2;
		json_object_set_new(f2, "free_bytes", json_real(149.1e9));
		t1 = agents_device_text(f1, "cuda:0");
		t2 = agents_device_text(f2, "cuda:0");
		CHECK_STR(t1, t2, "the device text is the same whatever memory was free at the start");
		CHECK(strstr(t1, "150 GB device memory") != NULL, "it names the total memory");
		CHECK(strstr(t1, "data-sheet peaks: FP32 67 TFLOP/s") != NULL, "without a calibration, the data sheet's peaks");
		{
			json_t *b = json_pack("{s:{s:f, s:f, s:f, s:f}}", "calibration", "fp32_flops_s", 54.2e12,
					      "tf32_flops_s", 396e12, "bf16_flops_s", 790e12, "bandwidth_bytes_s", 4.3e12);
			char *t3 = agents_task_device_text(f1, "cuda:0", b);
			CHECK(strstr(t3, "measured peaks (egg's calibration on this GPU): FP32 54 TFLOP/s") &&
			      strstr(t3, "memory bandwidth 4.3 TB/s") && !strstr(t3, "data-sheet"),
			      "with a calibration, the measured peaks alone: never two figures for one peak");
			free(t3);
			json_decref(b);
		}
		{
			json_t *tol = json_pack("[{s:s, s:s, s:f, s:f, s:b}, {s:s, s:s, s:f, s:f, s:b}, {s:s, s:s, s:b}]",
						"output", "0", "dtype", "float32", "atol", 1e-3, "rtol", 1e-3, "exact", 0,
						"output", "1", "dtype", "float32", "atol", 1e-3, "rtol", 1e-3, "exact", 0,
						"output", "2", "dtype", "int64", "exact", 1);
			char *n1 = agents_precision_note("fp32", 0, tol, -1, -1), *n2 = agents_precision_note("fp32", 1, NULL, -1, -1);
			char *n3 = agents_precision_note("fp32", 0, tol, 1e-3, 2e-3);
			CHECK(strstr(n1, "\"tf32x3\"") && strstr(n2, "fp16/bf16: keep its dtypes"),
			      "the precision rule follows the run's precision and the task's dtypes");
			CHECK(strstr(n1, "float32 outputs within |out - ref| <= 0.001 + 0.001 * |ref|; int64 outputs must "
					 "match exactly.") && !strstr(n1, "1e-4"),
			      "and states the tolerance the evaluator applies, once per dtype: %s", strstr(n1, "Tolerance"));
			CHECK(strstr(n2, "its default for each output dtype"), "without the evaluator's word, no figure is made up");
			CHECK(strstr(n3, "float32 outputs within |out - ref| <= 0.001 + 0.002 * |ref|; int64 outputs must match"),
			      "--atol and --rtol are the tolerance the prompt states: %s", strstr(n3, "Tolerance"));
			free(n3);
			free(n1);
			free(n2);
			json_decref(tol);
		}
		free(t1);
		free(t2);
		json_decref(f1);
		json_decref(f2);
	}
}
