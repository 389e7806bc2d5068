#!/usr/bin/env bash
# t67-spool.sh: `egg bench --llm-spool DIR` with no network: requests wait in
# DIR/pending, the tasks are `waiting` (exit 4), a script writes replies to
# DIR/replies, and `egg bench --resume RUN` goes on round after round until
# every task is done. The run folders tell the same story as the store.
. "$(dirname "$0")/../lib.sh"

export EGG_MODEL=spool-model EGG_LLM_SPOOL=$TMP/spool
T=$TMP/tasks
mkdir -p "$T/small"
cp "$SRC/tests/tasks/row_sum.py" "$SRC/tests/tasks/bias_relu_scale.py" "$T/small/"
FLAGS="--device cpu --iters 3 --warmup 1 --compile-mode none --seeds 1 --stages mapping --quiet"

# answer: a script in the part of the model. Code agents get the task's
# known-good kernel, profile and debug agents a plan; one reply in the JSON
# form with its usage, the rest as plain text.
answer() {
	python3 - "$EGG_LLM_SPOOL" "$SRC/tests/tasks" <<'PY'
import glob, json, os, sys
spool, kernels = sys.argv[1], sys.argv[2]
for i, path in enumerate(sorted(glob.glob(f"{spool}/pending/*.json"))):
    req = json.load(open(path))
    ctx, key = req["context"], req["key"]
    agent = ctx["agent"]
    if agent.startswith("code."):
        stem = "row_sum" if "row_sum" in ctx["task"] else "bias_relu_scale"
        text = "Here is the kernel.\n```python\n# approach: one program per row\n" + \
               open(f"{kernels}/{stem}_kernel.py").read() + "```\n"
    elif agent == "profile.refine":
        text = json.dumps({"worth_optimizing": "yes", "bottleneck": "launch overhead dominates",
                           "modification_plan": "process several rows per program"})
    elif agent == "debug":
        text = json.dumps({"critical_issue": "unknown", "modification_plan": "rewrite the kernel"})
    else:
        text = json.dumps({"change": "yes", "bottleneck": "the grid is small", "modification_plan": "keep the grid"})
    if i == 0:
        json.dump({"content": text, "usage": {"prompt_tokens": 1234, "completion_tokens": 321}},
                  open(f"{spool}/replies/{key}.json", "w"))
    else:
        open(f"{spool}/replies/{key}.txt", "w").write(text)
PY
}

run_egg bench $FLAGS --dir "$T"
expect_rc 4 "with no reply yet, the run stops waiting"
expect_err "^egg: waiting: 2 task\(s\) wait for 2 reply\(ies\) in .*/pending" "one line says what it waits for"
RUN=$(ls "$EGG_STORE/runs")
bench_rc=$RC
check "each task's first request is in the spool with its messages and who asks" python3 - "$EGG_LLM_SPOOL" <<'PY'
import glob, json, sys
files = glob.glob(sys.argv[1] + "/pending/*.json")
assert len(files) == 2, files
for f in files:
    r = json.load(open(f))
    assert [m["role"] for m in r["messages"]] == ["system", "user"]
    assert r["model"] == "spool-model" and r["max_tokens"] > 0 and len(r["key"]) == 64
    c = r["context"]
    assert c["agent"] == "code.seed" and c["stage"] == "seed" and c["call"] == 1 and c["task"].startswith("small__")
PY
render=$SRC/scripts/spool-render.py
python3 "$render" "$EGG_LLM_SPOOL" "$TMP/r1" >/dev/null
check "spool-render writes each pending request as text" test "$(ls "$TMP/r1" | wc -l)" -eq 2
first=$(ls "$EGG_LLM_SPOOL"/pending | head -1)
mkdir -p "$EGG_LLM_SPOOL/replies"; echo "a reply" >"$EGG_LLM_SPOOL/replies/${first%.json}.txt"
python3 "$render" "$EGG_LLM_SPOOL" "$TMP/r2" >/dev/null 2>"$TMP/r2.err"
check "a request whose reply is in already is not rendered again, and is named" \
	bash -c "test \"\$(ls '$TMP/r2' | wc -l)\" -eq 1 && grep -q '^${first%.json}: answered already' '$TMP/r2.err'"
rm "$EGG_LLM_SPOOL/replies/${first%.json}.txt"
run_egg runs --json
check "egg runs counts the waiting tasks" test "$(json_get "$OUT" '[r["waiting"] for r in j["runs"]][0]')" = 2
run_egg report "$RUN" --json
check "egg report counts them and lists the pending keys" \
	test "$(json_get "$OUT" '(j["all"]["waiting"], len(j["all"]["pending_keys"]))')" = "(2, 2)"
check "the stop is recorded as a wait, not as a discarded seed" \
	grep -q '"stopped: no reply for call 1 (waiting)' "$EGG_STORE/runs/$RUN/small__row_sum/decisions.jsonl"
check "and the seed is not said to be discarded" \
	bash -c "! grep -q 'discarded' '$EGG_STORE/runs/$RUN/small__row_sum/decisions.jsonl'"

rounds=1
stale=$(ls "$EGG_LLM_SPOOL"/pending/*.json | head -1)
cp "$stale" "$TMP/stale.json"
while [ "$bench_rc" -eq 4 ] && [ "$rounds" -lt 12 ]; do
	answer
	run_egg bench --resume "$RUN" --quiet
	bench_rc=$RC
	rounds=$((rounds + 1))
	if [ "$rounds" -eq 2 ] && [ "$bench_rc" -eq 4 ]; then
		# A copied spool brings an answered request back into pending/: the
		# next resume answers it from the cache and clears it.
		cp "$TMP/stale.json" "$stale"
		run_egg bench --resume "$RUN" --quiet
		bench_rc=$RC
		check "a request answered before and parked again by a copy is no longer pending" test ! -e "$stale"
	fi
done
expect_rc 0 "round after round the run finishes"
check "it took more than two rounds ($rounds)" test "$rounds" -gt 2
check "no request is left pending" test -z "$(ls "$EGG_LLM_SPOOL/pending")"
run_egg report "$RUN" --json
check "both tasks found a kernel; nothing waits" \
	test "$(json_get "$OUT" '(j["all"]["success"], j["all"]["waiting"])')" = "(2, 0)"
check "the reply's reported usage was counted" \
	test "$(json_get "$OUT" 'sum(t["prompt_tokens"] for t in j["tasks"]) >= 1234')" = True
d=$EGG_STORE/runs/$RUN/small__row_sum
check "the replayed run folder holds no wait from earlier rounds" bash -c "! grep -q 'waiting' '$d/decisions.jsonl'"
calls_on_disk=$(ls "$d/calls" | grep -c '\.json$')
calls_in_store=$(sqlite3 "$EGG_STORE/egg.db" "SELECT COUNT(*) FROM llm_calls WHERE run_id = '$RUN' AND task_id = 'small__row_sum'")
check "its calls folder matches the store ($calls_on_disk files, $calls_in_store rows)" \
	test "$calls_on_disk" -eq "$calls_in_store"

# --- egg optimize with a spool: the same command again goes on with its own
# run (one run in `egg runs`, not one per try), and -o is written only once
# the task has finished.
export EGG_LLM_SPOOL=$TMP/spool-opt EGG_STORE=$TMP/store-opt
run_egg optimize $FLAGS -o "$TMP/opt.py" "$T/small/row_sum.py"
expect_rc 4 "a spooled optimize waits for its first reply"
run_egg optimize $FLAGS -o "$TMP/opt.py" "$T/small/row_sum.py"
expect_rc 4 "run again with nothing answered, it still waits"
expect_err "going on with run [^ ]+, which this same command left unfinished" "and says it goes on with its own run"
check "-o is not written while the task waits" test ! -e "$TMP/opt.py"
rounds=0
early=""
while [ "$RC" -eq 4 ] && [ "$rounds" -lt 12 ]; do
	answer
	run_egg optimize $FLAGS -o "$TMP/opt.py" "$T/small/row_sum.py"
	rounds=$((rounds + 1))
	# A round that parks the refinement must not have decided its selection.
	dec=$(ls -d "$EGG_STORE"/runs/*/small__row_sum | head -1)/decisions.jsonl
	if [ "$RC" -eq 4 ] && grep -q '"stage":"refine","event":"decision","text":"selected' "$dec" &&
		grep -q '"stage":"refine".*waiting' "$dec"; then
		early="$early $rounds"
	fi
done
check "no round wrote the refinement's selection while the refinement waited (rounds:${early:- none})" \
	test -z "$early"
expect_rc 0 "answered round after round, the same command finishes"
check "-o holds the kernel once the task has finished" grep -q "triton" "$TMP/opt.py"
run_egg runs --json
check "egg runs holds one optimize run for all those tries, done" \
	test "$(json_get "$OUT" '[(r["command"], r["status"]) for r in j["runs"]]')" = "[('optimize', 'done')]"
run_egg optimize $FLAGS -o "$TMP/opt.py" "$T/small/row_sum.py"
run_egg runs --json
check "a finished run is not resumed: the same command after it is a new run" \
	test "$(json_get "$OUT" 'len(j["runs"])')" = 2
# --- a resumed task keeps the device description its first pass recorded
# (run.json), so that a calibration made again since (a fresh machine, a new
# egg) cannot change its prompts and ask again what was answered: a marker
# put there shows up in the resumed task's requests.
export EGG_LLM_SPOOL=$TMP/spool-dev EGG_STORE=$TMP/store-dev
run_egg bench $FLAGS "$T/small/row_sum.py"
expect_rc 4 "a spooled run waits for its first reply"
RUN=$(ls "$EGG_STORE/runs")
python3 - "$EGG_STORE/runs/$RUN/small__row_sum/run.json" <<'PY'
import json, sys
j = json.load(open(sys.argv[1]))
j["device_text"] = "RECORDED-DEVICE-TEXT " + j["device_text"]
json.dump(j, open(sys.argv[1], "w"))
PY
run_egg bench --resume "$RUN" --quiet
check "the resumed task's request carries the device text its first pass recorded" \
	grep -q "RECORDED-DEVICE-TEXT" "$EGG_LLM_SPOOL"/pending/*.json
finish
