#!/usr/bin/env bash
# t40-eval.sh: `egg eval` end to end on the CPU: JSON contract, baselines and
# their cache, exit codes for rejected candidates, bad input and a dead worker.
. "$(dirname "$0")/../lib.sh"

T=$SRC/tests/tasks
A=$SRC/tests/adversarial

run_egg eval --device cpu --json --iters 3 "$T/softmax.py" "$T/softmax_kernel.py"
expect_rc 0 "an honest kernel passes"
check "eval --json prints one JSON object with every documented field" python3 - "$OUT" <<'PY'
import json, sys
j = json.load(open(sys.argv[1]))
need = ["verdict", "stage", "reason", "log", "correct_trials", "trials", "max_abs_err", "max_rel_err",
        "kernel_ms", "eager_ms", "compile_ms", "speedup_eager", "speedup_compile", "triton_launches",
        "device", "timing", "flags"]
missing = [k for k in need if k not in j]
assert not missing, missing
assert j["verdict"] == "pass" and j["stage"] == "done" and j["correct_trials"] == j["trials"] == 5
assert j["device"] == "cpu" and any(f.startswith("cpu_timing") for f in j["flags"])
t = j["timing"]
assert {"median", "min", "max", "iters"} <= set(t) and t["iters"] == 3
assert j["eager_ms"] > 0 and abs(j["speedup_eager"] - j["eager_ms"] / j["kernel_ms"]) < 1e-9
assert j["compile_ms"] is None or j["speedup_compile"] > 0
assert j["baseline"]["cached"] is False
assert t["clock"] == "cpu_perf_counter" and t["spin_ms"] == 0.0 and t["launch_median"] > 0
PY
check "the baseline was cached under the store" sh -c "ls '$EGG_STORE'/eval-cache/baseline-*.json >/dev/null"

run_egg eval --device cpu --json --iters 3 "$T/softmax.py" "$T/softmax_kernel.py"
check "the second evaluation reuses the cached baseline" test "$(json_get "$OUT" 'j["baseline"]["cached"]')" = True
run_egg eval --device cpu --iters 3 "$T/softmax.py" "$T/softmax_kernel.py"
expect_out "^baselines: +from egg's evaluation cache" "the human summary says the baselines came from the cache"

run_egg eval --device cpu --iters 3 --no-baseline "$T/bias_relu_scale.py" "$A/c01_library_fallback.py"
expect_rc 1 "a library-fallback candidate is rejected"
expect_err "^egg: rejected: '.*c01_library_fallback.py' failed at integrity: forward ran PyTorch compute" "the rejection names the stage and the reason"
check "the rejection is one line on stderr besides progress" test "$(grep -c '^egg: rejected' "$ERR")" -eq 1
expect_out "^verdict: +fail" "the human summary goes to stdout"
expect_out "^trials: +not run \(it failed at the integrity stage, before any output was compared\)" \
	"a candidate rejected before its first comparison says its trials did not run (not '0/5 correct')"

run_egg eval --device cpu "$T/nope.py" "$T/softmax_kernel.py"
expect_rc 2 "an unreadable task path"
expect_err "cannot read '.*nope.py': No such file" "the unreadable path is named"

printf 'import torch\nclass Model(torch.nn.Module):\n    def forward(self, x): return x\ndef get_init_inputs(): return []\n' >"$TMP/bad_task.py"
run_egg eval --device cpu --no-baseline "$TMP/bad_task.py" "$T/softmax_kernel.py"
expect_rc 2 "a task without get_inputs is bad input"
expect_err "^egg: error: task file has no 'get_inputs'" "the missing function is named"

run_egg eval --device tpu "$T/softmax.py" "$T/softmax_kernel.py"
expect_rc 2 "an unknown device"

run_egg eval --device cpu --clock wall "$T/softmax.py" "$T/softmax_kernel.py"
expect_rc 2 "an unknown clock"
expect_err "^egg: error: unknown clock 'wall' \(use gpu or latency\)$" "the error names the clock and the choices"

run_egg eval --device cpu --python /nonexistent/python "$T/softmax.py" "$T/softmax_kernel.py"
expect_rc 3 "a worker that cannot start is an infrastructure failure"
expect_err "cannot start the eval worker|before saying hello" "the error says the worker did not start"

cat >"$TMP/dying-worker" <<'SH'
#!/bin/sh
echo '{"event": "hello", "protocol": 3, "device_kind": "cpu"}'
read line
exit 0
SH
chmod +x "$TMP/dying-worker"
run_egg eval --device cpu --no-baseline --worker-cmd "$TMP/dying-worker" "$T/softmax.py" "$T/softmax_kernel.py"
expect_rc 3 "a worker that dies is an infrastructure failure"
expect_err "eval worker died during a job" "the error says the worker died during the job"

run_egg eval --device cpu --no-baseline --iters 2 --worker-cmd "$EGG worker" --json "$T/row_sum.py" "$T/row_sum_kernel.py"
expect_rc 0 "a worker started through a stdio-carrying command (egg worker) works"

# Driven through the stand-in worker (tests/mock/fakeworker.py): a speedup
# beyond the bound is measured again and the slower time kept; a worker that
# dies during a job is restarted and the job retried once.
FAKE="python3 $SRC/tests/mock/fakeworker.py"
FAKEWORKER_SLOWER_AGAIN=1 run_egg eval --device cuda --worker-cmd "$FAKE" --speedup-bound 0.5 --json \
	"$T/softmax.py" "$T/softmax_kernel.py"
expect_rc 0 "a candidate beyond the speedup bound still passes"
check "it was measured again and the slower time kept" python3 - "$OUT" <<'PY'
import json, re, sys
j = json.load(open(sys.argv[1]))
flag = [f for f in j["flags"] if f.startswith("speedup_remeasured")]
m = re.search(r"; ([0-9.]+) ms then ([0-9.]+) ms", flag[0] if flag else "")
assert m, j["flags"]
first, again = float(m.group(1)), float(m.group(2))
assert abs(again - 2 * first) < 1e-3 and abs(j["kernel_ms"] - again) < 1e-3, (flag, j["kernel_ms"])
assert any(f.startswith("unstable_timing") for f in j["flags"]), j["flags"]
PY
FAKEWORKER_DIE_ONCE=$TMP/died FAKEWORKER_JOBS=$TMP/jobs run_egg eval --device cuda --worker-cmd "$FAKE" \
	--no-baseline --json "$T/softmax.py" "$T/softmax_kernel.py"
expect_rc 0 "a worker that died during the job once is restarted and the job retried"
check "the first worker did die in the job, and the eval ran twice" \
	test -e "$TMP/died" -a "$(grep -c '^eval$' "$TMP/jobs")" -eq 2

# A long evaluation's progress lines: printed once it has run 10 s, each with
# its time; quicker steps and --json print none.
FAKEWORKER_PROGRESS=1 run_egg eval --device cuda --worker-cmd "$FAKE" --no-baseline "$T/softmax.py" "$T/softmax_kernel.py"
expect_rc 0 "an evaluation with progress lines passes"
expect_err "^egg: kernel, 12 s: correctness trial 2/5$" "a step past 10 s is printed with its time"
expect_err "^egg: kernel, 42 s: timing: 1 warm-up calls, 5 timed calls$" "so is each later one"
check "a step before 10 s is not printed" sh -c "! grep -q 'trial 1/5' '$ERR'"
FAKEWORKER_PROGRESS=1 run_egg eval --device cuda --worker-cmd "$FAKE" --no-baseline --json "$T/softmax.py" "$T/softmax_kernel.py"
expect_rc 0 "with --json too"
check "with --json no progress is printed" sh -c "! grep -q 'trial 2/5' '$ERR'"

cat >"$TMP/old-worker" <<'SH'
#!/bin/sh
echo '{"event": "hello", "protocol": 1, "device_kind": "cpu"}'
read line
SH
chmod +x "$TMP/old-worker"
run_egg eval --device cpu --no-baseline --worker-cmd "$TMP/old-worker" "$T/softmax.py" "$T/softmax_kernel.py"
expect_rc 3 "a worker of another protocol version is an infrastructure failure"
expect_err "speaks protocol 1; this egg speaks 3" "the error names both versions"

finish
