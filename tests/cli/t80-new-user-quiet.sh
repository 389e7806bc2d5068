#!/usr/bin/env bash
# t80-new-user-quiet.sh: what a new user met while egg seemed to do nothing
# (issue 39, again), on the CPU:
#  1. an LLM endpoint that takes no connection is said first, in one line
#     naming its URL (exit 3), before any baseline is measured: egg optimize,
#     egg optimize --split and egg bench; a spool run never asks it;
#  2. egg split of a program that cannot fit in memory (the same task form
#     as t79's, inputs of 4 TB) is refused up front like egg eval and egg
#     optimize refuse it: exit 3, one line saying what it needs, what there
#     is and what to change (--no-measure, which allocates nothing, splits it);
#  3. every long phase says what it does when it starts, in order, on
#     stderr only: egg optimize's baselines, egg split's trace and
#     measurement, egg optimize --split's split; -q and --json say none of
#     it. The repeat at least every 10 s while a phase lasts is the unit
#     suite's (util: test_beat, on a clock the test gives), not timed here;
#  4. a model that takes 12 s to answer: the wait says so after 10 s.
. "$(dirname "$0")/../lib.sh"

T=$SRC/tests/tasks
PR=$T/programs
TASK=$T/bias_relu_scale.py
export EGG_MODEL=mock-model EGG_API_KEY=sk-test EGG_LLM_RETRY_BASE_MS=10
FAST=(--device cpu --iters 3 --warmup 1 --compile-mode none --no-multi-seed --no-refine --no-hw-tune)
DEAD=http://127.0.0.1:1/v1

# --- 1. an unreachable endpoint first
dead_first() { # dead_first LABEL ARGS...: egg ARGS with the dead endpoint, checked
	local label=$1; shift
	run_egg "$@" "${FAST[@]}" --base-url "$DEAD"
	expect_rc 3 "$label with an endpoint that takes no connection fails"
	check "in one line naming the URL" test "$(wc -l <"$ERR")" -eq 1 -a \
		"$(grep -c "^egg: error: the LLM endpoint '$DEAD' cannot be reached" "$ERR")" -eq 1
	check "before any baseline" bash -c "! grep -qi 'baseline' '$ERR'"
}
dead_first "egg optimize" optimize "$TASK"
dead_first "egg optimize --split" optimize --split --min-share 0 "$PR/scaled_mlp.py"
dead_first "egg bench" bench "$TASK"
run_egg optimize "$TASK" "${FAST[@]}" --base-url "$DEAD" --llm-spool "$TMP/spool" -q
expect_rc 4 "a spool run asks the endpoint nothing: its requests wait in the spool"

# --- 2. egg split refuses a program that cannot fit in memory
cat >"$TMP/huge.py" <<'PY'
import torch
class Model(torch.nn.Module):
    def forward(self, x): return x * 2
def get_inputs(): return [torch.rand(100_000, 10_000_000)]
def get_init_inputs(): return []
PY
run_egg split --device cpu "$TMP/huge.py" "$TMP/huge"
expect_rc 3 "egg split of a program too big to measure is refused"
expect_err "^egg: error: cannot split '.*huge.py': the program needs about [0-9.]+ GB to measure each subgraph's share of its time \\([0-9.]+ GB of inputs.*; [0-9.]+ GB of memory is available on this machine: use smaller sizes in get_inputs or a machine with more memory \\(egg split --no-measure" \
	"saying what it needs, what there is and what to change"
check "in one error line, no allocator's words" test "$(grep -c "^egg: error:" "$ERR")" -eq 1 -a "$(grep -Eci 'allocator|traceback|RuntimeError' "$ERR")" -eq 0
run_egg split --device cpu --no-measure "$TMP/huge.py" "$TMP/huge"
expect_rc 0 "with --no-measure (a trace on the meta device) it splits"

# --- 3. each long phase says what it does when it starts
in_order() { # in_order FILE PATTERN...: each pattern matches a line after the previous one's
	local f=$1 at=0 line; shift
	for p in "$@"; do
		line=$(awk -v from="$at" -v re="$p" 'NR > from && $0 ~ re {print NR; exit}' "$f")
		[ -n "$line" ] || { echo "# not in order: $p" >&2; return 1; }
		at=$line
	done
}
run_egg split --device cpu "$PR/small_cnn.py" "$TMP/cnn"
expect_rc 0 "egg split of the small CNN"
check "it says it splits, then tracing, then measuring, then the plan" in_order "$ERR" \
	"^egg: splitting '.*small_cnn.py' on cpu: tracing it, then measuring each subgraph's share" \
	"^egg: split, [0-9]+ s: tracing the program$" \
	"^egg: split, [0-9]+ s: measuring each subgraph's share of the program's eager time on cpu$" \
	"small_cnn.py in [0-9]+ subgraph"
run_egg split --device cpu --json "$PR/small_cnn.py" "$TMP/cnn2"
check "with --json, nothing of it (and one JSON object on stdout)" bash -c \
	"! grep -q 'tracing' '$ERR' && python3 -c 'import json,sys; json.load(open(sys.argv[1]))' '$OUT'"

start_mock "$SRC/tests/pipeline/minimal.json"
EGG_STORE=$TMP/store-opt run_egg optimize "${FAST[@]}" --seeds 1 "$TASK"  # its own store: no baseline cached
expect_rc 0 "egg optimize with the scripted model"
check "it says it measures the baselines, their steps, then the seeds" in_order "$ERR" \
	"^egg: optimizing '.*bias_relu_scale.py' on cpu" \
	"^egg: \\[baseline\\] measuring the baselines \\(eager, torch.compile\\) of '.*bias_relu_scale.py' on cpu$" \
	"^egg: \\[baseline\\] baseline: loading, compiling and warming up eager and torch.compile \\([0-9]+ s\\)$" \
	"^egg: \\[baseline\\] baseline: timing eager and torch.compile" \
	"^egg: \\[seed\\] writing seed 1 of 1"
check "none of it on stdout" bash -c "! grep -q 'baseline' '$OUT'"
start_mock "$SRC/tests/pipeline/minimal.json"
run_egg optimize "${FAST[@]}" --seeds 1 -q --no-cache "$TASK"
check "-q says none of it" bash -c "! grep -q 'baseline\\|seed' '$ERR'"
start_mock "$SRC/tests/pipeline/minimal.json"
EGG_STORE=$TMP/store-split run_egg optimize --split --min-share 0 --max-subgraphs 1 "${FAST[@]}" --seeds 1 \
	--seed-repairs 0 --trials 2 "$PR/scaled_mlp.py"
check "egg optimize --split says it traces, then measures, then the program's baselines" in_order "$ERR" \
	"^egg: optimizing the program '.*scaled_mlp.py' part by part" \
	"^egg: the program, [0-9]+ s: split: tracing the program$" \
	"^egg: the program, [0-9]+ s: split: measuring each subgraph's share" \
	"^egg: the program, [0-9]+ s: baseline: loading"

# A model that takes its time (a reply after 12 s): the wait says so every
# 10 s. The server's delay is a lower bound, so the line is due whatever
# the machine's speed.
python3 - "$SRC/tests/pipeline/seed1_fixed.py" >"$TMP/slow.json" <<'PY'
import json, sys
print(json.dumps([{"match": ["mode: seed"], "delay": 12, "wrap": "python", "reply_file": sys.argv[1]}]))
PY
start_mock "$TMP/slow.json"
EGG_STORE=$TMP/store-slow run_egg optimize "${FAST[@]}" --seeds 1 --no-cache "$TASK"
expect_rc 0 "egg optimize with a model that answers after 12 s"
expect_err "^egg: LLM call to mock-model, 1[0-9] s: waiting for the reply \\([0-9]+ bytes so far\\)$" \
	"the wait for the reply says so after 10 s"
stop_mock

finish
