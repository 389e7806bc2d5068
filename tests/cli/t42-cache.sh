#!/usr/bin/env bash
# t42-cache.sh: the evaluation cache. Entries carry a MAC under a key only
# egg's user can read: a changed or forged entry is ignored and measured
# again. Speedups are computed from the baseline in force when a cached
# verdict is read, so another --compile-mode on the same store never shows
# stale speedups.
. "$(dirname "$0")/../lib.sh"

TASK=$SRC/tests/tasks/bias_relu_scale.py
KERNEL=$SRC/tests/tasks/bias_relu_scale_kernel.py
C=$EGG_STORE/eval-cache
FAST="--device cpu --iters 3 --warmup 1"

run_egg eval $FAST --compile-mode none --json "$TASK" "$KERNEL"
expect_rc 0 "a first evaluation"
eager1=$(json_get "$OUT" 'j["eager_ms"]')
check "the cache key is private to egg's user" test "$(stat -c %a "$C/.mac-key")" = 600
check "the baseline entry carries a MAC" bash -c "grep -q '\"mac\"' $C/baseline-*.json"

# Change the cached baseline (an eager time a thousand times too fast).
python3 - "$C" <<'PY'
import glob, json, sys
f = glob.glob(sys.argv[1] + "/baseline-*.json")[0]
j = json.load(open(f))
j["eager_ms"] = j["eager_ms"] / 1000
json.dump(j, open(f, "w"))
PY
run_egg eval $FAST --compile-mode none --json "$TASK" "$KERNEL"
expect_rc 0 "evaluating again"
check "the changed entry was ignored and the baseline measured again" python3 -c "
import sys; a, b = float(sys.argv[1]), float(sys.argv[2]); sys.exit(0 if b > a / 100 else 1)" "$eager1" \
	"$(json_get "$OUT" 'j["eager_ms"]')"
expect_err "1 cached result\(s\) in .* failed their integrity check" "egg says so"

# Verdicts cached by a run, read back under another compile mode.
export EGG_MODEL=mock-model EGG_API_KEY=sk-test EGG_LLM_RETRY_BASE_MS=10
start_mock "$SRC/tests/pipeline/minimal.json"
run_egg optimize $FAST --seeds 1 --no-refine --no-hw-tune --compile-mode default --json -q "$TASK"
expect_rc 0 "a run with the torch.compile baseline"
check "its speedups are its baseline's times over its kernel's" test "$(json_get "$OUT" \
	'abs(j["speedup_compile"] - j["compile_ms"] / j["kernel_ms"]) < 1e-9 and abs(j["speedup_eager"] - j["eager_ms"] / j["kernel_ms"]) < 1e-9')" = True
start_mock "$SRC/tests/pipeline/minimal.json"
run_egg optimize $FAST --seeds 1 --no-refine --no-hw-tune --compile-mode none --json -q "$TASK"
expect_rc 0 "the same run without torch.compile, on the same store"
check "no stale speedup over torch.compile is read back from the cache" \
	test "$(json_get "$OUT" '(j["compile_ms"], j["speedup_compile"])')" = "(None, None)"
check "and its speedup over eager is its own baseline's over its kernel's" \
	test "$(json_get "$OUT" 'abs(j["speedup_eager"] - j["eager_ms"] / j["kernel_ms"]) < 1e-9')" = True
RUN2=$(json_get "$OUT" 'j["run_id"]')
check "the verdicts cached by the first run were used" \
	test "$(json_get "$EGG_STORE/runs/$RUN2/tasks__bias_relu_scale/candidates/seed1.r1.eval.json" 'j.get("cached")')" = True

# A forged verdict: a passing entry without a valid MAC is not believed.
for f in "$C"/eval-*.json; do
	python3 - "$f" <<'PY'
import json, sys
j = json.load(open(sys.argv[1]))
j.update(verdict="pass", stage="done", kernel_ms=1e-6, mac="0" * 64)
json.dump(j, open(sys.argv[1], "w"))
PY
done
start_mock "$SRC/tests/pipeline/minimal.json"
run_egg optimize $FAST --seeds 1 --no-refine --no-hw-tune --compile-mode none --json -q "$TASK"
expect_rc 0 "a third run over forged entries"
check "the forged kernel time is not believed" test "$(json_get "$OUT" 'j["kernel_ms"] > 1e-3')" = True
expect_err "cached result\(s\) in .* failed their integrity check" "and egg says entries were ignored"

# Entries (verdicts, baselines, calibrations) are keyed by the worker's code:
# a changed evaluator measures again.
run_egg eval $FAST --compile-mode none --json "$TASK" "$KERNEL"
run_egg eval $FAST --compile-mode none --json "$TASK" "$KERNEL"
check "the same baseline again is read from the cache" test "$(json_get "$OUT" 'j["baseline"]["cached"]')" = True
mkdir -p "$TMP/changed/bin"
cp "$EGG" "$TMP/changed/bin/egg"
cp -r "$SRC/worker" "$TMP/changed/worker"
echo "# a changed evaluator" >>"$TMP/changed/worker/egg_worker/protocol/compare.py"
EGG_SAVED=$EGG EGG=$TMP/changed/bin/egg
run_egg eval $FAST --compile-mode none --json "$TASK" "$KERNEL"
EGG=$EGG_SAVED
expect_rc 0 "the evaluation with a changed worker"
check "measures it again, not read from the older worker's cache" test "$(json_get "$OUT" 'j["baseline"]["cached"]')" = False
finish
