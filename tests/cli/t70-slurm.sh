#!/usr/bin/env bash
# t70-slurm.sh: `egg bench --slurm` on a real single-host Slurm cluster that
# the test starts itself (tests/slurm/cluster.sh: munged, slurmctld, slurmd),
# with CPU "devices": each device's worker is a Slurm step for the whole
# run. Four small tasks (three with a correct kernel, one whose kernel
# fails) answered by the scripted mock LLM end with the same verdicts as a
# local run; cancelling one worker's step while its candidate runs (scancel,
# at a moment the worker marks) loses nothing: its job runs again on a fresh
# step, counted as a retry, not as a verdict; and so for a worker lost at
# every other moment of a job (the loss points of t71-worker-loss.sh).
. "$(dirname "$0")/../lib.sh"

if [ "$(id -u)" -ne 0 ] || ! command -v slurmctld >/dev/null || ! command -v munged >/dev/null; then
	echo "ok 1 - egg bench --slurm # SKIP needs root and Slurm (scripts/setup.sh installs slurmctld, slurmd, munge)"
	exit 0
fi
CL=$TMP/cluster
if ! SLURM_CONF=$("$SRC/tests/slurm/cluster.sh" start "$CL" 8 2>"$TMP/cluster.err"); then
	not_ok "a single-host Slurm cluster starts: $(cat "$TMP/cluster.err")"
	finish
fi
export SLURM_CONF
# Stopped before `finish` removes $TMP (the daemons' pid files are there),
# and on any early exit.
trap '"$SRC/tests/slurm/cluster.sh" stop "$CL"; stop_mock' EXIT
ok "a single-host Slurm cluster starts"

export EGG_MODEL=mock-model EGG_API_KEY=sk-test EGG_LLM_RETRY_BASE_MS=10
T=$TMP/tasks
mkdir -p "$T"
for t in bias_relu_scale row_sum linear_relu softmax; do cp "$SRC/tests/tasks/$t.py" "$T/"; done
# Each task's seed is its own kernel from tests/tasks; softmax gets row_sum's (it fails).
python3 - "$SRC/tests/tasks" >"$TMP/script.json" <<'PY'
import json, os, sys
d = sys.argv[1]
kernels = {"bias_relu_scale": "bias_relu_scale", "row_sum": "row_sum", "linear_relu": "linear_relu", "softmax": "row_sum"}
print(json.dumps([{"match": ["mode: seed", f"Task: tasks__{t}."], "repeat": True, "wrap": "python",
                   "reply_file": os.path.join(d, f"{k}_kernel.py")} for t, k in kernels.items()]))
PY
FLAGS=(--device cpu --iters 3 --warmup 1 --compile-mode none --seeds 1 --seed-repairs 0 --no-refine --no-hw-tune
	--jobs 4 --json -q)
verdicts() { # verdicts REPORT.json: task -> found, status, candidate
	python3 -c 'import json,sys; j=json.load(open(sys.argv[1])); print(json.dumps(sorted((t["task_id"], t["found"], t["status"], bool(t["final_kernel"])) for t in j["tasks"])))' "$1"
}

start_mock "$TMP/script.json"
export EGG_STORE=$TMP/local
run_egg bench "${FLAGS[@]}" --cpu-workers 2 --workers-per-device 1 --dir "$T"
expect_rc 0 "the local run"
verdicts "$OUT" >"$TMP/local.v"
check "locally three tasks found a kernel and one did not" \
	test "$(grep -o 'true, "done", true' "$TMP/local.v" | wc -l)" -eq 3

# The coordinator's --python reaches each step's worker (a Python that
# writes down which step ran it).
printf '#!/bin/sh\necho "step ${SLURM_STEP_ID:-none}" >>"%s"\nexec python3 "$@"\n' "$TMP/step-python.log" >"$TMP/step-python"
chmod 755 "$TMP/step-python"
export EGG_STORE=$TMP/slurm
run_egg bench "${FLAGS[@]}" --slurm --slurm-workers 2 --python "$TMP/step-python" --dir "$T"
expect_rc 0 "the same run with each device's worker a Slurm step"
check "each step's worker ran the coordinator's --python" \
	test "$(grep -c '^step [0-9]' "$TMP/step-python.log" 2>/dev/null)" -ge 2
verdicts "$OUT" >"$TMP/slurm.v"
check "the same verdicts as the local run" diff "$TMP/local.v" "$TMP/slurm.v"
check "two worker steps served it, one lock each, nothing retried" python3 - "$TMP"/slurm/runs/*/devices.json <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
assert [x["lock"] for x in d] == ["slurm-0", "slurm-1"] and all(x["jobs"] > 0 for x in d), d
assert all(x["worker_starts"] == 1 and x["jobs_retried"] == 0 for x in d), d
PY
check "Slurm allocated the two steps" test "$(grep -c '_slurm_rpc_allocate_resources JobId=' "$CL/log/slurmctld.log")" -eq 2
run_egg bench "${FLAGS[@]}" --slurm --devices cpu,cpu --dir "$T"
expect_rc 2 "--slurm with --devices is refused"
expect_err "^egg: error: with --slurm, say how many devices with --slurm-workers N" "saying what to use instead"

# Cancel one worker's step while its candidate runs (the worker's loss point
# "wait" says when: it marks the moment with its Slurm job id, then waits);
# the run goes on.
export EGG_STORE=$TMP/killed EGG_WORKER_LOSS=$TMP/loss.json
printf '{"moment": "run", "op": "eval", "action": "wait", "mark": "%s"}\n' "$TMP/reached" >"$EGG_WORKER_LOSS"
"$EGG" bench "${FLAGS[@]}" --slurm --slurm-workers 2 --dir "$T" >"$TMP/killed.json" 2>"$TMP/killed.err" &
bench=$!
# Waits for an event, not for a time: the cap only ends a broken run.
for _ in $(seq 3000); do [ -s "$TMP/reached" ] || ! kill -0 "$bench" 2>/dev/null && break; sleep 0.1; done
victim=$(cat "$TMP/reached" 2>/dev/null)
[ -n "$victim" ] && scancel "$victim"
wait "$bench"
rc=$?
check "a step was cancelled while its candidate ran (job ${victim:-none})" test -n "$victim"
check "the run still ends well (exit $rc)" test "$rc" -eq 0
verdicts "$TMP/killed.json" >"$TMP/killed.v"
check "with the same verdicts" diff "$TMP/local.v" "$TMP/killed.v"
check "the cancelled step's job ran again on a fresh step, counted as a retry" python3 - "$TMP"/killed/runs/*/devices.json <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
assert sum(x["jobs_retried"] for x in d) == 1 and sum(x["worker_starts"] for x in d) == 3, d
PY

# The worker lost at each moment of a job, each worker a Slurm step
# (EGG_SLURM=1): the job runs again on a fresh step; lost twice, exit 3.
EV=(eval --device cpu --no-baseline --iters 3 --warmup 1 --trials 2 --json)
export EGG_SLURM=1 EGG_STORE=$TMP/eval
for spec in '{"moment": "start"}' '{"moment": "hello"}' '{"moment": "request", "op": "eval"}' \
	'{"moment": "run", "op": "eval"}' '{"moment": "run", "op": "eval", "action": "kill-job"}' \
	'{"moment": "reply", "op": "eval"}' '{"moment": "after", "op": "baseline"}'; do
	printf '%s\n' "$spec" >"$EGG_WORKER_LOSS"
	case $spec in
	*after*) run_egg "${EV[@]/--no-baseline/--no-cache}" --compile-mode none "$SRC/tests/tasks/row_sum.py" \
		"$SRC/tests/tasks/row_sum_kernel.py" ;;
	*) run_egg "${EV[@]}" "$SRC/tests/tasks/row_sum.py" "$SRC/tests/tasks/row_sum_kernel.py" ;;
	esac
	if [ "$RC" -eq 0 ] && [ "$(json_get "$OUT" 'j["verdict"], j["worker_retries"]')" = "pass 1" ]; then
		ok "under Slurm, worker lost at $spec: the kernel passes after one retry on a fresh step"
	else
		not_ok "under Slurm, worker lost at $spec: the kernel passes after one retry on a fresh step (exit $RC)"
		diag "$OUT" "$ERR"
	fi
done
printf '{"moment": "run", "op": "eval", "times": 2}\n' >"$EGG_WORKER_LOSS"
run_egg "${EV[@]}" "$SRC/tests/tasks/row_sum.py" "$SRC/tests/tasks/row_sum_kernel.py"
expect_rc 3 "under Slurm, a job that lost its worker twice is an infrastructure failure"
expect_err "^egg: error: the job lost its eval worker twice" "saying so"
unset EGG_SLURM EGG_WORKER_LOSS
export EGG_STORE=$TMP/slurm

run_egg doctor --slurm --device cpu --json
expect_rc 0 "egg doctor --slurm"
check "it lists the partition and ran the worker probe as a Slurm step" python3 - "$OUT" <<'PY'
import json, sys
j = json.load(open(sys.argv[1]))
s = j["slurm"]
assert s["test_step"] is True and any(p.startswith("egg* up 1 ") for p in s["partitions"]), s
assert j["worker"]["torch"], j["worker"]
PY

"$SRC/tests/slurm/cluster.sh" stop "$CL"
run_egg doctor --slurm --device cpu
expect_rc 3 "egg doctor --slurm without a reachable controller is not ready"
expect_out "^missing: +Slurm: sinfo failed" "and says that sinfo failed"
check "the cluster's daemons are gone" sh -c "! pgrep -f '[s]lurm[ct]*d -f $CL' >/dev/null"
finish
