#!/usr/bin/env bash
# realmodel-network.sh: one round of one's own network with a real model in
# the loop (issue "Your own network"): `egg optimize --split` of a model
# spec, in eval mode and bf16, as far as the replies in STATE/spool/replies
# allow; the next requests are parked in STATE/spool/pending and STATE is
# packed into OUT/state.tgz for the next round (unpack it into STATE, answer
# the requests, run again: the same command goes on with its run).
#
#   bash bench/realmodel-network.sh STATE OUT [SPEC [INPUTS [KWARGS]]]
#
# Default network: timm's ViT-B/16 at batch 32 (224x224). EGG_RM_FLAGS
# replaces the pipeline flags (default: one seed, one repair, no refinement
# or tuning stages: the fewest rounds a real model's replies need).
set -u
state=$1; out=$2
spec=${3:-timm:create_model}
inputs=${4:-32x3x224x224}
kwargs=${5:-'{"model_name": "vit_base_patch16_224"}'}
cd "$(dirname "$0")/.."
mkdir -p "$state/spool/pending" "$state/spool/replies" "$state/out" "$out"
export EGG_STORE=$state/store EGG_MODEL=claude-helper EGG_PROVIDER=anthropic EGG_API_KEY=unused-with-a-spool
flags=(--llm-spool "$state/spool" --iters 50 --warmup 5 ${EGG_RM_FLAGS:---seeds 1 --seed-repairs 1 --no-refine --no-hw-tune})
egg=${EGG:-build/egg}
t0=$(date +%s)
# EGG_RM_S: the round is interrupted (SIGINT: egg records where it is and
# the same command goes on) after that many seconds, so that STATE is still
# packed within the device call's limit.
${EGG_RM_S:+timeout -s INT "$EGG_RM_S"} "$egg" optimize --split "$spec" --inputs "$inputs" --model-kwargs "$kwargs" --dtype bf16 "${flags[@]}" \
	--json -o "$state/out/network.py" >"$state/out/network.json" 2>"$state/out/network.err"
echo "exit $? after $(( $(date +%s) - t0 )) s" >>"$state/out/network.err"
tail -n 25 "$state/out/network.err"
run=$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["run_id"])' "$state/out/network.json" 2>/dev/null)
[ -n "$run" ] && "$egg" report "$run" >"$state/out/report.txt" 2>&1 && cat "$state/out/report.txt"
ls "$state/spool/pending" | wc -l
find "$state/store" -name 'worker-*.log' -delete
rm -rf "$state/store/logs"
tar czf "$out/state.tgz" -C "$state" .
