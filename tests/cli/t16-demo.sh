#!/usr/bin/env bash
# t16-demo.sh: the offline demo (make demo, scripts/demo.sh) runs the main job
# end to end with no GPU and no API key: every stage, a final kernel that
# passes egg eval again, a text and an HTML report that name the model, the
# device and the kind of timing, and a warning that the CPU kernel is slower
# than eager (interpreter times). The page is rendered in headless Chromium.
. "$(dirname "$0")/../lib.sh"

# How long the demo takes depends on the machine: printed as a figure; the
# generous timeout guards against a hang only (the demo takes about 30 s on
# a 2-core machine).
t0=$(date +%s)
EGG_API_KEY= OPENAI_API_KEY= EGG_BIN=$EGG timeout 900 bash "$SRC/scripts/demo.sh" "$TMP/demo" >"$OUT" 2>"$ERR"
rc=$?
t1=$(date +%s)
echo "# the demo took $((t1 - t0)) s"
check "the demo ends with exit 0 ($rc), not stopped by the hang guard" test $rc -eq 0
expect_err "Algorithmic refinement" "the stage table is printed"
expect_err "slower than PyTorch eager: keep PyTorch .*Triton's interpreter" "a result slower than eager is said to be so"
expect_out "^model scripted-demo; devices cpu; CPU timings \(Triton interpreter\)" "the text report names model, device and timing"
expect_out "slower than eager: keep PyTorch" "the report's task line says it too"
check "the run folder keeps the stage table" grep -q "Algorithmic refinement" "$TMP/demo/run/stages.txt"
nreq=$(wc -l <"$TMP/demo/llm-requests.jsonl")
check "every agent was asked: $nreq requests to the scripted model (one per script entry at least)" test "$nreq" -ge 13
run_egg eval "$SRC/tests/tasks/bias_relu_scale.py" "$TMP/demo/final.py" --device cpu --iters 3 --warmup 1 \
	--compile-mode none
expect_rc 0 "the demo's final kernel passes egg eval again"
check "the histogram labels task counts as whole numbers" grep -q '>1</text>' "$TMP/demo/report.html"
check "the HTML task table says the kernel is slower than eager" grep -q 'slower than eager: keep PyTorch' "$TMP/demo/report.html"
check "the HTML report names model, device and timing" \
	grep -q 'class="setup">model scripted-demo; devices cpu; CPU timings (Triton interpreter)' "$TMP/demo/report.html"
if command -v chromium >/dev/null 2>&1; then
	timeout 60 chromium --headless=new --no-sandbox --disable-gpu --hide-scrollbars --window-size=1200,1000 \
		--screenshot="$TMP/demo.png" "file://$TMP/demo/report.html" >/dev/null 2>&1
	timeout 60 chromium --headless=new --no-sandbox --disable-gpu --dump-dom "file://$TMP/demo/report.html" \
		>"$TMP/dom.html" 2>/dev/null
	ink=$(python3 "$SRC/tests/png_check.py" "$TMP/demo.png" 2>/dev/null || echo 0)
	check "headless Chromium renders the demo's page, not blank (ink $ink)" \
		python3 -c "import sys; sys.exit(0 if float('$ink') > 0.01 else 1)"
	check "the rendered page names the model, the device and the timing" \
		grep -q "model scripted-demo; devices cpu; CPU timings" "$TMP/dom.html"
else
	ok "headless Chromium check # SKIP chromium is not installed (scripts/setup.sh installs it)"
fi

finish
