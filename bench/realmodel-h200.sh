#!/usr/bin/env bash
# realmodel-h200.sh: one round of a real-model run on the GPU through a reply
# spool (README, "Replies written elsewhere"): the run goes as far as the
# replies in STATE/spool/replies allow, parks the next requests in
# STATE/spool/pending, and packs STATE (store, spool) into OUT/state.tgz.
#
#   bash bench/realmodel-h200.sh STATE KB OUT [TASK.py...]
#
# STATE: a folder carried from round to round (empty at first); KB:
# KernelBench's task folder (level1/, level2/). The first round starts the
# run; later rounds resume it. Tasks: the TASK.py files given, or by default
# RMSNorm (level 1, 36), MinGPT's GELU (level 1, 88) and
# Gemm+divide+sum+scale (level 2, 14), all at full size. EGG_RM_FLAGS adds
# options to the run (e.g. --seed-from-existing).
set -u
state=$1; kb=$2; out=$3
shift 3
tasks=("$@")
[ ${#tasks[@]} -gt 0 ] || tasks=("$kb/level1/36_RMSNorm_.py" "$kb/level1/88_MinGPTNewGelu.py" "$kb/level2/14_Gemm_Divide_Sum_Scaling.py")
cd "$(dirname "$0")/.."
mkdir -p "$state/spool/pending" "$state/spool/replies" "$out"
export EGG_STORE=$state/store EGG_MODEL=claude-helper EGG_PROVIDER=anthropic EGG_API_KEY=unused-with-a-spool
flags=(--llm-spool "$state/spool" --jobs 3 --workers-per-device 3 --iters 50 --warmup 5 ${EGG_RM_FLAGS:-})
start=$(date +%s)
if [ -s "$state/run" ]; then
	${EGG:-build/egg} bench --resume "$(cat "$state/run")" "${flags[@]}" >"$out/bench.txt" 2>&1
else
	${EGG:-build/egg} bench "${flags[@]}" "${tasks[@]}" >"$out/bench.txt" 2>&1
fi
echo "bench exit $? after $(($(date +%s) - start)) s" >>"$out/bench.txt"
# Replies written for a request whose text has changed since (an egg fix
# between rounds): STATE/rekey.json maps "task|agent|candidate|call" to a
# reply file; a pending request that matches gets it, and the run goes on.
if [ -s "$state/rekey.json" ] && python3 - "$state" <<'PY'
import glob, json, os, shutil, sys
state = sys.argv[1]
rekey = json.load(open(os.path.join(state, "rekey.json")))
n = 0
for p in glob.glob(os.path.join(state, "spool", "pending", "*.json")):
    r = json.load(open(p))
    c = r["context"]
    src = rekey.get(f"{c['task']}|{c['agent']}|{c['candidate']}|{c['call']}")
    if src:
        shutil.copy(os.path.join(state, src), os.path.join(state, "spool", "replies", r["key"] + ".txt"))
        n += 1
print(f"rekeyed {n} replies")
sys.exit(0 if n else 1)
PY
then
	${EGG:-build/egg} bench --resume "$(${EGG:-build/egg} runs --json | python3 -c 'import json,sys; print(json.load(sys.stdin)["runs"][0]["id"])')" \
		"${flags[@]}" >>"$out/bench.txt" 2>&1
	echo "bench (rekeyed) exit $? after $(($(date +%s) - start)) s" >>"$out/bench.txt"
fi
# The run's id: the store's newest run (runs are listed newest first).
[ -s "$state/run" ] || ${EGG:-build/egg} runs --json | python3 -c 'import json,sys; print(json.load(sys.stdin)["runs"][0]["id"])' >"$state/run"
${EGG:-build/egg} report "$(cat "$state/run")" >"$out/report.txt" 2>&1
${EGG:-build/egg} report "$(cat "$state/run")" --json >"$out/report.json" 2>&1
tar czf "$out/state.tgz" -C "$state" .
tail -30 "$out/bench.txt"
ls "$state/spool/pending" | wc -l
