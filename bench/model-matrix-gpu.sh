#!/usr/bin/env bash
# model-matrix-gpu.sh OUT ROW...: the models people run, on a GPU, bf16,
# eval, random weights, no model in the loop (issue "the models people
# run"). Per row: egg split (a model spec), its subgraphs, distinct tasks
# and the share the five largest distinct tasks cover, the identity
# composition's egg eval verdict (every part its own PyTorch), the
# program's eager and torch.compile times (that evaluation's baselines) and
# the split's wall time. Rows: llama1b t5small bertbase convnext swint
# effb0 mnv3l resnet50 vitb16 gpt2small. Appends to OUT/matrix.md.
# `layout` (ConvNeXt-T's six largest distinct tasks: each task's eager and
# torch.compile time in its own task beside its subgraph's time in the
# program) appends to OUT/layout.md.
set -u
out=${1:?OUT}; shift
EGG=${EGG:-build/egg}
export EGG_STORE=$out/store
M=$PWD/tests/tasks/models
mkdir -p "$out"
EV=(--trials 3 --iters 30 --warmup 5)
row() { # row NAME SPEC INPUTS KWARGS
	local name=$1 d=$out/$1 t0 t1
	t0=$(date +%s.%N)
	timeout 200 "$EGG" split --device cuda --json "$2" "$d" --inputs "$3" --model-kwargs "$4" --dtype bf16 \
		>"$d.split.json" 2>"$d.split.err" || { echo "| $name | split failed: $(tail -1 "$d.split.err" | cut -c1-300) |" >>"$out/matrix.md"; return; }
	t1=$(date +%s.%N)
	prog=$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["program_file"])' "$d.split.json")
	"$EGG" compose "$prog" "$d" -o "$d/identity.py" --keep-torch >/dev/null 2>"$d.compose.err" || {
		echo "| $name | compose failed: $(tail -1 "$d.compose.err") |" >>"$out/matrix.md"; return; }
	timeout 300 "$EGG" eval --device cuda --allow-torch --json "${EV[@]}" "$prog" "$d/identity.py" >"$d.eval.json" 2>"$d.eval.err"
	python3 bench/matrix_row.py "$name" "$d.split.json" "$d.eval.json" "$t0" "$t1" --error reason >>"$out/matrix.md"
}
layout() { # ConvNeXt-T's largest distinct tasks: in their task and in the program
	local d=$out/convnext
	[ -f "$d/plan.json" ] || { echo "layout: no ConvNeXt-T split" >>"$out/layout.md"; return; }
	python3 - "$d" >"$out/layout.tasks" <<'PY'
import json, sys
plan = json.load(open(sys.argv[1] + "/plan.json"))
firsts = sorted((s for s in plan["subgraphs"] if s.get("occurrences") and not s.get("glue")),
                key=lambda s: -(s.get("task_share") or 0))[:6]
for s in firsts:
    print(s["file"], s["eager_ms"], (s.get("input_layouts") or [{}])[0].get("stride") if s.get("input_layouts") else None)
PY
	echo "| task | in the program ms | in its task: eager ms | torch.compile ms | task/program | input strides |" >>"$out/layout.md"
	echo "|---|---|---|---|---|---|" >>"$out/layout.md"
	while read -r file prog_ms strides; do
		timeout 120 "$EGG" eval --device cuda --json --iters 50 --warmup 5 "$d/$file" >"$d/$file.base.json" 2>/dev/null
		python3 - "$file" "$prog_ms" "$d/$file.base.json" "$strides" >>"$out/layout.md" <<'PY'
import json, sys
f, p, b, st = sys.argv[1], float(sys.argv[2]), sys.argv[3], sys.argv[4]
try:
    j = json.load(open(b))
except Exception:
    j = {}
e, c = j.get("eager_ms"), j.get("compile_ms")
fmt = lambda v: "%.4f" % v if isinstance(v, (int, float)) else "-"
print(f"| {f} | {p:.4f} | {fmt(e)} | {fmt(c)} | {fmt(e / p) if isinstance(e, (int, float)) else '-'} | {st} |")
PY
	done <"$out/layout.tasks"
}
[ -f "$out/matrix.md" ] || {
	echo "| network | subgraphs | distinct tasks | top 5 distinct share | identity composition | split's eager ms | eager ms | torch.compile ms | split wall |" >"$out/matrix.md"
	echo "|---|---|---|---|---|---|---|---|---|" >>"$out/matrix.md"
}
for r in "$@"; do
	case $r in
	llama1b) row llama1b "$M/decoders.py:llama" 4x1024:int64:32000 '{"hidden_size": 2048, "intermediate_size": 5632, "num_hidden_layers": 16, "num_attention_heads": 32, "num_key_value_heads": 8, "vocab_size": 32000, "max_position_embeddings": 2048}' ;;
	t5small) row t5small "$M/decoders.py:t5" input_ids=8x512:int64:32128,decoder_input_ids=8x512:int64:32128 '{"d_model": 512, "d_ff": 2048, "num_layers": 6, "num_heads": 8, "d_kv": 64, "vocab_size": 32128}' ;;
	bertbase) row bertbase "$M/decoders.py:bert" 32x512:int64:30522 '{"hidden_size": 768, "intermediate_size": 3072, "num_hidden_layers": 12, "num_attention_heads": 12, "vocab_size": 30522}' ;;
	convnext) row convnext torchvision.models:convnext_tiny 32x3x224x224 '{}' ;;
	swint) row swint torchvision.models:swin_t 32x3x224x224 '{}' ;;
	effb0) row effb0 torchvision.models:efficientnet_b0 32x3x224x224 '{}' ;;
	mnv3l) row mnv3l torchvision.models:mobilenet_v3_large 32x3x224x224 '{}' ;;
	resnet50) row resnet50 torchvision.models:resnet50 32x3x224x224 '{}' ;;
	vitb16) row vitb16 timm:create_model 32x3x224x224 '{"model_name": "vit_base_patch16_224"}' ;;
	gpt2small) row gpt2small "$M/decoders.py:gpt2" 8x1024:int64:50257 '{"n_layer": 12, "n_embd": 768, "n_head": 12, "vocab_size": 50257, "n_positions": 1024}' ;;
	layout) layout ;;
	esac
	tail -1 "$out/matrix.md"
done
cat "$out/matrix.md" "$out/layout.md" 2>/dev/null
