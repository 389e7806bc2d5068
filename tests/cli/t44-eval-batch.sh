#!/usr/bin/env bash
# t44-eval-batch.sh: kernels made elsewhere. `egg eval --batch LIST` judges
# honest and hostile candidates (tests/adversarial) with the same rules as
# `egg eval`, as one run read by `egg report`; `--kernelbench KB --generations
# GEN` reads KernelBench's file names; a run killed with SIGKILL after some
# pairs are judged resumes without judging those again. Exit 0 only when
# every pair passed, 1 when any failed.
. "$(dirname "$0")/../lib.sh"

A=$SRC/tests/adversarial
T=$SRC/tests/tasks
FAST="--device cpu --iters 3 --warmup 1 --compile-mode none"
task_of() { # the task a tests/adversarial candidate names in its header
	local name; name=$(sed -n 's/^# task: //p' "$1")
	if [ -e "$T/$name.py" ]; then echo "$T/$name.py"; else echo "$A/task_$name.py"; fi
}

# --- the list form: honest controls and a cheat of each kind that runs on a CPU
LIST=$TMP/pairs.txt
echo "# task kernel" >"$LIST"
count=0
for f in "$A"/h0[123]*.py "$A"/c01_library_fallback.py "$A"/c03_output_cache.py "$A"/c05_late_overwrite.py \
	"$A"/c07_patch_timer.py "$A"/c09_uninitialised.py "$A"/c10_mutate_input.py "$A"/c11_rounded_output.py \
	"$A"/c13_redefine_sizes.py "$A"/c16_os_exit.py; do
	if [ $((count % 2)) -eq 0 ]; then
		echo "$(task_of "$f") $f" >>"$LIST"
	else
		printf '{"task": "%s", "kernel": "%s"}\n' "$(task_of "$f")" "$f" >>"$LIST"
	fi
	count=$((count + 1))
done
run_egg eval --batch "$LIST" $FAST --json
expect_rc 1 "a batch with hostile kernels exits 1 (not every pair passed)"
check "every pair is judged as tests/adversarial expects, in the documented JSON" python3 - "$OUT" "$A" <<'PY'
import json, os, re, sys
j = json.load(open(sys.argv[1]))
res = j["results"]
assert len(res) == 12 and j["run"] and j["summary"]["tasks"] == 12, (len(res), j.get("summary"))
for r in res:
    for k in ("task", "kernel", "verdict", "stage", "reason", "kernel_ms", "eager_ms", "compile_ms", "speedup_eager",
              "speedup_compile", "sol_pct", "compiled", "correctness", "runtime", "ref_runtime"):
        assert k in r, (k, r)
    head = {m.group(1): m.group(2).strip() for m in re.finditer(r"^# (\w+): (.*)$", open(r["kernel"]).read(), re.M)}
    want = head["expect"].split()
    if want[0] == "pass":
        assert r["verdict"] == "pass" and r["correctness"] and r["compiled"] and r["runtime"] > 0, r
    else:
        assert r["verdict"] == "fail" and r["stage"] in want[1].split("|"), (os.path.basename(r["kernel"]), r)
        assert r["runtime"] == -1 and r["reason"], r
PY
RUN=$(json_get "$OUT" 'j["run"]')
run_egg report "$RUN" --json
check "egg report reads the judging run: 3 of 12 passed" \
	test "$(json_get "$OUT" '(j["all"]["tasks"], j["all"]["success"])')" = "(12, 3)"
run_egg report "$RUN"
expect_out "^kernels made elsewhere, judged by egg's evaluator \(no model\); devices cpu" \
	"its text report says the kernels came from elsewhere, not from a model"
run_egg runs
expect_out "^$RUN +eval-batch +done" "egg runs lists it as an eval-batch run"

printf 'only-one-path\n' >"$TMP/bad.txt"
run_egg eval --batch "$TMP/bad.txt" $FAST
expect_rc 2 "a malformed list is bad input"
expect_err "bad.txt line 1: expected 'TASK.py KERNEL.py'" "the error names the file and the line"

# --- KernelBench's layout: levelL/P_Name.py and level_L_problem_P_sample_S_kernel.py
KB=$TMP/kb; GEN=$TMP/gen
mkdir -p "$KB/level1" "$GEN"
cp "$T/bias_relu_scale.py" "$KB/level1/1_BiasReluScale.py"
cp "$T/bias_relu_scale_kernel.py" "$GEN/level_1_problem_1_sample_0_kernel.py"
cp "$A/c01_library_fallback.py" "$GEN/level_1_problem_1_sample_1_kernel.py"
cp "$T/bias_relu_scale_kernel.py" "$GEN/level_1_problem_7_sample_0_kernel.py"
echo "not a generation" >"$GEN/notes.txt"
run_egg eval --kernelbench "$KB" --generations "$GEN" $FAST --json
expect_rc 1 "KernelBench's layout: a batch with a failing sample exits 1"
check "samples map to their problems; a problem without a task file fails by name; other files are ignored" \
	python3 - "$OUT" <<'PY'
import json, sys
res = {r["kernel"].rsplit("/", 1)[1]: r for r in json.load(open(sys.argv[1]))["results"]}
assert sorted(res) == ["level_1_problem_1_sample_0_kernel.py", "level_1_problem_1_sample_1_kernel.py",
                       "level_1_problem_7_sample_0_kernel.py"], sorted(res)
assert res["level_1_problem_1_sample_0_kernel.py"]["task"].endswith("level1/1_BiasReluScale.py")
assert res["level_1_problem_1_sample_0_kernel.py"]["verdict"] == "pass"
assert res["level_1_problem_1_sample_1_kernel.py"]["stage"] == "integrity"
p7 = res["level_1_problem_7_sample_0_kernel.py"]
assert p7["status"] == "failed" and "7_(no such problem).py" in p7["reason"], p7
r0, r1 = res["level_1_problem_1_sample_0_kernel.py"], res["level_1_problem_1_sample_1_kernel.py"]
assert r0["eager_ms"] == r1["ref_runtime"], "samples of one problem share its baselines"
PY
run_egg eval --kernelbench "$KB" $FAST
expect_rc 2 "--kernelbench without --generations is bad usage"

# --- killed with SIGKILL once some pairs are judged, resumed: nothing judged twice
export EGG_STORE=$TMP/store-kill
"$EGG" eval --batch "$LIST" $FAST --jobs 1 -q >"$TMP/kill.out" 2>"$TMP/kill.err" &
pid=$!
db=$EGG_STORE/egg.db
done_now() { sqlite3 "$db" "SELECT COUNT(*) FROM tasks WHERE status IN ('done','failed')" 2>/dev/null || echo 0; }
for _ in $(seq 600); do [ "$(done_now)" -ge 3 ] && break; kill -0 $pid 2>/dev/null || break; sleep 0.2; done
kill -9 $pid 2>/dev/null
wait $pid 2>/dev/null
before=$(sqlite3 "$db" "SELECT task_id || '@' || started FROM tasks WHERE status IN ('done','failed') ORDER BY task_id")
check "the killed run had judged some pairs, not all ($(echo "$before" | wc -l) of 12)" \
	test "$(echo "$before" | wc -l)" -ge 3 -a "$(echo "$before" | wc -l)" -lt 12
KRUN=$(sqlite3 "$db" "SELECT id FROM runs")
pkill -9 -f "egg-worker.*$EGG_STORE" 2>/dev/null
run_egg eval --resume "$KRUN" --json
expect_rc 1 "the resumed run finishes (and still exits 1: hostile pairs failed)"
after=$(sqlite3 "$db" "SELECT task_id || '@' || started FROM tasks ORDER BY task_id")
check "pairs judged before the kill were not judged again (same start times)" \
	bash -c "comm -23 <(echo '$before') <(echo '$after') | grep -q . && exit 1 || exit 0"
check "and every pair has its verdict now" test "$(json_get "$OUT" 'sum(1 for r in j["results"] if r["status"] in ("done", "failed"))')" = 12
finish
