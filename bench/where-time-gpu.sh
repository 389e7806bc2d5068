#!/usr/bin/env bash
# where-time-gpu.sh: one round of the issue "Where the time is" on the GPU:
# `egg optimize --split` of ConvNeXt-T and of a Qwen2.5-0.5B-shaped decoder
# (bench/models/qwen05.py), bf16, eval, with a real model answering through
# the reply spool (bench/realmodel-network.sh does each round; STATE/NET
# carries the store and the spool from round to round), then `egg eval`
# without a kernel on the part and the block each run holds most time in:
# torch.compile's launches and their times, as the prompts give them.
#
#   bash bench/where-time-gpu.sh STATE OUT [convnext|qwen|both]
#
# OUT gets, per network, NET-state.tgz (unpack it into STATE/NET, answer
# the requests in its spool, run again), NET-round.txt (the round, the
# report, the summaries) and NET-block-compile.py (torch.compile's code for
# the block). EGG_RM_FLAGS: the pipeline's flags (default: 3 distinct
# tasks, a repair per seed, no tuning stages); EGG_RM_S: each round is
# interrupted after that many seconds (default 270), egg keeping its place;
# EGG_RM_EVAL_S: each summary's egg eval (default 40; a baseline the run
# measured is cached; 0: no summaries, for the rounds after the first, so
# that both networks' rounds fit one device call).
set -u
state=$1; out=$2; which=${3:-both}
cd "$(dirname "$0")/.."
export EGG_RM_FLAGS=${EGG_RM_FLAGS:---max-subgraphs 3 --seed-repairs 1 --no-hw-tune} EGG_RM_S=${EGG_RM_S:-270}
round() {	# round NAME SPEC INPUTS KWARGS
	local net=$1 split f dir
	mkdir -p "$state/$net" "$out/$net.d"
	{ nvidia-smi --query-gpu=name,driver_version --format=csv,noheader; git log --oneline -1; } >"$out/$net-round.txt" 2>&1
	bash bench/realmodel-network.sh "$state/$net" "$out/$net.d" "$2" "$3" "$4" >>"$out/$net-round.txt" 2>&1
	mv "$out/$net.d/state.tgz" "$out/$net-state.tgz" 2>/dev/null
	rmdir "$out/$net.d" 2>/dev/null
	split=$(ls -d "$state/$net"/store/runs/*/split 2>/dev/null | head -1)
	[ -n "$split" ] && [ "${EGG_RM_EVAL_S:-40}" != 0 ] || return
	for f in $(python3 - "$split/plan.json" <<'PY'
import json, sys
p = json.load(open(sys.argv[1]))
firsts = [s for s in p["subgraphs"] if s.get("occurrences") and not s.get("glue")]
blocks = [b for b in p.get("blocks", []) if b.get("occurrences")]
pick = sorted(blocks, key=lambda b: -sum(p["subgraphs"][i].get("share") or 0 for i in b["replaces"]))[:1] + \
       sorted(firsts, key=lambda s: -(s.get("task_share") or 0))[:1]
print(" ".join(x["file"] for x in pick))
PY
	); do
		echo "== egg eval $f" >>"$out/$net-round.txt"
		EGG_STORE=$state/$net/store timeout "${EGG_RM_EVAL_S:-40}" build/egg eval "$split/$f" >>"$out/$net-round.txt" 2>&1
	done
	dir=$(ls -d "$state/$net"/store/runs/*/split__block* 2>/dev/null | head -1)
	[ -n "$dir" ] && [ -f "$dir/torch_compile.py" ] && cp "$dir/torch_compile.py" "$out/$net-block-compile.py"
}
case $which in convnext|both) round convnext torchvision.models:convnext_tiny 32x3x224x224 '{}' ;; esac
case $which in qwen|both) round qwen bench/models/qwen05.py:build 8x512:int64:151936 '{}' ;; esac
ls -la "$out"
