#!/usr/bin/env bash
# t30-doctor.sh: `egg doctor` reports facts and which commands can run; it
# exits 3 only when nothing can evaluate (the worker side is missing).
. "$(dirname "$0")/../lib.sh"

run_egg doctor
expect_rc 0 "doctor without model or key: egg eval still works, so it is not a failure"
expect_out "missing: +LLM model" "the missing model is listed"
expect_out "missing: +API key" "the missing key is listed"
expect_out "^can run: +eval selfcheck split compose$" "eval, selfcheck, split and compose are named as ready (no LLM needed)"
expect_out "^cannot run: +chat .*optimize bench" "the LLM commands are named as not ready"
expect_out "^config file: +\(none\)$" "without a config file the line says (none)"
cp "$OUT" "$TMP/doctor.txt"
run_egg doctor --json
check "the text view prints the JSON report's findings, no more and no fewer" python3 - "$TMP/doctor.txt" "$OUT" <<'PY'
import json, sys
text, j = open(sys.argv[1]).read().splitlines(), json.load(open(sys.argv[2]))
said = lambda tag: [l.split(":", 1)[1].strip() for l in text if l.startswith(tag + ":")]
assert said("missing") == j["missing"], (said("missing"), j["missing"])
assert said("note") == j["notes"], (said("note"), j["notes"])
ready = [k for k, v in j["commands"].items() if v]
assert said("can run") == [" ".join(ready)], (said("can run"), ready)
PY

run_egg doctor --json
check "doctor --json says per command what can run" python3 - "$OUT" <<'PY'
import json, sys
c = json.load(open(sys.argv[1]))["commands"]
assert c["eval"] is True and c["selfcheck"] is True, c
assert c["split"] is True and c["compose"] is True, c  # no LLM needed for either
assert c["optimize"] is False and c["bench"] is False and c["chat"] is False, c
PY

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
expect_rc 3 "doctor with a missing Python: nothing can evaluate"
expect_out "missing: +eval worker: .*cannot run '/nonexistent/python3'" "the missing interpreter is named"
expect_out "^can run: +chat compose$" "only chat and compose can run (compose writes a file, no Python)"
expect_err "^egg: error: not ready: egg cannot evaluate anything \(see 'missing' above\)" "one error line at the end"

EGG_MODEL=m EGG_API_KEY=k run_egg doctor --json --python /nonexistent/python3
expect_rc 3 "the same with --json"
expect_err "what is missing is in the JSON on stdout" "with --json, stderr points to the JSON, not 'above'"

# --calibrate: the device's peaks and the practical bound (egg's own Triton
# matrix products), measured once and then read from the evaluation cache.
FAKE="python3 $SRC/tests/mock/fakeworker.py"
FAKEWORKER_PRACTICAL=1 FAKEWORKER_JOBS=$TMP/jobs EGG_MODEL=m EGG_API_KEY=k \
	run_egg doctor --calibrate --device cuda --worker-cmd "$FAKE"
expect_rc 0 "doctor --calibrate on a (stand-in) GPU"
expect_out "^calibration: +cuda: memory 1.00 TB/s, FP32 10.0, TF32 100.0, BF16 200.0 TFLOP/s$" "the measured peaks"
expect_out "^practical: +egg's own Triton matrix products: fp32 \(ieee\) 4.0, fp32 as tf32x3 5.0, fp32 pre-split 4.5, tf32 8.0, bf16 50.0 TFLOP/s at 4096\^3; fp32-accurate best: fp32_tf32x3$" \
	"and what egg's own matrix products reach"
expect_out "^practical: +tf32 +8.0 TFLOP/s \(tma 128x256x32, 8 warps, 3 stages\), 88.9% of cuBLAS \(9.0\): a bound$" \
	"each scheme's kernel and its share of cuBLAS's rate for the same product"
expect_out "^practical: +bf16 +50.0 TFLOP/s \(kernel not recorded\), 50.0% of cuBLAS \(100.0\): under 80%, not a bound" \
	"a tensor-core scheme under 80% of cuBLAS is said not to be a bound"
expect_out "^practical: +fp32 \(ieee\) +4.0 TFLOP/s \(pointer 128x128x32, 8 warps, 3 stages\), 133.3% of a third of cuBLAS's TF32 \(3.0\)$" \
	"an fp32-accurate scheme against its arithmetic limit"
EGG_STORE=$TMP/store-no-cublas FAKEWORKER_PRACTICAL=no-cublas EGG_MODEL=m EGG_API_KEY=k \
	run_egg doctor --calibrate --device cuda --worker-cmd "$FAKE"
expect_out "^practical: +tf32 +8.0 TFLOP/s \(tma 128x256x32, 8 warps, 3 stages\): not compared with cuBLAS \(no figure\), so not a bound$" \
	"without cuBLAS's figure a tensor-core rate is no bound, and no share is claimed"
FAKEWORKER_PRACTICAL=1 FAKEWORKER_JOBS=$TMP/jobs EGG_MODEL=m EGG_API_KEY=k \
	run_egg doctor --calibrate --json --device cuda --worker-cmd "$FAKE"
check "a second doctor --calibrate reads the cache: one calibration in all, the same figures in the JSON" python3 - "$OUT" "$TMP/jobs" <<'PY'
import json, sys
c = json.load(open(sys.argv[1]))["calibration"]
assert c["device"] == "cuda" and c["measured"]["practical"]["fp32_best"] == "fp32_tf32x3", c
assert open(sys.argv[2]).read().split().count("calibrate") == 1, open(sys.argv[2]).read()
PY
EGG_MODEL=m EGG_API_KEY=k run_egg doctor --calibrate --device cpu
expect_out "^practical: +measured on a GPU only" "on the CPU the practical bound is said to be a GPU's"

# Each command shows only its own options: doctor checks the endpoint, it
# makes no LLM call, so how calls are made is not its business.
run_egg doctor --help
check "doctor --help lists the endpoint settings but not --temperature or --llm-attempts" \
	sh -c "grep -q -- '--base-url' '$OUT' && ! grep -q -- '--temperature\\|--llm-attempts' '$OUT'"
run_egg chat --help
expect_out "--temperature" "chat --help lists --temperature (it makes a call)"
run_egg report --help
check "report --help lists neither --device nor --worker-cmd" sh -c "! grep -q -- '--device\\|--worker-cmd' '$OUT'"

finish
