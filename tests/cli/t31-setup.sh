#!/usr/bin/env bash
# t31-setup.sh: a wrong LLM setup is named at once, before any work: a remote
# endpoint without a key, a host that does not resolve, a base URL that is
# not a URL; a spool run needs neither key nor network; task and kernel
# swapped; a correct kernel whose timing runs out of time.
. "$(dirname "$0")/../lib.sh"

unset EGG_API_KEY OPENAI_API_KEY ANTHROPIC_API_KEY
TASK=$SRC/tests/tasks/bias_relu_scale.py

EGG_MODEL=gpt-5 EGG_BASE_URL=https://api.example.invalid/v1 run_egg chat hi
expect_rc 2 "chat with a remote endpoint and no key is a setup error"
expect_err "^egg: error: no API key for api.example.invalid: set EGG_API_KEY" "the error names the key and the host"

EGG_STORE=$TMP/nokey EGG_MODEL=gpt-5 EGG_BASE_URL=https://api.example.invalid/v1 run_egg optimize "$TASK" --device cpu
expect_rc 2 "optimize without a key stops with the same error"
expect_err "no API key" "the key is named"
# Before any work: no run was opened and no eval worker started (what it
# did, not how long it took: a slow machine must not fail this).
check "it stops before any work (no run, no worker, no baseline measured)" sh -c "
	! ls '$TMP/nokey/runs' 2>/dev/null | grep -q . && ! grep -qi 'baseline\|worker' '$ERR'"

EGG_API_KEY=k EGG_MODEL=gpt-5 EGG_BASE_URL=https://api.example.invalid/v1 run_egg chat hi
expect_rc 3 "a host that does not resolve is an infrastructure error"
expect_err "cannot resolve api.example.invalid, the host of the base URL" "the host and the URL are named"
expect_err_count=$(grep -c "attempt" "$ERR" || true)
check "no retries for a name that does not resolve" test "$expect_err_count" = 0

EGG_API_KEY=k EGG_MODEL=gpt-5 https_proxy=http://127.0.0.1:9 EGG_BASE_URL=https://api.example.invalid/v1 \
	EGG_LLM_ATTEMPTS=1 run_egg chat hi
expect_err "127.0.0.1|proxy|connect" "behind a proxy the lookup is left to the proxy (the request goes out)"

EGG_API_KEY=k EGG_MODEL=gpt-5 EGG_BASE_URL=notaurl run_egg chat hi
expect_rc 2 "a base URL that is not a URL is a setup error"
expect_err "base URL 'notaurl' is not a URL" "it is named"

EGG_MODEL=m EGG_BASE_URL=http://localhost:9/v1 EGG_LLM_ATTEMPTS=1 run_egg chat hi
expect_rc 3 "a local server needs no key (the call goes out and finds nothing listening)"
expect_err "localhost:9" "the local URL is in the error"

EGG_MODEL=gpt-5 EGG_BASE_URL=https://api.example.invalid/v1 run_egg chat hi --llm-spool "$TMP/spool"
expect_rc 4 "a spool run needs neither key nor network: the request waits in the spool"

# Task and kernel given the wrong way round.
run_egg eval "$SRC/tests/tasks/bias_relu_scale_kernel.py" "$TASK" --device cpu
expect_rc 2 "a kernel file given as the task is bad input"
expect_err "it defines ModelNew, so it looks like a kernel file: are the task and the kernel swapped\?" \
	"the error hints at the swap"

# A correct kernel whose timing runs out of time: said as such, with what helps.
run_egg eval "$TASK" "$SRC/tests/tasks/bias_relu_scale_slowtime_kernel.py" --device cpu --timeout 8 --iters 20 --warmup 1 \
	--compile-mode none
expect_rc 1 "a kernel whose timing exceeds the limit is a negative result"
expect_err "^egg: not timed: .* is correct \(5/5 trials\), but its timing exceeded the 8 s limit: try fewer --iters \(now 20\), --no-timing, or a longer --timeout" \
	"it is called correct, not rejected, and the flags that help are named"

finish
