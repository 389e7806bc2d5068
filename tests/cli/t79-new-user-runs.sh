#!/usr/bin/env bash
# t79-new-user-runs.sh: what a new user meets when a run does not end as
# planned (issue 39), on the CPU with the scripted mock model:
#  1. an `egg optimize` stopped with Ctrl-C (SIGINT) or SIGKILL: while it
#     runs `egg runs` shows it running, once its process is gone `egg runs`
#     and `egg report` show it stopped (the run's lock is free), and the same
#     command again goes on with that run, says so, and finishes it: one run
#     in the store. The kills land while egg waits for a model that never
#     answers, once its request has reached the mock (no sleep-then-kill);
#  2. `egg optimize --split -o OUT` whose subgraphs got no kernel: no
#     end-to-end speedup printed or recorded (the program is unchanged, it
#     says so) and OUT is not written;
#  3. a task refused up front because it cannot fit in memory: exit 3 with
#     the refusal's own advice, never "run the same command again";
#  4. `egg compose PROG DIR` with DIR split from another program: refused in
#     one line (exit 2); a plan from before egg recorded the program's hash
#     is taken as it is; `egg optimize --split --resume` still works;
#  5. a run that ended on the user's input (exit 2: a program that cannot be
#     split, a task that does not parse) is `refused` in `egg runs` and `egg
#     report`, with why and no advice to resume; the same command again
#     starts a new run instead of going on with it.
. "$(dirname "$0")/../lib.sh"

P=$SRC/tests/pipeline
PR=$SRC/tests/tasks/programs
TASK=$SRC/tests/tasks/bias_relu_scale.py
export EGG_MODEL=mock-model EGG_API_KEY=sk-test EGG_LLM_RETRY_BASE_MS=10
FAST=(--device cpu --iters 3 --warmup 1 --compile-mode none -q --no-multi-seed --no-refine --no-hw-tune)
echo '[{"fault": "stall", "seconds": 600, "repeat": true}]' >"$TMP/never.json"

run_status() { # run_status: "ID STATUS" of each run `egg runs --json` lists
	"$EGG" runs --json | python3 -c 'import json, sys; [print(r["id"], r["status"]) for r in json.load(sys.stdin)["runs"]]'
}

# killed_at_request SIGNAL: egg optimize in the background, killed with
# SIGNAL once its first model request is in flight; leaves $RC_BG and
# $LIVE (the runs as listed while it waited).
killed_at_request() {
	local sig=$1 bg
	start_mock "$TMP/never.json"
	"$EGG" optimize "${FAST[@]}" "$TASK" >"$TMP/bg.out" 2>"$TMP/bg.err" &
	bg=$!
	for _ in $(seq 1200); do [ "$(mock_requests)" -ge 1 ] && break; sleep 0.1; done
	LIVE=$(run_status)
	kill -"$sig" "$bg"
	wait "$bg" 2>/dev/null  # not the shell's "Killed" line
	RC_BG=$?
	stop_mock
}

# --- 1. a run whose process is gone shows stopped, and the same command goes on with it
killed_at_request INT
RUN=$(echo "$LIVE" | awk 'NR == 1 {print $1}')
check "while egg waits for the model, egg runs shows its run running" test "$(echo "$LIVE" | awk '{print $2}')" = running
check "SIGINT ends egg (exit $RC_BG)" test "$RC_BG" -eq 130
check "once its process is gone, egg runs shows the run stopped" test "$(run_status)" = "$RUN stopped"
run_egg runs
expect_out "^$RUN +optimize +stopped" "in its table too"
run_egg report latest
expect_out "^run $RUN \(optimize, stopped\)" "egg report shows it stopped"
expect_out "^run stopped: its egg process ended before the run finished" "and why"
killed_at_request KILL
check "the same command, killed again with SIGKILL (exit $RC_BG), went on with that run" \
	grep -q "going on with run $RUN, which this same command left unfinished (its egg process ended" "$TMP/bg.err"
check "which shows stopped again once that process is gone" test "$(run_status)" = "$RUN stopped"
start_mock "$P/minimal.json"
run_egg optimize "${FAST[@]}" "$TASK"
expect_rc 0 "the same command with a model that answers finishes"
expect_err "^egg: going on with run $RUN, which this same command left unfinished" "saying it goes on with that run"
check "the store holds that one run, done" test "$(run_status)" = "$RUN done"

# --- 2. no kernel for any subgraph: no end-to-end speedup, the program unchanged, -o not written
python3 - "$P/seed1_broken.py" >"$TMP/broken.json" <<'PY'
import json, sys
print(json.dumps([{"match": ["mode: seed"], "repeat": True, "wrap": "python", "reply_file": sys.argv[1]}]))
PY
start_mock "$TMP/broken.json"
SPLIT=(--split --min-share 0 --device cpu --seeds 1 --seed-repairs 0 --no-refine --no-hw-tune --iters 2 --warmup 1
	--trials 2 --compile-mode none -q)
run_egg optimize "${SPLIT[@]}" -o "$TMP/mlp.py" "$PR/scaled_mlp.py"
expect_rc 1 "egg optimize --split where no subgraph gets a kernel"
expect_err "^  end to end: pass; no kernel found: the program is unchanged \(PyTorch eager [0-9.]+ ms\)$" \
	"says the program is unchanged"
check "and prints no end-to-end speedup" bash -c "! grep -E '^  end to end: .*[0-9]x' '$ERR'"
check "-o's file is not written" test ! -e "$TMP/mlp.py"
check "the program's record holds no speedup, and says why" python3 - "$EGG_STORE" <<'PY'
import glob, json, os, sys
path = max(glob.glob(os.path.join(sys.argv[1], "runs", "*", "program.json")), key=os.path.getmtime)
j = json.load(open(path))
e = j["end_to_end"]
assert j["finished"] and j["unchanged"] is True and j["why_unchanged"] == "no kernel found: the program is unchanged", j
assert e["verdict"] == "pass" and e["speedup_eager"] is None and e["speedup_compile"] is None, e
PY
run_egg report latest
expect_out "^  end to end: pass; no kernel found: the program is unchanged" "egg report says so too"
run_egg report latest --html "$TMP/r.html"
check "and its HTML form" grep -q "End to end: pass; no kernel found: the program is unchanged" "$TMP/r.html"
stop_mock

# --- 3. a task that cannot fit in memory: the refusal's advice, no "run again"
cat >"$TMP/huge.py" <<'EOF'
import torch
class Model(torch.nn.Module):
    def forward(self, x): return x * 2
def get_inputs(): return [torch.rand(100_000, 10_000_000)]
def get_init_inputs(): return []
EOF
start_mock "$P/minimal.json"
run_egg optimize "${FAST[@]}" "$TMP/huge.py"
expect_rc 3 "a task refused up front for memory stops"
expect_err "^egg: error: the task needs about [0-9.]+ GB to time its baselines .* of memory is available on this machine: use smaller sizes in get_inputs, a machine with more memory" \
	"saying what it needs, what there is and what to change"
check "never advising to run the same command again" bash -c "! grep -q 'run the same command again' '$ERR'"
check "in one error line" test "$(grep -c '^egg: error:' "$ERR")" -eq 1
check "no model was asked anything" test "$(mock_requests)" -eq 0
stop_mock

# --- 4. compose checks that DIR was split from the program
run_egg split --device cpu --no-measure "$PR/small_cnn.py" "$TMP/cnn"
expect_rc 0 "egg split cuts the small CNN"
check "its plan records the program's text hash" test \
	"$(json_get "$TMP/cnn/plan.json" 'j["program_sha256"]')" = "$(sha256sum "$PR/small_cnn.py" | cut -d' ' -f1)"
run_egg compose "$PR/transformer_block.py" "$TMP/cnn" -o "$TMP/wrong.py" --keep-torch
expect_rc 2 "egg compose with a folder split from another program is refused"
expect_err "^egg: error: '.*cnn' was not split from '.*transformer_block.py' as it is now \(its plan.json is of small_cnn.py\)" \
	"naming the folder, the program and the one it was split from"
check "in one line" test "$(wc -l <"$ERR")" -eq 1
check "and writes nothing" test ! -e "$TMP/wrong.py"
run_egg compose "$PR/small_cnn.py" "$TMP/cnn" -o "$TMP/right.py" --keep-torch
expect_rc 0 "with the program it was split from, compose goes on"
python3 - "$TMP/cnn/plan.json" <<'PY'
import json, sys
j = json.load(open(sys.argv[1]))
del j["program_sha256"]
json.dump(j, open(sys.argv[1], "w"))
PY
run_egg compose "$PR/small_cnn.py" "$TMP/cnn" -o "$TMP/old.py" --keep-torch
expect_rc 0 "a plan without the hash (an older egg's) is taken as it is"
# --split --resume reads the run's own plan, hash and all (its own store:
# no reply cached by the run above).
export EGG_STORE=$TMP/store-spooled
SPOOL=$TMP/spool
EGG_BASE_URL=https://api.example.invalid/v1 run_egg optimize "${SPLIT[@]}" --llm-spool "$SPOOL" --json "$PR/scaled_mlp.py"
expect_rc 4 "a spooled egg optimize --split waits for its replies"
RUN=$(json_get "$OUT" 'j["run_id"]')
python3 - "$SPOOL" "$P/seed1_broken.py" <<'PY'
import glob, json, sys
spool, kernel = sys.argv[1], sys.argv[2]
for path in glob.glob(f"{spool}/pending/*.json"):
    key = json.load(open(path))["key"]
    open(f"{spool}/replies/{key}.txt", "w").write("```python\n" + open(kernel).read() + "```\n")
PY
EGG_BASE_URL=https://api.example.invalid/v1 run_egg optimize "$PR/scaled_mlp.py" --split --resume "$RUN"
expect_rc 1 "egg optimize --split --resume goes on with its plan (and finds no kernel)"
check "and composes the program from it (its options replayed: --json)" \
	test "$(json_get "$OUT" 'j["finished"], j["unchanged"], j["run_id"]')" = "True True $RUN"

# --- 5. a run that ended on the user's input is refused, not stopped
export EGG_STORE=$TMP/store-refused
start_mock "$P/minimal.json"
run_egg optimize "${SPLIT[@]}" "$PR/data_dependent.py"
expect_rc 2 "egg optimize --split of a program that cannot be traced is the user's input (exit 2)"
RUN=$(run_status | awk 'NR == 1 {print $1}')
check "egg runs lists that run refused, not stopped" test "$(run_status)" = "$RUN refused"
run_egg runs
expect_out "^$RUN +optimize +refused" "in its table too"
run_egg report "$RUN"
expect_out "^run $RUN \(optimize, refused\)" "egg report shows it refused"
expect_out "^run refused: the forward cannot be traced: data-dependent control flow .*there is nothing to resume\)$" \
	"with the error and no resume"
check "never as interrupted or killed, nor with advice to resume it" \
	bash -c "! grep -qi 'interrupted\|killed\|resume with\|run the same command again' '$OUT'"
printf 'import torch\nclass Model(torch.nn.Module):\n    def forward(self, x) return x\n' >"$TMP/syntax.py"
run_egg optimize "${FAST[@]}" "$TMP/syntax.py"
expect_rc 2 "egg optimize of a task that does not parse is the user's input (exit 2)"
ONE=$(run_status | awk 'NR == 1 {print $1}')
check "that run is refused too" test "$(run_status | head -1)" = "$ONE refused"
run_egg report "$ONE"
expect_out "^run refused: .*syntax" "and egg report says why"
expect_out "^[^ ]*__syntax +failed .* syntax error" "its task failed: the task is unusable"
run_egg optimize "${FAST[@]}" "$TMP/syntax.py"
expect_rc 2 "the same command again is refused again"
NRUNS=$("$EGG" runs --json | python3 -c 'import json, sys; print(len(json.load(sys.stdin)["runs"]))')
check "in a new run: a refused run is not one to go on with" \
	bash -c "! grep -q 'going on with run' '$ERR' && test '$NRUNS' -eq 3"
stop_mock
finish
