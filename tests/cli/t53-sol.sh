#!/usr/bin/env bash
# t53-sol.sh: the speed of light without a GPU. A stand-in worker
# (tests/mock/fakeworker.py) serves a fake GPU whose calibration says 1 TB/s
# and whose baseline counts a task of 0.19 ms of least traffic; every kernel
# it times runs 0.2-1.2 ms, so at 16-95% of the bound. With --stop-at-sol 10
# the task stops after its seeds, the later stages skipped and their tokens
# estimated; with --stop-at-sol 0 every stage runs. The verdicts, the run
# summary and every report form carry roofline_ms and %SOL.
. "$(dirname "$0")/../lib.sh"

export EGG_MODEL=mock-model EGG_API_KEY=sk-test EGG_LLM_RETRY_BASE_MS=10 FAKEWORKER_ROOFLINE_MS=0.19
TASK=$SRC/tests/tasks/bias_relu_scale.py
FAKE="python3 $SRC/tests/mock/fakeworker.py"
FLAGS=(--device cuda --worker-cmd "$FAKE" --json -q)

start_mock "$SRC/tests/pipeline/sol.json"
run_egg optimize "${FLAGS[@]}" --stop-at-sol 10 --run-dir "$TMP/stop" "$TASK"
expect_rc 0 "a task at the speed of light ends with its kernel"
early=$(mock_requests)
check "it stopped after the seeds, the later stages skipped, with its estimate" python3 - "$OUT" <<'PY'
import json, sys
j = json.load(open(sys.argv[1]))
s = j["sol_stop"]
assert s["after_stage"] == "seed" and s["skipped_stages"] == ["refine", "mapping", "tiling", "memory"], s
assert s["sol_pct"] >= 10 and abs(s["sol_pct"] - 100 * 0.19 / j["kernel_ms"]) < 1e-6, (s, j["kernel_ms"])
# refinement of each valid seed and one improvement per tuning stage: a plan and a kernel each
assert s["skipped_calls_est"] == 2 * 2 + 3 * 2, s
assert s["tokens_saved_est"] > 0 and abs(s["tokens_saved_est"] - s["skipped_calls_est"] * s["tokens_per_call"]) < 1e-6, s
assert abs(j["roofline_ms"] - 0.19) < 1e-9 and abs(j["eager_sol_pct"] - 19.0) < 1e-6, j
# the note is the result's, not a stop: the task ran to its end
assert "speed of light" in s["note"] and j["stop_reason"] is None and j["status"] == "done", (s, j["stop_reason"])
PY
check "the decision says so" grep -q "at the speed of light" "$TMP/stop/decisions.jsonl"
check "the stage table has a %SOL column and the roofline bound" \
	sh -c "grep -q '%SOL' '$TMP/stop/stages.txt' && grep -q 'roofline bound' '$TMP/stop/stages.txt'"

export EGG_STORE=$TMP/store2
start_mock "$SRC/tests/pipeline/sol.json"
run_egg optimize "${FLAGS[@]}" --stop-at-sol 0 --run-dir "$TMP/all" "$TASK"
expect_rc 0 "with --stop-at-sol 0 the task runs to its end"
check "every stage ran, with more LLM calls than the early stop made ($early)" python3 - "$OUT" "$early" "$(mock_requests)" <<'PY'
import json, sys
j = json.load(open(sys.argv[1]))
assert "sol_stop" not in j and [r["stage"] for r in j["stages"]] == ["seed", "refine", "mapping", "tiling", "memory"], j
assert int(sys.argv[3]) > int(sys.argv[2]) + 4, sys.argv[2:]
PY

check "the profile agent is told the speed of light and the kernel's %SOL" sh -c \
	"cat '$TMP/all/calls/'*profile*.user.md | grep -q 'Speed of light: 0.1900 ms (memory-bound: 190.0 MB at 1.00 TB/s; measured peaks, the inputs, weights and outputs moved once); this kernel runs at'"
check "a tuning stage with nothing to change keeps the kernel without asking for a new one" sh -c \
	"grep -q 'kept as is: nothing to change in this stage' '$TMP/all/decisions.jsonl' && \
	 test \$(ls '$TMP/all/calls' | grep -c 'code.tune.json') -eq 2"

run_egg optimize "${FLAGS[@]}" --stop-at-sol -5 "$TASK"
expect_rc 2 "a negative --stop-at-sol is refused"
expect_err "^egg: error: --stop-at-sol is a percentage" "with a one-line reason"

# A kernel faster than the reference's FLOPs allow computes less (an
# algebraic rewrite): its %SOL is against the memory bound, and it says so.
# (A store of its own: the fake task's baseline now counts FLOPs.)
export EGG_STORE=$TMP/store-flops
FAKEWORKER_FLOPS=1e11 run_egg eval --device cuda --worker-cmd "$FAKE" --json "$TASK" "$SRC/tests/tasks/bias_relu_scale_kernel.py"
expect_rc 0 "a kernel beyond the FLOP bound passes"
check "its %SOL is against the memory bound, flagged" python3 - "$OUT" <<'PY'
import json, sys
j = json.load(open(sys.argv[1]))
assert j["baseline"]["roofline"]["bound"] == "compute" and abs(j["baseline"]["roofline_ms"] - 3.0) < 1e-9, j["baseline"]
assert j["baseline"]["roofline"]["peak"] == "fp32 as tf32x3", j["baseline"]["roofline"]
assert j["sol_basis"] == "memory" and abs(j["roofline_ms"] - 0.19) < 1e-9, j
assert abs(j["sol_pct"] - 100 * 0.19 / j["kernel_ms"]) < 1e-6, j
assert any(f.startswith("beyond_flop_bound") for f in j["flags"]), j["flags"]
PY
FAKEWORKER_FLOPS=1e11 run_egg eval --device cuda --worker-cmd "$FAKE" "$TASK" "$SRC/tests/tasks/bias_relu_scale_kernel.py"
expect_out "^roofline: +0.1900 ms \(memory-bound: 190.0 MB at 1.00 TB/s, measured peaks\)" "egg eval names the bound it measured against"
FAKEWORKER_FLOPS=1e11 run_egg eval --device cuda --worker-cmd "$FAKE" "$TASK"
expect_rc 0 "egg eval without a kernel measures the task's bounds"
expect_out "^roofline: +3.0000 ms \(compute-bound: 100 GFLOP at 33.3 TFLOP/s fp32 as tf32x3; 190.0 MB at 1.00 TB/s, measured peaks\)" \
	"with the bound, the FLOPs and the peak in force"
expect_out "^eager: +1.0000 ms +300.0% of the roofline bound" "and eager's %SOL"

# The practical bound: what egg's own Triton matrix products reached at
# calibration (fp32 at 5 TFLOP/s as tf32x3). 1 GFLOP of fp32 work takes 0.03
# ms at the peak (memory-bound at 0.19 ms) but 0.2 ms at the practical rate.
export EGG_STORE=$TMP/store-practical FAKEWORKER_PRACTICAL=1
FAKEWORKER_FLOPS=1e9 run_egg eval --device cuda --worker-cmd "$FAKE" --json "$TASK" "$SRC/tests/tasks/bias_relu_scale_kernel.py"
check "the verdict has the practical bound beside the roofline, and the kernel's share of it" python3 - "$OUT" <<'PY'
import json, sys
j = json.load(open(sys.argv[1]))
b, rl = j["baseline"], j["baseline"]["roofline"]
assert abs(b["roofline_ms"] - 0.19) < 1e-9 and abs(b["practical_ms"] - 0.2) < 1e-9, b
assert rl["practical_scheme"] == "fp32_tf32x3" and rl["practical_flops_s"] == 5e12 and rl["practical_size"] == 4096, rl
assert abs(j["practical_pct"] - 100 * 0.2 / j["kernel_ms"]) < 1e-6, j
PY
FAKEWORKER_FLOPS=1e9 run_egg eval --device cuda --worker-cmd "$FAKE" "$TASK" "$SRC/tests/tasks/bias_relu_scale_kernel.py"
expect_out "^practical: +0.2000 ms \(egg's own Triton matrix product: 5.0 TFLOP/s fp32_tf32x3 at 4096\^3\)   kernel at [0-9.]+% of it" \
	"egg eval prints it"
start_mock "$SRC/tests/pipeline/sol.json"
FAKEWORKER_FLOPS=1e9 run_egg optimize "${FLAGS[@]}" --stop-at-sol 0 --seeds 1 --stages mapping --run-dir "$TMP/practical" "$TASK"
expect_rc 0 "a run with a practical bound"
check "the stage table has the practical bound's row" grep -Eq "^  practical bound \(Triton\) +0.2000 +fp32_tf32x3 +95.0%" \
	"$TMP/practical/stages.txt"
check "the prompts state the practical rates and, to the profile agent, the kernel's share of the bound" sh -c \
	"grep -q \"egg's own Triton matrix products reach fp32 on the FMA units (ieee) 4.0, fp32 as tf32x3 5.0, fp32 as the pre-split TF32 scheme 4.5, plain TF32 8.0 TFLOP/s here (4096^3, measured: what a Triton kernel of that kind can expect); for bf16 the measured peak above is the bound (egg.s own kernel reached under 80% of cuBLAS.s rate\" '$TMP/practical/calls/'*code.seed.*.md &&
	 grep -q 'Practical bound: egg.s own Triton matrix product reaches 5.0 TFLOP/s on this GPU in fp32_tf32x3 (measured at calibration, 4096^3); at that rate this task.s work takes 0.2000 ms, and this kernel runs at' '$TMP/practical/calls/'*profile.refine.user.md"
run_egg report latest
expect_out "% of the practical bound" "the report gives the kernel's share of the practical bound"
unset FAKEWORKER_PRACTICAL

# A long evaluation in the pipeline says what it is doing, as the task's
# progress (the fake worker says it has run 3 s, 12 s, then 41.5 s).
export EGG_STORE=$TMP/store-progress
start_mock "$SRC/tests/pipeline/sol.json"
FAKEWORKER_PROGRESS=1 run_egg optimize --device cuda --worker-cmd "$FAKE" --seeds 1 --no-refine --no-hw-tune "$TASK"
expect_rc 0 "a run whose evaluations report progress"
expect_err "^egg: \[seed\] seed1: timing: 1 warm-up calls, 5 timed calls \(42 s\)$" \
	"a step past 10 s is shown with the candidate and its time"
expect_err "^egg: \[seed\] seed1: correctness trial 2/5 \(12 s\)$" "the one at 12 s too (no 10 s go unsaid)"
check "a step before 10 s is not" sh -c "! grep -q 'correctness trial 1/5' '$ERR'"

# The reports: %SOL per task and its distribution, in text, CSV and HTML.
export EGG_STORE=$TMP/store3
start_mock "$SRC/tests/pipeline/sol.json"
run_egg bench --device cuda --worker-cmd "$FAKE" -q --stop-at-sol 10 "$TASK"
expect_rc 0 "a bench run with the early stop"
run_egg report latest
expect_rc 0 "its report"
expect_out "%SOL \(roofline bound / time\): kernel median [0-9.]+% \(n=1\), eager 19.0%, torch.compile 23.8%; 1 task\(s\) stopped at the speed of light" \
	"the text report gives the %SOL medians and the early stops"
expect_out "stopped at the speed of light$" "and marks the task"
run_egg report latest --csv
check "the CSV has roofline_ms and sol_pct" sh -c "head -1 '$OUT' | grep -q 'roofline_ms,sol_pct,eager_sol_pct,compile_sol_pct'"
run_egg report latest --html "$TMP/r.html"
check "the HTML report has the roofline chart with the task's three points" python3 - "$TMP/r.html" <<'PY'
import re, sys
h = open(sys.argv[1]).read()
svg = re.search(r'<svg id="roofline-chart".*?</svg>', h, re.S).group(0)
assert svg.count("<circle") == 2 and svg.count("<rect") == 2 and "<polyline" in svg, svg[:300]
assert "kernel at" in svg and "eager at 19.0% of the roofline bound" in svg, svg
assert "%SOL (roofline bound over time, median)" in h
PY

# What torch.compile does with the task, told to the model: a recorded
# Inductor output (the fake baseline carries it, summarized by the worker's
# own reader) becomes the launches in the prompts, and the code is kept in
# the task's folder; egg eval without a kernel prints the same summary.
export EGG_STORE=$TMP/store4
REC=$SRC/tests/tasks/inductor/cpu_dwconv_ln_fc_gelu.py
start_mock "$SRC/tests/pipeline/sol.json"
FAKEWORKER_COMPILE_CODE=$REC FAKEWORKER_COMPILE_MS=0.01,0.06,0.02,0.04,0.008 run_egg optimize --device cuda \
	--worker-cmd "$FAKE" --seeds 1 --no-refine --no-hw-tune --run-dir "$TMP/ind" "$TASK"
expect_rc 0 "a run whose baseline has torch.compile's output"
check "the seed prompt says what torch.compile runs, launch by launch, with its times and the bound" sh -c "
	f=\$(ls '$TMP/ind/calls/'*seed*.system.md | head -1)
	grep -q 'What torch.compile (Inductor) makes of the reference, the code to beat: 5 launch(es), 3 generated kernel(s) and 2 library call(s)' \"\$f\" &&
	grep -q '0.1380 ms of device time per call in all' \"\$f\" &&
	grep -q '2. library call cuDNN .extern_kernels.convolution. for convolution: 0.0600 ms' \"\$f\" &&
	grep -q '3. generated C++ .cpp_fused_native_layer_norm_permute_1. fusing native_layer_norm, permute: 0.0200 ms' \"\$f\" &&
	grep -q 'It is a reference, not a seed' \"\$f\""
check "torch.compile's code is in the task's folder, not in its recorded baseline" sh -c "
	cmp -s '$REC' '$TMP/ind/torch_compile.py' && ! grep -q compile_code '$TMP/ind/run.json'"
FAKEWORKER_COMPILE_CODE=$REC run_egg eval --device cuda --worker-cmd "$FAKE" "$TASK"
expect_out "^What torch.compile \(Inductor\) makes of the reference" "egg eval without a kernel prints the summary"
expect_out "^  4. library call cuBLAS .extern_kernels.addmm. for addmm: 0.0400 ms$" "each launch on a line"

finish
