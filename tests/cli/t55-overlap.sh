#!/usr/bin/env bash
# t55-overlap.sh: a task's independent work runs side by side (each seed's
# validation, repairs and refinement beside the next seed's request; the
# pool's candidates in a tuning stage), and the outcome does not depend on
# what finishes first: the same replies give the same trajectory, decisions,
# calls and final kernel whichever line of work the model answers slowly.
# A stand-in worker (tests/mock/fakeworker.py) gives every kernel a time of
# its own, so that evaluations are repeatable; the mock LLM's delays decide
# the order in which replies arrive. Under a spool, one round parks every
# request that waits on no other.
. "$(dirname "$0")/../lib.sh"

export EGG_MODEL=mock-model EGG_API_KEY=sk-test EGG_LLM_RETRY_BASE_MS=10
export FAKEWORKER_FAIL_MARK=relu_that_does_not_exist
TASK=$SRC/tests/tasks/bias_relu_scale.py
FAKE="python3 $SRC/tests/mock/fakeworker.py"
FLAGS=(--device cuda --worker-cmd "$FAKE" --no-cache -q --json)

# script WHICH OUT: tests/pipeline/full.json with a delay on one line of work.
script() {
	python3 - "$SRC/tests/pipeline/full.json" "$1" "$2" <<'PY'
import json, os, sys
s = json.load(open(sys.argv[1]))
base = os.path.dirname(os.path.abspath(sys.argv[1]))
slow = {"seed1": ["Role: debug agent", "Role: code agent, mode: repair", "flat 1D blocks"],
        "seed2": ["seed 2 of 2", "2D grid"]}[sys.argv[2]]
for e in s:
    if "reply_file" in e:
        e["reply_file"] = os.path.join(base, e["reply_file"])
    if any(m in e.get("match", []) for m in slow) and "parallel mapping" not in " ".join(e.get("match", [])):
        e["delay"] = 1.5
json.dump(s, open(sys.argv[3], "w"))
PY
}
snapshot() { # snapshot RUN_DIR: what must not depend on the order
	python3 - "$1" <<'PY'
import json, os, sys
d = sys.argv[1]
traj = [{k: v for k, v in s.items()} for s in json.load(open(os.path.join(d, "trajectory.json")))]
decisions = [json.loads(l) for l in open(os.path.join(d, "decisions.jsonl"))]
calls = sorted(f for f in os.listdir(os.path.join(d, "calls")) if f.endswith(".json"))
prompts = [open(os.path.join(d, "calls", f[:-5] + ".user.md")).read() for f in calls]
summary = json.load(open(os.path.join(d, "summary.json")))
print(json.dumps({"trajectory": traj, "decisions": decisions, "calls": calls, "prompts": prompts,
                  "final": open(os.path.join(d, "final.py")).read(), "candidate": summary["candidate"],
                  "calls_made": summary["usage"]["calls"], "chain": summary["time"]["llm_chain"]}, sort_keys=True))
PY
}

for slow in seed1 seed2; do
	script $slow "$TMP/$slow.json"
	start_mock "$TMP/$slow.json"
	run_egg optimize "${FLAGS[@]}" --run-dir "$TMP/run-$slow" "$TASK"
	expect_rc 0 "the scripted run with the $slow line answered slowly"
	snapshot "$TMP/run-$slow" >"$TMP/$slow.snap"
	cp "$OUT" "$TMP/out-$slow.json"
done
check "the same trajectory, decisions, calls, prompts and final kernel whichever line was slow" \
	cmp -s "$TMP/seed1.snap" "$TMP/seed2.snap"
check "14 calls, 8 on the longest chain that waited on each other (seed 2 and its refinement beside seed 1's repair, the three tuning stages side by side)" \
	test "$(json_get "$TMP/seed1.snap" 'j["calls_made"], j["chain"]')" = "14 8"

# --sequential-tuning: the paper's order, each stage on the last one's
# kernel: the same calls, 12 of them on the chain, asked one stage after
# the other.
script seed1 "$TMP/seq.json"
start_mock "$TMP/seq.json"
run_egg optimize "${FLAGS[@]}" --sequential-tuning --run-dir "$TMP/run-seq" "$TASK"
expect_rc 0 "the scripted run with --sequential-tuning"
check "--sequential-tuning: 14 calls, 12 on the chain, the stages asked in order" python3 - "$OUT" "$MOCK_LOG" <<'PY'
import json, sys
j = json.load(open(sys.argv[1]))
assert (j["usage"]["calls"], j["time"]["llm_chain"]) == (14, 12), (j["usage"], j["time"])
roles = [json.loads(json.loads(l)["body"])["messages"][1]["content"].split("Role: ")[1].split(".")[0]
         for l in open(sys.argv[2])]
tuning = [r for r in roles if "mapping" in r or "tiling" in r or "memory" in r or "Mapping" in r or "Tiling" in r
          or "Memory" in r]
assert tuning == ["profile agent, mode: parallel mapping", "profile agent, mode: parallel mapping",
                  "code agent, mode: hardware tuning (Parallel mapping)", "profile agent, mode: tensor tiling",
                  "code agent, mode: hardware tuning (Tensor tiling)", "profile agent, mode: memory optimization",
                  "code agent, mode: hardware tuning (Memory optimization)"], tuning
PY
check "the task's summary says where its time went" python3 - "$TMP/out-seed1.json" <<'PY'
import json, sys
t = json.load(open(sys.argv[1]))["time"]
assert set(t) == {"wall_s", "llm_s", "eval_s", "device_wait_s", "llm_chain"}, t
assert t["llm_s"] >= 1.5 * 3 and t["wall_s"] > 0 and t["eval_s"] >= 0 and t["device_wait_s"] >= 0, t
PY

# --top-k 2: both tuning candidates are improved side by side; the same
# outcome however the replies are ordered.
for slow in k1 k2; do
	python3 - "$SRC/tests/pipeline/topk.json" "$slow" "$TMP/topk-$slow.json" <<'PY'
import json, os, sys
s = json.load(open(sys.argv[1]))
base = os.path.dirname(os.path.abspath(sys.argv[1]))
mark = "flat 1D blocks" if sys.argv[2] == "k1" else "2D grid"
for e in s:
    if "reply_file" in e:
        e["reply_file"] = os.path.join(base, e["reply_file"])
    if mark in e.get("match", []):
        e["delay"] = 1.0
json.dump(s, open(sys.argv[3], "w"))
PY
	start_mock "$TMP/topk-$slow.json"
	run_egg optimize "${FLAGS[@]}" --no-refine --stages mapping --top-k 2 --run-dir "$TMP/topk-$slow" "$TASK"
	expect_rc 0 "--top-k 2 with the $slow line slow"
	snapshot "$TMP/topk-$slow" >"$TMP/topk-$slow.snap"
done
check "--top-k 2: the same outcome whichever tuning line was slow" cmp -s "$TMP/topk-k1.snap" "$TMP/topk-k2.snap"

# Under a spool a round parks every request that waits on no other: after
# seed 1's reply (a kernel that fails), seed 2's request and seed 1's debug
# request are pending together.
SPOOL=$TMP/spool
run_egg optimize --device cuda --worker-cmd "$FAKE" --llm-spool "$SPOOL" -q --run-dir "$TMP/spooled" "$TASK"
expect_rc 4 "a spooled run waits for its first reply"
check "one request is pending: seed 1 (everything else waits on it)" test "$(ls "$SPOOL/pending" | wc -l)" -eq 1
key=$(basename "$(ls "$SPOOL"/pending/*.json)" .json)
{ printf '```python\n'; cat "$SRC/tests/pipeline/seed1_broken.py"; printf '```\n'; } >"$SPOOL/replies/$key.txt"
run_egg optimize --device cuda --worker-cmd "$FAKE" --llm-spool "$SPOOL" -q --run-dir "$TMP/spooled" "$TASK"
expect_rc 4 "the next round waits again"
check "two requests are pending together: seed 2 and seed 1's diagnosis" python3 - "$SPOOL/pending" <<'PY'
import json, os, sys
d = sys.argv[1]
agents = sorted(json.load(open(os.path.join(d, f)))["context"]["agent"] for f in os.listdir(d))
assert agents == ["code.seed", "debug"], agents
PY
finish
