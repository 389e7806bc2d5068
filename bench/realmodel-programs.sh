#!/usr/bin/env bash
# realmodel-programs.sh: one round of whole programs with a real model in the
# loop (issue "Whole programs"), through a reply spool: each task both as a
# whole program (egg optimize --split) and as one task (egg optimize), side
# by side on the same GPU, as far as the replies in STATE/spool/replies
# allow; the next requests are parked in STATE/spool/pending and STATE is
# packed into OUT/state.tgz for the next round.
#
#   bash bench/realmodel-programs.sh STATE KB OUT [TASK.py...]
#
# Tasks: default level 3's 8_ResNetBasicBlock (convolutional) and
# 43_MinGPTCausalAttention (attention). EGG_RM_FLAGS replaces the pipeline
# flags (default: one seed, one repair, no refinement or tuning stages:
# the fewest rounds a real model's replies need).
set -u
state=$1; kb=$2; out=$3
shift 3
tasks=("$@")
[ ${#tasks[@]} -gt 0 ] || tasks=("$kb/level3/8_ResNetBasicBlock.py" "$kb/level3/43_MinGPTCausalAttention.py")
cd "$(dirname "$0")/.."
mkdir -p "$state/spool/pending" "$state/spool/replies" "$state/out" "$out"
export EGG_STORE=$state/store EGG_MODEL=claude-helper EGG_PROVIDER=anthropic EGG_API_KEY=unused-with-a-spool
flags=(--llm-spool "$state/spool" --iters 50 --warmup 5 ${EGG_RM_FLAGS:---seeds 1 --seed-repairs 1 --no-refine --no-hw-tune})
egg=${EGG:-build/egg}
for task in "${tasks[@]}"; do
	name=$(basename "$task" .py)
	(
		resume=()
		[ -s "$state/$name.run" ] && resume=(--resume "$(cat "$state/$name.run")")
		"$egg" optimize --split "${flags[@]}" "${resume[@]}" --json -q -o "$state/out/$name.split.py" "$task" \
			>"$state/out/$name.split.json" 2>"$state/out/$name.split.err"
		echo "split exit $?" >>"$state/out/$name.split.err"
		[ -s "$state/$name.run" ] || python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["run_id"])' \
			"$state/out/$name.split.json" >"$state/$name.run" 2>/dev/null || rm -f "$state/$name.run"
	) &
	(
		"$egg" optimize "${flags[@]}" --json -q -o "$state/out/$name.whole.py" "$task" \
			>"$state/out/$name.whole.json" 2>"$state/out/$name.whole.err"
		echo "whole exit $?" >>"$state/out/$name.whole.err"
	) &
done
wait
for task in "${tasks[@]}"; do
	name=$(basename "$task" .py)
	echo "== $name"
	tail -n 2 "$state/out/$name.split.err" "$state/out/$name.whole.err"
done
ls "$state/spool/pending" | wc -l
find "$state/store" -name 'worker-*.log' -delete
rm -rf "$state/store/logs"
tar czf "$out/state.tgz" -C "$state" .
