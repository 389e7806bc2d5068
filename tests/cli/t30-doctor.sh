#!/usr/bin/env bash
# t30-doctor.sh: `egg doctor` reports facts and exits 0 only when a run could go ahead.
. "$(dirname "$0")/../lib.sh"

run_egg doctor
expect_rc 3 "doctor without model or key is not ready"
expect_out "missing: +LLM model" "the missing model is listed"
expect_out "missing: +API key" "the missing key is listed"
expect_err "^egg: error: not ready" "one error line at the end"

EGG_MODEL=m EGG_API_KEY=sk-doc run_egg doctor --json
expect_rc 0 "doctor with model, key and a working worker Python is ready"
check "doctor --json prints one JSON object with the worker's facts" python3 - "$OUT" <<'PY'
import json, sys
j = json.load(open(sys.argv[1]))
w = j["worker"]
assert j["ready"] is True and j["missing"] == []
assert w["torch"] and w["triton"] and w["python"]
assert isinstance(w["gpus"], list) and "network_isolation" in w
assert j["llm"]["api_key"] == "present" and j["llm"]["model"] == "m"
PY

EGG_MODEL=m EGG_BASE_URL=http://127.0.0.1:8000/v1 run_egg doctor
expect_rc 0 "a local endpoint needs no key"

EGG_MODEL=m EGG_API_KEY=k run_egg doctor --python /nonexistent/python3
expect_rc 3 "doctor with a missing Python"
expect_out "missing: +eval worker: .*cannot run '/nonexistent/python3'" "the missing interpreter is named"

finish
