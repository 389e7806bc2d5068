#!/usr/bin/env bash
# t77-selfcheck.sh: egg selfcheck on the CPU, with the evaluation flags it
# shares with egg eval (src/cli/flags.c) and its own lighter timing
# defaults. What reaches the worker is read from the worker's record of its
# requests (EGG_WORKER_RECORD), not inferred from the output.
. "$(dirname "$0")/../lib.sh"

T=$SRC/tests/tasks
evals() { # the eval requests the worker recorded, as one JSON list
	python3 -c 'import json,sys; print(json.dumps([r for r in map(json.loads, open(sys.argv[1])) if r.get("op") == "eval"]))' "$1"
}

EGG_WORKER_RECORD=$TMP/rec1.jsonl run_egg selfcheck --device cpu --json -q "$T/row_sum.py" "$T/softmax.py"
expect_rc 0 "two tasks pass their own selfcheck"
check "the summary counts both" python3 -c 'import json,sys; s=json.load(open(sys.argv[1]))["summary"]; assert s["tasks"] == 2 and s["ok"] == 2, s' "$OUT"
check "with selfcheck's defaults on the CPU: 5 trials, 3 timed calls after 1 warm-up, timing and truth on" \
	python3 -c 'import json,sys; r=json.loads(sys.argv[1]); assert len(r) == 2 and all(e["selfcheck"] and e["trials"] == 5 and e["iters"] == 3 and e["warmup"] == 1 and e["timing"] and e["truth"] and e["atol"] is None for e in r), r' "$(evals "$TMP/rec1.jsonl")"

EGG_WORKER_RECORD=$TMP/rec2.jsonl run_egg selfcheck --device cpu --json -q --trials 2 --iters 4 --warmup 2 \
	--atol 1e-3 --rtol 2e-3 --clock latency --no-truth --timeout 120 "$T/row_sum.py"
expect_rc 0 "the shared evaluation flags are taken"
check "and reach the worker as given" \
	python3 -c 'import json,sys; [e]=json.loads(sys.argv[1]); assert (e["trials"], e["iters"], e["warmup"], e["atol"], e["rtol"], e["clock"], e["truth"], e["timeout_s"]) == (2, 4, 2, 1e-3, 2e-3, "latency", False, 120.0), e' "$(evals "$TMP/rec2.jsonl")"

EGG_WORKER_RECORD=$TMP/rec3.jsonl run_egg selfcheck --device cpu --json -q --no-timing "$T/row_sum.py"
expect_rc 0 "--no-timing is a selfcheck flag too"
check "it turns timing off in the request" \
	python3 -c 'import json,sys; [e]=json.loads(sys.argv[1]); assert e["timing"] is False, e' "$(evals "$TMP/rec3.jsonl")"

run_egg selfcheck --device cpu --trials -1 "$T/row_sum.py"
expect_rc 2 "a negative --trials is refused"
expect_err "must not be negative" "saying why"
run_egg selfcheck --device cpu --compile-mode none "$T/row_sum.py"
expect_rc 2 "--compile-mode is not a selfcheck flag (a selfcheck times no baselines)"
run_egg selfcheck --device cpu --allow-torch "$T/row_sum.py"
expect_rc 2 "nor is --allow-torch (the rule is waived there anyway)"
run_egg selfcheck --help
check "the help states selfcheck's own defaults" grep -q -- "timed calls (default 10 on a GPU, 3 on the CPU)" "$OUT"
finish
