#!/usr/bin/env bash
# overlap.sh: a task's wall time with a model that takes a fixed time per
# reply, on the CPU (issue "Faster per task": overlap of independent calls).
#
#   bash bench/overlap.sh EGG_BIN [DELAY_S [full|clean|repair [FLAGS...]]]
#
# Runs `egg optimize` on tests/tasks/bias_relu_scale.py with the scripted
# replies of tests/pipeline/full.json (full: a broken seed repaired, a second
# seed, a refinement, a malformed reply retried, three tuning stages: 14
# calls; clean: the same without the repair and the malformed reply, the
# method's plain path of 2 seeds, 2 refinement plans, 1 refined kernel and
# 3 x 2 tuning calls: 11 calls; repair: clean with the broken seed and its
# diagnosis and repair: 13 calls), each reply delayed DELAY_S seconds (default
# 5), and a stand-in worker
# (tests/mock/fakeworker.py) whose evaluations take no time, so that the
# wall time is the model's: the longest chain of calls that wait on each
# other. Prints the wall time, the calls made and, when egg reports it, the
# longest chain. Run it with an older egg binary for the "before" figure.
set -u
egg=${1:?EGG_BIN}; delay=${2:-5}; kind=${3:-full}; shift 3 2>/dev/null || shift $#
cd "$(dirname "$0")/.."
tmp=$(mktemp -d)
trap 'kill $mock 2>/dev/null; rm -rf "$tmp"' EXIT
python3 - tests/pipeline/full.json "$delay" "$tmp/script.json" "$kind" <<'PY'
import json, os, sys
s = json.load(open(sys.argv[1]))
base = os.path.dirname(os.path.abspath(sys.argv[1]))
if sys.argv[4] in ("clean", "repair"):
    s = [e for e in s if not e.get("reply", "").startswith("I think")]
    for e in s:
        if "could not be used" in e.get("match", []):
            e["match"].remove("could not be used")
if sys.argv[4] == "clean":
    s = [e for e in s if "Role: debug agent" not in e.get("match", []) and "mode: repair" not in " ".join(e.get("match", []))]
    for e in s:
        if e.get("reply_file") == "seed1_broken.py":
            e["reply_file"] = "seed1_fixed.py"
for e in s:
    e["delay"] = float(sys.argv[2])
    if "reply_file" in e:
        e["reply_file"] = os.path.join(base, e["reply_file"])
json.dump(s, open(sys.argv[3], "w"))
PY
python3 tests/mock/mockllm.py --script "$tmp/script.json" --log "$tmp/log.jsonl" --port-file "$tmp/port" >/dev/null 2>&1 &
mock=$!
for _ in $(seq 100); do [ -s "$tmp/port" ] && break; sleep 0.1; done
t0=$(date +%s.%N)
EGG_BASE_URL=http://127.0.0.1:$(cat "$tmp/port") EGG_MODEL=mock EGG_API_KEY=sk-mock EGG_STORE=$tmp/store \
	FAKEWORKER_FAIL_MARK=relu_that_does_not_exist \
	"$egg" optimize --device cuda --worker-cmd "python3 tests/mock/fakeworker.py" --no-cache -q --json "$@" \
	--run-dir "$tmp/run" tests/tasks/bias_relu_scale.py >"$tmp/out.json" 2>"$tmp/err"
rc=$?
t1=$(date +%s.%N)
python3 - "$tmp/out.json" "$rc" "$t0" "$t1" "$delay" "$tmp/log.jsonl" <<'PY'
import json, sys
out, rc, t0, t1, delay, log = sys.argv[1], int(sys.argv[2]), float(sys.argv[3]), float(sys.argv[4]), float(sys.argv[5]), sys.argv[6]
try:
    j = json.load(open(out))
except ValueError:
    j = {}
calls = sum(1 for _ in open(log))
chain = (j.get("time") or {}).get("llm_chain")
print(json.dumps({"rc": rc, "wall_s": round(t1 - t0, 1), "delay_s": delay, "calls": calls, "llm_chain": chain,
                  "found": j.get("found"), "candidate": j.get("candidate")}))
PY
