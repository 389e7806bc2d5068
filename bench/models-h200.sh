#!/usr/bin/env bash
# models-h200.sh OUT: one's own network on a GPU, without a model in the
# loop: ResNet-50 (torchvision, batch 32, 224x224), ViT-B/16 (timm, batch 32)
# and GPT-2 small (transformers, batch 8, 1024 tokens), in eval mode and
# bf16, each taken by egg split as a model spec. Per network: subgraphs,
# distinct tasks, the share of the eager time the five largest distinct
# tasks cover, the identity composition's verdict (each distinct task's own
# file as its "kernel", so every repeat runs through its task's file with
# its own weights bound) and the program's eager and torch.compile times
# (egg eval's baselines). Writes OUT/models.md and the runs' JSON.
set -u
out=${1:?OUT}
EGG=${EGG:-build/egg}
export EGG_STORE=$out/store
M=$PWD/tests/tasks/models
mkdir -p "$out"
row() { # row NAME SPEC INPUTS KWARGS
	local name=$1 spec=$2 inputs=$3 kwargs=$4 d=$out/$1 t0 t1
	t0=$(date +%s.%N)
	"$EGG" split --device cuda --json "$spec" "$d" --inputs "$inputs" --model-kwargs "$kwargs" --dtype bf16 \
		>"$d.split.json" 2>"$d.split.err" || { echo "| $name | split failed: $(tail -1 "$d.split.err") |"; return; }
	t1=$(date +%s.%N)
	python3 bench/identity_kernels.py "$d"
	prog=$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["program_file"])' "$d.split.json")
	"$EGG" compose "$prog" "$d" -o "$d/composed.py" --json >"$d.compose.json" 2>"$d.compose.err" || {
		echo "| $name | compose failed: $(tail -1 "$d.compose.err") |"; return; }
	"$EGG" eval --device cuda --allow-torch --json "$prog" "$d/composed.py" >"$d.eval.json" 2>"$d.eval.err"
	python3 bench/matrix_row.py "$name" "$d.split.json" "$d.eval.json" "$t0" "$t1" --error rel
}
{
	echo "| network | subgraphs | distinct tasks | top 5 distinct share | identity composition (max rel err) |" \
		"split's eager ms | eager ms | torch.compile ms | split wall |"
	echo "|---|---|---|---|---|---|---|---|---|"
	row resnet50 torchvision.models:resnet50 32x3x224x224 '{}'
	row vit_b16 timm:create_model 32x3x224x224 '{"model_name": "vit_base_patch16_224"}'
	row gpt2_small "$M/gpt2_tiny.py:gpt2" 8x1024:int64:50257 \
		'{"n_layer": 12, "n_embd": 768, "n_head": 12, "vocab_size": 50257, "n_positions": 1024}'
} | tee "$out/models.md"
