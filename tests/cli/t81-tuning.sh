#!/usr/bin/env bash
# t81-tuning.sh: a shorter chain per task. The tuning stages improve the
# same kernel side by side, and when more than one stage's change wins, one
# code call combines them (kept only when faster again); a rule on the
# measured profile lets the mapping stage record "no change" without a call
# (the figures that decided it are recorded, the report says what each rule
# saved); --ask-every-stage asks anyway. A stand-in worker
# (tests/mock/fakeworker.py) reports a profile whose figures the test sets
# and takes each kernel's time from a `# fake-ms:` line.
. "$(dirname "$0")/../lib.sh"

export EGG_MODEL=mock-model EGG_API_KEY=sk-test EGG_LLM_RETRY_BASE_MS=10
export FAKEWORKER_PROFILE_NS=1000
TASK=$SRC/tests/tasks/bias_relu_scale.py
FAKE="python3 $SRC/tests/mock/fakeworker.py"
FLAGS=(--device cuda --worker-cmd "$FAKE" --no-cache --seeds 1 --no-refine -q --json)

# kernel MARK MS: the scripted refined kernel, marked and timed.
kernel() { { printf '# fake-ms: %s\n# %s\n' "$2" "$1"; cat "$SRC/tests/pipeline/refined.py"; } >"$TMP/$1.py"; }
kernel SEED-KERNEL 1.0
kernel TILING-KERNEL 0.8
kernel MEMORY-KERNEL 0.9
kernel COMBINED-KERNEL 0.7
kernel COMBINED-NOISE 0.79

# script OUT COMBINE_KERNEL: mapping says "no change"; tiling and memory each
# write a faster kernel; the combination returns COMBINE_KERNEL.
script() {
	python3 - "$TMP" "$1" "$2" <<'PY'
import json, os, sys
tmp, out, combined = sys.argv[1:]
plan = lambda change, what: json.dumps({"change": change, "bottleneck": what, "modification_plan": what})
s = [{"match": ["mode: seed"], "reply_file": os.path.join(tmp, "SEED-KERNEL.py"), "wrap": "python"},
     {"match": ["Role: profile agent, mode: parallel mapping"], "reply": plan("no", "the grid is fine")},
     {"match": ["Role: profile agent, mode: tensor tiling"], "reply": plan("yes", "TILING-PLAN larger blocks")},
     {"match": ["Role: profile agent, mode: memory optimization"], "reply": plan("yes", "MEMORY-PLAN eight warps")},
     {"match": ["mode: hardware tuning (Tensor tiling)"], "reply_file": os.path.join(tmp, "TILING-KERNEL.py"),
      "wrap": "python"},
     {"match": ["mode: hardware tuning (Memory optimization)"], "reply_file": os.path.join(tmp, "MEMORY-KERNEL.py"),
      "wrap": "python"},
     {"match": ["mode: hardware tuning (combining changes)"], "reply_file": os.path.join(tmp, combined + ".py"),
      "wrap": "python"}]
json.dump(s, open(out, "w"))
PY
}

script "$TMP/combine.json" COMBINED-KERNEL
start_mock "$TMP/combine.json"
run_egg optimize "${FLAGS[@]}" --run-dir "$TMP/combine" "$TASK"
expect_rc 0 "two tuning changes win side by side"
check "their combination is asked for once and kept: faster than the best of them" python3 - "$OUT" "$TMP/combine" <<'PY'
import json, os, sys
j, run = json.load(open(sys.argv[1])), sys.argv[2]
rows = [(r["stage"], r["kernel_ms"]) for r in j["stages"]]
assert rows == [("seed", 1.0), ("mapping", 1.0), ("tiling", 0.8), ("memory", 0.8), ("combine", 0.7)], rows
assert j["candidate"] == "combine", j["candidate"]
# seed; the three plans side by side; the two kernels side by side; the combination
assert (j["usage"]["calls"], j["time"]["llm_chain"]) == (7, 4), (j["usage"], j["time"])
decisions = [json.loads(l) for l in open(os.path.join(run, "decisions.jsonl"))]
kinds = [(d["stage"], d["kind"], d.get("candidate")) for d in decisions if d.get("event") == "decision"]
assert ("tiling", "accepted", "tiling") in kinds and ("memory", "accepted", "memory") in kinds, kinds
assert ("mapping", "no_change", "seed1") in kinds and ("combine", "accepted", "combine") in kinds, kinds
traj = json.load(open(os.path.join(run, "trajectory.json")))
comb = [s for s in traj if s["candidate"] == "combine" and s["kind"] == "selection"]
assert comb and comb[0]["parent"] == "tiling" and comb[0]["accepted"], comb
PY
check "the combination's prompt: the fastest change as the current kernel, the other's plan and kernel to bring in" \
	python3 - "$MOCK_LOG" <<'PY'
import json, sys
users = [json.loads(json.loads(l)["body"])["messages"][1]["content"] for l in open(sys.argv[1])]
systems = [json.loads(json.loads(l)["body"])["messages"][0]["content"] for l in open(sys.argv[1])]
comb = [u for u in users if "combining changes" in u.split("\n")[0]]
assert len(comb) == 1, len(comb)
current = comb[0].split("Current kernel:")[1]
changes = comb[0].split("Bring the other changes into it:")[1].split("Current kernel:")[0]
assert "TILING-KERNEL" in current and "MEMORY-KERNEL" not in current, current[:300]
assert "Memory optimization" in changes and "MEMORY-PLAN" in changes and "MEMORY-KERNEL" in changes, changes
assert "TILING-KERNEL" not in changes and "SEED-KERNEL" not in comb[0]
PY

# 0.79 ms against the best change's 0.8: within the acceptance rule's 2%.
script "$TMP/noise.json" COMBINED-NOISE
start_mock "$TMP/noise.json"
run_egg optimize "${FLAGS[@]}" --run-dir "$TMP/noise" "$TASK"
expect_rc 0 "a combination that is not faster by the acceptance rule"
check "a combination not faster than the best change by the rule (1% is noise) is dropped: the best change stays" \
	python3 - "$OUT" "$TMP/noise" <<'PY'
import json, os, sys
j = json.load(open(sys.argv[1]))
assert j["candidate"] == "tiling" and [r["kernel_ms"] for r in j["stages"]][-1] == 0.8, j["stages"]
d = [json.loads(l) for l in open(os.path.join(sys.argv[2], "decisions.jsonl"))]
assert [x["kind"] for x in d if x.get("stage") == "combine"] == ["not_faster"], d
PY

# The mapping rule: 12 waves of blocks per SM at 70% of the SMs' peak.
script "$TMP/rule.json" COMBINED-KERNEL
start_mock "$TMP/rule.json"
FAKEWORKER_PROFILE_METRICS=waves_per_sm=12,sm_throughput_pct=70 \
	run_egg optimize "${FLAGS[@]}" --run-dir "$TMP/rule" "$TASK"
expect_rc 0 "a kernel whose grid fills the GPU"
check "the mapping stage makes no call: the rule's decision, with its figures, in the records and the summary" \
	python3 - "$OUT" "$TMP/rule" "$MOCK_LOG" <<'PY'
import json, os, sys
j, run, log = json.load(open(sys.argv[1])), sys.argv[2], sys.argv[3]
users = [json.loads(json.loads(l)["body"])["messages"][1]["content"] for l in open(log)]
assert not any("parallel mapping" in u.split("\n")[0] for u in users), users
assert j["usage"]["calls"] == 6, j["usage"]
assert j["rule_skips"] == [{"stage": "mapping", "rule": "grid-fills-gpu", "candidate": "seed1", "calls_saved": 2,
                            "figures": {"waves_per_sm": 12.0, "sm_throughput_pct": 70.0,
                                        "dram_throughput_pct": 50.0}}], j["rule_skips"]
d = [json.loads(l) for l in open(os.path.join(run, "decisions.jsonl"))]
rule = [x for x in d if x.get("kind") == "rule_no_change"]
assert len(rule) == 1 and rule[0]["stage"] == "mapping", rule
assert "waves_per_sm 12.00" in rule[0]["text"] and "without a call" in rule[0]["text"], rule[0]["text"]
PY
RUN=$(json_get "$OUT" 'j["run_id"]')
run_egg report "$RUN"
expect_out "mapping stage decided by the grid-fills-gpu rule without the model: 1 time\(s\), 2 call\(s\) saved" \
	"egg report says what the rule saved"
run_egg report --json "$RUN"
check "and so does its JSON" python3 - "$OUT" <<'PY'
import json, sys
m = json.load(open(sys.argv[1]))["all"]
assert m["rules"] == [{"rule": "grid-fills-gpu", "stage": "mapping", "decided": 1, "calls_saved": 2}], m["rules"]
PY

start_mock "$TMP/rule.json"
FAKEWORKER_PROFILE_METRICS=waves_per_sm=12,sm_throughput_pct=70 \
	run_egg optimize "${FLAGS[@]}" --ask-every-stage --run-dir "$TMP/asked" "$TASK"
check "--ask-every-stage: the mapping stage asks all the same" python3 - "$OUT" <<'PY'
import json, sys
j = json.load(open(sys.argv[1]))
assert j["usage"]["calls"] == 7 and "rule_skips" not in j, j
PY

# Where the figures leave something to decide, the stage asks: too few waves,
# or an idle machine, or no profile at all.
for figures in waves_per_sm=3.9,sm_throughput_pct=70 waves_per_sm=12,sm_throughput_pct=49,dram_throughput_pct=49; do
	start_mock "$TMP/rule.json"
	FAKEWORKER_PROFILE_METRICS=$figures run_egg optimize "${FLAGS[@]}" --run-dir "$TMP/ask-$figures" "$TASK"
	check "the mapping stage asks at $figures" test "$(json_get "$OUT" 'j["usage"]["calls"]')" = 7
done
start_mock "$TMP/rule.json"
FAKEWORKER_PROFILE_NS= run_egg optimize "${FLAGS[@]}" --run-dir "$TMP/noprof" "$TASK"
check "the mapping stage asks without a profile" test "$(json_get "$OUT" 'j["usage"]["calls"]')" = 7
# Refinement rounds and fresh seeds: a second round refines the first
# round's kernel while rounds gain; when every line's refinement stalls, a
# seed is written afresh with another algorithm, told where refinement
# stalled. Each extra round and fresh seed is a decision saying why.
export EGG_STORE=$TMP/store-rounds
start_mock "$SRC/tests/pipeline/rounds.json"
run_egg optimize --device cuda --worker-cmd "$FAKE" --json -q --no-profile --no-hw-tune --seeds 1 \
	--refine-rounds 3 --fresh-seeds 1 --run-dir "$TMP/rounds" "$TASK"
expect_rc 0 "a run with three refinement rounds and a fresh seed"
check "round 2 refined round 1's kernel and stalled; the fresh seed won" python3 - "$OUT" "$TMP/rounds/decisions.jsonl" <<'PY'
import json, sys
j = json.load(open(sys.argv[1]))
d = [json.loads(l) for l in open(sys.argv[2])]
kinds = [(x["kind"], x.get("candidate") or x.get("seed")) for x in d]
assert ("accepted", "seed1.refine") in kinds and ("extra_round", "seed1.refine") in kinds, kinds
assert ("not_faster", "seed1.refine2") in kinds, kinds
fresh = [x for x in d if x["kind"] == "fresh_seed"]
assert len(fresh) == 1 and fresh[0]["seed"] == 2 and abs(fresh[0]["best_ms"] - 0.8) < 1e-9, fresh
assert fresh[0]["why"] == "--fresh-seeds" and "--refine-rounds" in [x for x in d if x["kind"] == "extra_round"][0]["why"]
assert ("not_faster", "seed2.refine") in kinds and ("extra_round", "seed2.refine") not in kinds, kinds
assert abs(j["kernel_ms"] - 0.5) < 1e-9, j["kernel_ms"]
PY
check "eight model calls: seed, two rounds of plan and kernel, the fresh seed and its round" test "$(mock_requests)" -eq 8
run_egg optimize --device cuda --worker-cmd "$FAKE" --refine-rounds 9 "$TASK"
expect_rc 2 "more refinement rounds than egg allows are refused"
expect_err "^egg: error: --refine-rounds is 1 to 8 and --fresh-seeds 0 to 4" "in one line"

finish
