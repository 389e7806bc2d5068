#!/usr/bin/env bash
# t54-existing.sh: a task with an existing Triton kernel (--existing, or
# TASK.existing.py beside it). The existing kernel is evaluated like any
# candidate; when it passes, its time is a third baseline (existing_ms and
# speedup_existing in the summary and every report form); when it fails,
# that is reported and the run goes on without it. With --seed-from-existing
# it is seed 1 and the model writes only the further seeds, told what it does.
. "$(dirname "$0")/../lib.sh"

export EGG_MODEL=mock-model EGG_API_KEY=sk-test EGG_LLM_RETRY_BASE_MS=10
TASK=$SRC/tests/tasks/bias_relu_scale.py
GOOD=$SRC/tests/tasks/bias_relu_scale_kernel.py
FAST=(--device cpu --iters 3 --warmup 1 --compile-mode none --no-refine --no-hw-tune --json -q)

start_mock "$SRC/tests/pipeline/sol.json"
run_egg optimize "${FAST[@]}" --existing "$GOOD" --run-dir "$TMP/ex" "$TASK"
expect_rc 0 "a run with an existing kernel"
check "its time is a third baseline, and the final kernel's speedup over it is given" python3 - "$OUT" <<'PY'
import json, sys
j = json.load(open(sys.argv[1]))
assert j["existing_ms"] > 0 and j["existing_error"] is None, j
assert abs(j["speedup_existing"] - j["existing_ms"] / j["kernel_ms"]) < 1e-9, j
PY
check "it was evaluated like a candidate and recorded" test -s "$TMP/ex/candidates/existing.eval.json"
check "the stage table shows it" grep -q "existing kernel" "$TMP/ex/stages.txt"
check "the model wrote both seeds" test "$(cat "$TMP/ex/calls/"*.user.md | grep -c '^Write seed [12] of 2')" -eq 2

start_mock "$SRC/tests/pipeline/sol.json"
run_egg optimize "${FAST[@]}" --existing "$GOOD" --seed-from-existing --run-dir "$TMP/seeded" "$TASK"
expect_rc 0 "--seed-from-existing"
check "the existing kernel is seed 1; the model was asked only for seed 2, told what seed 1 does" python3 - "$TMP/seeded" <<'PY'
import glob, json, os, sys
users = [open(f).read() for f in sorted(glob.glob(os.path.join(sys.argv[1], "calls", "*.user.md")))]
seeds = [u for u in users if "Write seed" in u]
assert len(seeds) == 1 and "Write seed 2 of 2" in seeds[0], [u[:60] for u in users]
assert "Earlier seeds used these approaches: (1) the existing kernel:" in seeds[0], seeds[0][:400]
t = json.load(open(os.path.join(sys.argv[1], "trajectory.json")))
assert [s["candidate"] for s in t if s["kind"] == "seed"] == ["existing", "seed2"], t
PY
check "the decision says so" grep -q "seed 1 is the existing kernel" "$TMP/seeded/decisions.jsonl"

# A failing existing kernel (another task's) is reported, not used.
start_mock "$SRC/tests/pipeline/sol.json"
run_egg optimize "${FAST[@]}" --existing "$SRC/tests/tasks/row_sum_kernel.py" --seed-from-existing --run-dir "$TMP/bad" "$TASK"
expect_rc 0 "a run whose existing kernel fails goes on"
check "the failure is in the summary; no speedup over it; the model wrote both seeds" python3 - "$OUT" "$TMP/bad" <<'PY'
import glob, json, os, sys
j = json.load(open(sys.argv[1]))
assert j["existing_error"] and j["existing_error"].startswith("failed at ") and j["existing_ms"] is None, j
assert j["speedup_existing"] is None and j["found"], j
calls = glob.glob(os.path.join(sys.argv[2], "calls", "*.user.md"))
assert sum("Write seed" in open(f).read() for f in calls) == 2, calls
PY

run_egg optimize "${FAST[@]}" --existing "$TMP/nothing.py" "$TASK"
expect_rc 2 "a missing --existing file is bad usage"
expect_err "^egg: error: no existing kernel '.*nothing.py'" "named in one line"

# egg bench finds TASK.existing.py beside a task, and never runs it as a task.
mkdir -p "$TMP/tasks"
cp "$TASK" "$TMP/tasks/brs.py"
cp "$GOOD" "$TMP/tasks/brs.existing.py"
start_mock "$SRC/tests/pipeline/sol.json"
run_egg bench "${FAST[@]}" --dir "$TMP/tasks"
expect_rc 0 "a bench run over a folder with an existing kernel beside its task"
check "one task, with its existing kernel as the third baseline" python3 - "$OUT" <<'PY'
import json, sys
j = json.load(open(sys.argv[1]))
assert [t["task_id"] for t in j["tasks"]] == ["tasks__brs"], j["tasks"]
t = j["tasks"][0]
assert t["existing_ms"] > 0 and t["speedup_existing"] > 0, t
assert j["all"]["speedup_existing"]["n"] == 1, j["all"]
PY
run_egg report latest
expect_out "speedup vs the existing kernels: mean [0-9.]+x, geomean [0-9.]+x \(n=1\)" "the text report gives it"
expect_out "x vs the existing kernel" "per task too"
run_egg report latest --csv
check "so does the CSV" sh -c "head -1 '$OUT' | grep -q 'existing_ms,speedup_existing,existing_error'"
run_egg report latest --html "$TMP/r.html"
check "and the HTML report" grep -q "<th>vs existing</th>" "$TMP/r.html"
finish
