#!/usr/bin/env bash
# t71-worker-loss.sh: the eval worker lost at every moment of a job, through
# the worker's loss points (EGG_WORKER_LOSS, worker/egg_worker/faults.py)
# rather than a kill after a sleep: wherever the loss lands, the job runs
# again once on a fresh worker and the verdict is the one an undisturbed run
# gives; lost twice, the job is an infrastructure failure (exit 3; in a run,
# the task is "stopped", in no rate, and a resume finishes it), never a
# verdict. The same moments under Slurm are in t70-slurm.sh.
. "$(dirname "$0")/../lib.sh"

T=$SRC/tests/tasks
LOSS=$TMP/loss.json
export EGG_WORKER_LOSS=$LOSS
EV=(eval --device cpu --no-baseline --iters 3 --warmup 1 --trials 2 --json)

# lose SPEC: arms one loss (JSON of faults.py).
lose() { printf '%s\n' "$1" >"$LOSS"; }
fired() { python3 -c 'import json,sys; s=json.load(open(sys.argv[1])); sys.exit(s.get("times", 1) != 0 or s.get("skip", 0) != 0)' "$LOSS"; }

# --- egg eval: one loss at each moment, the same verdict, one retry.
# ("after": the worker dies once the baseline's reply is out; the evaluation
# that follows finds it gone.)
for spec in '{"moment": "start"}' '{"moment": "hello"}' '{"moment": "request", "op": "eval"}' \
	'{"moment": "run", "op": "eval"}' '{"moment": "run", "op": "eval", "action": "kill-job"}' \
	'{"moment": "reply", "op": "eval"}' '{"moment": "after", "op": "baseline"}'; do
	lose "$spec"
	case $spec in
	*after*) run_egg "${EV[@]/--no-baseline/--no-cache}" --compile-mode none "$T/bias_relu_scale.py" \
		"$T/bias_relu_scale_kernel.py" ;;
	*) run_egg "${EV[@]}" "$T/bias_relu_scale.py" "$T/bias_relu_scale_kernel.py" ;;
	esac
	what=$(python3 -c 'import json,sys; s=json.loads(sys.argv[1]); print(s["moment"], s.get("op") or "", s.get("action", "exit"))' "$spec")
	check "egg eval, worker lost at '$what': the loss happened" fired
	if [ "$RC" -eq 0 ] && [ "$(json_get "$OUT" 'j["verdict"], j["worker_retries"]')" = "pass 1" ]; then
		ok "egg eval, worker lost at '$what': the kernel still passes, after one retry"
	else
		not_ok "egg eval, worker lost at '$what': the kernel still passes, after one retry (exit $RC)"
		diag "$OUT" "$ERR"
	fi
done

# A failing kernel keeps its own verdict through a loss (and, without --json,
# egg eval says that a job ran again).
lose '{"moment": "run", "op": "eval", "action": "kill-job"}'
run_egg eval --device cpu --no-baseline --iters 3 --warmup 1 --trials 2 "$T/argmax.py" "$T/argmax_wrong_kernel.py"
expect_rc 1 "a wrong kernel whose candidate process was killed from outside is still rejected"
expect_err "^egg: rejected: '.*argmax_wrong_kernel.py' failed at correctness" "for its own reason (correctness)"
expect_err "^egg: the eval worker was lost 1 time\(s\); each job it had in hand ran again on a fresh worker" \
	"and egg eval says that the job ran again"

# Lost twice: infrastructure, never a verdict.
for spec in '{"moment": "run", "op": "eval", "times": 2, "action": "kill-job"}' '{"moment": "start", "times": 2}'; do
	lose "$spec"
	run_egg eval --device cpu --no-baseline --iters 3 --warmup 1 --trials 2 "$T/bias_relu_scale.py" "$T/bias_relu_scale_kernel.py"
	expect_rc 3 "egg eval, worker lost twice ($spec): an infrastructure failure"
	expect_err "^egg: error: the job lost its eval worker twice" "the error says the job lost its worker twice"
	check "and gives no verdict" sh -c "! grep -q '^verdict' '$OUT'"
done

# --- egg bench: a task's jobs lost once go on; lost twice, the task stops.
export EGG_MODEL=mock-model EGG_API_KEY=sk-test EGG_LLM_RETRY_BASE_MS=10
mkdir -p "$TMP/tasks"
cp "$T/bias_relu_scale.py" "$TMP/tasks/"
python3 - "$T" >"$TMP/script.json" <<'PY'
import json, os, sys
print(json.dumps([{"match": ["mode: seed"], "repeat": True, "wrap": "python",
                   "reply_file": os.path.join(sys.argv[1], "bias_relu_scale_kernel.py")}]))
PY
start_mock "$TMP/script.json"
BENCH=(bench --device cpu --iters 3 --warmup 1 --trials 2 --compile-mode none --seeds 1 --seed-repairs 0 --no-refine
	--no-hw-tune -q --json)
retried() { # retried STORE: jobs run again, over devices.json
	python3 -c 'import glob,json,sys; print(sum(d["jobs_retried"] for f in glob.glob(sys.argv[1] + "/runs/*/devices.json") for d in json.load(open(f))))' "$1"
}
summary() { python3 -c 'import json,sys; t=json.load(open(sys.argv[1]))["tasks"][0]; print(t["status"], t["found"])' "$1"; }

# (Without a loss the task finds its kernel: the stopped run's resume below.)
for spec in '{"moment": "run", "op": "baseline"}' '{"moment": "reply", "op": "eval"}'; do
	lose "$spec"
	export EGG_STORE=$TMP/once-$RANDOM
	run_egg "${BENCH[@]}" --dir "$TMP/tasks"
	expect_rc 0 "egg bench, worker lost once ($spec)"
	check "the same verdict as without the loss" test "$(summary "$OUT")" = "done True"
	check "devices.json counts the job run again" test "$(retried "$EGG_STORE")" -eq 1
done

lose '{"moment": "run", "op": "eval", "times": 2}'
export EGG_STORE=$TMP/twice
run_egg "${BENCH[@]}" --dir "$TMP/tasks"
expect_rc 3 "egg bench, an evaluation that lost its worker twice: exit 3"
expect_err "^egg: error: 1 of 1 task\(s\) stopped on an infrastructure failure \(first: evaluation failed: the job lost its eval worker twice" \
	"the error names the stopped task's cause and says to resume"
check "the task is 'stopped', not failed, and found nothing" test "$(summary "$OUT")" = "stopped False"
check "the candidate has no verdict in the store" test \
	"$(sqlite3 "$EGG_STORE/egg.db" 'select count(*) from candidates')" -eq 0
check "the report counts it in no rate and says why it has not finished" python3 - "$OUT" <<'PY'
import json, sys
a = json.load(open(sys.argv[1]))["all"]
assert a["stopped"] == 1 and a["finished"] == 0 and a["success_rate"] is None and a["fast_1"] is None, a
nf = a["not_finished"]
assert len(nf) == 1 and nf[0]["status"] == "stopped" and "lost its eval worker twice" in nf[0]["because"], nf
PY
run_egg runs
check "egg runs lists the run as stopped" sh -c "grep -E '^[^ ]+ +bench +stopped ' '$OUT' | grep -Eq ' 1 +[0-9.]+$'"
run_id=$(sqlite3 "$EGG_STORE/egg.db" 'select id from runs')
run_egg report "$run_id"
expect_out "not finished: tasks__bias_relu_scale \(stopped\), because evaluation failed: the job lost its eval worker twice" \
	"egg report says the task has not finished, and why"
expect_out "success -; fast_0 -" "and shows no rate, not 0%"
rm -f "$LOSS"
run_egg bench --resume "$run_id" -q --json
expect_rc 0 "the resumed run finishes"
check "and the task is done with its kernel" test "$(summary "$OUT")" = "done True"
check "the run is then a normal finished run" test "$(sqlite3 "$EGG_STORE/egg.db" 'select status from runs')" = done
finish
