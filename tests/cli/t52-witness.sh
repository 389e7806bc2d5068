#!/usr/bin/env bash
# t52-witness.sh: the pipeline's second witness, driven without a GPU. A
# stand-in worker (tests/mock/fakeworker.py) serves a fake GPU and answers
# the profile with a chosen kernel time: when Nsight Compute's time exceeds
# the candidate's measured time by more than 25% + 10 us, the candidate is
# discarded ("timing not trusted"); when it agrees, the candidate stands.
. "$(dirname "$0")/../lib.sh"

export EGG_MODEL=mock-model EGG_API_KEY=sk-test EGG_LLM_RETRY_BASE_MS=10
TASK=$SRC/tests/tasks/bias_relu_scale.py
FAKE="python3 $SRC/tests/mock/fakeworker.py"
FLAGS=(--device cuda --worker-cmd "$FAKE" --seeds 1 --no-refine --no-hw-tune --json -q)

# The fake worker times every kernel between 0.2 and 1.2 ms.
start_mock "$SRC/tests/pipeline/minimal.json"
FAKEWORKER_PROFILE_NS=50000000 run_egg optimize "${FLAGS[@]}" --run-dir "$TMP/hidden" "$TASK"
expect_rc 1 "a seed whose kernels ran 50 ms by ncu but timed under 1.2 ms is no valid kernel"
check "the decision says its timing is not trusted" grep -q "timing is not trusted" "$TMP/hidden/decisions.jsonl"
check "with both times in the selection step" python3 - "$TMP/hidden/trajectory.json" <<'PY'
import json, sys
steps = [s for s in json.load(open(sys.argv[1])) if s["kind"] == "selection"]
assert steps and steps[-1]["accepted"] is False, steps
assert "Nsight Compute measured 50.0000 ms" in steps[-1]["note"], steps[-1]
PY

# Another store: the first profile is cached under the same key.
export EGG_STORE=$TMP/store2
start_mock "$SRC/tests/pipeline/minimal.json"
FAKEWORKER_PROFILE_NS=100000 run_egg optimize "${FLAGS[@]}" --run-dir "$TMP/honest" "$TASK"
expect_rc 0 "the same seed whose ncu time (0.1 ms) agrees with its timing is kept"
check "and no decision distrusts it" test -z "$(grep 'not trusted' "$TMP/honest/decisions.jsonl")"

finish
